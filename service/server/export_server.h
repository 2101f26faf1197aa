#ifndef DVEXPORT_SERVICE_SERVER_EXPORT_SERVER_H_
#define DVEXPORT_SERVICE_SERVER_EXPORT_SERVER_H_

#include <grpcpp/server.h>

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "service/db/connection_pool.h"
#include "service/dhis2/dhis2_version.h"
#include "service/grpc/export_service.h"
#include "service/grpc/listener_probe.h"
#include "service/http/http_server.h"
#include "service/pipeline/change_stream_health.h"
#include "service/pipeline/metrics.h"

namespace dvexport::server {

struct ServerOptions {
  // host:port to listen on; port 0 picks a free port (see port()).
  std::string listen = "0.0.0.0:50051";
  // libpq conninfo; empty means PG* environment variables only.
  std::string conninfo;
  // Database connections at most.
  int pool_size = 8;
  // Which DHIS2 versions are served (--dhis2_version, --serve_newer_dhis2): every new database
  // connection reads its DHIS2 (db::ConnectionPool).
  dhis2::VersionPolicy dhis2;
  // TLS: PEM files holding the server's certificate chain and private key.
  // Both empty: plaintext. With "tls_client_ca_file" too, clients must
  // present a certificate that CA signed (mutual TLS).
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string tls_client_ca_file;
  // --client_identities: a file mapping verified client certificates (subject DN or URI SAN) to
  // DHIS2 usernames (auth::ClientIdentities); needs tls_client_ca_file and service.auth kDhis2.
  // Empty: a certificate stands for nobody.
  std::string client_identities_file;
  // How often the database is probed; the health status follows the probes.
  std::chrono::milliseconds health_probe_interval{2000};
  // Threads gRPC's synchronous handlers may use at most (grpc::ResourceQuota):
  // here only server reflection's; calls beyond them are refused with
  // RESOURCE_EXHAUSTED. The callback methods (exports, counts, health) are not
  // bounded by it. 0: max_concurrent_exports + 16.
  int max_threads = 0;
  // host:port serving Prometheus metrics at /metrics; empty: no metrics.
  std::string metrics_listen;
  // Connections older than this are asked to go away (HTTP/2 GOAWAY) once
  // their running calls end, so that clients resolve the name again and find
  // new replicas; 0: never. gRPC takes it in int milliseconds: Start refuses
  // more than INT_MAX ms (about 24.8 days).
  std::chrono::seconds max_connection_age{0};
  // A client connection that has not sent its HTTP/2 preface and SETTINGS this long after it was
  // accepted (the TLS handshake included) is closed (gRPC's default: 2 minutes).
  std::chrono::milliseconds handshake_timeout{5000};
  // How often the gRPC port is probed from inside the process (grpc_door::ProbeListener); after
  // kListenerProbeFailures probes in a row fail, the listener is taken as lost.
  std::chrono::milliseconds listener_probe_interval{5000};
  // Called once, on the watchdog's thread, when the listener is lost, after health has turned
  // NOT_SERVING for good; it should have the server shut down (dvexport-server then exits 1, so
  // that its supervisor starts it again), but not call Shutdown itself: Shutdown joins the
  // watchdog's thread. Null: nothing more happens.
  std::function<void()> on_listener_lost;
  // The export pipeline both doors share.
  pipeline::PipelineOptions service;
  // The HTTP door (DHIS2's GET /api/dataValueSets): off while http.listen is empty. Its TLS files
  // are the gRPC door's (tls_cert_file, tls_key_file, tls_client_ca_file), whatever it holds.
  http::HttpServerOptions http;
};

// Listener probes that fail in a row before the listener is taken as lost.
inline constexpr int kListenerProbeFailures = 3;

// Descriptors kept from client connections for everything else (each database connection and
// its cancel request, and a fixed 128 for the process: standard streams, gRPC's epoll and
// wake-up descriptors, the metrics server and its connections, probes, files).
int DescriptorReserve(int pool_size);

// Client connections need at least this many descriptors below the limit after the reserve.
inline constexpr int kMinClientDescriptors = 16;

// A running dvexport gRPC server: DataValueExport, grpc.health.v1.Health and
// server reflection, over TLS or plaintext. A background prober keeps the
// health status SERVING while the database answers and NOT_SERVING while it
// does not (each probe a new connection, bounded by min(probe interval, 5 s),
// also when the database accepts TCP and never answers); the server starts
// either way: Start waits at most 1 s for the first probe. With the change
// stream monitor on (service.change_stream_poll), health also reports
// pipeline::kChangeStreamsHealthService, as of the monitor's last poll
// (NOT_SERVING until its first; pipeline::ChangeStreamsHealthy).
//
// Client connections take descriptors below a ceiling, RLIMIT_NOFILE's soft limit less
// DescriptorReserve(pool_size) (accept_guard.h: beyond it a new connection is closed at once, and
// gRPC's listener never sees EMFILE); Start fails when that leaves fewer than
// kMinClientDescriptors. A watchdog probes the gRPC port every listener_probe_interval
// (grpc_door::ProbeListener, plaintext or TLS as served); a probe that fails while the guard is
// dropping connections means the server is full, not that its listener is gone. After
// kListenerProbeFailures other failures in a row, health turns NOT_SERVING for good and
// on_listener_lost is called.
class ExportServer {
 public:
  static absl::StatusOr<std::unique_ptr<ExportServer>> Start(const ServerOptions& options);
  ~ExportServer();

  // The port actually bound.
  int port() const { return port_; }

  const grpc_door::DataValueExportService& service() const { return *service_; }
  // The HTTP door's port actually bound; 0 without the HTTP door.
  int http_port() const { return http_ == nullptr ? 0 : http_->port(); }
  // The metrics port actually bound; 0 without metrics.
  int metrics_port() const { return metrics_ == nullptr ? 0 : metrics_->port(); }

  // Client connections are kept on descriptors below this one (see above).
  int descriptor_ceiling() const { return descriptor_ceiling_; }

  // True once the watchdog has taken the listener as lost.
  bool listener_lost() const;

  // Health turns NOT_SERVING, new calls (of both doors) are refused, running calls get until
  // "deadline" to finish and are then cancelled.
  void Shutdown(std::chrono::system_clock::time_point deadline);

  // Blocks until the server has shut down.
  void Wait();

 private:
  ExportServer() = default;

  // The parts of Start: the metrics server (with options.metrics_listen), the HTTP door (with
  // options.http.listen), the gRPC server with its services, listening.
  absl::Status StartMetrics(const ServerOptions& options);
  absl::Status StartHttp(const ServerOptions& options);
  absl::Status StartGrpc(const ServerOptions& options);
  // Sets the health status from one database probe.
  void ProbeDatabase();
  // Probes every "interval" until StopProber().
  void RunProber(std::chrono::milliseconds interval);
  // Probes the gRPC port every "interval" until StopProber() or the listener is lost.
  void RunListenerWatchdog(std::chrono::milliseconds interval);
  // One of the HTTP door's figures for /metrics (0 while there is no door).
  template <class Value>
  int64_t HttpStat(Value (http::HttpServer::*figure)() const) {
    std::lock_guard<std::mutex> lock(http_stats_mu_);
    return http_stats_ == nullptr ? 0 : static_cast<int64_t>((http_stats_->*figure)());
  }
  // Stops the database prober, the watchdog and the change stream monitor.
  void StopProber();
  // Sets pipeline::kChangeStreamsHealthService's status from one poll of the change stream
  // monitor, unless health has turned NOT_SERVING for good.
  void SetChangeStreamsServing(bool serving);

  std::unique_ptr<db::ConnectionPool> pool_;
  std::unique_ptr<auth::ClientIdentities> client_identities_;
  std::unique_ptr<pipeline::ServerMetrics> metrics_;
  std::unique_ptr<pipeline::CallLog> log_;
  // The monitor's observer (before the pipeline that holds the monitor, so that it outlives it).
  std::unique_ptr<pipeline::ChangeStreamHealth> change_stream_health_;
  std::unique_ptr<pipeline::ExportPipeline> pipeline_;
  std::unique_ptr<grpc_door::DataValueExportService> service_;
  std::unique_ptr<http::HttpServer> http_;
  // What /metrics reads of the HTTP door: http_ while it lives (a scrape may come from the
  // metrics threads at any time).
  std::mutex http_stats_mu_;
  http::HttpServer* http_stats_ ABSL_GUARDED_BY(http_stats_mu_) = nullptr;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  int descriptor_ceiling_ = 0;
  std::chrono::milliseconds probe_timeout_{2000};
  grpc_door::ListenerAddress listener_;
  std::function<void()> on_listener_lost_;

  mutable std::mutex prober_mu_;
  std::condition_variable prober_wake_;
  bool prober_stop_ = false;
  bool listener_lost_ = false;  // guarded by prober_mu_
  int probes_ = 0;              // probes done, guarded by prober_mu_
  std::thread prober_;
  std::thread watchdog_;
};

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_EXPORT_SERVER_H_
