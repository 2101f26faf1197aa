#ifndef DVEXPORT_SERVICE_ENCODE_WIRE_CHECK_H_
#define DVEXPORT_SERVICE_ENCODE_WIRE_CHECK_H_

#include <google/protobuf/descriptor.h>

#include <string>
#include <string_view>

#include "absl/status/status.h"

// The read side of the protobuf wire format (wire_format.h is the write side): a request's bytes
// checked against its descriptor before protobuf parses them. Nothing of gRPC inside.
namespace dvexport::encode::wire {

// Checks the serialized "type" message "bytes" on the bytes themselves, as protobuf's parser
// would, so that the client learns what is wrong (protobuf refuses a bad message as a whole, and
// logs a line naming neither the call nor the field). OK, or InvalidArgument with the first
// problem in byte order:
// - "<field>: not valid UTF-8 (every string field must be UTF-8)" for a string field (of "type",
//   or of a message field within it, at any depth) whose value is not well-formed UTF-8;
// - "the request is not a valid <type's full name>: <what> at byte <offset>" (offsets from 0,
//   in the whole message), naming the field where its number is known, e.g.
//   "truncated varint at byte 12 (field 4, compression_level)": a truncated varint or fixed
//   value, a varint of more than 10 bytes or a tag of more than 32 bits, a length past the end
//   of its message, field number 0, wire type 6 or 7, a group (wire type 3 or 4: proto3 has
//   none), or a known field sent with a wire type its type cannot have (protobuf would keep
//   it as an unknown field and silently use the default instead). Unknown fields of a valid
//   wire type are accepted, as protobuf accepts them.
absl::Status CheckRequestBytes(const google::protobuf::Descriptor* type, std::string_view bytes);

}  // namespace dvexport::encode::wire

#endif  // DVEXPORT_SERVICE_ENCODE_WIRE_CHECK_H_
