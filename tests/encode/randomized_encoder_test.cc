// Thousands of rows of random bytes through the encoders. The outputs are parsed by strict
// checkers (written for these tests; expat for XML) and compared with an independent reference of
// the documented behaviour: U+FFFD for ill-formed UTF-8 (unicode_reference.h), Jackson's
// escaping, javacsv's trimming and quoting, Woodstox's attribute escaping.

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "gtest/gtest.h"
#include "service/encode/adx_data_value_encoder.h"
#include "service/encode/csv_data_value_encoder.h"
#include "service/encode/json_data_value_encoder.h"
#include "service/encode/long_gmt_date.h"
#include "service/encode/pretty_json_data_value_encoder.h"
#include "service/encode/protobuf_data_value_encoder.h"
#include "service/encode/xml_data_value_encoder.h"
#include "tests/encode/data_value_encoder_testing.h"
#include "tests/encode/rfc4180_parser.h"
#include "tests/encode/strict_json_parser.h"
#include "tests/encode/unicode_reference.h"
#include "tests/support/postgres_timestamp.h"
#include "tests/support/strict_xml_parser.h"

namespace dvexport::encode {
namespace {

using test_support::CsvRecord;
using test_support::JsonValue;

constexpr int kRows = 5000;
constexpr size_t kChunkSize = 4096;

// Random text that favours what encoders get wrong: controls, quotes, separators, every length
// of UTF-8, surrogates, stray and truncated sequences.
class RandomText {
 public:
  explicit RandomText(uint64_t seed) : rng_(seed) {}

  std::string Next() {
    std::string text;
    const int pieces = Uniform(0, 99) < 5 ? Uniform(0, 300) : Uniform(0, 24);
    for (int i = 0; i < pieces; ++i) AppendPiece(&text);
    return text;
  }

  int Uniform(int low, int high) { return std::uniform_int_distribution<int>(low, high)(rng_); }

  int64_t Micros() {
    switch (Uniform(0, 3)) {
      case 0:  // 2000 .. 2030
        return std::uniform_int_distribution<int64_t>(946684800000000, 1893456000000000)(rng_);
      case 1:
        return std::uniform_int_distribution<int64_t>(-2'000'000, 2'000'000)(rng_);
      default:
        return std::uniform_int_distribution<int64_t>(std::numeric_limits<int64_t>::min(),
                                                      std::numeric_limits<int64_t>::max())(rng_);
    }
  }

 private:
  uint32_t ScalarValue() {
    for (;;) {
      const uint32_t limits[] = {0x7FF, 0xFFFF, 0x10FFFF};
      const uint32_t code_point =
          std::uniform_int_distribution<uint32_t>(0x80, limits[Uniform(0, 2)])(rng_);
      if (code_point < 0xD800 || code_point > 0xDFFF) return code_point;
    }
  }

  void AppendPiece(std::string* text) {
    static constexpr std::string_view kSpecials = "\"\\,#/ \n\r\t";
    static constexpr uint32_t kEdgeCodePoints[] = {0x80,    0x7FF,   0x800,   0x2028, 0x2029,
                                                   0xD7FF,  0xE000,  0xFEFF,  0xFFFD, 0xFFFF,
                                                   0x10000, 0x1F600, 0x10FFFF};
    const int kind = Uniform(0, 99);
    if (kind < 45) {
      *text += static_cast<char>(Uniform(0x20, 0x7E));
    } else if (kind < 55) {
      *text += static_cast<char>(Uniform(0, 10) == 0 ? 0x7F : Uniform(0x00, 0x1F));
    } else if (kind < 65) {
      *text += kSpecials[Uniform(0, kSpecials.size() - 1)];
    } else if (kind < 75) {
      *text += test_support::EncodeUtf8(ScalarValue());
    } else if (kind < 80) {
      *text +=
          test_support::EncodeUtf8(kEdgeCodePoints[Uniform(0, std::size(kEdgeCodePoints) - 1)]);
    } else if (kind < 90) {
      *text += static_cast<char>(Uniform(0x80, 0xFF));
    } else if (kind < 95) {  // A truncated sequence.
      const std::string encoded = test_support::EncodeUtf8(ScalarValue());
      *text += encoded.substr(0, Uniform(1, encoded.size() - 1));
    } else {  // An encoded surrogate.
      *text += test_support::EncodeUtf8(Uniform(0xD800, 0xDFFF));
    }
  }

  std::mt19937_64 rng_;
};

// Owns the bytes that a batch of DataValueRows points into.
struct RandomRows {
  std::vector<DataValueRow> rows;
  std::vector<std::vector<std::optional<std::string>>> texts;  // Per row, the 8 fields in order.
  std::vector<std::string> timestamp_texts;  // Per row, created's and lastupdated's usual text.
};

RandomRows MakeRandomRows(uint64_t seed) {
  RandomText random(seed);
  RandomRows result;
  result.texts.resize(kRows);
  for (int r = 0; r < kRows; ++r) {
    for (int f = 0; f < 8; ++f) {
      if (random.Uniform(0, 9) == 0) {
        result.texts[r].push_back(std::nullopt);
      } else {
        result.texts[r].push_back(random.Next());
      }
    }
  }
  result.rows.resize(kRows);
  result.timestamp_texts.resize(2 * kRows);
  for (int r = 0; r < kRows; ++r) {
    Text* fields[] = {&result.rows[r].data_element,
                      &result.rows[r].period,
                      &result.rows[r].org_unit,
                      &result.rows[r].category_option_combo,
                      &result.rows[r].attribute_option_combo,
                      &result.rows[r].value,
                      &result.rows[r].stored_by,
                      &result.rows[r].comment};
    for (int f = 0; f < 8; ++f) {
      const auto& text = result.texts[r][f];
      *fields[f] = text.has_value() ? Text{*text, false} : Text{"garbage", true};
    }
    for (Timestamp* timestamp : {&result.rows[r].created, &result.rows[r].last_updated}) {
      timestamp->micros = random.Micros();
      // Half of those PostgreSQL writes with a four-digit year come as its text, as the line
      // parser passes them on; the expectations below are built from the micros either way.
      if (timestamp->micros >= ::dvexport::test_support::kFirstUsualMicros &&
          timestamp->micros < ::dvexport::test_support::kEndUsualMicros &&
          random.Uniform(0, 1) == 0) {
        result.timestamp_texts[2 * r + (timestamp == &result.rows[r].created ? 0 : 1)] =
            ::dvexport::test_support::PostgresTimestampText(timestamp->micros);
        timestamp->usual_text =
            result.timestamp_texts[2 * r + (timestamp == &result.rows[r].created ? 0 : 1)];
      }
    }
    result.rows[r].followup = random.Uniform(0, 1);
    result.rows[r].deleted = random.Uniform(0, 3) == 0;
  }
  return result;
}

std::string Date(int64_t micros) {
  char buffer[kMaxLongGmtDateLength];
  return std::string(buffer, FormatLongGmtDate(micros, buffer));
}

// Runs "encoder" over the rows the way the server does: the buffer is handed out and cleared
// whenever it holds a chunk's worth.
template <typename Encoder>
std::string EncodeInChunks(const DataValueSetHeader* header,
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
  output += buffer.view();
  return output;
}

// Jackson's rendering of a JSON string, from the definition (decoded code points).
std::string JacksonString(const std::optional<std::string>& text) {
  if (!text.has_value()) return "null";
  static constexpr char kHex[] = "0123456789ABCDEF";
  auto escape = [&](uint32_t unit) {
    return std::string("\\u") + kHex[unit >> 12] + kHex[(unit >> 8) & 15] + kHex[(unit >> 4) & 15] +
           kHex[unit & 15];
  };
  const auto code_points = test_support::DecodeUtf8(test_support::ReplaceIllFormedUtf8(*text));
  std::string out = "\"";
  for (uint32_t c : *code_points) {
    if (c == '"') {
      out += "\\\"";
    } else if (c == '\\') {
      out += "\\\\";
    } else if (c == '\b') {
      out += "\\b";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\n') {
      out += "\\n";
    } else if (c == '\f') {
      out += "\\f";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20) {
      out += escape(c);
    } else if (c >= 0x10000) {
      out += escape(0xD800 + ((c - 0x10000) >> 10)) + escape(0xDC00 + ((c - 0x10000) & 0x3FF));
    } else {
      out += test_support::EncodeUtf8(c);
    }
  }
  return out + "\"";
}

std::string JacksonValue(const DataValueRow& row,
                         const std::vector<std::optional<std::string>>& t) {
  return R"({"dataElement":)" + JacksonString(t[0]) + R"(,"period":)" + JacksonString(t[1]) +
         R"(,"orgUnit":)" + JacksonString(t[2]) + R"(,"categoryOptionCombo":)" +
         JacksonString(t[3]) + R"(,"attributeOptionCombo":)" + JacksonString(t[4]) +
         R"(,"value":)" + JacksonString(t[5]) + R"(,"storedBy":)" + JacksonString(t[6]) +
         R"(,"created":")" + Date(row.created.micros) + R"(","lastUpdated":")" +
         Date(row.last_updated.micros) + R"(","comment":)" + JacksonString(t[7]) +
         R"(,"followup":)" + (row.followup ? "true" : "false") +
         (row.deleted ? R"(,"deleted":true)" : "") + "}";
}

void ExpectJsonString(const JsonValue& value, const std::optional<std::string>& input) {
  if (!input.has_value()) {
    EXPECT_EQ(value.type, JsonValue::Type::kNull);
    return;
  }
  ASSERT_EQ(value.type, JsonValue::Type::kString);
  EXPECT_EQ(value.text, test_support::ReplaceIllFormedUtf8(*input));
}

TEST(RandomizedEncoderTest, JsonIsStrictlyValidAndRoundTripsRandomBytes) {
  const RandomRows random = MakeRandomRows(20240105);
  const std::string output = EncodeInChunks<JsonDataValueEncoder>(nullptr, random.rows);

  auto parsed = test_support::ParseJsonStrictly(output);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->members.size(), 1u);
  ASSERT_EQ(parsed->members[0].first, "dataValues");
  const std::vector<JsonValue>& values = parsed->members[0].second.elements;
  ASSERT_EQ(values.size(), static_cast<size_t>(kRows));

  static constexpr std::string_view kKeys[] = {
      "dataElement",          "period",  "orgUnit",  "categoryOptionCombo",
      "attributeOptionCombo", "value",   "storedBy", "created",
      "lastUpdated",          "comment", "followup", "deleted"};
  static constexpr int kTextMember[] = {0, 1, 2, 3, 4, 5, 6, -1, -1, 7};
  for (int r = 0; r < kRows; ++r) {
    SCOPED_TRACE("row " + std::to_string(r));
    const DataValueRow& row = random.rows[r];
    const auto& members = values[r].members;
    ASSERT_EQ(members.size(), row.deleted ? 12u : 11u);
    for (size_t m = 0; m < members.size(); ++m) EXPECT_EQ(members[m].first, kKeys[m]);
    for (int m = 0; m < 10; ++m) {
      if (kTextMember[m] >= 0) ExpectJsonString(members[m].second, random.texts[r][kTextMember[m]]);
    }
    EXPECT_EQ(members[7].second.text, Date(row.created.micros));
    EXPECT_EQ(members[8].second.text, Date(row.last_updated.micros));
    EXPECT_EQ(members[10].second.type, JsonValue::Type::kBool);
    EXPECT_EQ(members[10].second.boolean, row.followup);
    if (row.deleted) {
      EXPECT_TRUE(members[11].second.boolean);
    }
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(RandomizedEncoderTest, JsonIsByteIdenticalToReferenceJacksonRendering) {
  const RandomRows random = MakeRandomRows(7);
  const std::string output = EncodeInChunks<JsonDataValueEncoder>(nullptr, random.rows);
  std::string expected = R"({"dataValues":[)";
  for (int r = 0; r < kRows; ++r) {
    if (r > 0) expected += ",";
    expected += JacksonValue(random.rows[r], random.texts[r]);
  }
  expected += "]}";
  ASSERT_EQ(output.size(), expected.size());
  EXPECT_TRUE(output == expected);
}

TEST(RandomizedEncoderTest, JsonHeaderWithRandomBytesIsValid) {
  RandomText random(99);
  for (int i = 0; i < 500; ++i) {
    const std::string data_set = random.Next(), period = random.Next(), org_unit = random.Next();
    DataValueSetHeader header{Text{data_set}, random.Micros(), Text{period}, Text{org_unit}};
    if (i % 2 == 0) header.complete_date_micros.reset();
    const std::string output = EncodeInChunks<JsonDataValueEncoder>(&header, {});
    const std::string expected =
        R"({"dataSet":)" + JacksonString(data_set) + R"(,"completeDate":)" +
        (header.complete_date_micros ? JacksonString(Date(*header.complete_date_micros)) : "null") +
        R"(,"period":)" + JacksonString(period) + R"(,"orgUnit":)" + JacksonString(org_unit) +
        R"(,"dataValues":[]})";
    ASSERT_EQ(output, expected);
    auto parsed = test_support::ParseJsonStrictly(output);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
  }
}

TEST(RandomizedEncoderTest, CsvIsStrictRfc4180AndRoundTripsRandomBytesAfterTrimming) {
  const RandomRows random = MakeRandomRows(42);
  const std::string output = EncodeInChunks<CsvDataValueEncoder>(nullptr, random.rows);
  ASSERT_TRUE(test_support::IsWellFormedUtf8(output));

  auto records = test_support::ParseCsvStrictly(output);
  ASSERT_TRUE(records.ok()) << records.status();
  ASSERT_EQ(records->size(), static_cast<size_t>(kRows) + 1);
  static constexpr std::string_view kHeader[] = {"dataelement",
                                                 "period",
                                                 "orgunit",
                                                 "categoryoptioncombo",
                                                 "attributeoptioncombo",
                                                 "value",
                                                 "storedby",
                                                 "lastupdated",
                                                 "comment",
                                                 "followup",
                                                 "deleted"};
  ASSERT_EQ((*records)[0].size(), 11u);
  for (int c = 0; c < 11; ++c) EXPECT_EQ((*records)[0][c].value, kHeader[c]);

  static constexpr int kTextColumn[] = {0, 1, 2, 3, 4, 5, 6, -1, 7};
  for (int r = 0; r < kRows; ++r) {
    SCOPED_TRACE("row " + std::to_string(r));
    const DataValueRow& row = random.rows[r];
    const CsvRecord& record = (*records)[r + 1];
    ASSERT_EQ(record.size(), 11u);
    for (int c = 0; c < 9; ++c) {
      if (kTextColumn[c] < 0) continue;
      const auto& input = random.texts[r][kTextColumn[c]];
      const std::string expected(
          input.has_value() ? test_support::JavaTrim(test_support::ReplaceIllFormedUtf8(*input))
                            : "");
      const bool expect_quoted = expected.find_first_of("\",\n\r") != std::string::npos ||
                                 (c == 0 && (expected.empty() || expected[0] == '#'));
      EXPECT_EQ(record[c].value, expected) << "column " << c;
      EXPECT_EQ(record[c].quoted, expect_quoted) << "column " << c;
    }
    EXPECT_EQ(record[7].value, Date(row.last_updated.micros));
    EXPECT_EQ(record[9].value, row.followup ? "true" : "false");
    EXPECT_EQ(record[10].value, row.deleted ? "true" : "null");
    for (int c : {7, 9, 10}) EXPECT_FALSE(record[c].quoted);
    if (::testing::Test::HasFailure()) return;
  }
}

// Woodstox's rendering of an attribute value, from the definition (decoded code points), with
// U+FFFD for what XML 1.0 cannot carry (controls but tab, LF, CR; U+FFFE; U+FFFF).
std::string WoodstoxAttribute(const std::string& text) {
  const auto code_points = test_support::DecodeUtf8(test_support::ReplaceIllFormedUtf8(text));
  std::string out;
  for (uint32_t c : *code_points) {
    if (c == '&') {
      out += "&amp;";
    } else if (c == '<') {
      out += "&lt;";
    } else if (c == '"') {
      out += "&quot;";
    } else if (c == '\t') {
      out += "&#x9;";
    } else if (c == '\n') {
      out += "&#xa;";
    } else if (c == '\r') {
      out += "&#xd;";
    } else if (c < 0x20 || c == 0xFFFE || c == 0xFFFF) {
      out += test_support::EncodeUtf8(0xFFFD);
    } else {
      out += test_support::EncodeUtf8(c);
    }
  }
  return out;
}

std::string XmlAttribute(std::string_view name, const std::optional<std::string>& text) {
  if (!text.has_value()) return "";
  return " " + std::string(name) + "=\"" + WoodstoxAttribute(*text) + "\"";
}

constexpr std::string_view kXmlStart =
    R"(<?xml version='1.0' encoding='UTF-8'?><dataValueSet xmlns="http://dhis2.org/schema/dxf/2.0")";

TEST(RandomizedEncoderTest, XmlIsByteIdenticalToReferenceWoodstoxRendering) {
  const RandomRows random = MakeRandomRows(1904);
  const std::string output = EncodeInChunks<XmlDataValueEncoder>(nullptr, random.rows);
  std::string expected = std::string(kXmlStart) + ">";
  for (int r = 0; r < kRows; ++r) {
    const DataValueRow& row = random.rows[r];
    const auto& t = random.texts[r];
    expected += "<dataValue" + XmlAttribute("dataElement", t[0]) + XmlAttribute("period", t[1]) +
                XmlAttribute("orgUnit", t[2]) + XmlAttribute("categoryOptionCombo", t[3]) +
                XmlAttribute("attributeOptionCombo", t[4]) + XmlAttribute("value", t[5]) +
                XmlAttribute("storedBy", t[6]) + XmlAttribute("created", Date(row.created.micros)) +
                XmlAttribute("lastUpdated", Date(row.last_updated.micros)) +
                XmlAttribute("comment", t[7]) +
                XmlAttribute("followUp", row.followup ? "true" : "false") +
                (row.deleted ? XmlAttribute("deleted", "true") : "") + "/>";
  }
  expected += "</dataValueSet>";
  ASSERT_EQ(output.size(), expected.size());
  EXPECT_TRUE(output == expected);
}

TEST(RandomizedEncoderTest, XmlIsWellFormedAndRoundTripsRandomBytes) {
  const RandomRows random = MakeRandomRows(31337);
  const std::string output = EncodeInChunks<XmlDataValueEncoder>(nullptr, random.rows);
  auto parsed = dvexport::test_support::ParseXmlStrictly(output);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->root.name, "http://dhis2.org/schema/dxf/2.0|dataValueSet");
  const auto& values = parsed->root.children;
  ASSERT_EQ(values.size(), static_cast<size_t>(kRows));
  static constexpr std::string_view kTextAttributes[] = {
      "dataElement",          "period", "orgUnit",  "categoryOptionCombo",
      "attributeOptionCombo", "value",  "storedBy", "comment"};
  for (int r = 0; r < kRows; ++r) {
    SCOPED_TRACE("row " + std::to_string(r));
    const DataValueRow& row = random.rows[r];
    EXPECT_EQ(values[r].name, "http://dhis2.org/schema/dxf/2.0|dataValue");
    size_t present = row.deleted ? 4 : 3;  // created, lastUpdated, followUp and deleted
    for (int f = 0; f < 8; ++f) {
      const auto& input = random.texts[r][f];
      const std::string* attribute = values[r].Attribute(kTextAttributes[f]);
      if (!input.has_value()) {
        EXPECT_EQ(attribute, nullptr) << kTextAttributes[f];
        continue;
      }
      ++present;
      ASSERT_NE(attribute, nullptr) << kTextAttributes[f];
      EXPECT_EQ(*attribute, test_support::ReplaceNonXmlCharacters(*input)) << kTextAttributes[f];
    }
    EXPECT_EQ(values[r].attributes.size(), present);
    EXPECT_EQ(*values[r].Attribute("created"), Date(row.created.micros));
    EXPECT_EQ(*values[r].Attribute("lastUpdated"), Date(row.last_updated.micros));
    EXPECT_EQ(*values[r].Attribute("followUp"), row.followup ? "true" : "false");
    if (row.deleted) {
      EXPECT_EQ(*values[r].Attribute("deleted"), "true");
    }
    if (::testing::Test::HasFailure()) return;
  }
}

TEST(RandomizedEncoderTest, XmlHeaderWithRandomBytesIsWellFormed) {
  RandomText random(2042);
  for (int i = 0; i < 500; ++i) {
    const std::string data_set = random.Next(), period = random.Next(), org_unit = random.Next();
    DataValueSetHeader header{Text{data_set}, random.Micros(), Text{period}, Text{org_unit}};
    if (i % 2 == 0) header.complete_date_micros.reset();
    const std::string output = EncodeInChunks<XmlDataValueEncoder>(&header, {});
    const std::string expected =
        std::string(kXmlStart) + XmlAttribute("dataSet", data_set) +
        (header.complete_date_micros
             ? XmlAttribute("completeDate", Date(*header.complete_date_micros))
             : "") +
        XmlAttribute("period", period) + XmlAttribute("orgUnit", org_unit) + "/>";
    ASSERT_EQ(output, expected);
    auto parsed = dvexport::test_support::ParseXmlStrictly(output);
    ASSERT_TRUE(parsed.ok()) << parsed.status();
    EXPECT_EQ(*parsed->root.Attribute("dataSet"), test_support::ReplaceNonXmlCharacters(data_set));
    EXPECT_EQ(*parsed->root.Attribute("orgUnit"), test_support::ReplaceNonXmlCharacters(org_unit));
  }
}

TEST(RandomizedEncoderTest, AdxIsWellFormedAndRoundTripsRandomBytes) {
  RandomText random(4242);
  static constexpr std::string_view kCategories[] = {"SEX", "AGE", "LOCATION", "_x.1-\xC3\xA9"};
  struct Value {
    std::optional<std::string> data_element, value;
    std::vector<AdxAttribute> categories;
    bool numeric;
  };
  struct Group {
    std::optional<std::string> data_set, org_unit;
    std::string period;
    std::vector<AdxAttribute> attributes;
    std::vector<Value> values;
  };
  auto maybe = [&](int null_percent) -> std::optional<std::string> {
    if (random.Uniform(0, 99) < null_percent) return std::nullopt;
    return random.Next();
  };
  auto attributes = [&]() {
    std::vector<AdxAttribute> out;
    const int n = random.Uniform(0, 4);
    for (int i = 0; i < n; ++i) out.push_back({std::string(kCategories[i]), random.Next()});
    return out;
  };
  auto text = [](const std::optional<std::string>& t) {
    return t ? Text{*t, false} : Text{{}, true};
  };
  std::vector<Group> groups(300);
  for (Group& g : groups) {
    g.data_set = maybe(5);
    g.org_unit = maybe(5);
    g.period = random.Next();
    g.attributes = attributes();
    g.values.resize(random.Uniform(1, 30));
    for (Value& v : g.values) {
      v.data_element = maybe(5);
      v.value = maybe(10);
      v.categories = attributes();
      v.numeric = random.Uniform(0, 1) == 0;
    }
  }
  ChunkBuffer buffer(16);
  AdxDataValueEncoder encoder(&buffer);
  std::string output;
  encoder.Begin();
  for (const Group& g : groups) {
    encoder.StartGroup(
        AdxGroup{text(g.data_set), Text{g.period, false}, text(g.org_unit), &g.attributes});
    for (const Value& v : g.values) {
      encoder.Add(AdxValue{text(v.data_element), &v.categories, text(v.value), v.numeric});
      if (buffer.size() >= kChunkSize) {
        output += buffer.view();
        buffer.Clear();
      }
    }
    encoder.EndGroup();
  }
  encoder.End();
  output += buffer.view();

  auto parsed = dvexport::test_support::ParseXmlStrictly(output);
  ASSERT_TRUE(parsed.ok()) << parsed.status();
  ASSERT_EQ(parsed->root.name, "urn:ihe:qrph:adx:2015|adx");
  ASSERT_EQ(parsed->root.children.size(), groups.size());
  auto expect_attribute = [](const dvexport::test_support::XmlElement& element,
                             std::string_view name, const std::optional<std::string>& input) {
    const std::string* attribute = element.Attribute(name);
    if (!input) {
      EXPECT_EQ(attribute, nullptr) << name;
      return;
    }
    ASSERT_NE(attribute, nullptr) << name;
    EXPECT_EQ(*attribute, test_support::ReplaceNonXmlCharacters(*input)) << name;
  };
  for (size_t i = 0; i < groups.size(); ++i) {
    SCOPED_TRACE("group " + std::to_string(i));
    const Group& g = groups[i];
    const auto& element = parsed->root.children[i];
    EXPECT_EQ(element.name, "urn:ihe:qrph:adx:2015|group");
    expect_attribute(element, "dataSet", g.data_set);
    expect_attribute(element, "period", g.period);
    expect_attribute(element, "orgUnit", g.org_unit);
    for (const AdxAttribute& a : g.attributes) expect_attribute(element, a.name, a.value);
    EXPECT_EQ(element.attributes.size(),
              1 + (g.data_set ? 1 : 0) + (g.org_unit ? 1 : 0) + g.attributes.size());
    ASSERT_EQ(element.children.size(), g.values.size());
    for (size_t j = 0; j < g.values.size(); ++j) {
      const Value& v = g.values[j];
      const auto& value = element.children[j];
      expect_attribute(value, "dataElement", v.data_element);
      for (const AdxAttribute& a : v.categories) expect_attribute(value, a.name, a.value);
      if (v.numeric) {
        expect_attribute(value, "value", v.value);
        EXPECT_TRUE(value.children.empty());
      } else {
        EXPECT_EQ(*value.Attribute("value"), "0");
        ASSERT_EQ(value.children.size(), 1u);
        EXPECT_EQ(value.children[0].name, "urn:ihe:qrph:adx:2015|annotation");
        EXPECT_EQ(value.children[0].text,
                  v.value ? test_support::ReplaceNonXmlCharacters(*v.value) : "");
      }
    }
    if (::testing::Test::HasFailure()) return;
  }
}

// Identifiers marked plain (Text::plain, IsPlainText) are copied without a look: every encoder
// (CSV, JSON, pretty JSON, XML, the typed stream) must write exactly what it writes for the same
// identifiers unmarked. Random printable ASCII
// (with spaces, '#', quotes, separators and markup) of every short length in every id column.
TEST(PlainTextTest, EveryEncoderWritesAPlainIdentifierAsTheSameTextUnmarked) {
  std::mt19937_64 rng(11);
  const std::string alphabet =
      "abcXYZ019 #\"',;<>&\\-_./:=()" + std::string(1, '\t') + std::string(1, '\x7f');
  std::vector<std::string> texts;
  int plain = 0;
  for (int i = 0; i < 4000; ++i) {
    std::string text;
    const size_t length = rng() % 24;
    for (size_t j = 0; j < length; ++j) {
      // Mostly letters and digits, as identifiers are.
      text += rng() % 4 == 0 ? alphabet[rng() % alphabet.size()] : alphabet[rng() % 9];
    }
    plain += IsPlainText(text) ? 1 : 0;
    texts.push_back(std::move(text));
  }
  ASSERT_GT(plain, 1000);
  ASSERT_LT(plain, 3500);
  std::vector<DataValueRow> unmarked;
  std::vector<DataValueRow> marked;
  for (size_t i = 0; i + 5 <= texts.size(); i += 5) {
    DataValueRow row = ExampleRow();
    Text* ids[5] = {&row.data_element, &row.period, &row.org_unit, &row.category_option_combo,
                    &row.attribute_option_combo};
    for (int c = 0; c < 5; ++c) *ids[c] = T(texts[i + c]);
    unmarked.push_back(row);
    for (Text* id : ids) id->plain = IsPlainText(id->bytes);
    marked.push_back(row);
  }
  EXPECT_EQ(Encode<CsvDataValueEncoder>(nullptr, marked),
            Encode<CsvDataValueEncoder>(nullptr, unmarked));
  EXPECT_EQ(Encode<JsonDataValueEncoder>(nullptr, marked),
            Encode<JsonDataValueEncoder>(nullptr, unmarked));
  EXPECT_EQ(Encode<PrettyJsonDataValueEncoder>(nullptr, marked),
            Encode<PrettyJsonDataValueEncoder>(nullptr, unmarked));
  EXPECT_EQ(Encode<XmlDataValueEncoder>(nullptr, marked),
            Encode<XmlDataValueEncoder>(nullptr, unmarked));
  const auto stream = [](const std::vector<DataValueRow>& rows) {
    ChunkBuffer buffer(1024);
    ProtobufDataValueEncoder encoder(&buffer);
    for (const DataValueRow& row : rows) encoder.Add(row);
    return std::string(buffer.view());
  };
  EXPECT_EQ(stream(marked), stream(unmarked));
}

TEST(PlainTextTest, WhatIsPlain) {
  for (const char* text :
       {"fbfJHSPpUQD", "202401", "a", "ANC 1st visit", "x-y_z.1/2:3=(4)'", "~!@$%^*+{}[]|?`"}) {
    EXPECT_TRUE(IsPlainText(text)) << text;
  }
  for (const char* text : {"", " a", "a ", "#a", "a,b", "a\"b", "a\\b", "a&b", "a<b", "a\tb",
                           "a\nb", "a\x7f", "caf\xc3\xa9", "\xff"}) {
    EXPECT_FALSE(IsPlainText(text)) << text;
  }
}

}  // namespace
}  // namespace dvexport::encode
