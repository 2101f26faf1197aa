#ifndef DVEXPORT_SERVICE_ENCODE_WIRE_FORMAT_H_
#define DVEXPORT_SERVICE_ENCODE_WIRE_FORMAT_H_

#include <cstddef>
#include <cstdint>

#include "dvexport/v1/export.pb.h"

// The one owner of the protobuf wire format the service writes by hand (FileChunk, ExportTrailer,
// DataValueBatch, DataValue): field numbers come from the generated k...FieldNumber constants of
// proto/dvexport/v1/export.proto, so that a renumbered field breaks the build or the tests, never
// the clients. Nothing else in the project writes a field number.
namespace dvexport::encode::wire {

enum WireType : uint32_t { kVarint = 0, kLengthDelimited = 2 };

// The one-byte tag of a field numbered 1..15.
constexpr char Tag(int field, WireType type) {
  return static_cast<char>(static_cast<uint32_t>(field) << 3 | type);
}

namespace file_chunk {
using M = dvexport::v1::FileChunk;
inline constexpr char kData = Tag(M::kDataFieldNumber, kLengthDelimited);
inline constexpr char kTrailer = Tag(M::kTrailerFieldNumber, kLengthDelimited);
inline constexpr char kValuesSoFar = Tag(M::kValuesSoFarFieldNumber, kVarint);
}  // namespace file_chunk

namespace data_value_batch {
using M = dvexport::v1::DataValueBatch;
inline constexpr char kDataValues = Tag(M::kDataValuesFieldNumber, kLengthDelimited);
inline constexpr char kLast = Tag(M::kLastFieldNumber, kVarint);
inline constexpr char kValuesSoFar = Tag(M::kValuesSoFarFieldNumber, kVarint);
inline constexpr char kChangeToken = Tag(M::kChangeTokenFieldNumber, kLengthDelimited);
}  // namespace data_value_batch

namespace data_value {
using M = dvexport::v1::DataValue;
inline constexpr char kDataElement = Tag(M::kDataElementFieldNumber, kLengthDelimited);
inline constexpr char kPeriod = Tag(M::kPeriodFieldNumber, kLengthDelimited);
inline constexpr char kOrgUnit = Tag(M::kOrgUnitFieldNumber, kLengthDelimited);
inline constexpr char kCategoryOptionCombo =
    Tag(M::kCategoryOptionComboFieldNumber, kLengthDelimited);
inline constexpr char kAttributeOptionCombo =
    Tag(M::kAttributeOptionComboFieldNumber, kLengthDelimited);
inline constexpr char kValue = Tag(M::kValueFieldNumber, kLengthDelimited);
inline constexpr char kStoredBy = Tag(M::kStoredByFieldNumber, kLengthDelimited);
inline constexpr char kCreated = Tag(M::kCreatedFieldNumber, kLengthDelimited);
inline constexpr char kLastUpdated = Tag(M::kLastUpdatedFieldNumber, kLengthDelimited);
inline constexpr char kComment = Tag(M::kCommentFieldNumber, kLengthDelimited);
inline constexpr char kFollowup = Tag(M::kFollowupFieldNumber, kVarint);
inline constexpr char kDeleted = Tag(M::kDeletedFieldNumber, kVarint);
}  // namespace data_value

namespace timestamp {
using M = google::protobuf::Timestamp;
inline constexpr char kSeconds = Tag(M::kSecondsFieldNumber, kVarint);
inline constexpr char kNanos = Tag(M::kNanosFieldNumber, kVarint);
}  // namespace timestamp

// Bytes a varint takes at most.
inline constexpr size_t kMaxVarint64 = 10;
inline constexpr size_t kMaxVarint32 = 5;

inline char* WriteVarint(char* p, uint64_t v) {
  while (v >= 0x80) {
    *p++ = static_cast<char>(v | 0x80);
    v >>= 7;
  }
  *p++ = static_cast<char>(v);
  return p;
}

// 7 bits per byte, at least one byte, without a loop: the bits "v" needs (1 for 0), times 9/64
// rounded up from one (protobuf's formula).
inline size_t VarintSize(uint64_t v) {
  const size_t bits = static_cast<size_t>(64 - __builtin_clzll(v | 1));
  return (bits * 9 + 64) / 64;
}

// A one-byte tag and a varint (the field's value, or a length-delimited field's length) at "p",
// which has room for 1 + kMaxVarint64 bytes; returns the end of what was written.
inline char* WriteTagAndVarint(char* p, char tag, uint64_t value) {
  *p++ = tag;
  return WriteVarint(p, value);
}

}  // namespace dvexport::encode::wire

#endif  // DVEXPORT_SERVICE_ENCODE_WIRE_FORMAT_H_
