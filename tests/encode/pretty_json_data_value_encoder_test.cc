#include "service/encode/pretty_json_data_value_encoder.h"

#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/str_cat.h"
#include "gtest/gtest.h"
#include "service/encode/json_data_value_encoder.h"
#include "tests/encode/data_value_encoder_testing.h"
#include "tests/encode/strict_json_parser.h"

namespace dvexport::encode {
namespace {

using test_support::JsonValue;
using test_support::ParseJsonStrictly;

// ExampleRow()'s fields up to its comment, as the pretty encoder writes them in a value.
constexpr char kPrettyExampleFields[] =
    "      \"dataElement\": \"fbfJHSPpUQD\",\n"
    "      \"period\": \"202401\",\n"
    "      \"orgUnit\": \"DiszpKrYNg8\",\n"
    "      \"categoryOptionCombo\": \"PT59n8BQbqM\",\n"
    "      \"attributeOptionCombo\": \"HllvX50cXC0\",\n"
    "      \"value\": \"12\",\n"
    "      \"storedBy\": \"admin\",\n"
    "      \"created\": \"2024-01-05T10:11:12.123+0000\",\n"
    "      \"lastUpdated\": \"2024-01-05T10:11:12.123+0000\",\n"
    "      \"comment\": null,\n";

std::string Pretty(const DataValueSetHeader* header, const std::vector<DataValueRow>& rows,
                   size_t initial_capacity = 1024) {
  return Encode<PrettyJsonDataValueEncoder>(header, rows, initial_capacity);
}

std::string Compact(const DataValueSetHeader* header, const std::vector<DataValueRow>& rows) {
  return Encode<JsonDataValueEncoder>(header, rows);
}

// Deep equality that keeps member order and tells where documents differ.
void ExpectSameJson(const JsonValue& a, const JsonValue& b, const std::string& where = "$") {
  ASSERT_EQ(a.type, b.type) << where;
  EXPECT_EQ(a.boolean, b.boolean) << where;
  EXPECT_EQ(a.text, b.text) << where;
  ASSERT_EQ(a.elements.size(), b.elements.size()) << where;
  for (size_t i = 0; i < a.elements.size(); ++i) {
    ExpectSameJson(a.elements[i], b.elements[i], where + "[" + std::to_string(i) + "]");
  }
  ASSERT_EQ(a.members.size(), b.members.size()) << where;
  for (size_t i = 0; i < a.members.size(); ++i) {
    ASSERT_EQ(a.members[i].first, b.members[i].first) << where;
    ExpectSameJson(a.members[i].second, b.members[i].second, where + "." + a.members[i].first);
  }
}

void ExpectPrettyParsesToCompact(const DataValueSetHeader* header,
                                 const std::vector<DataValueRow>& rows) {
  const std::string pretty = Pretty(header, rows, 16);
  const std::string compact = Compact(header, rows);
  absl::StatusOr<JsonValue> pretty_doc = ParseJsonStrictly(pretty);
  absl::StatusOr<JsonValue> compact_doc = ParseJsonStrictly(compact);
  ASSERT_TRUE(pretty_doc.ok()) << pretty_doc.status() << "\n" << pretty;
  ASSERT_TRUE(compact_doc.ok()) << compact_doc.status();
  ExpectSameJson(*pretty_doc, *compact_doc);
}

// The comment token of a one-value document, as each encoder writes it.
std::string PrettyComment(std::string_view bytes) {
  DataValueRow row = ExampleRow();
  row.comment = T(bytes);
  const std::string document = Pretty(nullptr, {row});
  const size_t begin = document.find("\"comment\": ") + 11;
  return document.substr(begin, document.rfind(",\n      \"followup\":") - begin);
}

std::string CompactComment(std::string_view bytes) {
  DataValueRow row = ExampleRow();
  row.comment = T(bytes);
  const std::string document = Compact(nullptr, {row});
  const size_t begin = document.find("\"comment\":") + 10;
  return document.substr(begin, document.rfind(",\"followup\":") - begin);
}

TEST(PrettyJsonDataValueEncoderTest, WritesEmptyDocument) {
  EXPECT_EQ(Pretty(nullptr, {}), "{\n  \"dataValues\": []\n}\n");
}

TEST(PrettyJsonDataValueEncoderTest, IndentsEachValueByTwoSpacesPerLevel) {
  DataValueRow deleted = ExampleRow();
  deleted.deleted = true;
  deleted.followup = true;
  const std::string expected = absl::StrCat(
      "{\n"
      "  \"dataValues\": [\n"
      "    {\n",
      kPrettyExampleFields,
      "      \"followup\": false\n"
      "    },\n"
      "    {\n",
      kPrettyExampleFields,
      "      \"followup\": true,\n"
      "      \"deleted\": true\n"
      "    }\n"
      "  ]\n"
      "}\n");
  EXPECT_EQ(Pretty(nullptr, {ExampleRow(), deleted}), expected);
}

TEST(PrettyJsonDataValueEncoderTest, WritesSingleDataValueSetHeader) {
  DataValueSetHeader header;
  header.data_set = T("pBOMPrpg1QX");
  header.complete_date_micros = 1704449472123000;
  header.period = T("202401");
  header.org_unit = T("DiszpKrYNg8");
  EXPECT_EQ(Pretty(&header, {}),
            "{\n"
            "  \"dataSet\": \"pBOMPrpg1QX\",\n"
            "  \"completeDate\": \"2024-01-05T10:11:12.123+0000\",\n"
            "  \"period\": \"202401\",\n"
            "  \"orgUnit\": \"DiszpKrYNg8\",\n"
            "  \"dataValues\": []\n"
            "}\n");
  header.complete_date_micros.reset();
  header.data_set = kNullText;
  EXPECT_NE(Pretty(&header, {}).find("\"dataSet\": null,\n  \"completeDate\": null,"),
            std::string::npos);
}

TEST(PrettyJsonDataValueEncoderTest, EscapesEveryStringExactlyLikeTheCompactEncoder) {
  std::vector<std::string> strings = {"",
                                      "plain",
                                      "quote \" and backslash \\",
                                      "line\nbreak\ttab\rcr\bbs\ffeed",
                                      std::string("nul \0 and \x1F", 11),
                                      "slash / and del \x7F",
                                      "\xC3\xA9t\xC3\xA9 \xE2\x80\xA8 \xE2\x82\xAC",
                                      "emoji \xF0\x9F\x98\x80 end",
                                      "ill-formed \xC0\xAF \xED\xA0\x80 \xF0\x9F\x98 \xFF",
                                      std::string(100, 'a') + "\x01" + std::string(40, 'b')};
  for (int c = 0; c < 0x20; ++c) strings.push_back(std::string(1, static_cast<char>(c)));
  for (const std::string& s : strings) {
    EXPECT_EQ(PrettyComment(s), CompactComment(s)) << "for input of " << s.size() << " bytes";
  }
}

TEST(PrettyJsonDataValueEncoderTest, ParsesToTheCompactDocument) {
  DataValueRow nulls;
  nulls.data_element = nulls.period = nulls.org_unit = kNullText;
  nulls.category_option_combo = nulls.attribute_option_combo = kNullText;
  nulls.value = nulls.stored_by = nulls.comment = kNullText;
  DataValueRow deleted = ExampleRow();
  deleted.deleted = true;
  deleted.followup = true;
  deleted.comment = T("a \"comment\"\nwith \xF0\x9F\x98\x80 and \x01");
  ExpectPrettyParsesToCompact(nullptr, {});
  ExpectPrettyParsesToCompact(nullptr, {ExampleRow(), nulls, deleted});
  DataValueSetHeader header;
  header.data_set = T("pBOMPrpg1QX");
  header.period = T("2024Q1");
  header.org_unit = T("Disz\npKrYNg8");
  ExpectPrettyParsesToCompact(&header, {ExampleRow(), deleted});
}

TEST(PrettyJsonDataValueEncoderTest, RandomRowsParseToTheCompactDocument) {
  std::mt19937_64 rng(42);
  auto random_text = [&rng](std::vector<std::string>& storage) {
    std::string s;
    const int length = std::uniform_int_distribution<int>(0, 40)(rng);
    for (int i = 0; i < length; ++i) {
      s += static_cast<char>(std::uniform_int_distribution<int>(0, 255)(rng));
    }
    storage.push_back(std::move(s));
    return storage.size() - 1;
  };
  std::vector<std::string> storage;
  storage.reserve(2000 * 8);
  std::vector<DataValueRow> rows;
  for (int r = 0; r < 2000; ++r) {
    size_t fields[8];
    for (size_t& f : fields) f = random_text(storage);
    DataValueRow row;
    Text* texts[8] = {
        &row.data_element,           &row.period, &row.org_unit,  &row.category_option_combo,
        &row.attribute_option_combo, &row.value,  &row.stored_by, &row.comment};
    for (int i = 0; i < 8; ++i) {
      *texts[i] = Text{storage[fields[i]], rng() % 7 == 0};
    }
    row.created.micros = static_cast<int64_t>(rng() >> 12);
    row.last_updated.micros = -static_cast<int64_t>(rng() >> 12);
    row.followup = rng() % 2 == 0;
    row.deleted = rng() % 5 == 0;
    rows.push_back(row);
  }
  ExpectPrettyParsesToCompact(nullptr, rows);
}

TEST(PrettyJsonDataValueEncoderTest, ChunksConcatenateToTheDocumentAndEncoderRestarts) {
  ChunkBuffer buffer(64);
  PrettyJsonDataValueEncoder encoder(&buffer);
  std::string document;
  encoder.Begin(nullptr);
  for (int i = 0; i < 3; ++i) {
    encoder.Add(ExampleRow());
    document += buffer.view();
    buffer.Clear();
  }
  encoder.End();
  document += buffer.view();
  EXPECT_EQ(document, Pretty(nullptr, {ExampleRow(), ExampleRow(), ExampleRow()}));
  buffer.Clear();
  encoder.Begin(nullptr);
  encoder.End();
  EXPECT_EQ(buffer.view(), "{\n  \"dataValues\": []\n}\n");
}

}  // namespace
}  // namespace dvexport::encode
