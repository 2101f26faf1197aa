#include "client/cli/command_line.h"

#include <algorithm>
#include <cmath>
#include <iterator>
#include <optional>
#include <set>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "client/file_format.h"

namespace dvexport::cli {
namespace {

// zstd levels above 19 need much larger windows; the server refuses them.
constexpr int kMaxZstdLevel = 19;

// --writeback-mib's help names the default.
static_assert(client::kDefaultWriteBackBytes == int64_t{8} << 20,
              "--writeback-mib's help says the default is 8");

using dvexport::v1::Compression;
using dvexport::v1::Format;

// The export command as its flags come in: the choices left to the output
// file's name are kept apart until all flags are read.
struct ExportFlags {
  CommandLine command;
  std::optional<Format> format;
  std::optional<Compression> compression;
  std::optional<int> compression_level;
  std::optional<int> attempts;
  bool no_retry = false;
};

enum class Arity {
  kSwitch,  // --children
  kValue,   // --server HOST:PORT, at most once
  kList,    // --period 202401,202402 --period 202403
};

// The commands a flag belongs to, as a bit mask.
enum CommandMask : unsigned {
  kExportCommand = 1,
  kStreamCommand = 2,
  kCountCommand = 4,
  kHealthCommand = 8,
  kSyncCommand = 16,
  kStreamsListCommand = 32,
  kStreamsDropCommand = 64,
  // The commands that write a file: export and sync.
  kFileCommands = kExportCommand | kSyncCommand,
  kQueryCommands = kFileCommands | kStreamCommand | kCountCommand,
  // "streams list" and "streams drop": the change streams.
  kStreamsCommands = kStreamsListCommand | kStreamsDropCommand,
  // The commands that call as a DHIS2 user.
  kIdentityCommands = kQueryCommands | kStreamsCommands,
  kAllCommands = kIdentityCommands | kHealthCommand,
};

struct FlagSpec {
  unsigned commands;  // CommandMask bits
  absl::string_view section;
  absl::string_view name;
  absl::string_view short_name;  // Empty if none.
  absl::string_view value_name;  // Empty for switches.
  absl::string_view help;
  Arity arity;
  // Applies a value, or each item of a list; "" for a switch.
  absl::Status (*apply)(absl::string_view value, ExportFlags& flags);
};

absl::Status UsageError(absl::string_view message) { return absl::InvalidArgumentError(message); }

// Flags that would put a secret on the command line, where every user of the
// host sees it (ps, /proc/PID/cmdline) and the shell keeps it in its history:
// refused with what to use instead. The message never repeats the value.
struct RefusedFlag {
  absl::string_view name;
  absl::string_view instead;
};
constexpr RefusedFlag kSecretFlags[] = {
    {"--token", "--token-file FILE or DVEXPORT_TOKEN"},
    {"--api-token", "--token-file FILE or DVEXPORT_TOKEN"},
    {"--password", "--user NAME with DVEXPORT_PASSWORD, or the prompt on a terminal"},
    {"--pass", "--user NAME with DVEXPORT_PASSWORD, or the prompt on a terminal"},
};

const RefusedFlag* FindSecretFlag(absl::string_view name) {
  for (const RefusedFlag& flag : kSecretFlags) {
    if (flag.name == name) return &flag;
  }
  return nullptr;
}

dvexport::v1::ExportRequest& Query(ExportFlags& flags) {
  return *flags.command.request.mutable_query();
}

// DHIS2 2.43's order keys (DataExportParams.Order), as --order takes them.
struct OrderKey {
  absl::string_view name;
  dvexport::v1::ExportOrder order;
};
constexpr OrderKey kOrderKeys[] = {
    {"DE", dvexport::v1::EXPORT_ORDER_DE},   {"OU", dvexport::v1::EXPORT_ORDER_OU},
    {"PE", dvexport::v1::EXPORT_ORDER_PE},   {"CREATED", dvexport::v1::EXPORT_ORDER_CREATED},
    {"AOC", dvexport::v1::EXPORT_ORDER_AOC},
};

// The DHIS2 versions an export may answer as (ExportRequest.dhis2_version).
constexpr absl::string_view kDhis2Versions[] = {"2.40", "2.41", "2.42", "2.43"};

// Parses a whole number from "min" to INT32_MAX for "flag" (--offset, --level).
absl::StatusOr<int32_t> ParseInt32From(absl::string_view flag, absl::string_view value,
                                       int32_t min) {
  int32_t number;
  if (!absl::SimpleAtoi(value, &number) || number < min) {
    return UsageError(
        absl::StrCat(flag, ": '", value, "' is not a whole number from ", min, " to 2147483647"));
  }
  return number;
}

const FlagSpec kFlags[] = {
    {kAllCommands, "Connection", "--server", "", "HOST:PORT", "Required. The dvexport server.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       flags.command.server = std::string(value);
       return absl::OkStatus();
     }},
    {kAllCommands, "Connection", "--timeout", "", "SECONDS",
     "Fail if the export takes longer (all attempts and the waits for the output's reader). "
     "Default: no limit.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       double seconds;
       if (!absl::SimpleAtod(value, &seconds) || !std::isfinite(seconds) || seconds <= 0 ||
           seconds > 1e9) {
         return UsageError(absl::StrCat("--timeout: '", value, "' is not a number of seconds > 0"));
       }
       flags.command.timeout = std::chrono::milliseconds(std::llround(std::ceil(seconds * 1000)));
       return absl::OkStatus();
     }},
    {kAllCommands, "Connection", "--attempts", "", "N",
     "Attempts (1 to 5) of a call refused as UNAVAILABLE or RESOURCE_EXHAUSTED before any data, "
     "with backoff; export also starts again, from scratch, when the server fails it later with "
     "UNAVAILABLE or ABORTED. Default: 4.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       int attempts;
       if (!absl::SimpleAtoi(value, &attempts) || attempts < 1 ||
           attempts > client::kMaxCallAttempts) {
         return UsageError(absl::StrCat("--attempts: '", value,
                                        "' is not a whole number from 1 to ",
                                        client::kMaxCallAttempts));
       }
       flags.attempts = attempts;
       return absl::OkStatus();
     }},
    {kAllCommands, "Connection", "--no-retry", "", "", "One attempt only (--attempts 1).",
     Arity::kSwitch,
     [](absl::string_view, ExportFlags& flags) {
       flags.no_retry = true;
       return absl::OkStatus();
     }},
    {kAllCommands, "Connection", "--tls-ca", "", "FILE",
     "Use TLS; trust the server certificates this PEM CA file signs. Default: plaintext.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       flags.command.channel.tls_ca_file = std::string(value);
       return absl::OkStatus();
     }},
    {kAllCommands, "Connection", "--tls-cert", "", "FILE",
     "Use TLS with this PEM client certificate (for mutual TLS; needs --tls-key).", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       flags.command.channel.tls_cert_file = std::string(value);
       return absl::OkStatus();
     }},
    {kAllCommands, "Connection", "--tls-key", "", "FILE", "The PEM private key of --tls-cert.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       flags.command.channel.tls_key_file = std::string(value);
       return absl::OkStatus();
     }},
    {kIdentityCommands, "Identity", "--token-file", "", "FILE",
     "Call as the DHIS2 user of the personal access token (d2p_... or d2pat_...) on the first "
     "line of FILE, which only its owner may read (chmod 600). Default: $DVEXPORT_TOKEN.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       flags.command.token_file = std::string(value);
       return absl::OkStatus();
     }},
    {kIdentityCommands, "Identity", "--user", "", "NAME",
     "Call as DHIS2 user NAME with the password in $DVEXPORT_PASSWORD, else asked for on the "
     "terminal (without echo). Overrides $DVEXPORT_TOKEN; excludes --token-file.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       flags.command.user = std::string(value);
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--data-set", "", "UID",
     "Export the data elements of these data sets.", Arity::kList,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).add_data_set(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--data-element", "", "UID",
     "Export these data elements (as well).", Arity::kList,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).add_data_element(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--period", "", "ISO",
     "Export these ISO periods: 202401, 2024Q1, 2024W5, 2024...", Arity::kList,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).add_period(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--start-date", "", "DATE",
     "Export the periods within [--start-date, --end-date] (yyyy-MM-dd).", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).set_start_date(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--end-date", "", "DATE", "See --start-date; give both or neither.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).set_end_date(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--org-unit", "", "UID", "Export these organisation units.",
     Arity::kList,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).add_org_unit(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--children", "", "",
     "Also export the descendants of the org units.", Arity::kSwitch,
     [](absl::string_view, ExportFlags& flags) {
       Query(flags).set_children(true);
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--include-deleted", "", "", "Also export values marked deleted.",
     Arity::kSwitch,
     [](absl::string_view, ExportFlags& flags) {
       Query(flags).set_include_deleted(true);
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--limit", "", "N", "Export at most N values.", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       int32_t limit;
       if (!absl::SimpleAtoi(value, &limit) || limit < 0) {
         return UsageError(
             absl::StrCat("--limit: '", value, "' is not a whole number from 0 to 2147483647"));
       }
       Query(flags).set_limit(limit);
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--data-element-group", "", "UID",
     "Also export the members of these data element groups.", Arity::kList,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).add_data_element_group(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--org-unit-group", "", "UID",
     "Export the members of these organisation unit groups.", Arity::kList,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).add_org_unit_group(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--attribute-option-combo", "", "UID",
     "Only values with these attribute option combos.", Arity::kList,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).add_attribute_option_combo(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--attribute-combo", "", "UID",
     "An attribute category combo; with --attribute-options, names one attribute option combo.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).set_attribute_combo(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--attribute-options", "", "UID",
     "The category options of --attribute-combo.", Arity::kList,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).add_attribute_options(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--last-updated", "", "DATE",
     "Only values last updated at or after DATE (yyyy-MM-dd or ISO 8601 date-time).", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).set_last_updated(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--last-updated-duration", "", "DURATION",
     "Only values last updated within DURATION before now: <n>d|h|m|s.", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).set_last_updated_duration(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--level", "", "N",
     "Only org units at this hierarchy level, 1 being the root (DHIS2 2.43).", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       absl::StatusOr<int32_t> level = ParseInt32From("--level", value, 1);
       if (!level.ok()) return level.status();
       Query(flags).set_level(*level);
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--category-option-combo", "", "UID",
     "Only values with these category option combos (DHIS2 2.43).", Arity::kList,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).add_category_option_combo(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--exclude-default-coc", "", "",
     "Write no category option combo where a value has the default one (the value stays; "
     "DHIS2 2.43).",
     Arity::kSwitch,
     [](absl::string_view, ExportFlags& flags) {
       Query(flags).set_exclude_default_coc(true);
       return absl::OkStatus();
     }},
    {kQueryCommands, "Filters", "--exclude-default-aoc", "", "",
     "Write no attribute option combo where a value has the default one (the value stays; "
     "DHIS2 2.43).",
     Arity::kSwitch,
     [](absl::string_view, ExportFlags& flags) {
       Query(flags).set_exclude_default_aoc(true);
       return absl::OkStatus();
     }},
    {kQueryCommands, "Order and paging", "--order", "", "KEY",
     "Order the values by these keys, the first leading: DE, OU, PE, CREATED, AOC (DHIS2 "
     "2.43; default: PE,CREATED,DE).",
     Arity::kList,
     [](absl::string_view value, ExportFlags& flags) {
       for (const OrderKey& key : kOrderKeys) {
         if (absl::EqualsIgnoreCase(value, key.name)) {
           Query(flags).add_order(key.order);
           return absl::OkStatus();
         }
       }
       return UsageError(
           absl::StrCat("--order: '", value, "' is not DE, OU, PE, CREATED or AOC"));
     }},
    {kQueryCommands, "Order and paging", "--order-by-period", "", "",
     "PE first unless --order has it (DHIS2 2.43's orderByPeriod).", Arity::kSwitch,
     [](absl::string_view, ExportFlags& flags) {
       Query(flags).set_order_by_period(true);
       return absl::OkStatus();
     }},
    {kQueryCommands, "Order and paging", "--offset", "", "N",
     "Skip the first N values of the order; with --limit, one page (DHIS2 2.43).", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       absl::StatusOr<int32_t> offset = ParseInt32From("--offset", value, 0);
       if (!offset.ok()) return offset.status();
       Query(flags).set_offset(*offset);
       return absl::OkStatus();
     }},
    {kQueryCommands, "Id schemes", "--input-id-scheme", "", "SCHEME",
     "How identifiers in the filters are given: UID (default), CODE, NAME or ATTRIBUTE:<uid>.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).set_input_id_scheme(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Id schemes", "--input-org-unit-id-scheme", "", "SCHEME",
     "For --org-unit; default: --input-id-scheme.", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).set_input_org_unit_id_scheme(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Id schemes", "--input-data-element-id-scheme", "", "SCHEME",
     "For --data-element; default: --input-id-scheme.", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).set_input_data_element_id_scheme(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Id schemes", "--input-data-set-id-scheme", "", "SCHEME",
     "For --data-set; default: --input-id-scheme.", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).set_input_data_set_id_scheme(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Id schemes", "--input-data-element-group-id-scheme", "", "SCHEME",
     "For --data-element-group; default: --input-id-scheme.", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).set_input_data_element_group_id_scheme(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Id schemes", "--input-use-code-fallback", "", "true|false",
     "Without an input id scheme, also look up identifiers that are not UIDs by code (DHIS2 "
     "2.43; default: true for adx, else false).",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       if (value != "true" && value != "false") {
         return UsageError(
             absl::StrCat("--input-use-code-fallback: '", value, "' is not true or false"));
       }
       Query(flags).set_input_use_code_fallback(value == "true");
       return absl::OkStatus();
     }},
    {kQueryCommands, "Id schemes", "--id-scheme", "", "SCHEME",
     "How identifiers are written: UID (default), CODE, NAME or ATTRIBUTE:<uid>; missing ones as "
     "null.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).set_id_scheme(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Id schemes", "--data-element-id-scheme", "", "SCHEME",
     "For data elements; default: --id-scheme.", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).set_data_element_id_scheme(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Id schemes", "--org-unit-id-scheme", "", "SCHEME",
     "For organisation units; default: --id-scheme.", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).set_org_unit_id_scheme(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Id schemes", "--category-option-combo-id-scheme", "", "SCHEME",
     "For category option combos; default: --id-scheme.", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).set_category_option_combo_id_scheme(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Id schemes", "--attribute-option-combo-id-scheme", "", "SCHEME",
     "For attribute option combos; default: --id-scheme.", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).set_attribute_option_combo_id_scheme(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "Id schemes", "--data-set-id-scheme", "", "SCHEME",
     "For the data set of the single data value set header; default: --id-scheme.", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).set_data_set_id_scheme(std::string(value));
       return absl::OkStatus();
     }},
    {kQueryCommands, "DHIS2", "--dhis2-version", "", "2.4x",
     "Answer as this DHIS2 answers: 2.40, 2.41, 2.42 or 2.43, no newer than the database's. "
     "Default: the database's DHIS2.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       if (std::find(std::begin(kDhis2Versions), std::end(kDhis2Versions), value) ==
           std::end(kDhis2Versions)) {
         return UsageError(
             absl::StrCat("--dhis2-version: '", value, "' is not 2.40, 2.41, 2.42 or 2.43"));
       }
       Query(flags).set_dhis2_version(std::string(value));
       return absl::OkStatus();
     }},
    {kFileCommands | kStreamCommand, "Output", "--output", "-o", "FILE",
     "The file to write (export: required; stream: default '-'), replaced only once the "
     "export is complete and verified (a symbolic link is replaced, not followed); '-' for "
     "standard output. A character device or FIFO is written in place, never replaced.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       flags.command.output = std::string(value);
       return absl::OkStatus();
     }},
    {kFileCommands, "Output", "--format", "", "json|csv|json-pretty|xml|adx",
     "Default: from FILE's name (.json, .csv, .xml, .adx, each optionally .gz, .zip or .zst); "
     "json for '-'. json-pretty is JSON indented by two spaces (a .json name allows it). adx "
     "is DHIS2's ADX and needs --data-set.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       if (value == "json") {
         flags.format = dvexport::v1::FORMAT_JSON;
       } else if (value == "csv") {
         flags.format = dvexport::v1::FORMAT_CSV;
       } else if (value == "json-pretty") {
         flags.format = dvexport::v1::FORMAT_JSON_PRETTY;
       } else if (value == "xml") {
         flags.format = dvexport::v1::FORMAT_XML;
       } else if (value == "adx") {
         flags.format = dvexport::v1::FORMAT_ADX;
       } else {
         return UsageError(
             absl::StrCat("--format: '", value, "' is not json, csv, json-pretty, xml or adx"));
       }
       return absl::OkStatus();
     }},
    {kFileCommands, "Output", "--compression", "", "gzip|zip|zstd|none",
     "Default: from FILE's name (.gz gzip, .zip zip, .zst zstd), else none. zip holds one entry "
     "named as DHIS2 names it (dataValues.json, dataValues_<start>_<end>.csv, ...).",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       if (value == "gzip") {
         flags.compression = dvexport::v1::COMPRESSION_GZIP;
       } else if (value == "zip") {
         flags.compression = dvexport::v1::COMPRESSION_ZIP;
       } else if (value == "zstd") {
         flags.compression = dvexport::v1::COMPRESSION_ZSTD;
       } else if (value == "none") {
         flags.compression = dvexport::v1::COMPRESSION_NONE;
       } else {
         return UsageError(
             absl::StrCat("--compression: '", value, "' is not gzip, zip, zstd or none"));
       }
       return absl::OkStatus();
     }},
    {kFileCommands, "Output", "--compression-level", "", "N",
     "gzip and zip: 1 (fastest, default) to 9 (smallest); zstd: 1 (fastest, default) to 19.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       int level;
       if (!absl::SimpleAtoi(value, &level) || level < 1 || level > kMaxZstdLevel) {
         return UsageError(
             absl::StrCat("--compression-level: '", value, "' is not 1 to ", kMaxZstdLevel));
       }
       flags.compression_level = level;
       return absl::OkStatus();
     }},
    {kFileCommands | kStreamCommand, "Output", "--writeback-mib", "", "N",
     "A regular file is written to disk while the export goes on: every N MiB written, that "
     "much is handed to the disk, and the export waits when the disk falls two such ranges "
     "behind, so that the final fsync has little left to do. 0 to 1024; 0: all of it at the "
     "final fsync. Default: 8.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       int mib;
       if (!absl::SimpleAtoi(value, &mib) || mib < 0 || mib > kMaxWriteBackMib) {
         return UsageError(absl::StrCat("--writeback-mib: '", value,
                                        "' is not a whole number of MiB from 0 (off) to ",
                                        kMaxWriteBackMib));
       }
       flags.command.write_back_bytes = int64_t{mib} << 20;
       return absl::OkStatus();
     }},
    {kSyncCommand, "Sync", "--state", "", "FILE",
     "Required. The change token of the last sync: read if FILE exists (else everything is "
     "exported), replaced with the new one once the output is in place.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       flags.command.state_file = std::string(value);
       return absl::OkStatus();
     }},
    {kSyncCommand, "Sync", "--snapshot-token", "", "",
     "The first sync (FILE does not exist) asks for no change stream: every delta then reads "
     "the whole table and misses hard DELETEs, but the database keeps no slot for it. Default: "
     "a change stream where the server's database can keep one (docs/SYNC.md).",
     Arity::kSwitch,
     [](absl::string_view, ExportFlags& flags) {
       flags.command.start_change_stream = false;
       return absl::OkStatus();
     }},
    {kStreamsDropCommand, "Stream", "--state", "", "FILE",
     "Drop the change stream of the token in this dvexport sync state file (its first line).",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       flags.command.state_file = std::string(value);
       return absl::OkStatus();
     }},
    // Not --token: that flag is refused everywhere, lest an API token end up on a command line.
    {kStreamsDropCommand, "Stream", "--change-token", "", "TOKEN",
     "Drop the change stream of this change token (as a sync state file holds it).", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       flags.command.change_token = std::string(value);
       return absl::OkStatus();
     }},
    {kStreamsDropCommand, "Stream", "--name", "", "SLOT",
     "Drop the change stream of this name, as 'dvexport streams list' shows it "
     "(dvexport_<16 hex digits>_<user id>).",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       flags.command.stream_name = std::string(value);
       return absl::OkStatus();
     }},
    {kHealthCommand, "Health", "--service", "", "NAME",
     "Ask about this service (dvexport.ChangeStreams: no change stream is lost or keeps more "
     "WAL than the server's --change_stream_warn_wal_mb); default: the server as a whole.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       flags.command.health_service = std::string(value);
       return absl::OkStatus();
     }},
};

bool IsHelp(absl::string_view arg) { return arg == "-h" || arg == "--help"; }

// A command: its name, its bit in FlagSpec::commands and its actions.
struct CommandSpec {
  absl::string_view name;
  unsigned mask;
  CommandLine::Action run;
  CommandLine::Action help;
  absl::string_view synopsis;
};

const CommandSpec kCommands[] = {
    {"export", kExportCommand, CommandLine::Action::kExport, CommandLine::Action::kShowExportHelp,
     "Usage: dvexport export --server HOST:PORT [filters] [output flags] -o FILE\n"
     "\n"
     "Exports data values, filtered as by DHIS2's /api/dataValueSets, to a JSON or\n"
     "CSV file (optionally gzip). Identifiers are UIDs unless an --input-*id-scheme\n"
     "says otherwise. Repeatable flags also take comma-separated lists:\n"
     "--period 202401,202402 --period 202403. On a terminal, a progress bar shows\n"
     "how far the export has come (the server counts the values first).\n"},
    {"stream", kStreamCommand, CommandLine::Action::kStream, CommandLine::Action::kShowStreamHelp,
     "Usage: dvexport stream --server HOST:PORT [filters] [-o FILE]\n"
     "\n"
     "Streams data values as typed messages (StreamDataValues) and writes them as\n"
     "newline-delimited JSON, one object per value, keys as in the protobuf JSON\n"
     "mapping (dataElement, period, ..., created as RFC 3339 UTC). Same filters\n"
     "as export.\n"},
    {"sync", kSyncCommand, CommandLine::Action::kSync, CommandLine::Action::kShowSyncHelp,
     "Usage: dvexport sync --server HOST:PORT --state FILE [filters] [output flags]\n"
     "                     -o FILE\n"
     "\n"
     "Exports what changed since the last sync with the same --state FILE: the data\n"
     "values inserted or updated since (deleted ones too, with deleted=true), or\n"
     "everything if FILE does not exist yet. The first sync starts a change stream\n"
     "where the server can (deltas then cost what changed, and carry hard DELETEs);\n"
     "`dvexport streams drop --state FILE` ends it. Same filters and output as export\n"
     "(no --limit); use the same filters every time. Apply the output (upsert by\n"
     "data element, period, org unit, category option combo and attribute option\n"
     "combo) before the next sync replaces it. FILE is replaced only after the\n"
     "output is in place: a sync that fails repeats the delta, never skips one.\n"
     "A token the server cannot judge (from another database, or written by a\n"
     "dvexport before tokens named their database) fails the sync: remove FILE,\n"
     "and the next sync exports everything.\n"
     "--state and -o must name two files (not one through a link): refused, exit 2.\n"},
    {"count", kCountCommand, CommandLine::Action::kCount, CommandLine::Action::kShowCountHelp,
     "Usage: dvexport count --server HOST:PORT [filters]\n"
     "\n"
     "Prints the number of data values that export would write with the same\n"
     "filters, without exporting them.\n"},
    {"health", kHealthCommand, CommandLine::Action::kHealth, CommandLine::Action::kShowHealthHelp,
     "Usage: dvexport health --server HOST:PORT [--service NAME]\n"
     "\n"
     "Asks the server's grpc.health.v1.Health service and prints SERVING,\n"
     "NOT_SERVING, UNKNOWN or SERVICE_UNKNOWN. --service dvexport.ChangeStreams asks\n"
     "about the change streams (docs/SYNC.md): NOT_SERVING while one is lost, keeps\n"
     "more WAL than the server's --change_stream_warn_wal_mb, or cannot be read;\n"
     "dvexport streams list says which.\n"},
    {"streams list", kStreamsListCommand, CommandLine::Action::kStreamsList,
     CommandLine::Action::kShowStreamsHelp,
     "Usage: dvexport streams list --server HOST:PORT\n"
     "\n"
     "Prints the change streams (docs/SYNC.md: a replication slot per sync\n"
     "consumer) the DHIS2 user started, every one for a superuser: one line each,\n"
     "  NAME OWNER WAL_STATUS RETAINED_MIB IDLE_SECONDS ACTIVE\n"
     "(OWNER - when unknown, IDLE_SECONDS -1 when the server has not watched it\n"
     "yet, ACTIVE yes while a delta reads it), then the kind of change token the\n"
     "database gives: 'change tokens: stream', or 'change tokens: snapshot (WHY)'.\n"},
    {"streams drop", kStreamsDropCommand, CommandLine::Action::kStreamsDrop,
     CommandLine::Action::kShowStreamsHelp,
     "Usage: dvexport streams drop --server HOST:PORT\n"
     "                             (--state FILE | --change-token TOKEN | --name SLOT)\n"
     "\n"
     "Drops a change stream: the one of a sync state file's token, of a change\n"
     "token, or of a name 'streams list' shows. Its WAL is released at once; a\n"
     "later sync with a token of it fails (remove the state file to start over).\n"
     "Only the DHIS2 user that started it, or a superuser, may drop it.\n"},
};

const CommandSpec* FindCommand(absl::string_view name) {
  for (const CommandSpec& command : kCommands) {
    if (command.name == name) return &command;
  }
  return nullptr;
}

// The flag "name" if "command" takes it.
const FlagSpec* FindFlag(absl::string_view name, const CommandSpec& command) {
  for (const FlagSpec& flag : kFlags) {
    if ((flag.commands & command.mask) == 0) continue;
    if (name == flag.name || (!flag.short_name.empty() && name == flag.short_name)) return &flag;
  }
  return nullptr;
}

absl::string_view FormatName(Format format) {
  switch (format) {
    case dvexport::v1::FORMAT_CSV:
      return "csv";
    case dvexport::v1::FORMAT_JSON_PRETTY:
      return "json-pretty";
    case dvexport::v1::FORMAT_XML:
      return "xml";
    case dvexport::v1::FORMAT_ADX:
      return "adx";
    default:
      return "json";
  }
}

// A .json name holds compact or pretty JSON.
bool SameFileFormat(Format a, Format b) {
  auto family = [](Format f) {
    return f == dvexport::v1::FORMAT_JSON_PRETTY ? dvexport::v1::FORMAT_JSON : f;
  };
  return family(a) == family(b);
}

absl::string_view CompressionName(Compression compression) {
  switch (compression) {
    case dvexport::v1::COMPRESSION_GZIP:
      return "gzip";
    case dvexport::v1::COMPRESSION_ZIP:
      return "zip";
    case dvexport::v1::COMPRESSION_ZSTD:
      return "zstd";
    default:
      return "none";
  }
}

// The highest level "compression" takes (0 when it takes none).
int MaxLevel(Compression compression) {
  switch (compression) {
    case dvexport::v1::COMPRESSION_GZIP:
    case dvexport::v1::COMPRESSION_ZIP:
      return 9;
    case dvexport::v1::COMPRESSION_ZSTD:
      return kMaxZstdLevel;
    default:
      return 0;
  }
}

// --token-file and --user name two identities: the call can carry one.
absl::Status CheckIdentityFlags(const CommandLine& command) {
  if (!command.token_file.empty() && !command.user.empty()) {
    return UsageError("--token-file and --user exclude each other: give one identity");
  }
  return absl::OkStatus();
}

// Settles the number of attempts of --attempts and --no-retry.
absl::Status ApplyRetryFlags(ExportFlags& flags) {
  if (flags.no_retry && flags.attempts.has_value() && *flags.attempts != 1) {
    return UsageError(absl::StrCat("--no-retry contradicts --attempts ", *flags.attempts));
  }
  if (flags.no_retry) flags.command.channel.max_attempts = 1;
  if (flags.attempts.has_value()) flags.command.channel.max_attempts = *flags.attempts;
  return absl::OkStatus();
}

// Checks for the required flags and settles format and compression: as the
// flags say, else as the output file's name says; a flag that contradicts the
// name is an error.
absl::StatusOr<CommandLine> Complete(ExportFlags flags) {
  CommandLine& command = flags.command;
  if (command.server.empty()) return UsageError("--server HOST:PORT is required");
  absl::Status retries = ApplyRetryFlags(flags);
  if (!retries.ok()) return retries;
  absl::Status identity = CheckIdentityFlags(command);
  if (!identity.ok()) return identity;
  if (command.output.empty()) return UsageError("-o FILE is required (-o - for stdout)");

  std::optional<client::FileFormat> named;
  if (command.output != kStandardOutput) {
    named = client::FormatFromPath(command.output);
    if (!named.has_value() && !flags.format.has_value()) {
      return UsageError(absl::StrCat("cannot tell the format from the name '", command.output,
                                     "' (not .json, .csv, .xml or .adx, optionally .gz, .zip or "
                                     ".zst); give --format"));
    }
  }
  if (named.has_value() && flags.format.has_value() &&
      !SameFileFormat(*flags.format, named->format)) {
    return UsageError(absl::StrCat("--format ", FormatName(*flags.format),
                                   " contradicts the file name '", command.output, "'"));
  }
  if (named.has_value() && flags.compression.has_value() &&
      *flags.compression != named->compression) {
    return UsageError(absl::StrCat("--compression ", CompressionName(*flags.compression),
                                   " contradicts the file name '", command.output, "'"));
  }
  const client::FileFormat defaults = named.value_or(client::FileFormat{});
  const Format format = flags.format.value_or(defaults.format);
  const Compression compression = flags.compression.value_or(defaults.compression);
  if (flags.compression_level.has_value() && MaxLevel(compression) == 0) {
    return UsageError("--compression-level needs gzip, zip or zstd compression");
  }
  if (flags.compression_level.value_or(0) > MaxLevel(compression)) {
    return UsageError(absl::StrCat("--compression-level: ", *flags.compression_level,
                                   " is not 1 to ", MaxLevel(compression), " for ",
                                   CompressionName(compression)));
  }
  command.request.set_format(format);
  command.request.set_compression(compression);
  command.request.set_compression_level(flags.compression_level.value_or(0));
  return std::move(command);
}

// Checks what sync requires beyond export's: a state file, a file output, no limit.
absl::StatusOr<CommandLine> CompleteSync(ExportFlags flags) {
  if (flags.command.state_file.empty()) return UsageError("--state FILE is required");
  if (flags.command.output == kStandardOutput) {
    return UsageError(
        "sync writes a file (-o FILE): standard output cannot be known to be in place");
  }
  if (flags.command.request.query().has_limit()) {
    return UsageError("--limit cannot be used with sync: a limited export is incomplete");
  }
  if (flags.command.request.query().offset() != 0) {
    return UsageError("--offset cannot be used with sync: an export from an offset is incomplete");
  }
  return Complete(std::move(flags));
}

// Checks what stream, count and health require.
absl::StatusOr<CommandLine> CompleteOther(ExportFlags flags) {
  CommandLine& command = flags.command;
  if (command.server.empty()) return UsageError("--server HOST:PORT is required");
  absl::Status retries = ApplyRetryFlags(flags);
  if (!retries.ok()) return retries;
  absl::Status identity = CheckIdentityFlags(command);
  if (!identity.ok()) return identity;
  if (command.action == CommandLine::Action::kStream && command.output.empty()) {
    command.output = std::string(kStandardOutput);
  }
  return std::move(command);
}

// Checks that "streams drop" names exactly one stream.
absl::StatusOr<CommandLine> CompleteStreamsDrop(ExportFlags flags) {
  const CommandLine& command = flags.command;
  const int named =
      !command.state_file.empty() + !command.change_token.empty() + !command.stream_name.empty();
  if (named != 1) {
    return UsageError(absl::StrCat(named == 0 ? "give" : "give only", " one of --state FILE, ",
                                   "--change-token TOKEN and --name SLOT"));
  }
  return CompleteOther(std::move(flags));
}

// Parses "COMMAND [flags]", the flags from args[first_flag] on.
absl::StatusOr<CommandLine> ParseCommand(const CommandSpec& command,
                                         const std::vector<std::string>& args, size_t first_flag) {
  ExportFlags flags;
  flags.command.action = command.run;
  std::set<absl::string_view> given;
  for (size_t i = first_flag; i < args.size(); ++i) {
    const absl::string_view arg = args[i];
    if (arg.size() < 2 || arg[0] != '-') {
      return UsageError(absl::StrCat("unexpected argument '", arg, "'"));
    }
    absl::string_view name = arg;
    std::optional<absl::string_view> attached;
    if (absl::StartsWith(arg, "--")) {
      const size_t equals = arg.find('=');
      if (equals != arg.npos) {
        name = arg.substr(0, equals);
        attached = arg.substr(equals + 1);
      }
    }
    if (const RefusedFlag* secret = FindSecretFlag(name); secret != nullptr) {
      return UsageError(
          absl::StrCat(secret->name,
                       ": a secret is never given on the command line (other users of the host "
                       "can read it, the shell's history keeps it); use ",
                       secret->instead));
    }
    const FlagSpec* flag = FindFlag(name, command);
    if (flag == nullptr) {
      bool elsewhere = false;
      for (const CommandSpec& other : kCommands) elsewhere |= FindFlag(name, other) != nullptr;
      return UsageError(absl::StrCat("unknown flag ", name,
                                     elsewhere ? absl::StrCat(" for ", command.name) : ""));
    }

    if (flag->arity == Arity::kSwitch) {
      if (attached.has_value()) {
        return UsageError(absl::StrCat("", flag->name, " takes no value"));
      }
      absl::Status status = flag->apply("", flags);
      if (!status.ok()) return status;
      continue;
    }

    absl::string_view value;
    if (attached.has_value()) {
      value = *attached;
    } else if (i + 1 < args.size() && !absl::StartsWith(args[i + 1], "--")) {
      value = args[++i];
    } else {
      return UsageError(absl::StrCat("", name, " needs a value (", flag->value_name, ")"));
    }
    if (flag->arity == Arity::kValue) {
      if (!given.insert(flag->name).second) {
        return UsageError(absl::StrCat("", flag->name, " is given more than once"));
      }
      if (value.empty()) {
        return UsageError(absl::StrCat("", name, " needs a value (", flag->value_name, ")"));
      }
      absl::Status status = flag->apply(value, flags);
      if (!status.ok()) return status;
      continue;
    }
    for (absl::string_view item : absl::StrSplit(value, ',')) {
      item = absl::StripAsciiWhitespace(item);
      if (item.empty()) {
        return UsageError(absl::StrCat("", flag->name, ": empty item in '", value, "'"));
      }
      absl::Status status = flag->apply(item, flags);
      if (!status.ok()) return status;
    }
  }
  if (command.mask == kSyncCommand) return CompleteSync(std::move(flags));
  if (command.mask == kStreamsDropCommand) return CompleteStreamsDrop(std::move(flags));
  return command.mask == kExportCommand ? Complete(std::move(flags))
                                        : CompleteOther(std::move(flags));
}

constexpr size_t kHelpColumn = 28;
constexpr size_t kHelpWidth = 80;

// Appends "words" to "text", filling lines to kHelpWidth and indenting every
// line after the first to kHelpColumn, where the first starts.
void AppendWrapped(std::string& text, absl::string_view words) {
  size_t column = kHelpColumn;
  bool first = true;
  for (absl::string_view word : absl::StrSplit(words, ' ', absl::SkipEmpty())) {
    if (!first && column + 1 + word.size() > kHelpWidth) {
      absl::StrAppend(&text, "\n", std::string(kHelpColumn, ' '));
      column = kHelpColumn;
      first = true;
    }
    if (!first) {
      text += ' ';
      ++column;
    }
    absl::StrAppend(&text, word);
    column += word.size();
    first = false;
  }
  text += '\n';
}

void AppendFlagHelp(const CommandSpec& command, std::string& text) {
  absl::string_view section;
  for (const FlagSpec& flag : kFlags) {
    if ((flag.commands & command.mask) == 0) continue;
    if (flag.section != section) {
      section = flag.section;
      absl::StrAppend(&text, "\n", section, ":\n");
    }
    std::string synopsis = "  ";
    if (!flag.short_name.empty()) absl::StrAppend(&synopsis, flag.short_name, ", ");
    absl::StrAppend(&synopsis, flag.name);
    if (!flag.value_name.empty()) absl::StrAppend(&synopsis, " ", flag.value_name);
    if (flag.arity == Arity::kList) absl::StrAppend(&synopsis, ",...");
    if (synopsis.size() + 1 > kHelpColumn) {
      // Too long for the column: the help goes on the next line.
      absl::StrAppend(&synopsis, "\n", std::string(kHelpColumn, ' '));
    } else {
      synopsis.resize(kHelpColumn, ' ');
    }
    text += synopsis;
    AppendWrapped(text, flag.help);
  }
  std::string help = "  -h, --help";
  help.resize(kHelpColumn, ' ');
  text += help;
  AppendWrapped(text, "Show this help.");
}

constexpr absl::string_view kExportExitStatus =
    "\n"
    "Exit status: 0 written and verified, 1 export failed, 2 usage error, 3 and 4\n"
    "see below. Interrupted (SIGINT, SIGTERM, SIGHUP), it leaves FILE as it was and\n"
    "dies of the signal.\n";

constexpr absl::string_view kStreamExitStatus =
    "\n"
    "Exit status: 0 every value written, 1 the stream failed (FILE is left as it\n"
    "was; stdout may hold part of the values), 2 usage error, 3 and 4 see below.\n";

constexpr absl::string_view kCountExitStatus =
    "\n"
    "Exit status: 0 counted, 1 the call failed, 2 usage error, 3 and 4 see below.\n";

constexpr absl::string_view kSyncExitStatus =
    "\n"
    "Exit status: 0 the output and the state file are in place, 1 the sync failed\n"
    "(the state file is left as it was), 2 usage error, 3 and 4 see below.\n";

constexpr absl::string_view kStreamsListExitStatus =
    "\n"
    "Exit status: 0 listed, 1 the call failed, 2 usage error, 3 see below.\n";

constexpr absl::string_view kStreamsDropExitStatus =
    "\n"
    "Exit status: 0 dropped, 1 the call failed (NOT_FOUND: no such stream;\n"
    "ABORTED: a sync reads it right now, try again), 2 usage error, 3 and 4 see\n"
    "below (4: another user's stream).\n";

constexpr absl::string_view kHealthExitStatus =
    "\n"
    "Exit status: 0 SERVING, 1 anything else or the call failed, 2 usage error.\n";

// The identity of the commands that read data, after their exit status.
constexpr absl::string_view kIdentityHelp =
    "\n"
    "Identity: the server asks every call but health for a DHIS2 user. The first\n"
    "of these is sent: --token-file FILE (a personal access token), --user NAME\n"
    "(its password from DVEXPORT_PASSWORD, else typed at a prompt on the terminal,\n"
    "without echo; no terminal and no DVEXPORT_PASSWORD: exit 2), DVEXPORT_TOKEN.\n"
    "None: the call carries no identity (for a server run with --auth none).\n"
    "Secrets are never flags: --token and --password are refused (exit 2).\n"
    "Exit 3: the server did not accept the identity (UNAUTHENTICATED: an unknown,\n"
    "expired or revoked token, a wrong password, a disabled account).\n"
    "Exit 4: the user may not read what was asked for (PERMISSION_DENIED: DHIS2's\n"
    "E2010 data set, E2011 attribute option combo, E2012 org unit outside the\n"
    "user's data view).\n";

std::string UsageOf(const CommandSpec& command) {
  std::string text(command.synopsis);
  AppendFlagHelp(command, text);
  switch (command.mask) {
    case kExportCommand:
      absl::StrAppend(&text, kExportExitStatus);
      break;
    case kStreamCommand:
      absl::StrAppend(&text, kStreamExitStatus);
      break;
    case kSyncCommand:
      absl::StrAppend(&text, kSyncExitStatus);
      break;
    case kCountCommand:
      absl::StrAppend(&text, kCountExitStatus);
      break;
    case kStreamsListCommand:
      absl::StrAppend(&text, kStreamsListExitStatus);
      break;
    case kStreamsDropCommand:
      absl::StrAppend(&text, kStreamsDropExitStatus);
      break;
    default:
      absl::StrAppend(&text, kHealthExitStatus);
      break;
  }
  if ((command.mask & kIdentityCommands) != 0) absl::StrAppend(&text, kIdentityHelp);
  return text;
}

}  // namespace

absl::StatusOr<CommandLine> ParseCommandLine(const std::vector<std::string>& args) {
  CommandLine help;
  if (args.empty()) return UsageError("no command given");
  if (IsHelp(args[0])) return help;
  size_t first_flag = 1;
  // The two words of "streams list" are one command; a single argument with a space is none.
  const CommandSpec* command = absl::StrContains(args[0], ' ') ? nullptr : FindCommand(args[0]);
  if (args[0] == kStreamsCommand) {
    if (args.size() < 2) return UsageError("streams needs an action: list or drop");
    if (IsHelp(args[1])) {
      help.action = CommandLine::Action::kShowStreamsHelp;
      return help;
    }
    command = FindCommand(absl::StrCat(kStreamsCommand, " ", args[1]));
    if (command == nullptr) {
      return UsageError(absl::StrCat("unknown streams action '", args[1], "' (list or drop)"));
    }
    first_flag = 2;
  }
  if (command == nullptr) {
    if (absl::StartsWith(args[0], "-")) {
      return UsageError(absl::StrCat("unknown flag ", args[0], " (the command comes first)"));
    }
    return UsageError(absl::StrCat("unknown command '", args[0], "'"));
  }
  for (size_t i = first_flag; i < args.size(); ++i) {
    if (IsHelp(args[i])) {
      help.action = command->help;
      return help;
    }
  }
  return ParseCommand(*command, args, first_flag);
}

std::string Usage() {
  return absl::StrCat(
      "Usage: dvexport COMMAND [flags]\n"
      "\n"
      "Exports DHIS2 data values from a dvexport server.\n"
      "\n"
      "Commands:\n"
      "  export                    Write data values to a JSON or CSV file.\n"
      "  stream                    Write typed data values as JSON lines.\n"
      "  sync                      Write what changed since the last sync to a file.\n"
      "  count                     Print how many data values export would write.\n"
      "  health                    Print whether the server is serving.\n"
      "  streams list|drop         List or drop the change streams sync keeps.\n"
      "\n"
      "'dvexport COMMAND --help' shows the flags of COMMAND; those of export:\n"
      "\n",
      ExportUsage());
}

std::string ExportUsage() { return UsageOf(kCommands[0]); }

std::string CommandUsage(absl::string_view name) {
  if (name == kStreamsCommand) {
    return absl::StrCat(UsageOf(*FindCommand("streams list")), "\n",
                        UsageOf(*FindCommand("streams drop")));
  }
  if (absl::StrContains(name, ' ')) return std::string();
  const CommandSpec* command = FindCommand(name);
  return command == nullptr ? std::string() : UsageOf(*command);
}

}  // namespace dvexport::cli
