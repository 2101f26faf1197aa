#include "service/dhis2/change_token.h"

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "absl/strings/escaping.h"
#include "common/crc32.h"

namespace dvexport::dhis2 {
namespace {

using ::testing::HasSubstr;

constexpr char kAlphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

ChangeToken SampleToken() {
  ChangeToken token;
  token.system_identifier = 7714004448367194327u;
  token.database_oid = 16384;
  token.database_name_hash = DatabaseNameHash("dhis2");
  token.xmin = (uint64_t{3} << 32) + 123456;  // epoch 3
  token.wal_lsn = 0x1A2B3C4D5E6Fu;
  return token;
}

void PutLittleEndian(uint64_t value, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) out->push_back(static_cast<char>(value >> (8 * i)));
}

// A token as dvexport before version 2 wrote it: version 1, system identifier, xmin, WAL
// position, CRC-32; 39 characters.
std::string EncodeVersion1(const ChangeToken& token) {
  std::string binary(1, '\x01');
  PutLittleEndian(token.system_identifier, 8, &binary);
  PutLittleEndian(token.xmin, 8, &binary);
  PutLittleEndian(token.wal_lsn, 8, &binary);
  PutLittleEndian(common::Crc32(0, std::string_view(binary)), 4, &binary);
  return absl::WebSafeBase64Escape(binary);
}

void ExpectNotAToken(const std::string& text, const std::string& why) {
  absl::StatusOr<ChangeToken> decoded = DecodeChangeToken(text);
  ASSERT_FALSE(decoded.ok()) << text;
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument) << text;
  EXPECT_THAT(decoded.status().message(), HasSubstr("changes_since: not a change token")) << text;
  EXPECT_THAT(decoded.status().message(), HasSubstr(why)) << text;
}

TEST(ChangeTokenTest, RoundTripsEveryField) {
  const std::string text = EncodeChangeToken(SampleToken());
  EXPECT_EQ(text.size(), kChangeTokenLength);
  EXPECT_EQ(text.find_first_not_of(kAlphabet), std::string::npos);
  absl::StatusOr<ChangeToken> decoded = DecodeChangeToken(text);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, SampleToken());
}

TEST(ChangeTokenTest, KeepsItsFormat) {
  // Tokens outlive servers (sync state files): this spelling is version 2's, computed
  // independently (Python: struct, zlib.crc32, base64.urlsafe_b64encode).
  EXPECT_EQ(EncodeChangeToken(SampleToken()),
            "Atewtdwspg1rAEAAALn1qoOfZkDiAQADAAAAb15NPCsaAADTqE7d");
  EXPECT_EQ(DatabaseNameHash(""), 0x9ce484222325u);
  EXPECT_EQ(DatabaseNameHash("dhis2"), 0x669f83aaf5b9u);
  EXPECT_EQ(DatabaseNameHash("dhis2_training"), 0x83e3ba89f388u);
}

TEST(ChangeTokenTest, RoundTripsExtremes) {
  ChangeToken token;
  token.system_identifier = ~uint64_t{0};
  token.database_oid = ~uint32_t{0};
  token.database_name_hash = (uint64_t{1} << 48) - 1;
  token.xmin = ~uint64_t{0} - 1;
  token.wal_lsn = 0;
  absl::StatusOr<ChangeToken> decoded = DecodeChangeToken(EncodeChangeToken(token));
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, token);
}

TEST(ChangeTokenTest, RefusesEveryAlteredCharacter) {
  const std::string text = EncodeChangeToken(SampleToken());
  for (size_t i = 0; i < text.size(); ++i) {
    std::string altered = text;
    altered[i] = altered[i] == 'A' ? 'B' : 'A';
    absl::StatusOr<ChangeToken> decoded = DecodeChangeToken(altered);
    ASSERT_FALSE(decoded.ok()) << i;
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument) << i;
    EXPECT_THAT(decoded.status().message(), HasSubstr("changes_since")) << i;
  }
}

TEST(ChangeTokenTest, HasOneSpellingOnly) {
  // Every character carries 6 bits of the token: each of the 64 last characters but the one
  // written is another token, refused.
  const std::string text = EncodeChangeToken(SampleToken());
  int accepted = 0;
  for (const char c : std::string_view(kAlphabet)) {
    std::string spelling = text;
    spelling.back() = c;
    absl::StatusOr<ChangeToken> decoded = DecodeChangeToken(spelling);
    if (decoded.ok()) {
      ++accepted;
      EXPECT_EQ(spelling, text);
      continue;
    }
    EXPECT_EQ(decoded.status().code(), absl::StatusCode::kInvalidArgument) << spelling;
  }
  EXPECT_EQ(accepted, 1);
}

TEST(ChangeTokenTest, RefusesVersion1AskingForAFullExport) {
  const std::string text = EncodeVersion1(SampleToken());
  ASSERT_EQ(text.size(), 39u);
  absl::StatusOr<ChangeToken> decoded = DecodeChangeToken(text);
  ASSERT_FALSE(decoded.ok());
  EXPECT_EQ(decoded.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_THAT(decoded.status().message(), HasSubstr("changes_since: the token is of version 1"));
  EXPECT_THAT(decoded.status().message(), HasSubstr("export everything again"));
  // Altered, it is no token at all.
  std::string altered = text;
  altered[20] = altered[20] == 'x' ? 'y' : 'x';
  ExpectNotAToken(altered, "checksum");
}

TEST(ChangeTokenTest, RefusesSpareBitsOfVersion1) {
  // 29 bytes in 39 characters: the last holds 4 bits of the checksum and 2 spare bits. Of its 4
  // spellings only the one with both spare bits zero is the token.
  const std::string text = EncodeVersion1(SampleToken());
  const size_t last = std::string_view(kAlphabet).find(text.back());
  ASSERT_EQ(last % 4, 0u);
  for (size_t spare = 1; spare < 4; ++spare) {
    std::string spelling = text;
    spelling.back() = kAlphabet[last + spare];
    ExpectNotAToken(spelling, "spare bits");
  }
}

TEST(ChangeTokenTest, RefusesMalformedText) {
  const std::string text = EncodeChangeToken(SampleToken());
  for (const std::string& bad :
       {std::string(), text.substr(1), text + "A", std::string(kChangeTokenLength, '='),
        text.substr(0, 10) + "+" + text.substr(11), text.substr(0, 10) + "/" + text.substr(11),
        std::string("2024-01-01T00:00:00Z"), text.substr(0, 39)}) {
    ExpectNotAToken(bad, "");
  }
}

TEST(ChangeTokenTest, RefusesAnotherVersion) {
  // The first character holds the top 6 bits of the version byte (2 -> 'A', bits 000000); the
  // second its low 2 bits: version 2 gives 'g'..'v', version 3 'w'..'_'. 'B' first makes
  // version 2 version 6. The checksum then no longer matches either; the version is named first.
  std::string text = EncodeChangeToken(SampleToken());
  ASSERT_EQ(text[0], 'A');
  ASSERT_GE(text[1], 'g');
  ASSERT_LE(text[1], 'v');
  text[0] = 'B';
  ExpectNotAToken(text, "version 6");
}

TEST(ChangeTokenTest, StreamTokensRoundTripAsVersion3) {
  ChangeToken stream = SampleToken();
  stream.kind = ChangeTokenKind::kStream;
  stream.xmin = 0;
  stream.slot_id = 0x8877665544332211u;
  const std::string text = EncodeChangeToken(stream);
  ASSERT_EQ(text.size(), kChangeTokenLength);
  EXPECT_EQ(text[0], 'A');
  // Version 3: base64url indices 48-63 in the second character.
  EXPECT_NE(std::string("wxyz0123456789-_").find(text[1]), std::string::npos) << text;
  absl::StatusOr<ChangeToken> decoded = DecodeChangeToken(text);
  ASSERT_TRUE(decoded.ok()) << decoded.status();
  EXPECT_EQ(*decoded, stream);
  // The same fields as a snapshot token are another token: the kind is in the version byte.
  ChangeToken snapshot = stream;
  snapshot.kind = ChangeTokenKind::kSnapshot;
  snapshot.xmin = stream.slot_id;
  snapshot.slot_id = 0;
  EXPECT_NE(EncodeChangeToken(snapshot), text);
  absl::StatusOr<ChangeToken> decoded_snapshot = DecodeChangeToken(EncodeChangeToken(snapshot));
  ASSERT_TRUE(decoded_snapshot.ok());
  EXPECT_EQ(decoded_snapshot->kind, ChangeTokenKind::kSnapshot);
  EXPECT_EQ(decoded_snapshot->xmin, stream.slot_id);
}

}  // namespace
}  // namespace dvexport::dhis2
