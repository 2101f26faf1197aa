#!/usr/bin/env bash
# Debian's PgBouncer in transaction pooling mode in front of a PostgreSQL, for
# the PgBouncer tests (docs/DEPLOYMENT.md shows the same pgbouncer.ini).
#
#   pgbouncer.sh start ENV_FILE CONNINFO [OWNER_PID]
#       Finds the database CONNINFO names (psql asks it for its address, port
#       and name), writes pgbouncer.ini and userlist.txt (auth_type trust, as
#       the test database) into a temporary directory and starts pgbouncer on
#       127.0.0.1:<free port> (as the postgres user when root: pgbouncer
#       refuses to run as root). Writes DIR=, PORT= and DBNAME= lines to
#       ENV_FILE, and ONE_SERVER_DBNAME=: the same database with a pool of one
#       server connection (a second transaction waits inside PgBouncer). With OWNER_PID, a watchdog stops it once that process is gone.
#       Exits 3 if pgbouncer is not installed.
#   pgbouncer.sh stop DIR
#       Stops it and removes DIR.
set -euo pipefail

as_owner() {
  if [[ "$(id -u)" == 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

pgbouncer_bin="${PGBOUNCER:-$(command -v pgbouncer || echo /usr/sbin/pgbouncer)}"
psql_bin="${PG_BINDIR:+$PG_BINDIR/}psql"

command="${1:-}"
case "$command" in
  start)
    env_file="$2"
    conninfo="$3"
    if [[ ! -x "$pgbouncer_bin" ]]; then
      echo "pgbouncer.sh: pgbouncer is not installed (Debian package pgbouncer)" >&2
      exit 3
    fi
    upstream="$("$psql_bin" -X -At -F ' ' "$conninfo" -c \
      "SELECT coalesce(host(inet_server_addr()), '127.0.0.1'), inet_server_port(), current_database()")"
    read -r up_host up_port up_db <<<"$upstream"
    dir="$(mktemp -d /tmp/dvexport-pgbouncer.XXXXXX)"
    port="$(python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()')"
    cat >"$dir/pgbouncer.ini" <<INI
[databases]
$up_db = host=$up_host port=$up_port dbname=$up_db
${up_db}_one_server = host=$up_host port=$up_port dbname=$up_db pool_size=1

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
max_client_conn = 200
default_pool_size = 20
max_db_connections = 40
query_wait_timeout = 30
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
    printf '"dvexport_reader" ""\n"postgres" ""\n' >"$dir/userlist.txt"
    if [[ "$(id -u)" == 0 ]]; then
      chown -R postgres: "$dir"
    fi
    as_owner "$pgbouncer_bin" -d "$dir/pgbouncer.ini"
    for _ in $(seq 100); do
      if "$psql_bin" -X -At "host=127.0.0.1 port=$port dbname=$up_db user=dvexport_reader" \
        -c "SELECT 1" >/dev/null 2>&1; then
        break
      fi
      sleep 0.1
    done
    {
      echo "DIR=$dir"
      echo "PORT=$port"
      echo "DBNAME=$up_db"
      echo "ONE_SERVER_DBNAME=${up_db}_one_server"
    } >"$env_file"
    if [[ -n "${4:-}" ]]; then
      nohup bash -c "while kill -0 $4 2>/dev/null; do sleep 1; done; '$0' stop '$dir'" \
        </dev/null >/dev/null 2>&1 &
    fi
    ;;
  stop)
    dir="$2"
    if [[ -f "$dir/pgbouncer.pid" ]]; then
      pid="$(cat "$dir/pgbouncer.pid")"
      kill "$pid" 2>/dev/null || true
      for _ in $(seq 50); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
    fi
    rm -rf "$dir"
    ;;
  *)
    echo "usage: $0 start ENV_FILE CONNINFO [OWNER_PID] | stop DIR" >&2
    exit 2
    ;;
esac
