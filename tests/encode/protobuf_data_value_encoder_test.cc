// ProtobufDataValueEncoder against protobuf's own serializer: the bytes it writes for a row must
// be exactly those DataValueBatch::SerializeAsString() writes for the message ToDataValue
// builds from the same row, for rows with nulls, empty and long strings, ill-formed UTF-8,
// control characters, timestamps before 1970 and flags; and protobuf's parser must read them.

#include "service/encode/protobuf_data_value_encoder.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "dvexport/v1/export.pb.h"
#include "google/protobuf/io/coded_stream.h"
#include "service/encode/chunk_buffer.h"
#include "service/encode/wire_format.h"
#include "tests/support/postgres_timestamp.h"
#include "tests/support/to_data_value.h"

namespace dvexport::encode {
namespace {

// The rows' text lives here.
class RowMaker {
 public:
  explicit RowMaker(uint32_t seed) : rng_(seed) {}

  DataValueRow Next() {
    DataValueRow row;
    row.data_element = NextText();
    row.period = NextText();
    row.org_unit = NextText();
    row.category_option_combo = NextText();
    row.attribute_option_combo = NextText();
    row.value = NextText();
    row.stored_by = NextText();
    row.comment = NextText();
    row.created = NextTimestamp();
    // Mostly never updated: the same text, as the line parser hands it on.
    row.last_updated = rng_() % 2 == 0 ? row.created : NextTimestamp();
    row.followup = rng_() % 2 == 0;
    row.deleted = rng_() % 3 == 0;
    return row;
  }

 private:
  Text NextText() {
    switch (rng_() % 8) {
      case 0:
        return Text{{}, true};
      case 1:
        return Text{Keep(""), false};
      case 2:
        return Text{Keep(RandomBytes(11, /*ascii=*/true)), false};
      case 3:  // long: lengths of two and three varint bytes
        return Text{Keep(RandomBytes(rng_() % 2 == 0 ? 300 : 20000, /*ascii=*/false)), false};
      default:
        return Text{Keep(RandomBytes(rng_() % 40, /*ascii=*/false)), false};
    }
  }

  std::string RandomBytes(size_t n, bool ascii) {
    static const char* const kPieces[] = {"\xC3\xA9",     "\xE2\x82\xAC", "\xF0\x9F\x98\x80",
                                          "\xED\xA0\x80", "\xC0\xAF",     "\xE2\x82",
                                          "\xFF",         "\x01",         "\n",
                                          "\"",           "\\",           "\x7F"};
    std::string s;
    while (s.size() < n) {
      if (ascii || rng_() % 4 != 0) {
        s += static_cast<char>('0' + rng_() % 75);
      } else {
        s += kPieces[rng_() % (sizeof(kPieces) / sizeof(kPieces[0]))];
      }
    }
    return s;
  }

  int64_t NextMicros() {
    switch (rng_() % 5) {
      case 0:
        return 0;
      case 1:
        return -static_cast<int64_t>(rng_() % 4000000000ULL) * 1000 - rng_() % 1000;  // < 1970
      case 2:
        return static_cast<int64_t>(rng_() % 1000000) * 1000000;  // whole seconds: no nanos
      default:
        return 1672531200000000 + static_cast<int64_t>(rng_() % 63072000000000ULL);
    }
  }

  // Half of them as PostgreSQL's text when it writes them with a four-digit year (the micros
  // are kept too, as the truth the tests compare with).
  Timestamp NextTimestamp() {
    Timestamp timestamp{{}, NextMicros()};
    if (timestamp.micros >= ::dvexport::test_support::kFirstUsualMicros &&
        timestamp.micros < ::dvexport::test_support::kEndUsualMicros && rng_() % 2 == 0) {
      timestamp.usual_text =
          Keep(::dvexport::test_support::PostgresTimestampText(timestamp.micros));
    }
    return timestamp;
  }

  std::string_view Keep(std::string s) { return strings_.emplace_back(std::move(s)); }

  std::mt19937_64 rng_;
  std::deque<std::string> strings_;
};

TEST(ProtobufDataValueEncoderTest, WritesWhatProtobufSerializes) {
  RowMaker maker(7);
  for (int round = 0; round < 50; ++round) {
    ChunkBuffer out(0);
    ProtobufDataValueEncoder encoder(&out);
    v1::DataValueBatch expected;
    for (int i = 0; i < 40; ++i) {
      const DataValueRow row = maker.Next();
      encoder.Add(row);
      ToDataValue(row, expected.add_data_values());
    }
    ASSERT_EQ(std::string(out.view()), expected.SerializeAsString()) << "round " << round;
  }
}

TEST(ProtobufDataValueEncoderTest, ProtobufParsesTheBatch) {
  RowMaker maker(11);
  ChunkBuffer out(0);
  ProtobufDataValueEncoder encoder(&out);
  std::vector<DataValueRow> rows;
  for (int i = 0; i < 500; ++i) {
    rows.push_back(maker.Next());
    encoder.Add(rows.back());
  }
  char* p = out.Reserve(ProtobufDataValueEncoder::kMaxBatchEndSize);
  out.Commit(ProtobufDataValueEncoder::WriteBatchEnd(p, true, 123456789012) - p);
  v1::DataValueBatch batch;
  ASSERT_TRUE(batch.ParseFromArray(out.data(), static_cast<int>(out.size())));
  EXPECT_TRUE(batch.last());
  EXPECT_EQ(batch.values_so_far(), 123456789012);
  ASSERT_EQ(batch.data_values_size(), 500);
  for (int i = 0; i < 500; ++i) {
    const v1::DataValue& v = batch.data_values(i);
    const DataValueRow& row = rows[static_cast<size_t>(i)];
    EXPECT_EQ(v.has_value(), !row.value.is_null);
    EXPECT_EQ(v.has_comment(), !row.comment.is_null);
    EXPECT_EQ(v.created().seconds() * 1000000 + v.created().nanos() / 1000, row.created.micros);
    EXPECT_GE(v.created().nanos(), 0);
    EXPECT_EQ(v.followup(), row.followup);
    EXPECT_EQ(v.deleted(), row.deleted);
  }
}

TEST(ProtobufDataValueEncoderTest, BatchEndWritesOnlyWhatIsSet) {
  char buffer[ProtobufDataValueEncoder::kMaxBatchEndSize];
  EXPECT_EQ(ProtobufDataValueEncoder::WriteBatchEnd(buffer, false, 0), buffer);
  v1::DataValueBatch expected;
  expected.set_last(true);
  expected.set_values_so_far(INT64_MAX);
  char* end = ProtobufDataValueEncoder::WriteBatchEnd(buffer, true, INT64_MAX);
  EXPECT_EQ(std::string(buffer, end), expected.SerializeAsString());
}

// The size of every varint length from 0 to 2^64 - 1 (the edges of each byte count and values
// between them) is what protobuf computes and what WriteVarint writes.
TEST(WireFormatTest, VarintSizeIsWhatIsWritten) {
  std::vector<uint64_t> values = {0, 1, UINT64_MAX};
  for (int bits = 1; bits < 64; ++bits) {
    const uint64_t edge = uint64_t{1} << bits;
    values.insert(values.end(), {edge - 1, edge, edge + 1, edge | (edge >> 1)});
  }
  for (uint64_t v : values) {
    char buffer[wire::kMaxVarint64];
    const size_t written = static_cast<size_t>(wire::WriteVarint(buffer, v) - buffer);
    ASSERT_EQ(wire::VarintSize(v), written) << v;
    ASSERT_EQ(wire::VarintSize(v), google::protobuf::io::CodedOutputStream::VarintSize64(v)) << v;
  }
}

}  // namespace
}  // namespace dvexport::encode
