#include "service/dhis2/id_scheme.h"

#include "gtest/gtest.h"

namespace dvexport::dhis2 {
namespace {

IdScheme Parse(std::string_view text) {
  absl::StatusOr<std::optional<IdScheme>> scheme = ParseIdScheme("id_scheme", text);
  EXPECT_TRUE(scheme.ok()) << scheme.status();
  EXPECT_TRUE(scheme.ok() && scheme->has_value()) << text;
  return scheme.ok() && scheme->has_value() ? **scheme : IdScheme{};
}

TEST(IdSchemeTest, ParsesCaseInsensitively) {
  EXPECT_EQ(Parse("UID").property, IdScheme::Property::kUid);
  EXPECT_EQ(Parse("uid").property, IdScheme::Property::kUid);
  EXPECT_EQ(Parse("Code").property, IdScheme::Property::kCode);
  EXPECT_EQ(Parse("name").property, IdScheme::Property::kName);
  IdScheme attribute = Parse("attribute:AttrExtId01");
  EXPECT_EQ(attribute.property, IdScheme::Property::kAttribute);
  EXPECT_EQ(attribute.attribute, "AttrExtId01");  // the UID keeps its case
  EXPECT_EQ(IdSchemeName(attribute), "ATTRIBUTE:AttrExtId01");
}

TEST(IdSchemeTest, EmptyIsUnset) {
  absl::StatusOr<std::optional<IdScheme>> scheme = ParseIdScheme("id_scheme", "");
  ASSERT_TRUE(scheme.ok());
  EXPECT_FALSE(scheme->has_value());
}

TEST(IdSchemeTest, RejectsOtherSchemesNamingTheField) {
  for (const char* text : {"ID", "UUID", "ATTRIBUTE:", "ATTRIBUTE:short", "ATTRIBUTE:1ttrExtId01",
                           "ATTRIBUTE:AttrExtId01x", "CODE ", "attributes:AttrExtId01"}) {
    absl::StatusOr<std::optional<IdScheme>> scheme = ParseIdScheme("org_unit_id_scheme", text);
    ASSERT_FALSE(scheme.ok()) << text;
    EXPECT_EQ(scheme.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_EQ(scheme.status().message(),
              std::string("org_unit_id_scheme: \"") + text +
                  "\" is not a valid id scheme (UID, CODE, NAME or ATTRIBUTE:<attribute uid>)");
  }
}

}  // namespace
}  // namespace dvexport::dhis2
