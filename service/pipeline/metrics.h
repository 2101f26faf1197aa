#ifndef DVEXPORT_SERVICE_PIPELINE_METRICS_H_
#define DVEXPORT_SERVICE_PIPELINE_METRICS_H_

#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "service/auth/authenticator.h"
#include "service/dhis2/dhis2_version.h"
#include "service/pipeline/call_record.h"
#include "service/pipeline/change_stream_observer.h"
#include "service/pipeline/export_slots.h"

namespace prometheus {
class Counter;
class Exposer;
class Histogram;
class Registry;
class Gauge;
template <typename T>
class Family;
}  // namespace prometheus

namespace dvexport::pipeline {

class GaugeCollectable;

// Prometheus metrics of a dvexport server, served over HTTP at /metrics:
//   dvexport_exports_total{transport,rpc,format,compression,code}    counter
//   dvexport_values_sent_total{transport,rpc}, dvexport_bytes_sent_total{transport,rpc}
//   dvexport_export_duration_seconds{transport,rpc}        histogram
//   dvexport_time_to_first_byte_seconds{transport,rpc}     histogram
//   dvexport_export_slot_wait_seconds                      histogram (exports given a slot)
//   dvexport_auth_refusals_total{reason}                  counter: auth::RefusalReason's
//                                                          (wrong_password, ...), rate_limited,
//                                                          queue_full, unavailable
//   dvexport_auth_cache_lookups_total{result}              counter: hit, miss
//   dvexport_auth_mode{mode}                               gauge: 1 for the server's --auth
//   dvexport_dhis2_version{found,served,source,status}     gauge: 1 for the DHIS2 the newest
//                                                          database connection found; status
//                                                          served, served_with_warning, refused
//   dvexport_exports_refused_total{reason}                 counter: queue_full, user_queue_full,
//                                                          max_wait, deadline
//   dvexport_export_slot_user_cap_waits_total              counter: exports queued although a
//                                                          slot was free (their user at its cap)
//   dvexport_stalled_exports_total{timeout}                counter: stall_timeout,
//                                                          stall_timeout_contended
//   dvexport_active_exports, dvexport_queued_exports,
//   dvexport_db_pool_in_use                                gauges, read at each scrape
//   dvexport_change_token_kind{kind}                       gauge: 1 for the kind of change token
//                                                          the database gives (stream, snapshot),
//                                                          0 for the other
//   dvexport_change_stream_retained_wal_bytes{slot},
//   dvexport_change_stream_idle_seconds{slot},
//   dvexport_change_stream_lost{slot}                      gauges of each change stream as the
//                                                          change stream monitor's last poll saw
//                                                          it; a dropped slot's series go
// Thread-safe.
class ServerMetrics final : public SlotObserver,
                            public auth::AuthObserver,
                            public ChangeStreamObserver {
 public:
  // Reads the gauges' current values.
  struct GaugeSources {
    std::function<int()> active_exports;
    std::function<int()> queued_exports;
    std::function<int()> db_pool_in_use;
    // The HTTP door's, when it is open (the family is left out when not set): connections open
    // now, connections waiting for a request's head now, and since the start connections closed
    // for a newer head (--http_max_pending_heads) and connections ended by an exception.
    std::function<int64_t()> http_connections;
    std::function<int64_t()> http_pending_heads;
    std::function<int64_t()> http_evicted_heads;
    std::function<int64_t()> http_connection_failures;
  };

  // Serves /metrics on "listen" (host:port; port 0 picks a free port). The
  // sources are called on the HTTP server's threads and must stay callable
  // until the ServerMetrics is destroyed.
  static absl::StatusOr<std::unique_ptr<ServerMetrics>> Start(const std::string& listen,
                                                              GaugeSources sources);
  ~ServerMetrics();

  // The port actually bound.
  int port() const { return port_; }

  void Record(const CallRecord& call);

  void SlotWaited(double seconds) override;
  void SlotRefused(SlotRefusal reason) override;
  void SlotUserCapWait() override;

  // dvexport_auth_mode{mode="<mode>"} 1 ("dhis2" or "none").
  void SetAuthMode(const std::string& mode);
  void AuthRefused(const std::string& reason) override;
  void AuthCacheLookup(bool hit) override;

  // dvexport_dhis2_version{...} 1 for "version" (the previous decision's series is removed).
  void SetDhis2Version(const dhis2::Dhis2Version& version);

  void ChangeTokenKindPolled(bool stream) override;
  void ChangeStreamsPolled(const std::vector<ChangeStreamGauges>& streams) override;

 private:
  // The series of one change stream.
  struct StreamSeries {
    prometheus::Gauge* retained_wal_bytes = nullptr;
    prometheus::Gauge* idle_seconds = nullptr;
    prometheus::Gauge* lost = nullptr;
  };

  ServerMetrics() = default;
  // Start's steps: the families of each kind of series, registered in "registry".
  void RegisterCallFamilies(prometheus::Registry& registry);
  void RegisterAdmissionFamilies(prometheus::Registry& registry);
  void RegisterAuthFamilies(prometheus::Registry& registry);
  void RegisterChangeStreamFamilies(prometheus::Registry& registry);

  std::shared_ptr<prometheus::Registry> registry_;
  std::shared_ptr<GaugeCollectable> gauges_;
  std::unique_ptr<prometheus::Exposer> exposer_;
  prometheus::Family<prometheus::Counter>* exports_ = nullptr;
  prometheus::Family<prometheus::Counter>* values_sent_ = nullptr;
  prometheus::Family<prometheus::Counter>* bytes_sent_ = nullptr;
  prometheus::Family<prometheus::Histogram>* duration_ = nullptr;
  prometheus::Family<prometheus::Histogram>* first_byte_ = nullptr;
  prometheus::Histogram* slot_wait_ = nullptr;
  prometheus::Family<prometheus::Counter>* refused_ = nullptr;
  prometheus::Family<prometheus::Counter>* auth_refusals_ = nullptr;
  prometheus::Family<prometheus::Counter>* auth_cache_ = nullptr;
  prometheus::Family<prometheus::Gauge>* auth_mode_ = nullptr;
  prometheus::Family<prometheus::Gauge>* dhis2_version_ = nullptr;
  std::mutex dhis2_version_mu_;
  prometheus::Gauge* dhis2_version_series_ ABSL_GUARDED_BY(dhis2_version_mu_) = nullptr;
  prometheus::Counter* user_cap_waits_ = nullptr;
  prometheus::Family<prometheus::Counter>* stalled_ = nullptr;
  prometheus::Family<prometheus::Gauge>* change_token_kind_ = nullptr;
  prometheus::Family<prometheus::Gauge>* stream_retained_ = nullptr;
  prometheus::Family<prometheus::Gauge>* stream_idle_ = nullptr;
  prometheus::Family<prometheus::Gauge>* stream_lost_ = nullptr;
  std::mutex streams_mu_;
  std::map<std::string, StreamSeries> streams_ ABSL_GUARDED_BY(streams_mu_);
  int port_ = 0;
};

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_METRICS_H_
