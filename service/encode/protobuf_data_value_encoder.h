#ifndef DVEXPORT_SERVICE_ENCODE_PROTOBUF_DATA_VALUE_ENCODER_H_
#define DVEXPORT_SERVICE_ENCODE_PROTOBUF_DATA_VALUE_ENCODER_H_

#include <cstddef>
#include <cstdint>
#include <string_view>

#include "service/encode/chunk_buffer.h"
#include "service/encode/data_value_row.h"
#include "service/encode/timestamp.h"

namespace dvexport::encode {

// Writes data values in protobuf wire format as entries of `repeated DataValue data_values = 1`
// of dvexport.v1.DataValueBatch (proto/dvexport/v1/export.proto), straight from the row: no
// message objects, no per-value allocation, one capacity check per value. The bytes are those
// protobuf's own serializer writes for the message the tests' ToDataValue builds from the row
// (fields in number order; a null text field absent, an empty one present; period omitted when
// empty, as proto3 omits an empty string; both timestamps always present; followup and deleted
// only when true); ill-formed UTF-8 is replaced with U+FFFD as common::ScanUtf8Sequence describes,
// so every string is valid for protobuf.
//
// A batch is the values written, then AppendBatchEnd's fields.
class ProtobufDataValueEncoder {
 public:
  // "*out" must outlive the encoder.
  explicit ProtobufDataValueEncoder(ChunkBuffer* out) : out_(out) {}

  ProtobufDataValueEncoder(const ProtobufDataValueEncoder&) = delete;
  ProtobufDataValueEncoder& operator=(const ProtobufDataValueEncoder&) = delete;

  // Appends one data_values entry. "row" is only read during the call.
  void Add(const DataValueRow& row);

  // The longest change token WriteBatchEnd writes.
  static constexpr size_t kMaxChangeTokenSize = 64;

  // The most bytes WriteBatchEnd writes.
  static constexpr size_t kMaxBatchEndSize = 2 + 11 + 2 + kMaxChangeTokenSize;

  // Writes DataValueBatch's last (if true), values_so_far (if not 0) and change_token (if not
  // empty; at most kMaxChangeTokenSize bytes) fields at "p", which has room for
  // kMaxBatchEndSize bytes, and returns the end of what was written.
  static char* WriteBatchEnd(char* p, bool last, int64_t values_so_far,
                             std::string_view change_token = {});

 private:
  ChunkBuffer* const out_;
  TimestampReader timestamps_;
};

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_PROTOBUF_DATA_VALUE_ENCODER_H_
