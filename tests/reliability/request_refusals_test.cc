// Requests the real dvexport-server refuses, and how it says so: a string field that is not
// UTF-8 and bytes that are no valid protobuf (sent raw through a generic stub; every method
// answers INVALID_ARGUMENT saying what is wrong, and the server's stderr holds JSON lines only,
// protobuf's and gRPC's own log lines included), and a zstd level above --max_zstd_level.

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

// dvexport-server on a free loopback port with "extra_args", its stderr in "log_file", with
// gRPC logging at debug level; its pid and port, or pid 0 if it did not start within a minute.
struct Server {
  pid_t pid = 0;
  int port = 0;
};

Server StartServer(const std::string& dir, const std::string& log_file,
                   const std::vector<std::string>& extra_args = {}) {
  const std::string port_file = dir + ".port";
  std::remove(port_file.c_str());
  std::vector<std::string> args = {DVEXPORT_SERVER_BINARY, "--listen=127.0.0.1:0", "--auth=none",
                                   "--port_file=" + port_file,
                                   "--pg=" + PrivatePostgres::reader_conninfo()};
  args.insert(args.end(), extra_args.begin(), extra_args.end());
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
  Server server;
  const int spawned =
      posix_spawn(&server.pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return {};
  const bool started = WaitFor(
      [&] {
        std::ifstream in(port_file);
        return static_cast<bool>(in >> server.port);
      },
      seconds(60));
  std::remove(port_file.c_str());
  if (!started) {
    kill(server.pid, SIGKILL);
    waitpid(server.pid, nullptr, 0);
    return {};
  }
  return server;
}

// Ends "server" with SIGTERM; true if it exited 0.
bool StopServer(const Server& server) {
  kill(server.pid, SIGTERM);
  int wstatus = 0;
  waitpid(server.pid, &wstatus, 0);
  return WIFEXITED(wstatus) && WEXITSTATUS(wstatus) == 0;
}

TEST(InvalidUtf8Test, EveryMethodNamesTheFieldAndTheLogStaysJson) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "dvexport-utf8-", getpid());
  const std::string log_file = dir + ".log";
  const Server server = StartServer(dir, log_file);
  ASSERT_NE(server.pid, 0);
  auto channel = PlaintextChannel(server.port);

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

  EXPECT_TRUE(StopServer(server));
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
}

// Requests that are no valid protobuf, for each method: the message says what is wrong and
// where, not that a string is not UTF-8.
TEST(MalformedRequestTest, EveryMethodSaysWhatIsWrong) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "dvexport-malformed-", getpid());
  const std::string log_file = dir + ".log";
  const Server server = StartServer(dir, log_file);
  ASSERT_NE(server.pid, 0);
  auto channel = PlaintextChannel(server.port);
  const std::string query = Field(1, "BfMAe6Itzgt") + Field(4, "202401");  // 21 bytes
  struct Case {
    std::string method;
    std::string request;
    std::string message;
  };
  const std::string file = "the request is not a valid dvexport.v1.ExportFileRequest: ";
  const std::string export_request = "the request is not a valid dvexport.v1.ExportRequest: ";
  const Case cases[] = {
      // compression_level (4) with a truncated varint.
      {"/dvexport.v1.DataValueExport/ExportFile", Field(1, query) + "\x20\xff",
       file + "truncated varint at byte 24 (field 4, compression_level)"},
      // org_unit (7) inside the query as a varint.
      {"/dvexport.v1.DataValueExport/ExportFile", Field(1, query + "\x38\x01"),
       file + "wire type 0 (varint) where string has 2 (length-delimited) at byte 23 (field 7, "
              "query.org_unit)"},
      {"/dvexport.v1.DataValueExport/StreamDataValues", query + "\x3a\x40" + "O6uvpzGd5pu",
       export_request + "length 64 past the end of the message (11 bytes left) at byte 22 "
                        "(field 7, org_unit)"},
      {"/dvexport.v1.DataValueExport/StreamDataValues", query + "\x0f",
       export_request + "wire type 7, which protobuf does not have, at byte 21 (field 1, "
                        "data_set)"},
      {"/dvexport.v1.DataValueExport/CountDataValues", query + "\x73\x74",
       export_request + "a group tag (wire type 3; proto3 has none) at byte 21 (field 14, limit)"},
      {"/dvexport.v1.DataValueExport/CountDataValues", query + "\x80",
       export_request + "truncated varint (a tag) at byte 21"},
  };
  for (const Case& c : cases) {
    grpc::Status status = RawCall(channel, c.method, c.request);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT)
        << c.method << ": " << status.error_message();
    EXPECT_EQ(status.error_message(), c.message) << c.method;
  }
  EXPECT_TRUE(StopServer(server));
  std::remove(log_file.c_str());
}

// zstd level 10, one above the default --max_zstd_level: refused naming the limit, and accepted
// once the operator raises it.
TEST(ZstdLevelTest, LevelsAboveTheServerFlagAreRefused) {
  const std::string dir = absl::StrCat(::testing::TempDir(), "dvexport-zstd-", getpid());
  const std::string log_file = dir + ".log";
  v1::ExportFileRequest request = SmallRequest();
  request.set_compression(v1::COMPRESSION_ZSTD);
  request.set_compression_level(10);
  for (const bool raised : {false, true}) {
    const Server server = StartServer(
        dir, log_file,
        raised ? std::vector<std::string>{"--max_zstd_level=19"} : std::vector<std::string>{});
    ASSERT_NE(server.pid, 0);
    auto stub = v1::DataValueExport::NewStub(PlaintextChannel(server.port));
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + seconds(60));
    const ExportOutcome outcome = ReadExport(stub.get(), &context, request);
    if (raised) {
      EXPECT_TRUE(outcome.status.ok()) << outcome.status.error_message();
      EXPECT_TRUE(CompleteAndConsistent(outcome));
    } else {
      EXPECT_EQ(outcome.status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
      EXPECT_EQ(outcome.status.error_message(),
                "compression_level: 10 is above this server's zstd limit, 9 (--max_zstd_level; "
                "1 to 9 accepted, 0: default)");
    }
    EXPECT_TRUE(StopServer(server));
  }
  std::remove(log_file.c_str());
}

}  // namespace
}  // namespace dvexport::reliability
