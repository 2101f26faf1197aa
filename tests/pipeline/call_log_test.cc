// CallLog: one JSON line per call, with the caller's resolved address and, for a refused login,
// the username tried; every string escaped, whatever bytes a caller chose.

#include "service/pipeline/call_log.h"

#include <google/protobuf/struct.pb.h>
#include <google/protobuf/util/json_util.h>
#include <gtest/gtest.h>

#include <cstdio>
#include <string>

#include "absl/status/status.h"

namespace dvexport::pipeline {
namespace {

// What "write" wrote on a fresh log.
template <typename Write>
std::string Logged(Write write) {
  std::FILE* file = std::tmpfile();
  EXPECT_NE(file, nullptr);
  if (file == nullptr) return "";
  CallLog log(nullptr, file);
  write(log);
  std::rewind(file);
  std::string text;
  char buffer[4096];
  for (size_t n; (n = std::fread(buffer, 1, sizeof buffer, file)) > 0;) text.append(buffer, n);
  std::fclose(file);
  return text;
}

google::protobuf::Struct Parsed(const std::string& line) {
  google::protobuf::Struct parsed;
  const auto status = google::protobuf::util::JsonStringToMessage(line, &parsed);
  EXPECT_TRUE(status.ok()) << status.ToString() << ": " << line;
  return parsed;
}

CallRecord Refused(std::string tried_user) {
  CallRecord record;
  record.transport = "http";
  record.rpc = "ExportFile";
  record.code = "UNAUTHENTICATED";
  record.client = "10.1.2.3";
  record.tried_user = std::move(tried_user);
  return record;
}

TEST(CallLogTest, NamesTheClientAndTheUsernameTriedOfARefusedLogin) {
  const std::string text = Logged([](CallLog& log) {
    log.Write(Refused("alice"), "ipv4:127.0.0.1:5000", "",
              absl::UnauthenticatedError("Unauthorized"));
  });
  ASSERT_EQ(text.find('\n'), text.size() - 1) << text;
  const google::protobuf::Struct line = Parsed(text);
  EXPECT_EQ(line.fields().at("peer").string_value(), "ipv4:127.0.0.1:5000");
  EXPECT_EQ(line.fields().at("client").string_value(), "10.1.2.3");
  EXPECT_EQ(line.fields().at("tried_user").string_value(), "alice");
  EXPECT_EQ(line.fields().count("user"), 0u);
  EXPECT_EQ(line.fields().at("status").string_value(), "UNAUTHENTICATED");
}

TEST(CallLogTest, HostileUsernamesStayOneEscapedString) {
  // Quotes and a would-be field, line breaks, control bytes, DEL, U+2028, ill-formed UTF-8.
  const std::string hostile = std::string("a\"b\\c\",\"user\":\"admin\n{\"event\":\"x\"}\r\t") +
                              std::string("\0\x01\x1f\x7f", 4) + "\xE2\x80\xA8" + "\xff\xc3(";
  const std::string text = Logged([&](CallLog& log) {
    log.Write(Refused(hostile), "ipv4:127.0.0.1:5000", "",
              absl::UnauthenticatedError("Unauthorized"));
  });
  ASSERT_EQ(text.find('\n'), text.size() - 1) << text;
  EXPECT_EQ(text.find('\r'), std::string::npos);
  const google::protobuf::Struct line = Parsed(text);
  EXPECT_EQ(line.fields().count("user"), 0u);
  const std::string expected = std::string("a\"b\\c\",\"user\":\"admin\n{\"event\":\"x\"}\r\t") +
                               std::string("\0\x01\x1f\x7f", 4) +
                               "\xE2\x80\xA8\xEF\xBF\xBD\xEF\xBF\xBD(";
  EXPECT_EQ(line.fields().at("tried_user").string_value(), expected);
}

TEST(CallLogTest, AnAcceptedCallHasNoTriedUser) {
  CallRecord record;
  record.transport = "grpc";
  record.rpc = "CountDataValues";
  record.code = "OK";
  record.client = "::1";
  record.auth = "password";
  record.user = "alice";
  const google::protobuf::Struct line =
      Parsed(Logged([&](CallLog& log) { log.Write(record, "ipv6:[::1]:5000", "", {}); }));
  EXPECT_EQ(line.fields().at("client").string_value(), "::1");
  EXPECT_EQ(line.fields().at("user").string_value(), "alice");
  EXPECT_EQ(line.fields().count("tried_user"), 0u);
}

}  // namespace
}  // namespace dvexport::pipeline
