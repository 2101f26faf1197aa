#ifndef DVEXPORT_SERVICE_DB_READ_SESSION_OPTIONS_H_
#define DVEXPORT_SERVICE_DB_READ_SESSION_OPTIONS_H_

// The settings of a ReadSession, without libpqxx: what the pipeline's options and the
// authenticator's carry, so that a header holding them need not include the database's.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <string>

namespace dvexport::db {

// The publication a stream reads unless --change_publication names another.
inline constexpr char kDefaultChangePublication[] = "dvexport";

// How one export is read with several COPYs at once (read_plan.h).
struct ReadPlanOptions {
  // Connections reading at once; 1 never splits. An ordered export led by periods or data elements
  // reads on one connection, and with 2 or more reads the next slice on a second thread while the
  // one before is written (sorted_slices.h).
  int max_streams = 2;
  // The planner's row estimate below which one COPY is read: a split costs a few milliseconds
  // (a snapshot, a transaction per extra connection, a COPY per slice).
  int64_t min_rows = 100000;
  // Slices per stream: the threads take the next unread slice, so rows bunched in a few blocks
  // (recent periods at the end of an append-mostly table) still spread over every stream.
  int slices_per_stream = 8;
  // Smallest slice, in 8 KiB blocks.
  int64_t min_slice_blocks = 256;
  // An ordered export (DHIS2 2.43's) led by periods or data elements is read in slices that
  // dvexport sorts (ordered_plan.h): the bytes a slice should hold, and the most the export's
  // slices in memory may hold together (two at once when the next is read ahead: half each); a
  // slice that outgrows its share is read again in smaller slices, a single group sorted by
  // PostgreSQL. The share is well above the target: groups vary in size.
  size_t sorted_slice_target_bytes = size_t{12} << 20;
  size_t max_sorted_slice_bytes = size_t{64} << 20;
};

struct ReadSessionOptions {
  // How long Begin waits for a pooled connection (never past the deadline).
  std::chrono::milliseconds connection_wait{10000};
  // PostgreSQL statement_timeout for the session's statements; 0: the role's
  // or database's setting.
  std::chrono::milliseconds statement_timeout{0};
  // How a large export is read with several connections at once.
  ReadPlanOptions read_plan;
  // The publication change streams read (docs/SYNC.md).
  std::string change_publication = kDefaultChangePublication;
};

}  // namespace dvexport::db

#endif  // DVEXPORT_SERVICE_DB_READ_SESSION_OPTIONS_H_
