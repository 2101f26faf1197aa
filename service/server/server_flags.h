#ifndef DVEXPORT_SERVICE_SERVER_SERVER_FLAGS_H_
#define DVEXPORT_SERVICE_SERVER_SERVER_FLAGS_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "service/server/export_server.h"

namespace dvexport::server {

// The values of dvexport-server's command-line flags, one field per flag, as
// given (nothing checked yet); the defaults are the flags' defaults. The
// allowed ranges are in each flag's help text (server_main.cc) and in
// docs/DEPLOYMENT.md.
struct ServerFlags {
  std::string listen = "0.0.0.0:50051";
  std::string pg;
  // "" : the database's DHIS2 version decides; else 2.40 to 2.43.
  std::string dhis2_version;
  bool serve_newer_dhis2 = false;
  int pool_size = 8;
  int max_concurrent_exports = 4;
  int max_exports_per_user = 0;  // 0: max(1, max_concurrent_exports - 1)
  int max_queued_exports = 64;
  int max_queued_exports_per_user = 0;  // 0: max(1, max_queued_exports / 2)
  int max_queue_wait_ms = 30000;
  int chunk_kib = 256;
  int statement_timeout_s = 0;
  int read_streams = 2;
  int64_t parallel_min_rows = 100000;
  int connection_wait_ms = 10000;
  int shutdown_grace_s = 30;
  std::string port_file;
  std::string tls_cert;
  std::string tls_key;
  std::string tls_client_ca;
  int health_probe_interval_ms = 2000;
  int max_connection_age_s = 0;
  int stall_timeout_s = 60;
  int stall_timeout_contended_s = 5;
  int max_zstd_level = 9;
  int stall_min_rate_kib_s = 64;
  std::string metrics_listen;
  int handshake_timeout_ms = 5000;
  int listener_probe_interval_ms = 5000;
  std::string auth = "dhis2";
  int auth_cache_s = 60;
  int auth_workers = 2;
  int auth_max_pending = 256;
  int auth_max_failures_per_ip = 20;
  int auth_max_failures_per_user = 10;
  int auth_failure_window_s = 300;
  std::string client_identities;
  // The HTTP door (DHIS2's GET /api/dataValueSets); off while http_listen is empty.
  std::string http_listen;
  std::string http_port_file;
  int http_threads = 2;
  int http_max_connections = 4096;
  int http_max_connections_per_peer = 256;
  int http_header_timeout_ms = 10000;
  int http_idle_timeout_s = 30;
  int http_max_pending_heads = 0;  // 0: half of http_max_connections
  int http_max_header_kib = 32;
  int http_max_header_fields = 100;
  int http_max_url_kib = 16;
  std::string http_trusted_proxies;  // comma-separated addresses or CIDRs
  int http_trusted_proxy_hops = 1;
  // Change streams (docs/SYNC.md).
  std::string change_publication = "dvexport";
  int change_stream_poll_s = 30;
  int change_stream_warn_wal_mb = 1024;
};

// Checks every flag in "flags", and how they fit together, and returns the
// server's options. The first flag out of its range (or pair of flags that do
// not fit together) is an InvalidArgument that names the flag, its value and
// what is allowed, e.g. "--pool_size: 0 is not between 1 and 1000"; the flags are
// checked a group at a time (the process's, the pipeline's, authentication's, the
// HTTP door's), then the rules between groups. Nothing is
// clamped. --pg is parsed as a libpq conninfo, and its value is never quoted (it
// may hold a password). --shutdown_grace_s and --port_file, which only
// server_main uses, are checked here too. Touches neither the network, the
// database nor the file system.
absl::StatusOr<ServerOptions> ServerOptionsFromFlags(const ServerFlags& flags);

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_SERVER_FLAGS_H_
