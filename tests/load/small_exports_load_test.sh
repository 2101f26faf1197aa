#!/usr/bin/env bash
# Load through the real binaries: dvexport-server on a free port and
# dvexport-load driving it with deploy/ghz/export-file-small.json's request,
# 200 exports at concurrency 20 over 4 connections, against the server's default
# flags (4 exports at once, the others wait in its queue). Every call must
# succeed, none refused, and the server must log each one.
# Usage: small_exports_load_test.sh SERVER LOAD GHZ_CONFIG   (DVEXPORT_TEST_PG set)
set -euo pipefail
server_bin=$1
load_bin=$2
config=$3

# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.sh"

start_server "$server_bin"

status=0
timeout 120 "$load_bin" --config "$config" --server "$server" \
  --total 200 --concurrency 20 --connections 4 --timeout-s 30 >"$work/load.txt" || status=$?
cat "$work/load.txt"
((status == 0)) || fail "dvexport-load exited $status"
grep -qP '^  \[OK\]\t200 responses$' "$work/load.txt" || fail "not 200 OK responses"
grep -qP '^  Requests/sec:\t[0-9.]+$' "$work/load.txt" || fail "no requests/s"
grep -q '^  99 % in ' "$work/load.txt" || fail "no p99"

ok_lines=$(grep -c '"event":"export","rpc":"ExportFile".*"status":"OK"' "$work/server.log" || true)
((ok_lines == 200)) || fail "the server logged $ok_lines successful exports, not 200"

# A call that fails makes dvexport-load fail (the config only for its identity, metadata).
if timeout 60 "$load_bin" --config "$config" --server "$server" --total 3 --concurrency 1 \
  --request-json <(echo '{"query":{"dataSet":["aaaaaaaaaaa"],"orgUnit":["JhqLZoNBxt6"],"period":["202401"]}}') \
  >"$work/fail.txt"; then
  fail "dvexport-load succeeded although every call failed"
fi
grep -qP '^  \[NOT_FOUND\]\t3 responses$' "$work/fail.txt" || { cat "$work/fail.txt"; fail "NOT_FOUND count"; }
echo "small_exports_load_test: 200 of 200 exports OK"
