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
#                      (LOGIN, SELECT only, default_transaction_read_only=on, REPLICATION:
#                      it may keep change streams, docs/SYNC.md)
#   DVEXPORT_PG_ADMIN  "host=127.0.0.1 port=<port> dbname=dhis2 user=postgres"
#   DVEXPORT_PG_DIR    the temporary directory holding data, socket and log
#
# The server trades durability for speed (fsync=off, synchronous_commit=off,
# full_page_writes=off): test and demo data only. wal_level=logical, with replication slots
# and WAL senders, so that change streams (docs/SYNC.md) work on it.
# As root, initdb and postgres run as the postgres user via runuser (they
# refuse to run as root); otherwise they run as the current user.
# DVEXPORT_PG_OPTIONS, if set, is appended to the server's options and wins over
# them (tests/reliability/standby_pg.sh: "-c max_wal_senders=4 ...").
# pg_start_kept/pg_stop_kept (below): the same server on a data directory that
# outlives the run (scripts/bench's national database).

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
  _pg_initdb "$DVEXPORT_PG_DIR" || return 1
  _pg_launch "$DVEXPORT_PG_DIR" || return 1
  _pg_create_db
}

# The kept server of scripts/bench's national database, whose data outlives the run:
#   pg_start_kept DIR      start DIR/data (after an initdb and pg_start's database and reader
#                          role when DIR has no data directory yet), with pg_start's options;
#                          exports what pg_start does, DVEXPORT_PG_KEPT_DIR=DIR instead of
#                          DVEXPORT_PG_DIR (so that pg_stop leaves it alone)
#   pg_stop_kept           stop it; DIR stays
# The caller decides whether DIR's data is still good (scripts/bench compares a version file)
# and removes DIR/data to start afresh. Socket, logs and data sit in DIR.
pg_start_kept() {
  local dir=$1 fresh=0
  mkdir -p "$dir"
  if [[ ! -f "$dir/data/PG_VERSION" ]]; then
    rm -rf "$dir/data"  # what an interrupted initdb left
    _pg_initdb "$dir" || return 1
    fresh=1
  fi
  _pg_launch "$dir" || return 1
  DVEXPORT_PG_KEPT_DIR="$dir"
  export DVEXPORT_PG_KEPT_DIR
  if [[ "$fresh" == 1 ]]; then _pg_create_db; fi
}

pg_stop_kept() {
  if [[ -n "${DVEXPORT_PG_KEPT_DIR:-}" && -f "$DVEXPORT_PG_KEPT_DIR/data/postmaster.pid" ]]; then
    _pg_as_owner "$PG_BINDIR/pg_ctl" -D "$DVEXPORT_PG_KEPT_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
  fi
  DVEXPORT_PG_KEPT_DIR=""
}

# initdb of DIR/data, DIR owned by whoever runs the server.
_pg_initdb() {
  local dir=$1
  if [[ "$(id -u)" == 0 ]]; then
    chown postgres: "$dir"
  fi
  chmod 700 "$dir"

  _pg_as_owner "$PG_BINDIR/initdb" -D "$dir/data" -U postgres -A trust \
    -E UTF8 --locale=C.UTF-8 --no-sync >"$dir/initdb.log" 2>&1 || {
    cat "$dir/initdb.log" >&2
    echo "pg_start: initdb failed" >&2
    return 1
  }
}

# Starts the server of DIR/data (socket and server.log in DIR) on a free port; exports the
# libpq variables, DVEXPORT_PG and DVEXPORT_PG_ADMIN.
_pg_launch() {
  local dir=$1
  # The port can be taken between picking and binding: retry a few times.
  local port
  for _ in 1 2 3 4 5; do
    port="$(_pg_free_port)"
    if _pg_as_owner "$PG_BINDIR/pg_ctl" -D "$dir/data" -l "$dir/server.log" \
      -w -t 60 start -o "-c listen_addresses=127.0.0.1 -p $port \
        -c unix_socket_directories=$dir \
        -c fsync=off -c synchronous_commit=off -c full_page_writes=off \
        -c wal_level=logical -c max_wal_senders=10 -c max_replication_slots=20 \
        -c wal_writer_delay=10ms -c max_wal_size=8GB \
        -c shared_buffers=256MB -c work_mem=64MB -c maintenance_work_mem=512MB \
        -c max_connections=100 -c logging_collector=off ${DVEXPORT_PG_OPTIONS:-}" >/dev/null; then
      break
    fi
    port=""
  done
  if [[ -z "$port" ]]; then
    cat "$dir/server.log" >&2 || true
    echo "pg_start: the server did not start" >&2
    return 1
  fi

  export PGHOST=127.0.0.1 PGPORT="$port" PGUSER=postgres PGDATABASE=dhis2
  export DVEXPORT_PG_ADMIN="host=127.0.0.1 port=$port dbname=dhis2 user=postgres"
  export DVEXPORT_PG="host=127.0.0.1 port=$port dbname=dhis2 user=$DVEXPORT_PG_READER"
}

# Creates database dhis2 and the read-only reader role in a new cluster.
_pg_create_db() {
  "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -d postgres <<SQL
CREATE DATABASE dhis2;
CREATE ROLE $DVEXPORT_PG_READER LOGIN REPLICATION;
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
