#ifndef DVEXPORT_SERVICE_SERVER_LIBRARY_LOG_H_
#define DVEXPORT_SERVICE_SERVER_LIBRARY_LOG_H_

namespace dvexport::server {

// Routes what protobuf (google::protobuf::SetLogHandler) and gRPC's core (gpr_set_log_function)
// log to stderr as one JSON line each, like the rest of the server's log:
//   {"event":"library_log","library":"grpc","severity":"ERROR","file":"...","line":123,
//    "message":"..."}
// The message is escaped (control characters, quotes, ill-formed UTF-8), so that text a client
// got into a library's message cannot start a line of its own. Call once, before the server
// starts; process-wide.
void RouteLibraryLogsToJson();

}  // namespace dvexport::server

#endif  // DVEXPORT_SERVICE_SERVER_LIBRARY_LOG_H_
