#include "service/encode/timestamp.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <random>
#include <string>

#include "service/encode/long_gmt_date.h"
#include "tests/support/postgres_timestamp.h"

namespace dvexport::encode {
namespace {

using test_support::kEndUsualMicros;
using test_support::kFirstUsualMicros;
using test_support::PostgresTimestampText;

TEST(TimestampTest, TheUsualShapeIsRecognizedAndNothingElse) {
  for (const char* text :
       {"2024-01-12 10:00:00", "2024-01-12 10:00:00.5", "2024-01-12 10:00:00.123456",
        "0001-01-01 00:00:00", "9999-12-31 23:59:59.999999"}) {
    EXPECT_TRUE(IsUsualTimestamp(text)) << text;
  }
  for (const char* text : {"",
                           "2024-01-12 10:00",
                           "2024-01-12 10:00:00.",
                           "2024-01-12 10:00:00.1234567",
                           "2024-01-12T10:00:00",
                           "2024/01/12 10:00:00",
                           "2024-01-12 10-00:00",
                           "2024-01-12 10:00-00",
                           "2024-01-12 10:00:00,5",
                           "2024-01-12 10:00:00.5x",
                           "0044-03-15 12:00:00 BC",
                           "10000-01-01 00:00:00",
                           "infinity",
                           "-infinity",
                           "2024-01-12\t10:00:00",
                           "2024-01-12 10:00:0\xD9",
                           "2O24-01-12 10:00:00",
                           "2024-01-12 1:00:00.5",
                           "2024-01-12 10:00:00\\t",
                           "0000-01-01 00:00:00",
                           "2024-00-12 10:00:00",
                           "2024-13-12 10:00:00",
                           "2024-01-00 10:00:00",
                           "2024-01-32 10:00:00",
                           "2024-01-12 24:00:00",
                           "2024-01-12 10:60:00",
                           "2024-01-12 10:00:60"}) {
    EXPECT_FALSE(IsUsualTimestamp(text)) << text;
  }
  // Every byte value in every position of a usual text: nothing but a digit where digits belong
  // (which digits, the field ranges above say), the separator itself where it belongs.
  const std::string usual = "2024-01-12 10:00:00.123456";
  for (size_t i = 0; i < usual.size(); ++i) {
    const bool digit_position = usual[i] >= '0' && usual[i] <= '9';
    for (int b = 0; b < 256; ++b) {
      std::string text = usual;
      text[i] = static_cast<char>(b);
      if (b >= '0' && b <= '9' && digit_position) continue;
      EXPECT_EQ(IsUsualTimestamp(text), b == usual[i]) << "byte " << b << " at " << i;
    }
  }
}

// FormatUsualTimestamp on PostgreSQL's text writes what FormatLongGmtDate writes for the same
// instant: for random instants over the whole four-digit range, the edges and whole seconds.
TEST(TimestampTest, TheUsualTextIsWrittenAsTheSameInstant) {
  std::mt19937_64 rng(42);
  std::uniform_int_distribution<int64_t> any(kFirstUsualMicros, kEndUsualMicros - 1);
  std::uniform_int_distribution<int64_t> recent(946684800000000, 1893456000000000);
  for (int i = 0; i < 200000; ++i) {
    int64_t micros = i % 2 == 0 ? any(rng) : recent(rng);
    if (i % 5 == 0) micros -= micros % 1000000;  // no fraction
    if (i % 7 == 0) micros -= micros % 1000;     // milliseconds only
    if (i < 4)
      micros = (i < 2 ? kFirstUsualMicros : kEndUsualMicros - 1) + i % 2 * (i < 2 ? 1 : -1);
    const std::string text = PostgresTimestampText(micros);
    ASSERT_TRUE(IsUsualTimestamp(text)) << text;
    char expected[kMaxLongGmtDateLength];
    const size_t expected_size = FormatLongGmtDate(micros, expected);
    char actual[kMaxLongGmtDateLength];
    ASSERT_EQ(FormatUsualTimestamp(text, actual), kLongGmtDateLength);
    ASSERT_EQ(std::string(actual, kLongGmtDateLength), std::string(expected, expected_size))
        << text;
    LongGmtDateFormatter formatter;
    ASSERT_EQ(formatter.Format(Timestamp{text, 0}, actual), kLongGmtDateLength);
    ASSERT_EQ(std::string(actual, kLongGmtDateLength), std::string(expected, expected_size));
  }
}

// The microseconds of "timestamp" as "reader" gives them (seconds and nanoseconds).
int64_t Micros(TimestampReader& reader, const Timestamp& timestamp) {
  const TimestampParts parts = reader.Parts(timestamp);
  return parts.seconds * 1000000 + parts.nanos / 1000;
}

TEST(TimestampTest, TheReaderGivesTheMicrosOfEitherForm) {
  std::mt19937_64 rng(7);
  std::uniform_int_distribution<int64_t> any(kFirstUsualMicros, kEndUsualMicros - 1);
  TimestampReader reader;
  int64_t previous = 0;
  for (int i = 0; i < 200000; ++i) {
    int64_t micros;
    switch (i % 5) {
      case 0:  // the same day as the one before: the reader's remembered day
        micros = previous - previous % 86400000000 + static_cast<int64_t>(rng() % 86400000000);
        if (micros < kFirstUsualMicros) micros = kFirstUsualMicros;
        break;
      case 4:  // within 400 days of the one before: mostly the reader's remembered year
        micros =
            previous + static_cast<int64_t>(rng() % (800 * 86400000000ull)) - 400 * 86400000000;
        micros = std::clamp(micros, kFirstUsualMicros, kEndUsualMicros - 1);
        break;
      case 1:
        micros = static_cast<int64_t>(rng() % 4000000000000000) - 2000000000000000;
        break;
      default:
        micros = any(rng);
    }
    previous = micros;
    const std::string text = PostgresTimestampText(micros);
    ASSERT_EQ(Micros(reader, Timestamp{text, 0}), micros) << text;
    ASSERT_EQ(Micros(reader, Timestamp{{}, micros ^ 1}), micros ^ 1) << "micros form";
    // Seconds floored, nanoseconds in [0, 1e9), from either form.
    const int64_t floor_seconds = micros / 1000000 - (micros % 1000000 < 0 ? 1 : 0);
    const int32_t nanos = static_cast<int32_t>((micros - floor_seconds * 1000000) * 1000);
    for (const Timestamp& timestamp : {Timestamp{text, 0}, Timestamp{{}, micros}}) {
      const TimestampParts parts = reader.Parts(timestamp);
      ASSERT_EQ(parts.seconds, floor_seconds) << text;
      ASSERT_EQ(parts.nanos, nanos) << text;
    }
  }
  EXPECT_EQ(Micros(reader, Timestamp{"1969-12-31 23:59:59.999999", 0}), -1);
  EXPECT_EQ(Micros(reader, Timestamp{"0001-01-01 00:00:00", 0}), kFirstUsualMicros);
  EXPECT_EQ(Micros(reader, Timestamp{"2024-01-12 10:00:00.5", 0}), 1705053600500000);
}

}  // namespace
}  // namespace dvexport::encode
