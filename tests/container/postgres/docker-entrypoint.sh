#!/usr/bin/env bash
# The official postgres image's entrypoint, as far as deploy/compose.yaml uses it (Dockerfile).
set -euo pipefail

if [[ "${1:-}" == postgres ]] && [[ ! -s "$PGDATA/PG_VERSION" ]]; then
  : "${POSTGRES_PASSWORD:?POSTGRES_PASSWORD must be set}"
  export POSTGRES_USER="${POSTGRES_USER:-postgres}"
  export POSTGRES_DB="${POSTGRES_DB:-$POSTGRES_USER}"
  initdb --username="$POSTGRES_USER" --pwfile=<(printf '%s\n' "$POSTGRES_PASSWORD") \
    --auth-local=trust --auth-host=scram-sha-256 --encoding=UTF8 >/dev/null
  # As the official image: any address, with the password.
  echo "host all all all scram-sha-256" >>"$PGDATA/pg_hba.conf"
  # Init scripts run against a server on the socket only, as the official image's do.
  pg_ctl -D "$PGDATA" -w -o "-c listen_addresses=''" start >/dev/null
  if [[ "$POSTGRES_DB" != postgres ]]; then
    psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname postgres -q \
      -c "CREATE DATABASE \"$POSTGRES_DB\""
  fi
  for f in /docker-entrypoint-initdb.d/*; do
    case "$f" in
      *.sh)
        echo "docker-entrypoint.sh: running $f"
        if [[ -x "$f" ]]; then "$f"; else
          # shellcheck disable=SC1090
          . "$f"
        fi
        ;;
      *.sql)
        echo "docker-entrypoint.sh: running $f"
        psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" -q -f "$f"
        ;;
      *) ;;
    esac
  done
  pg_ctl -D "$PGDATA" -m fast -w stop >/dev/null
  echo "docker-entrypoint.sh: PostgreSQL init process complete; ready for start up."
fi
if [[ "${1:-}" == postgres ]]; then
  exec "$@" -c listen_addresses='*'
fi
exec "$@"
