# shellcheck shell=bash
# What the end-to-end scripts (tests/e2e, tests/load) share. Sourced after "set -euo pipefail";
# gives:
#   $work            a temporary directory, removed at exit (with the server stopped first)
#   fail MESSAGE     prints FAIL: MESSAGE and exits 1
#   start_server SERVER_BINARY [FLAG...]
#                    starts the dvexport-server binary on 127.0.0.1 at a free port against $DVEXPORT_TEST_PG
#                    with the extra flags, its log in $work/server.log; waits (up to 10 s) for
#                    its port file and sets $server (127.0.0.1:PORT) and $server_pid.
#                    The server authenticates every call (--auth dhis2, its default); the CLI and
#                    dvexport-load carry the small demo database's superuser token
#                    (DVEXPORT_TOKEN, deploy/demo/generate.sql, docs/DEMO.md).
: "${DVEXPORT_TEST_PG:?run through scripts/test, which starts PostgreSQL}"

export DVEXPORT_TOKEN=d2p_EMi4vUP6lQIv4P9Dib3LY1l1BU5tWXppEMi4vUP6lQIv0GuVIb

work=$(mktemp -d)
server_pid=
cleanup() {
  [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null && wait "$server_pid" 2>/dev/null
  rm -rf "$work"
}
trap cleanup EXIT

fail() {
  echo "FAIL: $*" >&2
  exit 1
}

start_server() {
  local binary=$1
  shift
  "$binary" --listen 127.0.0.1:0 --pg "$DVEXPORT_TEST_PG" --port_file "$work/port" "$@" \
    2>"$work/server.log" &
  server_pid=$!
  for _ in $(seq 1 100); do [[ -s "$work/port" ]] && break; sleep 0.1; done
  [[ -s "$work/port" ]] || { cat "$work/server.log" >&2; fail "server did not start"; }
  # shellcheck disable=SC2034  # for the scripts that source this
  server="127.0.0.1:$(cat "$work/port")"
}
