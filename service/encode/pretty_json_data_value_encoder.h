#ifndef DVEXPORT_SERVICE_ENCODE_PRETTY_JSON_DATA_VALUE_ENCODER_H_
#define DVEXPORT_SERVICE_ENCODE_PRETTY_JSON_DATA_VALUE_ENCODER_H_

#include "service/encode/json_data_value_encoder.h"

namespace dvexport::encode {

// The document of JsonDataValueEncoder indented by two spaces, one member per line, with a space
// after each colon and a final line end:
//
//   {
//     "dataValues": [
//       {
//         "dataElement": "fbfJHSPpUQD",
//         ...
//         "followup": false
//       }
//     ]
//   }
//
// Parsed, it is the same document as JsonDataValueEncoder's: the same keys in the same order,
// the same nulls and strings, escaped the same way. An empty document ends "[]\n}\n".
struct PrettyJsonLayout;

using PrettyJsonDataValueEncoder = JsonDataValueEncoderWithLayout<PrettyJsonLayout>;

}  // namespace dvexport::encode

#endif  // DVEXPORT_SERVICE_ENCODE_PRETTY_JSON_DATA_VALUE_ENCODER_H_
