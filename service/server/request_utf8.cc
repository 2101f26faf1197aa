#include "service/server/request_utf8.h"

#include <google/protobuf/io/coded_stream.h>
#include <google/protobuf/wire_format_lite.h>

#include <cstdint>
#include <string_view>
#include <vector>

#include "common/utf8_sequence.h"

namespace dvexport::server {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;
using google::protobuf::internal::WireFormatLite;
using google::protobuf::io::CodedInputStream;

// Messages nest no deeper than this in the contract; deeper input is left to the parser.
constexpr int kMaxDepth = 16;

bool IsWellFormedUtf8(std::string_view text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  size_t i = 0;
  while (i < text.size()) {
    if (s[i] < 0x80) {
      ++i;
      continue;
    }
    const common::Utf8Sequence sequence = common::ScanUtf8Sequence(s + i, text.size() - i);
    if (!sequence.well_formed) return false;
    i += sequence.length;
  }
  return true;
}

// Reads the fields of one "type" message up to the stream's limit. False with "*field" set at
// the first ill-formed string; true otherwise (also when the bytes are malformed: the parser
// reports those).
bool CheckFields(CodedInputStream* in, const Descriptor* type, int depth, std::string* field) {
  while (true) {
    const uint32_t tag = in->ReadTag();
    if (tag == 0) return true;
    const FieldDescriptor* descriptor =
        type->FindFieldByNumber(static_cast<int>(WireFormatLite::GetTagFieldNumber(tag)));
    const bool length_delimited =
        WireFormatLite::GetTagWireType(tag) == WireFormatLite::WIRETYPE_LENGTH_DELIMITED;
    if (descriptor == nullptr || !length_delimited ||
        (descriptor->type() != FieldDescriptor::TYPE_STRING &&
         descriptor->type() != FieldDescriptor::TYPE_MESSAGE)) {
      if (!WireFormatLite::SkipField(in, tag)) return true;
      continue;
    }
    uint32_t length = 0;
    if (!in->ReadVarint32(&length)) return true;
    if (descriptor->type() == FieldDescriptor::TYPE_STRING) {
      const void* data = nullptr;
      int available = 0;
      std::string copy;
      // Usually the whole value is in the current buffer: no copy.
      if (in->GetDirectBufferPointer(&data, &available) &&
          static_cast<uint32_t>(available) >= length) {
        if (!IsWellFormedUtf8({static_cast<const char*>(data), length})) {
          *field = descriptor->name();
          return false;
        }
        in->Skip(static_cast<int>(length));
      } else {
        if (!in->ReadString(&copy, static_cast<int>(length))) return true;
        if (!IsWellFormedUtf8(copy)) {
          *field = descriptor->name();
          return false;
        }
      }
      continue;
    }
    if (depth >= kMaxDepth) return true;
    const CodedInputStream::Limit limit = in->PushLimit(static_cast<int>(length));
    if (!CheckFields(in, descriptor->message_type(), depth + 1, field)) return false;
    in->PopLimit(limit);
  }
}

}  // namespace

std::optional<std::string> FindIllFormedUtf8Field(const Descriptor* type,
                                                  const grpc::ByteBuffer& bytes) {
  std::vector<grpc::Slice> slices;
  if (!bytes.Dump(&slices).ok()) return std::nullopt;
  std::string message;
  for (const grpc::Slice& slice : slices) {
    message.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
  }
  CodedInputStream in(reinterpret_cast<const uint8_t*>(message.data()),
                      static_cast<int>(message.size()));
  std::string field;
  if (CheckFields(&in, type, 0, &field)) return std::nullopt;
  return field;
}

}  // namespace dvexport::server
