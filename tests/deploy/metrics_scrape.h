#ifndef DVEXPORT_TESTS_DEPLOY_METRICS_SCRAPE_H_
#define DVEXPORT_TESTS_DEPLOY_METRICS_SCRAPE_H_

#include <chrono>
#include <string>
#include <vector>

namespace dvexport::testing {

// GET http://127.0.0.1:<port><path> over a plain socket, HTTP/1.0; returns the
// body, or "" (and fails the calling test) when the request fails, the status
// is not 200, or a read or write waits longer than "timeout".
std::string HttpGet(int port, const std::string& path,
                    std::chrono::milliseconds timeout = std::chrono::seconds(10));

// The sum of the samples in Prometheus text "exposition" whose metric name is
// "name" and whose labels include each of "labels" (e.g. "code=\"OK\"").
double SumSamples(const std::string& exposition, const std::string& name,
                  const std::vector<std::string>& labels = {});

}  // namespace dvexport::testing

#endif  // DVEXPORT_TESTS_DEPLOY_METRICS_SCRAPE_H_
