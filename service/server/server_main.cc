// dvexport-server: streams DHIS2 data values over gRPC.

#include <malloc.h>
#include <pthread.h>
#include <signal.h>
#include <sys/resource.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "service/server/export_server.h"
#include "service/server/library_log.h"
#include "service/server/server_flags.h"

// Defaults and allowed ranges: ServerFlags and ServerOptionsFromFlags (server_flags.h), which
// refuse every value outside the range given in the help text.
ABSL_FLAG(std::string, listen, dvexport::server::ServerFlags().listen,
          "host:port to listen on: a name, an IPv4 address or an [IPv6] address, and a port "
          "from 0 to 65535 (0: any free port)");
ABSL_FLAG(std::string, pg, dvexport::server::ServerFlags().pg,
          "libpq connection string, e.g. \"host=db dbname=dhis2 user=dvexport\" or a "
          "postgresql:// URI; must parse as one. PG* environment variables fill in what it "
          "leaves out");
ABSL_FLAG(std::string, dhis2_version, dvexport::server::ServerFlags().dhis2_version,
          "the DHIS2 version whose behaviour is served, 2.40 to 2.43, whatever the database "
          "shows; empty: the database's flyway_schema_history (else its tables) decides, and a "
          "version outside 2.40 to 2.43 is refused. For a database whose history cannot be read");
ABSL_FLAG(bool, serve_newer_dhis2, dvexport::server::ServerFlags().serve_newer_dhis2,
          "serve a DHIS2 newer than 2.43 as 2.43, with a warning in the log and the metrics, "
          "instead of refusing it; at the operator's risk: its schema and answers may differ");
ABSL_FLAG(int, pool_size, dvexport::server::ServerFlags().pool_size,
          "database connections at most, 1 to 1000, and at least --max_concurrent_exports "
          "(every export holds one)");
ABSL_FLAG(int, max_concurrent_exports, dvexport::server::ServerFlags().max_concurrent_exports,
          "exports (ExportFile, StreamDataValues) running at once, 1 to 1000 and at most "
          "--pool_size; more wait in a queue (--max_queued_exports, --max_queue_wait_ms). "
          "CountDataValues takes no slot");
ABSL_FLAG(int, max_exports_per_user, dvexport::server::ServerFlags().max_exports_per_user,
          "export slots one user (DHIS2 username; the peer's address when not authenticated) "
          "holds at most, 0 to --max_concurrent_exports; 0: max(1, --max_concurrent_exports - 1), "
          "so that one user never holds every slot");
ABSL_FLAG(int, max_queued_exports, dvexport::server::ServerFlags().max_queued_exports,
          "exports that may wait for a slot, 0 to 10000 (each user's first come first served, "
          "the users in turn); one more is refused with RESOURCE_EXHAUSTED at once. 0: no queue");
ABSL_FLAG(int, max_queued_exports_per_user,
          dvexport::server::ServerFlags().max_queued_exports_per_user,
          "exports of one user that may wait for a slot, 0 to --max_queued_exports; one more is "
          "refused with RESOURCE_EXHAUSTED at once, so that a burst of one user leaves room in "
          "the queue for others. 0: max(1, --max_queued_exports / 2)");
ABSL_FLAG(int, max_queue_wait_ms, dvexport::server::ServerFlags().max_queue_wait_ms,
          "how long an export waits for a slot at most, 0 to 600000 (10 minutes), never past its "
          "deadline; then RESOURCE_EXHAUSTED (DEADLINE_EXCEEDED if its deadline came first). 0: "
          "no queue");
ABSL_FLAG(int, chunk_kib, dvexport::server::ServerFlags().chunk_kib,
          "KiB of rendered output per streamed chunk, 16 to 4096");
ABSL_FLAG(int, statement_timeout_s, dvexport::server::ServerFlags().statement_timeout_s,
          "PostgreSQL statement_timeout for exports, 0 to 86400 (a day); 0: the role's or "
          "database's setting");
ABSL_FLAG(int, read_streams, dvexport::server::ServerFlags().read_streams,
          "database connections (COPYs of slices of the table, one snapshot) a large export "
          "reads with at once, 1 to 16, when the pool can spare them; 1: one COPY per export. "
          "A DHIS2 2.43 export sorted by dvexport reads on one connection, and from 2 on reads "
          "its next slice on a thread of its own while one is written");
ABSL_FLAG(int64_t, parallel_min_rows, dvexport::server::ServerFlags().parallel_min_rows,
          "the planner's row estimate from which an export is read with --read_streams, 0 to "
          "1000000000000");
ABSL_FLAG(int, connection_wait_ms, dvexport::server::ServerFlags().connection_wait_ms,
          "how long an export waits for a database connection, 0 to 600000 (10 minutes); 0: "
          "not at all");
ABSL_FLAG(int, shutdown_grace_s, dvexport::server::ServerFlags().shutdown_grace_s,
          "on SIGTERM/SIGINT, seconds running exports get to finish before they are cancelled, 0 "
          "to 86400 (a day)");
ABSL_FLAG(std::string, port_file, dvexport::server::ServerFlags().port_file,
          "if set, the bound port is written to this file (a file name, not a directory); the "
          "server exits 1 when it cannot write it");
ABSL_FLAG(std::string, tls_cert, dvexport::server::ServerFlags().tls_cert,
          "PEM file with the server's certificate chain; with --tls_key (both or neither) turns "
          "TLS on. Without any --tls_* flag the server listens in plaintext");
ABSL_FLAG(std::string, tls_key, dvexport::server::ServerFlags().tls_key,
          "PEM file with the private key of --tls_cert; needs --tls_cert");
ABSL_FLAG(std::string, tls_client_ca, dvexport::server::ServerFlags().tls_client_ca,
          "PEM file of the CA that signs client certificates; needs --tls_cert and --tls_key. "
          "When given, every client must present one (mutual TLS)");
ABSL_FLAG(int, health_probe_interval_ms, dvexport::server::ServerFlags().health_probe_interval_ms,
          "how often the database is probed, 100 to 600000 (10 minutes); grpc.health.v1 says "
          "NOT_SERVING while it is down");
ABSL_FLAG(int, max_connection_age_s, dvexport::server::ServerFlags().max_connection_age_s,
          "seconds after which a client connection is asked to go away (its calls finish), so "
          "that clients re-resolve DNS and find new replicas, 0 to 2147483 (gRPC takes it in int "
          "milliseconds: about 24.8 days); 0: never");
ABSL_FLAG(int, stall_timeout_s, dvexport::server::ServerFlags().stall_timeout_s,
          "an export whose client reads nothing for this many seconds is ended "
          "(DEADLINE_EXCEEDED) and its transaction, snapshot and connections released, 1 to "
          "86400 (a day). The seconds count from the time the client could have read what its "
          "transport already took at --stall_min_rate_kib_s (16 MiB of it at most): a client "
          "that reads that fast is never ended, whatever its receive window; one that reads "
          "nothing holds its export for at most this timeout plus 16 MiB at that rate");
ABSL_FLAG(int, stall_timeout_contended_s, dvexport::server::ServerFlags().stall_timeout_contended_s,
          "the stall timeout while an export of another user waits for a slot, 1 to 86400 (a "
          "day; above --stall_timeout_s it changes nothing): the client's credit at "
          "--stall_min_rate_kib_s counts for at most as long, so that a client that reads "
          "nothing gives up its slot at most twice this long after its last progress");
ABSL_FLAG(int, stall_min_rate_kib_s, dvexport::server::ServerFlags().stall_min_rate_kib_s,
          "KiB per second: a client that reads at least this fast is never ended by "
          "--stall_timeout_s, 1 to 1048576 (1 GiB/s); higher values end clients that stop "
          "reading sooner (docs/RELIABILITY.md)");
ABSL_FLAG(int, max_zstd_level, dvexport::server::ServerFlags().max_zstd_level,
          "the highest zstd compression_level a request may ask, 1 to 19; higher levels are "
          "refused (INVALID_ARGUMENT). Up to 9 zstd is at least as fast as gzip level 9; 16-19 "
          "compress at a few MB/s, so that one request holds an export slot and a core for "
          "minutes");
ABSL_FLAG(std::string, metrics_listen, dvexport::server::ServerFlags().metrics_listen,
          "host:port serving Prometheus metrics at /metrics (e.g. 0.0.0.0:9464), of the same form "
          "as --listen and not on its port; empty: none");
ABSL_FLAG(int, handshake_timeout_ms, dvexport::server::ServerFlags().handshake_timeout_ms,
          "a client connection that has not finished its TLS handshake and sent its HTTP/2 "
          "preface and SETTINGS this many milliseconds after it was accepted is closed, 100 to "
          "120000 (gRPC's own default, 2 minutes)");
ABSL_FLAG(int, listener_probe_interval_ms,
          dvexport::server::ServerFlags().listener_probe_interval_ms,
          "how often the server probes its own gRPC port over loopback (a new connection that "
          "must get the server's first HTTP/2 or TLS bytes), 100 to 600000 (10 minutes); after 3 "
          "failures in a row (not counting a server that is full) health turns NOT_SERVING and "
          "the server shuts down as on SIGTERM and exits 1");

ABSL_FLAG(std::string, auth, dvexport::server::ServerFlags().auth,
          "how calls are authenticated: dhis2 (every call but health needs a DHIS2 identity: "
          "authorization: ApiToken <personal access token> or Basic <user:password>, or a client "
          "certificate listed in --client_identities) or none (no identity asked: whoever "
          "reaches the port reads everything; for a trusted network only, logged as a warning "
          "and shown as dvexport_auth_mode{mode=\"none\"} in /metrics)");
ABSL_FLAG(int, auth_cache_s, dvexport::server::ServerFlags().auth_cache_s,
          "seconds a verified identity is reused without asking the database (and without "
          "bcrypt), 0 to 3600; a token revoked, a user disabled or a sharing changed in DHIS2 "
          "takes effect within this time. 0: every call is verified");
ABSL_FLAG(int, auth_workers, dvexport::server::ServerFlags().auth_workers,
          "threads that verify credentials (database lookups, bcrypt) at a lower CPU priority "
          "than exports, 1 to 16; each holds a pool connection while it verifies");
ABSL_FLAG(int, auth_max_pending, dvexport::server::ServerFlags().auth_max_pending,
          "verifications of distinct credentials that may wait for a worker, 1 to 100000; one "
          "more is refused with RESOURCE_EXHAUSTED");
ABSL_FLAG(int, auth_max_failures_per_ip, dvexport::server::ServerFlags().auth_max_failures_per_ip,
          "failed authentication attempts a client address (an IPv4 address, an IPv6 /64) may "
          "make in a burst, 1 to 100000, "
          "earned back evenly over --auth_failure_window_s; beyond it the peer's tokens and "
          "passwords are refused (UNAUTHENTICATED, saying when to retry) without a database "
          "lookup, except credentials still in the cache");
ABSL_FLAG(int, auth_max_failures_per_user,
          dvexport::server::ServerFlags().auth_max_failures_per_user,
          "failed password attempts for one username in a burst, from any address, 1 to 100000, "
          "earned back evenly over --auth_failure_window_s (whether or not the user exists)");
ABSL_FLAG(int, auth_failure_window_s, dvexport::server::ServerFlags().auth_failure_window_s,
          "seconds over which the failed-attempt limits refill completely, 1 to 86400 (a day)");
ABSL_FLAG(std::string, http_listen, dvexport::server::ServerFlags().http_listen,
          "host:port of the HTTP door: DHIS2's GET /api/dataValueSets (and /api/28../42/...) for "
          "unchanged DHIS2 clients, on the same export slots and identities; HTTPS with --tls_cert "
          "and --tls_key; port 0 picks a free port; empty: no HTTP door");
ABSL_FLAG(std::string, http_port_file, dvexport::server::ServerFlags().http_port_file,
          "write the HTTP door's port to this file once it listens (needs --http_listen)");
ABSL_FLAG(int, http_threads, dvexport::server::ServerFlags().http_threads,
          "threads of the HTTP door's event loop (1-64); exports run on their own threads");
ABSL_FLAG(int, http_max_connections, dvexport::server::ServerFlags().http_max_connections,
          "HTTP connections open at most (1-1000000); a new one beyond is closed at once");
ABSL_FLAG(int, http_max_connections_per_peer,
          dvexport::server::ServerFlags().http_max_connections_per_peer,
          "HTTP connections of one client address at most (1-1000000); beyond: closed at once");
ABSL_FLAG(int, http_header_timeout_ms, dvexport::server::ServerFlags().http_header_timeout_ms,
          "the whole request head (and a TLS handshake) must arrive within this (100-600000 ms)");
ABSL_FLAG(int, http_idle_timeout_s, dvexport::server::ServerFlags().http_idle_timeout_s,
          "a keep-alive connection idle this long between requests is closed (1-3600 s)");
ABSL_FLAG(int, http_max_pending_heads, dvexport::server::ServerFlags().http_max_pending_heads,
          "HTTP connections waiting for a request's head at most (0: half of "
          "--http_max_connections; below it); one more closes the one waiting longest");
ABSL_FLAG(int, http_max_header_kib, dvexport::server::ServerFlags().http_max_header_kib,
          "request line and headers, and a chunked body's trailer, at most (1-63 KiB); beyond: "
          "431 (400 for a trailer) and the connection closed");
ABSL_FLAG(int, http_max_header_fields, dvexport::server::ServerFlags().http_max_header_fields,
          "header and trailer fields of a request at most (1-1000); beyond: 431 and the "
          "connection closed");
ABSL_FLAG(int, http_max_url_kib, dvexport::server::ServerFlags().http_max_url_kib,
          "request target at most (1-63 KiB, at most --http_max_header_kib); beyond: 414");
ABSL_FLAG(std::string, http_trusted_proxies, dvexport::server::ServerFlags().http_trusted_proxies,
          "comma-separated addresses or CIDRs of reverse proxies whose X-Forwarded-For names the "
          "client (its address for a token's IP list, the failed-attempt limits and the call "
          "log); empty: none");
ABSL_FLAG(int, http_trusted_proxy_hops, dvexport::server::ServerFlags().http_trusted_proxy_hops,
          "trusted proxies one behind the other in front of the HTTP door (1-10): from a trusted "
          "peer, the client is the rightmost X-Forwarded-For entry, and further left only "
          "through trusted proxies, at most this many entries");
ABSL_FLAG(std::string, change_publication, dvexport::server::ServerFlags().change_publication,
          "the PostgreSQL publication change streams read (docs/SYNC.md), an identifier "
          "[a-z_][a-z0-9_]* of at most 63 characters; it must publish public.datavalue, else "
          "change tokens are snapshot tokens");
ABSL_FLAG(int, change_stream_poll_s, dvexport::server::ServerFlags().change_stream_poll_s,
          "seconds between two looks at the database's change streams (their retained WAL, "
          "idle time and loss, in /metrics, and the kind of change token, in the log), 0 to "
          "86400 (a day); 0: never");
ABSL_FLAG(int, change_stream_warn_wal_mb, dvexport::server::ServerFlags().change_stream_warn_wal_mb,
          "a change stream that keeps more than this many MiB of WAL from being removed is "
          "logged as a warning, 1 to 1048576 (1 TiB)");
ABSL_FLAG(std::string, client_identities, dvexport::server::ServerFlags().client_identities,
          "file of lines \"<subject DN or URI SAN> <username>\" ('#' comments): a client "
          "certificate verified against --tls_client_ca whose subject (as \"CN=...,O=...\") or "
          "URI SAN is listed stands for that DHIS2 user; needs --tls_client_ca and --auth dhis2. "
          "Without it, or for a certificate not listed, a token or password is needed");

namespace {

dvexport::server::ServerFlags FlagValues() {
  dvexport::server::ServerFlags flags;
  flags.listen = absl::GetFlag(FLAGS_listen);
  flags.pg = absl::GetFlag(FLAGS_pg);
  flags.dhis2_version = absl::GetFlag(FLAGS_dhis2_version);
  flags.serve_newer_dhis2 = absl::GetFlag(FLAGS_serve_newer_dhis2);
  flags.pool_size = absl::GetFlag(FLAGS_pool_size);
  flags.max_concurrent_exports = absl::GetFlag(FLAGS_max_concurrent_exports);
  flags.max_exports_per_user = absl::GetFlag(FLAGS_max_exports_per_user);
  flags.max_queued_exports = absl::GetFlag(FLAGS_max_queued_exports);
  flags.max_queued_exports_per_user = absl::GetFlag(FLAGS_max_queued_exports_per_user);
  flags.max_queue_wait_ms = absl::GetFlag(FLAGS_max_queue_wait_ms);
  flags.chunk_kib = absl::GetFlag(FLAGS_chunk_kib);
  flags.statement_timeout_s = absl::GetFlag(FLAGS_statement_timeout_s);
  flags.read_streams = absl::GetFlag(FLAGS_read_streams);
  flags.parallel_min_rows = absl::GetFlag(FLAGS_parallel_min_rows);
  flags.connection_wait_ms = absl::GetFlag(FLAGS_connection_wait_ms);
  flags.shutdown_grace_s = absl::GetFlag(FLAGS_shutdown_grace_s);
  flags.port_file = absl::GetFlag(FLAGS_port_file);
  flags.tls_cert = absl::GetFlag(FLAGS_tls_cert);
  flags.tls_key = absl::GetFlag(FLAGS_tls_key);
  flags.tls_client_ca = absl::GetFlag(FLAGS_tls_client_ca);
  flags.health_probe_interval_ms = absl::GetFlag(FLAGS_health_probe_interval_ms);
  flags.max_connection_age_s = absl::GetFlag(FLAGS_max_connection_age_s);
  flags.stall_timeout_s = absl::GetFlag(FLAGS_stall_timeout_s);
  flags.stall_timeout_contended_s = absl::GetFlag(FLAGS_stall_timeout_contended_s);
  flags.max_zstd_level = absl::GetFlag(FLAGS_max_zstd_level);
  flags.stall_min_rate_kib_s = absl::GetFlag(FLAGS_stall_min_rate_kib_s);
  flags.metrics_listen = absl::GetFlag(FLAGS_metrics_listen);
  flags.handshake_timeout_ms = absl::GetFlag(FLAGS_handshake_timeout_ms);
  flags.listener_probe_interval_ms = absl::GetFlag(FLAGS_listener_probe_interval_ms);
  flags.auth = absl::GetFlag(FLAGS_auth);
  flags.auth_cache_s = absl::GetFlag(FLAGS_auth_cache_s);
  flags.auth_workers = absl::GetFlag(FLAGS_auth_workers);
  flags.auth_max_pending = absl::GetFlag(FLAGS_auth_max_pending);
  flags.auth_max_failures_per_ip = absl::GetFlag(FLAGS_auth_max_failures_per_ip);
  flags.auth_max_failures_per_user = absl::GetFlag(FLAGS_auth_max_failures_per_user);
  flags.auth_failure_window_s = absl::GetFlag(FLAGS_auth_failure_window_s);
  flags.client_identities = absl::GetFlag(FLAGS_client_identities);
  flags.http_listen = absl::GetFlag(FLAGS_http_listen);
  flags.http_port_file = absl::GetFlag(FLAGS_http_port_file);
  flags.http_threads = absl::GetFlag(FLAGS_http_threads);
  flags.http_max_connections = absl::GetFlag(FLAGS_http_max_connections);
  flags.http_max_connections_per_peer = absl::GetFlag(FLAGS_http_max_connections_per_peer);
  flags.http_header_timeout_ms = absl::GetFlag(FLAGS_http_header_timeout_ms);
  flags.http_idle_timeout_s = absl::GetFlag(FLAGS_http_idle_timeout_s);
  flags.http_max_header_kib = absl::GetFlag(FLAGS_http_max_header_kib);
  flags.http_max_url_kib = absl::GetFlag(FLAGS_http_max_url_kib);
  flags.http_trusted_proxies = absl::GetFlag(FLAGS_http_trusted_proxies);
  flags.http_trusted_proxy_hops = absl::GetFlag(FLAGS_http_trusted_proxy_hops);
  flags.http_max_pending_heads = absl::GetFlag(FLAGS_http_max_pending_heads);
  flags.http_max_header_fields = absl::GetFlag(FLAGS_http_max_header_fields);
  flags.change_publication = absl::GetFlag(FLAGS_change_publication);
  flags.change_stream_poll_s = absl::GetFlag(FLAGS_change_stream_poll_s);
  flags.change_stream_warn_wal_mb = absl::GetFlag(FLAGS_change_stream_warn_wal_mb);
  return flags;
}

// Writes "port" to "path" through a temporary file, so that a reader never
// sees a partial number; false with errno set when that fails.
bool WritePortFile(const std::string& path, int port) {
  const std::string tmp = path + ".tmp";
  std::FILE* file = std::fopen(tmp.c_str(), "w");
  if (file == nullptr) return false;
  const bool written = std::fprintf(file, "%d\n", port) > 0;
  if (std::fclose(file) != 0 || !written) return false;
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

// Sets --help up to list the flags of this file (absl's default looks for a file named after the
// program, dvexport-server.cc) and parses the command line; false, after saying why, when it holds
// an argument that is not a flag.
bool ParseFlags(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Streams DHIS2 data values from PostgreSQL over gRPC.\n"
      "Usage: dvexport-server --listen 0.0.0.0:50051 --pg \"host=... dbname=dhis2 user=...\"\n"
      "Plaintext unless --tls_cert and --tls_key are given (add --tls_client_ca for mutual TLS).");
  absl::FlagsUsageConfig usage;
  usage.contains_helpshort_flags = [](absl::string_view file) {
    return absl::EndsWith(file, "server_main.cc");
  };
  usage.contains_help_flags = usage.contains_helpshort_flags;
  absl::SetFlagsUsageConfig(usage);
  std::vector<char*> arguments = absl::ParseCommandLine(argc, argv);
  if (arguments.size() > 1) {
    std::fprintf(stderr, "dvexport-server: unexpected argument \"%s\" (settings are --flags)\n",
                 arguments[1]);
    return false;
  }
  return true;
}

// Writes --http_port_file and --port_file, where given; false, after saying why, when one cannot
// be written.
bool WritePortFiles(const dvexport::server::ServerFlags& flags,
                    const dvexport::server::ExportServer& server) {
  if (!flags.http_port_file.empty() && !WritePortFile(flags.http_port_file, server.http_port())) {
    std::fprintf(stderr, "dvexport-server: --http_port_file: cannot write %s: %s\n",
                 flags.http_port_file.c_str(), std::strerror(errno));
    return false;
  }
  // The gRPC port file last: once it exists, so does the HTTP one.
  if (!flags.port_file.empty() && !WritePortFile(flags.port_file, server.port())) {
    std::fprintf(stderr, "dvexport-server: --port_file: cannot write %s: %s\n",
                 flags.port_file.c_str(), std::strerror(errno));
    return false;
  }
  return true;
}

// Every chunk of every export is a fresh allocation of --chunk_kib (256 KiB) plus framing,
// freed by gRPC on another thread once sent. With glibc's defaults such blocks are mmap()ed, or
// taken from an arena whose top is trimmed again when they are freed: each chunk then costs 64+
// page faults and the kernel zeroing its pages (~35,000 faults and 10-20% of the server's CPU
// per 930,000-value JSON export, docs/PERFORMANCE.md). Fixed thresholds keep blocks of up to
// 2 chunks in the heap and freed memory in the arenas (it is reused by the next chunk; what an
// export holds is bounded, so what the arenas keep is too). What they keep is bounded further by
// one arena per core instead of glibc's eight: each export's reader threads would otherwise take
// fresh arenas and each keep its own few MiB (peak RSS after eight sl exports of every kind:
// 37 MiB with glibc's arena count, 31 MiB with 2 on 2 cores; the build before keeping chunks in
// the heap: 31 MiB). More arenas than cores would only spare lock waits of threads that cannot
// all run at once.
void KeepChunksInTheHeap(size_t chunk_size) {
  constexpr size_t kMaxMmapThreshold = 32 << 20;  // glibc's upper bound on 64-bit
  const size_t threshold = std::min(kMaxMmapThreshold, std::max<size_t>(4 << 20, 2 * chunk_size));
  mallopt(M_MMAP_THRESHOLD, static_cast<int>(threshold));
  mallopt(M_TRIM_THRESHOLD, 64 << 20);
  mallopt(M_ARENA_MAX, static_cast<int>(std::max(2u, std::thread::hardware_concurrency())));
}

// "limit" as a JSON value: a number, or "unlimited".
std::string LimitJson(rlim_t limit) {
  return limit == RLIM_INFINITY ? "\"unlimited\"" : std::to_string(limit);
}

// Every client connection takes a file descriptor: raises the soft RLIMIT_NOFILE (often 1024) to
// the hard limit, which an unprivileged process may do, and logs what the limit is now.
void RaiseDescriptorLimit() {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return;
  const rlim_t before = limit.rlim_cur;
  std::string error;
  if (limit.rlim_cur != limit.rlim_max) {
    rlimit raised = limit;
    raised.rlim_cur = limit.rlim_max;
    if (setrlimit(RLIMIT_NOFILE, &raised) == 0) {
      limit = raised;
    } else {
      error = absl::StrCat(",\"raise_failed\":\"", std::strerror(errno), "\"");
    }
  }
  std::fprintf(stderr, "{\"event\":\"descriptor_limit\",\"soft\":%s,\"hard\":%s,\"was\":%s%s}\n",
               LimitJson(limit.rlim_cur).c_str(), LimitJson(limit.rlim_max).c_str(),
               LimitJson(before).c_str(), error.c_str());
}

}  // namespace

int main(int argc, char** argv) {
  // Before anything can log: the server's stderr holds JSON lines only.
  dvexport::server::RouteLibraryLogsToJson();
  if (!ParseFlags(argc, argv)) return 2;
  const dvexport::server::ServerFlags flags = FlagValues();
  absl::StatusOr<dvexport::server::ServerOptions> options =
      dvexport::server::ServerOptionsFromFlags(flags);
  if (!options.ok()) {
    std::fprintf(stderr, "dvexport-server: %s\n", std::string(options.status().message()).c_str());
    return 2;
  }

  KeepChunksInTheHeap(options->service.chunk_size);
  RaiseDescriptorLimit();

  // Signals are taken by a dedicated thread, so block them everywhere else.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGINT);
  sigaddset(&signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  // A lost listener shuts the server down as SIGTERM does (the signal thread below), then main
  // exits 1.
  options->on_listener_lost = [] { kill(getpid(), SIGTERM); };
  auto server = dvexport::server::ExportServer::Start(*options);
  if (!server.ok()) {
    std::fprintf(stderr, "dvexport-server: %s\n", server.status().ToString().c_str());
    return 1;
  }
  std::fprintf(stderr,
               "{\"event\":\"started\",\"listen\":\"%s\",\"port\":%d,\"metrics_port\":%d,"
               "\"http_port\":%d,\"descriptor_ceiling\":%d}\n",
               options->listen.c_str(), (*server)->port(), (*server)->metrics_port(),
               (*server)->http_port(), (*server)->descriptor_ceiling());
  if (options->service.auth == dvexport::pipeline::AuthMode::kNone) {
    std::fprintf(stderr,
                 "{\"event\":\"warning\",\"message\":\"--auth none: calls are not "
                 "authenticated; whoever reaches the port reads every data value\"}\n");
  }
  if (!WritePortFiles(flags, **server)) return 1;

  std::thread signal_thread([&] {
    int signal = 0;
    sigwait(&signals, &signal);
    if ((*server)->listener_lost()) {
      std::fprintf(stderr, "{\"event\":\"shutdown\",\"reason\":\"listener_lost\"}\n");
    } else {
      std::fprintf(stderr, "{\"event\":\"shutdown\",\"signal\":%d}\n", signal);
    }
    (*server)->Shutdown(std::chrono::system_clock::now() +
                        std::chrono::seconds(flags.shutdown_grace_s));
  });
  (*server)->Wait();
  signal_thread.join();
  const int exit_code = (*server)->listener_lost() ? 1 : 0;
  std::fprintf(stderr, "{\"event\":\"stopped\",\"exit_code\":%d}\n", exit_code);
  return exit_code;
}
