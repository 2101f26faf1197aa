#include "service/dhis2/uid.h"

namespace dvexport::dhis2 {

namespace {

bool IsAsciiLetter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }

bool IsAsciiDigit(char c) { return c >= '0' && c <= '9'; }

}  // namespace

bool IsValidUid(std::string_view s) {
  if (s.size() != 11 || !IsAsciiLetter(s[0])) return false;
  for (char c : s.substr(1)) {
    if (!IsAsciiLetter(c) && !IsAsciiDigit(c)) return false;
  }
  return true;
}

}  // namespace dvexport::dhis2
