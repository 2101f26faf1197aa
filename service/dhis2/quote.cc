#include "service/dhis2/quote.h"

#include <cstddef>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"

namespace dvexport::dhis2 {

namespace {

constexpr std::size_t kMaxQuotedBytes = 64;

}  // namespace

std::string QuoteForMessage(std::string_view value) {
  if (value.size() <= kMaxQuotedBytes) {
    return absl::StrCat("\"", absl::CHexEscape(absl::string_view(value.data(), value.size())),
                        "\"");
  }
  return absl::StrCat("\"", absl::CHexEscape(absl::string_view(value.data(), kMaxQuotedBytes)),
                      "...\" (", value.size(), " bytes)");
}

}  // namespace dvexport::dhis2
