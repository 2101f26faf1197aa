#include "service/pipeline/metrics.h"

#include <prometheus/collectable.h>
#include <prometheus/counter.h>
#include <prometheus/exposer.h>
#include <prometheus/family.h>
#include <prometheus/gauge.h>
#include <prometheus/histogram.h>
#include <prometheus/registry.h>

#include <exception>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"

namespace dvexport::pipeline {

// Gauges whose values live elsewhere (the service, the pool): read when scraped.
class GaugeCollectable final : public prometheus::Collectable {
 public:
  explicit GaugeCollectable(ServerMetrics::GaugeSources sources) : sources_(std::move(sources)) {}

  std::vector<prometheus::MetricFamily> Collect() const override {
    std::vector<prometheus::MetricFamily> families = {
        Gauge("dvexport_active_exports", "Exports holding an export slot now.",
              sources_.active_exports),
        Gauge("dvexport_queued_exports", "Exports waiting for an export slot now.",
              sources_.queued_exports),
        Gauge("dvexport_db_pool_in_use", "Database connections borrowed from the pool now.",
              sources_.db_pool_in_use)};
    if (sources_.http_connections) {
      families.push_back(Gauge("dvexport_http_connections",
                               "Connections of the HTTP door open now.",
                               sources_.http_connections));
      families.push_back(Gauge("dvexport_http_pending_heads",
                               "Connections of the HTTP door waiting for a request's head now.",
                               sources_.http_pending_heads));
      families.push_back(Counter("dvexport_http_evicted_heads_total",
                                 "Connections of the HTTP door closed while waiting for a head, "
                                 "to make room for a newer one (--http_max_pending_heads).",
                                 sources_.http_evicted_heads));
      families.push_back(Counter("dvexport_http_connection_failures_total",
                                 "Connections of the HTTP door ended by an unexpected exception "
                                 "(each logged as http_connection_failed).",
                                 sources_.http_connection_failures));
    }
    return families;
  }

 private:
  template <class Source>
  static prometheus::MetricFamily Gauge(const char* name, const char* help, const Source& source) {
    return Family(name, help, prometheus::MetricType::Gauge, source);
  }

  template <class Source>
  static prometheus::MetricFamily Counter(const char* name, const char* help,
                                          const Source& source) {
    return Family(name, help, prometheus::MetricType::Counter, source);
  }

  // One sample of "type", read from "source" now (0 without one).
  template <class Source>
  static prometheus::MetricFamily Family(const char* name, const char* help,
                                         prometheus::MetricType type, const Source& source) {
    prometheus::MetricFamily family;
    family.name = name;
    family.help = help;
    family.type = type;
    const double value = source ? static_cast<double>(source()) : 0;
    prometheus::ClientMetric metric;
    if (type == prometheus::MetricType::Counter) {
      metric.counter.value = value;
    } else {
      metric.gauge.value = value;
    }
    family.metric.push_back(metric);
    return family;
  }

  const ServerMetrics::GaugeSources sources_;
};

namespace {

// 1 ms to about 17 minutes, doubling.
const prometheus::Histogram::BucketBoundaries& SecondsBuckets() {
  static const prometheus::Histogram::BucketBoundaries* const buckets = [] {
    auto* bounds = new prometheus::Histogram::BucketBoundaries();
    for (double bound = 0.001; bound < 1100; bound *= 2) bounds->push_back(bound);
    return bounds;
  }();
  return *buckets;
}

// CivetWeb (Debian's 1.15, under prometheus::Exposer) serves each connection on one of
// kMetricsThreads worker threads, from the request line to the response; the others wait in its
// queue. A connection whose request headers are not complete kMetricsRequestTimeoutMs after its
// worker took it is closed, however slowly it drips them: so that slow connections cannot hold
// every worker (issue 19). The timeout also bounds each write of the response.
constexpr int kMetricsThreads = 16;
constexpr int kMetricsRequestTimeoutMs = 5000;

}  // namespace

// The calls: how many, what they sent, how long they took.
void ServerMetrics::RegisterCallFamilies(prometheus::Registry& registry) {
  exports_ = &prometheus::BuildCounter()
                  .Name("dvexport_exports_total")
                  .Help(
                      "DataValueExport calls finished, by transport (grpc, http), "
                      "rpc, format, compression and gRPC status code.")
                  .Register(registry);
  values_sent_ = &prometheus::BuildCounter()
                      .Name("dvexport_values_sent_total")
                      .Help("Data values sent.")
                      .Register(registry);
  bytes_sent_ = &prometheus::BuildCounter()
                     .Name("dvexport_bytes_sent_total")
                     .Help("Bytes sent: gRPC messages as serialized, HTTP bodies as framed.")
                     .Register(registry);
  duration_ = &prometheus::BuildHistogram()
                   .Name("dvexport_export_duration_seconds")
                   .Help("From a call's arrival to its status.")
                   .Register(registry);
  first_byte_ = &prometheus::BuildHistogram()
                     .Name("dvexport_time_to_first_byte_seconds")
                     .Help("From a call's arrival to its first message.")
                     .Register(registry);
  slot_wait_ = &prometheus::BuildHistogram()
                    .Name("dvexport_export_slot_wait_seconds")
                    .Help("How long an export waited for its export slot (0: one was free).")
                    .Register(registry)
                    .Add({}, SecondsBuckets());
}

// Admission: refusals, the per-user cap, stalled clients.
void ServerMetrics::RegisterAdmissionFamilies(prometheus::Registry& registry) {
  refused_ = &prometheus::BuildCounter()
                  .Name("dvexport_exports_refused_total")
                  .Help(
                      "Exports refused an export slot, by reason: queue_full (at once), "
                      "user_queue_full (at once: --max_queued_exports_per_user of the "
                      "caller wait already), max_wait (--max_queue_wait_ms ran out), "
                      "deadline (the call's deadline came first).")
                  .Register(registry);
  user_cap_waits_ = &prometheus::BuildCounter()
                         .Name("dvexport_export_slot_user_cap_waits_total")
                         .Help(
                             "Exports that queued although an export slot was free, "
                             "because their user held --max_exports_per_user slots.")
                         .Register(registry)
                         .Add({});
  stalled_ = &prometheus::BuildCounter()
                  .Name("dvexport_stalled_exports_total")
                  .Help(
                      "Streaming exports ended because their client read nothing, by "
                      "the timeout that ended them: stall_timeout (--stall_timeout_s), "
                      "stall_timeout_contended (--stall_timeout_contended_s, while "
                      "exports of other users waited for a slot).")
                  .Register(registry);
}

// Authentication: refusals, the identity cache, the mode.
void ServerMetrics::RegisterAuthFamilies(prometheus::Registry& registry) {
  auth_refusals_ =
      &prometheus::BuildCounter()
           .Name("dvexport_auth_refusals_total")
           .Help(
               "Calls refused an identity, by reason: DHIS2's refusals (no_credentials, "
               "malformed_token, bad_checksum, unknown_token, token_expired, wrong_password (an "
               "unknown user too), account_disabled, ip_not_allowed, ...), rate_limited (too "
               "many failed attempts from the peer or for the username), queue_full (too many "
               "verifications waiting), unavailable (the database, the deadline, a cancelled "
               "call).")
           .Register(registry);
  auth_cache_ = &prometheus::BuildCounter()
                     .Name("dvexport_auth_cache_lookups_total")
                     .Help(
                         "Well-formed credentials looked up in the identity cache, by "
                         "result: hit (no database, no bcrypt) or miss (verified).")
                     .Register(registry);
  auth_mode_ = &prometheus::BuildGauge()
                    .Name("dvexport_auth_mode")
                    .Help(
                        "1 for the server's --auth: dhis2 (DHIS2 identities) or none "
                        "(no authentication: whoever reaches the port reads everything).")
                    .Register(registry);
  dhis2_version_ = &prometheus::BuildGauge()
                        .Name("dvexport_dhis2_version")
                        .Help(
                            "1 for the DHIS2 the newest database connection found: the version "
                            "found, the version served (none when refused), what told it "
                            "(flyway, schema, flag) and whether it is served, served with a "
                            "warning (a newer DHIS2 served as the newest known) or refused.")
                        .Register(registry);
}

// The change streams, as the monitor last saw them.
void ServerMetrics::RegisterChangeStreamFamilies(prometheus::Registry& registry) {
  change_token_kind_ =
      &prometheus::BuildGauge()
           .Name("dvexport_change_token_kind")
           .Help(
               "1 for the kind of change token the database gives as the change stream monitor "
               "last saw it (stream: logical decoding, a change stream per consumer; snapshot: "
               "the xmin token), 0 for the other; absent until its first poll "
               "(--change_stream_poll_s).")
           .Register(registry);
  stream_retained_ =
      &prometheus::BuildGauge()
           .Name("dvexport_change_stream_retained_wal_bytes")
           .Help(
               "WAL a change stream's replication slot keeps from being removed (the server's "
               "WAL position minus the slot's restart_lsn), at the monitor's last poll.")
           .Register(registry);
  stream_idle_ =
      &prometheus::BuildGauge()
           .Name("dvexport_change_stream_idle_seconds")
           .Help(
               "Seconds since the monitor last saw a change stream's confirmed position move "
               "(counted from when this server first saw the slot), at its last poll.")
           .Register(registry);
  stream_lost_ =
      &prometheus::BuildGauge()
           .Name("dvexport_change_stream_lost")
           .Help(
               "1 when a change stream's slot is lost (wal_status lost: PostgreSQL removed WAL "
               "it needed; its consumer must export everything again), else 0.")
           .Register(registry);
}

absl::StatusOr<std::unique_ptr<ServerMetrics>> ServerMetrics::Start(const std::string& listen,
                                                                    GaugeSources sources) {
  std::unique_ptr<ServerMetrics> metrics(new ServerMetrics());
  metrics->registry_ = std::make_shared<prometheus::Registry>();
  prometheus::Registry& registry = *metrics->registry_;
  metrics->RegisterCallFamilies(registry);
  metrics->RegisterAdmissionFamilies(registry);
  metrics->RegisterAuthFamilies(registry);
  metrics->RegisterChangeStreamFamilies(registry);
  metrics->gauges_ = std::make_shared<GaugeCollectable>(std::move(sources));
  try {
    metrics->exposer_ = std::make_unique<prometheus::Exposer>(std::vector<std::string>{
        "listening_ports", listen, "num_threads", std::to_string(kMetricsThreads),
        "request_timeout_ms", std::to_string(kMetricsRequestTimeoutMs)});
  } catch (const std::exception& e) {
    return absl::UnavailableError(absl::StrCat("cannot serve metrics on ", listen, ": ", e.what()));
  }
  metrics->exposer_->RegisterCollectable(metrics->registry_);
  metrics->exposer_->RegisterCollectable(metrics->gauges_);
  std::vector<int> ports = metrics->exposer_->GetListeningPorts();
  if (ports.empty())
    return absl::UnavailableError(absl::StrCat("cannot serve metrics on ", listen));
  metrics->port_ = ports.front();
  return metrics;
}

// The exposer (and its threads, which call the gauge sources) goes first.
ServerMetrics::~ServerMetrics() { exposer_.reset(); }

void ServerMetrics::Record(const CallRecord& call) {
  exports_
      ->Add({{"transport", call.transport},
             {"rpc", call.rpc},
             {"format", call.format},
             {"compression", call.compression},
             {"code", call.code}})
      .Increment();
  if (call.values > 0 && call.rpc != "CountDataValues") {
    values_sent_->Add({{"transport", call.transport}, {"rpc", call.rpc}}).Increment(call.values);
  }
  if (call.bytes > 0)
    bytes_sent_->Add({{"transport", call.transport}, {"rpc", call.rpc}}).Increment(call.bytes);
  duration_->Add({{"transport", call.transport}, {"rpc", call.rpc}}, SecondsBuckets())
      .Observe(call.seconds);
  if (call.first_byte_seconds >= 0) {
    first_byte_->Add({{"transport", call.transport}, {"rpc", call.rpc}}, SecondsBuckets())
        .Observe(call.first_byte_seconds);
  }
  if (!call.stall.empty()) stalled_->Add({{"timeout", call.stall}}).Increment();
}

void ServerMetrics::SlotWaited(double seconds) { slot_wait_->Observe(seconds); }

void ServerMetrics::SlotRefused(SlotRefusal reason) {
  const char* label = "queue_full";
  switch (reason) {
    case SlotRefusal::kQueueFull:
      label = "queue_full";
      break;
    case SlotRefusal::kUserQueueFull:
      label = "user_queue_full";
      break;
    case SlotRefusal::kMaxWait:
      label = "max_wait";
      break;
    case SlotRefusal::kDeadline:
      label = "deadline";
      break;
  }
  refused_->Add({{"reason", label}}).Increment();
}

void ServerMetrics::SetAuthMode(const std::string& mode) {
  auth_mode_->Add({{"mode", mode}}).Set(1);
}

void ServerMetrics::SetDhis2Version(const dhis2::Dhis2Version& version) {
  const char* status = !version.support.ok()     ? "refused"
                       : version.warning.empty() ? "served"
                                                 : "served_with_warning";
  std::lock_guard<std::mutex> lock(dhis2_version_mu_);
  if (dhis2_version_series_ != nullptr) dhis2_version_->Remove(dhis2_version_series_);
  dhis2_version_series_ = &dhis2_version_->Add(
      {{"found", version.found == 0 ? "none" : dhis2::VersionName(version.found)},
       {"served", version.served == 0 ? "none" : dhis2::VersionName(version.served)},
       {"source", dhis2::VersionSourceName(version.source)},
       {"status", status}});
  dhis2_version_series_->Set(1);
}

void ServerMetrics::AuthRefused(const std::string& reason) {
  auth_refusals_->Add({{"reason", reason}}).Increment();
}

void ServerMetrics::AuthCacheLookup(bool hit) {
  auth_cache_->Add({{"result", hit ? "hit" : "miss"}}).Increment();
}

void ServerMetrics::SlotUserCapWait() { user_cap_waits_->Increment(); }

void ServerMetrics::ChangeTokenKindPolled(bool stream) {
  change_token_kind_->Add({{"kind", "stream"}}).Set(stream ? 1 : 0);
  change_token_kind_->Add({{"kind", "snapshot"}}).Set(stream ? 0 : 1);
}

void ServerMetrics::ChangeStreamsPolled(const std::vector<ChangeStreamGauges>& streams) {
  std::lock_guard<std::mutex> lock(streams_mu_);
  std::map<std::string, StreamSeries> now;
  for (const ChangeStreamGauges& stream : streams) {
    StreamSeries series;
    auto it = streams_.find(stream.slot);
    if (it != streams_.end()) {
      series = it->second;
      streams_.erase(it);
    } else {
      const prometheus::Labels labels = {{"slot", stream.slot}};
      series = {.retained_wal_bytes = &stream_retained_->Add(labels),
                .idle_seconds = &stream_idle_->Add(labels),
                .lost = &stream_lost_->Add(labels)};
    }
    series.retained_wal_bytes->Set(static_cast<double>(stream.retained_wal_bytes));
    series.idle_seconds->Set(static_cast<double>(stream.idle_seconds));
    series.lost->Set(stream.lost ? 1 : 0);
    now.emplace(stream.slot, series);
  }
  // What is left was dropped: its series go, so that a dashboard does not keep a dead slot.
  for (const auto& [slot, series] : streams_) {
    stream_retained_->Remove(series.retained_wal_bytes);
    stream_idle_->Remove(series.idle_seconds);
    stream_lost_->Remove(series.lost);
  }
  streams_ = std::move(now);
}

}  // namespace dvexport::pipeline
