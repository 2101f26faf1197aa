#include "service/server/file_export.h"

#include <zlib.h>

#include <algorithm>
#include <string>

#include "service/db/data_value_reader.h"
#include "service/encode/chunk_buffer.h"
#include "service/encode/csv_data_value_encoder.h"
#include "service/encode/json_data_value_encoder.h"
#include "service/encode/pretty_json_data_value_encoder.h"

namespace dvexport::server {
namespace {

using dvexport::v1::FileChunk;

// Turns rendered bytes into data chunks on the stream: compresses them if
// asked, keeps the lengths and CRC-32s for the trailer.
class ChunkSender {
 public:
  ChunkSender(grpc::ServerContext* context, grpc::ServerWriter<FileChunk>* writer,
              std::unique_ptr<encode::GzipCompressor> gzip)
      : context_(context), writer_(writer), gzip_(std::move(gzip)) {}

  // Sends "rendered" (possibly empty); "last" finishes the compressed
  // stream. False if the client has gone.
  bool Send(std::string_view rendered, int64_t values_so_far, bool last) {
    uncompressed_bytes_ += static_cast<int64_t>(rendered.size());
    uncompressed_crc_ = Crc32(uncompressed_crc_, rendered);
    FileChunk chunk;
    std::string* data = chunk.mutable_data();
    if (gzip_ != nullptr) {
      gzip_->Compress(rendered, data);
      if (last) gzip_->Finish(data);
    } else {
      data->assign(rendered.data(), rendered.size());
    }
    if (data->empty()) return true;
    file_bytes_ += static_cast<int64_t>(data->size());
    file_crc_ = Crc32(file_crc_, *data);
    chunk.set_values_so_far(values_so_far);
    return !context_->IsCancelled() && writer_->Write(chunk);
  }

  bool SendTrailer(int64_t values) {
    FileChunk chunk;
    dvexport::v1::ExportTrailer* trailer = chunk.mutable_trailer();
    trailer->set_values(values);
    trailer->set_uncompressed_bytes(uncompressed_bytes_);
    trailer->set_uncompressed_crc32(uncompressed_crc_);
    trailer->set_file_bytes(file_bytes_);
    trailer->set_file_crc32(file_crc_);
    chunk.set_values_so_far(values);
    return writer_->Write(chunk);
  }

  int64_t file_bytes() const { return file_bytes_; }

 private:
  static uint32_t Crc32(uint32_t crc, std::string_view bytes) {
    // zlib's crc32 takes a uInt length; feed very large inputs in pieces.
    while (!bytes.empty()) {
      size_t n = std::min<size_t>(bytes.size(), 1u << 30);
      crc = static_cast<uint32_t>(
          crc32(crc, reinterpret_cast<const Bytef*>(bytes.data()), static_cast<uInt>(n)));
      bytes.remove_prefix(n);
    }
    return crc;
  }

  grpc::ServerContext* context_;
  grpc::ServerWriter<FileChunk>* writer_;
  std::unique_ptr<encode::GzipCompressor> gzip_;
  int64_t uncompressed_bytes_ = 0;
  uint32_t uncompressed_crc_ = 0;
  int64_t file_bytes_ = 0;
  uint32_t file_crc_ = 0;
};

struct RenderResult {
  absl::Status status;
  int64_t values = 0;
};

template <typename Encoder>
RenderResult Render(db::PgConnection& conn, const db::ExportScope& scope, size_t chunk_size,
                    ChunkSender* sender) {
  RenderResult result;
  encode::ChunkBuffer buffer(chunk_size + chunk_size / 4);
  Encoder encoder(&buffer);
  encode::DataValueSetHeader header;
  if (scope.header) {
    header.data_set = {scope.header->data_set, false};
    header.complete_date_micros = scope.header->complete_date_micros;
    header.period = {scope.header->period, false};
    header.org_unit = {scope.header->org_unit, false};
  }
  encoder.Begin(scope.header ? &header : nullptr);
  bool client_gone = false;
  result.status = db::ReadDataValues(conn, scope, [&](const encode::DataValueRow& row) {
    encoder.Add(row);
    ++result.values;
    if (buffer.size() < chunk_size) return true;
    if (!sender->Send(buffer.view(), result.values, false)) {
      client_gone = true;
      return false;
    }
    buffer.Clear();
    return true;
  });
  if (client_gone) {
    result.status = absl::CancelledError("the client went away; the export was stopped");
    return result;
  }
  if (!result.status.ok()) return result;
  encoder.End();
  if (!sender->Send(buffer.view(), result.values, true)) {
    result.status = absl::CancelledError("the client went away; the export was stopped");
  }
  return result;
}

}  // namespace

absl::Status StreamFile(db::PgConnection& conn, const db::ExportScope& scope,
                        dvexport::v1::Format format, std::unique_ptr<encode::GzipCompressor> gzip,
                        size_t chunk_size, grpc::ServerContext* context,
                        grpc::ServerWriter<FileChunk>* writer, FileExportStats* stats) {
  ChunkSender sender(context, writer, std::move(gzip));
  RenderResult rendered =
      format == dvexport::v1::FORMAT_CSV
          ? Render<encode::CsvDataValueEncoder>(conn, scope, chunk_size, &sender)
      : format == dvexport::v1::FORMAT_JSON_PRETTY
          ? Render<encode::PrettyJsonDataValueEncoder>(conn, scope, chunk_size, &sender)
          : Render<encode::JsonDataValueEncoder>(conn, scope, chunk_size, &sender);
  stats->values = rendered.values;
  stats->file_bytes = sender.file_bytes();
  absl::Status status = rendered.status;
  if (status.ok() && !sender.SendTrailer(rendered.values)) {
    status = absl::CancelledError("the client went away before the trailer");
  }
  return status;
}

}  // namespace dvexport::server
