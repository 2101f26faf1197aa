#ifndef DVEXPORT_SERVICE_PIPELINE_CALL_RECORD_H_
#define DVEXPORT_SERVICE_PIPELINE_CALL_RECORD_H_

#include <cstdint>
#include <string>

namespace dvexport::pipeline {

// One finished DataValueExport call, as the metrics and the log see it.
struct CallRecord {
  // The door it came through: "grpc" or "http".
  std::string transport;
  // The rpc's short name: ExportFile, StreamDataValues, CountDataValues (over HTTP: ExportFile).
  std::string rpc;
  // ExportFile's format and compression enum names; "" for the other rpcs.
  std::string format;
  std::string compression;
  // The gRPC status code name (OK, NOT_FOUND, ...).
  std::string code;
  // Data values sent (the trailer's or the last batch's count); for CountDataValues the count it
  // answered (not counted as sent in the metrics).
  int64_t values = 0;
  // Serialized bytes of the messages sent (for CountDataValues, its answer).
  int64_t bytes = 0;
  // From the call's arrival to its status.
  double seconds = 0;
  // From the call's arrival to its first message (for CountDataValues, its answer); negative if
  // none was sent.
  double first_byte_seconds = -1;
  // How the caller authenticated: "api_token", "password", "certificate", "none" (--auth none);
  // empty when it did not. The DHIS2 username, and the token's uid (never the token) for
  // api_token; empty otherwise.
  std::string auth;
  std::string user;
  std::string token_uid;
  // The caller's resolved address (ClientAddressText of the CallOrigin: the client a trusted proxy
  // named, else the socket's), as the failure limits and a token's IP list saw it.
  std::string client;
  // For a call refused an identity (Unauthenticated): the username its credential named (Basic's,
  // or the certificate's user), whether or not that user exists; never a password or a token.
  // Empty otherwise.
  std::string tried_user;
  // The timeout that ended a streaming export whose client stopped reading: "stall_timeout", or
  // "stall_timeout_contended" (others waited for its slot); "" if none did.
  std::string stall;
};

}  // namespace dvexport::pipeline

#endif  // DVEXPORT_SERVICE_PIPELINE_CALL_RECORD_H_
