#!/usr/bin/env bash
# The real dvexport-server with bad flags: it prints "dvexport-server: <why>"
# and exits 2 before it listens or connects to the database. A silent TCP
# listener stands in for PostgreSQL and counts the connections it gets; a run
# with good flags shows that it would have seen one. Needs no database.
# Usage: server_flags_test.sh SERVER_BINARY
set -euo pipefail
server_bin=$1

work=$(mktemp -d)
listener_pid=
server_pid=
cleanup() {
  local status=$?
  if [[ -n "$server_pid" ]]; then kill "$server_pid" 2>/dev/null || true; fi
  if [[ -n "$listener_pid" ]]; then kill "$listener_pid" 2>/dev/null || true; fi
  wait 2>/dev/null || true
  rm -rf "$work"
  exit "$status"
}
trap cleanup EXIT

fail() { echo "FAIL: $*" >&2; exit 1; }

# A "database" that accepts TCP connections, logs each one and never answers.
python3 -c '
import socket, sys
s = socket.socket()
s.bind(("127.0.0.1", 0))
s.listen(16)
with open(sys.argv[1] + ".tmp", "w") as f:
    f.write(str(s.getsockname()[1]))
import os
os.rename(sys.argv[1] + ".tmp", sys.argv[1])
held = []
while True:
    conn, _ = s.accept()
    held.append(conn)
    with open(sys.argv[2], "a") as f:
        f.write("accepted\n")
' "$work/db_port" "$work/accepted" &
listener_pid=$!
for _ in $(seq 1 100); do [[ -s "$work/db_port" ]] && break; sleep 0.1; done
[[ -s "$work/db_port" ]] || fail "the listener did not start"
pg="host=127.0.0.1 port=$(cat "$work/db_port") dbname=dhis2 user=dvexport connect_timeout=2"

accepted() { [[ -f "$work/accepted" ]] && wc -l <"$work/accepted" || echo 0; }

# expect_refused MESSAGE FLAG...: exit 2, exactly "dvexport-server: MESSAGE" on
# stderr, no port file, no connection to the database.
expect_refused() {
  local message=$1
  shift
  rm -f "$work/port"
  local status=0
  # A server that takes the flags would run until killed: 10 s is plenty to refuse.
  timeout 10 "$server_bin" --listen 127.0.0.1:0 --metrics_listen 127.0.0.1:0 --pg "$pg" \
    --port_file "$work/port" "$@" >"$work/stdout" 2>"$work/stderr" || status=$?
  [[ $status -eq 2 ]] || { cat "$work/stderr" >&2; fail "$* exited $status, not 2"; }
  local expected="dvexport-server: $message"
  [[ "$(cat "$work/stderr")" == "$expected" ]] ||
    fail "$*: stderr is \"$(cat "$work/stderr")\", not \"$expected\""
  [[ ! -s "$work/stdout" ]] || fail "$*: wrote to stdout"
  [[ ! -e "$work/port" ]] || fail "$*: the server listened (port file written)"
  [[ "$(accepted)" -eq 0 ]] || fail "$*: the server connected to the database"
}

expect_refused "--pool_size: 0 is not between 1 and 1000" --pool_size 0
expect_refused "--dhis2_version: \"2.39\" is not a DHIS2 version dvexport serves: 2.40, 2.41, 2.42 \
or 2.43" --dhis2_version 2.39
expect_refused "--max_concurrent_exports: -16 is not between 1 and 1000" \
  --max_concurrent_exports=-16
expect_refused "--statement_timeout_s: -1 is not between 0 and 86400 (0: the role's or \
database's setting; at most a day)" --statement_timeout_s=-1
expect_refused "--max_connection_age_s: 2592000 is not between 0 and 2147483 (0: never; gRPC \
takes the age in milliseconds as an int, so at most about 24.8 days)" --max_connection_age_s 2592000
expect_refused "--stall_timeout_s: 0 is not between 1 and 86400 (at most a day)" --stall_timeout_s 0
expect_refused "--stall_min_rate_kib_s: 0 is not between 1 and 1048576 (at most 1 GiB/s)" \
  --stall_min_rate_kib_s 0
expect_refused "--health_probe_interval_ms: 99 is not between 100 and 600000 (at least 100 ms, \
at most 10 minutes)" --health_probe_interval_ms 99
expect_refused "--handshake_timeout_ms: 0 is not between 100 and 120000 (at most gRPC's own \
default of 2 minutes)" --handshake_timeout_ms 0
expect_refused "--pool_size 2 is less than --max_concurrent_exports 4: every export (and count) \
holds one database connection, so the exports beyond 2 would wait --connection_wait_ms for one \
and then fail with RESOURCE_EXHAUSTED; raise --pool_size or lower --max_concurrent_exports" \
  --pool_size 2
expect_refused "--tls_cert \"cert.pem\" needs --tls_key: give both (TLS) or neither" \
  --tls_cert cert.pem
expect_refused "--listen: \"50051\" is not host:port (a name, an IPv4 address or an [IPv6] \
address, a colon, a port between 0 and 65535; e.g. 0.0.0.0:50051 or [::]:50051)" --listen 50051
expect_refused "--metrics_listen \"0.0.0.0:50051\" takes the port of --listen \"0.0.0.0:50051\"; \
give it a port of its own" --listen 0.0.0.0:50051 --metrics_listen 0.0.0.0:50051
expect_refused "--pg: the connection string is not a valid libpq conninfo (keyword=value pairs \
or a postgresql:// URI; quote values holding spaces as 'a b'); libpq's message is not shown \
because it may quote a password" --pg "host=db password='s3cret"
expect_refused "--change_publication: \"Dv-Export\" is not a PostgreSQL publication name: \
[a-z_][a-z0-9_]*, at most 63 characters" --change_publication Dv-Export
expect_refused "--change_stream_poll_s: -1 is not between 0 and 86400 (0: the change streams are \
not watched; at most a day)" --change_stream_poll_s=-1
expect_refused "unexpected argument \"stray\" (settings are --flags)" stray

# --help shows each flag's range.
"$server_bin" --help >"$work/help" 2>&1 || true
grep -q -- "--pool_size (database connections at most, 1 to 1000" "$work/help" ||
  { cat "$work/help" >&2; fail "--help does not list --pool_size with its range"; }

# With good flags the same command line does reach the database (so the
# checks above could fail) and listens.
"$server_bin" --listen 127.0.0.1:0 --metrics_listen 127.0.0.1:0 --pg "$pg" \
  --port_file "$work/port" 2>"$work/server.log" &
server_pid=$!
for _ in $(seq 1 100); do [[ -s "$work/port" ]] && break; sleep 0.1; done
[[ -s "$work/port" ]] || { cat "$work/server.log" >&2; fail "the server did not start"; }
[[ "$(accepted)" -ge 1 ]] || fail "the server with good flags did not connect to the database"
kill "$server_pid"
wait "$server_pid" || fail "the server did not exit 0 on SIGTERM"
server_pid=

# A port file that cannot be written ends the server (exit 1), not silently.
status=0
"$server_bin" --listen 127.0.0.1:0 --pg "$pg" --port_file "$work/no/such/dir/port" \
  2>"$work/server.log" || status=$?
[[ $status -eq 1 ]] || { cat "$work/server.log" >&2; fail "unwritable --port_file exited $status"; }
grep -q "^dvexport-server: --port_file: cannot write $work/no/such/dir/port: No such file" \
  "$work/server.log" || { cat "$work/server.log" >&2; fail "no message for --port_file"; }

echo "server_flags_test: bad flags exit 2 with their message, before any connection"
