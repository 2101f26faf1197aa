#include "service/server/request_utf8.h"

#include <gtest/gtest.h>

#include <string>

#include "dvexport/v1/export.pb.h"

namespace dvexport::server {
namespace {

// "bytes" as a ByteBuffer of one slice, or of one slice per byte.
grpc::ByteBuffer Buffer(const std::string& bytes, bool split = false) {
  if (!split) {
    grpc::Slice slice(bytes);
    return grpc::ByteBuffer(&slice, 1);
  }
  std::vector<grpc::Slice> slices;
  for (char c : bytes) slices.emplace_back(&c, 1);
  return grpc::ByteBuffer(slices.data(), slices.size());
}

// An ExportRequest whose "field" holds "value", serialized by hand (protobuf would refuse to
// serialize ill-formed UTF-8 without logging).
std::string WithString(const std::string& prefix, int field_number, const std::string& value) {
  std::string out = prefix;
  out += static_cast<char>(field_number << 3 | 2);
  out += static_cast<char>(value.size());
  out += value;
  return out;
}

TEST(FindIllFormedUtf8FieldTest, NamesTheFieldOfAnExportRequest) {
  v1::ExportRequest valid;
  valid.add_data_set("BfMAe6Itzgt");
  valid.add_period("202401");
  valid.set_limit(5);
  const std::string good = valid.SerializeAsString();
  EXPECT_EQ(FindIllFormedUtf8Field(v1::ExportRequest::descriptor(), Buffer(good)), std::nullopt);

  const auto* data_set = v1::ExportRequest::descriptor()->FindFieldByName("data_set");
  const auto* org_unit = v1::ExportRequest::descriptor()->FindFieldByName("org_unit");
  for (const std::string& bad : {std::string("\xff"), std::string("ab\xc3"),
                                 std::string("\xed\xa0\x80"), std::string("\xc0\xaf")}) {
    for (bool split : {false, true}) {
      EXPECT_EQ(FindIllFormedUtf8Field(v1::ExportRequest::descriptor(),
                                       Buffer(WithString(good, data_set->number(), bad), split)),
                "data_set");
      EXPECT_EQ(FindIllFormedUtf8Field(v1::ExportRequest::descriptor(),
                                       Buffer(WithString(good, org_unit->number(), bad), split)),
                "org_unit");
    }
  }
  // Well-formed non-ASCII passes.
  EXPECT_EQ(FindIllFormedUtf8Field(
                v1::ExportRequest::descriptor(),
                Buffer(WithString(good, org_unit->number(), "Bo \xc3\xa9 \xf0\x9f\x98\x80"))),
            std::nullopt);
}

TEST(FindIllFormedUtf8FieldTest, LooksIntoTheQueryOfAnExportFileRequest) {
  const auto* query = v1::ExportFileRequest::descriptor()->FindFieldByName("query");
  const auto* period = v1::ExportRequest::descriptor()->FindFieldByName("period");
  const std::string inner = WithString("", period->number(), "2024\xfe");
  const std::string outer = WithString("", query->number(), inner);
  EXPECT_EQ(FindIllFormedUtf8Field(v1::ExportFileRequest::descriptor(), Buffer(outer)), "period");
  v1::ExportFileRequest request;
  ASSERT_FALSE(request.ParseFromString(outer));  // what protobuf alone would say
}

TEST(FindIllFormedUtf8FieldTest, LeavesMalformedMessagesToTheParser) {
  for (const std::string& bytes :
       {std::string("\x0a\x7f"), std::string("\xff\xff\xff"), std::string(1, '\0')}) {
    EXPECT_EQ(FindIllFormedUtf8Field(v1::ExportRequest::descriptor(), Buffer(bytes)), std::nullopt);
  }
}

}  // namespace
}  // namespace dvexport::server
