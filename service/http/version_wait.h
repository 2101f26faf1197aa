#ifndef DVEXPORT_SERVICE_HTTP_VERSION_WAIT_H_
#define DVEXPORT_SERVICE_HTTP_VERSION_WAIT_H_

#include <atomic>
#include <chrono>
#include <memory>

namespace dvexport::pipeline {
class ExportPipeline;
}  // namespace dvexport::pipeline

namespace dvexport::http {

// A request's wait for the database's DHIS2 version, which decides its routes and parameters:
// while the server does not know it yet (started while the database was down, or before its
// first connection), the request waits for one attempt to learn it (pipeline::AwaitDhis2Version),
// polled on the connection's timer every kPoll, for at most kMaxWait (an attempt takes at most
// 5 s).
class VersionWait {
 public:
  static constexpr std::chrono::milliseconds kPoll{5};
  static constexpr std::chrono::seconds kMaxWait{30};

  // True while the request must wait ("stopping": the server shuts down, and nobody waits).
  bool Waiting(pipeline::ExportPipeline* pipeline, bool stopping);

 private:
  std::shared_ptr<const std::atomic<bool>> settled_;  // set while a request waits
  std::chrono::steady_clock::time_point until_;
};

// The DHIS2 version whose routes and parameters a request gets: the database's; the newest when
// it could not be learned (the database cannot be reached): the export then fails as the database
// fails it (503), where an older version's routes could refuse a newer one's request.
int RoutesVersion(pipeline::ExportPipeline* pipeline);

}  // namespace dvexport::http

#endif  // DVEXPORT_SERVICE_HTTP_VERSION_WAIT_H_
