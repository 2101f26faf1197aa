#ifndef DVEXPORT_TESTS_CLIENT_SCRIPTED_EXPORT_SERVER_H_
#define DVEXPORT_TESTS_CLIENT_SCRIPTED_EXPORT_SERVER_H_

#include <grpcpp/server.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "dvexport/v1/export.grpc.pb.h"

namespace dvexport::client::testutil {

// What the server does on each ExportFile call: sends "messages" in order,
// then ends the call with "status", or, if "wait_for_cancel", waits until the
// client cancels or its deadline passes. The real server never sends a broken
// stream; this one sends whatever a test needs.
struct ExportScript {
  std::vector<dvexport::v1::FileChunk> messages;
  grpc::Status status = grpc::Status::OK;
  bool wait_for_cancel = false;
};

// What the server does on each StreamDataValues call: sends "batches", then
// ends the call with "status".
struct StreamScript {
  std::vector<dvexport::v1::DataValueBatch> batches;
  grpc::Status status = grpc::Status::OK;
};

// The "authorization" metadata one call carried: "method" is ExportFile,
// StreamDataValues, CountDataValues or Check (grpc.health.v1.Health); "value"
// is nullopt if the call carried none. A call with more than one value fails.
struct ReceivedAuthorization {
  std::string method;
  std::optional<std::string> value;

  bool operator==(const ReceivedAuthorization&) const = default;
};

// A batch of "values" minimal values after "before" earlier ones.
dvexport::v1::DataValueBatch ValueBatch(int values, int64_t before, bool last);

dvexport::v1::FileChunk DataChunk(std::string bytes, int64_t values_so_far);

// The correct trailer for a file "file" of "values" values, uncompressed.
dvexport::v1::FileChunk TrailerChunk(const std::string& file, int64_t values);

// A complete, correct stream of "file" in chunks of "chunk_size" bytes.
ExportScript GoodScript(const std::string& file, int64_t values, size_t chunk_size);

// Deterministic file content of "size" bytes that looks like a JSON export.
std::string MakeFileContent(size_t size);

// An in-process DataValueExport server on 127.0.0.1 and a port of the
// kernel's choice, running for the lifetime of the object, with a
// grpc.health.v1.Health that answers SERVING. It records the authorization
// metadata of every call (it checks none: the tests assert what was sent).
class ScriptedExportServer {
 public:
  ScriptedExportServer();
  // Over TLS with this PEM certificate chain and key (their contents).
  ScriptedExportServer(const std::string& tls_cert_pem, const std::string& tls_key_pem);
  ~ScriptedExportServer();

  ScriptedExportServer(const ScriptedExportServer&) = delete;
  ScriptedExportServer& operator=(const ScriptedExportServer&) = delete;

  // "127.0.0.1:PORT".
  std::string address() const { return address_; }

  // The script of the calls from now on.
  void SetScript(ExportScript script);

  // The scripts of the calls from now on, one per call in order; the last
  // one for every call after those.
  void SetScripts(std::vector<ExportScript> scripts);

  // The script of the StreamDataValues calls from now on.
  void SetStreamScript(StreamScript script);

  // The requests of all calls so far, oldest first.
  std::vector<dvexport::v1::ExportFileRequest> requests() const;

  // What CountDataValues answers from now on (default 0, OK).
  void SetCountResult(int64_t count, grpc::Status status = grpc::Status::OK);

  // The authorization metadata of every call so far, oldest first.
  std::vector<ReceivedAuthorization> authorizations() const;

 private:
  class Service;
  class HealthService;

  std::unique_ptr<Service> service_;
  std::unique_ptr<HealthService> health_service_;
  std::unique_ptr<grpc::Server> server_;
  std::string address_;
};

}  // namespace dvexport::client::testutil

#endif  // DVEXPORT_TESTS_CLIENT_SCRIPTED_EXPORT_SERVER_H_
