#include "tests/client/scripted_export_server.h"

#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <zlib.h>

#include <algorithm>
#include <chrono>
#include <iterator>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace dvexport::client::testutil {

using dvexport::v1::ExportFileRequest;
using dvexport::v1::FileChunk;

namespace {

// Keeps what "context" carried as authorization for "method" in "log".
grpc::Status RecordAuthorization(const grpc::ServerContext& context, const char* method,
                                 std::mutex& mutex, std::vector<ReceivedAuthorization>& log) {
  const auto [begin, end] = context.client_metadata().equal_range("authorization");
  ReceivedAuthorization received{method, std::nullopt};
  if (begin != end) received.value = std::string(begin->second.data(), begin->second.size());
  const bool more_than_one = begin != end && std::next(begin) != end;
  std::lock_guard<std::mutex> lock(mutex);
  log.push_back(std::move(received));
  if (more_than_one) {
    return grpc::Status(grpc::StatusCode::INVALID_ARGUMENT, "more than one authorization");
  }
  return grpc::Status::OK;
}

}  // namespace

class ScriptedExportServer::Service final : public dvexport::v1::DataValueExport::Service {
 public:
  grpc::Status ExportFile(grpc::ServerContext* context, const ExportFileRequest* request,
                          grpc::ServerWriter<FileChunk>* writer) override {
    grpc::Status authorization = RecordAuthorization(*context, "ExportFile", mutex_, log_);
    if (!authorization.ok()) return authorization;
    ExportScript script;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      requests_.push_back(*request);
      script = scripts_[std::min(calls_, scripts_.size() - 1)];
      ++calls_;
    }
    for (const FileChunk& message : script.messages) {
      if (!writer->Write(message)) return grpc::Status(grpc::StatusCode::CANCELLED, "gone");
    }
    if (script.wait_for_cancel) {
      while (!context->IsCancelled()) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return grpc::Status(grpc::StatusCode::CANCELLED, "cancelled");
    }
    return script.status;
  }

  grpc::Status StreamDataValues(grpc::ServerContext* context, const dvexport::v1::ExportRequest*,
                                grpc::ServerWriter<dvexport::v1::DataValueBatch>* writer) override {
    grpc::Status authorization = RecordAuthorization(*context, "StreamDataValues", mutex_, log_);
    if (!authorization.ok()) return authorization;
    StreamScript script;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      script = stream_script_;
    }
    for (const dvexport::v1::DataValueBatch& batch : script.batches) {
      if (!writer->Write(batch)) return grpc::Status(grpc::StatusCode::CANCELLED, "gone");
    }
    return script.status;
  }

  grpc::Status CountDataValues(grpc::ServerContext* context, const dvexport::v1::ExportRequest*,
                               dvexport::v1::CountResponse* response) override {
    grpc::Status authorization = RecordAuthorization(*context, "CountDataValues", mutex_, log_);
    if (!authorization.ok()) return authorization;
    std::lock_guard<std::mutex> lock(mutex_);
    response->set_count(count_);
    return count_status_;
  }

  void SetCountResult(int64_t count, grpc::Status status) {
    std::lock_guard<std::mutex> lock(mutex_);
    count_ = count;
    count_status_ = std::move(status);
  }

  std::vector<ReceivedAuthorization> authorizations() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return log_;
  }

  // Shared with HealthService, which records its calls here too.
  std::mutex& mutex() { return mutex_; }
  std::vector<ReceivedAuthorization>& log() { return log_; }

  void SetStreamScript(StreamScript script) {
    std::lock_guard<std::mutex> lock(mutex_);
    stream_script_ = std::move(script);
  }

  void SetScripts(std::vector<ExportScript> scripts) {
    std::lock_guard<std::mutex> lock(mutex_);
    scripts_ = std::move(scripts);
    calls_ = 0;
  }

  std::vector<ExportFileRequest> requests() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return requests_;
  }

 private:
  mutable std::mutex mutex_;
  std::vector<ExportScript> scripts_{ExportScript{}};
  size_t calls_ = 0;  // ExportFile calls since SetScripts.
  StreamScript stream_script_;
  std::vector<ExportFileRequest> requests_;
  int64_t count_ = 0;
  grpc::Status count_status_;
  std::vector<ReceivedAuthorization> log_;
};

class ScriptedExportServer::HealthService final : public grpc::health::v1::Health::Service {
 public:
  explicit HealthService(ScriptedExportServer::Service* service) : service_(service) {}

  grpc::Status Check(grpc::ServerContext* context, const grpc::health::v1::HealthCheckRequest*,
                     grpc::health::v1::HealthCheckResponse* response) override {
    grpc::Status authorization =
        RecordAuthorization(*context, "Check", service_->mutex(), service_->log());
    if (!authorization.ok()) return authorization;
    response->set_status(grpc::health::v1::HealthCheckResponse::SERVING);
    return grpc::Status::OK;
  }

 private:
  ScriptedExportServer::Service* const service_;
};

dvexport::v1::DataValueBatch ValueBatch(int values, int64_t before, bool last) {
  dvexport::v1::DataValueBatch batch;
  for (int i = 0; i < values; ++i) batch.add_data_values()->set_period("202401");
  batch.set_last(last);
  batch.set_values_so_far(before + values);
  return batch;
}

FileChunk DataChunk(std::string bytes, int64_t values_so_far) {
  FileChunk chunk;
  chunk.set_data(std::move(bytes));
  chunk.set_values_so_far(values_so_far);
  return chunk;
}

FileChunk TrailerChunk(const std::string& file, int64_t values) {
  const uint32_t crc =
      crc32_z(crc32_z(0, nullptr, 0), reinterpret_cast<const Bytef*>(file.data()), file.size());
  FileChunk chunk;
  dvexport::v1::ExportTrailer& trailer = *chunk.mutable_trailer();
  trailer.set_values(values);
  trailer.set_uncompressed_bytes(static_cast<int64_t>(file.size()));
  trailer.set_uncompressed_crc32(crc);
  trailer.set_file_bytes(static_cast<int64_t>(file.size()));
  trailer.set_file_crc32(crc);
  chunk.set_values_so_far(values);
  return chunk;
}

ExportScript GoodScript(const std::string& file, int64_t values, size_t chunk_size) {
  ExportScript script;
  const size_t chunks = (file.size() + chunk_size - 1) / chunk_size;
  for (size_t i = 0; i < chunks; ++i) {
    // Values reported in proportion to the bytes sent.
    const int64_t values_so_far = static_cast<int64_t>(values * (i + 1) / chunks);
    script.messages.push_back(DataChunk(file.substr(i * chunk_size, chunk_size), values_so_far));
  }
  script.messages.push_back(TrailerChunk(file, values));
  return script;
}

std::string MakeFileContent(size_t size) {
  std::string content = "{\"dataValues\":[";
  for (uint64_t i = 0; content.size() < size; ++i) {
    absl::StrAppend(&content, i == 0 ? "" : ",",
                    "{\"dataElement\":\"fbfJHSPpUQD\",\"period\":\"2024", i % 12 + 1,
                    "\",\"value\":\"", (i * 2654435761u) % 100000, "\"}");
  }
  content.resize(size);
  return content;
}

ScriptedExportServer::ScriptedExportServer() : ScriptedExportServer("", "") {}

ScriptedExportServer::ScriptedExportServer(const std::string& tls_cert_pem,
                                           const std::string& tls_key_pem)
    : service_(std::make_unique<Service>()),
      health_service_(std::make_unique<HealthService>(service_.get())) {
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::InsecureServerCredentials();
  if (!tls_cert_pem.empty()) {
    grpc::SslServerCredentialsOptions options;
    options.pem_key_cert_pairs.push_back({tls_key_pem, tls_cert_pem});
    credentials = grpc::SslServerCredentials(options);
  }
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", credentials, &port);
  builder.RegisterService(service_.get());
  builder.RegisterService(health_service_.get());
  server_ = builder.BuildAndStart();
  address_ = absl::StrCat("127.0.0.1:", port);
}

ScriptedExportServer::~ScriptedExportServer() {
  if (server_ != nullptr)
    server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(1));
}

void ScriptedExportServer::SetScript(ExportScript script) {
  service_->SetScripts({std::move(script)});
}

void ScriptedExportServer::SetScripts(std::vector<ExportScript> scripts) {
  service_->SetScripts(std::move(scripts));
}

void ScriptedExportServer::SetStreamScript(StreamScript script) {
  service_->SetStreamScript(std::move(script));
}

std::vector<ExportFileRequest> ScriptedExportServer::requests() const {
  return service_->requests();
}

void ScriptedExportServer::SetCountResult(int64_t count, grpc::Status status) {
  service_->SetCountResult(count, std::move(status));
}

std::vector<ReceivedAuthorization> ScriptedExportServer::authorizations() const {
  return service_->authorizations();
}

}  // namespace dvexport::client::testutil
