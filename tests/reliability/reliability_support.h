#ifndef DVEXPORT_TESTS_RELIABILITY_RELIABILITY_SUPPORT_H_
#define DVEXPORT_TESTS_RELIABILITY_RELIABILITY_SUPPORT_H_

#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <string>

#include "dvexport/v1/export.grpc.pb.h"

namespace dvexport::reliability {

// Built with AddressSanitizer or ThreadSanitizer (slower, and a sanitized
// process takes longer to exit: ThreadSanitizer sleeps 1 s at exit).
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
constexpr bool kSanitized = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(thread_sanitizer)
constexpr bool kSanitized = true;
#else
constexpr bool kSanitized = false;
#endif
#else
constexpr bool kSanitized = false;
#endif

// The private PostgreSQL of the reliability tests (tests/reliability/private_pg.sh):
// the small demo database with 6 KB comments, so that a whole-database
// export is ~60 MB and stays mid-stream while its client pauses.
class PrivatePostgres {
 public:
  // Starts the instance (once per test binary); false, with a message on
  // stderr, if that fails.
  static bool Start();
  static void Stop();

  static const std::string& reader_conninfo();      // dvexport_reader: SELECT only
  static const std::string& reader_conninfo_243();  // the same, on the small demo as 2.43
  static const std::string& admin_conninfo();       // superuser
  static int port();

  // Fast shutdown (clients are disconnected) / start again on the same port /
  // both. Fail the calling test on error.
  static void Down();
  static void Up();
  static void Restart();
};

// Runs "sql" on a fresh admin connection; the first column of the first row,
// or "" (fails the calling test on error).
std::string AdminQuery(const std::string& sql);

// Backend pids of dvexport's COPY statements in progress.
int ActiveCopies();

// Statements of any kind the dvexport reader role is running now.
int ActiveReaderQueries();

// Connections of the dvexport reader role inside a transaction (running a statement or not).
int ReaderTransactions();

// Polls "condition" every 10 ms until it holds or "timeout" passes; true if it held.
bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout);

// Holds an ACCESS EXCLUSIVE lock on datavalue from an admin connection while
// alive: the export's COPY then waits for it, as behind a slow query, without
// sending a row.
class DataValueLock {
 public:
  DataValueLock();
  ~DataValueLock();
  void Release();

 private:
  std::unique_ptr<pqxx::connection> conn_;
  std::unique_ptr<pqxx::nontransaction> tx_;
};

// Whole demo database, every data set and root org unit with children.
v1::ExportFileRequest WholeDatabaseRequest();
// One leaf org unit: a few dozen values.
v1::ExportFileRequest SmallRequest();

struct ExportOutcome {
  grpc::Status status;
  bool has_trailer = false;
  v1::ExportTrailer trailer;
  int64_t data_bytes = 0;
  uint32_t data_crc32 = 0;
  int chunks = 0;
};

// Reads an ExportFile stream to its end. "after_chunk(n)" is called after
// the n-th data chunk (1-based) and may sleep or cancel "context".
ExportOutcome ReadExport(v1::DataValueExport::Stub* stub, grpc::ClientContext* context,
                         const v1::ExportFileRequest& request,
                         const std::function<void(int)>& after_chunk = nullptr);

// True if the trailer is present and matches the data received.
bool CompleteAndConsistent(const ExportOutcome& outcome);

std::shared_ptr<grpc::Channel> PlaintextChannel(int port);

// grpc.health.v1 Check of "service" ("": the server as a whole) with the given
// deadline: SERVING, NOT_SERVING, or the call's error as "error: CODE" (e.g.
// "error: NOT_FOUND").
std::string HealthStatus(const std::shared_ptr<grpc::Channel>& channel,
                         std::chrono::milliseconds deadline = std::chrono::milliseconds(2000),
                         const std::string& service = "");

// Resident set size of this process in bytes.
int64_t ResidentBytes();

// Makes, with openssl, in the new directory "dir": a CA (ca.pem, ca.key), a server certificate
// for 127.0.0.1 and localhost signed by it (server.pem, server.key) and a client certificate
// (client.pem, client.key). Fails the calling test if openssl fails.
void MakeTestCertificates(const std::string& dir);

// The whole of the file at "path"; empty if it cannot be read.
std::string ReadFile(const std::string& path);

}  // namespace dvexport::reliability

#endif  // DVEXPORT_TESTS_RELIABILITY_RELIABILITY_SUPPORT_H_
