// The only file of dvexport that uses libpq directly, for what libpqxx 6.4
// cannot do.

#include "service/db/libpq_gaps.h"

#include <libpq-fe.h>

#include <cstdlib>
#include <memory>
#include <string_view>

#include "absl/strings/str_cat.h"

namespace dvexport::db {
namespace {

struct ConninfoOptionsDeleter {
  // libpq: PQconninfoParse's result is freed with PQconninfoFree.
  void operator()(PQconninfoOption* options) const { PQconninfoFree(options); }
};
using ConninfoOptions = std::unique_ptr<PQconninfoOption, ConninfoOptionsDeleter>;

// libpq: PQconninfoParse is the only parser of conninfo strings and URIs; libpqxx 6.4 has none.
ConninfoOptions Parse(const std::string& conninfo) {
  char* error = nullptr;
  ConninfoOptions options(PQconninfoParse(conninfo.c_str(), &error));
  // libpq: its message is freed with PQfreemem, unread (it may quote a password).
  if (error != nullptr) PQfreemem(error);
  return options;
}

absl::Status InvalidConninfo() {
  return absl::InvalidArgumentError(
      "the connection string is not a valid libpq conninfo (keyword=value pairs or a "
      "postgresql:// URI; quote values holding spaces as 'a b'); libpq's message is not shown "
      "because it may quote a password");
}

struct Default {
  const char* keyword;
  const char* environment;  // the PG* variable that sets it, or null
  const char* value;
};

constexpr Default kDefaults[] = {
    {"connect_timeout", "PGCONNECT_TIMEOUT", "10"},
    {"keepalives", nullptr, "1"},
    {"keepalives_idle", nullptr, "30"},
    {"keepalives_interval", nullptr, "10"},
    {"keepalives_count", nullptr, "3"},
};

void AppendQuoted(std::string_view value, std::string* out) {
  *out += '\'';
  for (char c : value) {
    if (c == '\'' || c == '\\') *out += '\\';
    *out += c;
  }
  *out += '\'';
}

}  // namespace

absl::Status CheckConninfo(const std::string& conninfo) {
  return Parse(conninfo) == nullptr ? InvalidConninfo() : absl::OkStatus();
}

absl::StatusOr<std::string> WithConnectionDefaults(const std::string& conninfo) {
  ConninfoOptions options = Parse(conninfo);
  if (options == nullptr) return InvalidConninfo();
  // The parsed options, keyword=value: a URI cannot take more pairs appended.
  std::string out;
  auto append = [&out](std::string_view keyword, std::string_view value) {
    if (!out.empty()) out += ' ';
    out.append(keyword).append("=");
    AppendQuoted(value, &out);
  };
  for (const PQconninfoOption* o = options.get(); o->keyword != nullptr; ++o) {
    if (o->val != nullptr) append(o->keyword, o->val);
  }
  for (const Default& d : kDefaults) {
    bool set = d.environment != nullptr && std::getenv(d.environment) != nullptr;
    for (const PQconninfoOption* o = options.get(); o->keyword != nullptr && !set; ++o) {
      set = o->val != nullptr && std::string_view(o->keyword) == d.keyword;
    }
    if (!set) append(d.keyword, d.value);
  }
  return out;
}

}  // namespace dvexport::db
