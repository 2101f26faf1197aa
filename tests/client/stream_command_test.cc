#include "client/cli/stream_command.h"

#include <google/protobuf/util/time_util.h>

#include <random>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace dvexport::cli {
namespace {

dvexport::v1::DataValue FullValue() {
  dvexport::v1::DataValue v;
  v.set_data_element("fbfJHSPpUQD");
  v.set_period("202401");
  v.set_org_unit("DiszpKrYNg8");
  v.set_category_option_combo("PT59n8BQbqM");
  v.set_attribute_option_combo("HllvX50cXC0");
  v.set_value("12");
  v.set_stored_by("admin");
  v.mutable_created()->set_seconds(1704449472);  // 2024-01-05T10:11:12Z
  v.mutable_created()->set_nanos(123000000);
  v.mutable_last_updated()->set_seconds(1704449472);
  v.mutable_last_updated()->set_nanos(123456000);
  v.set_comment("ok");
  v.set_followup(true);
  return v;
}

std::string Line(const dvexport::v1::DataValue& v) {
  std::string line;
  AppendDataValueJsonLine(v, &line);
  return line;
}

TEST(DataValueJsonLineTest, WritesEveryFieldWithProtobufJsonNames) {
  EXPECT_EQ(Line(FullValue()),
            R"({"period":"202401","dataElement":"fbfJHSPpUQD","orgUnit":"DiszpKrYNg8",)"
            R"("categoryOptionCombo":"PT59n8BQbqM","attributeOptionCombo":"HllvX50cXC0",)"
            R"("value":"12","storedBy":"admin","created":"2024-01-05T10:11:12.123Z",)"
            R"("lastUpdated":"2024-01-05T10:11:12.123456Z","comment":"ok","followup":true,)"
            R"("deleted":false})"
            "\n");
}

TEST(DataValueJsonLineTest, LeavesAbsentFieldsOut) {
  dvexport::v1::DataValue v;
  v.set_period("2024Q1");
  v.set_deleted(true);
  EXPECT_EQ(Line(v), R"({"period":"2024Q1","created":"1970-01-01T00:00:00Z",)"
                     R"("lastUpdated":"1970-01-01T00:00:00Z","followup":false,"deleted":true})"
                     "\n");
}

TEST(DataValueJsonLineTest, EscapesStringsAndKeepsOneLinePerValue) {
  dvexport::v1::DataValue v = FullValue();
  v.set_comment("a \"quote\", a \\ and\nnew\tline\x01 \xC3\xA9");
  const std::string line = Line(v);
  EXPECT_NE(line.find(R"("comment":"a \"quote\", a \\ and\nnew\tline\u0001 )"
                      "\xC3\xA9\""),
            std::string::npos)
      << line;
  EXPECT_EQ(line.find('\n'), line.size() - 1);
}

TEST(DataValueJsonLineTest, WritesTimestampsAsTheProtobufJsonMappingDoes) {
  std::mt19937_64 rng(7);
  const int64_t seconds[] = {
      0, -1, 86399, 86400, 951782400 /* 2000-02-29 */, 4102444800, -62135596800, 253402300799};
  std::vector<google::protobuf::Timestamp> times;
  for (int64_t s : seconds) {
    for (int32_t nanos : {0, 1, 999999999, 123000000, 123456000, 123456789}) {
      times.push_back(google::protobuf::util::TimeUtil::NanosecondsToTimestamp(0));
      times.back().set_seconds(s);
      times.back().set_nanos(nanos);
    }
  }
  for (int i = 0; i < 10000; ++i) {
    google::protobuf::Timestamp t;
    t.set_seconds(std::uniform_int_distribution<int64_t>(-62135596800, 253402300799)(rng));
    t.set_nanos(std::uniform_int_distribution<int32_t>(0, 999)(rng) * 1000000 *
                    (i % 3 == 0 ? 1 : 0) +
                (i % 3 == 1 ? std::uniform_int_distribution<int32_t>(0, 999999)(rng) * 1000 : 0));
    times.push_back(t);
  }
  for (const google::protobuf::Timestamp& t : times) {
    dvexport::v1::DataValue v;
    v.set_period("2024");
    *v.mutable_created() = t;
    const std::string line = Line(v);
    const std::string expected =
        "\"created\":\"" + google::protobuf::util::TimeUtil::ToString(t) + "\"";
    ASSERT_NE(line.find(expected), std::string::npos) << line << " should hold " << expected;
  }
}

TEST(DataValueJsonLineTest, AppendsToWhatIsThere) {
  std::string lines = "x";
  AppendDataValueJsonLine(FullValue(), &lines);
  AppendDataValueJsonLine(FullValue(), &lines);
  EXPECT_EQ(lines, "x" + Line(FullValue()) + Line(FullValue()));
}

}  // namespace
}  // namespace dvexport::cli
