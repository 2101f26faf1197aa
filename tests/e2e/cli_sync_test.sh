#!/usr/bin/env bash
# dvexport sync end to end through the real binaries: the first sync (no state file) writes
# what export writes and a change token; a later sync writes only what changed (nothing is
# written to the demo database, so at most what the first one did); a state file that holds no
# token fails the sync with a message naming changes_since and is left as it was, and so does one
# written by an earlier dvexport (token version 1), with a message saying to start over; sync
# refuses stdout and --limit.
# Usage: cli_sync_test.sh SERVER_BINARY CLI_BINARY   (DVEXPORT_TEST_PG set)
set -euo pipefail
server_bin=$1
cli_bin=$2

# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

start_server "$server_bin"

psql_q() { psql "$DVEXPORT_TEST_PG" -XAtq -c "$1"; }
root=$(psql_q "SELECT o.uid FROM organisationunit o WHERE o.parentid IS NULL ORDER BY o.uid LIMIT 1")
mapfile -t data_sets < <(psql_q "SELECT uid FROM dataset ORDER BY uid")
filters=(--server "$server" --org-unit "$root" --children --start-date 2000-01-01
  --end-date 2100-12-31)
for ds in "${data_sets[@]}"; do filters+=(--data-set "$ds"); done
count() { python3 -c 'import json,sys; print(len(json.load(open(sys.argv[1]))["dataValues"]))' "$1"; }

"$cli_bin" export "${filters[@]}" -o "$work/full.json" 2>"$work/export.log" \
  || { cat "$work/export.log" >&2; fail "export failed"; }
full=$(count "$work/full.json")
(( full > 0 )) || fail "the export is empty: is the demo database loaded?"

# The first sync: everything, and a token.
"$cli_bin" sync "${filters[@]}" --state "$work/state" -o "$work/delta.json" 2>"$work/sync1.log" \
  || { cat "$work/sync1.log" >&2; fail "first sync failed"; }
[[ $(count "$work/delta.json") == "$full" ]] || fail "the first sync is not the full export"
token1=$(cat "$work/state")
[[ "$token1" =~ ^[A-Za-z0-9_-]{52}$ ]] || fail "the state file holds no token: '$token1'"
grep -q "the next sync exports what changed" "$work/sync1.log" || fail "no state message"
# The test database can keep change streams (wal_level=logical, a REPLICATION role, the
# publication): the first sync started one, a token of version 3 (base64url "Aw".."A_").
[[ "${token1:0:1}" == A && "wxyz0123456789-_" == *"${token1:1:1}"* ]] \
  || fail "the first sync's token is not a change stream's: '$token1'"
grep -q "a change stream: it reads only what changed" "$work/sync1.log" \
  || fail "no change stream message: $(cat "$work/sync1.log")"
# Its slot: dvexport_<the token's slot id, bytes 19-26 little-endian, in hex>_<owner>.
slot_prefix() {
  python3 -c 'import base64,sys; b=base64.urlsafe_b64decode(sys.argv[1]); print("dvexport_%016x_" % int.from_bytes(b[19:27], "little"))' "$1"
}
drop_stream() {
  psql_q "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE left(slot_name, 26) = '$(slot_prefix "$1")'" >/dev/null
}
slots=$(psql_q "SELECT count(*) FROM pg_replication_slots WHERE left(slot_name, 26) = '$(slot_prefix "$token1")'")
[[ "$slots" == 1 ]] || fail "no slot for the first sync's stream"

# --snapshot-token: a first sync that starts no stream (a token of version 2).
"$cli_bin" sync "${filters[@]}" --snapshot-token --state "$work/snapshot-state" \
  -o "$work/snapshot.json" 2>"$work/sync-snapshot.log" \
  || { cat "$work/sync-snapshot.log" >&2; fail "the --snapshot-token sync failed"; }
snapshot_token=$(cat "$work/snapshot-state")
[[ "${snapshot_token:0:1}" == A && "ghijklmnopqrstuv" == *"${snapshot_token:1:1}"* ]] \
  || fail "--snapshot-token gave no snapshot token: '$snapshot_token'"
grep -q "a snapshot token: it reads the whole table" "$work/sync-snapshot.log" \
  || fail "no snapshot token message: $(cat "$work/sync-snapshot.log")"

# Nothing changed: a later sync holds at most what changed since (values of transactions still
# running elsewhere in the cluster may be repeated, never all of them).
"$cli_bin" sync "${filters[@]}" --state "$work/state" -o "$work/delta.csv" 2>"$work/sync2.log" \
  || { cat "$work/sync2.log" >&2; fail "second sync failed"; }
delta_lines=$(($(wc -l <"$work/delta.csv") - 1))
(( delta_lines < full )) || fail "the second sync wrote $delta_lines values of $full"
token2=$(cat "$work/state")
[[ "$token2" =~ ^[A-Za-z0-9_-]{52}$ ]] || fail "the second token is not one: '$token2'"

# A state file that holds no token: refused, and left as it was.
echo "2024-01-01" >"$work/bad-state"
if "$cli_bin" sync "${filters[@]}" --state "$work/bad-state" -o "$work/bad.json" \
  2>"$work/sync3.log"; then
  fail "a sync with a malformed token succeeded"
fi
grep -q "INVALID_ARGUMENT" "$work/sync3.log" || fail "not INVALID_ARGUMENT: $(cat "$work/sync3.log")"
grep -q "changes_since" "$work/sync3.log" || fail "the message does not name changes_since"
[[ $(cat "$work/bad-state") == "2024-01-01" ]] || fail "the bad state file was changed"
[[ ! -e "$work/bad.json" ]] || fail "a failed sync left an output file"

# A state file of an earlier dvexport: a token of version 1 (39 characters, which named no
# database), made from this cluster's own fields. Refused asking for a full export, and left as
# it was; without it, the next sync exports everything.
old_token=$(python3 - "$token2" <<'PY'
import base64, struct, sys, zlib
b = base64.urlsafe_b64decode(sys.argv[1])
system_identifier, xmin, wal_lsn = b[1:9], b[19:27], b[27:35]
v1 = bytes([1]) + system_identifier + xmin + wal_lsn
v1 += struct.pack("<I", zlib.crc32(v1))
print(base64.urlsafe_b64encode(v1).decode().rstrip("="))
PY
)
[[ "$old_token" =~ ^[A-Za-z0-9_-]{39}$ ]] || fail "no version 1 token: '$old_token'"
echo "$old_token" >"$work/old-state"
if "$cli_bin" sync "${filters[@]}" --state "$work/old-state" -o "$work/old.json" \
  2>"$work/sync4.log"; then
  fail "a sync with a version 1 token succeeded"
fi
grep -q "FAILED_PRECONDITION: changes_since: the token is of version 1" "$work/sync4.log" \
  || fail "not refused as version 1: $(cat "$work/sync4.log")"
grep -q "export everything again" "$work/sync4.log" || fail "no full export advised"
grep -q "old-state holds a token this server cannot judge; it is left as it was: remove it" \
  "$work/sync4.log" || fail "no advice to remove the state file: $(cat "$work/sync4.log")"
[[ $(cat "$work/old-state") == "$old_token" ]] || fail "the version 1 state file was changed"
[[ ! -e "$work/old.json" ]] || fail "a refused sync left an output file"
rm "$work/old-state"
"$cli_bin" sync "${filters[@]}" --state "$work/old-state" -o "$work/old.json" 2>"$work/sync5.log" \
  || { cat "$work/sync5.log" >&2; fail "the sync after removing the state file failed"; }
[[ $(count "$work/old.json") == "$full" ]] || fail "the sync starting over is not a full export"
drop_stream "$(cat "$work/old-state")"

# Usage errors (exit 2).
set +e
"$cli_bin" sync "${filters[@]}" --state "$work/state" -o - >/dev/null 2>&1
[[ $? == 2 ]] || fail "sync to stdout was not a usage error"
"$cli_bin" sync "${filters[@]}" --state "$work/state" --limit 5 -o "$work/x.json" 2>/dev/null
[[ $? == 2 ]] || fail "sync with --limit was not a usage error"
"$cli_bin" sync "${filters[@]}" -o "$work/x.json" 2>/dev/null
[[ $? == 2 ]] || fail "sync without --state was not a usage error"
# The state file as the output (once: the export, then only the token, exit 0), also through a
# hard or symbolic link: refused before any call, the state file left as it was.
ln "$work/state" "$work/state-hard"
ln -s "$work/state" "$work/state-soft"
for output in "$work/state" "$work/state-hard" "$work/state-soft"; do
  "$cli_bin" sync "${filters[@]}" --state "$work/state" --format json -o "$output" 2>"$work/same.log"
  [[ $? == 2 ]] || fail "sync with -o $output as its state was not a usage error"
  grep -q "name the same file" "$work/same.log" || fail "no same-file message: $(cat "$work/same.log")"
done
set -e
[[ $(cat "$work/state") == "$token2" ]] || fail "a refused sync changed the state file"
# No slot is left to keep WAL.
drop_stream "$token2"
echo "cli_sync: OK (full $full values, second sync $delta_lines)"
