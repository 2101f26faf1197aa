#ifndef DVEXPORT_TESTS_INTEGRATION_DHIS2_243_SUPPORT_H_
#define DVEXPORT_TESTS_INTEGRATION_DHIS2_243_SUPPORT_H_

// What the DHIS2 2.43 export tests share: the demo in 2.43's schema (DVEXPORT_TEST_PG_243), an
// in-process dvexport server on it, its exports as rows, DHIS2's query's rows, and the keys of
// DHIS2's ORDER BY columns.

#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "dvexport/v1/export.grpc.pb.h"
#include "service/db/read_session_options.h"
#include "service/server/export_server.h"

namespace dvexport::testing {

// DVEXPORT_TEST_PG_243 (scripts/test sets it); empty when it is not set.
std::string Conninfo243();

// One data value with the columns DHIS2's query reads (less de.valuetype).
struct ExportRow {
  std::string data_element, period, org_unit, category_option_combo, attribute_option_combo;
  std::optional<std::string> value, stored_by;
  std::string created, last_updated;  // PostgreSQL's text of the timestamps, microseconds
  std::optional<std::string> comment;
  std::optional<bool> followup;  // nullopt: NULL
  bool deleted = false;

  auto operator<=>(const ExportRow&) const = default;
};

std::string Describe(const ExportRow& row);

// The rows of DHIS2's query "sql" (its columns by name), in its order.
std::vector<ExportRow> QueryDhis2Rows(const std::string& conninfo, const std::string& sql);

// "rows" with a NULL followup as false: the typed stream's bool cannot say NULL.
std::vector<ExportRow> FollowupNullAsFalse(std::vector<ExportRow> rows);

// Equal as multisets / as sequences, the first differences named. "what" names the comparison.
void ExpectSameMultiset(std::vector<ExportRow> got, std::vector<ExportRow> want,
                        const std::string& what);
void ExpectSameSequence(const std::vector<ExportRow>& got, const std::vector<ExportRow>& want,
                        const std::string& what);

// The values of DHIS2's ORDER BY columns as ranks in the database's own order (its collation for
// UIDs), so that a sequence's keys can be compared without the database.
class OrderKeys {
 public:
  explicit OrderKeys(const std::string& conninfo);

  // The key of "row" under "orders" (DHIS2's ORDER BY columns of them, each once).
  std::vector<int64_t> Of(const ExportRow& row, const std::vector<v1::ExportOrder>& orders) const;

  // The keys of every row.
  std::vector<std::vector<int64_t>> Of(const std::vector<ExportRow>& rows,
                                       const std::vector<v1::ExportOrder>& orders) const;

 private:
  std::map<std::string, int64_t> period_, org_unit_, data_element_, option_combo_;
};

// A dvexport server (gRPC and HTTP doors, no authentication: a superuser's export) on "conninfo".
class Server243 {
 public:
  // "read_plan": how ordered exports are sliced and sorted (the defaults unless a test needs
  // more slices, or slices that outgrow their bound).
  explicit Server243(const std::string& conninfo, const db::ReadPlanOptions& read_plan = {});
  ~Server243();

  // StreamDataValues of "query": every value, in order.
  absl::StatusOr<std::vector<ExportRow>> Stream(const v1::ExportRequest& query);

  // ExportFile of "query" in "format": the file.
  absl::StatusOr<std::string> ExportFile(const v1::ExportRequest& query, v1::Format format);

  // GET "target" on the HTTP door: the status and the body.
  std::pair<int, std::string> HttpGet(const std::string& target);

 private:
  std::unique_ptr<server::ExportServer> server_;
  std::unique_ptr<v1::DataValueExport::Stub> stub_;
};

}  // namespace dvexport::testing

#endif  // DVEXPORT_TESTS_INTEGRATION_DHIS2_243_SUPPORT_H_
