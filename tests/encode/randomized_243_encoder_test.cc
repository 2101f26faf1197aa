// Thousands of rows of random bytes through DHIS2 2.43's encoders, with random headers. The JSON
// is compared byte for byte with a reference rendering written from the definition (json-tree's
// appendEscaped on decoded code points, with dvexport's \u00XX for the other controls) and parsed
// strictly; the CSV and XML are parsed strictly and read back.

#include <cstdint>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "service/encode/csv_243_data_value_encoder.h"
#include "service/encode/json_243_data_value_encoder.h"
#include "service/encode/long_gmt_date.h"
#include "service/encode/xml_243_data_value_encoder.h"
#include "tests/encode/rfc4180_parser.h"
#include "tests/encode/strict_json_parser.h"
#include "tests/encode/unicode_reference.h"
#include "tests/support/strict_xml_parser.h"

namespace dvexport::encode {
namespace {

constexpr int kRows = 3000;
constexpr size_t kChunkSize = 4096;

// Random text: printable ASCII, controls, JSON/CSV/XML specials, U+2028/U+2029, every length of
// UTF-8 and ill-formed bytes.
class RandomText {
 public:
  explicit RandomText(uint64_t seed) : rng_(seed) {}

  int Uniform(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }

  std::string Next() {
    static constexpr std::string_view kSpecials = "\"\\,#/&<> \n\r\t\x7F";
    static constexpr uint32_t kCodePoints[] = {0xE9,   0x2027, 0x2028,  0x2029,
                                               0x4E2D, 0xFFFF, 0x1F600, 0x10FFFF};
    std::string text;
    const int pieces = Uniform(0, 12);
    for (int i = 0; i < pieces; ++i) {
      const int kind = Uniform(0, 9);
      if (kind < 4) {
        text += static_cast<char>(Uniform(0x20, 0x7E));
      } else if (kind < 5) {
        text += static_cast<char>(Uniform(0x00, 0x1F));
      } else if (kind < 7) {
        text += kSpecials[Uniform(0, kSpecials.size() - 1)];
      } else if (kind < 9) {
        text += test_support::EncodeUtf8(kCodePoints[Uniform(0, std::size(kCodePoints) - 1)]);
      } else {
        text += static_cast<char>(Uniform(0x80, 0xFF));
      }
    }
    return text;
  }

 private:
  std::mt19937_64 rng_;
};

struct RandomRows {
  std::vector<DataValueRow> rows;
  std::vector<std::vector<std::optional<std::string>>> texts;  // Per row, the 8 fields in order.
};

RandomRows MakeRandomRows(uint64_t seed) {
  RandomText random(seed);
  RandomRows result;
  result.texts.resize(kRows);
  for (int r = 0; r < kRows; ++r) {
    for (int f = 0; f < 8; ++f) {
      const int kind = random.Uniform(0, 9);
      // The data element is never null (DHIS2's key); an empty text is as likely as a null one.
      if (kind == 0 && f != 0) {
        result.texts[r].push_back(std::nullopt);
      } else {
        result.texts[r].push_back(kind == 1 ? std::string() : random.Next());
      }
    }
  }
  result.rows.resize(kRows);
  for (int r = 0; r < kRows; ++r) {
    DataValueRow& row = result.rows[r];
    Text* fields[] = {
        &row.data_element,           &row.period, &row.org_unit,  &row.category_option_combo,
        &row.attribute_option_combo, &row.value,  &row.stored_by, &row.comment};
    for (int f = 0; f < 8; ++f) {
      const auto& text = result.texts[r][f];
      *fields[f] = text.has_value() ? Text{*text, false} : Text{"garbage", true};
    }
    row.created.micros = 946684800000000 + int64_t{random.Uniform(0, 1 << 30)} * 1000003;
    row.last_updated.micros = row.created.micros + random.Uniform(0, 1000000);
    row.followup = random.Uniform(0, 1);
    row.followup_null = random.Uniform(0, 3) == 0;
    row.deleted = random.Uniform(0, 3) == 0;
  }
  return result;
}

// A header with each member present or not, its texts random.
struct RandomHeader {
  std::vector<std::string> texts;  // data set, period, period_adx, org unit, AOC, scheme value
  DataValueGroupHeader header;
};

RandomHeader MakeRandomHeader(RandomText* random) {
  RandomHeader result;
  for (int i = 0; i < 6; ++i) result.texts.push_back(random->Next());
  DataValueGroupHeader& h = result.header;
  if (random->Uniform(0, 1)) h.data_set = Text{result.texts[0]};
  if (random->Uniform(0, 1)) {
    h.period = Text{result.texts[1]};
    h.period_adx = Text{result.texts[2]};
  }
  if (random->Uniform(0, 1)) h.org_unit = Text{result.texts[3]};
  if (random->Uniform(0, 1)) h.attribute_option_combo = Text{result.texts[4]};
  if (random->Uniform(0, 1)) h.id_schemes = {{"orgUnitIdScheme", result.texts[5]}};
  return result;
}

template <typename Encoder>
std::string EncodeInChunks(const DataValueGroupHeader& header,
                           const std::vector<DataValueRow>& rows) {
  ChunkBuffer buffer(16);
  Encoder encoder(&buffer);
  std::string output;
  encoder.Begin(header);
  for (const DataValueRow& row : rows) {
    encoder.Add(row);
    if (buffer.size() >= kChunkSize) {
      output += buffer.view();
      buffer.Clear();
    }
  }
  encoder.End();
  return output + std::string(buffer.view());
}

std::string Date(int64_t micros) {
  char buffer[kMaxLongGmtDateLength];
  return std::string(buffer, FormatLongGmtDate(micros, buffer));
}

// json-tree 1.8.1's appendEscaped, from its switch, on the decoded text.
std::string JsonTreeString(std::string_view text) {
  static constexpr char kHex[] = "0123456789ABCDEF";
  const auto code_points = test_support::DecodeUtf8(test_support::ReplaceIllFormedUtf8(text));
  std::string out = "\"";
  for (uint32_t c : *code_points) {
    switch (c) {
      case '\b':
        out += "\\b";
        break;
      case '\f':
        out += "\\f";
        break;
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      case '"':
        out += "\\\"";
        break;
      case '\\':
        out += "\\\\";
        break;
      case 0x2028:
        out += "\\u2028";
        break;
      case 0x2029:
        out += "\\u2029";
        break;
      default:
        if (c < 0x20) {
          out += std::string("\\u00") + kHex[c >> 4] + kHex[c & 15];  // dvexport's deviation
        } else {
          out += test_support::EncodeUtf8(c);
        }
    }
  }
  return out + "\"";
}

// DataExportOutput.toJson's value, member by member (null members excluded).
std::string JsonTreeValue(const DataValueRow& row, const std::vector<std::optional<std::string>>& t,
                          const DataValueGroupHeader& header) {
  auto member = [](std::string_view key, const std::optional<std::string>& text) {
    return text.has_value() ? ",\"" + std::string(key) + "\":" + JsonTreeString(*text)
                            : std::string();
  };
  auto non_empty = [](const std::optional<std::string>& text) {
    return text.has_value() && !text->empty() ? text : std::nullopt;
  };
  std::string out = "{\"dataElement\":" + JsonTreeString(*t[0]);
  if (!header.period) out += member("period", t[1]);
  if (!header.org_unit) out += member("orgUnit", t[2]);
  out += member("categoryOptionCombo", t[3]);
  if (!header.attribute_option_combo) out += member("attributeOptionCombo", t[4]);
  out += member("value", t[5]) + member("storedBy", non_empty(t[6]));
  out += ",\"created\":\"" + Date(row.created.micros) + "\",\"lastUpdated\":\"" +
         Date(row.last_updated.micros) + "\"" + member("comment", non_empty(t[7]));
  if (!row.followup_null) out += row.followup ? ",\"followup\":true" : ",\"followup\":false";
  if (row.deleted) out += ",\"deleted\":true";
  return out + "}";
}

std::string JsonTreeDocumentStart(const RandomHeader& h) {
  std::string out = "{";
  auto add = [&](std::string_view key, const std::string& text) {
    if (out.size() > 1) out += ",";
    out += "\"" + std::string(key) + "\":" + JsonTreeString(text);
  };
  if (h.header.data_set) add("dataSet", h.texts[0]);
  if (h.header.period) add("period", h.texts[1]);
  if (h.header.org_unit) add("orgUnit", h.texts[3]);
  if (h.header.attribute_option_combo) add("attributeOptionCombo", h.texts[4]);
  if (!h.header.id_schemes.empty()) add("orgUnitIdScheme", h.texts[5]);
  return out + (out.size() > 1 ? "," : "") + "\"dataValues\":[";
}

TEST(Randomized243EncoderTest, JsonIsByteIdenticalToJsonTreeReferenceAndStrictlyValid) {
  const RandomRows random = MakeRandomRows(20250803);
  RandomText header_random(43);
  for (int round = 0; round < 16; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const RandomHeader header = MakeRandomHeader(&header_random);
    const std::string output = EncodeInChunks<Json243DataValueEncoder>(header.header, random.rows);
    std::string expected = JsonTreeDocumentStart(header);
    for (int r = 0; r < kRows; ++r) {
      if (r > 0) expected += ",";
      expected += JsonTreeValue(random.rows[r], random.texts[r], header.header);
    }
    expected += "]}";
    ASSERT_EQ(output.size(), expected.size());
    ASSERT_TRUE(output == expected);
    auto parsed = test_support::ParseJsonStrictly(output);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(parsed->members.back().second.elements.size(), static_cast<size_t>(kRows));
  }
}

TEST(Randomized243EncoderTest, CsvIsStrictRfc4180WithElevenFieldsAndFilledHeaderMembers) {
  const RandomRows random = MakeRandomRows(7);
  RandomText header_random(8);
  for (int round = 0; round < 8; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const RandomHeader header = MakeRandomHeader(&header_random);
    const std::string output = EncodeInChunks<Csv243DataValueEncoder>(header.header, random.rows);
    auto records = test_support::ParseCsvStrictly(output);
    ASSERT_TRUE(records.ok()) << records.status();
    ASSERT_EQ(records->size(), static_cast<size_t>(kRows) + 1);
    for (int r = 0; r < kRows; ++r) {
      const test_support::CsvRecord& record = (*records)[r + 1];
      ASSERT_EQ(record.size(), 11u);
      const DataValueRow& row = random.rows[r];
      const std::optional<std::string>& comment = random.texts[r][7];
      EXPECT_EQ(record[8].value,
                test_support::ReplaceIllFormedUtf8(test_support::JavaTrim(comment.value_or(""))));
      if (header.header.org_unit) {
        EXPECT_EQ(record[2].value,
                  test_support::ReplaceIllFormedUtf8(test_support::JavaTrim(header.texts[3])));
      }
      EXPECT_EQ(record[9].value, row.followup_null ? "" : row.followup ? "true" : "false");
      EXPECT_EQ(record[10].value, row.deleted ? "true" : "false");
      if (::testing::Test::HasFailure()) return;
    }
  }
}

TEST(Randomized243EncoderTest, XmlIsWellFormedAndRoundTripsRandomBytes) {
  const RandomRows random = MakeRandomRows(11);
  RandomText header_random(12);
  for (int round = 0; round < 8; ++round) {
    SCOPED_TRACE("round " + std::to_string(round));
    const RandomHeader header = MakeRandomHeader(&header_random);
    const std::string output = EncodeInChunks<Xml243DataValueEncoder>(header.header, random.rows);
    auto parsed = dvexport::test_support::ParseXmlStrictly(output);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    const auto& root = parsed->root;
    ASSERT_EQ(root.children.size(), static_cast<size_t>(kRows));
    if (header.header.period_adx) {
      ASSERT_NE(root.Attribute("period"), nullptr);
      EXPECT_EQ(*root.Attribute("period"), test_support::ReplaceNonXmlCharacters(header.texts[2]));
    }
    for (int r = 0; r < kRows; ++r) {
      const auto& value = root.children[r];
      const std::optional<std::string>& comment = random.texts[r][7];
      const std::string* written = value.Attribute("comment");
      if (comment.has_value() && !comment->empty()) {
        ASSERT_NE(written, nullptr);
        EXPECT_EQ(*written, test_support::ReplaceNonXmlCharacters(*comment));
      } else {
        EXPECT_EQ(written, nullptr);
      }
      EXPECT_EQ(value.Attribute("period") != nullptr,
                !header.header.period && random.texts[r][1].has_value());
      const bool followup = random.rows[r].followup && !random.rows[r].followup_null;
      EXPECT_EQ(value.Attribute("followUp") != nullptr, followup);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

}  // namespace
}  // namespace dvexport::encode
