#include "service/encode/protobuf_data_value_encoder.h"

#include <algorithm>
#include <cassert>
#include <cstring>
#include <string_view>

#include "common/plain_copy.h"
#include "common/utf8_sequence.h"
#include "service/encode/wire_format.h"

namespace dvexport::encode {
namespace {

using common::ByteVector;
using common::CopyIfPlain;
using common::kUtf8ReplacementCharacterLength;
using common::RepairedUtf8Size;
using common::WellFormedUtf8Prefix;
using common::WriteRepairedUtf8;
using wire::kMaxVarint32;
using wire::kMaxVarint64;
using wire::VarintSize;
using wire::WriteVarint;
namespace dv = wire::data_value;

// Bytes a timestamp takes at most: tag, length, seconds (tag + 10), nanos (tag + 5).
constexpr size_t kMaxTimestamp = 1 + 1 + 1 + kMaxVarint64 + 1 + kMaxVarint32;
// Per text field at most: tag and length; the text at most triples (an ill-formed byte becomes
// U+FFFD's three bytes).
constexpr size_t kMaxTextOverhead = 1 + kMaxVarint32;
constexpr size_t kTextFields = 8;
// The entry's own tag and length, two timestamps, two flags.
constexpr size_t kMaxFixedOverhead = 1 + kMaxVarint32 + 2 * kMaxTimestamp + 2 * 2;

// Selects the bytes that are not ASCII (signed, they are negative).
inline ByteVector NonAscii(ByteVector v) { return v < 0; }

// A length-delimited string field.
inline char* WriteString(char* p, char tag, std::string_view bytes) {
  const auto* s = reinterpret_cast<const unsigned char*>(bytes.data());
  const size_t n = bytes.size();
  *p++ = tag;
  // Most strings are short and ASCII: a one-byte length and one vector test and copy.
  if (n < 0x80) {
    *p = static_cast<char>(n);
    if (CopyIfPlain(s, n, p + 1, NonAscii)) return p + 1 + n;
  }
  const size_t valid = WellFormedUtf8Prefix(s, n);
  if (valid == n) {
    p = WriteVarint(p, n);
    std::memcpy(p, s, n);
    return p + n;
  }
  // Rare: the well-formed prefix, then the rest repaired.
  p = WriteVarint(p, valid + RepairedUtf8Size(s + valid, n - valid));
  std::memcpy(p, s, valid);
  return WriteRepairedUtf8(p + valid, s + valid, n - valid);
}

inline char* WriteText(char* p, char tag, const Text& text) {
  return text.is_null ? p : WriteString(p, tag, text.bytes);
}

// google.protobuf.Timestamp of "micros" since the epoch: seconds floored, nanos in [0, 1e9).
inline char* WriteTimestamp(char* p, char tag, int64_t micros) {
  int64_t seconds = micros / 1000000;
  int64_t rest = micros % 1000000;
  if (rest < 0) {
    --seconds;
    rest += 1000000;
  }
  const uint64_t nanos = static_cast<uint64_t>(rest) * 1000;
  const size_t size = (seconds != 0 ? 1 + VarintSize(static_cast<uint64_t>(seconds)) : 0) +
                      (nanos != 0 ? 1 + VarintSize(nanos) : 0);
  *p++ = tag;
  *p++ = static_cast<char>(size);  // at most 17
  if (seconds != 0) {
    *p++ = wire::timestamp::kSeconds;
    p = WriteVarint(p, static_cast<uint64_t>(seconds));
  }
  if (nanos != 0) {
    *p++ = wire::timestamp::kNanos;
    p = WriteVarint(p, nanos);
  }
  return p;
}

size_t TextBytes(const Text& text) { return text.is_null ? 0 : text.bytes.size(); }

}  // namespace

void ProtobufDataValueEncoder::Add(const DataValueRow& row) {
  const size_t text_bytes = TextBytes(row.data_element) + TextBytes(row.period) +
                            TextBytes(row.org_unit) + TextBytes(row.category_option_combo) +
                            TextBytes(row.attribute_option_combo) + TextBytes(row.value) +
                            TextBytes(row.stored_by) + TextBytes(row.comment);
  const size_t max_size = kMaxFixedOverhead + kTextFields * kMaxTextOverhead +
                          kUtf8ReplacementCharacterLength * text_bytes;
  char* const start = out_->Reserve(max_size);
  // The value's length comes before it: write the value after room for the longest length,
  // then move it next to the length it turned out to have.
  char* const body = start + 1 + kMaxVarint32;
  char* p = body;
  p = WriteText(p, dv::kDataElement, row.data_element);
  if (!row.period.is_null && !row.period.bytes.empty())
    p = WriteString(p, dv::kPeriod, row.period.bytes);
  p = WriteText(p, dv::kOrgUnit, row.org_unit);
  p = WriteText(p, dv::kCategoryOptionCombo, row.category_option_combo);
  p = WriteText(p, dv::kAttributeOptionCombo, row.attribute_option_combo);
  p = WriteText(p, dv::kValue, row.value);
  p = WriteText(p, dv::kStoredBy, row.stored_by);
  const int64_t created = timestamps_.Micros(row.created);
  // Most values were never updated: the line parser hands on one text for both.
  const bool same_text = !row.created.usual_text.empty() &&
                         row.last_updated.usual_text.data() == row.created.usual_text.data() &&
                         row.last_updated.usual_text.size() == row.created.usual_text.size();
  p = WriteTimestamp(p, dv::kCreated, created);
  p = WriteTimestamp(p, dv::kLastUpdated,
                     same_text ? created : timestamps_.Micros(row.last_updated));
  p = WriteText(p, dv::kComment, row.comment);
  if (row.followup) {
    *p++ = dv::kFollowup;
    *p++ = 1;
  }
  if (row.deleted) {
    *p++ = dv::kDeleted;
    *p++ = 1;
  }
  const size_t body_size = static_cast<size_t>(p - body);
  char* q = start;
  *q++ = wire::data_value_batch::kDataValues;
  q = WriteVarint(q, body_size);
  if (q != body) std::memmove(q, body, body_size);
  const size_t written = static_cast<size_t>(q - start) + body_size;
  assert(written <= max_size);
  out_->Commit(written);
}

char* ProtobufDataValueEncoder::WriteBatchEnd(char* p, bool last, int64_t values_so_far,
                                              std::string_view change_token) {
  if (last) {
    *p++ = wire::data_value_batch::kLast;
    *p++ = 1;
  }
  if (values_so_far != 0) {
    *p++ = wire::data_value_batch::kValuesSoFar;
    p = WriteVarint(p, static_cast<uint64_t>(values_so_far));
  }
  if (!change_token.empty()) {
    const size_t size = std::min(change_token.size(), kMaxChangeTokenSize);
    p = wire::WriteTagAndVarint(p, wire::data_value_batch::kChangeToken, size);
    std::memcpy(p, change_token.data(), size);
    p += size;
  }
  return p;
}

}  // namespace dvexport::encode
