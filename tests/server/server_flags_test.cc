// ServerOptionsFromFlags: every flag of dvexport-server in its range, at each
// edge and one past it, and the rules between flags. No flags parsing, no
// network, no database (but for the two ExportServer::Start tests at the end,
// which listen on 127.0.0.1 and find no database).

#include "service/server/server_flags.h"

#include <gmock/gmock.h>
#include <grpcpp/grpcpp.h>
#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "service/pipeline/change_stream_monitor.h"

namespace dvexport::server {
namespace {

using pipeline::AuthMode;

using ::testing::HasSubstr;
using ::testing::StartsWith;

// Flags that let every integer flag reach both ends of its range without
// breaking a rule between flags (--pool_size >= --max_concurrent_exports).
ServerFlags RoomyFlags() {
  ServerFlags flags;
  flags.pool_size = 1000;
  flags.max_concurrent_exports = 1;
  flags.http_max_header_kib = 63;
  flags.http_max_url_kib = 1;
  return flags;
}

absl::Status Check(const ServerFlags& flags) { return ServerOptionsFromFlags(flags).status(); }

struct RangeCase {
  std::string flag;
  int64_t min;
  int64_t max;
  std::function<void(ServerFlags&, int64_t)> set;
};

std::ostream& operator<<(std::ostream& out, const RangeCase& range) { return out << range.flag; }

class FlagRangeTest : public ::testing::TestWithParam<RangeCase> {
 protected:
  absl::Status CheckWith(int64_t value) const {
    ServerFlags flags = RoomyFlags();
    GetParam().set(flags, value);
    return Check(flags);
  }
  std::string Refusal(int64_t value) const {
    return absl::StrCat("--", GetParam().flag, ": ", value, " is not between ", GetParam().min,
                        " and ", GetParam().max);
  }
};

TEST_P(FlagRangeTest, AcceptsBothEdgesAndTheMiddle) {
  const RangeCase& range = GetParam();
  EXPECT_TRUE(CheckWith(range.min).ok()) << CheckWith(range.min);
  EXPECT_TRUE(CheckWith(range.max).ok()) << CheckWith(range.max);
  const int64_t middle = range.min + (range.max - range.min) / 2;
  EXPECT_TRUE(CheckWith(middle).ok()) << CheckWith(middle);
}

TEST_P(FlagRangeTest, RefusesOneBelowTheRangeNamingFlagValueAndRange) {
  const RangeCase& range = GetParam();
  absl::Status status = CheckWith(range.min - 1);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), StartsWith(Refusal(range.min - 1)));
}

TEST_P(FlagRangeTest, RefusesOneAboveTheRangeNamingFlagValueAndRange) {
  const RangeCase& range = GetParam();
  absl::Status status = CheckWith(range.max + 1);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()), StartsWith(Refusal(range.max + 1)));
}

TEST_P(FlagRangeTest, RefusesFarOutsideTheRange) {
  const RangeCase& range = GetParam();
  EXPECT_EQ(CheckWith(-1000000).code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(CheckWith(range.max * 2 + 1000).code(), absl::StatusCode::kInvalidArgument);
}

INSTANTIATE_TEST_SUITE_P(
    EveryIntegerFlag, FlagRangeTest,
    ::testing::Values(
        RangeCase{"pool_size", 1, 1000,
                  [](ServerFlags& f, int64_t v) { f.pool_size = static_cast<int>(v); }},
        RangeCase{
            "max_concurrent_exports", 1, 1000,
            [](ServerFlags& f, int64_t v) { f.max_concurrent_exports = static_cast<int>(v); }},
        RangeCase{"max_queued_exports", 0, 10000,
                  [](ServerFlags& f, int64_t v) { f.max_queued_exports = static_cast<int>(v); }},
        RangeCase{"max_queue_wait_ms", 0, 600000,
                  [](ServerFlags& f, int64_t v) { f.max_queue_wait_ms = static_cast<int>(v); }},
        RangeCase{"chunk_kib", 16, 4096,
                  [](ServerFlags& f, int64_t v) { f.chunk_kib = static_cast<int>(v); }},
        RangeCase{"statement_timeout_s", 0, 86400,
                  [](ServerFlags& f, int64_t v) { f.statement_timeout_s = static_cast<int>(v); }},
        RangeCase{"read_streams", 1, 16,
                  [](ServerFlags& f, int64_t v) { f.read_streams = static_cast<int>(v); }},
        RangeCase{"parallel_min_rows", 0, 1000000000000,
                  [](ServerFlags& f, int64_t v) { f.parallel_min_rows = v; }},
        RangeCase{"connection_wait_ms", 0, 600000,
                  [](ServerFlags& f, int64_t v) { f.connection_wait_ms = static_cast<int>(v); }},
        RangeCase{"shutdown_grace_s", 0, 86400,
                  [](ServerFlags& f, int64_t v) { f.shutdown_grace_s = static_cast<int>(v); }},
        RangeCase{
            "health_probe_interval_ms", 100, 600000,
            [](ServerFlags& f, int64_t v) { f.health_probe_interval_ms = static_cast<int>(v); }},
        RangeCase{"max_connection_age_s", 0, 2147483,
                  [](ServerFlags& f, int64_t v) { f.max_connection_age_s = static_cast<int>(v); }},
        RangeCase{"stall_timeout_s", 1, 86400,
                  [](ServerFlags& f, int64_t v) { f.stall_timeout_s = static_cast<int>(v); }},
        RangeCase{
            "stall_timeout_contended_s", 1, 86400,
            [](ServerFlags& f, int64_t v) { f.stall_timeout_contended_s = static_cast<int>(v); }},
        RangeCase{"max_zstd_level", 1, 19,
                  [](ServerFlags& f, int64_t v) { f.max_zstd_level = static_cast<int>(v); }},
        RangeCase{"handshake_timeout_ms", 100, 120000,
                  [](ServerFlags& f, int64_t v) { f.handshake_timeout_ms = static_cast<int>(v); }},
        RangeCase{
            "listener_probe_interval_ms", 100, 600000,
            [](ServerFlags& f, int64_t v) { f.listener_probe_interval_ms = static_cast<int>(v); }},
        RangeCase{"stall_min_rate_kib_s", 1, 1048576,
                  [](ServerFlags& f, int64_t v) { f.stall_min_rate_kib_s = static_cast<int>(v); }},
        RangeCase{"auth_cache_s", 0, 3600,
                  [](ServerFlags& f, int64_t v) { f.auth_cache_s = static_cast<int>(v); }},
        RangeCase{"auth_workers", 1, 16,
                  [](ServerFlags& f, int64_t v) { f.auth_workers = static_cast<int>(v); }},
        RangeCase{"auth_max_pending", 1, 100000,
                  [](ServerFlags& f, int64_t v) { f.auth_max_pending = static_cast<int>(v); }},
        RangeCase{
            "auth_max_failures_per_ip", 1, 100000,
            [](ServerFlags& f, int64_t v) { f.auth_max_failures_per_ip = static_cast<int>(v); }},
        RangeCase{
            "auth_max_failures_per_user", 1, 100000,
            [](ServerFlags& f, int64_t v) { f.auth_max_failures_per_user = static_cast<int>(v); }},
        RangeCase{"auth_failure_window_s", 1, 86400,
                  [](ServerFlags& f, int64_t v) { f.auth_failure_window_s = static_cast<int>(v); }},
        RangeCase{"http_threads", 1, 64,
                  [](ServerFlags& f, int64_t v) { f.http_threads = static_cast<int>(v); }},
        RangeCase{"http_max_connections", 1, 1000000,
                  [](ServerFlags& f, int64_t v) { f.http_max_connections = static_cast<int>(v); }},
        RangeCase{"http_max_connections_per_peer", 1, 1000000,
                  [](ServerFlags& f,
                     int64_t v) { f.http_max_connections_per_peer = static_cast<int>(v); }},
        RangeCase{
            "http_header_timeout_ms", 100, 600000,
            [](ServerFlags& f, int64_t v) { f.http_header_timeout_ms = static_cast<int>(v); }},
        RangeCase{"http_idle_timeout_s", 1, 3600,
                  [](ServerFlags& f, int64_t v) { f.http_idle_timeout_s = static_cast<int>(v); }},
        RangeCase{"http_max_header_kib", 1, 63,
                  [](ServerFlags& f, int64_t v) { f.http_max_header_kib = static_cast<int>(v); }},
        RangeCase{
            "http_max_header_fields", 1, 1000,
            [](ServerFlags& f, int64_t v) { f.http_max_header_fields = static_cast<int>(v); }},
        RangeCase{"http_max_url_kib", 1, 63,
                  [](ServerFlags& f, int64_t v) { f.http_max_url_kib = static_cast<int>(v); }},
        RangeCase{
            "http_trusted_proxy_hops", 1, 10,
            [](ServerFlags& f, int64_t v) { f.http_trusted_proxy_hops = static_cast<int>(v); }},
        RangeCase{
            "http_max_pending_heads", 0, 4095,
            [](ServerFlags& f, int64_t v) { f.http_max_pending_heads = static_cast<int>(v); }},
        RangeCase{"change_stream_poll_s", 0, 86400,
                  [](ServerFlags& f, int64_t v) { f.change_stream_poll_s = static_cast<int>(v); }},
        RangeCase{
            "change_stream_warn_wal_mb", 1, 1048576,
            [](ServerFlags& f, int64_t v) { f.change_stream_warn_wal_mb = static_cast<int>(v); }}),
    [](const ::testing::TestParamInfo<RangeCase>& info) { return info.param.flag; });

TEST(ServerOptionsFromFlagsTest, DefaultsAreValid) {
  absl::StatusOr<ServerOptions> options = ServerOptionsFromFlags(ServerFlags());
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->listen, "0.0.0.0:50051");
  EXPECT_EQ(options->pool_size, 8);
  EXPECT_EQ(options->service.max_concurrent_exports, 4);
  EXPECT_EQ(options->service.max_queued_exports, 64);
  EXPECT_EQ(options->service.max_queue_wait, std::chrono::milliseconds(30000));
  EXPECT_EQ(options->service.chunk_size, 256u * 1024);
  EXPECT_EQ(options->service.max_zstd_level, 9);
  EXPECT_EQ(options->handshake_timeout, std::chrono::milliseconds(5000));
  EXPECT_EQ(options->listener_probe_interval, std::chrono::milliseconds(5000));
  EXPECT_EQ(options->service.change_publication, "dvexport");
  EXPECT_EQ(options->service.session().change_publication, "dvexport");
  EXPECT_EQ(options->service.change_stream_poll, std::chrono::seconds(30));
  EXPECT_EQ(options->service.change_stream_warn_wal_bytes, int64_t{1024} << 20);
}

TEST(ServerOptionsFromFlagsTest, ChangeStreamFlagsReachThePipelineAndItsSessions) {
  ServerFlags flags;
  flags.change_publication = "dhis2_values_2";
  flags.change_stream_poll_s = 0;
  flags.change_stream_warn_wal_mb = 64;
  absl::StatusOr<ServerOptions> options = ServerOptionsFromFlags(flags);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->service.change_publication, "dhis2_values_2");
  EXPECT_EQ(options->service.session().change_publication, "dhis2_values_2");
  EXPECT_EQ(options->service.change_streams().publication, "dhis2_values_2");
  EXPECT_EQ(options->service.change_streams().interval, std::chrono::seconds(0));
  EXPECT_EQ(options->service.change_streams().warn_wal_bytes, int64_t{64} << 20);
}

TEST(ServerOptionsFromFlagsTest, ChangePublicationIsAnUnquotedIdentifier) {
  for (const std::string& good :
       std::vector<std::string>{"dvexport", "_p", "a", "pub_2024", std::string(63, 'p')}) {
    ServerFlags flags;
    flags.change_publication = good;
    EXPECT_TRUE(Check(flags).ok()) << good << ": " << Check(flags);
  }
  for (const std::string& bad :
       std::vector<std::string>{"", "2pub", "Dvexport", "dv-export", "dv export", "dv\"x",
                                "d\xc3\xa9", std::string(64, 'p')}) {
    ServerFlags flags;
    flags.change_publication = bad;
    const absl::Status status = Check(flags);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_THAT(std::string(status.message()),
                StartsWith(absl::StrCat("--change_publication: \"", bad, "\" is not")))
        << bad;
  }
}

TEST(ServerOptionsFromFlagsTest, CarriesEveryValueIntoTheOptionsUnchanged) {
  ServerFlags flags;
  flags.listen = "127.0.0.1:0";
  flags.pg = "host=db dbname=dhis2";
  flags.pool_size = 12;
  flags.max_concurrent_exports = 3;
  flags.max_queued_exports = 0;
  flags.max_queue_wait_ms = 1500;
  flags.chunk_kib = 16;
  flags.statement_timeout_s = 600;
  flags.read_streams = 4;
  flags.parallel_min_rows = 0;
  flags.connection_wait_ms = 0;
  flags.tls_cert = "cert.pem";
  flags.tls_key = "key.pem";
  flags.tls_client_ca = "ca.pem";
  flags.health_probe_interval_ms = 100;
  flags.max_connection_age_s = 2147483;
  flags.stall_timeout_s = 1;
  flags.max_zstd_level = 19;
  flags.stall_min_rate_kib_s = 1048576;
  flags.metrics_listen = "[::]:9464";
  flags.handshake_timeout_ms = 120000;
  flags.listener_probe_interval_ms = 100;
  flags.auth_cache_s = 0;
  flags.auth_workers = 16;
  flags.auth_max_pending = 7;
  flags.auth_max_failures_per_ip = 3;
  flags.auth_max_failures_per_user = 2;
  flags.auth_failure_window_s = 86400;
  flags.client_identities = "identities.txt";
  absl::StatusOr<ServerOptions> options = ServerOptionsFromFlags(flags);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->service.auth, AuthMode::kDhis2);
  EXPECT_EQ(options->service.authentication.cache_ttl, std::chrono::seconds(0));
  EXPECT_EQ(options->service.authentication.workers, 16);
  EXPECT_EQ(options->service.authentication.max_pending, 7);
  EXPECT_EQ(options->service.authentication.max_failures_per_peer, 3);
  EXPECT_EQ(options->service.authentication.max_failures_per_user, 2);
  EXPECT_EQ(options->service.authentication.failure_window, std::chrono::seconds(86400));
  EXPECT_EQ(options->client_identities_file, "identities.txt");
  EXPECT_EQ(options->listen, "127.0.0.1:0");
  EXPECT_EQ(options->conninfo, "host=db dbname=dhis2");
  EXPECT_EQ(options->pool_size, 12);
  EXPECT_EQ(options->service.max_concurrent_exports, 3);
  EXPECT_EQ(options->service.max_queued_exports, 0);
  EXPECT_EQ(options->service.max_queue_wait, std::chrono::milliseconds(1500));
  EXPECT_EQ(options->service.chunk_size, 16u * 1024);
  EXPECT_EQ(options->service.statement_timeout, std::chrono::milliseconds(600000));
  EXPECT_EQ(options->service.read_plan.max_streams, 4);
  EXPECT_EQ(options->service.read_plan.min_rows, 0);
  EXPECT_EQ(options->service.connection_wait, std::chrono::milliseconds(0));
  EXPECT_EQ(options->tls_cert_file, "cert.pem");
  EXPECT_EQ(options->tls_key_file, "key.pem");
  EXPECT_EQ(options->tls_client_ca_file, "ca.pem");
  // 100 ms stays 100 ms, and 99 is refused (not raised to 100, as it once was).
  EXPECT_EQ(options->health_probe_interval, std::chrono::milliseconds(100));
  EXPECT_EQ(options->max_connection_age, std::chrono::seconds(2147483));
  EXPECT_EQ(options->service.stall_timeout, std::chrono::seconds(1));
  EXPECT_EQ(options->service.max_zstd_level, 19);
  EXPECT_EQ(options->service.stall_min_rate, int64_t{1} << 30);
  EXPECT_EQ(options->metrics_listen, "[::]:9464");
  EXPECT_EQ(options->handshake_timeout, std::chrono::milliseconds(120000));
  EXPECT_EQ(options->listener_probe_interval, std::chrono::milliseconds(100));
}

TEST(ServerOptionsFromFlagsTest, CarriesEveryHttpValueIntoTheHttpOptions) {
  ServerFlags flags;
  flags.listen = "127.0.0.1:50051";
  flags.http_listen = "127.0.0.1:8080";
  flags.http_port_file = "/run/dvexport/http_port";
  flags.http_threads = 5;
  flags.http_max_connections = 1234;
  flags.http_max_connections_per_peer = 17;
  flags.http_header_timeout_ms = 2500;
  flags.http_idle_timeout_s = 45;
  flags.http_max_header_kib = 63;
  flags.http_max_header_fields = 50;
  flags.http_max_pending_heads = 600;
  flags.http_max_url_kib = 8;
  flags.http_trusted_proxies = " 10.0.0.0/8, ::1 ,192.168.1.7";
  flags.http_trusted_proxy_hops = 2;
  absl::StatusOr<ServerOptions> options = ServerOptionsFromFlags(flags);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->http.listen, "127.0.0.1:8080");
  EXPECT_EQ(options->http.threads, 5);
  EXPECT_EQ(options->http.max_connections, 1234);
  EXPECT_EQ(options->http.max_connections_per_peer, 17);
  EXPECT_EQ(options->http.header_timeout, std::chrono::milliseconds(2500));
  EXPECT_EQ(options->http.idle_timeout, std::chrono::seconds(45));
  EXPECT_EQ(options->http.max_header_bytes, 63u * 1024);
  EXPECT_EQ(options->http.max_header_fields, 50);
  EXPECT_EQ(options->http.max_pending_heads, 600);
  EXPECT_EQ(options->http.trusted_proxy_hops, 2);
  EXPECT_EQ(options->http.max_url_bytes, 8u * 1024);
  EXPECT_EQ(options->http.trusted_proxies,
            (std::vector<std::string>{"10.0.0.0/8", "::1", "192.168.1.7"}));

  // Off by default, and then its port file makes no sense.
  ServerFlags off;
  absl::StatusOr<ServerOptions> defaults = ServerOptionsFromFlags(off);
  ASSERT_TRUE(defaults.ok()) << defaults.status();
  EXPECT_EQ(defaults->http.listen, "");
  off.http_port_file = "/tmp/http_port";
  EXPECT_THAT(std::string(Check(off).message()), HasSubstr("--http_port_file"));
}

TEST(ServerOptionsFromFlagsTest, HttpFlagsThatCannotWorkAreRefusedNamingTheFlag) {
  ServerFlags flags;
  flags.listen = "127.0.0.1:50051";
  flags.http_listen = "8080";
  EXPECT_THAT(std::string(Check(flags).message()), HasSubstr("--http_listen"));
  flags.http_listen = "0.0.0.0:50051";  // the gRPC door's port
  EXPECT_THAT(std::string(Check(flags).message()), HasSubstr("--http_listen"));
  flags.http_listen = "127.0.0.1:8080";
  EXPECT_TRUE(Check(flags).ok());
  flags.http_max_url_kib = 40;  // beyond the whole head's 32 KiB
  EXPECT_THAT(std::string(Check(flags).message()), HasSubstr("--http_max_url_kib 40"));
  flags.http_max_url_kib = 16;
  flags.http_trusted_proxies = "10.0.0.1,proxy.example.org";
  const std::string message(Check(flags).message());
  EXPECT_THAT(message, HasSubstr("--http_trusted_proxies"));
  EXPECT_THAT(message, HasSubstr("proxy.example.org"));
  flags.http_trusted_proxies = "10.0.0.0/33";
  EXPECT_THAT(std::string(Check(flags).message()), HasSubstr("10.0.0.0/33"));
}

TEST(ServerOptionsFromFlagsTest, ReportsTheIssueCasesThatOnceBrokeTheServer) {
  ServerFlags age;
  age.max_connection_age_s = 2592000;  // 30 days: overflowed gRPC's int milliseconds
  EXPECT_EQ(Check(age).message(),
            "--max_connection_age_s: 2592000 is not between 0 and 2147483 (0: never; gRPC takes "
            "the age in milliseconds as an int, so at most about 24.8 days)");
  ServerFlags timeout;
  timeout.statement_timeout_s = -1;  // reached SQL
  EXPECT_THAT(std::string(Check(timeout).message()),
              StartsWith("--statement_timeout_s: -1 is not between 0 and 86400"));
  ServerFlags exports;
  exports.max_concurrent_exports = -16;  // aborted the server
  EXPECT_THAT(std::string(Check(exports).message()),
              StartsWith("--max_concurrent_exports: -16 is not between 1 and 1000"));
  ServerFlags pool;
  pool.pool_size = 0;  // was silently 1
  EXPECT_EQ(Check(pool).message(), "--pool_size: 0 is not between 1 and 1000");
}

TEST(ServerOptionsFromFlagsTest, PoolMustHoldAConnectionForEveryExport) {
  ServerFlags flags;
  flags.pool_size = 4;
  flags.max_concurrent_exports = 4;
  EXPECT_TRUE(Check(flags).ok()) << Check(flags);
  flags.pool_size = 3;
  absl::Status status = Check(flags);
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(status.message()),
              StartsWith("--pool_size 3 is less than --max_concurrent_exports 4: every export "
                         "(and count) holds one database connection"));
  EXPECT_THAT(std::string(status.message()), HasSubstr("RESOURCE_EXHAUSTED"));
  flags.pool_size = 1;
  flags.max_concurrent_exports = 1;
  EXPECT_TRUE(Check(flags).ok()) << Check(flags);
}

TEST(ServerOptionsFromFlagsTest, FairSharesDefaultToLessThanEverySlotAndHalfTheQueue) {
  absl::StatusOr<ServerOptions> options = ServerOptionsFromFlags(ServerFlags());
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->service.max_exports_per_user, 3);
  EXPECT_EQ(options->service.max_queued_exports_per_user, 32);
  EXPECT_EQ(options->service.stall_timeout_contended, std::chrono::seconds(5));
  // One slot, one place: one user takes them (max(1, ...)).
  ServerFlags small;
  small.max_concurrent_exports = 1;
  small.max_queued_exports = 1;
  options = ServerOptionsFromFlags(small);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->service.max_exports_per_user, 1);
  EXPECT_EQ(options->service.max_queued_exports_per_user, 1);
  // Given: carried unchanged.
  ServerFlags given;
  given.max_exports_per_user = 4;
  given.max_queued_exports_per_user = 64;
  given.stall_timeout_contended_s = 120;  // above --stall_timeout_s: allowed, changes nothing
  options = ServerOptionsFromFlags(given);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->service.max_exports_per_user, 4);
  EXPECT_EQ(options->service.max_queued_exports_per_user, 64);
  EXPECT_EQ(options->service.stall_timeout_contended, std::chrono::seconds(120));
}

TEST(ServerOptionsFromFlagsTest, FairSharesAreAtMostTheSlotsAndTheQueue) {
  ServerFlags flags;
  flags.max_exports_per_user = 5;
  EXPECT_EQ(Check(flags).message(),
            "--max_exports_per_user: 5 is not between 0 and 4 (0: max(1, "
            "--max_concurrent_exports - 1); at most --max_concurrent_exports)");
  flags.max_exports_per_user = -1;
  EXPECT_THAT(std::string(Check(flags).message()),
              StartsWith("--max_exports_per_user: -1 is not between 0 and 4"));
  flags.max_exports_per_user = 0;
  flags.max_queued_exports_per_user = 65;
  EXPECT_EQ(Check(flags).message(),
            "--max_queued_exports_per_user: 65 is not between 0 and 64 (0: max(1, "
            "--max_queued_exports / 2); at most --max_queued_exports)");
  flags.max_queued_exports = 0;
  flags.max_queued_exports_per_user = 1;
  EXPECT_THAT(std::string(Check(flags).message()),
              StartsWith("--max_queued_exports_per_user: 1 is not between 0 and 0"));
  flags.max_queued_exports_per_user = 0;
  EXPECT_TRUE(Check(flags).ok()) << Check(flags);
}

TEST(ServerOptionsFromFlagsTest, ReadStreamsNeedNoRoomInThePool) {
  // Extra read streams are only taken when the pool can spare them.
  ServerFlags flags;
  flags.pool_size = 1;
  flags.max_concurrent_exports = 1;
  flags.read_streams = 16;
  EXPECT_TRUE(Check(flags).ok()) << Check(flags);
}

TEST(ServerOptionsFromFlagsTest, TlsCertificateAndKeyGoTogether) {
  ServerFlags flags;
  EXPECT_TRUE(Check(flags).ok());
  flags.tls_cert = "cert.pem";
  EXPECT_EQ(Check(flags).message(),
            "--tls_cert \"cert.pem\" needs --tls_key: give both (TLS) or neither");
  flags.tls_key = "key.pem";
  EXPECT_TRUE(Check(flags).ok()) << Check(flags);
  flags.tls_cert.clear();
  EXPECT_EQ(Check(flags).message(),
            "--tls_key \"key.pem\" needs --tls_cert: give both (TLS) or neither");
}

// The safe default: DHIS2 identities; "none" only when asked; nothing else.
TEST(ServerOptionsFromFlagsTest, AuthIsDhis2UnlessNoneIsAsked) {
  ServerFlags flags;
  absl::StatusOr<ServerOptions> options = ServerOptionsFromFlags(flags);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->service.auth, AuthMode::kDhis2);
  EXPECT_EQ(options->service.authentication.cache_ttl, std::chrono::seconds(60));
  EXPECT_EQ(ServerOptions().service.auth, AuthMode::kDhis2);
  flags.auth = "none";
  options = ServerOptionsFromFlags(flags);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->service.auth, AuthMode::kNone);
  flags.auth = "DHIS2";
  EXPECT_EQ(Check(flags).message(),
            "--auth: \"DHIS2\" is neither dhis2 (DHIS2 identities) nor none (no authentication)");
}

TEST(ServerOptionsFromFlagsTest, ClientIdentitiesNeedMutualTlsAndDhis2) {
  ServerFlags flags;
  flags.client_identities = "ids";
  EXPECT_EQ(Check(flags).message(),
            "--client_identities \"ids\" needs --tls_client_ca: only a certificate the server "
            "verified stands for a user");
  flags.tls_cert = "cert.pem";
  flags.tls_key = "key.pem";
  flags.tls_client_ca = "ca.pem";
  EXPECT_TRUE(Check(flags).ok()) << Check(flags);
  flags.auth = "none";
  EXPECT_EQ(Check(flags).message(), "--client_identities \"ids\" needs --auth dhis2");
}

TEST(ServerOptionsFromFlagsTest, TlsClientCaNeedsCertificateAndKey) {
  ServerFlags flags;
  flags.tls_client_ca = "ca.pem";
  EXPECT_EQ(Check(flags).message(),
            "--tls_client_ca \"ca.pem\" needs --tls_cert and --tls_key: mutual TLS is TLS first");
  flags.tls_cert = "cert.pem";
  EXPECT_THAT(std::string(Check(flags).message()), StartsWith("--tls_cert \"cert.pem\" needs"));
  flags.tls_key = "key.pem";
  EXPECT_TRUE(Check(flags).ok()) << Check(flags);
}

TEST(ServerOptionsFromFlagsTest, ListenAcceptsHostColonPort) {
  for (const char* listen :
       {"0.0.0.0:50051", "127.0.0.1:0", "localhost:65535", "[::]:50051", "[::1]:1",
        "[fe80::1:2]:443", "dvexport-0.dvexport.default.svc.cluster.local:50051", "my_host:7"}) {
    ServerFlags flags;
    flags.listen = listen;
    EXPECT_TRUE(Check(flags).ok()) << listen << ": " << Check(flags);
  }
}

const char* const kNotHostPort[] = {"",
                                    "50051",
                                    ":50051",
                                    "0.0.0.0:",
                                    "0.0.0.0:65536",
                                    "0.0.0.0:100000",
                                    "0.0.0.0:-1",
                                    "0.0.0.0:+1",
                                    "0.0.0.0:5x",
                                    "0.0.0.0: 1",
                                    "::1:50051",
                                    "[::1]50051",
                                    "[::1]:",
                                    "[]:1",
                                    "[::1:1",
                                    "[not-ipv6]:1",
                                    "[127.0.0.1]:1",
                                    "host name:1",
                                    "unix:/tmp/socket",
                                    "dns:///host:1"};

TEST(ServerOptionsFromFlagsTest, ListenRefusesWhatIsNotHostColonPort) {
  for (const char* listen : kNotHostPort) {
    ServerFlags flags;
    flags.listen = listen;
    absl::Status status = Check(flags);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << listen;
    EXPECT_THAT(std::string(status.message()),
                StartsWith(absl::StrCat("--listen: \"", listen, "\" is not host:port")));
  }
}

TEST(ServerOptionsFromFlagsTest, MetricsListenIsEmptyOrHostColonPort) {
  ServerFlags flags;
  EXPECT_TRUE(Check(flags).ok());
  flags.metrics_listen = "0.0.0.0:9464";
  EXPECT_TRUE(Check(flags).ok()) << Check(flags);
  for (const char* listen : kNotHostPort) {
    if (*listen == '\0') continue;
    flags.metrics_listen = listen;
    EXPECT_THAT(std::string(Check(flags).message()),
                StartsWith(absl::StrCat("--metrics_listen: \"", listen, "\" is not host:port")));
  }
}

TEST(ServerOptionsFromFlagsTest, MetricsListenNeedsAPortOfItsOwn) {
  ServerFlags flags;
  flags.listen = "0.0.0.0:50051";
  flags.metrics_listen = "0.0.0.0:50051";
  EXPECT_EQ(Check(flags).message(),
            "--metrics_listen \"0.0.0.0:50051\" takes the port of --listen \"0.0.0.0:50051\"; "
            "give it a port of its own");
  flags.metrics_listen = "127.0.0.1:50051";  // inside --listen's wildcard
  EXPECT_EQ(Check(flags).code(), absl::StatusCode::kInvalidArgument);
  flags.listen = "[::1]:50051";
  flags.metrics_listen = "[::]:50051";
  EXPECT_EQ(Check(flags).code(), absl::StatusCode::kInvalidArgument);
  // Other addresses may share a port number, and port 0 is any free port.
  flags.listen = "127.0.0.1:50051";
  flags.metrics_listen = "10.0.0.1:50051";
  EXPECT_TRUE(Check(flags).ok()) << Check(flags);
  flags.listen = "127.0.0.1:0";
  flags.metrics_listen = "127.0.0.1:0";
  EXPECT_TRUE(Check(flags).ok()) << Check(flags);
}

TEST(ServerOptionsFromFlagsTest, PgMustParseAndIsNeverQuoted) {
  ServerFlags flags;
  for (const char* pg : {"", "host=db dbname=dhis2 user=dvexport", "dbname='a b'",
                         "postgresql://dvexport@db:5432/dhis2?sslmode=require"}) {
    flags.pg = pg;
    EXPECT_TRUE(Check(flags).ok()) << pg << ": " << Check(flags);
  }
  for (const char* pg : {"host=db password='s3cret", "host=db password s3cret",
                         "host=db nosuchoption=s3cret", "postgresql://u:s3cret@db/x?bad=s3cret"}) {
    flags.pg = pg;
    absl::Status status = Check(flags);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << pg;
    EXPECT_THAT(std::string(status.message()),
                StartsWith("--pg: the connection string is not a valid libpq conninfo"));
    EXPECT_FALSE(absl::StrContains(status.message(), "s3cret")) << status;
  }
}

TEST(ServerOptionsFromFlagsTest, PortFileNamesAFile) {
  ServerFlags flags;
  flags.port_file = "run/port";
  EXPECT_TRUE(Check(flags).ok()) << Check(flags);
  flags.port_file = "run/";
  EXPECT_EQ(Check(flags).message(), "--port_file: \"run/\" names a directory; give a file name");
}

// ExportServer::Start itself refuses what gRPC's int milliseconds cannot hold.
TEST(ServerOptionsFromFlagsTest, Dhis2VersionIsOneServedOrEmpty) {
  absl::StatusOr<ServerOptions> options = ServerOptionsFromFlags(ServerFlags());
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_FALSE(options->dhis2.forced.has_value());
  EXPECT_FALSE(options->dhis2.serve_newer);
  ServerFlags flags;
  flags.dhis2_version = "2.41";
  flags.serve_newer_dhis2 = true;
  options = ServerOptionsFromFlags(flags);
  ASSERT_TRUE(options.ok()) << options.status();
  EXPECT_EQ(options->dhis2.forced, std::optional<int>(41));
  EXPECT_TRUE(options->dhis2.serve_newer);
  for (const char* bad : {"2.39", "2.44", "41", "latest"}) {
    flags.dhis2_version = bad;
    const absl::Status status = Check(flags);
    EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument) << bad;
    EXPECT_EQ(status.message(), absl::StrCat("--dhis2_version: \"", bad,
                                             "\" is not a DHIS2 version dvexport serves: 2.40, "
                                             "2.41, 2.42 or 2.43"));
  }
}

TEST(ExportServerOptionsTest, StartRefusesAConnectionAgeBeyondIntMilliseconds) {
  ServerOptions options;
  options.listen = "127.0.0.1:0";
  options.conninfo = "host=127.0.0.1 port=1 connect_timeout=1";
  options.max_connection_age = std::chrono::seconds(2592000);
  absl::StatusOr<std::unique_ptr<ExportServer>> server = ExportServer::Start(options);
  ASSERT_FALSE(server.ok());
  EXPECT_EQ(server.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(server.status().message()), HasSubstr("max_connection_age: 2592000 s"));
}

// At the top of --max_connection_age_s calls are answered: the age does not
// wrap around into a deadline every call misses.
TEST(ExportServerOptionsTest, LongestConnectionAgeStillAnswersCalls) {
  ServerFlags flags;
  flags.listen = "127.0.0.1:0";
  flags.pg = "host=127.0.0.1 port=1 connect_timeout=1";
  flags.max_connection_age_s = 2147483;
  absl::StatusOr<ServerOptions> options = ServerOptionsFromFlags(flags);
  ASSERT_TRUE(options.ok()) << options.status();
  absl::StatusOr<std::unique_ptr<ExportServer>> server = ExportServer::Start(*options);
  ASSERT_TRUE(server.ok()) << server.status();
  auto channel = grpc::CreateChannel(absl::StrCat("127.0.0.1:", (*server)->port()),
                                     grpc::InsecureChannelCredentials());
  auto stub = grpc::health::v1::Health::NewStub(channel);
  for (int call = 0; call < 3; ++call) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    grpc::health::v1::HealthCheckRequest request;
    grpc::health::v1::HealthCheckResponse response;
    grpc::Status status = stub->Check(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_code() << " " << status.error_message();
    // No database at port 1.
    EXPECT_EQ(response.status(), grpc::health::v1::HealthCheckResponse::NOT_SERVING);
  }
}

}  // namespace
}  // namespace dvexport::server
