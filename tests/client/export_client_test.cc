#include "client/export_client.h"

#include <fcntl.h>
#include <grpcpp/create_channel.h>
#include <grpcpp/security/credentials.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <future>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/client/scripted_export_server.h"
#include "tests/client/test_files.h"

namespace dvexport::client {
namespace {

using dvexport::v1::ExportFileRequest;
using dvexport::v1::FileChunk;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using testutil::DataChunk;
using testutil::ExportScript;
using testutil::GoodScript;
using testutil::MakeFileContent;
using testutil::ReadFile;
using testutil::TrailerChunk;

class ExportClientTest : public ::testing::Test {
 protected:
  ExportClientTest() : client_(CreateChannel(server_.address())) {
    request_.mutable_query()->add_period("202401");
    request_.set_format(dvexport::v1::FORMAT_JSON);
  }

  void SetUp() override {
    ASSERT_FALSE(dir_.path().empty());
    ASSERT_NE(server_.address(), "127.0.0.1:0") << "the test server did not start";
  }

  // Backoffs of 10 ms between whole-export attempts keep the tests fast.
  static ExportOptions FastRetries() {
    ExportOptions options;
    options.retry_backoff = std::chrono::milliseconds(10);
    return options;
  }

  absl::StatusOr<ExportSummary> Export(const ExportOptions& options = FastRetries()) {
    return client_.ExportToFile(request_, target(), options);
  }

  std::string target() const { return dir_.Join("out.json"); }

  testutil::TemporaryDirectory dir_;
  testutil::ScriptedExportServer server_;
  ExportClient client_;
  ExportFileRequest request_;
};

TEST_F(ExportClientTest, WritesTheStreamedBytes) {
  const std::string file = MakeFileContent(100'000);
  server_.SetScript(GoodScript(file, 1234, 30'000));

  absl::StatusOr<ExportSummary> summary = Export();

  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(ReadFile(target()), file);
  EXPECT_EQ(summary->values, 1234);
  EXPECT_EQ(summary->file_bytes, 100'000);
  EXPECT_EQ(summary->uncompressed_bytes, 100'000);
  EXPECT_GT(summary->seconds, 0);
  EXPECT_THAT(dir_.List(), ElementsAre("out.json"));
  ASSERT_EQ(server_.requests().size(), 1u);
  EXPECT_EQ(server_.requests()[0].SerializeAsString(), request_.SerializeAsString());
}

TEST_F(ExportClientTest, WritesAnEmptyExport) {
  server_.SetScript(GoodScript("", 0, 1));

  absl::StatusOr<ExportSummary> summary = Export();

  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(testutil::FileExists(target()));
  EXPECT_EQ(ReadFile(target()), "");
  EXPECT_EQ(summary->file_bytes, 0);
}

TEST_F(ExportClientTest, ReplacesAnExistingFile) {
  testutil::WriteFile(target(), "old contents");
  const std::string file = MakeFileContent(5000);
  server_.SetScript(GoodScript(file, 10, 1000));

  absl::StatusOr<ExportSummary> summary = Export();

  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(ReadFile(target()), file);
  EXPECT_THAT(dir_.List(), ElementsAre("out.json"));
}

TEST_F(ExportClientTest, GivesTheFileTheModeOfANewFile) {
  server_.SetScript(GoodScript("abc", 1, 10));
  const mode_t old_umask = ::umask(027);
  absl::StatusOr<ExportSummary> summary = Export();
  ::umask(old_umask);

  ASSERT_TRUE(summary.ok()) << summary.status();
  struct stat st;
  ASSERT_EQ(::stat(target().c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0640u);
}

TEST_F(ExportClientTest, WritesAFileInTheCurrentDirectory) {
  server_.SetScript(GoodScript("abc", 1, 10));
  char* previous = ::getcwd(nullptr, 0);
  ASSERT_EQ(::chdir(dir_.path().c_str()), 0);
  absl::StatusOr<ExportSummary> summary = client_.ExportToFile(request_, "here.csv");
  ASSERT_EQ(::chdir(previous), 0);
  std::free(previous);

  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(ReadFile(dir_.Join("here.csv")), "abc");
  EXPECT_THAT(dir_.List(), ElementsAre("here.csv"));
}

TEST_F(ExportClientTest, ReceivesALargeStreamOfChunksOfAnySize) {
  const std::string file = MakeFileContent(7'000'000);
  const size_t sizes[] = {1, 4096, 1 << 20, 17, (1 << 20) + 1, 300'000, (1 << 20) - 1};
  ExportScript script;
  size_t offset = 0;
  for (size_t i = 0; offset < file.size(); ++i) {
    const size_t size = sizes[i % std::size(sizes)];
    script.messages.push_back(DataChunk(file.substr(offset, size), static_cast<int64_t>(i * 100)));
    offset += size;
  }
  script.messages.push_back(TrailerChunk(file, 999'999));
  server_.SetScript(script);
  std::vector<ExportProgress> reports;
  ExportOptions options;
  options.on_progress = [&reports](const ExportProgress& progress) { reports.push_back(progress); };

  absl::StatusOr<ExportSummary> summary = Export(options);

  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(ReadFile(target()) == file) << "the file differs from the bytes sent";
  EXPECT_EQ(summary->file_bytes, 7'000'000);
  EXPECT_EQ(summary->values, 999'999);
  ASSERT_EQ(reports.size(), script.messages.size());
  for (size_t i = 1; i < reports.size(); ++i) {
    EXPECT_GE(reports[i].values, reports[i - 1].values) << "report " << i;
    EXPECT_GE(reports[i].file_bytes, reports[i - 1].file_bytes) << "report " << i;
  }
  EXPECT_EQ(reports.front().file_bytes, 1);
  EXPECT_EQ(reports.back().file_bytes, 7'000'000);
  EXPECT_EQ(reports.back().values, 999'999);
  EXPECT_THAT(dir_.List(), ElementsAre("out.json"));
}

TEST_F(ExportClientTest, ReceivesChunksBeyondGrpcDefaultMessageLimit) {
  // 5 MiB in one message: more than gRPC's default 4 MiB receive limit.
  const std::string file = MakeFileContent(5 << 20);
  server_.SetScript(GoodScript(file, 1, file.size()));

  ExportClient default_client(
      grpc::CreateChannel(server_.address(), grpc::InsecureChannelCredentials()));
  absl::StatusOr<ExportSummary> refused = default_client.ExportToFile(request_, target());
  EXPECT_EQ(refused.status().code(), absl::StatusCode::kResourceExhausted) << refused.status();

  absl::StatusOr<ExportSummary> summary = Export();
  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->file_bytes, 5 << 20);
}

// A broken stream: what the server sends, and what the client must report.
struct Fault {
  const char* name;
  ExportScript (*script)(const std::string& file);
  absl::StatusCode code;
  const char* message;
};

void PrintTo(const Fault& fault, std::ostream* os) { *os << fault.name; }

ExportScript WithoutLast(ExportScript script) {
  script.messages.pop_back();
  return script;
}

const Fault kFaults[] = {
    {"StreamWithoutTrailer",
     [](const std::string& file) { return WithoutLast(GoodScript(file, 100, 4000)); },
     absl::StatusCode::kDataLoss, "without a trailer"},
    {"EmptyStream", [](const std::string&) { return ExportScript{}; }, absl::StatusCode::kDataLoss,
     "without a trailer"},
    {"WrongFileCrc32",
     [](const std::string& file) {
       ExportScript script = GoodScript(file, 100, 4000);
       auto* trailer = script.messages.back().mutable_trailer();
       trailer->set_file_crc32(trailer->file_crc32() ^ 1);
       return script;
     },
     absl::StatusCode::kDataLoss, "CRC-32"},
    {"WrongFileBytes",
     [](const std::string& file) {
       ExportScript script = GoodScript(file, 100, 4000);
       auto* trailer = script.messages.back().mutable_trailer();
       trailer->set_file_bytes(trailer->file_bytes() + 1);
       return script;
     },
     absl::StatusCode::kDataLoss, "bytes but the trailer says"},
    {"DataAfterTrailer",
     [](const std::string& file) {
       ExportScript script = GoodScript(file, 100, 4000);
       script.messages.push_back(DataChunk("]}", 100));
       return script;
     },
     absl::StatusCode::kDataLoss, "after the trailer"},
    {"SecondTrailer",
     [](const std::string& file) {
       ExportScript script = GoodScript(file, 100, 4000);
       script.messages.push_back(script.messages.back());
       return script;
     },
     absl::StatusCode::kDataLoss, "after the trailer"},
    {"ErrorMidStream",
     [](const std::string& file) {
       ExportScript script = GoodScript(file, 100, 4000);
       script.messages.resize(2);
       script.status = grpc::Status(grpc::StatusCode::UNAVAILABLE, "database connection lost");
       return script;
     },
     absl::StatusCode::kUnavailable, "database connection lost"},
    {"ErrorBeforeData",
     [](const std::string&) {
       ExportScript script;
       script.status = grpc::Status(grpc::StatusCode::INVALID_ARGUMENT,
                                    "E2001: At least one data set must be specified");
       return script;
     },
     absl::StatusCode::kInvalidArgument, "E2001: At least one data set must be specified"},
};

// Each fault, with and without an earlier file at the target.
class ExportClientFaultTest : public ExportClientTest,
                              public ::testing::WithParamInterface<std::tuple<Fault, bool>> {};

TEST_P(ExportClientFaultTest, FailsAndLeavesTheTargetAsItWas) {
  const auto& [fault, file_existed] = GetParam();
  const std::string old_file = MakeFileContent(3000) + "\nthe earlier export\n";
  if (file_existed) testutil::WriteFile(target(), old_file);
  server_.SetScript(fault.script(MakeFileContent(20'000)));

  absl::StatusOr<ExportSummary> summary = Export();

  EXPECT_EQ(summary.status().code(), fault.code) << summary.status();
  EXPECT_THAT(summary.status().message(), HasSubstr(fault.message));
  if (file_existed) {
    EXPECT_TRUE(ReadFile(target()) == old_file) << "the earlier file changed";
    EXPECT_THAT(dir_.List(), ElementsAre("out.json"));
  } else {
    EXPECT_THAT(dir_.List(), IsEmpty());
  }
}

INSTANTIATE_TEST_SUITE_P(Faults, ExportClientFaultTest,
                         ::testing::Combine(::testing::ValuesIn(kFaults), ::testing::Bool()),
                         [](const ::testing::TestParamInfo<std::tuple<Fault, bool>>& info) {
                           return std::string(std::get<0>(info.param).name) +
                                  (std::get<1>(info.param) ? "OverExistingFile" : "");
                         });

TEST_F(ExportClientTest, FailsInAMissingDirectoryWithoutCallingTheServer) {
  server_.SetScript(GoodScript("abc", 1, 10));

  absl::StatusOr<ExportSummary> summary =
      client_.ExportToFile(request_, dir_.Join("missing/out.json"));

  EXPECT_EQ(summary.status().code(), absl::StatusCode::kNotFound) << summary.status();
  EXPECT_THAT(summary.status().message(), HasSubstr(dir_.Join("missing")));
  EXPECT_THAT(server_.requests(), IsEmpty());
  EXPECT_THAT(dir_.List(), IsEmpty());
}

TEST_F(ExportClientTest, FailsWhenTheTargetIsADirectory) {
  server_.SetScript(GoodScript("abc", 1, 10));
  ASSERT_EQ(::mkdir(target().c_str(), 0755), 0);

  absl::StatusOr<ExportSummary> summary = Export();

  EXPECT_EQ(summary.status().code(), absl::StatusCode::kFailedPrecondition) << summary.status();
  EXPECT_THAT(summary.status().message(), HasSubstr("is a directory"));
  EXPECT_THAT(dir_.List(), ElementsAre("out.json"));
}

TEST_F(ExportClientTest, FailsWhenTheTargetHasNoFileName) {
  absl::StatusOr<ExportSummary> summary = client_.ExportToFile(request_, dir_.path() + "/");

  EXPECT_EQ(summary.status().code(), absl::StatusCode::kInvalidArgument) << summary.status();
  EXPECT_THAT(server_.requests(), IsEmpty());
}

TEST_F(ExportClientTest, FailsWhenTheServerIsUnreachable) {
  std::string address;
  {
    testutil::ScriptedExportServer stopped;
    address = stopped.address();
  }
  ExportClient client(CreateChannel(address));

  absl::StatusOr<ExportSummary> summary = client.ExportToFile(request_, target());

  EXPECT_EQ(summary.status().code(), absl::StatusCode::kUnavailable) << summary.status();
  EXPECT_THAT(dir_.List(), IsEmpty());
}

TEST_F(ExportClientTest, FailsAtTheDeadline) {
  ExportScript script;
  script.messages.push_back(DataChunk("{\"dataValues\":[", 0));
  script.wait_for_cancel = true;
  server_.SetScript(script);
  ExportOptions options = FastRetries();
  options.timeout = std::chrono::milliseconds(300);

  absl::StatusOr<ExportSummary> summary = Export(options);

  EXPECT_EQ(summary.status().code(), absl::StatusCode::kDeadlineExceeded) << summary.status();
  EXPECT_THAT(dir_.List(), IsEmpty());
}

TEST_F(ExportClientTest, CancelStopsTheExportInProgressAndLaterOnes) {
  ExportScript script;
  script.messages.push_back(DataChunk("{\"dataValues\":[", 0));
  script.wait_for_cancel = true;
  server_.SetScript(script);
  std::promise<void> first_chunk;
  ExportOptions options = FastRetries();
  options.on_progress = [&first_chunk, called = false](const ExportProgress&) mutable {
    if (!called) first_chunk.set_value();
    called = true;
  };
  std::thread canceller([&] {
    first_chunk.get_future().wait();
    client_.Cancel();
  });

  absl::StatusOr<ExportSummary> summary = Export(options);
  canceller.join();

  EXPECT_EQ(summary.status().code(), absl::StatusCode::kCancelled) << summary.status();
  EXPECT_THAT(dir_.List(), IsEmpty());

  server_.SetScript(GoodScript("abc", 1, 10));
  absl::StatusOr<ExportSummary> later = Export();
  EXPECT_EQ(later.status().code(), absl::StatusCode::kCancelled) << later.status();
  EXPECT_EQ(server_.requests().size(), 1u);
  EXPECT_THAT(dir_.List(), IsEmpty());
}

// The statement of FailsAtTheFileSizeLimit, run in a child process: exits 0 if
// the export failed and left the directory empty, after printing the status.
[[noreturn]] void ExportUnderFileSizeLimit(ExportClient& client, const ExportFileRequest& request,
                                           const testutil::TemporaryDirectory& dir) {
  ::signal(SIGXFSZ, SIG_IGN);
  struct rlimit limit;
  ::getrlimit(RLIMIT_FSIZE, &limit);
  limit.rlim_cur = 1 << 20;
  ::setrlimit(RLIMIT_FSIZE, &limit);

  absl::StatusOr<ExportSummary> summary = client.ExportToFile(request, dir.Join("out.json"));

  std::fprintf(stderr, "%s\n", summary.status().ToString().c_str());
  const bool clean = !summary.ok() && dir.List().empty();
  if (clean) {
    ::rmdir(dir.path().c_str());
  } else {
    std::fprintf(stderr, "left in the directory: %zu files\n", dir.List().size());
  }
  std::_Exit(clean ? 0 : 1);
}

TEST_F(ExportClientTest, FailsAtTheFileSizeLimit) {
  // A fresh process: gRPC does not survive a plain fork.
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  const std::string file = MakeFileContent(4 << 20);
  server_.SetScript(GoodScript(file, 1000, 256 << 10));

  EXPECT_EXIT(ExportUnderFileSizeLimit(client_, request_, dir_), ::testing::ExitedWithCode(0),
              "OUT_OF_RANGE: writing .*/out.json: File too large");
}

TEST_F(ExportClientTest, ExportToFdWritesTheStreamedBytes) {
  const std::string file = MakeFileContent(3'000'000);
  server_.SetScript(GoodScript(file, 77, 100'000));
  const int fd = ::open(dir_.Join("fd.json").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);

  absl::StatusOr<ExportSummary> summary = client_.ExportToFd(request_, fd);
  ::close(fd);

  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->values, 77);
  EXPECT_EQ(summary->file_bytes, 3'000'000);
  EXPECT_TRUE(ReadFile(dir_.Join("fd.json")) == file) << "the file differs from the bytes sent";
}

TEST_F(ExportClientTest, ExportToFdReportsABrokenStream) {
  ExportScript script = GoodScript(MakeFileContent(10'000), 5, 1000);
  script.messages.back().mutable_trailer()->set_file_crc32(0);
  server_.SetScript(script);
  const int fd = ::open("/dev/null", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);

  absl::StatusOr<ExportSummary> summary = client_.ExportToFd(request_, fd);
  ::close(fd);

  EXPECT_EQ(summary.status().code(), absl::StatusCode::kDataLoss) << summary.status();
}

TEST_F(ExportClientTest, ExportToFdReportsAFullDisk) {
  server_.SetScript(GoodScript(MakeFileContent(3'000'000), 5, 100'000));
  const int fd = ::open("/dev/full", O_WRONLY | O_CLOEXEC);
  ASSERT_GE(fd, 0);

  absl::StatusOr<ExportSummary> summary = client_.ExportToFd(request_, fd);
  ::close(fd);

  EXPECT_EQ(summary.status().code(), absl::StatusCode::kResourceExhausted) << summary.status();
  EXPECT_THAT(
      summary.status().message(),
      HasSubstr("writing file descriptor " + std::to_string(fd) + ": No space left on device"));
}

// What the server answers a call it refuses at once.
ExportScript Refusal(grpc::StatusCode code) {
  ExportScript script;
  script.status = grpc::Status(code, "refused on purpose");
  return script;
}

// The first chunks of "file", then "code".
ExportScript FailsMidway(const std::string& file, grpc::StatusCode code) {
  ExportScript script = GoodScript(file, 100, 4000);
  script.messages.resize(2);
  script.status = grpc::Status(code, "failed on purpose");
  return script;
}

TEST_F(ExportClientTest, GrpcRetriesACallRefusedBeforeItsFirstResponse) {
  const std::string file = MakeFileContent(20'000);
  server_.SetScripts({Refusal(grpc::StatusCode::RESOURCE_EXHAUSTED),
                      Refusal(grpc::StatusCode::UNAVAILABLE), GoodScript(file, 100, 4000)});
  int retries_announced = 0;
  ExportOptions options = FastRetries();
  options.on_retry = [&](const absl::Status&, int, std::chrono::milliseconds) {
    ++retries_announced;
  };

  absl::StatusOr<ExportSummary> summary = Export(options);

  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(ReadFile(target()) == file);
  EXPECT_EQ(server_.requests().size(), 3u);
  EXPECT_EQ(summary->attempts, 1) << "gRPC's retries are one attempt of the export";
  EXPECT_EQ(retries_announced, 0);
}

TEST_F(ExportClientTest, OneAttemptTurnsRetriesOff) {
  server_.SetScripts(
      {Refusal(grpc::StatusCode::RESOURCE_EXHAUSTED), GoodScript(MakeFileContent(1000), 1, 400)});
  ChannelOptions once;
  once.max_attempts = 1;
  ExportClient client(*CreateChannel(server_.address(), once));
  ExportOptions options = FastRetries();
  options.max_attempts = 1;

  absl::StatusOr<ExportSummary> summary = client.ExportToFile(request_, target(), options);

  EXPECT_EQ(summary.status().code(), absl::StatusCode::kResourceExhausted) << summary.status();
  EXPECT_EQ(server_.requests().size(), 1u);
  EXPECT_THAT(dir_.List(), IsEmpty());

  server_.SetScripts({FailsMidway(MakeFileContent(20'000), grpc::StatusCode::UNAVAILABLE),
                      GoodScript(MakeFileContent(1000), 1, 400)});
  summary = client.ExportToFile(request_, target(), options);
  EXPECT_EQ(summary.status().code(), absl::StatusCode::kUnavailable) << summary.status();
  EXPECT_EQ(server_.requests().size(), 2u);
  EXPECT_THAT(dir_.List(), IsEmpty());
}

TEST_F(ExportClientTest, RejectsAttemptsOutOfRange) {
  for (int attempts : {0, kMaxCallAttempts + 1}) {
    ChannelOptions options;
    options.max_attempts = attempts;
    absl::StatusOr<std::shared_ptr<grpc::Channel>> channel =
        CreateChannel(server_.address(), options);
    EXPECT_EQ(channel.status().code(), absl::StatusCode::kInvalidArgument) << attempts;
    EXPECT_THAT(channel.status().message(), HasSubstr("max_attempts"));
  }
}

class ExportRestartTest : public ExportClientTest,
                          public ::testing::WithParamInterface<grpc::StatusCode> {};

TEST_P(ExportRestartTest, MakesTheExportAgainFromAnEmptyTemporaryFile) {
  const std::string file = MakeFileContent(20'000);
  testutil::WriteFile(target(), "the earlier export");
  // The failed attempts send a different, longer file: a temporary file that
  // kept their bytes would not match the trailer.
  const std::string other = MakeFileContent(30'000) + "x";
  server_.SetScripts({FailsMidway(other, GetParam()), FailsMidway(other, GetParam()),
                      GoodScript(file, 100, 4000)});
  std::vector<std::string> announced;
  ExportOptions options = FastRetries();
  options.on_retry = [&](const absl::Status& failure, int next_attempt,
                         std::chrono::milliseconds wait) {
    EXPECT_EQ(failure.message(), "failed on purpose");
    EXPECT_GE(wait, std::chrono::milliseconds(8));
    EXPECT_THAT(dir_.List(), ElementsAre(::testing::StartsWith(".out.json.dvexport-"), "out.json"));
    announced.push_back(absl::StrCat(absl::StatusCodeToString(failure.code()), " ", next_attempt));
  };

  absl::StatusOr<ExportSummary> summary = Export(options);

  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->attempts, 3);
  EXPECT_TRUE(ReadFile(target()) == file) << "the file differs from the last attempt's bytes";
  EXPECT_THAT(dir_.List(), ElementsAre("out.json"));
  EXPECT_EQ(server_.requests().size(), 3u);
  const std::string code = absl::StatusCodeToString(static_cast<absl::StatusCode>(GetParam()));
  EXPECT_THAT(announced, ElementsAre(code + " 2", code + " 3"));
}

INSTANTIATE_TEST_SUITE_P(Codes, ExportRestartTest,
                         ::testing::Values(grpc::StatusCode::UNAVAILABLE,
                                           grpc::StatusCode::ABORTED),
                         [](const ::testing::TestParamInfo<grpc::StatusCode>& info) {
                           return info.param == grpc::StatusCode::ABORTED ? "Aborted"
                                                                          : "Unavailable";
                         });

TEST_F(ExportClientTest, GivesUpAfterTheLastAttempt) {
  testutil::WriteFile(target(), "the earlier export");
  server_.SetScript(FailsMidway(MakeFileContent(20'000), grpc::StatusCode::ABORTED));
  ExportOptions options = FastRetries();
  options.max_attempts = 3;

  absl::StatusOr<ExportSummary> summary = Export(options);

  EXPECT_EQ(summary.status().code(), absl::StatusCode::kAborted) << summary.status();
  EXPECT_EQ(server_.requests().size(), 3u);
  EXPECT_EQ(ReadFile(target()), "the earlier export");
  EXPECT_THAT(dir_.List(), ElementsAre("out.json"));
}

TEST_F(ExportClientTest, DoesNotRestartForOtherCodes) {
  server_.SetScripts({FailsMidway(MakeFileContent(20'000), grpc::StatusCode::INTERNAL),
                      GoodScript(MakeFileContent(1000), 1, 400)});

  absl::StatusOr<ExportSummary> summary = Export();

  EXPECT_EQ(summary.status().code(), absl::StatusCode::kInternal) << summary.status();
  EXPECT_EQ(server_.requests().size(), 1u);
}

TEST_F(ExportClientTest, CancelEndsTheWaitForAnotherAttempt) {
  server_.SetScript(FailsMidway(MakeFileContent(20'000), grpc::StatusCode::UNAVAILABLE));
  ExportOptions options;
  options.retry_backoff = std::chrono::seconds(60);
  std::thread canceller;
  options.on_retry = [&](const absl::Status&, int, std::chrono::milliseconds) {
    canceller = std::thread([this] {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
      client_.Cancel();
    });
  };
  const auto start = std::chrono::steady_clock::now();

  absl::StatusOr<ExportSummary> summary = Export(options);
  if (canceller.joinable()) canceller.join();

  EXPECT_FALSE(summary.ok());
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(10));
  EXPECT_EQ(server_.requests().size(), 1u);
  EXPECT_THAT(dir_.List(), IsEmpty());
}

TEST_F(ExportClientTest, NoAttemptStartsThatTheDeadlineWouldCut) {
  server_.SetScript(FailsMidway(MakeFileContent(20'000), grpc::StatusCode::UNAVAILABLE));
  ExportOptions options;
  options.retry_backoff = std::chrono::seconds(5);
  options.timeout = std::chrono::seconds(2);
  const auto start = std::chrono::steady_clock::now();

  absl::StatusOr<ExportSummary> summary = Export(options);

  EXPECT_EQ(summary.status().code(), absl::StatusCode::kUnavailable) << summary.status();
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(2));
  EXPECT_EQ(server_.requests().size(), 1u);
}

TEST_F(ExportClientTest, ExportToFdIsNotMadeAgainOnceBytesWereWritten) {
  server_.SetScripts({FailsMidway(MakeFileContent(20'000), grpc::StatusCode::ABORTED),
                      GoodScript(MakeFileContent(1000), 1, 400)});
  const int fd = ::open(dir_.Join("fd.json").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);

  absl::StatusOr<ExportSummary> summary = client_.ExportToFd(request_, fd, FastRetries());
  ::close(fd);

  EXPECT_EQ(summary.status().code(), absl::StatusCode::kAborted) << summary.status();
  EXPECT_EQ(server_.requests().size(), 1u);
}

TEST_F(ExportClientTest, ExportToFdIsMadeAgainWhileNothingWasWritten) {
  const std::string file = MakeFileContent(5000);
  server_.SetScripts({Refusal(grpc::StatusCode::ABORTED), GoodScript(file, 10, 1000)});
  const int fd = ::open(dir_.Join("fd.json").c_str(), O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
  ASSERT_GE(fd, 0);

  absl::StatusOr<ExportSummary> summary = client_.ExportToFd(request_, fd, FastRetries());
  ::close(fd);

  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_EQ(summary->attempts, 2);
  EXPECT_TRUE(ReadFile(dir_.Join("fd.json")) == file);
}

TEST_F(ExportClientTest, AFifoIsWrittenInPlaceAndNotMadeAgainOnceWritten) {
  const std::string fifo = dir_.Join("out.fifo");
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const std::string file = MakeFileContent(300'000);
  server_.SetScript(GoodScript(file, 40, 50'000));
  std::string read;
  std::thread reader([&] { read = ReadFile(fifo); });

  absl::StatusOr<ExportSummary> summary = client_.ExportToFile(request_, fifo, FastRetries());
  reader.join();

  ASSERT_TRUE(summary.ok()) << summary.status();
  EXPECT_TRUE(summary->in_place);
  EXPECT_TRUE(read == file) << "the reader got " << read.size() << " bytes";
  EXPECT_THAT(dir_.List(), ElementsAre("out.fifo"));

  server_.SetScripts({FailsMidway(MakeFileContent(20'000), grpc::StatusCode::UNAVAILABLE),
                      GoodScript(file, 40, 50'000)});
  std::thread second_reader([&] { read = ReadFile(fifo); });
  summary = client_.ExportToFile(request_, fifo, FastRetries());
  second_reader.join();

  EXPECT_EQ(summary.status().code(), absl::StatusCode::kUnavailable) << summary.status();
  EXPECT_THAT(summary.status().message(), HasSubstr("written in place"));
  EXPECT_EQ(server_.requests().size(), 2u);
  struct stat st;
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

}  // namespace
}  // namespace dvexport::client
