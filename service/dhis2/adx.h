// DHIS2's ADX export rules without I/O: 2.42's (DefaultAdxDataService, AdxDataSetMetadata,
// AdxPeriod) and 2.43's (DataExportPipeline.exportAsXmlGroups): request checks, defaults, period
// durations, value types, category attribute names.

#ifndef DVEXPORT_SERVICE_DHIS2_ADX_H_
#define DVEXPORT_SERVICE_DHIS2_ADX_H_

#include <optional>
#include <string_view>

#include "absl/status/status.h"
#include "dvexport/v1/export.pb.h"

namespace dvexport::dhis2 {

// ADX groups values by data set, so an ADX export names its data sets and nothing else that
// selects data elements: InvalidArgument naming data_set when there is none, or
// data_element / data_element_group when given (DHIS2 2.42 ignores them and writes only the
// data sets' elements), or attribute_combo / attribute_options (DHIS2 2.42's ADX export ignores
// them and writes every attribute option combo); also changes_since, since ADX has no way to
// mark the deleted values a delta carries.
// "dhis2" is the minor version whose rules the export follows: from 43 on only changes_since is
// refused (dvexport's rule), since DHIS2 2.43 takes every other request (without a data set its
// document has no group; data_element and data_element_group select nothing, as 2.43 clears
// them; attribute_combo and attribute_options filter as in its other formats).
absl::Status CheckAdxRequest(const dvexport::v1::ExportRequest& request, int dhis2 = 42);

// "request" with DHIS2's ADX defaults: id_scheme CODE when unset (2.42's getFromUrl
// setDefaultIdScheme; 2.43's exportAsXmlGroups), the specific output schemes still overriding
// it; from "dhis2" 43 on also input_use_code_fallback true when unset (2.43 unfolds option
// combos into categories as well, which its ADX always does).
dvexport::v1::ExportRequest WithAdxDefaults(const dvexport::v1::ExportRequest& request,
                                            int dhis2 = 42);

// "request" with every output id scheme UID: what a DHIS2 2.43 ADX export's session reads, as
// 2.43's ADX writes its own identifiers and makes its own checks (db::ResolveAdxScope243), not
// those of its other formats' scope (which would refuse an option combo without a code).
dvexport::v1::ExportRequest WithUidOutputSchemes(const dvexport::v1::ExportRequest& request);

// The ISO 8601 duration of a DHIS2 period type (PeriodType.getIso8601Duration), by its name in
// the periodtype table: P1D, P7D (every weekly type), P14D, P1M, P2M, P3M (also QuarterlyNov),
// P6M (every six-monthly type), P1Y (yearly and every financial year), P2Y (TwoYearly); nullopt
// for a name DHIS2 does not have.
std::optional<std::string_view> AdxPeriodDuration(std::string_view period_type_name);

// True for the value types whose ADX value is the value itself (ValueType.isNumeric: INTEGER,
// INTEGER_POSITIVE, INTEGER_NEGATIVE, INTEGER_ZERO_OR_POSITIVE, NUMBER, UNIT_INTERVAL,
// PERCENTAGE); any other value is written as value="0" with the text in an annotation.
bool IsNumericValueType(std::string_view value_type);

// True when "name" (UTF-8) is an XML 1.0 Name (5th edition: NameStartChar NameChar*), which a
// category's identifier must be to name an attribute. DHIS2 checks the same with Xerces'
// XMLChar.isValidName.
bool IsXmlName(std::string_view name);

}  // namespace dvexport::dhis2

#endif  // DVEXPORT_SERVICE_DHIS2_ADX_H_
