#include "client/cli/count_command.h"

#include <cstdio>
#include <string>

#include "client/cli/connection.h"
#include "client/cli/export_command.h"
#include "client/export_client.h"

namespace dvexport::cli {

int RunCount(const CommandLine& command) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = OpenChannel(command);
  if (!channel.ok()) return PrintError(channel.status());
  client::ExportClient client(*channel);
  client::CallOptions options;
  options.timeout = command.timeout;
  options.credentials = command.credentials;
  absl::StatusOr<int64_t> count = client.CountDataValues(command.request.query(), options);
  if (!count.ok()) return PrintError(count.status());
  std::printf("%lld\n", static_cast<long long>(*count));
  return kExitOk;
}

int RunHealth(const CommandLine& command) {
  absl::StatusOr<std::shared_ptr<grpc::Channel>> channel = OpenChannel(command);
  if (!channel.ok()) return PrintError(channel.status());
  client::ExportClient client(*channel);
  client::CallOptions options;
  options.timeout = command.timeout;
  absl::StatusOr<client::ServingStatus> status = client.Health(command.health_service, options);
  if (!status.ok()) return PrintError(status.status());
  std::printf("%s\n", grpc::health::v1::HealthCheckResponse::ServingStatus_Name(*status).c_str());
  return *status == grpc::health::v1::HealthCheckResponse::SERVING ? kExitOk : kExitExportFailed;
}

}  // namespace dvexport::cli
