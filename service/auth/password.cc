#include "service/auth/password.h"

#include <crypt.h>
#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <array>
#include <cstring>
#include <memory>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"

namespace dvexport::auth {
namespace {

// A well-formed $2a$ hash at cost 10, DHIS2's encoding: its result is never compared.
constexpr const char* kDummyHash = "$2a$10$qzoNDnwGyTqv4dDtMnv55O/S8DzD5/uj2Y3z0mCFqqKQ39X67svXC";

bool IsBcryptChar(char c) {
  return c == '.' || c == '/' || absl::ascii_isalnum(static_cast<unsigned char>(c));
}

// crypt_rn of "password" with "setting" into "*data"; nullptr when libxcrypt refuses (a cost
// out of range, an unsupported variant). "password" holds no NUL.
const char* Crypt(const std::string& password, const char* setting, crypt_data* data) {
  std::memset(data, 0, sizeof(*data));
  return crypt_rn(password.c_str(), setting, data, sizeof(*data));
}

}  // namespace

bool IsBcryptHash(absl::string_view hash) {
  // "$2", an optional a, y or b, "$", two digits, "$", 53 characters: 59 or 60 in all.
  if (hash.size() < 2 || hash.substr(0, 2) != "$2") return false;
  size_t i = 2;
  if (i < hash.size() && (hash[i] == 'a' || hash[i] == 'y' || hash[i] == 'b')) ++i;
  if (hash.size() != i + 4 + 53) return false;
  if (hash[i] != '$' || !absl::ascii_isdigit(static_cast<unsigned char>(hash[i + 1])) ||
      !absl::ascii_isdigit(static_cast<unsigned char>(hash[i + 2])) || hash[i + 3] != '$') {
    return false;
  }
  for (size_t j = i + 4; j < hash.size(); ++j) {
    if (!IsBcryptChar(hash[j])) return false;
  }
  return true;
}

bool PasswordMatches(absl::string_view password, absl::string_view hash) {
  if (password.size() > kMaxPasswordBytes || password.find('\0') != absl::string_view::npos) {
    return false;
  }
  if (!IsBcryptHash(hash)) {
    DummyPasswordCheck(password);
    return false;
  }
  auto data = std::make_unique<crypt_data>();
  const std::string setting(hash);
  const char* result = Crypt(std::string(password), setting.c_str(), data.get());
  if (result == nullptr || result[0] == '*') return false;
  const size_t size = std::strlen(result);
  const bool equal = size == hash.size() && CRYPTO_memcmp(result, hash.data(), size) == 0;
  OPENSSL_cleanse(data.get(), sizeof(*data));
  return equal;
}

void DummyPasswordCheck(absl::string_view password) {
  auto data = std::make_unique<crypt_data>();
  std::string phrase(password.substr(0, kMaxPasswordBytes));
  // crypt_rn reads a C string: what follows a NUL does not change the cost.
  Crypt(phrase, kDummyHash, data.get());
  OPENSSL_cleanse(data.get(), sizeof(*data));
  OPENSSL_cleanse(phrase.data(), phrase.size());
}

absl::StatusOr<std::string> BcryptHash(absl::string_view password, absl::string_view prefix,
                                       int cost) {
  if (password.find('\0') != absl::string_view::npos) {
    return absl::InvalidArgumentError("password: a NUL byte cannot be hashed by crypt_rn");
  }
  std::array<unsigned char, 16> random;
  if (RAND_bytes(random.data(), random.size()) != 1) {
    return absl::InternalError("random salt: OpenSSL's RAND_bytes failed");
  }
  std::array<char, CRYPT_GENSALT_OUTPUT_SIZE> setting;
  const std::string prefix_text(prefix);
  if (crypt_gensalt_rn(prefix_text.c_str(), cost, reinterpret_cast<const char*>(random.data()),
                       random.size(), setting.data(), setting.size()) == nullptr) {
    return absl::InvalidArgumentError(absl::StrCat(
        "prefix and cost: libxcrypt makes no bcrypt setting for ", prefix_text, " at cost ", cost));
  }
  auto data = std::make_unique<crypt_data>();
  const char* result = Crypt(std::string(password), setting.data(), data.get());
  if (result == nullptr || result[0] == '*') {
    return absl::InvalidArgumentError("prefix: libxcrypt did not hash with this setting");
  }
  std::string hash(result);
  OPENSSL_cleanse(data.get(), sizeof(*data));
  return hash;
}

}  // namespace dvexport::auth
