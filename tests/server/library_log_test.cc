#include "service/server/library_log.h"

#include <grpc/grpc.h>
#include <grpc/support/log.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "dvexport/v1/export.pb.h"

namespace dvexport::server {
namespace {

// What protobuf and gRPC log while "body" runs, line by line (stderr goes to a file meanwhile).
std::vector<std::string> StderrLines(void (*body)()) {
  const std::string path = ::testing::TempDir() + "library_log_test." + std::to_string(getpid());
  std::fflush(stderr);
  const int saved = dup(STDERR_FILENO);
  std::FILE* file = std::fopen(path.c_str(), "w");
  dup2(fileno(file), STDERR_FILENO);
  body();
  std::fflush(stderr);
  dup2(saved, STDERR_FILENO);
  close(saved);
  std::fclose(file);
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  std::remove(path.c_str());
  return lines;
}

TEST(LibraryLogTest, ProtobufAndGrpcLogJsonLinesOnly) {
  RouteLibraryLogsToJson();
  grpc_init();  // gpr_log writes nothing before (its verbosity is unset)
  const std::vector<std::string> lines = StderrLines([] {
    // Protobuf logs an error naming the field when a proto3 string is not UTF-8.
    v1::ExportRequest request;
    EXPECT_FALSE(request.ParseFromString(std::string("\x0a\x02\xff\n", 4)));
    gpr_log(GPR_ERROR, "a client's text\n{\"event\":\"forged\"}");
  });
  grpc_shutdown();
  ASSERT_EQ(lines.size(), 2u) << (lines.empty() ? "" : lines[0]);
  std::vector<std::string> libraries;
  for (const std::string& line : lines) {
    const nlohmann::json json = nlohmann::json::parse(line);  // throws unless JSON
    EXPECT_EQ(json["event"], "library_log");
    libraries.push_back(json["library"]);
  }
  EXPECT_EQ(libraries, (std::vector<std::string>{"protobuf", "grpc"}));
  EXPECT_EQ(nlohmann::json::parse(lines[1])["message"], "a client's text\n{\"event\":\"forged\"}");
  EXPECT_EQ(nlohmann::json::parse(lines[1])["severity"], "E");
}

}  // namespace
}  // namespace dvexport::server
