#ifndef DVEXPORT_SERVICE_SERVER_REQUEST_UTF8_H_
#define DVEXPORT_SERVICE_SERVER_REQUEST_UTF8_H_

#include <google/protobuf/descriptor.h>
#include <grpcpp/support/byte_buffer.h>

#include <optional>
#include <string>

namespace dvexport::server {

// The name of the first string field (of "type", or of a message field within it, at any depth)
// whose value in the serialized message "bytes" is not well-formed UTF-8; nullopt if there is
// none. Protobuf refuses such a proto3 message as a whole (and logs a line naming neither the
// call nor, to the client, the field): this tells the client which field it was. Bytes that
// are not a valid message at all are left to the parser.
std::optional<std::string> FindIllFormedUtf8Field(const google::protobuf::Descriptor* type,
                                                  const grpc::ByteBuffer& bytes);

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_REQUEST_UTF8_H_
