// libFuzzer target: request validation on requests built from arbitrary
// bytes (periods, dates, durations, id schemes, identifiers), ISO period and
// date parsing. Validation must never crash and must either fail with
// INVALID_ARGUMENT or accept; what the parsers accept must round-trip.

#include <fuzzer/FuzzedDataProvider.h>

#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <string>

#include "dvexport/v1/export.pb.h"
#include "service/dhis2/dates.h"
#include "service/dhis2/export_request_validator.h"
#include "service/dhis2/period.h"

namespace {

using dvexport::v1::ExportRequest;

void Check(bool condition) {
  if (!condition) std::abort();
}

// Mostly plausible values, so that validation gets past its first checks.
std::string Field(FuzzedDataProvider& in) {
  static const char* const kPlausible[] = {"BfMAe6Itzgt",
                                           "ImspTQPwCqd",
                                           "2024",
                                           "202401",
                                           "2024W5",
                                           "2024Q1",
                                           "2024-01-31",
                                           "2024-01-31T10:00:00Z",
                                           "1d",
                                           "10h",
                                           "UID",
                                           "CODE",
                                           "NAME",
                                           "ATTRIBUTE:BfMAe6Itzgt",
                                           "",
                                           "ID",
                                           "2025SunW53",
                                           "2024NovS1",
                                           "2024BiW27",
                                           "99999999999"};
  if (in.ConsumeBool()) return kPlausible[in.ConsumeIntegralInRange<size_t>(0, 19)];
  return in.ConsumeRandomLengthString(40);
}

void FillRepeated(FuzzedDataProvider& in, google::protobuf::RepeatedPtrField<std::string>* f) {
  int n = in.ConsumeIntegralInRange(0, 3);
  for (int i = 0; i < n; ++i) *f->Add() = Field(in);
}

ExportRequest BuildRequest(FuzzedDataProvider& in) {
  ExportRequest r;
  FillRepeated(in, r.mutable_data_set());
  FillRepeated(in, r.mutable_data_element_group());
  FillRepeated(in, r.mutable_data_element());
  FillRepeated(in, r.mutable_period());
  if (in.ConsumeBool()) r.set_start_date(Field(in));
  if (in.ConsumeBool()) r.set_end_date(Field(in));
  FillRepeated(in, r.mutable_org_unit());
  r.set_children(in.ConsumeBool());
  FillRepeated(in, r.mutable_org_unit_group());
  FillRepeated(in, r.mutable_attribute_option_combo());
  r.set_include_deleted(in.ConsumeBool());
  if (in.ConsumeBool()) r.set_last_updated(Field(in));
  if (in.ConsumeBool()) r.set_last_updated_duration(Field(in));
  if (in.ConsumeBool()) r.set_limit(in.ConsumeIntegral<int32_t>());
  if (in.ConsumeBool()) r.set_attribute_combo(Field(in));
  FillRepeated(in, r.mutable_attribute_options());
  std::string* schemes[] = {r.mutable_input_id_scheme(),
                            r.mutable_input_org_unit_id_scheme(),
                            r.mutable_input_data_element_id_scheme(),
                            r.mutable_input_data_set_id_scheme(),
                            r.mutable_input_data_element_group_id_scheme(),
                            r.mutable_id_scheme(),
                            r.mutable_data_element_id_scheme(),
                            r.mutable_org_unit_id_scheme(),
                            r.mutable_category_option_combo_id_scheme(),
                            r.mutable_attribute_option_combo_id_scheme(),
                            r.mutable_data_set_id_scheme()};
  for (std::string* scheme : schemes) {
    if (in.ConsumeBool()) *scheme = Field(in);
  }
  return r;
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);

  auto period = dvexport::dhis2::ParseIsoPeriod(bytes);
  // FormatIsoPeriod prints years as Java's "%d" (0900 -> "900") and the parser takes
  // 4-digit years only, so ids round-trip from year 1000 on.
  if (period.ok() && std::chrono::year_month_day(period->start).year() >= std::chrono::year(1000)) {
    auto again = dvexport::dhis2::ParseIsoPeriod(
        dvexport::dhis2::FormatIsoPeriod(period->type, period->start));
    Check(again.ok() && *again == *period);
  } else if (!period.ok()) {
    Check(period.status().code() == absl::StatusCode::kInvalidArgument);
  }
  // DHIS2 2.43's Period.of: any bytes give a period or InvalidArgument (its 400), never a crash.
  auto period243 = dvexport::dhis2::ParseIsoPeriod243(bytes);
  Check(period243.ok() || period243.status().code() == absl::StatusCode::kInvalidArgument);
  auto date = dvexport::dhis2::ParseDate(bytes);
  if (date.ok()) {
    auto again = dvexport::dhis2::ParseDate(dvexport::dhis2::FormatDate(*date));
    Check(again.ok() && *again == *date);
  } else {
    Check(date.status().code() == absl::StatusCode::kInvalidArgument);
  }
  dvexport::dhis2::ParseDateTimeMicros(bytes).IgnoreError();

  FuzzedDataProvider in(data, size);
  ExportRequest request = BuildRequest(in);
  auto params = dvexport::dhis2::ValidateExportRequest(request);
  Check(params.ok() || params.status().code() == absl::StatusCode::kInvalidArgument ||
        params.status().code() == absl::StatusCode::kNotFound);
  // The same request by DHIS2 2.43's rules (ValidateExportRequest243).
  auto params243 = dvexport::dhis2::ValidateExportRequest(
      request, dvexport::dhis2::RuleOrder::kFirstFailure, 43);
  Check(params243.ok() || params243.status().code() == absl::StatusCode::kInvalidArgument ||
        params243.status().code() == absl::StatusCode::kNotFound ||
        params243.status().code() == absl::StatusCode::kFailedPrecondition);
  return 0;
}
