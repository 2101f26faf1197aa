#ifndef DVEXPORT_SERVICE_DB_EXPORT_SCOPE_H_
#define DVEXPORT_SERVICE_DB_EXPORT_SCOPE_H_

#include <cstdint>
#include <optional>
#include <pqxx/transaction_base>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "service/db/dhis2_schema.h"
#include "service/dhis2/export_request_validator.h"
#include "service/dhis2/principal.h"

namespace dvexport::db {

// Output identifiers by internal id, in one output id scheme. nullopt where
// the object has no value in that scheme (no code, no attribute value, no
// name): written as JSON null or an empty CSV field.
using IdentifierMap = absl::flat_hash_map<int64_t, std::optional<std::string>>;

// DHIS2's single data value set header, resolved.
struct SingleDataValueSetHeader {
  std::optional<std::string> data_set;          // in data_set_id_scheme
  std::optional<int64_t> complete_date_micros;  // completedatasetregistration.date
  std::string period;
  std::optional<std::string> org_unit;  // in org_unit_id_scheme
};

// DHIS2 2.43's top-level members of the data value set (DataExportGroup), resolved: each one
// written only when set, in its output id scheme.
struct GroupHeader {
  std::optional<std::string> data_set;
  std::optional<std::string> period;      // the ISO id
  std::optional<std::string> period_adx;  // "2024-07-01/P1M" (XML)
  std::optional<std::string> org_unit;
  std::optional<std::string> attribute_option_combo;
  // (member name, scheme name) of each output id scheme that is not UID, in 2.43's order.
  std::vector<std::pair<std::string, std::string>> id_schemes;
};

// An export request resolved against the database: the internal ids to filter
// on and, for every id that can appear in a row, the identifier to write.
struct ExportScope {
  // The category option table of the database's DHIS2 (Dhis2Schema): categoryoption, or
  // dataelementcategoryoption before 2.41; and the category table likewise.
  const char* category_option_table = "categoryoption";
  const char* category_table = "category";
  std::vector<int64_t> data_set_ids;      // the requested data sets, in request order
  std::vector<int64_t> data_element_ids;  // sorted, unique
  // False when the request has no period and no start/end dates (only
  // last_updated or last_updated_duration): every period then matches.
  bool filter_periods = true;
  std::vector<int64_t> period_ids;    // sorted, unique; used if filter_periods
  std::vector<int64_t> org_unit_ids;  // sorted, unique
  // Set when the request filters on attribute option combos; sorted, unique (for a
  // non-superuser, without the ones its export leaves out).
  std::optional<std::vector<int64_t>> attribute_option_combo_ids;
  // For a non-superuser without attribute_option_combo_ids: the attribute option combos whose
  // values its export leaves out (UnreadableAttributeOptionCombos); sorted, unique.
  std::vector<int64_t> excluded_attribute_option_combo_ids;
  // What the request named, in request order, for DHIS2's access decisions (E2011, E2012): the
  // attribute option combos (or the one of attribute_combo and its options) and the org units.
  std::vector<int64_t> requested_attribute_option_combo_ids;
  std::vector<int64_t> requested_org_unit_ids;
  // Only values with lastupdated at or after this many microseconds since
  // 1970-01-01T00:00:00 (the column's wall clock).
  std::optional<int64_t> last_updated_min_micros;
  bool include_deleted = false;
  std::optional<int32_t> limit;
  // The DHIS2 minor version whose export this is (42: 2.40 to 2.42; 43).
  int dhis2 = 42;
  // 2.43: the rows' order (empty: none), ties broken by the value's key; values skipped first.
  std::vector<dhis2::OrderKey> order;
  std::optional<int64_t> offset;
  // 2.43: only values of these category option combos; sorted, unique.
  std::optional<std::vector<int64_t>> category_option_combo_ids;
  // 2.43's DataExportGroup members (unset before 2.43: "header" is 2.42's).
  std::optional<GroupHeader> group_header;
  // Only row versions written since a change token's snapshot, deleted ones
  // included whatever include_deleted says. The transaction reading the scope
  // must have run ChangesSinceSetting's statement (ReadSession does).
  bool changes_only = false;
  // A delta of a change stream: only the keys the stream changed (ChangedKeysSourceSql, read
  // from kChangedKeysSetting, which the transaction must have set: ReadSession does), each with
  // its row in the snapshot, or deleted = true where it no longer has one; deleted ones included
  // whatever include_deleted says.
  bool changed_keys = false;
  size_t changed_key_count = 0;

  IdentifierMap data_elements;
  IdentifierMap periods;  // ISO ids, never null
  IdentifierMap org_units;
  IdentifierMap category_option_combos;   // every COC, in the COC output scheme
  IdentifierMap attribute_option_combos;  // every COC, in the AOC output scheme

  std::optional<SingleDataValueSetHeader> header;

  // True when a filter resolved to no ids, so that no value can match.
  bool MatchesNothing() const {
    return data_element_ids.empty() || (filter_periods && period_ids.empty()) ||
           org_unit_ids.empty() ||
           (attribute_option_combo_ids && attribute_option_combo_ids->empty()) ||
           (category_option_combo_ids && category_option_combo_ids->empty()) ||
           (limit && *limit == 0) || (changed_keys && changed_key_count == 0);
  }
};

// Looks up every identifier of "params", in its input id scheme, with
// parameterized queries in "tx" (the export's transaction), and the output
// identifiers of everything the export can write. With a non-superuser "reader", data sets,
// data elements, data element groups, org unit groups, the attribute combo and its options are
// looked up with DHIS2's metadata-read sharing predicate (MetadataReadableSql): one the reader
// cannot read is not found, with the message of one that does not exist. Then, with a
// "reader" (superusers too), DHIS2's access decisions (DecideDataReadAccess: E2010, E2011,
// E2012) and, for a non-superuser, the attribute option combos its export leaves out. A null
// "reader" (--auth none) applies no rule. NotFound names a field and an identifier that
// does not exist (and E2041 for attribute options that make no attribute option combo);
// InvalidArgument an identifier that names several objects (NAME is not
// unique for org units and option combos); FailedPrecondition a period type
// that DHIS2 2.42 cannot name. Reads period.iso where "schema" (the
// connection's) has it (DHIS2 2.43+), else computes ISO ids; the category tables by the names
// "schema" gives. Database errors are libpqxx's
// exceptions (ReadSession turns them into a Status).
// DHIS2 2.43's resolution (ResolveExportScope calls it for params.dhis2 >= 43, on a database
// with period.iso): identifiers decoded as 2.43 decodes them (a well-formed unknown one matches
// nothing; codes and names match every object that has them; the code fallback), its filters
// (data element groups add to data sets, start and end dates each on its own, level, category
// option combos, attributeCombo and attributeOptions that match nothing filter nothing), E2001
// and E2006 after decoding, 2.43's read rules (no rule for superusers or Test_skipSharingCheck;
// E2010, E2011 and E2012 listing every failing uid, E2012 against the capture units, org unit
// group members cut to the capture units) and its group header. Errors as ResolveExportScope's.
absl::StatusOr<ExportScope> ResolveExportScope243(pqxx::transaction_base& tx,
                                                  const Dhis2Schema& schema,
                                                  const dhis2::ExportParams& params,
                                                  const dhis2::Principal* reader);

absl::StatusOr<ExportScope> ResolveExportScope(pqxx::transaction_base& tx,
                                               const Dhis2Schema& schema,
                                               const dhis2::ExportParams& params,
                                               const dhis2::Principal* reader);

// The SQL expression of an output or input id "scheme" on table alias "o" (o.uid, o.code, o.name,
// or the attribute's value); an attribute's UID is bind parameter $<param>, never SQL text.
std::string SchemeExpression(const dhis2::IdScheme& scheme, int param);

// What the scope's statements read as "dv": "datavalue dv", or for a change stream's delta
// the changed keys' rows (ChangedKeysSourceSql).
std::string DataValueSourceSql(const ExportScope& scope);

struct KeySlice;

// The WHERE condition (without "WHERE") on "datavalue dv" that selects the
// scope's values, ignoring the limit. Integers from "scope" only (a change
// token's xmin is read from a setting, see kChangesSinceSetting). With a "key_slice" sorted here
// (KeySlice::sort_here), the slice's rows.
std::string BuildDataValueWhereSql(const ExportScope& scope, const KeySlice* key_slice = nullptr);

// A slice of the datavalue table by physical position: the rows whose ctid
// lies in blocks [first_block, end_block), or from first_block to the end of
// the table when end_block is unset. Slices that meet end to end, the last one
// open, cover every row whatever the table's size.
struct BlockRange {
  int64_t first_block = 0;
  std::optional<int64_t> end_block;
};

// A slice of an ordered export (DHIS2 2.43's): the scope's rows whose "column" is one of "ids"
// (every row when "column" is null), in the scope's order, with the slice's own limit and
// offset instead of the scope's. Slices on the order's leading key, in that key's order, read
// one after the other, give the rows in the export's order.
struct KeySlice {
  const char* column = nullptr;  // kPeriodColumn, kDataElementColumn, ...: a constant of ours
  std::vector<int64_t> ids;
  std::optional<int64_t> limit;
  int64_t offset = 0;
  // Sorted by dvexport (SliceSorter), not by PostgreSQL: the query has no ORDER BY, LIMIT or
  // OFFSET (the reader applies "limit" and "offset" after its sort), and its "column" (periods or
  // data elements, the primary key's leading columns) stands for the scope's own filter on that
  // column, so that PostgreSQL reads the slice by the primary key.
  bool sort_here = false;
  // Of a slice sorted here, only the data elements at positions part, part + parts, ... of the
  // list the query would read (the slice's own, or the scope's): the slice in "parts" parts, which
  // as many connections read at once.
  int part = 0;
  int parts = 1;
};

// KeySlice::column's values.
inline constexpr char kDataElementColumn[] = "dv.dataelementid";
inline constexpr char kPeriodColumn[] = "dv.periodid";
inline constexpr char kOrgUnitColumn[] = "dv.sourceid";
inline constexpr char kAttributeOptionComboColumn[] = "dv.attributeoptioncomboid";

// The query of the scope's data values (with its limit), columns as
// kDataValueColumns, restricted to "blocks" if given (or to "key_slice": see KeySlice). Holds only
// integers taken from "scope" and "blocks", never text a caller sent. No ORDER BY: rows come as
// PostgreSQL reads them. lastupdated comes as text, empty when it equals created: most values are
// never updated, and PostgreSQL then formats one timestamp per row instead of two (its text is what
// the timestamp's own output function writes, as COPY would; NULL stays NULL).
std::string BuildDataValueSelectSql(const ExportScope& scope,
                                    const std::optional<BlockRange>& blocks = std::nullopt,
                                    const KeySlice* key_slice = nullptr);

// The joins (after "datavalue dv") that OrderBySql's columns need: pe, de, ou, aoc.
std::string OrderJoinsSql(const std::vector<dhis2::OrderKey>& order);

// " ORDER BY ..." of DHIS2 2.43's order keys (PE: pe.startdate, pe.enddate; DE: de.uid; OU:
// ou.path; AOC: aoc.uid; CREATED: dv.created; all ascending, in the database's collation), then
// the value's key, so that the order is total; empty for no keys.
std::string OrderBySql(const std::vector<dhis2::OrderKey>& order);

// The transaction setting that holds a change token's xmin, modulo 2^32, in decimal, for the
// condition of ExportScope::changes_only: set with set_config($1) since COPY takes no bind
// parameters.
inline constexpr char kChangesSinceSetting[] = "dvexport.changes_since_xid";

// The columns of the data value COPY, in order.
inline constexpr int kDataValueColumns = 12;

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_EXPORT_SCOPE_H_
