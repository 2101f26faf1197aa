#include "tests/reliability/standby_pair.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <map>
#include <pqxx/connection>
#include <pqxx/nontransaction>
#include <thread>

#include "absl/strings/str_cat.h"

namespace dvexport::reliability {
namespace {

struct Pair {
  std::string dir;
  std::string primary_reader;
  std::string primary_admin;
  std::string standby_reader;
  std::string standby_admin;
};

Pair& pair() {
  static Pair* p = new Pair();
  return *p;
}

bool RunScript(const std::string& args) {
  const std::string command =
      absl::StrCat(DVEXPORT_SOURCE_DIR, "/tests/reliability/standby_pg.sh ", args);
  const int rc = std::system(command.c_str());
  if (rc != 0) std::fprintf(stderr, "standby: '%s' failed (%d)\n", command.c_str(), rc);
  return rc == 0;
}

}  // namespace

bool StandbyPair::Start() {
  char env_file[] = "/tmp/dvexport-standby-env.XXXXXX";
  const int fd = mkstemp(env_file);
  if (fd < 0) return false;
  close(fd);
  const bool ok = RunScript(absl::StrCat("start ", env_file, " ", getpid()));
  std::map<std::string, std::string> values;
  std::ifstream in(env_file);
  for (std::string line; std::getline(in, line);) {
    const size_t eq = line.find('=');
    if (eq != std::string::npos) values[line.substr(0, eq)] = line.substr(eq + 1);
  }
  std::remove(env_file);
  if (!ok || values["DIR"].empty()) return false;
  pair().dir = values["DIR"];
  pair().primary_reader = values["PRIMARY_READER"];
  pair().primary_admin = values["PRIMARY_ADMIN"];
  pair().standby_reader = values["STANDBY_READER"];
  pair().standby_admin = values["STANDBY_ADMIN"];
  return true;
}

void StandbyPair::Stop() {
  if (!pair().dir.empty()) RunScript(absl::StrCat("stop ", pair().dir));
  pair().dir.clear();
}

const std::string& StandbyPair::primary_reader() { return pair().primary_reader; }
const std::string& StandbyPair::primary_admin() { return pair().primary_admin; }
const std::string& StandbyPair::standby_reader() { return pair().standby_reader; }
const std::string& StandbyPair::standby_admin() { return pair().standby_admin; }

void StandbyPair::WaitForReplay(std::chrono::milliseconds timeout) {
  const std::string target = QueryOn(primary_admin(), "SELECT pg_current_wal_lsn()");
  ASSERT_FALSE(target.empty());
  const std::string caught_up = absl::StrCat("SELECT pg_last_wal_replay_lsn() >= '", target,
                                             "'::pg_lsn");  // an LSN read just now
  const auto until = std::chrono::steady_clock::now() + timeout;
  while (QueryOn(standby_admin(), caught_up) != "t") {
    ASSERT_LT(std::chrono::steady_clock::now(), until)
        << "the standby did not replay up to " << target;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

void StandbyPair::SetStandbySetting(const std::string& name, const std::string& value,
                                    const std::string& shown) {
  try {
    pqxx::connection conn(standby_admin());
    pqxx::nontransaction tx(conn);
    tx.exec(absl::StrCat("ALTER SYSTEM SET ", tx.quote_name(name), " = ", tx.quote(value)));
    tx.exec("SELECT pg_reload_conf()");
  } catch (const std::exception& e) {
    FAIL() << "cannot set " << name << " on the standby: " << e.what();
  }
  // The postmaster reloads asynchronously; new backends see the new value once it has.
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (QueryOn(standby_admin(), absl::StrCat("SHOW ", name)) != shown) {
    ASSERT_LT(std::chrono::steady_clock::now(), until) << name << " is not " << shown;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

std::string QueryOn(const std::string& conninfo, const std::string& sql) {
  try {
    pqxx::connection conn(conninfo);
    pqxx::nontransaction tx(conn);
    const pqxx::result result = tx.exec(sql);
    if (!result.empty() && result.columns() > 0) return result[0][0].c_str();
  } catch (const std::exception& e) {
    ADD_FAILURE() << sql << ": " << e.what();
  }
  return "";
}

}  // namespace dvexport::reliability
