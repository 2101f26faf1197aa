#include "client/cli/command_line.h"

#include <algorithm>
#include <cmath>
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

using dvexport::v1::Compression;
using dvexport::v1::Format;

// The export command as its flags come in: the choices left to the output
// file's name are kept apart until all flags are read.
struct ExportFlags {
  CommandLine command;
  std::optional<Format> format;
  std::optional<Compression> compression;
  std::optional<int> compression_level;
};

enum class Arity {
  kSwitch,  // --children
  kValue,   // --server HOST:PORT, at most once
  kList,    // --period 202401,202402 --period 202403
};

struct FlagSpec {
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

dvexport::v1::ExportRequest& Query(ExportFlags& flags) {
  return *flags.command.request.mutable_query();
}

const FlagSpec kExportFlags[] = {
    {"Connection", "--server", "", "HOST:PORT", "Required. The dvexport server.", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       flags.command.server = std::string(value);
       return absl::OkStatus();
     }},
    {"Connection", "--timeout", "", "SECONDS",
     "Fail if the export takes longer. Default: no limit.", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       double seconds;
       if (!absl::SimpleAtod(value, &seconds) || !std::isfinite(seconds) || seconds <= 0 ||
           seconds > 1e9) {
         return UsageError(absl::StrCat("--timeout: '", value, "' is not a number of seconds > 0"));
       }
       flags.command.timeout = std::chrono::milliseconds(std::llround(std::ceil(seconds * 1000)));
       return absl::OkStatus();
     }},
    {"Filters", "--data-set", "", "UID", "Export the data elements of these data sets.",
     Arity::kList,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).add_data_set(std::string(value));
       return absl::OkStatus();
     }},
    {"Filters", "--data-element", "", "UID", "Export these data elements (as well).", Arity::kList,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).add_data_element(std::string(value));
       return absl::OkStatus();
     }},
    {"Filters", "--period", "", "ISO", "Export these ISO periods: 202401, 2024Q1, 2024W5, 2024...",
     Arity::kList,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).add_period(std::string(value));
       return absl::OkStatus();
     }},
    {"Filters", "--start-date", "", "DATE",
     "Export the periods within [--start-date, --end-date] (yyyy-MM-dd).", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).set_start_date(std::string(value));
       return absl::OkStatus();
     }},
    {"Filters", "--end-date", "", "DATE", "See --start-date; give both or neither.", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).set_end_date(std::string(value));
       return absl::OkStatus();
     }},
    {"Filters", "--org-unit", "", "UID", "Export these organisation units.", Arity::kList,
     [](absl::string_view value, ExportFlags& flags) {
       Query(flags).add_org_unit(std::string(value));
       return absl::OkStatus();
     }},
    {"Filters", "--children", "", "", "Also export the descendants of the org units.",
     Arity::kSwitch,
     [](absl::string_view, ExportFlags& flags) {
       Query(flags).set_children(true);
       return absl::OkStatus();
     }},
    {"Filters", "--include-deleted", "", "", "Also export values marked deleted.", Arity::kSwitch,
     [](absl::string_view, ExportFlags& flags) {
       Query(flags).set_include_deleted(true);
       return absl::OkStatus();
     }},
    {"Filters", "--limit", "", "N", "Export at most N values.", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       int32_t limit;
       if (!absl::SimpleAtoi(value, &limit) || limit < 0) {
         return UsageError(
             absl::StrCat("--limit: '", value, "' is not a whole number from 0 to 2147483647"));
       }
       Query(flags).set_limit(limit);
       return absl::OkStatus();
     }},
    {"Output", "--output", "-o", "FILE",
     "Required. The file to write, replaced only once the export is complete and verified; "
     "'-' for standard output.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       flags.command.output = std::string(value);
       return absl::OkStatus();
     }},
    {"Output", "--format", "", "json|csv",
     "Default: from FILE's name (.json, .csv, .json.gz, .csv.gz); json for '-'.", Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       if (value == "json") {
         flags.format = dvexport::v1::FORMAT_JSON;
       } else if (value == "csv") {
         flags.format = dvexport::v1::FORMAT_CSV;
       } else {
         return UsageError(absl::StrCat("--format: '", value, "' is not json or csv"));
       }
       return absl::OkStatus();
     }},
    {"Output", "--compression", "", "gzip|none", "Default: gzip when FILE ends in .gz, else none.",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       if (value == "gzip") {
         flags.compression = dvexport::v1::COMPRESSION_GZIP;
       } else if (value == "none") {
         flags.compression = dvexport::v1::COMPRESSION_NONE;
       } else {
         return UsageError(absl::StrCat("--compression: '", value, "' is not gzip or none"));
       }
       return absl::OkStatus();
     }},
    {"Output", "--compression-level", "", "N", "gzip level: 1 (fastest, default) to 9 (smallest).",
     Arity::kValue,
     [](absl::string_view value, ExportFlags& flags) {
       int level;
       if (!absl::SimpleAtoi(value, &level) || level < 1 || level > 9) {
         return UsageError(absl::StrCat("--compression-level: '", value, "' is not 1 to 9"));
       }
       flags.compression_level = level;
       return absl::OkStatus();
     }},
};

bool IsHelp(absl::string_view arg) { return arg == "-h" || arg == "--help"; }

const FlagSpec* FindFlag(absl::string_view name) {
  for (const FlagSpec& flag : kExportFlags) {
    if (name == flag.name || (!flag.short_name.empty() && name == flag.short_name)) return &flag;
  }
  return nullptr;
}

absl::string_view FormatName(Format format) {
  return format == dvexport::v1::FORMAT_CSV ? "csv" : "json";
}

absl::string_view CompressionName(Compression compression) {
  return compression == dvexport::v1::COMPRESSION_GZIP ? "gzip" : "none";
}

// Checks for the required flags and settles format and compression: as the
// flags say, else as the output file's name says; a flag that contradicts the
// name is an error.
absl::StatusOr<CommandLine> Complete(ExportFlags flags) {
  CommandLine& command = flags.command;
  if (command.server.empty()) return UsageError("--server HOST:PORT is required");
  if (command.output.empty()) return UsageError("-o FILE is required (-o - for stdout)");

  std::optional<client::FileFormat> named;
  if (command.output != kStandardOutput) {
    named = client::FormatFromPath(command.output);
    if (!named.has_value() && !flags.format.has_value()) {
      return UsageError(absl::StrCat("cannot tell the format from the name '", command.output,
                                     "' (not .json, .csv, .json.gz, .csv.gz); give --format"));
    }
  }
  if (named.has_value() && flags.format.has_value() && *flags.format != named->format) {
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
  if (flags.compression_level.has_value() && compression != dvexport::v1::COMPRESSION_GZIP) {
    return UsageError("--compression-level needs gzip compression");
  }
  command.request.set_format(format);
  command.request.set_compression(compression);
  command.request.set_compression_level(flags.compression_level.value_or(0));
  return std::move(command);
}

// Parses "export [flags]".
absl::StatusOr<CommandLine> ParseExport(const std::vector<std::string>& args) {
  ExportFlags flags;
  flags.command.action = CommandLine::Action::kExport;
  std::set<absl::string_view> given;
  for (size_t i = 1; i < args.size(); ++i) {
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
    const FlagSpec* flag = FindFlag(name);
    if (flag == nullptr) return UsageError(absl::StrCat("unknown flag ", name));

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
  return Complete(std::move(flags));
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

void AppendFlagHelp(std::string& text) {
  absl::string_view section;
  for (const FlagSpec& flag : kExportFlags) {
    if (flag.section != section) {
      section = flag.section;
      absl::StrAppend(&text, "\n", section, ":\n");
    }
    std::string synopsis = "  ";
    if (!flag.short_name.empty()) absl::StrAppend(&synopsis, flag.short_name, ", ");
    absl::StrAppend(&synopsis, flag.name);
    if (!flag.value_name.empty()) absl::StrAppend(&synopsis, " ", flag.value_name);
    if (flag.arity == Arity::kList) absl::StrAppend(&synopsis, ",...");
    synopsis.resize(std::max(synopsis.size() + 1, kHelpColumn), ' ');
    text += synopsis;
    AppendWrapped(text, flag.help);
  }
  std::string help = "  -h, --help";
  help.resize(kHelpColumn, ' ');
  text += help;
  AppendWrapped(text, "Show this help.");
}

constexpr absl::string_view kExportSynopsis =
    "Usage: dvexport export --server HOST:PORT [filters] [output flags] -o FILE\n"
    "\n"
    "Exports data values, filtered as by DHIS2's /api/dataValueSets, to a JSON or\n"
    "CSV file (optionally gzip). Identifiers are UIDs. Repeatable flags also take\n"
    "comma-separated lists: --period 202401,202402 --period 202403.\n";

constexpr absl::string_view kExitStatus =
    "\n"
    "Exit status: 0 written and verified, 1 export failed, 2 usage error. Interrupted\n"
    "(SIGINT, SIGTERM, SIGHUP), it leaves FILE as it was and dies of the signal.\n";

}  // namespace

absl::StatusOr<CommandLine> ParseCommandLine(const std::vector<std::string>& args) {
  CommandLine help;
  if (args.empty()) return UsageError("no command given");
  if (IsHelp(args[0])) return help;
  if (args[0] != "export") {
    if (absl::StartsWith(args[0], "-")) {
      return UsageError(absl::StrCat("unknown flag ", args[0], " (the command comes first)"));
    }
    return UsageError(absl::StrCat("unknown command '", args[0], "'"));
  }
  for (size_t i = 1; i < args.size(); ++i) {
    if (IsHelp(args[i])) {
      help.action = CommandLine::Action::kShowExportHelp;
      return help;
    }
  }
  return ParseExport(args);
}

std::string Usage() {
  return absl::StrCat(
      "Usage: dvexport COMMAND [flags]\n"
      "\n"
      "Exports DHIS2 data values from a dvexport server.\n"
      "\n"
      "Commands:\n"
      "  export                    Write data values to a JSON or CSV file.\n"
      "\n",
      ExportUsage());
}

std::string ExportUsage() {
  std::string text(kExportSynopsis);
  AppendFlagHelp(text);
  absl::StrAppend(&text, kExitStatus);
  return text;
}

}  // namespace dvexport::cli
