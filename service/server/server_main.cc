// dvexport-server: streams DHIS2 data values over gRPC.

#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <string>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "service/server/export_server.h"

ABSL_FLAG(std::string, listen, "0.0.0.0:50051", "host:port to listen on (port 0: any free port)");
ABSL_FLAG(std::string, pg, "",
          "libpq connection string, e.g. \"host=db dbname=dhis2 user=dvexport\"; PG* environment "
          "variables fill in what it leaves out");
ABSL_FLAG(int, pool_size, 8, "database connections at most");
ABSL_FLAG(int, max_concurrent_exports, 4,
          "exports running at once; more are refused with RESOURCE_EXHAUSTED");
ABSL_FLAG(int, chunk_kib, 256, "KiB of rendered output per streamed chunk (16..4096)");
ABSL_FLAG(int, statement_timeout_s, 0,
          "PostgreSQL statement_timeout for exports; 0: the role's or database's setting");
ABSL_FLAG(int, read_streams, 2,
          "database connections (COPYs of slices of the table, one snapshot) a large export "
          "reads with at once, when the pool can spare them; 1: one COPY per export");
ABSL_FLAG(int64_t, parallel_min_rows, 100000,
          "the planner's row estimate from which an export is read with --read_streams");
ABSL_FLAG(int, connection_wait_ms, 10000, "how long an export waits for a database connection");
ABSL_FLAG(int, shutdown_grace_s, 30,
          "on SIGTERM/SIGINT, seconds running exports get to finish before they are cancelled");
ABSL_FLAG(std::string, port_file, "", "if set, the bound port is written to this file");
ABSL_FLAG(std::string, tls_cert, "",
          "PEM file with the server's certificate chain; with --tls_key turns TLS on. Without "
          "any --tls_* flag the server listens in plaintext");
ABSL_FLAG(std::string, tls_key, "", "PEM file with the private key of --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM file of the CA that signs client certificates; when given, every client must "
          "present one (mutual TLS)");
ABSL_FLAG(int, health_probe_interval_ms, 2000,
          "how often the database is probed; grpc.health.v1 says NOT_SERVING while it is down");
ABSL_FLAG(int, max_connection_age_s, 0,
          "seconds after which a client connection is asked to go away (its calls finish), so "
          "that clients re-resolve DNS and find new replicas; 0: never");
ABSL_FLAG(std::string, metrics_listen, "",
          "host:port serving Prometheus metrics at /metrics (e.g. 0.0.0.0:9464); empty: none");

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Streams DHIS2 data values from PostgreSQL over gRPC.\n"
      "Usage: dvexport-server --listen 0.0.0.0:50051 --pg \"host=... dbname=dhis2 user=...\"\n"
      "Plaintext unless --tls_cert and --tls_key are given (add --tls_client_ca for mutual TLS).");
  absl::ParseCommandLine(argc, argv);

  // Signals are taken by a dedicated thread, so block them everywhere else.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  int chunk_kib = absl::GetFlag(FLAGS_chunk_kib);
  if (chunk_kib < 16 || chunk_kib > 4096) {
    std::fprintf(stderr, "dvexport-server: --chunk_kib must be between 16 and 4096\n");
    return 2;
  }
  dvexport::server::ServerOptions options;
  options.listen = absl::GetFlag(FLAGS_listen);
  options.conninfo = absl::GetFlag(FLAGS_pg);
  options.pool_size = absl::GetFlag(FLAGS_pool_size);
  options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  options.tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca);
  options.health_probe_interval =
      std::chrono::milliseconds(std::max(100, absl::GetFlag(FLAGS_health_probe_interval_ms)));
  options.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  options.max_connection_age = std::chrono::seconds(absl::GetFlag(FLAGS_max_connection_age_s));
  options.service.max_concurrent_exports = absl::GetFlag(FLAGS_max_concurrent_exports);
  options.service.chunk_size = static_cast<size_t>(chunk_kib) * 1024;
  options.service.statement_timeout =
      std::chrono::seconds(absl::GetFlag(FLAGS_statement_timeout_s));
  const int read_streams = absl::GetFlag(FLAGS_read_streams);
  if (read_streams < 1 || read_streams > 16) {
    std::fprintf(stderr, "dvexport-server: --read_streams must be between 1 and 16\n");
    return 2;
  }
  options.service.read_plan.max_streams = read_streams;
  options.service.read_plan.min_rows = absl::GetFlag(FLAGS_parallel_min_rows);
  options.service.connection_wait =
      std::chrono::milliseconds(absl::GetFlag(FLAGS_connection_wait_ms));

  auto server = dvexport::server::ExportServer::Start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "dvexport-server: %s\n", server.status().ToString().c_str());
    return 1;
  }
  std::fprintf(stderr,
               "{\"event\":\"started\",\"listen\":\"%s\",\"port\":%d,\"metrics_port\":%d}\n",
               options.listen.c_str(), (*server)->port(), (*server)->metrics_port());
  std::string port_file = absl::GetFlag(FLAGS_port_file);
  if (!port_file.empty()) {
    std::string tmp = port_file + ".tmp";
    std::ofstream(tmp) << (*server)->port() << "\n";
    std::rename(tmp.c_str(), port_file.c_str());
  }

  std::thread signal_thread([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    std::fprintf(stderr, "{\"event\":\"shutdown\",\"signal\":%d}\n", signal);
    (*server)->Shutdown(std::chrono::system_clock::now() +
                        std::chrono::seconds(absl::GetFlag(FLAGS_shutdown_grace_s)));
  });
  (*server)->Wait();
  signal_thread.join();
  std::fprintf(stderr, "{\"event\":\"stopped\"}\n");
  return 0;
}
