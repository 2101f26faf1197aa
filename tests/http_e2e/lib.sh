# shellcheck shell=bash
# What the HTTP end-to-end scripts (tests/http_e2e) share, on top of tests/e2e/lib.sh ($work,
# fail, DVEXPORT_TOKEN: the small demo database's superuser token). Sourced after
# "set -euo pipefail"; adds:
#   start_http_server NAME SERVER_BINARY [FLAG...]
#                    starts dvexport-server with its gRPC door and its HTTP door
#                    (--http_listen 127.0.0.1:0) on free ports against $DVEXPORT_TEST_PG, with
#                    the extra flags; its files in $work/NAME/ (server.log, port, http_port);
#                    waits (up to 10 s) for both port files and sets $server (127.0.0.1:PORT,
#                    gRPC), $http (127.0.0.1:PORT), $http_port and $server_pid. Every server
#                    started is stopped at exit.
#   spawn COMMAND... starts COMMAND in the background and stops it at exit ($! as usual)
#   free_port        prints a TCP port of 127.0.0.1 that was free a moment ago
#   cli_export FILE ARGS...
#                    the gRPC CLI's ExportFile of ARGS (filters and output flags) from $server
#                    to FILE; fails the test if the CLI fails
#   admin_token, admin_password
#                    the demo superuser's token and password (docs/DEMO.md)
# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/../e2e/lib.sh"

# shellcheck disable=SC2034  # for the scripts that source this
admin_token=$DVEXPORT_TOKEN
# shellcheck disable=SC2034
admin_password=district

background_pids=()
http_e2e_cleanup() {
  local pid
  for pid in "${background_pids[@]}"; do
    kill "$pid" 2>/dev/null || true
  done
  for pid in "${background_pids[@]}"; do
    wait "$pid" 2>/dev/null || true
  done
  cleanup
}
trap http_e2e_cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

spawn() {
  "$@" &
  background_pids+=("$!")
}

free_port() {
  python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()'
}

start_http_server() {
  local name=$1 binary=$2
  shift 2
  mkdir -p "$work/$name"
  "$binary" --listen 127.0.0.1:0 --pg "$DVEXPORT_TEST_PG" --port_file "$work/$name/port" \
    --http_listen 127.0.0.1:0 --http_port_file "$work/$name/http_port" "$@" \
    2>"$work/$name/server.log" &
  server_pid=$!
  background_pids+=("$server_pid")
  for _ in $(seq 1 100); do
    [[ -s "$work/$name/port" && -s "$work/$name/http_port" ]] && break
    kill -0 "$server_pid" 2>/dev/null || break
    sleep 0.1
  done
  if [[ ! -s "$work/$name/port" || ! -s "$work/$name/http_port" ]]; then
    cat "$work/$name/server.log" >&2
    fail "server $name did not start"
  fi
  server="127.0.0.1:$(cat "$work/$name/port")"
  http_port=$(cat "$work/$name/http_port")
  if [[ "$http_port" == 0 ]]; then
    cat "$work/$name/server.log" >&2
    fail "server $name wrote HTTP port 0: its HTTP door does not listen"
  fi
  # shellcheck disable=SC2034  # for the scripts that source this
  http="127.0.0.1:$http_port"
}

cli_export() {
  local file=$1
  : "${cli_bin:?set cli_bin (the dvexport CLI) before cli_export}"
  shift
  "$cli_bin" export --server "$server" "$@" -o "$file" 2>"$work/cli.log" ||
    { cat "$work/cli.log" >&2; fail "CLI export to $file: $*"; }
}
