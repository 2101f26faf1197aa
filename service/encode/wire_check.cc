#include "service/encode/wire_check.h"

#include <cstdint>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "common/utf8_sequence.h"

namespace dvexport::encode::wire {
namespace {

using google::protobuf::Descriptor;
using google::protobuf::FieldDescriptor;

// Protobuf's default recursion limit.
constexpr int kMaxDepth = 100;

enum WireType : int {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5,
};

const char* WireTypeName(int wire_type) {
  switch (wire_type) {
    case kVarint:
      return "varint";
    case kFixed64:
      return "fixed64";
    case kLengthDelimited:
      return "length-delimited";
    case kFixed32:
      return "fixed32";
    default:
      return "group";
  }
}

// The wire type of a value of "field"'s type.
int WireTypeOf(const FieldDescriptor* field) {
  switch (field->type()) {
    case FieldDescriptor::TYPE_DOUBLE:
    case FieldDescriptor::TYPE_FIXED64:
    case FieldDescriptor::TYPE_SFIXED64:
      return kFixed64;
    case FieldDescriptor::TYPE_FLOAT:
    case FieldDescriptor::TYPE_FIXED32:
    case FieldDescriptor::TYPE_SFIXED32:
      return kFixed32;
    case FieldDescriptor::TYPE_STRING:
    case FieldDescriptor::TYPE_BYTES:
    case FieldDescriptor::TYPE_MESSAGE:
      return kLengthDelimited;
    case FieldDescriptor::TYPE_GROUP:
      return kStartGroup;
    default:
      return kVarint;
  }
}

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

// One pass over a serialized message; each Scan* returns the first problem found.
class RequestScanner {
 public:
  RequestScanner(const Descriptor* type, std::string_view bytes) : type_(type), bytes_(bytes) {}

  absl::Status Scan() { return ScanMessage(type_, 0, bytes_.size(), "", 0); }

 private:
  // The field being read, for messages: its number (0: none yet) and dotted name (empty when
  // the type does not have it).
  struct FieldName {
    uint32_t number = 0;
    std::string name;
  };

  absl::Status Malformed(absl::string_view what, size_t at, const FieldName& field) const {
    std::string message = absl::StrCat("the request is not a valid ", type_->full_name(), ": ",
                                       what, " at byte ", at);
    if (field.number != 0) {
      absl::StrAppend(&message, " (field ", field.number, field.name.empty() ? "" : ", ",
                      field.name, ")");
    }
    return absl::InvalidArgumentError(message);
  }

  // Reads the varint at "*at" (before "end"); false if it is truncated or longer than 10 bytes,
  // with "*what" saying which.
  bool ReadVarint(size_t* at, size_t end, uint64_t* value, const char** what) const {
    *value = 0;
    for (int i = 0; i < 10; ++i) {
      if (*at == end) {
        *what = "truncated varint";
        return false;
      }
      const auto byte = static_cast<unsigned char>(bytes_[(*at)++]);
      *value |= static_cast<uint64_t>(byte & 0x7f) << (7 * i);
      if (byte < 0x80) return true;
    }
    *what = "varint longer than 10 bytes";
    return false;
  }

  // The packed values of "field" in [begin, end).
  absl::Status ScanPacked(const FieldDescriptor* field, size_t begin, size_t end,
                          const FieldName& name) const {
    const int wire_type = WireTypeOf(field);
    if (wire_type != kVarint) {
      const size_t size = wire_type == kFixed32 ? 4 : 8;
      if ((end - begin) % size == 0) return absl::OkStatus();
      return Malformed(absl::StrCat("packed ", WireTypeName(wire_type), " values of ", end - begin,
                                    " bytes, not a multiple of ", size),
                       begin, name);
    }
    size_t at = begin;
    while (at < end) {
      const size_t value_at = at;
      uint64_t value = 0;
      const char* what = nullptr;
      if (!ReadVarint(&at, end, &value, &what)) return Malformed(what, value_at, name);
    }
    return absl::OkStatus();
  }

  // The value of "field" in [begin, end): a string's UTF-8, a message's fields, packed values.
  absl::Status ScanLengthDelimited(const FieldDescriptor* field, size_t begin, size_t end,
                                   const FieldName& name, int depth) const {
    switch (field->type()) {
      case FieldDescriptor::TYPE_STRING:
        if (IsWellFormedUtf8(bytes_.substr(begin, end - begin))) return absl::OkStatus();
        return absl::InvalidArgumentError(
            absl::StrCat(field->name(), ": not valid UTF-8 (every string field must be UTF-8)"));
      case FieldDescriptor::TYPE_MESSAGE:
        if (depth + 1 >= kMaxDepth) {
          return Malformed(absl::StrCat("messages nested deeper than ", kMaxDepth), begin, name);
        }
        return ScanMessage(field->message_type(), begin, end, name.name + ".", depth + 1);
      case FieldDescriptor::TYPE_BYTES:
        return absl::OkStatus();
      default:
        return ScanPacked(field, begin, end, name);
    }
  }

  absl::Status ScanMessage(const Descriptor* type, size_t begin, size_t end,
                           const std::string& prefix, int depth) const {
    size_t at = begin;
    while (at < end) {
      const size_t tag_at = at;
      uint64_t tag = 0;
      const char* what = nullptr;
      if (!ReadVarint(&at, end, &tag, &what)) {
        return Malformed(absl::StrCat(what, " (a tag)"), tag_at, {});
      }
      if (tag > UINT32_MAX) return Malformed("tag of more than 32 bits", tag_at, {});
      const FieldDescriptor* field = type->FindFieldByNumber(static_cast<int>(tag >> 3));
      const FieldName name{static_cast<uint32_t>(tag >> 3),
                           field == nullptr ? "" : prefix + field->name()};
      const int wire_type = static_cast<int>(tag & 7);
      if (name.number == 0) return Malformed("field number 0", tag_at, {});
      if (wire_type > kFixed32) {
        return Malformed(absl::StrCat("wire type ", wire_type, ", which protobuf does not have,"),
                         tag_at, name);
      }
      if (wire_type == kStartGroup || wire_type == kEndGroup) {
        return Malformed(absl::StrCat("a group tag (wire type ", wire_type, "; proto3 has none)"),
                         tag_at, name);
      }
      if (field != nullptr && wire_type != WireTypeOf(field) &&
          !(wire_type == kLengthDelimited && field->is_packable())) {
        return Malformed(absl::StrCat("wire type ", wire_type, " (", WireTypeName(wire_type),
                                      ") where ", field->type_name(), " has ", WireTypeOf(field),
                                      " (", WireTypeName(WireTypeOf(field)), ")"),
                         tag_at, name);
      }
      const size_t value_at = at;
      switch (wire_type) {
        case kVarint: {
          uint64_t value = 0;
          if (!ReadVarint(&at, end, &value, &what)) return Malformed(what, value_at, name);
          break;
        }
        case kFixed64:
        case kFixed32: {
          const size_t size = wire_type == kFixed32 ? 4 : 8;
          if (end - at < size) {
            return Malformed(absl::StrCat("truncated ", WireTypeName(wire_type), " value"),
                             value_at, name);
          }
          at += size;
          break;
        }
        default: {
          uint64_t length = 0;
          if (!ReadVarint(&at, end, &length, &what)) {
            return Malformed(absl::StrCat(what, " (a length)"), value_at, name);
          }
          if (length > end - at) {
            return Malformed(absl::StrCat("length ", length, " past the end of the message (",
                                          end - at, " bytes left)"),
                             value_at, name);
          }
          const size_t value_end = at + static_cast<size_t>(length);
          if (field != nullptr) {
            absl::Status status = ScanLengthDelimited(field, at, value_end, name, depth);
            if (!status.ok()) return status;
          }
          at = value_end;
        }
      }
    }
    return absl::OkStatus();
  }

  const Descriptor* type_;
  std::string_view bytes_;
};

}  // namespace

absl::Status CheckRequestBytes(const Descriptor* type, std::string_view bytes) {
  return RequestScanner(type, bytes).Scan();
}

}  // namespace dvexport::encode::wire
