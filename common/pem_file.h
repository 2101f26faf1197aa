#ifndef DVEXPORT_COMMON_PEM_FILE_H_
#define DVEXPORT_COMMON_PEM_FILE_H_

#include <string>

#include "absl/status/statusor.h"

namespace dvexport::common {

// The contents of the PEM file (certificates or a private key) at "path", for gRPC's TLS
// credentials, which take PEM text. InvalidArgument "cannot read <path>" when the file cannot
// be read or is empty.
absl::StatusOr<std::string> ReadPemFile(const std::string& path);

}  // namespace dvexport::common

#endif  // DVEXPORT_COMMON_PEM_FILE_H_
