#include "service/pipeline/file_export.h"

#include <algorithm>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "common/crc32.h"
#include "service/dhis2/adx.h"
#include "service/dhis2/dhis2_version.h"
#include "service/dhis2/export_file_name.h"
#include "service/dhis2/export_request_validator.h"
#include "service/dhis2/id_scheme.h"
#include "service/encode/adx_data_value_encoder.h"
#include "service/encode/chunk_buffer.h"
#include "service/encode/csv_243_data_value_encoder.h"
#include "service/encode/csv_data_value_encoder.h"
#include "service/encode/file_compressor.h"
#include "service/encode/json_243_data_value_encoder.h"
#include "service/encode/json_data_value_encoder.h"
#include "service/encode/parallel_gzip_compressor.h"
#include "service/encode/pretty_json_data_value_encoder.h"
#include "service/encode/xml_243_data_value_encoder.h"
#include "service/encode/xml_data_value_encoder.h"
#include "service/encode/zip_compressor.h"
#include "service/encode/zstd_compressor.h"
#include "service/pipeline/reader_export.h"

namespace dvexport::pipeline {
namespace {

// The first chunk is sent after this many rendered bytes, so that the first byte leaves within
// milliseconds of the first row; later chunks are "chunk_size".
constexpr size_t kFirstChunkSize = 16 * 1024;

// The levels "compression" takes (0 is always allowed: the default, 1).
struct LevelRange {
  int max;
  const char* name;
};

LevelRange LevelRangeOf(dvexport::v1::Compression compression, int max_zstd_level) {
  switch (compression) {
    case dvexport::v1::COMPRESSION_ZSTD:
      return {max_zstd_level, "zstd"};
    case dvexport::v1::COMPRESSION_GZIP:
      return {9, "gzip"};
    case dvexport::v1::COMPRESSION_ZIP:
      return {9, "zip"};
    default:
      return {9, "uncompressed output"};
  }
}

// zstd's highest level (20-22 are refused whatever --max_zstd_level says, encode::ZstdOptions).
constexpr int kMaxZstdLevel = 19;

// "rules_version": the minor version whose rules the export follows (RulesVersion).
absl::Status ValidateFileOptions(const dvexport::v1::ExportFileRequest& request, int max_zstd_level,
                                 int rules_version) {
  if (!dvexport::v1::Format_IsValid(request.format())) {
    return absl::InvalidArgumentError(absl::StrCat("format: unknown value ", request.format()));
  }
  if (!dvexport::v1::Compression_IsValid(request.compression())) {
    return absl::InvalidArgumentError(
        absl::StrCat("compression: unknown value ", request.compression()));
  }
  if (request.format() == dvexport::v1::FORMAT_ADX) {
    absl::Status adx = dhis2::CheckAdxRequest(request.query(), rules_version);
    if (!adx.ok()) return adx;
  }
  const LevelRange range = LevelRangeOf(request.compression(), max_zstd_level);
  if (request.compression() == dvexport::v1::COMPRESSION_ZSTD &&
      request.compression_level() > range.max && request.compression_level() <= kMaxZstdLevel) {
    return absl::InvalidArgumentError(absl::StrCat(
        "compression_level: ", request.compression_level(), " is above this server's zstd limit, ",
        range.max, " (--max_zstd_level; 1 to ", range.max, " accepted, 0: default)"));
  }
  if (request.compression_level() < 0 || request.compression_level() > range.max) {
    return absl::InvalidArgumentError(
        absl::StrCat("compression_level: ", request.compression_level(), " is not between 1 and ",
                     range.max, " for ", range.name, " (0: default)"));
  }
  return absl::OkStatus();
}

// The extension DHIS2 gives the file of "format" (and the entry of its zip).
std::string_view FileExtension(dvexport::v1::Format format) {
  switch (format) {
    case dvexport::v1::FORMAT_CSV:
      return "csv";
    case dvexport::v1::FORMAT_XML:
    case dvexport::v1::FORMAT_ADX:  // DHIS2 names the ADX zip entry .xml too
      return "xml";
    default:
      return "json";
  }
}

// The compressor the request asks for; null for none. "rules": the DHIS2 whose file names the
// zip entry follows.
absl::StatusOr<std::unique_ptr<encode::FileCompressor>> CreateCompressor(
    const dvexport::v1::ExportFileRequest& request, int rules) {
  const int level = request.compression_level() == 0 ? 1 : request.compression_level();
  switch (request.compression()) {
    case dvexport::v1::COMPRESSION_GZIP: {
      encode::ParallelGzipOptions options;
      options.level = level;
      return encode::ParallelGzipCompressor::Create(options);
    }
    case dvexport::v1::COMPRESSION_ZIP: {
      encode::ZipOptions options;
      options.entry_name = rules >= 43
                               ? dhis2::ZipEntryFileName243(
                                     request.query(),
                                     request.attachment().empty()
                                         ? std::nullopt
                                         : std::optional<std::string_view>(request.attachment()),
                                     dhis2::FormatName(request.format()))
                               : dhis2::AttachmentFileName(request.query(), request.attachment(),
                                                           FileExtension(request.format()));
      options.modified_unix_seconds = absl::ToUnixSeconds(absl::Now());
      options.deflate.level = level;
      return encode::ZipCompressor::Create(options);
    }
    case dvexport::v1::COMPRESSION_ZSTD: {
      encode::ZstdOptions options;
      options.level = level;
      return encode::ZstdCompressor::Create(options);
    }
    default:
      return std::unique_ptr<encode::FileCompressor>();
  }
}

// Whether "Encoder" writes DHIS2 2.43's document (a DataValueGroupHeader, members left out)
// rather than 2.42's.
template <typename Encoder>
constexpr bool kWrites243 = false;
template <>
constexpr bool kWrites243<encode::Json243DataValueEncoder> = true;
template <>
constexpr bool kWrites243<encode::PrettyJson243DataValueEncoder> = true;
template <>
constexpr bool kWrites243<encode::Csv243DataValueEncoder> = true;
template <>
constexpr bool kWrites243<encode::Xml243DataValueEncoder> = true;

encode::Text TextOf(const std::string& bytes) {
  return encode::Text{bytes, false, encode::IsPlainText(bytes)};
}

std::optional<encode::Text> TextOf(const std::optional<std::string>& bytes) {
  if (!bytes) return std::nullopt;
  return TextOf(*bytes);
}

// 2.43's group header of "scope", referring to the scope's strings.
encode::DataValueGroupHeader GroupHeaderOf(const db::ExportScope& scope) {
  encode::DataValueGroupHeader header;
  if (!scope.group_header) return header;
  const db::GroupHeader& group = *scope.group_header;
  header.data_set = TextOf(group.data_set);
  header.period = TextOf(group.period);
  header.period_adx = TextOf(group.period_adx);
  header.org_unit = TextOf(group.org_unit);
  header.attribute_option_combo = TextOf(group.attribute_option_combo);
  for (const auto& [name, scheme] : group.id_schemes) header.id_schemes.emplace_back(name, scheme);
  return header;
}

// The rendered start and end of the document, written around the readers' values.
template <typename Encoder>
class DocumentFrame {
 public:
  explicit DocumentFrame(const db::ExportScope& scope) : buffer_(4096), encoder_(&buffer_) {
    if constexpr (kWrites243<Encoder>) {
      encoder_.Begin(GroupHeaderOf(scope));
    } else {
      Begin242(scope);
    }
  }

  std::string_view start() const { return buffer_.view(); }

  std::string_view End(bool values_written) {
    buffer_.Clear();
    encoder_.SetValuesWritten(values_written);
    encoder_.End();
    return buffer_.view();
  }

 private:
  void Begin242(const db::ExportScope& scope) {
    if (scope.header) {
      header_.data_set = scope.header->data_set ? encode::Text{*scope.header->data_set, false}
                                                : encode::Text{{}, true};
      header_.complete_date_micros = scope.header->complete_date_micros;
      header_.period = {scope.header->period, false};
      header_.org_unit = scope.header->org_unit ? encode::Text{*scope.header->org_unit, false}
                                                : encode::Text{{}, true};
    }
    encoder_.Begin(scope.header ? &header_ : nullptr);
  }

  encode::DataValueSetHeader header_;
  encode::ChunkBuffer buffer_;
  Encoder encoder_;
};

// The output side of one file: turns rendered bytes, in the order the readers hand them over,
// into the file's chunks (compressed if asked), and keeps the lengths and CRC-32s for the
// trailer.
class FileSequencer {
 public:
  explicit FileSequencer(std::unique_ptr<encode::FileCompressor> compressor)
      : compressor_(std::move(compressor)) {}

  // The chunk that carries "rendered" (holding "values" more values) into "*out"; false if
  // nothing is to be sent yet (compressed output pending). "last" finishes the compressed
  // stream.
  bool Next(std::string_view rendered, int64_t values, bool last, Chunk* out) {
    values_so_far_ += values;
    uncompressed_bytes_ += static_cast<int64_t>(rendered.size());
    std::string_view data = rendered;
    if (compressor_ != nullptr) {
      // The compressor checksums its input (gzip and zip on their workers); the trailer takes
      // that CRC.
      compressed_.clear();
      compressor_->Compress(rendered, &compressed_);
      if (last) {
        compressor_->Finish(&compressed_);
        uncompressed_crc_ = compressor_->input_crc32();
      }
      data = compressed_;
      file_crc_ = common::Crc32(file_crc_, data);
    } else {
      // Uncompressed, the file is the rendered bytes: one checksum serves both.
      uncompressed_crc_ = file_crc_ = common::Crc32(file_crc_, data);
    }
    if (data.empty()) return false;
    file_bytes_ += static_cast<int64_t>(data.size());
    out->kind = Chunk::Kind::kFileData;
    out->values_so_far = values_so_far_;
    if (compressor_ != nullptr) {
      // The compressed bytes are the chunk's: no copy.
      out->bytes = std::move(compressed_);
      compressed_ = std::string();
    } else {
      out->bytes.assign(data.data(), data.size());
    }
    return true;
  }

  // The last chunk; "change_token" as ReadSession::change_token.
  Chunk Trailer(const std::string& change_token) const {
    dvexport::v1::ExportTrailer trailer;
    trailer.set_change_token(change_token);
    trailer.set_values(values_so_far_);
    trailer.set_uncompressed_bytes(uncompressed_bytes_);
    trailer.set_uncompressed_crc32(uncompressed_crc_);
    trailer.set_file_bytes(file_bytes_);
    trailer.set_file_crc32(file_crc_);
    return Chunk{.kind = Chunk::Kind::kFileTrailer,
                 .bytes = trailer.SerializeAsString(),
                 .values_so_far = values_so_far_};
  }

  int64_t values_so_far() const { return values_so_far_; }

 private:
  std::unique_ptr<encode::FileCompressor> compressor_;
  std::string compressed_;
  int64_t values_so_far_ = 0;
  int64_t uncompressed_bytes_ = 0;
  uint32_t uncompressed_crc_ = 0;
  int64_t file_bytes_ = 0;
  uint32_t file_crc_ = 0;
};

template <typename Encoder>
class FileExport final : public ReaderExport {
 public:
  FileExport(ExportPipeline* pipeline, CallOrigin origin, ExportConsumer* consumer,
             const dvexport::v1::ExportFileRequest& request,
             std::unique_ptr<encode::FileCompressor> compressor)
      : ReaderExport(pipeline, std::move(origin), consumer, "ExportFile"),
        sequencer_(std::move(compressor)) {
    record().format = dvexport::v1::Format_Name(request.format());
    record().compression = dvexport::v1::Compression_Name(request.compression());
    Start(absl::OkStatus(), &request.query());
  }

 private:
  // Reader "index": renders its values with its own encoder into its own buffer and hands the
  // buffer's bytes over every chunk_size (kFirstChunkSize first). Every value rendered here is
  // preceded by Encoder::kValueSeparator; the first value of the document loses it.
  absl::Status ReadValues(int index) override {
    const size_t chunk_size = options().chunk_size;
    // The encoder was chosen by the version known when the call started: the scope's is the
    // version of the connection that read it (ReadSession checks that the rules agree).
    if (session().scope().dhis2 != (kWrites243<Encoder> ? 43 : 42)) {
      return absl::UnavailableError(
          "the database's DHIS2 version changed while this export started; try again");
    }
    encode::ChunkBuffer buffer(chunk_size + chunk_size / 4);
    Encoder encoder(&buffer);
    if constexpr (kWrites243<Encoder>) encoder.UseHeader(GroupHeaderOf(session().scope()));
    encoder.SetValuesWritten(true);
    int64_t values = 0;  // in "buffer"
    bool stopped = false;
    auto hand_over = [&]() {
      if (!HandOver(buffer.view(), values)) return false;
      buffer.Clear();
      values = 0;
      return true;
    };
    size_t flush_at = std::min(kFirstChunkSize, chunk_size);
    const auto row = [&](const encode::DataValueRow& row) {
      encoder.Add(row);
      ++values;
      if (buffer.size() < flush_at) return true;
      flush_at = chunk_size;
      if (hand_over()) return true;
      stopped = true;
      return false;
    };
    // An ordered export waiting for its next slice: the first chunk goes now, however small (its
    // first slice can be one day's few values), not after the next slice's read.
    const auto before_wait = [&] {
      if (values == 0 || flush_at == chunk_size || stopped) return;
      flush_at = chunk_size;
      stopped = !hand_over();
    };
    absl::Status status = session().Read(
        index, [&](const encode::DataValueRow& r) { return !stopped && row(r); }, before_wait);
    if (stopped) return ClientGoneError();
    if (!status.ok()) return status;
    if (!buffer.empty() && !hand_over()) return ClientGoneError();
    return absl::OkStatus();
  }

  // Queues "rendered" (in the order of the calls; the first carries the document's start).
  bool HandOver(std::string_view rendered, int64_t values) {
    std::lock_guard<std::mutex> lock(order_mu_);
    std::string first;
    if (!started_) {
      started_ = true;
      frame_.emplace(session().scope());
      rendered.remove_prefix(Encoder::kValueSeparator.size());
      first.append(frame_->start()).append(rendered);
      rendered = first;
    }
    Chunk message;
    if (!sequencer_.Next(rendered, values, /*last=*/false, &message)) return true;
    return Push(std::move(message));
  }

  absl::Status WriteEnd() override {
    std::lock_guard<std::mutex> lock(order_mu_);
    std::string rendered;
    if (!started_) {
      frame_.emplace(session().scope());
      rendered = frame_->start();
      rendered.append(frame_->End(false));
    } else {
      rendered = std::string(frame_->End(sequencer_.values_so_far() > 0));
    }
    Chunk message;
    if (sequencer_.Next(rendered, 0, /*last=*/true, &message) && !Push(std::move(message))) {
      return ClientGoneError();
    }
    if (!Push(sequencer_.Trailer(session().change_token()))) {
      return absl::CancelledError("the client went away before the trailer");
    }
    return absl::OkStatus();
  }

  std::mutex order_mu_;
  bool started_ ABSL_GUARDED_BY(order_mu_) = false;
  std::optional<DocumentFrame<Encoder>> frame_ ABSL_GUARDED_BY(order_mu_);
  FileSequencer sequencer_ ABSL_GUARDED_BY(order_mu_);
};

// An ADX export: one reader reads the values in group order (ReadSession::ReadAdx) and renders
// them with one AdxDataValueEncoder, handing its buffer over every chunk_size (kFirstChunkSize
// first). The document starts only once the ADX metadata is read, so that a missing code ends
// the call before its first byte. "rules_version" is the minor version whose ADX it writes (42
// for 2.40 to 2.42; 43: DHIS2 2.43's defaults, groups and checks, db::ResolveAdxScope243).
class AdxFileExport final : public ReaderExport {
 public:
  AdxFileExport(ExportPipeline* pipeline, CallOrigin origin, ExportConsumer* consumer,
                const dvexport::v1::ExportFileRequest& request,
                std::unique_ptr<encode::FileCompressor> compressor, int rules_version)
      : ReaderExport(pipeline, std::move(origin), consumer, "ExportFile"),
        dhis2_(rules_version >= 43 ? 43 : 42),
        query_(dhis2::WithAdxDefaults(request.query(), dhis2_)),
        session_query_(dhis2_ >= 43 ? dhis2::WithUidOutputSchemes(query_) : query_),
        buffer_(options().chunk_size + options().chunk_size / 4),
        encoder_(&buffer_),
        sequencer_(std::move(compressor)) {
    record().format = dvexport::v1::Format_Name(request.format());
    record().compression = dvexport::v1::Compression_Name(request.compression());
    absl::Status status;
    if (dhis2_ >= 43) {
      absl::StatusOr<dhis2::ExportParams> params = dhis2::ValidateExportRequest243(query_);
      status = params.status();
      if (params.ok()) {
        request_243_ =
            db::AdxRequest243{params->data_sets, params->output, params->exclude_default_aoc};
      }
    }
    Start(status, status.ok() ? &session_query_ : &query_);
  }

 private:
  bool ReadsInOrder() const override { return true; }

  // The output schemes of the data sets and of the categories and options (id_scheme, which
  // WithAdxDefaults made CODE when unset); the validator has checked both.
  db::AdxIdSchemes Schemes() const {
    const std::string& data_set =
        query_.data_set_id_scheme().empty() ? query_.id_scheme() : query_.data_set_id_scheme();
    db::AdxIdSchemes schemes;
    absl::StatusOr<std::optional<dhis2::IdScheme>> parsed =
        dhis2::ParseIdScheme("data_set_id_scheme", data_set);
    if (parsed.ok() && parsed->has_value()) schemes.data_set = **parsed;
    parsed = dhis2::ParseIdScheme("id_scheme", query_.id_scheme());
    if (parsed.ok() && parsed->has_value()) schemes.category = **parsed;
    schemes.dhis2_43 = request_243_;
    return schemes;
  }

  absl::Status ReadValues(int /*index*/) override {
    if (session().scope().dhis2 != dhis2_) {
      return absl::UnavailableError(
          "the database's DHIS2 version changed while this export started; try again");
    }
    absl::Status status = session().PrepareAdx(Schemes());
    if (!status.ok()) return status;
    const size_t chunk_size = options().chunk_size;
    size_t flush_at = std::min(kFirstChunkSize, chunk_size);
    int64_t values = 0;  // in "buffer_"
    bool stopped = false;
    bool in_group = false;
    encoder_.Begin();
    status = session().ReadAdx([&](const db::AdxRow& row) {
      if (row.new_group) {
        if (in_group) encoder_.EndGroup();
        encoder_.StartGroup(row.group);
        in_group = true;
      }
      encoder_.Add(row.value);
      ++values;
      if (buffer_.size() < flush_at) return true;
      flush_at = chunk_size;
      if (HandOver(values, /*last=*/false)) {
        values = 0;
        return true;
      }
      stopped = true;
      return false;
    });
    if (stopped) return ClientGoneError();
    if (!status.ok()) return status;
    if (in_group) encoder_.EndGroup();
    values_pending_ = values;
    return absl::OkStatus();
  }

  // Sends what "buffer_" holds (with "values" more values) and empties it; false if the call is
  // stopping.
  bool HandOver(int64_t values, bool last) {
    Chunk message;
    const bool send = sequencer_.Next(buffer_.view(), values, last, &message);
    buffer_.Clear();
    return !send || Push(std::move(message));
  }

  absl::Status WriteEnd() override {
    encoder_.End();
    if (!HandOver(values_pending_, /*last=*/true)) return ClientGoneError();
    if (!Push(sequencer_.Trailer(session().change_token()))) {
      return absl::CancelledError("the client went away before the trailer");
    }
    return absl::OkStatus();
  }

  const int dhis2_;
  const dvexport::v1::ExportRequest query_;
  const dvexport::v1::ExportRequest session_query_;
  // DHIS2 2.43: the request as its rules validated it, with the output schemes ADX writes.
  std::optional<db::AdxRequest243> request_243_;
  // The one reader's, then (after it returned) WriteEnd's: never two threads at once.
  encode::ChunkBuffer buffer_;
  encode::AdxDataValueEncoder encoder_;
  FileSequencer sequencer_;
  int64_t values_pending_ = 0;
};

// Ends a call that cannot start: the request could not be read, or its file options are wrong.
class RefusedFileExport final : public ReaderExport {
 public:
  RefusedFileExport(ExportPipeline* pipeline, CallOrigin origin, ExportConsumer* consumer,
                    const absl::Status& status)
      : ReaderExport(pipeline, std::move(origin), consumer, "ExportFile") {
    Start(status, nullptr);
  }

 private:
  absl::Status ReadValues(int) override { return absl::OkStatus(); }
  absl::Status WriteEnd() override { return absl::OkStatus(); }
};

// The DHIS2 whose rules and bytes the export follows, as CallSession::Open decides it: the one
// the request pins, else the database's as far as the pool knows it (2.42's rules until then).
int RulesVersion(ExportPipeline* pipeline, const dvexport::v1::ExportRequest& query) {
  if (!query.dhis2_version().empty()) {
    absl::StatusOr<int> pinned = dhis2::ParseServedVersion(query.dhis2_version());
    return pinned.ok() ? *pinned : 42;
  }
  const int served = ServedDhis2Version(pipeline);
  return served != 0 ? served : 42;
}

// An export of DHIS2 2.43's document.
std::unique_ptr<Export> Start243FileExport(
    ExportPipeline* pipeline, CallOrigin origin,
    const absl::StatusOr<dvexport::v1::ExportFileRequest>& request, ExportConsumer* consumer,
    std::unique_ptr<encode::FileCompressor> compressor) {
  switch (request->format()) {
    case dvexport::v1::FORMAT_CSV:
      return std::make_unique<FileExport<encode::Csv243DataValueEncoder>>(
          pipeline, std::move(origin), consumer, *request, std::move(compressor));
    case dvexport::v1::FORMAT_JSON_PRETTY:
      return std::make_unique<FileExport<encode::PrettyJson243DataValueEncoder>>(
          pipeline, std::move(origin), consumer, *request, std::move(compressor));
    case dvexport::v1::FORMAT_XML:
      return std::make_unique<FileExport<encode::Xml243DataValueEncoder>>(
          pipeline, std::move(origin), consumer, *request, std::move(compressor));
    case dvexport::v1::FORMAT_ADX:
      return std::make_unique<AdxFileExport>(pipeline, std::move(origin), consumer, *request,
                                             std::move(compressor), 43);
    default:
      return std::make_unique<FileExport<encode::Json243DataValueEncoder>>(
          pipeline, std::move(origin), consumer, *request, std::move(compressor));
  }
}

}  // namespace

std::unique_ptr<Export> StartFileExport(
    ExportPipeline* pipeline, CallOrigin origin,
    const absl::StatusOr<dvexport::v1::ExportFileRequest>& request, ExportConsumer* consumer) {
  absl::Status status = request.status();
  const int rules = status.ok() ? RulesVersion(pipeline, request->query()) : 42;
  if (status.ok()) {
    status = ValidateFileOptions(*request, pipeline->options().max_zstd_level, rules);
  }
  std::unique_ptr<encode::FileCompressor> compressor;
  if (status.ok()) {
    absl::StatusOr<std::unique_ptr<encode::FileCompressor>> created =
        CreateCompressor(*request, rules);
    status = created.status();
    if (status.ok()) compressor = *std::move(created);
  }
  if (!status.ok()) {
    return std::make_unique<RefusedFileExport>(pipeline, std::move(origin), consumer, status);
  }
  if (rules >= 43) {
    return Start243FileExport(pipeline, std::move(origin), request, consumer,
                              std::move(compressor));
  }
  switch (request->format()) {
    case dvexport::v1::FORMAT_CSV:
      return std::make_unique<FileExport<encode::CsvDataValueEncoder>>(
          pipeline, std::move(origin), consumer, *request, std::move(compressor));
    case dvexport::v1::FORMAT_JSON_PRETTY:
      return std::make_unique<FileExport<encode::PrettyJsonDataValueEncoder>>(
          pipeline, std::move(origin), consumer, *request, std::move(compressor));
    case dvexport::v1::FORMAT_XML:
      return std::make_unique<FileExport<encode::XmlDataValueEncoder>>(
          pipeline, std::move(origin), consumer, *request, std::move(compressor));
    case dvexport::v1::FORMAT_ADX:
      return std::make_unique<AdxFileExport>(pipeline, std::move(origin), consumer, *request,
                                             std::move(compressor), 42);
    default:
      return std::make_unique<FileExport<encode::JsonDataValueEncoder>>(
          pipeline, std::move(origin), consumer, *request, std::move(compressor));
  }
}

}  // namespace dvexport::pipeline
