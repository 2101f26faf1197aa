#include "service/dhis2/change_token.h"

#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "common/crc32.h"

namespace dvexport::dhis2 {
namespace {

constexpr unsigned char kVersion = 2;
// A stream token: the same layout with the slot's id where version 2 has the xmin.
constexpr unsigned char kStreamVersion = 3;
// Version, system identifier, database OID, name hash, xmin (or slot id), WAL position, CRC-32.
constexpr size_t kBinaryLength = 1 + 8 + 4 + 6 + 8 + 8 + 4;
static_assert(kBinaryLength % 3 == 0 && kBinaryLength / 3 * 4 == kChangeTokenLength);
// Version 1: version, system identifier, xmin, WAL position, CRC-32; 39 characters, whose last
// holds 2 spare bits.
constexpr unsigned char kVersion1 = 1;
constexpr size_t kVersion1BinaryLength = 1 + 3 * 8 + 4;
constexpr size_t kVersion1Length = 39;
constexpr uint64_t kNameHashMask = (uint64_t{1} << 48) - 1;

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

uint64_t DatabaseNameHash(absl::string_view name) {
  uint64_t hash = 0xcbf29ce484222325u;
  for (const char c : name) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3u;
  }
  return hash & kNameHashMask;
}

std::string EncodeChangeToken(const ChangeToken& token) {
  std::string binary;
  const bool stream = token.kind == ChangeTokenKind::kStream;
  binary.push_back(static_cast<char>(stream ? kStreamVersion : kVersion));
  PutLittleEndian(token.system_identifier, 8, &binary);
  PutLittleEndian(token.database_oid, 4, &binary);
  PutLittleEndian(token.database_name_hash, 6, &binary);
  PutLittleEndian(stream ? token.slot_id : token.xmin, 8, &binary);
  PutLittleEndian(token.wal_lsn, 8, &binary);
  PutLittleEndian(common::Crc32(0, std::string_view(binary)), 4, &binary);
  return absl::WebSafeBase64Escape(binary);
}

absl::StatusOr<ChangeToken> DecodeChangeToken(absl::string_view text) {
  if (text.size() != kChangeTokenLength && text.size() != kVersion1Length) {
    return NotAToken(absl::StrCat(text.size(), " characters, not ", kChangeTokenLength));
  }
  const bool version1 = text.size() == kVersion1Length;
  std::string binary;
  if (text.find_first_not_of("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_") !=
          absl::string_view::npos ||
      !absl::WebSafeBase64Unescape(text, &binary) ||
      binary.size() != (version1 ? kVersion1BinaryLength : kBinaryLength)) {
    return NotAToken("not base64url");
  }
  // Bits past the last byte decode to nothing: only the spelling dvexport writes is a token.
  if (absl::WebSafeBase64Escape(binary) != text) {
    return NotAToken("its last character has spare bits set");
  }
  const unsigned char version = static_cast<unsigned char>(binary[0]);
  if (version1 ? version != kVersion1 : version != kVersion && version != kStreamVersion) {
    return NotAToken(absl::StrCat("version ", version, " in ", text.size(),
                                  " characters, this server writes versions ", kVersion, " and ",
                                  kStreamVersion));
  }
  const absl::string_view view(binary);
  const size_t crc_at = binary.size() - 4;
  if (GetLittleEndian(view.substr(crc_at)) !=
      common::Crc32(0, std::string_view(binary).substr(0, crc_at))) {
    return NotAToken("its checksum does not match: it was altered or cut");
  }
  if (version1) {
    return absl::FailedPreconditionError(
        "changes_since: the token is of version 1, written by an earlier dvexport before tokens "
        "named their database, so no server can tell whether it belongs to this database; "
        "export everything again without changes_since");
  }
  ChangeToken token;
  token.system_identifier = GetLittleEndian(view.substr(1, 8));
  token.database_oid = static_cast<uint32_t>(GetLittleEndian(view.substr(9, 4)));
  token.database_name_hash = GetLittleEndian(view.substr(13, 6));
  if (version == kStreamVersion) {
    token.kind = ChangeTokenKind::kStream;
    token.slot_id = GetLittleEndian(view.substr(19, 8));
  } else {
    token.xmin = GetLittleEndian(view.substr(19, 8));
  }
  token.wal_lsn = GetLittleEndian(view.substr(27, 8));
  return token;
}

}  // namespace dvexport::dhis2
