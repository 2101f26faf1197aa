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
[[gnu::always_inline]] inline char* WriteString(char* p, char tag, std::string_view bytes) {
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

[[gnu::always_inline]] inline char* WriteText(char* p, char tag, const Text& text) {
  if (text.is_null) return p;
  const size_t n = text.bytes.size();
  if (text.plain && n < 0x80) {
    // An identifier known to be ASCII: copied without a look.
    *p++ = tag;
    *p++ = static_cast<char>(n);
    return common::CopyPlain(text.bytes, p);
  }
  return WriteString(p, tag, text.bytes);
}

// A google.protobuf.Timestamp field.
inline char* WriteTimestamp(char* p, char tag, TimestampParts parts) {
  const uint64_t seconds = static_cast<uint64_t>(parts.seconds);
  const uint64_t nanos = static_cast<uint64_t>(parts.nanos);
  const size_t size =
      (seconds != 0 ? 1 + VarintSize(seconds) : 0) + (nanos != 0 ? 1 + VarintSize(nanos) : 0);
  *p++ = tag;
  *p++ = static_cast<char>(size);  // at most 17
  if (seconds != 0) {
    *p++ = wire::timestamp::kSeconds;
    p = WriteVarint(p, seconds);
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
  // The value's length comes before it: write the value after room for a one-byte length (most
  // values are shorter than 128 bytes), and move it further only when its length needs more.
  char* const body = start + 2;
  char* p = body;
  p = WriteText(p, dv::kDataElement, row.data_element);
  if (!row.period.is_null && !row.period.bytes.empty()) p = WriteText(p, dv::kPeriod, row.period);
  p = WriteText(p, dv::kOrgUnit, row.org_unit);
  p = WriteText(p, dv::kCategoryOptionCombo, row.category_option_combo);
  p = WriteText(p, dv::kAttributeOptionCombo, row.attribute_option_combo);
  p = WriteText(p, dv::kValue, row.value);
  p = WriteText(p, dv::kStoredBy, row.stored_by);
  const TimestampParts created = timestamps_.Parts(row.created);
  // Most values were never updated: the line parser hands on one text for both.
  const bool same_text = !row.created.usual_text.empty() &&
                         row.last_updated.usual_text.data() == row.created.usual_text.data() &&
                         row.last_updated.usual_text.size() == row.created.usual_text.size();
  p = WriteTimestamp(p, dv::kCreated, created);
  p = WriteTimestamp(p, dv::kLastUpdated,
                     same_text ? created : timestamps_.Parts(row.last_updated));
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
  start[0] = wire::data_value_batch::kDataValues;
  size_t written;
  if (body_size < 0x80) {
    start[1] = static_cast<char>(body_size);
    written = 2 + body_size;
  } else {
    // Rare (long texts): the body moves up by the length's extra bytes. It fits: max_size
    // counts kMaxVarint32 bytes of length.
    const size_t length_size = VarintSize(body_size);
    std::memmove(start + 1 + length_size, body, body_size);
    WriteVarint(start + 1, body_size);
    written = 1 + length_size + body_size;
  }
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
