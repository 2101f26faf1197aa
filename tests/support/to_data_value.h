#ifndef DVEXPORT_TESTS_SUPPORT_TO_DATA_VALUE_H_
#define DVEXPORT_TESTS_SUPPORT_TO_DATA_VALUE_H_

#include "dvexport/v1/export.pb.h"
#include "service/encode/data_value_row.h"

namespace dvexport::encode {

// The DataValue message of "row", the reference encode::ProtobufDataValueEncoder is tested and
// benchmarked against: fills "*out" (which should be clear) with "row"; identifiers that are null
// stay absent, as do a NULL value, stored_by and comment; the micros become Timestamps.
// Ill-formed UTF-8 is replaced with U+FFFD exactly as the JSON encoder replaces it, so that
// every string is valid for protobuf.
void ToDataValue(const DataValueRow& row, dvexport::v1::DataValue* out);

}  // namespace dvexport::encode

#endif  // DVEXPORT_TESTS_SUPPORT_TO_DATA_VALUE_H_
