// ttfb: times one export from the client's side, for scripts/bench.
//
//   ttfb --server HOST:PORT [--format json|csv|json_pretty] [--gzip LEVEL] [--zstd LEVEL]
//        [--stream] [--data-set UID]... [--org-unit UID]... [--children]
//        [--start-date yyyy-MM-dd --end-date yyyy-MM-dd] [--token-file FILE]
//
// The call carries the DHIS2 personal access token on the first line of --token-file FILE,
// else the one in $DVEXPORT_TOKEN, else none (a server run with --auth none); the call
// credentials are made before the clock starts.
// Calls ExportFile (or StreamDataValues with --stream, parsing every value), discards what
// arrives and prints one line: first_byte_ms=... total_ms=... bytes=... values=... (bytes: of
// the file; 0 for the stream). The first byte is the first message with data, timed from just
// before the call. Exit status 0 on success, 3 if the server
// does not implement the RPC, 1 on any other failure.
#include <google/protobuf/arena.h>
#include <grpcpp/grpcpp.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "client/credentials.h"
#include "dvexport/v1/export.grpc.pb.h"

namespace {

using Clock = std::chrono::steady_clock;

double Ms(Clock::time_point from, Clock::time_point to) {
  return std::chrono::duration<double, std::milli>(to - from).count();
}

int Usage() {
  std::fprintf(stderr,
               "usage: ttfb --server HOST:PORT [--format json|csv|json_pretty] [--gzip LEVEL]\n"
               "            [--zstd LEVEL]\n"
               "            [--stream] [--data-set UID]... [--org-unit UID]... [--children]\n"
               "            [--start-date DATE --end-date DATE] [--token-file FILE]\n"
               "The token: --token-file FILE, else $DVEXPORT_TOKEN, else none.\n");
  return 2;
}

}  // namespace

int main(int argc, char** argv) {
  std::string server;
  bool stream = false;
  dvexport::v1::ExportFileRequest request;
  dvexport::v1::ExportRequest* query = request.mutable_query();
  std::string token_file;
  for (int i = 1; i < argc; ++i) {
    const std::string flag = argv[i];
    auto value = [&]() -> const char* { return i + 1 < argc ? argv[++i] : nullptr; };
    const char* v = nullptr;
    if (flag == "--children") {
      query->set_children(true);
    } else if (flag == "--stream") {
      stream = true;
    } else if ((v = value()) == nullptr) {
      return Usage();
    } else if (flag == "--server") {
      server = v;
    } else if (flag == "--format") {
      const std::string f = v;
      request.set_format(f == "csv"           ? dvexport::v1::FORMAT_CSV
                         : f == "json_pretty" ? dvexport::v1::FORMAT_JSON_PRETTY
                                              : dvexport::v1::FORMAT_JSON);
    } else if (flag == "--gzip") {
      request.set_compression(dvexport::v1::COMPRESSION_GZIP);
      request.set_compression_level(std::atoi(v));
    } else if (flag == "--zstd") {
      request.set_compression(dvexport::v1::COMPRESSION_ZSTD);
      request.set_compression_level(std::atoi(v));
    } else if (flag == "--data-set") {
      query->add_data_set(v);
    } else if (flag == "--org-unit") {
      query->add_org_unit(v);
    } else if (flag == "--start-date") {
      query->set_start_date(v);
    } else if (flag == "--end-date") {
      query->set_end_date(v);
    } else if (flag == "--token-file") {
      token_file = v;
    } else {
      return Usage();
    }
  }
  if (server.empty()) return Usage();
  absl::StatusOr<std::string> token = std::string();
  if (!token_file.empty()) {
    token = dvexport::client::ReadTokenFile(token_file);
  } else if (const char* variable = std::getenv("DVEXPORT_TOKEN"); variable != nullptr) {
    token = dvexport::client::TokenFromVariable("DVEXPORT_TOKEN", variable);
  }
  if (!token.ok()) {
    std::fprintf(stderr, "ttfb: %s\n", std::string(token.status().message()).c_str());
    return 2;
  }

  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(-1);
  auto channel = grpc::CreateCustomChannel(server, grpc::InsecureChannelCredentials(), args);
  auto stub = dvexport::v1::DataValueExport::NewStub(channel);
  grpc::ClientContext context;
  if (!token->empty()) {
    const absl::Status applied = dvexport::client::ApplyCallCredentials(
        dvexport::client::CallCredentialsSpec::Token(*token), &context);
    if (!applied.ok()) {
      std::fprintf(stderr, "ttfb: %s\n", std::string(applied.message()).c_str());
      return 2;
    }
  }
  const Clock::time_point start = Clock::now();
  Clock::time_point first = start;
  bool got_first = false;
  long long bytes = 0, values = 0;
  grpc::Status status;
  if (stream) {
    // A counting consumer that parses every value, as a sibling service would, into an arena
    // reset after each batch: after the first batches, parsing allocates nothing.
    auto reader = stub->StreamDataValues(&context, request.query());
    std::vector<char> first_block(4 << 20);
    google::protobuf::ArenaOptions arena_options;
    arena_options.initial_block = first_block.data();
    arena_options.initial_block_size = first_block.size();
    google::protobuf::Arena arena(arena_options);
    long long counted = 0;
    while (true) {
      auto* batch = google::protobuf::Arena::CreateMessage<dvexport::v1::DataValueBatch>(&arena);
      if (!reader->Read(batch)) break;
      if (!got_first && batch->data_values_size() > 0) {
        first = Clock::now();
        got_first = true;
      }
      counted += batch->data_values_size();
      values = batch->values_so_far();
      arena.Reset();
    }
    status = reader->Finish();
    if (status.ok() && counted != values) {
      std::fprintf(stderr, "ttfb: counted %lld values, the stream says %lld\n", counted, values);
      return 1;
    }
  } else {
    auto reader = stub->ExportFile(&context, request);
    dvexport::v1::FileChunk chunk;
    while (reader->Read(&chunk)) {
      if (!got_first && !chunk.data().empty()) {
        first = Clock::now();
        got_first = true;
      }
      bytes += static_cast<long long>(chunk.data().size());
      values = chunk.values_so_far();
    }
    status = reader->Finish();
  }
  const Clock::time_point end = Clock::now();
  if (!status.ok()) {
    std::fprintf(stderr, "ttfb: %s: %s\n", stream ? "StreamDataValues" : "ExportFile",
                 status.error_message().c_str());
    return status.error_code() == grpc::StatusCode::UNIMPLEMENTED ? 3 : 1;
  }
  std::printf("first_byte_ms=%.1f total_ms=%.1f bytes=%lld values=%lld\n",
              got_first ? Ms(start, first) : -1.0, Ms(start, end), bytes, values);
  return 0;
}
