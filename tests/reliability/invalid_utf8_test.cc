// Requests with a string field that is not UTF-8, sent as raw protobuf to the real
// dvexport-server: every method answers INVALID_ARGUMENT naming the field, and the server's
// stderr holds JSON lines only (protobuf's and gRPC's own log lines included).

#include <fcntl.h>
#include <grpcpp/generic/generic_stub.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "tests/reliability/reliability_support.h"

extern char** environ;

namespace dvexport::reliability {
namespace {

using std::chrono::seconds;

// Sends "request" to "method" and reads every response; the call's status.
grpc::Status RawCall(const std::shared_ptr<grpc::Channel>& channel, const std::string& method,
                     const std::string& request) {
  grpc::GenericStub stub(channel);
  grpc::CompletionQueue cq;
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + seconds(30));
  std::unique_ptr<grpc::GenericClientAsyncReaderWriter> call =
      stub.PrepareCall(&context, method, &cq);
  void* tag = nullptr;
  bool ok = false;
  call->StartCall(&tag);
  cq.Next(&tag, &ok);
  grpc::Slice slice(request);
  grpc::ByteBuffer bytes(&slice, 1);
  call->WriteLast(bytes, grpc::WriteOptions(), &tag);
  cq.Next(&tag, &ok);
  grpc::ByteBuffer response;
  do {
    call->Read(&response, &tag);
    cq.Next(&tag, &ok);
  } while (ok);
  grpc::Status status;
  call->Finish(&status, &tag);
  cq.Next(&tag, &ok);
  return status;
}

// A length-delimited field "number" holding "value" (protobuf would not serialize it).
std::string Field(int number, const std::string& value) {
  return absl::StrCat(std::string(1, static_cast<char>(number << 3 | 2)),
                      std::string(1, static_cast<char>(value.size())), value);
}

TEST(InvalidUtf8Test, EveryMethodNamesTheFieldAndTheLogStaysJson) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "dvexport-utf8-", getpid());
  const std::string port_file = dir + ".port";
  const std::string log_file = dir + ".log";
  std::remove(port_file.c_str());
  std::vector<std::string> args = {DVEXPORT_SERVER_BINARY, "--listen=127.0.0.1:0",
                                   "--port_file=" + port_file,
                                   "--pg=" + PrivatePostgres::reader_conninfo()};
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  // gRPC's core logs at debug level too: every one of its lines must be JSON as well.
  std::vector<std::string> env_strings = {"GRPC_VERBOSITY=DEBUG"};
  for (char** e = environ; *e != nullptr; ++e) {
    if (std::string(*e).rfind("GRPC_VERBOSITY=", 0) != 0) env_strings.push_back(*e);
  }
  std::vector<char*> envp;
  for (std::string& e : env_strings) envp.push_back(e.data());
  envp.push_back(nullptr);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, log_file.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0644);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&actions);
  int port = 0;
  ASSERT_TRUE(WaitFor(
      [&] {
        std::ifstream in(port_file);
        return static_cast<bool>(in >> port);
      },
      seconds(60)));
  auto channel = PlaintextChannel(port);

  const std::string bad = "Bf\xff\xfeItzgt";
  // ExportRequest: data_set = 1, org_unit = 7, period = 4; ExportFileRequest: query = 1.
  const std::string query = Field(1, "BfMAe6Itzgt") + Field(7, bad) + Field(4, "202401");
  struct Case {
    std::string method;
    std::string request;
    std::string field;
  };
  const Case cases[] = {
      {"/dvexport.v1.DataValueExport/ExportFile", Field(1, query), "org_unit"},
      {"/dvexport.v1.DataValueExport/StreamDataValues", query, "org_unit"},
      {"/dvexport.v1.DataValueExport/CountDataValues", query, "org_unit"},
      {"/dvexport.v1.DataValueExport/CountDataValues", Field(4, "\xc0\xaf"), "period"},
  };
  for (const Case& c : cases) {
    grpc::Status status = RawCall(channel, c.method, c.request);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << c.method << ": " << status.error_message();
    EXPECT_EQ(status.error_message(),
              c.field + ": not valid UTF-8 (every string field must be UTF-8)")
        << c.method;
  }
  // A valid request still works over the same raw path.
  EXPECT_TRUE(RawCall(channel, "/dvexport.v1.DataValueExport/CountDataValues",
                      SmallRequest().query().SerializeAsString())
                  .ok());

  kill(pid, SIGTERM);
  int wstatus = 0;
  waitpid(pid, &wstatus, 0);
  EXPECT_TRUE(WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0);
  std::ifstream log(log_file);
  int lines = 0;
  int library_lines = 0;
  for (std::string line; std::getline(log, line); ++lines) {
    nlohmann::json json;
    ASSERT_NO_THROW(json = nlohmann::json::parse(line)) << "not JSON: " << line;
    if (json.value("event", "") == "library_log") ++library_lines;
  }
  EXPECT_GT(library_lines, 0);  // gRPC's debug lines, routed
  EXPECT_GT(lines, library_lines);
  std::remove(log_file.c_str());
  std::remove(port_file.c_str());
}

}  // namespace
}  // namespace dvexport::reliability
