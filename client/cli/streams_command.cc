#include "client/cli/streams_command.h"

#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "client/cli/connection.h"
#include "client/cli/export_command.h"
#include "client/export_client.h"

namespace dvexport::cli {
namespace {

constexpr char kDropPermissionHint[] =
    "only the DHIS2 user that started a change stream, or a superuser, may drop it";

client::CallOptions CallOptionsOf(const CommandLine& command) {
  client::CallOptions options;
  options.timeout = command.timeout;
  options.credentials = command.credentials;
  return options;
}

// "-" for an empty field, so that every line has its six fields.
const char* OrDash(const std::string& text) { return text.empty() ? "-" : text.c_str(); }

}  // namespace

int RunStreamsList(const CommandLine& command) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = OpenChannel(command);
  if (!channel.ok()) return PrintError(channel.status());
  client::ExportClient client(*channel);
  absl::StatusOr<dvexport::v1::ListChangeStreamsResponse> listed =
      client.ListChangeStreams(CallOptionsOf(command));
  if (!listed.ok()) return PrintError(listed.status());
  for (const dvexport::v1::ChangeStream& stream : listed->streams()) {
    std::printf("%s %s %s %.1f %lld %s\n", stream.name().c_str(), OrDash(stream.owner_username()),
                OrDash(stream.wal_status()),
                static_cast<double>(stream.retained_wal_bytes()) / (1024 * 1024),
                static_cast<long long>(stream.idle_seconds()), stream.active() ? "yes" : "no");
  }
  if (listed->token_kind() == "stream") {
    std::printf("change tokens: stream\n");
  } else {
    std::printf("change tokens: %s; change streams unavailable: %s\n", OrDash(listed->token_kind()),
                OrDash(listed->token_kind_reason()));
  }
  return kExitOk;
}

int RunStreamsDrop(const CommandLine& command) {
  dvexport::v1::DropChangeStreamRequest request;
  if (!command.state_file.empty()) {
    absl::StatusOr<std::string> token = ReadSyncState(command.state_file);
    if (!token.ok()) return PrintError(token.status());
    if (token->empty()) {
      return PrintError(absl::FailedPreconditionError(
          absl::StrCat("--state ", command.state_file,
                       ": holds no change token (no such file, or an empty one)")));
    }
    request.set_change_token(*token);
  } else if (!command.change_token.empty()) {
    request.set_change_token(command.change_token);
  } else {
    request.set_name(command.stream_name);
  }
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = OpenChannel(command);
  if (!channel.ok()) return PrintError(channel.status());
  client::ExportClient client(*channel);
  absl::StatusOr<std::string> dropped = client.DropChangeStream(request, CallOptionsOf(command));
  if (!dropped.ok()) return PrintError(dropped.status(), kDropPermissionHint);
  std::printf("dropped %s\n", dropped->c_str());
  if (!command.state_file.empty()) {
    std::fprintf(stderr,
                 "dvexport: %s now holds a token of a dropped stream: remove it, and the next "
                 "sync exports everything again\n",
                 command.state_file.c_str());
  }
  return kExitOk;
}

}  // namespace dvexport::cli
