#!/usr/bin/env bash
# A private PostgreSQL primary and a streaming hot standby of it, for the
# read-replica tests: Debian's PostgreSQL started as scripts/lib/pg.sh starts
# one cluster (initdb in a temporary directory, free ports, runuser postgres
# when root), the standby made with pg_basebackup -R.
#
#   standby_pg.sh start ENV_FILE [OWNER_PID]
#       The primary (wal_level=logical, as pg_start sets it) with the small demo database and 6 KB
#       comments (a whole-database export is ~60 MB and stays mid-stream while
#       its client pauses; no autovacuum of datavalue: the tests decide when its
#       row versions go), then the standby (hot_standby=on, PostgreSQL's
#       defaults otherwise), once it has replayed everything. Writes KEY=VALUE
#       lines to ENV_FILE: DIR, PRIMARY_PORT, PRIMARY_READER, PRIMARY_ADMIN,
#       STANDBY_PORT, STANDBY_READER, STANDBY_ADMIN (libpq conninfos; READER is
#       dvexport_reader, SELECT only; ADMIN the superuser). With OWNER_PID, a
#       watchdog stops both once that process is gone.
#   standby_pg.sh stop DIR
#       Stops the standby and the primary and removes everything.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# shellcheck source=../../scripts/lib/pg.sh
source "$root/scripts/lib/pg.sh"

# The standby's data directory and log inside the primary's DIR.
standby_stop() {
  local dir="$1"
  if [[ -f "$dir/standby/postmaster.pid" ]]; then
    _pg_as_owner "$PG_BINDIR/pg_ctl" -D "$dir/standby" -m fast -w -t 60 stop >/dev/null 2>&1 || true
  fi
}

command="${1:-}"
case "$command" in
  start)
    env_file="$2"
    # Streaming replication needs WAL for it (pg_start's wal_level=logical, which change
    # streams need too) and a walsender; full page writes keep the base backup consistent.
    DVEXPORT_PG_OPTIONS="-c max_wal_senders=4 -c full_page_writes=on \
      -c shared_buffers=128MB" pg_start >/dev/null
    trap 'standby_stop "$DVEXPORT_PG_DIR"; pg_stop' ERR
    PSQL="$PG_BINDIR/psql" "$root/deploy/demo/load.sh" small >/dev/null
    "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 \
      -c "UPDATE datavalue SET comment = repeat(md5(sourceid::text), 190)" \
      -c "VACUUM ANALYZE datavalue" \
      -c "ALTER TABLE datavalue SET (autovacuum_enabled = false)"
    primary_port="$PGPORT"
    # initdb's pg_hba.conf trusts replication connections from 127.0.0.1.
    _pg_as_owner "$PG_BINDIR/pg_basebackup" -h 127.0.0.1 -p "$primary_port" -U postgres \
      -D "$DVEXPORT_PG_DIR/standby" -R -X stream -c fast --no-sync
    standby_port=""
    for _ in 1 2 3 4 5; do
      port="$(_pg_free_port)"
      if _pg_as_owner "$PG_BINDIR/pg_ctl" -D "$DVEXPORT_PG_DIR/standby" \
        -l "$DVEXPORT_PG_DIR/standby.log" -w -t 60 start -o "-c listen_addresses=127.0.0.1 \
          -p $port -c unix_socket_directories=$DVEXPORT_PG_DIR -c hot_standby=on \
          -c fsync=off -c shared_buffers=128MB -c max_connections=100 \
          -c logging_collector=off" >/dev/null; then
        standby_port="$port"
        break
      fi
    done
    if [[ -z "$standby_port" ]]; then
      cat "$DVEXPORT_PG_DIR/standby.log" >&2 || true
      echo "standby_pg.sh: the standby did not start" >&2
      false
    fi
    # Replayed up to the primary's current WAL position: the standby holds what was loaded.
    target="$("$PG_BINDIR/psql" -X -At -c "SELECT pg_current_wal_lsn()")"
    caught_up=""
    for _ in $(seq 600); do
      caught_up="$("$PG_BINDIR/psql" -X -At -p "$standby_port" -c \
        "SELECT pg_is_in_recovery() AND pg_last_wal_replay_lsn() >= '$target'::pg_lsn")"
      [[ "$caught_up" == t ]] && break
      sleep 0.1
    done
    if [[ "$caught_up" != t ]]; then
      echo "standby_pg.sh: the standby did not replay up to $target within 60 s" >&2
      false
    fi
    trap - ERR
    {
      echo "DIR=$DVEXPORT_PG_DIR"
      echo "PRIMARY_PORT=$primary_port"
      echo "PRIMARY_READER=$DVEXPORT_PG"
      echo "PRIMARY_ADMIN=$DVEXPORT_PG_ADMIN"
      echo "STANDBY_PORT=$standby_port"
      echo "STANDBY_READER=host=127.0.0.1 port=$standby_port dbname=dhis2 user=$DVEXPORT_PG_READER"
      echo "STANDBY_ADMIN=host=127.0.0.1 port=$standby_port dbname=dhis2 user=postgres"
    } >"$env_file"
    if [[ -n "${3:-}" ]]; then
      nohup bash -c "while kill -0 $3 2>/dev/null; do sleep 1; done; '$0' stop '$DVEXPORT_PG_DIR'" \
        </dev/null >/dev/null 2>&1 &
    fi
    ;;
  stop)
    standby_stop "$2"
    DVEXPORT_PG_DIR="$2" pg_stop
    ;;
  *)
    echo "usage: $0 start ENV_FILE [OWNER_PID] | stop DIR" >&2
    exit 2
    ;;
esac
