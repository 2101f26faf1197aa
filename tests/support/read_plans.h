#ifndef DVEXPORT_TESTS_SUPPORT_READ_PLANS_H_
#define DVEXPORT_TESTS_SUPPORT_READ_PLANS_H_

#include "service/db/read_plan.h"

namespace dvexport::testing {

// Slices as small as the small demo database allows, three readers.
inline db::ReadPlanOptions SlicedPlan() {
  db::ReadPlanOptions plan;
  plan.max_streams = 3;
  plan.min_rows = 0;
  plan.slices_per_stream = 4;
  plan.min_slice_blocks = 1;
  return plan;
}

// Every export read by one COPY.
inline db::ReadPlanOptions OneCopy() {
  db::ReadPlanOptions plan;
  plan.max_streams = 1;
  return plan;
}

}  // namespace dvexport::testing

#endif  // DVEXPORT_TESTS_SUPPORT_READ_PLANS_H_
