#!/usr/bin/env bash
# A private PostgreSQL for the reliability tests, which lock tables, kill
# backends and stop and restart the server: they must not share the one
# scripts/test starts.
#
#   private_pg.sh start ENV_FILE [OWNER_PID]
#                                  initdb + start + small demo data with 6 KB comments
#                                  (exports of ~60 MB that stay mid-stream while a
#                                  client pauses); writes KEY=VALUE lines to ENV_FILE.
#                                  With OWNER_PID, a watchdog stops the instance once
#                                  that process is gone (a test aborted by a sanitizer
#                                  never runs its teardown). Database dhis2_243 holds the
#                                  small demo as DHIS2 2.43 (no long comments).
#   private_pg.sh down DIR         fast shutdown (clients are disconnected)
#   private_pg.sh up DIR PORT      start again on the same port
#   private_pg.sh restart DIR      fast shutdown, then start again
#   private_pg.sh stop DIR         stop and remove everything
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
# shellcheck source=../../scripts/lib/pg.sh
source "$root/scripts/lib/pg.sh"

command="${1:-}"
case "$command" in
  start)
    env_file="$2"
    pg_start >/dev/null
    PSQL="$PG_BINDIR/psql" "$root/deploy/demo/load.sh" small >/dev/null
    "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 \
      -c "UPDATE datavalue SET comment = repeat(md5(sourceid::text), 190)" \
      -c "VACUUM ANALYZE datavalue"
    # The small demo as DHIS2 2.43 (version_wait_test.cc), as scripts/test loads it.
    "$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -d postgres -c "CREATE DATABASE dhis2_243"
    PGDATABASE=dhis2_243 PSQL="$PG_BINDIR/psql" "$root/deploy/demo/load.sh" small 2.43 >/dev/null
    {
      echo "DIR=$DVEXPORT_PG_DIR"
      echo "PORT=$PGPORT"
      echo "READER=$DVEXPORT_PG"
      echo "READER_243=${DVEXPORT_PG/dbname=dhis2 /dbname=dhis2_243 }"
      echo "ADMIN=$DVEXPORT_PG_ADMIN"
    } >"$env_file"
    if [[ -n "${3:-}" ]]; then
      nohup bash -c "while kill -0 $3 2>/dev/null; do sleep 1; done; '$0' stop '$DVEXPORT_PG_DIR'" \
        </dev/null >/dev/null 2>&1 &
    fi
    ;;
  down)
    _pg_as_owner "$PG_BINDIR/pg_ctl" -D "$2/data" -m fast -w -t 60 stop >/dev/null
    ;;
  up)
    _pg_as_owner "$PG_BINDIR/pg_ctl" -D "$2/data" -l "$2/server.log" -w -t 60 start \
      -o "-c listen_addresses=127.0.0.1 -p $3 -c unix_socket_directories=$2 -c fsync=off \
          -c max_connections=100 -c logging_collector=off -c wal_level=logical \
          -c max_wal_senders=10 -c max_replication_slots=20" >/dev/null
    ;;
  restart)
    _pg_as_owner "$PG_BINDIR/pg_ctl" -D "$2/data" -m fast -w -t 60 restart >/dev/null
    ;;
  stop)
    DVEXPORT_PG_DIR="$2" pg_stop
    ;;
  *)
    echo "usage: $0 start ENV_FILE | down DIR | up DIR PORT | restart DIR | stop DIR" >&2
    exit 2
    ;;
esac
