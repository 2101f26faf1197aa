#include "tests/reliability/reliability_support.h"

#include <gtest/gtest.h>
#include <unistd.h>
#include <zlib.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>
#include <map>
#include <thread>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace dvexport::reliability {
namespace {

struct Instance {
  std::string dir;
  int port = 0;
  std::string reader;
  std::string reader_243;
  std::string admin;
};

Instance& instance() {
  static Instance* i = new Instance();
  return *i;
}

std::string Script() {
  return absl::StrCat(DVEXPORT_SOURCE_DIR, "/tests/reliability/private_pg.sh");
}

bool RunScript(const std::string& args) {
  std::string command = absl::StrCat(Script(), " ", args);
  int rc = std::system(command.c_str());
  if (rc != 0) std::fprintf(stderr, "reliability: '%s' failed (%d)\n", command.c_str(), rc);
  return rc == 0;
}

// Null, with a test failure, if the admin cannot connect.
std::unique_ptr<pqxx::connection> AdminConnection() {
  try {
    return std::make_unique<pqxx::connection>(instance().admin);
  } catch (const std::exception& e) {
    ADD_FAILURE() << "cannot connect as admin: " << e.what();
    return nullptr;
  }
}

uint32_t Crc32(uint32_t crc, const std::string& bytes) {
  return static_cast<uint32_t>(
      crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(bytes.size())));
}

v1::ExportFileRequest BuildWholeDatabaseRequest();
v1::ExportFileRequest BuildSmallRequest();
v1::ExportFileRequest& CachedRequest(bool whole);

}  // namespace

bool PrivatePostgres::Start() {
  char env_file[] = "/tmp/dvexport-reliability-env.XXXXXX";
  int fd = mkstemp(env_file);
  if (fd < 0) return false;
  close(fd);
  // pg.sh chowns its directory to postgres when run as root; the env file is ours.
  bool ok = RunScript(absl::StrCat("start ", env_file, " ", getpid()));
  std::map<std::string, std::string> values;
  std::ifstream in(env_file);
  for (std::string line; std::getline(in, line);) {
    size_t eq = line.find('=');
    if (eq != std::string::npos) values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  std::remove(env_file);
  if (!ok || values["DIR"].empty()) return false;
  instance().dir = values["DIR"];
  instance().port = std::atoi(values["PORT"].c_str());
  instance().reader = values["READER"];
  instance().reader_243 = values["READER_243"];
  instance().admin = values["ADMIN"];
  CachedRequest(true) = BuildWholeDatabaseRequest();
  CachedRequest(false) = BuildSmallRequest();
  return true;
}

void PrivatePostgres::Stop() {
  if (!instance().dir.empty()) RunScript(absl::StrCat("stop ", instance().dir));
  instance().dir.clear();
}

const std::string& PrivatePostgres::reader_conninfo() { return instance().reader; }
const std::string& PrivatePostgres::reader_conninfo_243() { return instance().reader_243; }
const std::string& PrivatePostgres::admin_conninfo() { return instance().admin; }
int PrivatePostgres::port() { return instance().port; }

void PrivatePostgres::Down() { ASSERT_TRUE(RunScript(absl::StrCat("down ", instance().dir))); }
void PrivatePostgres::Up() {
  ASSERT_TRUE(RunScript(absl::StrCat("up ", instance().dir, " ", instance().port)));
}
void PrivatePostgres::Restart() {
  ASSERT_TRUE(RunScript(absl::StrCat("restart ", instance().dir)));
}

std::string AdminQuery(const std::string& sql) {
  std::unique_ptr<pqxx::connection> conn = AdminConnection();
  if (conn == nullptr) return "";
  try {
    pqxx::nontransaction tx(*conn);
    const pqxx::result result = tx.exec(sql);
    if (!result.empty() && result.columns() > 0) return result[0][0].c_str();
  } catch (const std::exception& e) {
    ADD_FAILURE() << sql << ": " << e.what();
  }
  return "";
}

int ActiveCopies() {
  return std::atoi(AdminQuery("SELECT count(*) FROM pg_stat_activity WHERE usename = "
                              "'dvexport_reader' AND state = 'active' AND query LIKE 'COPY%'")
                       .c_str());
}

int ActiveReaderQueries() {
  return std::atoi(AdminQuery("SELECT count(*) FROM pg_stat_activity WHERE usename = "
                              "'dvexport_reader' AND state = 'active'")
                       .c_str());
}

int ReaderTransactions() {
  return std::atoi(AdminQuery("SELECT count(*) FROM pg_stat_activity WHERE usename = "
                              "'dvexport_reader' AND state IN ('active', 'idle in transaction')")
                       .c_str());
}

bool WaitFor(const std::function<bool()>& condition, std::chrono::milliseconds timeout) {
  auto deadline = std::chrono::steady_clock::now() + timeout;
  while (true) {
    if (condition()) return true;
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
}

DataValueLock::DataValueLock() : conn_(AdminConnection()) {
  if (conn_ == nullptr) return;
  try {
    tx_ = std::make_unique<pqxx::nontransaction>(*conn_);
    tx_->exec("BEGIN; LOCK TABLE datavalue IN ACCESS EXCLUSIVE MODE");
  } catch (const std::exception& e) {
    ADD_FAILURE() << "cannot lock datavalue: " << e.what();
  }
}

DataValueLock::~DataValueLock() { Release(); }

void DataValueLock::Release() {
  if (tx_ != nullptr) {
    try {
      tx_->exec("ROLLBACK");
    } catch (const std::exception&) {
      // Closing the connection ends the transaction anyway.
    }
  }
  tx_.reset();
  conn_.reset();
}

namespace {

v1::ExportFileRequest BuildWholeDatabaseRequest() {
  v1::ExportFileRequest request;
  request.set_format(v1::FORMAT_JSON);
  v1::ExportRequest* query = request.mutable_query();
  query->add_data_set(AdminQuery("SELECT string_agg(uid, ',') FROM dataset"));
  query->add_org_unit(
      AdminQuery("SELECT string_agg(uid, ',') FROM organisationunit WHERE parentid IS NULL"));
  query->set_children(true);
  query->set_start_date("1900-01-01");
  query->set_end_date("2100-12-31");
  // Comma-separated lists are one entry each; split them.
  for (auto* field : {query->mutable_data_set(), query->mutable_org_unit()}) {
    std::string joined = field->Get(0);
    field->Clear();
    size_t start = 0;
    while (start <= joined.size()) {
      size_t comma = joined.find(',', start);
      if (comma == std::string::npos) comma = joined.size();
      field->Add(joined.substr(start, comma - start));
      start = comma + 1;
    }
  }
  return request;
}

v1::ExportFileRequest BuildSmallRequest() {
  v1::ExportFileRequest request = BuildWholeDatabaseRequest();
  v1::ExportRequest* query = request.mutable_query();
  query->clear_org_unit();
  query->add_org_unit(AdminQuery(
      "SELECT ou.uid FROM organisationunit ou WHERE NOT EXISTS (SELECT 1 FROM organisationunit c "
      "WHERE c.parentid = ou.organisationunitid) AND EXISTS (SELECT 1 FROM datavalue dv WHERE "
      "dv.sourceid = ou.organisationunitid AND NOT dv.deleted) ORDER BY ou.uid LIMIT 1"));
  query->set_children(false);
  return request;
}

// Built once, before any test locks datavalue.
v1::ExportFileRequest& CachedRequest(bool whole) {
  static v1::ExportFileRequest* whole_database = new v1::ExportFileRequest();
  static v1::ExportFileRequest* small = new v1::ExportFileRequest();
  return whole ? *whole_database : *small;
}

}  // namespace

v1::ExportFileRequest WholeDatabaseRequest() { return CachedRequest(true); }
v1::ExportFileRequest SmallRequest() { return CachedRequest(false); }

ExportOutcome ReadExport(v1::DataValueExport::Stub* stub, grpc::ClientContext* context,
                         const v1::ExportFileRequest& request,
                         const std::function<void(int)>& after_chunk) {
  ExportOutcome outcome;
  std::unique_ptr<grpc::ClientReader<v1::FileChunk>> reader = stub->ExportFile(context, request);
  v1::FileChunk chunk;
  while (reader->Read(&chunk)) {
    if (chunk.has_trailer()) {
      outcome.has_trailer = true;
      outcome.trailer = chunk.trailer();
      continue;
    }
    outcome.data_bytes += static_cast<int64_t>(chunk.data().size());
    outcome.data_crc32 = Crc32(outcome.data_crc32, chunk.data());
    ++outcome.chunks;
    if (after_chunk != nullptr) after_chunk(outcome.chunks);
  }
  outcome.status = reader->Finish();
  return outcome;
}

bool CompleteAndConsistent(const ExportOutcome& outcome) {
  return outcome.status.ok() && outcome.has_trailer &&
         outcome.trailer.file_bytes() == outcome.data_bytes &&
         outcome.trailer.file_crc32() == outcome.data_crc32;
}

std::shared_ptr<grpc::Channel> PlaintextChannel(int port) {
  return grpc::CreateChannel(absl::StrCat("127.0.0.1:", port), grpc::InsecureChannelCredentials());
}

std::string HealthStatus(const std::shared_ptr<grpc::Channel>& channel,
                         std::chrono::milliseconds deadline, const std::string& service) {
  auto stub = grpc::health::v1::Health::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + deadline);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = stub->Check(&context, request, &response);
  if (!status.ok()) {
    // grpc::StatusCode and absl::StatusCode share their values.
    return absl::StrCat(
        "error: ", absl::StatusCodeToString(static_cast<absl::StatusCode>(status.error_code())));
  }
  return grpc::health::v1::HealthCheckResponse::ServingStatus_Name(response.status());
}

int64_t ResidentBytes() {
  std::ifstream statm("/proc/self/statm");
  int64_t size = 0, resident = 0;
  statm >> size >> resident;
  return resident * sysconf(_SC_PAGESIZE);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
}

void MakeTestCertificates(const std::string& dir) {
  const std::string script = absl::StrCat(
      "set -e; mkdir -p ", dir, "; cd ", dir, "\n",
      "key() { openssl req -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes "
      "-keyout $1.key -subj /CN=$2 \"${@:3}\" 2>/dev/null; }\n",
      "key ca dvexport-test-ca -x509 -days 2 -out ca.pem\n",
      "key server localhost -out server.csr\n",
      "printf 'subjectAltName=IP:127.0.0.1,DNS:localhost\\n' > server.ext\n",
      "openssl x509 -req -in server.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
      "-extfile server.ext -out server.pem 2>/dev/null\n",
      "key client dvexport-test-client -out client.csr\n",
      "openssl x509 -req -in client.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
      "-out client.pem 2>/dev/null\n");
  const std::string script_file = dir + ".sh";
  std::ofstream(script_file) << script;
  ASSERT_EQ(std::system(("bash " + script_file).c_str()), 0);
  std::remove(script_file.c_str());
}

}  // namespace dvexport::reliability
