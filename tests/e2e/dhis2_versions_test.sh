#!/usr/bin/env bash
# The real dvexport-server and CLI on the demo in other DHIS2 versions' schemas (scripts/test
# loads them: DVEXPORT_TEST_PG_239, _240, _243, _244): the start-up log names the version found
# and whether it is served; on a refused database (2.39, 2.44) health is NOT_SERVING and a call
# fails with FAILED_PRECONDITION naming the version; --serve_newer_dhis2 serves 2.44 as 2.43.
# Usage: dhis2_versions_test.sh SERVER CLI   (DVEXPORT_TEST_PG* set)
set -euo pipefail
server_bin=$1
cli_bin=$2

# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
for version in 239 240 243 244; do
  var="DVEXPORT_TEST_PG_$version"
  [[ -n "${!var:-}" ]] || fail "$var is not set (run through scripts/test)"
done

filters=(--data-set QfF9ZANatcj --org-unit ImspTQPwCqd --children
  --start-date 2023-01-01 --end-date 2024-12-31)

stop_server() {
  kill "$server_pid"
  wait "$server_pid" || fail "the server did not exit 0 on SIGTERM"
  server_pid=
  # The next start_server waits for a port file of its own.
  rm -f "$work/port"
}

# The log line of the server's DHIS2 decision, waiting (up to 10 s) for its first connection.
decision() {
  for _ in $(seq 1 100); do
    grep -q '"event":"dhis2_version' "$work/server.log" && break
    sleep 0.1
  done
  grep '"event":"dhis2_version' "$work/server.log" | head -n 1
}

# Served: 2.40's token (docs/DEMO.md) on 2.40; the count answers, health is SERVING.
start_server "$server_bin" --pg "$DVEXPORT_TEST_PG_240"
line=$(decision)
[[ "$line" == *'"event":"dhis2_version","found":"2.40","served":"2.40","source":"flyway","evidence":"flyway_schema_history 2.40.33"'* ]] ||
  { cat "$work/server.log" >&2; fail "2.40's start-up line: $line"; }
[[ "$("$cli_bin" health --server "$server")" == SERVING ]] || fail "2.40 is not SERVING"
DVEXPORT_TOKEN=d2pat_EMi4vUP6lQIv4P9Dib3LY1l1BU5tWXpp1141566371 \
  "$cli_bin" count --server "$server" "${filters[@]}" >"$work/count-240" ||
  fail "count on 2.40 failed"
stop_server

start_server "$server_bin" --pg "$DVEXPORT_TEST_PG_243"
[[ "$(decision)" == *'"found":"2.43","served":"2.43"'* ]] || fail "2.43's start-up line: $(decision)"
"$cli_bin" count --server "$server" "${filters[@]}" >"$work/count-243" || fail "count on 2.43 failed"
stop_server
[[ "$(cat "$work/count-240")" =~ ^[0-9]+$ ]] || fail "2.40's count: $(cat "$work/count-240")"

# Refused: the start-up line says why, health is NOT_SERVING, and a call is FAILED_PRECONDITION.
for version in 2.39 2.44; do
  var="DVEXPORT_TEST_PG_${version/./}"
  start_server "$server_bin" --pg "${!var}"
  line=$(decision)
  [[ "$line" == *'"event":"dhis2_version_refused"'*"\"found\":\"$version\""*'dvexport serves DHIS2 2.40 to 2.43'* ]] ||
    { cat "$work/server.log" >&2; fail "$version's start-up line: $line"; }
  health=$("$cli_bin" health --server "$server" || true)
  [[ "$health" == NOT_SERVING ]] || fail "$version's health: $health"
  status=0
  "$cli_bin" count --server "$server" "${filters[@]}" >"$work/out" 2>"$work/err" || status=$?
  [[ $status -ne 0 ]] || fail "a count on $version succeeded"
  grep -q "FAILED_PRECONDITION.*the database is DHIS2 $version" "$work/err" ||
    { cat "$work/err" >&2; fail "$version's call did not say why"; }
  stop_server
done

start_server "$server_bin" --pg "$DVEXPORT_TEST_PG_244" --serve_newer_dhis2
[[ "$(decision)" == *'"found":"2.44","served":"2.43"'*'"warning":'* ]] ||
  fail "2.44 with --serve_newer_dhis2: $(decision)"
[[ "$("$cli_bin" health --server "$server")" == SERVING ]] || fail "2.44 served is not SERVING"
"$cli_bin" count --server "$server" "${filters[@]}" >/dev/null || fail "count on 2.44 served failed"
stop_server

echo "dhis2_versions_test: 2.40 and 2.43 served as themselves, 2.39 and 2.44 refused, 2.44 served when asked"
