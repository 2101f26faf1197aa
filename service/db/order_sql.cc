// OrderJoinsSql and OrderBySql (export_scope.h): DHIS2 2.43's ORDER BY and the joins its
// columns need, for the ordered reads (ordered_plan.h).
#include <string>
#include <vector>

#include "service/db/export_scope.h"

namespace dvexport::db {

std::string OrderJoinsSql(const std::vector<dhis2::OrderKey>& order) {
  std::string sql;
  for (const dhis2::OrderKey key : order) {
    switch (key) {
      case dhis2::OrderKey::kPe:
        sql += " JOIN period pe ON pe.periodid = dv.periodid";
        break;
      case dhis2::OrderKey::kDe:
        sql += " JOIN dataelement de ON de.dataelementid = dv.dataelementid";
        break;
      case dhis2::OrderKey::kOu:
        sql += " JOIN organisationunit ou ON ou.organisationunitid = dv.sourceid";
        break;
      case dhis2::OrderKey::kAoc:
        sql +=
            " JOIN categoryoptioncombo aoc ON aoc.categoryoptioncomboid = "
            "dv.attributeoptioncomboid";
        break;
      case dhis2::OrderKey::kCreated:
        break;
    }
  }
  return sql;
}

std::string OrderBySql(const std::vector<dhis2::OrderKey>& order) {
  if (order.empty()) return "";
  std::string sql = " ORDER BY ";
  for (const dhis2::OrderKey key : order) {
    switch (key) {
      case dhis2::OrderKey::kPe:
        sql += "pe.startdate, pe.enddate, ";
        break;
      case dhis2::OrderKey::kDe:
        sql += "de.uid, ";
        break;
      case dhis2::OrderKey::kOu:
        sql += "ou.path, ";
        break;
      case dhis2::OrderKey::kAoc:
        sql += "aoc.uid, ";
        break;
      case dhis2::OrderKey::kCreated:
        sql += "dv.created, ";
        break;
    }
  }
  // DHIS2's order is not unique: the value's key makes it so, for pages that neither repeat nor
  // skip a value.
  sql +=
      "dv.dataelementid, dv.periodid, dv.sourceid, dv.categoryoptioncomboid, "
      "dv.attributeoptioncomboid";
  return sql;
}

}  // namespace dvexport::db
