#!/usr/bin/env bash
# Runs once, when the official postgres image initializes an empty data
# directory: creates dvexport's SELECT-only login role (see docs/DEPLOYMENT.md).
# The role also gets REPLICATION, so that dvexport may keep change streams (a logical
# replication slot per consumer; docs/DEPLOYMENT.md, "Change streams"). The publication those
# read is made by the loader (deploy/demo/load.sh), since datavalue does not exist yet here.
set -euo pipefail
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
  -v reader_password="${DVEXPORT_READER_PASSWORD:?}" <<'SQL'
CREATE ROLE dvexport_reader LOGIN REPLICATION PASSWORD :'reader_password';
ALTER ROLE dvexport_reader SET default_transaction_read_only = on;
GRANT CONNECT ON DATABASE dhis2 TO dvexport_reader;
GRANT USAGE ON SCHEMA public TO dvexport_reader;
GRANT SELECT ON ALL TABLES IN SCHEMA public TO dvexport_reader;
ALTER DEFAULT PRIVILEGES FOR ROLE postgres IN SCHEMA public GRANT SELECT ON TABLES TO dvexport_reader;
SQL
