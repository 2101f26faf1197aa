#!/usr/bin/env bash
# Load through the real binaries: dvexport-server on a free port and
# dvexport-load driving it with deploy/ghz/export-file-small.json's request,
# 200 exports at concurrency 20 over 4 connections. Every call must succeed
# (the server admits 20 exports at once) and the server must log each one.
# Usage: small_exports_load_test.sh SERVER LOAD GHZ_CONFIG   (DVEXPORT_TEST_PG set)
set -euo pipefail
server_bin=$1
load_bin=$2
config=$3
: "${DVEXPORT_TEST_PG:?run through scripts/test, which starts PostgreSQL}"

work=$(mktemp -d)
server_pid=
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

"$server_bin" --listen 127.0.0.1:0 --pg "$DVEXPORT_TEST_PG" --port_file "$work/port" \
  --max_concurrent_exports 20 --pool_size 20 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 1 100); do [[ -s "$work/port" ]] && break; sleep 0.1; done
[[ -s "$work/port" ]] || { cat "$work/server.log" >&2; fail "server did not start"; }

status=0
timeout 120 "$load_bin" --config "$config" --server "127.0.0.1:$(cat "$work/port")" \
  --total 200 --concurrency 20 --connections 4 --timeout-s 30 >"$work/load.txt" || status=$?
cat "$work/load.txt"
((status == 0)) || fail "dvexport-load exited $status"
grep -qP '^  \[OK\]\t200 responses$' "$work/load.txt" || fail "not 200 OK responses"
grep -qP '^  Requests/sec:\t[0-9.]+$' "$work/load.txt" || fail "no requests/s"
grep -q '^  99 % in ' "$work/load.txt" || fail "no p99"

ok_lines=$(grep -c '"event":"export","rpc":"ExportFile".*"status":"OK"' "$work/server.log" || true)
((ok_lines == 200)) || fail "the server logged $ok_lines successful exports, not 200"

# A call that fails makes dvexport-load fail.
if timeout 60 "$load_bin" --server "127.0.0.1:$(cat "$work/port")" --total 3 --concurrency 1 \
  --request-json <(echo '{"query":{"dataSet":["aaaaaaaaaaa"],"orgUnit":["JhqLZoNBxt6"],"period":["202401"]}}') \
  >"$work/fail.txt"; then
  fail "dvexport-load succeeded although every call failed"
fi
grep -qP '^  \[NOT_FOUND\]\t3 responses$' "$work/fail.txt" || { cat "$work/fail.txt"; fail "NOT_FOUND count"; }
echo "small_exports_load_test: 200 of 200 exports OK"
