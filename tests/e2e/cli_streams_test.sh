#!/usr/bin/env bash
# dvexport streams list / drop end to end through the real binaries: slots made with admin SQL as
# dvexport names them (dvexport_<16 hex>_<owner's userinfoid>) for the demo's superuser admin;
# list shows them with their owner and the token kind, and not to district (no superuser); drop
# by --name, by a sync state file's token (--state) and by --change-token removes them from
# pg_replication_slots; a first sync's own stream is listed and dropped with its state file;
# district may not drop admin's (exit 4); an unknown name is NOT_FOUND (exit 1); flag mistakes
# exit 2.
# Usage: cli_streams_test.sh SERVER_BINARY CLI_BINARY   (DVEXPORT_TEST_PG, DVEXPORT_TEST_PG_ADMIN)
set -euo pipefail
server_bin=$1
cli_bin=$2

# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
: "${DVEXPORT_TEST_PG_ADMIN:?run through scripts/test, which starts PostgreSQL}"

# The demo's district: a DHIS2 user without the authority ALL (docs/DEMO.md).
district_token=d2p_gZGPOgx7oXSYJjAcLX7vEosfR3CTh7cVgZGPOgx7oXSY2u4HxU

admin_q() { psql "$DVEXPORT_TEST_PG_ADMIN" -XAtq -v ON_ERROR_STOP=1 -c "$1"; }

slots=()
drop_slots() {
  for slot in "${slots[@]}"; do
    admin_q "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots
             WHERE slot_name = '$slot' AND NOT active" >/dev/null 2>&1 || true
  done
}
trap 'drop_slots; cleanup' EXIT

admin_id=$(admin_q "SELECT userinfoid FROM userinfo WHERE username = 'admin'")
[[ -n "$admin_id" ]] || fail "no user admin: is the demo database loaded?"
# Slot ids of this run: 0xe2 then the pid, then the slot's number. Made in this shell (not a
# command substitution's), so that the EXIT trap knows them.
new_slot() {
  local name
  name=$(printf 'dvexport_e2%08x%06x_%s' "$$" "$2" "$admin_id")
  admin_q "SELECT pg_create_logical_replication_slot('$name', 'pgoutput')" >/dev/null
  slots+=("$name")
  printf -v "$1" '%s' "$name"
}
exists() { [[ $(admin_q "SELECT count(*) FROM pg_replication_slots WHERE slot_name = '$1'") == 1 ]]; }

# The change token of a stream of this database, as dvexport encodes it (service/dhis2/
# change_token.h: version 3, system identifier, database OID, FNV-1a of the name's low 48 bits,
# slot id, WAL position, CRC-32; base64url without padding).
stream_token() {
  local slot_hex=${1:9:16}
  python3 - "$(admin_q "SELECT (pg_control_system()).system_identifier")" \
    "$(admin_q "SELECT oid FROM pg_database WHERE datname = current_database()")" \
    "$(admin_q "SELECT current_database()")" "$slot_hex" <<'PY'
import base64, struct, sys, zlib
system_identifier, oid, name, slot_hex = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
h = 0xcbf29ce484222325
for byte in name.encode():
    h = ((h ^ byte) * 0x100000001b3) & 0xffffffffffffffff
b = bytes([3]) + struct.pack("<QI", system_identifier, oid) + (h & 0xffffffffffff).to_bytes(6, "little")
b += struct.pack("<QQ", int(slot_hex, 16), 1)
b += struct.pack("<I", zlib.crc32(b))
print(base64.urlsafe_b64encode(b).decode().rstrip("="))
PY
}

start_server "$server_bin" --change_stream_poll_s 1

new_slot by_name 1
new_slot by_state 2
new_slot by_token 3

# list: one line per stream, admin's among them, then the token kind.
"$cli_bin" streams list --server "$server" >"$work/list" 2>"$work/list.err" \
  || { cat "$work/list.err" >&2; fail "streams list failed"; }
for slot in "$by_name" "$by_state" "$by_token"; do
  grep -Eq "^$slot admin reserved [0-9]+\.[0-9] -?[0-9]+ no$" "$work/list" \
    || fail "streams list does not show $slot as admin's: $(cat "$work/list")"
done
[[ $(tail -n 1 "$work/list") == "change tokens: stream" ]] \
  || fail "the last line is not the token kind: $(tail -n 1 "$work/list")"

# district is no superuser: admin's streams are not listed, nor droppable (exit 4).
DVEXPORT_TOKEN=$district_token "$cli_bin" streams list --server "$server" >"$work/list2" \
  || fail "streams list as district failed"
if grep -q "$by_name" "$work/list2"; then fail "district sees admin's stream"; fi
status=0
DVEXPORT_TOKEN=$district_token "$cli_bin" streams drop --server "$server" --name "$by_name" \
  2>"$work/denied.err" || status=$?
[[ $status == 4 ]] || fail "district's drop exited $status, not 4: $(cat "$work/denied.err")"
grep -q "PERMISSION_DENIED" "$work/denied.err" || fail "not PERMISSION_DENIED: $(cat "$work/denied.err")"
grep -q "only the DHIS2 user that started a change stream, or a superuser" "$work/denied.err" \
  || fail "no hint: $(cat "$work/denied.err")"
exists "$by_name" || fail "district dropped admin's stream"

# drop --name
"$cli_bin" streams drop --server "$server" --name "$by_name" >"$work/drop1" 2>"$work/drop1.err" \
  || { cat "$work/drop1.err" >&2; fail "streams drop --name failed"; }
[[ $(cat "$work/drop1") == "dropped $by_name" ]] || fail "drop printed '$(cat "$work/drop1")'"
if exists "$by_name"; then fail "$by_name is still in pg_replication_slots"; fi

# drop --state: a sync state file holding the stream's token.
stream_token "$by_state" >"$work/state"
[[ $(cat "$work/state") =~ ^[A-Za-z0-9_-]{52}$ ]] || fail "no token: $(cat "$work/state")"
"$cli_bin" streams drop --server "$server" --state "$work/state" >"$work/drop2" \
  2>"$work/drop2.err" || { cat "$work/drop2.err" >&2; fail "streams drop --state failed"; }
[[ $(cat "$work/drop2") == "dropped $by_state" ]] || fail "drop printed '$(cat "$work/drop2")'"
grep -q "now holds a token of a dropped stream: remove it" "$work/drop2.err" \
  || fail "no advice on the state file: $(cat "$work/drop2.err")"
if exists "$by_state"; then fail "$by_state is still in pg_replication_slots"; fi

# drop --change-token
"$cli_bin" streams drop --server "$server" --change-token "$(stream_token "$by_token")" \
  >"$work/drop3" 2>"$work/drop3.err" \
  || { cat "$work/drop3.err" >&2; fail "streams drop --change-token failed"; }
[[ $(cat "$work/drop3") == "dropped $by_token" ]] || fail "drop printed '$(cat "$work/drop3")'"
if exists "$by_token"; then fail "$by_token is still in pg_replication_slots"; fi

# The real thing: a first sync starts a change stream (where the database can keep one, as the
# test database can), streams list shows it, and streams drop --state ends it.
root=$(admin_q "SELECT uid FROM organisationunit WHERE parentid IS NULL ORDER BY uid LIMIT 1")
data_set=$(admin_q "SELECT uid FROM dataset ORDER BY uid LIMIT 1")
"$cli_bin" sync --server "$server" --state "$work/sync.state" --data-set "$data_set" \
  --org-unit "$root" --children --start-date 2000-01-01 --end-date 2100-12-31 \
  -o "$work/sync.json" 2>"$work/sync.err" || { cat "$work/sync.err" >&2; fail "sync failed"; }
"$cli_bin" streams list --server "$server" >"$work/list3" || fail "streams list failed"
synced=$(grep -o "^dvexport_[0-9a-f]\{16\}_$admin_id " "$work/list3" | tr -d ' ' \
  | grep -v -e "$by_name" -e "$by_state" -e "$by_token" || true)
# A stream token is of version 3: base64url "Aw" to "A_".
[[ $(cat "$work/sync.state") =~ ^A[w-z0-9_-] ]] \
  || fail "the first sync started no change stream: $(cat "$work/sync.err")"
[[ $(wc -w <<<"$synced") -ge 1 ]] || fail "the sync's stream is not listed: $(cat "$work/list3")"
"$cli_bin" streams drop --server "$server" --state "$work/sync.state" >"$work/drop4" \
  2>"$work/drop4.err" || { cat "$work/drop4.err" >&2; fail "dropping the sync's stream failed"; }
dropped=$(sed -n 's/^dropped //p' "$work/drop4")
slots+=("$dropped")
grep -qx "$dropped" <<<"$synced" || fail "dropped '$dropped', not one of the listed: $synced"
if exists "$dropped"; then fail "the sync's stream $dropped is still there"; fi

# Gone: NOT_FOUND, exit 1.
status=0
"$cli_bin" streams drop --server "$server" --name "$by_name" 2>"$work/gone.err" || status=$?
[[ $status == 1 ]] || fail "dropping a dropped stream exited $status, not 1"
grep -q "NOT_FOUND" "$work/gone.err" || fail "not NOT_FOUND: $(cat "$work/gone.err")"

# A state file that does not exist: exit 1, no call needed.
status=0
"$cli_bin" streams drop --server "$server" --state "$work/no-such-state" 2>"$work/nostate.err" \
  || status=$?
[[ $status == 1 ]] || fail "a missing state file exited $status"
grep -q "holds no change token" "$work/nostate.err" || fail "$(cat "$work/nostate.err")"

# Flag mistakes: exit 2.
expect_usage() {
  local message=$1
  shift
  local status=0
  "$cli_bin" "$@" >/dev/null 2>"$work/usage.err" || status=$?
  [[ $status == 2 ]] || fail "$* exited $status, not 2"
  grep -qF -- "$message" "$work/usage.err" || fail "$*: no '$message' in $(cat "$work/usage.err")"
}
expect_usage "give one of --state FILE, --change-token TOKEN and --name SLOT" \
  streams drop --server "$server"
expect_usage "give only one of --state FILE, --change-token TOKEN and --name SLOT" \
  streams drop --server "$server" --name a --state b
expect_usage "--token: a secret is never given on the command line" \
  streams drop --server "$server" --token x
expect_usage "streams needs an action: list or drop" streams
expect_usage "unknown streams action 'show' (list or drop)" streams show --server "$server"
expect_usage "unknown flag --name for streams list" streams list --server "$server" --name x
"$cli_bin" streams --help >"$work/help" || fail "streams --help failed"
grep -q "Usage: dvexport streams list" "$work/help" || fail "no list usage"
grep -q "Usage: dvexport streams drop" "$work/help" || fail "no drop usage"
# Through a file: grep -q would close the pipe early, and pipefail would count the CLI's SIGPIPE.
"$cli_bin" --help >"$work/help-all" || fail "dvexport --help failed"
grep -q "streams list|drop" "$work/help-all" || fail "dvexport --help does not list streams"

echo "cli_streams_test: list, drop by name, state file and token, refusals"
