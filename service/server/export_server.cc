#include "service/server/export_server.h"

#include <grpcpp/ext/proto_server_reflection_plugin.h>
#include <grpcpp/health_check_service_interface.h>
#include <grpcpp/resource_quota.h>
#include <grpcpp/security/server_credentials.h>
#include <grpcpp/server_builder.h>
#include <sys/resource.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "common/json_string.h"
#include "common/pem_file.h"
#include "grpc/health/v1/health.pb.h"
#include "service/db/libpq_gaps.h"
#include "service/db/read_session.h"
#include "service/grpc/accept_guard.h"
#include "service/grpc/connection_activity.h"
#include "service/pipeline/change_stream_monitor.h"

namespace dvexport::server {
namespace {

// Shutdown: how long every connection must have received nothing (its client has read what it
// was sent) before gRPC closes the connections.
constexpr std::chrono::milliseconds kSettledAfter{200};
// Shutdown: then how long gRPC's graceful close of the (idle) connections may take.
constexpr std::chrono::seconds kGoawayWait{1};

// Plaintext without TLS files; TLS with a certificate and key; mutual TLS
// when a client CA is given too.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeCredentials(
    const ServerOptions& options) {
  if (options.tls_cert_file.empty() && options.tls_key_file.empty()) {
    if (!options.tls_client_ca_file.empty()) {
      return absl::InvalidArgumentError("tls_client_ca needs tls_cert and tls_key");
    }
    return grpc::InsecureServerCredentials();
  }
  if (options.tls_cert_file.empty() || options.tls_key_file.empty()) {
    return absl::InvalidArgumentError("tls_cert and tls_key go together");
  }
  // Checked here, so that a bad file is named with what is wrong with it; gRPC
  // would only fail to listen.
  absl::StatusOr<common::PemKeyPair> pair = common::ReadPemKeyPair(
      options.tls_cert_file, "--tls_cert", options.tls_key_file, "--tls_key");
  if (!pair.ok()) return pair.status();
  grpc::SslServerCredentialsOptions ssl(GRPC_SSL_DONT_REQUEST_CLIENT_CERTIFICATE);
  if (!options.tls_client_ca_file.empty()) {
    absl::StatusOr<std::string> ca =
        common::ReadPemCertificates(options.tls_client_ca_file, "--tls_client_ca");
    if (!ca.ok()) return ca.status();
    ssl.pem_root_certs = *std::move(ca);
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  ssl.pem_key_cert_pairs.push_back({pair->private_key, pair->certificate_chain});
  return grpc::SslServerCredentials(ssl);
}

// HTTP/2 keepalive: every client connection is pinged after kKeepaliveTime without activity
// and closed when the ping is not answered within kKeepaliveTimeout, also while a call's data
// waits for the client's flow-control window (pings are not flow-controlled): a peer that
// vanished without closing (a dead host, a cut network) is noticed within about 80 s, and its
// calls are cancelled. Clients may ping every kMinClientPingInterval, with or without calls.
constexpr int kKeepaliveTimeMs = 60 * 1000;
constexpr int kKeepaliveTimeoutMs = 20 * 1000;
constexpr int kMinClientPingIntervalMs = 10 * 1000;

// Request header bytes a call may send (HPACK-decoded, with HTTP/2's 32 bytes per field).
constexpr int kMaxRequestHeaderBytes = 16 * 1024;

// How long Start waits for the first probe's answer, at most.
constexpr std::chrono::milliseconds kFirstProbeWait{1000};

// How long a health probe (and a listener probe) may take, at most.
constexpr std::chrono::milliseconds kMaxProbeTimeout{5000};
// A listener probe waits at least this long for the server's first bytes, however short its
// interval: a busy server (or one under a sanitizer) may take longer than 100 ms to answer a TLS
// ClientHello, and three slow answers in a row would stop it.
constexpr std::chrono::milliseconds kMinListenerProbeTimeout{1000};

// The descriptor below which client connections are kept (ExportServer's comment).
absl::StatusOr<int> DescriptorCeiling(int pool_size) {
  rlimit limit{};
  if (getrlimit(RLIMIT_NOFILE, &limit) != 0) return absl::InternalError("getrlimit failed");
  const int64_t soft = limit.rlim_cur == RLIM_INFINITY
                           ? INT_MAX
                           : std::min<int64_t>(static_cast<int64_t>(limit.rlim_cur), INT_MAX);
  const int64_t ceiling = soft - DescriptorReserve(pool_size);
  if (ceiling < kMinClientDescriptors) {
    return absl::FailedPreconditionError(
        absl::StrCat("the file descriptor limit (RLIMIT_NOFILE, ulimit -n) is ", soft, ": with ",
                     DescriptorReserve(pool_size), " kept for --pool_size ", pool_size,
                     " and the process, fewer than ", kMinClientDescriptors,
                     " are left for client connections; raise the limit or lower --pool_size"));
  }
  return static_cast<int>(ceiling);
}

// One JSON log line {"event":"<event>",<fields>,"error":"<error>"} on stderr.
void LogListenerEvent(const char* event, const std::string& fields, absl::string_view error) {
  std::string line = absl::StrCat("{\"event\":\"", event, "\",", fields, ",\"error\":");
  common::AppendJsonString(std::string_view(error.data(), error.size()), &line);
  line += "}\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

// One line on stderr for each DHIS2 decision the pool's connections make (the first at
// start-up): the version found, what told it, and whether and how it is served.
void LogDhis2Version(const dhis2::Dhis2Version& version) {
  std::string line = absl::StrCat(
      "{\"event\":\"", version.support.ok() ? "dhis2_version" : "dhis2_version_refused",
      "\",\"found\":\"", version.found == 0 ? "none" : dhis2::VersionName(version.found),
      "\",\"served\":\"", version.served == 0 ? "none" : dhis2::VersionName(version.served),
      "\",\"source\":\"", dhis2::VersionSourceName(version.source), "\",\"evidence\":");
  common::AppendJsonString(version.evidence, &line);
  if (!version.warning.empty()) {
    line += ",\"warning\":";
    common::AppendJsonString(version.warning, &line);
  }
  if (!version.support.ok()) {
    line += ",\"error\":";
    common::AppendJsonString(
        std::string_view(version.support.message().data(), version.support.message().size()),
        &line);
  }
  line += "}\n";
  std::fwrite(line.data(), 1, line.size(), stderr);
  std::fflush(stderr);
}

}  // namespace

int DescriptorReserve(int pool_size) { return 2 * pool_size + 128; }

absl::StatusOr<std::unique_ptr<ExportServer>> ExportServer::Start(const ServerOptions& options) {
  absl::Status conninfo = db::CheckConninfo(options.conninfo);
  if (!conninfo.ok()) return conninfo;
  absl::StatusOr<int> ceiling = DescriptorCeiling(options.pool_size);
  if (!ceiling.ok()) return ceiling.status();
  if (options.handshake_timeout.count() <= 0 || options.handshake_timeout.count() > INT_MAX) {
    return absl::InvalidArgumentError("handshake_timeout must be between 1 ms and INT_MAX ms");
  }
  pipeline::PipelineOptions service_options = options.service;
  std::unique_ptr<auth::ClientIdentities> client_identities;
  if (!options.client_identities_file.empty()) {
    if (options.tls_client_ca_file.empty()) {
      return absl::InvalidArgumentError(
          "client_identities needs tls_client_ca: only a verified client certificate stands for "
          "a user");
    }
    if (options.service.auth != pipeline::AuthMode::kDhis2) {
      return absl::InvalidArgumentError("client_identities needs auth dhis2");
    }
    absl::StatusOr<auth::ClientIdentities> loaded =
        auth::ClientIdentities::Load(options.client_identities_file);
    if (!loaded.ok()) return loaded.status();
    client_identities = std::make_unique<auth::ClientIdentities>(*std::move(loaded));
    service_options.client_identities = client_identities.get();
  }
  std::unique_ptr<ExportServer> server(new ExportServer());
  server->client_identities_ = std::move(client_identities);
  server->descriptor_ceiling_ = *ceiling;
  // On before the listener accepts its first connection.
  grpc_door::GuardAcceptedConnections(*ceiling);
  server->pool_ =
      std::make_unique<db::ConnectionPool>(options.conninfo, options.pool_size, options.dhis2);
  absl::Status metrics = server->StartMetrics(options);
  if (!metrics.ok()) return metrics;
  server->pool_->SetVersionObserver(
      [metrics = server->metrics_.get(), self = server.get()](const dhis2::Dhis2Version& version) {
        LogDhis2Version(version);
        if (metrics != nullptr) metrics->SetDhis2Version(version);
        // Calls waiting for the version go on at once (set before the first connection).
        if (self->pipeline_ != nullptr) self->pipeline_->version_gate().Settle();
      });
  server->log_ = std::make_unique<pipeline::CallLog>(server->metrics_.get(), stderr);
  server->change_stream_health_ = std::make_unique<pipeline::ChangeStreamHealth>(
      server->metrics_.get(),
      [self = server.get()](bool healthy) { self->SetChangeStreamsServing(healthy); });
  server->pipeline_ = std::make_unique<pipeline::ExportPipeline>(
      server->pool_.get(), service_options, server->log_.get(), server->metrics_.get(),
      server->metrics_.get(), server->change_stream_health_.get());
  server->service_ = std::make_unique<grpc_door::DataValueExportService>(server->pipeline_.get());
  absl::Status started = server->StartHttp(options);
  if (started.ok()) started = server->StartGrpc(options);
  if (!started.ok()) return started;
  absl::StatusOr<grpc_door::ListenerAddress> listener = grpc_door::ResolveListenerAddress(
      options.listen, server->port_, !options.tls_cert_file.empty());
  if (!listener.ok()) return listener.status();
  server->listener_ = *std::move(listener);
  server->on_listener_lost_ = options.on_listener_lost;
  // NOT_SERVING until a probe says otherwise; the prober probes at once, and Start waits for
  // that first answer only briefly: a database that does not answer never holds up startup. The
  // change streams' status, registered here, waits for the monitor's first poll.
  if (options.service.change_stream_poll.count() > 0) {
    server->server_->GetHealthCheckService()->SetServingStatus(
        pipeline::kChangeStreamsHealthService, false);
  }
  server->server_->GetHealthCheckService()->SetServingStatus(false);
  server->probe_timeout_ = std::min(options.health_probe_interval, kMaxProbeTimeout);
  server->prober_ =
      std::thread(&ExportServer::RunProber, server.get(), options.health_probe_interval);
  // Its first poll logs the kind of change token this database gives (and why not stream).
  server->pipeline_->change_streams().Start();
  server->watchdog_ = std::thread(&ExportServer::RunListenerWatchdog, server.get(),
                                  options.listener_probe_interval);
  std::unique_lock<std::mutex> lock(server->prober_mu_);
  server->prober_wake_.wait_for(lock, kFirstProbeWait, [&server]() { return server->probes_ > 0; });
  return server;
}

absl::Status ExportServer::StartMetrics(const ServerOptions& options) {
  if (!options.metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<pipeline::ServerMetrics>> metrics =
        pipeline::ServerMetrics::Start(
            options.metrics_listen,
            {.active_exports =
                 [this] { return pipeline_ == nullptr ? 0 : pipeline_->active_exports(); },
             .queued_exports =
                 [this] { return pipeline_ == nullptr ? 0 : pipeline_->queued_exports(); },
             .db_pool_in_use = [this] { return pool_->in_use(); },
             .http_connections = options.http.listen.empty()
                                     ? std::function<int64_t()>()
                                     : [this] { return HttpStat(&http::HttpServer::connections); },
             .http_pending_heads = [this] { return HttpStat(&http::HttpServer::pending_heads); },
             .http_evicted_heads = [this] { return HttpStat(&http::HttpServer::evicted_heads); },
             .http_connection_failures =
                 [this] { return HttpStat(&http::HttpServer::connection_failures); }});
    if (!metrics.ok()) return metrics.status();
    metrics_ = *std::move(metrics);
  }
  if (metrics_ != nullptr) {
    metrics_->SetAuthMode(options.service.auth == pipeline::AuthMode::kDhis2 ? "dhis2" : "none");
  }
  return absl::OkStatus();
}

absl::Status ExportServer::StartHttp(const ServerOptions& options) {
  if (!options.http.listen.empty()) {
    http::HttpServerOptions http_options = options.http;
    http_options.tls_cert_file = options.tls_cert_file;
    http_options.tls_key_file = options.tls_key_file;
    http_options.tls_client_ca_file = options.tls_client_ca_file;
    absl::StatusOr<std::unique_ptr<http::HttpServer>> http =
        http::HttpServer::Start(http_options, pipeline_.get());
    if (!http.ok()) return http.status();
    http_ = *std::move(http);
    std::lock_guard<std::mutex> lock(http_stats_mu_);
    http_stats_ = http_.get();
  }
  return absl::OkStatus();
}

absl::Status ExportServer::StartGrpc(const ServerOptions& options) {
  grpc::EnableDefaultHealthCheckService(true);
  // gRPC's health service is built in without its descriptors: linking them in lets reflection
  // describe grpc.health.v1.Health (ghz --call grpc.health.v1.Health.Check needs no --proto).
  google::protobuf::LinkMessageReflection<grpc::health::v1::HealthCheckRequest>();
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials = MakeCredentials(options);
  if (!credentials.ok()) return credentials.status();
  builder.AddListeningPort(options.listen, *credentials, &port_);
  grpc::ResourceQuota quota("dvexport");
  quota.SetMaxThreads(options.max_threads > 0 ? options.max_threads
                                              : options.service.max_concurrent_exports + 16);
  builder.SetResourceQuota(quota);
  // A call whose request headers exceed this is refused (RESOURCE_EXHAUSTED); sent to clients
  // as SETTINGS_MAX_HEADER_LIST_SIZE. Room for an authorization header of a few KiB. gRPC 1.51
  // applies it only once the client has acknowledged the server's SETTINGS: it does not bound a
  // CONTINUATION flood (docs/SECURITY.md).
  builder.AddChannelArgument(GRPC_ARG_MAX_METADATA_SIZE, kMaxRequestHeaderBytes);
  if (options.max_connection_age.count() > 0) {
    const std::chrono::milliseconds age = options.max_connection_age;
    if (age.count() > INT_MAX) {
      return absl::InvalidArgumentError(
          absl::StrCat("max_connection_age: ", options.max_connection_age.count(),
                       " s is more than gRPC's int milliseconds hold (", INT_MAX / 1000, " s)"));
    }
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS, static_cast<int>(age.count()));
    // Calls in flight on an aged connection run to their end, however long.
    builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS, INT_MAX);
  }
  builder.AddChannelArgument(GRPC_ARG_SERVER_HANDSHAKE_TIMEOUT_MS,
                             static_cast<int>(options.handshake_timeout.count()));
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIME_MS, kKeepaliveTimeMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, kKeepaliveTimeoutMs);
  // Keep pinging while no data moves (a stalled stream): 0 is "no limit".
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             kMinClientPingIntervalMs);
  builder.RegisterService(service_.get());
  server_ = builder.BuildAndStart();
  if (server_ == nullptr || port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen));
  }
  return absl::OkStatus();
}

void ExportServer::ProbeDatabase() {
  bool serving = pool_
                     ->Probe(probe_timeout_,
                             [this] {
                               std::lock_guard<std::mutex> lock(prober_mu_);
                               return prober_stop_;
                             })
                     .ok();
  // Serving needs a DHIS2 that is served: the newest connection's decision, read here if no
  // call opened a connection yet, and again while it is a refusal (a refused connection is not
  // kept, so that a database made readable or upgraded is seen).
  if (serving) {
    const std::optional<dhis2::Dhis2Version> last = pool_->dhis2_version();
    if (!last.has_value() || !last->support.ok()) pipeline_->ReadDhis2Version(probe_timeout_);
  }
  const std::optional<dhis2::Dhis2Version> version = pool_->dhis2_version();
  serving = serving && version.has_value() && version->support.ok();
  std::lock_guard<std::mutex> lock(prober_mu_);
  // Shutdown and a lost listener set NOT_SERVING for good: a probe that ends after must not undo
  // that.
  // The server's own status (""); the change streams' is the monitor's.
  if (!prober_stop_ && !listener_lost_) {
    server_->GetHealthCheckService()->SetServingStatus("", serving);
  }
  ++probes_;
  prober_wake_.notify_all();
}

void ExportServer::RunProber(std::chrono::milliseconds interval) {
  ProbeDatabase();
  std::unique_lock<std::mutex> lock(prober_mu_);
  while (!prober_wake_.wait_for(lock, interval, [this] { return prober_stop_; })) {
    lock.unlock();
    ProbeDatabase();
    lock.lock();
  }
}

void ExportServer::RunListenerWatchdog(std::chrono::milliseconds interval) {
  const std::chrono::milliseconds timeout =
      std::clamp(interval, kMinListenerProbeTimeout, kMaxProbeTimeout);
  int failures = 0;
  std::unique_lock<std::mutex> lock(prober_mu_);
  while (!prober_wake_.wait_for(lock, interval, [this] { return prober_stop_; })) {
    lock.unlock();
    const int64_t dropped_before = grpc_door::ConnectionsDroppedByGuard();
    const absl::Status probe = grpc_door::ProbeListener(listener_, timeout);
    // The guard dropped connections meanwhile (the probe's among them): the listener accepts.
    const bool full = grpc_door::ConnectionsDroppedByGuard() != dropped_before;
    if (probe.ok() || full) {
      failures = 0;
      lock.lock();
      continue;
    }
    ++failures;
    LogListenerEvent("listener_probe_failed",
                     absl::StrCat("\"failures\":", failures, ",\"of\":", kListenerProbeFailures),
                     probe.message());
    lock.lock();
    if (failures < kListenerProbeFailures) continue;
    listener_lost_ = true;
    if (!prober_stop_) server_->GetHealthCheckService()->SetServingStatus(false);
    lock.unlock();
    LogListenerEvent("listener_lost", absl::StrCat("\"port\":", port_), probe.message());
    if (on_listener_lost_) on_listener_lost_();
    return;
  }
}

void ExportServer::SetChangeStreamsServing(bool serving) {
  std::lock_guard<std::mutex> lock(prober_mu_);
  // The monitor starts after server_ is built.
  if (prober_stop_ || listener_lost_) return;
  server_->GetHealthCheckService()->SetServingStatus(pipeline::kChangeStreamsHealthService,
                                                     serving);
}

bool ExportServer::listener_lost() const {
  std::lock_guard<std::mutex> lock(prober_mu_);
  return listener_lost_;
}

void ExportServer::StopProber() {
  {
    std::lock_guard<std::mutex> lock(prober_mu_);
    prober_stop_ = true;
  }
  prober_wake_.notify_all();
  if (prober_.joinable()) prober_.join();
  if (watchdog_.joinable()) watchdog_.join();
  // Its poll in flight is cancelled: shutdown waits at most about a second for it.
  if (pipeline_ != nullptr) pipeline_->change_streams().Stop();
}

ExportServer::~ExportServer() {
  {
    // No scrape reads the HTTP door once it starts going.
    std::lock_guard<std::mutex> lock(http_stats_mu_);
    http_stats_ = nullptr;
  }
  StopProber();
  if (http_ != nullptr) http_->Shutdown(std::chrono::system_clock::now());
  if (server_ != nullptr) {
    server_->Shutdown(std::chrono::system_clock::now());
    server_->Wait();
  }
  // Server::Wait has seen every call end; their last steps (OnDone) may still be on their way
  // out. Bounded: gRPC and the HTTP door have finished them.
  if (pipeline_ != nullptr) pipeline_->WaitForCalls(std::chrono::seconds(30));
}

void ExportServer::Shutdown(std::chrono::system_clock::time_point deadline) {
  StopProber();
  server_->GetHealthCheckService()->SetServingStatus(false);
  // New calls of both doors are refused from now on; running ones run on.
  pipeline_->StopAdmitting();
  // Both doors close at once, and their running calls share the same deadline.
  std::thread http_shutdown;
  if (http_ != nullptr)
    http_shutdown = std::thread([this, deadline] { http_->Shutdown(deadline); });
  // gRPC closes a connection as soon as its last call ended after Server::Shutdown, resetting it
  // when the client reads on (see connection_activity.h): so the running calls end first, and
  // their clients read the end of what they were sent, before gRPC is told to shut down.
  const auto remaining = std::clamp<std::chrono::system_clock::duration>(
      deadline - std::chrono::system_clock::now(), std::chrono::system_clock::duration::zero(),
      std::chrono::hours(48));
  const auto settle_by = std::chrono::steady_clock::now() +
                         std::chrono::duration_cast<std::chrono::steady_clock::duration>(remaining);
  // A call that ended just before the signal may still have its end on the way: the connections
  // settle even when no call is running.
  const bool settled =
      pipeline_->WaitForCalls(std::chrono::duration_cast<std::chrono::milliseconds>(remaining)) &&
      grpc_door::WaitForConnectionsToSettle(kSettledAfter, settle_by);
  // With nothing left to lose, gRPC's graceful GOAWAY (a PING the client must answer, which an
  // idle synchronous client does only every few seconds) gets a second, not the whole grace.
  server_->Shutdown(settled ? std::min(deadline, std::chrono::system_clock::now() + kGoawayWait)
                            : deadline);
  if (http_shutdown.joinable()) http_shutdown.join();
}

void ExportServer::Wait() { server_->Wait(); }

}  // namespace dvexport::server
