#include "service/server/server_flags.h"

#include <algorithm>
#include <chrono>
#include <cstddef>
#include <initializer_list>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "service/db/libpq_gaps.h"
#include "service/http/trusted_proxies.h"

namespace dvexport::server {
namespace {

// --http_trusted_proxies: comma-separated entries, surrounding whitespace dropped.
std::vector<std::string> TrustedProxyList(absl::string_view flag) {
  std::vector<std::string> entries;
  for (absl::string_view entry : absl::StrSplit(flag, ',', absl::SkipWhitespace())) {
    entries.emplace_back(absl::StripAsciiWhitespace(entry));
  }
  return entries;
}

// An integer flag and the values it may take.
struct IntegerFlag {
  absl::string_view name;
  int64_t value;
  int64_t min;
  int64_t max;
  // Why the range is what it is, when that is not obvious; empty: nothing.
  absl::string_view why;
};

// The first of "flags" out of its range, naming the flag, its value and the range; OK if none.
absl::Status CheckRanges(std::initializer_list<IntegerFlag> flags) {
  for (const IntegerFlag& flag : flags) {
    if (flag.value >= flag.min && flag.value <= flag.max) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "--", flag.name, ": ", flag.value, " is not between ", flag.min, " and ", flag.max,
        flag.why.empty() ? "" : " (", flag.why, flag.why.empty() ? "" : ")"));
  }
  return absl::OkStatus();
}

struct HostPort {
  absl::string_view host;
  int port = 0;
};

// "address" as host:port: the host a name, an IPv4 address or an IPv6 address
// in brackets, the port a decimal number from 0 to 65535; nullopt when it is
// not of that form.
std::optional<HostPort> ParseHostPort(absl::string_view address) {
  HostPort parsed;
  size_t colon = 0;
  if (absl::StartsWith(address, "[")) {
    const size_t close = address.find(']');
    if (close == absl::string_view::npos) return std::nullopt;
    const absl::string_view inside = address.substr(1, close - 1);
    if (inside.find(':') == absl::string_view::npos) return std::nullopt;
    for (char c : inside) {
      if (!absl::ascii_isxdigit(static_cast<unsigned char>(c)) && c != ':' && c != '.') {
        return std::nullopt;
      }
    }
    parsed.host = address.substr(0, close + 1);
    colon = close + 1;
    if (colon >= address.size() || address[colon] != ':') return std::nullopt;
  } else {
    colon = address.find(':');
    if (colon == absl::string_view::npos || colon == 0) return std::nullopt;
    parsed.host = address.substr(0, colon);
    for (char c : parsed.host) {
      if (!absl::ascii_isalnum(static_cast<unsigned char>(c)) && c != '.' && c != '-' && c != '_') {
        return std::nullopt;
      }
    }
  }
  const absl::string_view port = address.substr(colon + 1);
  if (port.empty() || port.size() > 5) return std::nullopt;
  for (char c : port) {
    if (!absl::ascii_isdigit(static_cast<unsigned char>(c))) return std::nullopt;
  }
  if (!absl::SimpleAtoi(port, &parsed.port) || parsed.port > 65535) return std::nullopt;
  return parsed;
}

absl::Status NotHostPort(absl::string_view flag, absl::string_view value) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, ": \"", value,
                   "\" is not host:port (a name, an IPv4 address or an [IPv6] address, a colon, "
                   "a port between 0 and 65535; e.g. 0.0.0.0:50051 or [::]:50051)"));
}

// 0.0.0.0 and [::] listen on every address, so they share their port with any
// other host.
bool IsWildcardHost(absl::string_view host) { return host == "0.0.0.0" || host == "[::]"; }

// Whether "a" and "b" would listen on the same port (port 0 picks a free one).
bool SharePort(const HostPort& a, const HostPort& b) {
  return a.port != 0 && a.port == b.port &&
         (a.host == b.host || IsWildcardHost(a.host) || IsWildcardHost(b.host));
}

absl::Status NamesADirectory(absl::string_view flag, absl::string_view value) {
  return absl::InvalidArgumentError(
      absl::StrCat("--", flag, ": \"", value, "\" names a directory; give a file name"));
}

// What of the TLS flags is given without what it needs.
absl::Status CheckTlsFlags(const ServerFlags& flags) {
  if (!flags.tls_cert.empty() && flags.tls_key.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls_cert \"", flags.tls_cert, "\" needs --tls_key: give both (TLS) or neither"));
  }
  if (!flags.tls_key.empty() && flags.tls_cert.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--tls_key \"", flags.tls_key, "\" needs --tls_cert: give both (TLS) or neither"));
  }
  if (!flags.tls_client_ca.empty() && flags.tls_cert.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--tls_client_ca \"", flags.tls_client_ca,
                     "\" needs --tls_cert and --tls_key: mutual TLS is TLS first"));
  }
  return absl::OkStatus();
}

// --change_publication: an unquoted PostgreSQL identifier as PostgreSQL folds it (lower case),
// so that the name the server asks pg_publication for is the one CREATE PUBLICATION made.
absl::Status CheckPublicationName(absl::string_view name) {
  // NAMEDATALEN - 1: PostgreSQL truncates longer identifiers.
  constexpr size_t kMaxIdentifier = 63;
  bool valid = !name.empty() && name.size() <= kMaxIdentifier &&
               (absl::ascii_islower(static_cast<unsigned char>(name[0])) || name[0] == '_');
  for (char c : name) {
    valid = valid && (absl::ascii_islower(static_cast<unsigned char>(c)) ||
                      absl::ascii_isdigit(static_cast<unsigned char>(c)) || c == '_');
  }
  if (valid) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "--change_publication: \"", name,
      "\" is not a PostgreSQL publication name: [a-z_][a-z0-9_]*, at most 63 characters"));
}

// The process's own options: where the gRPC door listens and how it is watched, the database
// and its pool, TLS, the metrics port, --client_identities' file; and main's --shutdown_grace_s
// and --port_file.
absl::StatusOr<ServerOptions> ProcessOptionsFromFlags(const ServerFlags& flags) {
  absl::Status ranges = CheckRanges({
      {"pool_size", flags.pool_size, 1, 1000, ""},
      {"shutdown_grace_s", flags.shutdown_grace_s, 0, 86400, "at most a day"},
      {"health_probe_interval_ms", flags.health_probe_interval_ms, 100, 600000,
       "at least 100 ms, at most 10 minutes"},
      {"max_connection_age_s", flags.max_connection_age_s, 0, 2147483,
       "0: never; gRPC takes the age in milliseconds as an int, so at most about 24.8 days"},
      {"handshake_timeout_ms", flags.handshake_timeout_ms, 100, 120000,
       "at most gRPC's own default of 2 minutes"},
      {"listener_probe_interval_ms", flags.listener_probe_interval_ms, 100, 600000,
       "at least 100 ms, at most 10 minutes"},
  });
  if (!ranges.ok()) return ranges;
  const std::optional<HostPort> listen = ParseHostPort(flags.listen);
  if (!listen.has_value()) return NotHostPort("listen", flags.listen);
  std::optional<HostPort> metrics;
  if (!flags.metrics_listen.empty()) {
    metrics = ParseHostPort(flags.metrics_listen);
    if (!metrics.has_value()) return NotHostPort("metrics_listen", flags.metrics_listen);
  }
  absl::Status conninfo = db::CheckConninfo(flags.pg);
  if (!conninfo.ok()) return absl::InvalidArgumentError(absl::StrCat("--pg: ", conninfo.message()));
  if (absl::EndsWith(flags.port_file, "/")) return NamesADirectory("port_file", flags.port_file);
  std::optional<int> dhis2_version;
  if (!flags.dhis2_version.empty()) {
    absl::StatusOr<int> minor = dhis2::ParseServedVersion(flags.dhis2_version);
    if (!minor.ok()) return minor.status();
    dhis2_version = *minor;
  }
  absl::Status tls = CheckTlsFlags(flags);
  if (!tls.ok()) return tls;
  if (metrics.has_value() && SharePort(*metrics, *listen)) {
    return absl::InvalidArgumentError(absl::StrCat("--metrics_listen \"", flags.metrics_listen,
                                                   "\" takes the port of --listen \"", flags.listen,
                                                   "\"; give it a port of its own"));
  }

  ServerOptions options;
  options.listen = flags.listen;
  options.conninfo = flags.pg;
  options.pool_size = flags.pool_size;
  options.dhis2.forced = dhis2_version;
  options.dhis2.serve_newer = flags.serve_newer_dhis2;
  options.tls_cert_file = flags.tls_cert;
  options.tls_key_file = flags.tls_key;
  options.tls_client_ca_file = flags.tls_client_ca;
  options.client_identities_file = flags.client_identities;
  options.health_probe_interval = std::chrono::milliseconds(flags.health_probe_interval_ms);
  options.metrics_listen = flags.metrics_listen;
  options.max_connection_age = std::chrono::seconds(flags.max_connection_age_s);
  options.handshake_timeout = std::chrono::milliseconds(flags.handshake_timeout_ms);
  options.listener_probe_interval = std::chrono::milliseconds(flags.listener_probe_interval_ms);
  return options;
}

// The fair shares of the export slots and the queue (ranges that depend on --max_concurrent_exports
// and --max_queued_exports, checked first), into "*options".
absl::Status FairSharesFromFlags(const ServerFlags& flags, pipeline::PipelineOptions* options) {
  absl::Status ranges = CheckRanges({
      {"max_exports_per_user", flags.max_exports_per_user, 0, flags.max_concurrent_exports,
       "0: max(1, --max_concurrent_exports - 1); at most --max_concurrent_exports"},
      {"max_queued_exports_per_user", flags.max_queued_exports_per_user, 0,
       flags.max_queued_exports,
       "0: max(1, --max_queued_exports / 2); at most --max_queued_exports"},
  });
  if (!ranges.ok()) return ranges;
  // One user never holds every slot (unless there is only one), so that another user's export
  // finds one free or waits for the next, never for a whole export of the first user's.
  options->max_exports_per_user = flags.max_exports_per_user != 0
                                      ? flags.max_exports_per_user
                                      : std::max(1, flags.max_concurrent_exports - 1);
  // Round robin orders the waiters but cannot help an export refused at once because a burst of
  // one user filled the queue: one user takes half the queue at most by default.
  options->max_queued_exports_per_user = flags.max_queued_exports_per_user != 0
                                             ? flags.max_queued_exports_per_user
                                             : std::max(1, flags.max_queued_exports / 2);
  return absl::OkStatus();
}

// The pipeline's options, authentication aside: slots, the queue and the fair shares, chunks,
// reads, stalls, compression, change streams.
absl::StatusOr<pipeline::PipelineOptions> PipelineOptionsFromFlags(const ServerFlags& flags) {
  absl::Status ranges = CheckRanges({
      {"max_concurrent_exports", flags.max_concurrent_exports, 1, 1000, ""},
      {"max_queued_exports", flags.max_queued_exports, 0, 10000, "0: refuse at once"},
      {"max_queue_wait_ms", flags.max_queue_wait_ms, 0, 600000,
       "0: refuse at once; at most 10 minutes"},
      {"chunk_kib", flags.chunk_kib, 16, 4096, ""},
      {"statement_timeout_s", flags.statement_timeout_s, 0, 86400,
       "0: the role's or database's setting; at most a day"},
      {"read_streams", flags.read_streams, 1, 16, ""},
      {"parallel_min_rows", flags.parallel_min_rows, 0, 1000000000000, ""},
      {"connection_wait_ms", flags.connection_wait_ms, 0, 600000, "0: no wait; at most 10 minutes"},
      {"stall_timeout_s", flags.stall_timeout_s, 1, 86400, "at most a day"},
      {"stall_timeout_contended_s", flags.stall_timeout_contended_s, 1, 86400,
       "at most a day; above --stall_timeout_s it changes nothing"},
      {"max_zstd_level", flags.max_zstd_level, 1, 19, "zstd's levels; 20-22 are never offered"},
      {"stall_min_rate_kib_s", flags.stall_min_rate_kib_s, 1, 1048576, "at most 1 GiB/s"},
      {"change_stream_poll_s", flags.change_stream_poll_s, 0, 86400,
       "0: the change streams are not watched; at most a day"},
      {"change_stream_warn_wal_mb", flags.change_stream_warn_wal_mb, 1, 1048576, "at most 1 TiB"},
  });
  if (!ranges.ok()) return ranges;
  pipeline::PipelineOptions options;
  absl::Status shares = FairSharesFromFlags(flags, &options);
  if (!shares.ok()) return shares;
  absl::Status publication = CheckPublicationName(flags.change_publication);
  if (!publication.ok()) return publication;

  options.max_concurrent_exports = flags.max_concurrent_exports;
  options.max_queued_exports = flags.max_queued_exports;
  options.max_queue_wait = std::chrono::milliseconds(flags.max_queue_wait_ms);
  options.chunk_size = static_cast<size_t>(flags.chunk_kib) * 1024;
  options.statement_timeout = std::chrono::seconds(flags.statement_timeout_s);
  options.read_plan.max_streams = flags.read_streams;
  options.read_plan.min_rows = flags.parallel_min_rows;
  options.connection_wait = std::chrono::milliseconds(flags.connection_wait_ms);
  options.stall_timeout = std::chrono::seconds(flags.stall_timeout_s);
  options.stall_timeout_contended = std::chrono::seconds(flags.stall_timeout_contended_s);
  options.max_zstd_level = flags.max_zstd_level;
  options.stall_min_rate = int64_t{flags.stall_min_rate_kib_s} * 1024;
  options.change_publication = flags.change_publication;
  options.change_stream_poll = std::chrono::seconds(flags.change_stream_poll_s);
  options.change_stream_warn_wal_bytes = int64_t{flags.change_stream_warn_wal_mb} << 20;
  return options;
}

// --auth and the authenticator's options, into "*options".
absl::Status AuthenticationFromFlags(const ServerFlags& flags, pipeline::PipelineOptions* options) {
  absl::Status ranges = CheckRanges({
      {"auth_cache_s", flags.auth_cache_s, 0, 3600,
       "0: every call is verified; at most an hour, DHIS2's own token cache"},
      {"auth_workers", flags.auth_workers, 1, 16, ""},
      {"auth_max_pending", flags.auth_max_pending, 1, 100000, ""},
      {"auth_max_failures_per_ip", flags.auth_max_failures_per_ip, 1, 100000, ""},
      {"auth_max_failures_per_user", flags.auth_max_failures_per_user, 1, 100000, ""},
      {"auth_failure_window_s", flags.auth_failure_window_s, 1, 86400, "at most a day"},
  });
  if (!ranges.ok()) return ranges;
  if (flags.auth != "dhis2" && flags.auth != "none") {
    return absl::InvalidArgumentError(
        absl::StrCat("--auth: \"", flags.auth,
                     "\" is neither dhis2 (DHIS2 identities) nor none (no authentication)"));
  }
  options->auth = flags.auth == "none" ? pipeline::AuthMode::kNone : pipeline::AuthMode::kDhis2;
  options->authentication.cache_ttl = std::chrono::seconds(flags.auth_cache_s);
  options->authentication.workers = flags.auth_workers;
  options->authentication.max_pending = flags.auth_max_pending;
  options->authentication.max_failures_per_peer = flags.auth_max_failures_per_ip;
  options->authentication.max_failures_per_user = flags.auth_max_failures_per_user;
  options->authentication.failure_window = std::chrono::seconds(flags.auth_failure_window_s);
  return absl::OkStatus();
}

// --http_listen: host:port, not on --listen's port ("listen"); --http_port_file needs it.
absl::Status CheckHttpListen(const ServerFlags& flags, const HostPort& listen) {
  if (!flags.http_listen.empty()) {
    const std::optional<HostPort> http = ParseHostPort(flags.http_listen);
    if (!http.has_value()) return NotHostPort("http_listen", flags.http_listen);
    if (SharePort(*http, listen)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--http_listen \"", flags.http_listen, "\" takes the port of --listen \"",
                       flags.listen, "\"; give it a port of its own"));
    }
  } else if (!flags.http_port_file.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--http_port_file \"", flags.http_port_file, "\" needs --http_listen"));
  }
  return absl::OkStatus();
}

// The HTTP door's options (off while --http_listen is empty); "listen" is --listen's.
absl::StatusOr<http::HttpServerOptions> HttpOptionsFromFlags(const ServerFlags& flags,
                                                             const HostPort& listen) {
  absl::Status ranges = CheckRanges({
      {"http_threads", flags.http_threads, 1, 64, ""},
      {"http_max_connections", flags.http_max_connections, 1, 1000000, ""},
      {"http_max_connections_per_peer", flags.http_max_connections_per_peer, 1, 1000000, ""},
      {"http_header_timeout_ms", flags.http_header_timeout_ms, 100, 600000,
       "at least 100 ms, at most 10 minutes"},
      {"http_idle_timeout_s", flags.http_idle_timeout_s, 1, 3600, "at most an hour"},
      {"http_max_header_kib", flags.http_max_header_kib, 1, 63,
       "at most 63 KiB: Boost.Beast keeps a header field's length in 16 bits"},
      {"http_max_header_fields", flags.http_max_header_fields, 1, 1000, ""},
      {"http_max_url_kib", flags.http_max_url_kib, 1, 63, ""},
      {"http_trusted_proxy_hops", flags.http_trusted_proxy_hops, 1, 10, ""},
  });
  // A range that depends on the flags above.
  if (ranges.ok()) {
    ranges = CheckRanges({
        {"http_max_pending_heads", flags.http_max_pending_heads, 0,
         std::max(0, flags.http_max_connections - 1),
         "0: half of --http_max_connections; below it, so that a complete request always finds "
         "a connection"},
    });
  }
  if (!ranges.ok()) return ranges;
  absl::Status listen_checked = CheckHttpListen(flags, listen);
  if (!listen_checked.ok()) return listen_checked;
  if (flags.http_max_url_kib > flags.http_max_header_kib) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--http_max_url_kib ", flags.http_max_url_kib, " is more than --http_max_header_kib ",
        flags.http_max_header_kib, ": the request line is part of the request's head"));
  }
  const std::vector<std::string> proxies = TrustedProxyList(flags.http_trusted_proxies);
  absl::StatusOr<http::TrustedProxies> parsed =
      http::TrustedProxies::Parse(proxies, flags.http_trusted_proxy_hops);
  if (!parsed.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--http_trusted_proxies: ", parsed.status().message()));
  }
  if (absl::EndsWith(flags.http_port_file, "/")) {
    return NamesADirectory("http_port_file", flags.http_port_file);
  }

  http::HttpServerOptions options;
  options.listen = flags.http_listen;
  options.threads = flags.http_threads;
  options.max_connections = flags.http_max_connections;
  options.max_connections_per_peer = flags.http_max_connections_per_peer;
  options.header_timeout = std::chrono::milliseconds(flags.http_header_timeout_ms);
  options.idle_timeout = std::chrono::seconds(flags.http_idle_timeout_s);
  options.max_header_bytes = static_cast<size_t>(flags.http_max_header_kib) * 1024;
  options.max_url_bytes = static_cast<size_t>(flags.http_max_url_kib) * 1024;
  options.trusted_proxies = proxies;
  options.trusted_proxy_hops = flags.http_trusted_proxy_hops;
  options.max_pending_heads = flags.http_max_pending_heads;
  options.max_header_fields = flags.http_max_header_fields;
  return options;
}

// The rules between flags of different groups.
absl::Status CheckFlagsFitTogether(const ServerFlags& flags) {
  if (flags.pool_size < flags.max_concurrent_exports) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--pool_size ", flags.pool_size, " is less than --max_concurrent_exports ",
        flags.max_concurrent_exports,
        ": every export (and count) holds one database connection, so the exports beyond ",
        flags.pool_size,
        " would wait --connection_wait_ms for one and then fail with RESOURCE_EXHAUSTED; raise "
        "--pool_size or lower --max_concurrent_exports"));
  }
  if (!flags.client_identities.empty()) {
    if (flags.tls_client_ca.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--client_identities \"", flags.client_identities,
          "\" needs --tls_client_ca: only a certificate the server verified stands for a user"));
    }
    if (flags.auth != "dhis2") {
      return absl::InvalidArgumentError(
          absl::StrCat("--client_identities \"", flags.client_identities, "\" needs --auth dhis2"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<ServerOptions> ServerOptionsFromFlags(const ServerFlags& flags) {
  absl::StatusOr<ServerOptions> options = ProcessOptionsFromFlags(flags);
  if (!options.ok()) return options.status();
  absl::StatusOr<pipeline::PipelineOptions> service = PipelineOptionsFromFlags(flags);
  if (!service.ok()) return service.status();
  options->service = *std::move(service);
  absl::Status authentication = AuthenticationFromFlags(flags, &options->service);
  if (!authentication.ok()) return authentication;
  absl::StatusOr<http::HttpServerOptions> http =
      HttpOptionsFromFlags(flags, *ParseHostPort(flags.listen));
  if (!http.ok()) return http.status();
  options->http = *std::move(http);
  absl::Status fit = CheckFlagsFitTogether(flags);
  if (!fit.ok()) return fit;
  return options;
}

}  // namespace dvexport::server
