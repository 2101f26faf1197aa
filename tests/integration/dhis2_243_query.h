#ifndef DVEXPORT_TESTS_INTEGRATION_DHIS2_243_QUERY_H_
#define DVEXPORT_TESTS_INTEGRATION_DHIS2_243_QUERY_H_

// DHIS2 2.43.1's export query, built as DHIS2 builds it: HibernateDataExportStore's
// createExportQuery template (dhis-service-core, tag 2.43.1) with QueryBuilder's line erasure
// (dhis-api's sql/QueryBuilder.java) for a superuser, and the request's parameters as literals
// (pgjdbc sends them untyped, as a literal is). Independent of dvexport's code: the reference the
// 2.43 integration tests compare dvexport with.

#include <optional>
#include <string>
#include <vector>

#include "dvexport/v1/export.pb.h"

namespace dvexport::testing {

// A request as DHIS2's DataExportParams holds it after decoding (UIDs, canonical ISO periods),
// which is also what the test sends dvexport.
struct Dhis2Request {
  std::vector<std::string> data_sets;
  std::vector<std::string> data_elements;
  std::vector<std::string> data_element_groups;
  std::vector<std::string> periods;
  std::optional<std::string> start_date;  // yyyy-MM-dd
  std::optional<std::string> end_date;
  std::vector<std::string> org_units;
  std::vector<std::string> org_unit_groups;
  bool children = false;
  std::optional<int> level;
  std::vector<std::string> category_option_combos;
  std::vector<std::string> attribute_option_combos;
  bool include_deleted = false;
  // dvexport's last_updated as sent; DHIS2 binds its date (java.sql.Date): last_updated_date.
  std::optional<std::string> last_updated;
  std::optional<std::string> last_updated_date;
  std::vector<v1::ExportOrder> order;
  bool order_by_period = false;
  std::optional<int> limit;
  std::optional<int> offset;
};

// The order DHIS2 2.43.1 applies (DefaultDataExportService.decodeParams, then createExportQuery's
// default): orderByPeriod puts PE first, alone when no order was given; no order: PE, CREATED, DE.
std::vector<v1::ExportOrder> Dhis2Orders(const Dhis2Request& request);

// The ORDER BY columns of "orders" as createExportQuery maps them, each once.
std::vector<std::string> Dhis2OrderColumns(const std::vector<v1::ExportOrder>& orders);

// The query text QueryBuilder hands Hibernate, its named parameters left in (":de", ...).
std::string Dhis2QueryText(const Dhis2Request& request);

// The query with the parameters as literals, and Hibernate's LIMIT and OFFSET (absolute values).
// With "tie_break", dvexport's tie-break (the value's key) follows DHIS2's ORDER BY columns, so
// that a page of the two is the same sequence.
std::string Dhis2Sql(const Dhis2Request& request, bool tie_break);

// The ExportRequest dvexport gets for "request" (answered as DHIS2 2.43).
v1::ExportRequest ToExportRequest(const Dhis2Request& request);

}  // namespace dvexport::testing

#endif  // DVEXPORT_TESTS_INTEGRATION_DHIS2_243_QUERY_H_
