#ifndef DVEXPORT_SERVICE_SERVER_SERIALIZED_MESSAGE_H_
#define DVEXPORT_SERVICE_SERVER_SERIALIZED_MESSAGE_H_

#include <google/protobuf/io/coded_stream.h>
#include <grpcpp/support/byte_buffer.h>
#include <grpcpp/support/slice.h>

#include <cstdint>
#include <vector>

namespace dvexport::server {

// Pieces of the messages the service serializes itself (FileChunk, DataValueBatch): the bulk
// goes out as it is, the small fields around it as slices of their own, and the message ends
// with a slice that holds only varint fields (values_so_far, last), which the call log reads.

// A field's tag (field number << 3 | wire type) and a varint (the field's value, or the length
// of a length-delimited field), as a slice of their own.
inline grpc::Slice TagAndVarint(uint32_t field, uint32_t wire_type, uint64_t value) {
  uint8_t bytes[5 + 10];
  uint8_t* end = google::protobuf::io::CodedOutputStream::WriteVarint32ToArray(
      field << 3 | wire_type, bytes);
  end = google::protobuf::io::CodedOutputStream::WriteVarint64ToArray(value, end);
  return grpc::Slice(bytes, static_cast<size_t>(end - bytes));
}

// Calls found(field number, value) for each field of the last slice of "message", which must
// hold only varint fields; false if it holds anything else (or nothing can be read).
template <typename Found>
bool ReadTrailingVarints(const grpc::ByteBuffer& message, Found found) {
  std::vector<grpc::Slice> slices;
  if (!message.Dump(&slices).ok() || slices.empty()) return false;
  google::protobuf::io::CodedInputStream in(slices.back().begin(),
                                            static_cast<int>(slices.back().size()));
  while (uint32_t tag = in.ReadTag()) {
    uint64_t value = 0;
    if ((tag & 7) != 0 || !in.ReadVarint64(&value)) return false;
    found(static_cast<int>(tag >> 3), value);
  }
  return in.ConsumedEntireMessage();  // the end of the slice, not a broken tag
}

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_SERIALIZED_MESSAGE_H_
