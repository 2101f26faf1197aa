#ifndef DVEXPORT_TESTS_RELIABILITY_STANDBY_PAIR_H_
#define DVEXPORT_TESTS_RELIABILITY_STANDBY_PAIR_H_

#include <chrono>
#include <string>

namespace dvexport::reliability {

// A private PostgreSQL primary and a streaming hot standby of it
// (tests/reliability/standby_pg.sh): the small demo database with 6 KB comments
// on both, so that a whole-database export is ~60 MB. The standby starts with
// PostgreSQL's defaults (hot_standby_feedback off, max_standby_streaming_delay
// 30 s) and has replayed everything once Start returns. One pair per test binary.
class StandbyPair {
 public:
  // Starts both (about 15 s); false, with a message on stderr, if that fails. A watchdog
  // stops them if this process dies without Stop().
  static bool Start();
  static void Stop();

  // libpq conninfos. The readers are dvexport_reader (SELECT only), the admins the superuser.
  static const std::string& primary_reader();
  static const std::string& primary_admin();
  static const std::string& standby_reader();
  static const std::string& standby_admin();

  // Waits until the standby has replayed all the WAL the primary has written so far (call it
  // after writing on the primary); fails the calling test if that takes longer than "timeout".
  static void WaitForReplay(std::chrono::milliseconds timeout = std::chrono::seconds(30));

  // ALTER SYSTEM SET "name" = 'value' on the standby, then reloads its configuration and waits
  // until SHOW reports "shown" (a setting that can change without a restart, such as
  // max_standby_streaming_delay or hot_standby_feedback). Fails the calling test on error.
  static void SetStandbySetting(const std::string& name, const std::string& value,
                                const std::string& shown);
};

// Runs "sql" on a fresh connection to "conninfo"; the first column of the first row, or ""
// (fails the calling test on error).
std::string QueryOn(const std::string& conninfo, const std::string& sql);

}  // namespace dvexport::reliability

#endif  // DVEXPORT_TESTS_RELIABILITY_STANDBY_PAIR_H_
