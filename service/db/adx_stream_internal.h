#ifndef DVEXPORT_SERVICE_DB_ADX_STREAM_INTERNAL_H_
#define DVEXPORT_SERVICE_DB_ADX_STREAM_INTERNAL_H_

// What adx_stream.cc (DHIS2 2.40 to 2.42) and adx_stream_243.cc (DHIS2 2.43) share. Only those
// two files include it.

#include <cstdint>
#include <optional>
#include <pqxx/field>
#include <pqxx/result>
#include <pqxx/transaction_base>
#include <string>
#include <string_view>
#include <vector>

#include "absl/status/status.h"
#include "service/db/adx_stream.h"
#include "service/db/data_value_line_parser.h"
#include "service/encode/data_value_row.h"

namespace dvexport::db::adx_internal {

using Params = std::vector<std::string>;

// Runs "sql" with text parameters $1..$n as an unnamed statement.
pqxx::result Query(pqxx::transaction_base& tx, const std::string& sql, const Params& params);

// "{1,2,3}": a text parameter for "= ANY($1::bigint[])".
std::string IdArray(const std::vector<int64_t>& ids);

int64_t ToInt64(const pqxx::field& field);
std::optional<std::string> ToOptionalString(const pqxx::field& field);

// ADX's own attribute names, which no category may take.
bool IsAdxAttributeName(std::string_view name);

// Every period of scope.periods as <start date>/<duration> into adx->periods;
// FailedPrecondition for a period type without an ADX duration.
absl::Status LoadPeriods(pqxx::transaction_base& tx, const ExportScope& scope, AdxScope* adx);

// The integer of a COPY field; false for NULL or anything else.
bool ParseId(const CopyTextField& field, int64_t* id);

// An identifier as the encoder's text: null when nullopt.
encode::Text TextOf(const std::optional<std::string>& identifier);

}  // namespace dvexport::db::adx_internal

#endif  // DVEXPORT_SERVICE_DB_ADX_STREAM_INTERNAL_H_
