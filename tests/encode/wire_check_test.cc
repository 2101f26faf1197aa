#include "service/encode/wire_check.h"

#include <google/protobuf/descriptor.pb.h>
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "dvexport/v1/export.pb.h"

namespace dvexport::encode::wire {
namespace {

// A length-delimited field "number" holding "value", serialized by hand (protobuf would refuse
// to serialize ill-formed UTF-8 without logging). One-byte tags and lengths.
std::string Field(int field_number, const std::string& value) {
  std::string out(1, static_cast<char>(field_number << 3 | 2));
  out += static_cast<char>(value.size());
  out += value;
  return out;
}

// The message CheckRequestBytes gives for "bytes" as an ExportRequest; "" when they pass.
std::string Check(const std::string& bytes,
                  const google::protobuf::Descriptor* type = v1::ExportRequest::descriptor()) {
  return std::string(CheckRequestBytes(type, bytes).message());
}

std::string NotValid(const std::string& what, const std::string& type = "ExportRequest") {
  return "the request is not a valid dvexport.v1." + type + ": " + what;
}

std::string ValidRequest() {
  v1::ExportRequest valid;
  valid.add_data_set("BfMAe6Itzgt");
  valid.add_period("202401");
  valid.set_limit(5);
  valid.set_children(true);
  return valid.SerializeAsString();
}

TEST(CheckRequestBytesTest, NamesTheStringFieldThatIsNotUtf8) {
  const std::string good = ValidRequest();
  EXPECT_EQ(Check(good), "");
  for (const std::string& bad : {std::string("\xff"), std::string("ab\xc3"),
                                 std::string("\xed\xa0\x80"), std::string("\xc0\xaf")}) {
    EXPECT_EQ(Check(good + Field(1, bad)),
              "data_set: not valid UTF-8 (every string field must be UTF-8)");
    EXPECT_EQ(Check(good + Field(7, bad)),
              "org_unit: not valid UTF-8 (every string field must be UTF-8)");
  }
  // Well-formed non-ASCII passes.
  EXPECT_EQ(Check(good + Field(7, "Bo \xc3\xa9 \xf0\x9f\x98\x80")), "");
}

TEST(CheckRequestBytesTest, LooksIntoTheQueryOfAnExportFileRequest) {
  const std::string outer = Field(1, Field(4, "2024\xfe"));
  EXPECT_EQ(Check(outer, v1::ExportFileRequest::descriptor()),
            "period: not valid UTF-8 (every string field must be UTF-8)");
  v1::ExportFileRequest request;
  ASSERT_FALSE(request.ParseFromString(outer));  // what protobuf alone would say
}

TEST(CheckRequestBytesTest, SaysWhatIsWrongWithAMalformedMessage) {
  const std::string good = ValidRequest();  // 25 bytes
  ASSERT_EQ(good.size(), 25u);
  struct Case {
    std::string bytes;
    std::string message;
  };
  const Case cases[] = {
      // A tag whose varint ends with the message.
      {good + "\x80", NotValid("truncated varint (a tag) at byte 25")},
      // limit (14, int32) whose value's varint ends with the message.
      {good + "\x70\xff\xff", NotValid("truncated varint at byte 26 (field 14, limit)")},
      {good + "\x70" + std::string(10, '\xff') + "\x01",
       NotValid("varint longer than 10 bytes at byte 26 (field 14, limit)")},
      {good + "\xff\xff\xff\xff\x7f", NotValid("tag of more than 32 bits at byte 25")},
      {good + std::string(1, '\0'), NotValid("field number 0 at byte 25")},
      // Wire types 6 and 7 do not exist; 3 and 4 are groups.
      {good + "\x0e", NotValid("wire type 6, which protobuf does not have, at byte 25 (field 1, "
                               "data_set)")},
      {good + "\xff\x07", NotValid("wire type 7, which protobuf does not have, at byte 25 (field "
                                   "127)")},
      {good + "\x0b\x0c", NotValid("a group tag (wire type 3; proto3 has none) at byte 25 (field "
                                   "1, data_set)")},
      {good + "\xfc\x07", NotValid("a group tag (wire type 4; proto3 has none) at byte 25 (field "
                                   "127)")},
      // A length past the end.
      {good + "\x3a\x10" + "O6uvpzGd5pu",
       NotValid("length 16 past the end of the message (11 bytes left) at byte 26 (field 7, "
                "org_unit)")},
      {good + "\x3a", NotValid("truncated varint (a length) at byte 26 (field 7, org_unit)")},
      // A known field with the wrong wire type: limit as a string, org_unit as a varint.
      {good + Field(14, "5"),
       NotValid("wire type 2 (length-delimited) where int32 has 0 (varint) at byte 25 (field 14, "
                "limit)")},
      {good + "\x38\x01",
       NotValid("wire type 0 (varint) where string has 2 (length-delimited) at byte 25 (field 7, "
                "org_unit)")},
      {good + "\x41" + "1234567", NotValid("wire type 1 (fixed64) where bool has 0 (varint) at "
                                           "byte 25 (field 8, children)")},
      // Unknown fields: a truncated fixed value.
      {good + "\xf9\x07" + "1234567", NotValid("truncated fixed64 value at byte 27 (field 127)")},
      {good + "\xfd\x07" + "123", NotValid("truncated fixed32 value at byte 27 (field 127)")},
  };
  for (const Case& c : cases) {
    EXPECT_EQ(Check(c.bytes), c.message);
    v1::ExportRequest request;
    // Protobuf alone refuses each of them, or keeps the wrong-type field as an unknown one.
    EXPECT_TRUE(!request.ParseFromString(c.bytes) ||
                request.GetReflection()->GetUnknownFields(request).field_count() > 0)
        << c.message;
  }
}

TEST(CheckRequestBytesTest, NamesTheFieldInsideTheQuery) {
  EXPECT_EQ(Check(Field(1, "\x38\x01"), v1::ExportFileRequest::descriptor()),
            NotValid("wire type 0 (varint) where string has 2 (length-delimited) at byte 2 (field "
                     "7, query.org_unit)",
                     "ExportFileRequest"));
  // The query's length runs past the end of the ExportFileRequest.
  EXPECT_EQ(Check("\x0a\x7f\x0a\x01", v1::ExportFileRequest::descriptor()),
            NotValid("length 127 past the end of the message (2 bytes left) at byte 1 (field 1, "
                     "query)",
                     "ExportFileRequest"));
  // A string inside the query that runs past the end of the query, though not of the message.
  EXPECT_EQ(Check(std::string("\x0a\x03\x0a\x05") + "a" + "\x10\x05",
                  v1::ExportFileRequest::descriptor()),
            NotValid("length 5 past the end of the message (1 bytes left) at byte 3 (field 1, "
                     "query.data_set)",
                     "ExportFileRequest"));
  // compression_level (4) as a truncated varint.
  EXPECT_EQ(
      Check(Field(1, "") + "\x20\x80", v1::ExportFileRequest::descriptor()),
      NotValid("truncated varint at byte 3 (field 4, compression_level)", "ExportFileRequest"));
}

TEST(CheckRequestBytesTest, AcceptsWhatProtobufAccepts) {
  v1::ExportFileRequest file;
  file.mutable_query()->add_data_set("BfMAe6Itzgt");
  file.mutable_query()->set_changes_since("abc");
  file.set_format(v1::FORMAT_CSV);
  file.set_compression_level(-1);  // a negative int32: 10 bytes
  EXPECT_EQ(Check(file.SerializeAsString(), v1::ExportFileRequest::descriptor()), "");
  // Unknown fields of every valid wire type, as a newer client may send.
  const std::string unknown = std::string("\xf8\x07\x01") + "\xf9\x07" + "12345678" +
                              "\xfa\x07\x02" + "ab" + "\xfd\x07" + "1234";
  EXPECT_EQ(Check(ValidRequest() + unknown), "");
  v1::ExportRequest request;
  EXPECT_TRUE(request.ParseFromString(ValidRequest() + unknown));
  EXPECT_EQ(Check(""), "");
}

TEST(CheckRequestBytesTest, ChecksPackedValues) {
  // SourceCodeInfo.Location.path (1) is a packed repeated int32.
  const auto* location = google::protobuf::SourceCodeInfo::Location::descriptor();
  google::protobuf::SourceCodeInfo::Location valid;
  valid.add_path(1);
  valid.add_path(300);
  EXPECT_EQ(Check(valid.SerializeAsString(), location), "");
  EXPECT_EQ(Check("\x08\x01\x08\x02", location), "");  // unpacked is fine too
  EXPECT_EQ(Check("\x0a\x02\x01\x80", location),
            "the request is not a valid google.protobuf.SourceCodeInfo.Location: truncated varint "
            "at byte 3 (field 1, path)");
}

TEST(CheckRequestBytesTest, RefusesMessagesNestedTooDeep) {
  // google.protobuf.DescriptorProto.nested_type (3) is a DescriptorProto.
  std::string bytes;
  for (int i = 0; i < 101; ++i) {
    std::string length;
    for (size_t n = bytes.size();; n >>= 7) {
      length += static_cast<char>(n < 0x80 ? n : (n & 0x7f) | 0x80);
      if (n < 0x80) break;
    }
    bytes = "\x1a" + length + bytes;
  }
  EXPECT_NE(Check(bytes, google::protobuf::DescriptorProto::descriptor())
                .find("messages nested deeper than 100"),
            std::string::npos);
}

}  // namespace
}  // namespace dvexport::encode::wire
