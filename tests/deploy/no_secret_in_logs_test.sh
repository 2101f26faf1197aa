#!/usr/bin/env bash
# The database password given in --pg never reaches the server's log, its
# metrics or a client's error message: not after exports that succeed or fail,
# not when the database is unreachable, not when the conninfo is malformed
# (libpq's parse errors quote the offending text).
# Usage: no_secret_in_logs_test.sh SERVER CLI   (DVEXPORT_TEST_PG set; the test
# database trusts local connections, so the password is never checked)
set -euo pipefail
server_bin=$1
cli_bin=$2
: "${DVEXPORT_TEST_PG:?run through scripts/test, which starts PostgreSQL}"
secret=s3cretPassw0rd

work=$(mktemp -d)
server_pid=
stop_server() {
  if [[ -n "$server_pid" ]]; then
    kill "$server_pid" 2>/dev/null || true
    wait "$server_pid" 2>/dev/null || true
    server_pid=
  fi
}
trap 'stop_server; rm -rf "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# start_server LOG CONNINFO: starts dvexport-server, sets $port and $metrics_port.
start_server() {
  rm -f "$work/port"
  "$server_bin" --listen 127.0.0.1:0 --auth none --metrics_listen 127.0.0.1:0 --pg "$2" \
    --port_file "$work/port" --connection_wait_ms 2000 2>"$1" &
  server_pid=$!
  for _ in $(seq 1 100); do [[ -s "$work/port" ]] && break; sleep 0.1; done
  [[ -s "$work/port" ]] || { cat "$1" >&2; fail "server did not start"; }
  port=$(cat "$work/port")
  metrics_port=$(grep -o '"metrics_port":[0-9]*' "$1" | cut -d: -f2)
}

export_args=(export --org-unit JhqLZoNBxt6 --period 202401)

# 1. A working database: a good export, a NOT_FOUND, an invalid request.
start_server "$work/ok.log" "$DVEXPORT_TEST_PG password=$secret"
"$cli_bin" "${export_args[@]}" --server "127.0.0.1:$port" --data-set JurnHCkmDCn \
  -o "$work/values.json" 2>>"$work/client.log" || fail "the export failed"
"$cli_bin" "${export_args[@]}" --server "127.0.0.1:$port" --data-set aaaaaaaaaaa \
  -o "$work/none.json" 2>>"$work/client.log" && fail "an unknown data set should fail"
"$cli_bin" "${export_args[@]}" --server "127.0.0.1:$port" --data-set JurnHCkmDCn \
  --start-date 2024-01-01 -o "$work/bad.json" 2>>"$work/client.log" && fail "a lone start date should fail"
python3 - "$metrics_port" >"$work/metrics.txt" <<'PY'
import sys, urllib.request
print(urllib.request.urlopen(f"http://127.0.0.1:{sys.argv[1]}/metrics", timeout=10).read().decode())
PY
stop_server
grep -q '"event":"export".*"status":"OK"' "$work/ok.log" || { cat "$work/ok.log"; fail "no export logged"; }
grep -q '"status":"NOT_FOUND"' "$work/ok.log" || { cat "$work/ok.log"; fail "no NOT_FOUND logged"; }

# 2. An unreachable database: exports fail with UNAVAILABLE.
unused_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
start_server "$work/down.log" "host=127.0.0.1 port=$unused_port dbname=dhis2 user=u password=$secret"
"$cli_bin" "${export_args[@]}" --server "127.0.0.1:$port" --data-set JurnHCkmDCn \
  -o "$work/down.json" 2>>"$work/client.log" && fail "an export without a database should fail"
stop_server
grep -q '"status":"UNAVAILABLE"' "$work/down.log" || { cat "$work/down.log"; fail "no UNAVAILABLE logged"; }

# 3. Malformed conninfo whose libpq parse error would quote part of the password.
for conninfo in "$DVEXPORT_TEST_PG password=my $secret" "$DVEXPORT_TEST_PG password='$secret" \
  "postgresql://u:$secret@127.0.0.1:$unused_port/dhis2?nosuchoption=$secret"; do
  if "$server_bin" --listen 127.0.0.1:0 --pg "$conninfo" 2>>"$work/malformed.log"; then
    fail "the server started with a malformed conninfo"
  fi
done
grep -q "not a valid libpq conninfo" "$work/malformed.log" || { cat "$work/malformed.log"; fail "no explanation"; }

for file in ok.log down.log malformed.log client.log metrics.txt; do
  if grep -n -- "$secret" "$work/$file"; then
    fail "$file shows the password"
  fi
done
echo "no_secret_in_logs_test: the password appears in no log, error or metric"
