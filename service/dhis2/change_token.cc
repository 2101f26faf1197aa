#include "service/dhis2/change_token.h"

#include <string_view>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/crc32.h"

namespace dvexport::dhis2 {
namespace {

constexpr unsigned char kVersion = 1;
// Version, three 64-bit fields, CRC-32.
constexpr size_t kBinaryLength = 1 + 3 * 8 + 4;
static_assert((kBinaryLength * 4 + 2) / 3 == kChangeTokenLength);

void PutLittleEndian(uint64_t value, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(value >> (8 * i)));
}

uint64_t GetLittleEndian(absl::string_view bytes) {
  uint64_t value = 0;
  for (size_t i = bytes.size(); i > 0; --i) {
    value = value << 8 | static_cast<unsigned char>(bytes[i - 1]);
  }
  return value;
}

absl::Status NotAToken(absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat("changes_since: not a change token of dvexport (", why,
                   "); pass the change_token of an earlier export unchanged"));
}

}  // namespace

std::string EncodeChangeToken(const ChangeToken& token) {
  std::string binary;
  binary.push_back(static_cast<char>(kVersion));
  PutLittleEndian(token.system_identifier, 8, &binary);
  PutLittleEndian(token.xmin, 8, &binary);
  PutLittleEndian(token.wal_lsn, 8, &binary);
  PutLittleEndian(common::Crc32(0, std::string_view(binary)), 4, &binary);
  return absl::WebSafeBase64Escape(binary);
}

absl::StatusOr<ChangeToken> DecodeChangeToken(absl::string_view text) {
  if (text.size() != kChangeTokenLength) {
    return NotAToken(absl::StrCat(text.size(), " characters, not ", kChangeTokenLength));
  }
  std::string binary;
  if (text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") !=
          absl::string_view::npos ||
      !absl::WebSafeBase64Unescape(text, &binary) || binary.size() != kBinaryLength) {
    return NotAToken("not base64url");
  }
  if (static_cast<unsigned char>(binary[0]) != kVersion) {
    return NotAToken(absl::StrCat("version ", static_cast<unsigned char>(binary[0]),
                                  ", this server writes version ", kVersion));
  }
  const absl::string_view view(binary);
  if (GetLittleEndian(view.substr(25, 4)) !=
      common::Crc32(0, std::string_view(binary).substr(0, 25))) {
    return NotAToken("its checksum does not match: it was altered or cut");
  }
  ChangeToken token;
  token.system_identifier = GetLittleEndian(view.substr(1, 8));
  token.xmin = GetLittleEndian(view.substr(9, 8));
  token.wal_lsn = GetLittleEndian(view.substr(17, 8));
  return token;
}

}  // namespace dvexport::dhis2
