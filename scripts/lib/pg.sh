# shellcheck shell=bash
# A private, throw-away PostgreSQL server for tests and the demo.
#
# Source this file, then:
#   pg_start                  # initdb + start on 127.0.0.1:<free port>, create db dhis2
#   trap pg_stop EXIT         # and make INT/TERM exit so that the EXIT trap runs:
#   trap 'exit 130' INT; trap 'exit 143' TERM
#
# pg_start exports:
#   PGHOST=127.0.0.1 PGPORT=<port> PGUSER=postgres PGDATABASE=dhis2
#                      (superuser; what psql and deploy/demo/load.sh use)
#   DVEXPORT_PG        "host=127.0.0.1 port=<port> dbname=dhis2 user=dvexport_reader"
#                      (LOGIN, SELECT only, default_transaction_read_only=on)
#   DVEXPORT_PG_ADMIN  "host=127.0.0.1 port=<port> dbname=dhis2 user=postgres"
#   DVEXPORT_PG_DIR    the temporary directory holding data, socket and log
#
# The server trades durability for speed (fsync=off, synchronous_commit=off,
# full_page_writes=off, wal_level=minimal): test and demo data only.
# As root, initdb and postgres run as the postgres user via runuser (they
# refuse to run as root); otherwise they run as the current user.
# DVEXPORT_PG_OPTIONS, if set, is appended to the server's options and wins over
# them (tests/reliability/standby_pg.sh: "-c wal_level=replica ...").

PG_BINDIR="${PG_BINDIR:-}"
if [[ -z "$PG_BINDIR" ]]; then
  PG_BINDIR="$(printf '%s\n' /usr/lib/postgresql/*/bin | grep -v '\*' | sort -V | tail -n 1 || true)"
  [[ -n "$PG_BINDIR" ]] || PG_BINDIR="$(dirname "$(command -v initdb 2>/dev/null || echo /usr/bin/initdb)")"
fi

DVEXPORT_PG_READER=dvexport_reader

# Runs a command as the owner of the data directory.
_pg_as_owner() {
  if [[ "$(id -u)" == 0 ]]; then
    runuser -u postgres -- "$@"
  else
    "$@"
  fi
}

# Prints a TCP port that was free a moment ago.
_pg_free_port() {
  python3 -c 'import socket
s = socket.socket()
s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])
s.close()'
}

pg_start() {
  local parent="${DVEXPORT_PG_PARENT:-/tmp}"
  DVEXPORT_PG_DIR="$(mktemp -d "$parent/dvexport-pg.XXXXXX")"
  export DVEXPORT_PG_DIR
  if [[ "$(id -u)" == 0 ]]; then
    chown postgres: "$DVEXPORT_PG_DIR"
  fi
  chmod 700 "$DVEXPORT_PG_DIR"

  _pg_as_owner "$PG_BINDIR/initdb" -D "$DVEXPORT_PG_DIR/data" -U postgres -A trust \
    -E UTF8 --locale=C.UTF-8 --no-sync >"$DVEXPORT_PG_DIR/initdb.log" 2>&1 || {
    cat "$DVEXPORT_PG_DIR/initdb.log" >&2
    echo "pg_start: initdb failed" >&2
    return 1
  }

  # The port can be taken between picking and binding: retry a few times.
  local port
  for _ in 1 2 3 4 5; do
    port="$(_pg_free_port)"
    if _pg_as_owner "$PG_BINDIR/pg_ctl" -D "$DVEXPORT_PG_DIR/data" -l "$DVEXPORT_PG_DIR/server.log" \
      -w -t 60 start -o "-c listen_addresses=127.0.0.1 -p $port \
        -c unix_socket_directories=$DVEXPORT_PG_DIR \
        -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
        -c wal_level=minimal -c max_wal_senders=0 -c max_wal_size=8GB \
        -c shared_buffers=256MB -c work_mem=64MB -c maintenance_work_mem=512MB \
        -c max_connections=100 -c logging_collector=off ${DVEXPORT_PG_OPTIONS:-}" >/dev/null; then
      break
    fi
    port=""
  done
  if [[ -z "$port" ]]; then
    cat "$DVEXPORT_PG_DIR/server.log" >&2 || true
    echo "pg_start: the server did not start" >&2
    return 1
  fi

  export PGHOST=127.0.0.1 PGPORT="$port" PGUSER=postgres PGDATABASE=dhis2
  export DVEXPORT_PG_ADMIN="host=127.0.0.1 port=$port dbname=dhis2 user=postgres"
  export DVEXPORT_PG="host=127.0.0.1 port=$port dbname=dhis2 user=$DVEXPORT_PG_READER"

  "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -d postgres <<SQL
CREATE DATABASE dhis2;
CREATE ROLE $DVEXPORT_PG_READER LOGIN;
ALTER ROLE $DVEXPORT_PG_READER SET default_transaction_read_only = on;
SQL
  # Tables do not exist yet: grant SELECT on all present and future ones.
  "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 <<SQL
REVOKE CREATE ON SCHEMA public FROM PUBLIC;
GRANT USAGE ON SCHEMA public TO $DVEXPORT_PG_READER;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO $DVEXPORT_PG_READER;
ALTER DEFAULT PRIVILEGES FOR ROLE postgres IN SCHEMA public GRANT SELECT ON TABLES TO $DVEXPORT_PG_READER;
SQL
}

# Re-grants SELECT on every table (for tables created by another role).
pg_grant_reader() {
  "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 \
    -c "GRANT SELECT ON ALL TABLES IN SCHEMA public TO $DVEXPORT_PG_READER"
}

# Stops the server and removes its directory. Safe to call more than once.
pg_stop() {
  if [[ -n "${DVEXPORT_PG_DIR:-}" && -d "$DVEXPORT_PG_DIR" ]]; then
    if [[ -f "$DVEXPORT_PG_DIR/data/postmaster.pid" ]]; then
      _pg_as_owner "$PG_BINDIR/pg_ctl" -D "$DVEXPORT_PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
    fi
    rm -rf "$DVEXPORT_PG_DIR"
  fi
  DVEXPORT_PG_DIR=""
}
