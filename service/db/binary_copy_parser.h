#ifndef DVEXPORT_SERVICE_DB_BINARY_COPY_PARSER_H_
#define DVEXPORT_SERVICE_DB_BINARY_COPY_PARSER_H_

#include <cstdint>
#include <cstring>
#include <string_view>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace dvexport::db {

// One field of a binary COPY tuple: raw bytes in PostgreSQL's binary send
// format, or null.
struct CopyField {
  const char* data = nullptr;
  int32_t size = -1;  // -1: SQL NULL
  bool is_null() const { return size < 0; }
};

inline int16_t ReadInt16(const char* p) {
  uint16_t v;
  std::memcpy(&v, p, 2);
  return static_cast<int16_t>(__builtin_bswap16(v));
}
inline int32_t ReadInt32(const char* p) {
  uint32_t v;
  std::memcpy(&v, p, 4);
  return static_cast<int32_t>(__builtin_bswap32(v));
}
inline int64_t ReadInt64(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, 8);
  return static_cast<int64_t>(__builtin_bswap64(v));
}

// Parses the CopyData messages of "COPY (...) TO STDOUT (FORMAT binary)"
// whose tuples all have kFields fields. PostgreSQL sends the file header with
// the first tuple and then one tuple per message; a tuple split across
// messages is rejected as DataLoss.
template <int kFields>
class BinaryCopyParser {
 public:
  // Parses one message, calling on_row(const CopyField (&)[kFields]) for each
  // tuple. on_row returns false to stop early (then Parse returns OK).
  template <typename OnRow>
  absl::Status Parse(std::string_view message, OnRow&& on_row) {
    const char* p = message.data();
    const char* end = p + message.size();
    if (!header_seen_) {
      static constexpr char kSignature[] = "PGCOPY\n\377\r\n";  // 11 bytes with the NUL
      if (message.size() < 19 || std::memcmp(p, kSignature, 11) != 0) {
        return absl::DataLossError("binary COPY data does not start with the PGCOPY header");
      }
      int32_t extension = ReadInt32(p + 15);
      if (extension < 0 || end - (p + 19) < extension) {
        return absl::DataLossError("binary COPY header extension is truncated");
      }
      p += 19 + extension;
      header_seen_ = true;
    }
    CopyField fields[kFields];
    while (p < end) {
      if (done_) return absl::DataLossError("binary COPY data after the trailer");
      if (end - p < 2) return Truncated();
      int16_t count = ReadInt16(p);
      p += 2;
      if (count == -1) {
        done_ = true;
        continue;
      }
      if (count != kFields) {
        return absl::DataLossError(
            absl::StrCat("binary COPY tuple has ", count, " fields, expected ", kFields));
      }
      for (int i = 0; i < kFields; ++i) {
        if (end - p < 4) return Truncated();
        int32_t size = ReadInt32(p);
        p += 4;
        if (size < 0) {
          fields[i] = CopyField{nullptr, -1};
          continue;
        }
        if (end - p < size) return Truncated();
        fields[i] = CopyField{p, size};
        p += size;
      }
      if (!on_row(fields)) return absl::OkStatus();
    }
    return absl::OkStatus();
  }

  // True once the trailer (a field count of -1) has been read.
  bool done() const { return done_; }

 private:
  static absl::Status Truncated() {
    return absl::DataLossError("binary COPY tuple is truncated");
  }

  bool header_seen_ = false;
  bool done_ = false;
};

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_BINARY_COPY_PARSER_H_
