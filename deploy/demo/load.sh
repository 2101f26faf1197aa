#!/usr/bin/env bash
# Loads the demo database: deploy/demo/load.sh small|sl|sl4|national [2.39|2.40|2.41|2.42|2.43|2.44]
# (national: ~12 million values, several minutes; scripts/bench keeps one, docs/PERFORMANCE.md)
#
# Creates the DHIS2 schema subset (schema.sql) and fills it with the
# deterministic generator (generate.sql) in the database the libpq PG*
# variables name (PGHOST, PGPORT, PGUSER, PGDATABASE; scripts/lib/pg.sh sets
# them), then reshapes it into the given DHIS2 version's schema with its Flyway history
# (versions/<version>.sql; default 2.42, schema.sql's own; docs/DEMO.md). All in one
# transaction. It also (re)creates the publication "dvexport" on datavalue, which change
# streams read. A database that already holds a dvexport demo (of any version) is reloaded; one
# with any other datavalue table (a real DHIS2) is left alone.
#
# Prints: loaded size=<size> datavalues=<rows> seconds=<wall time>
# (another version than 2.42: "... seconds=<wall time> dhis2=<version>")
set -euo pipefail

size="${1:-}"
version="${2:-2.42}"
if [[ "$size" != small && "$size" != sl && "$size" != sl4 && "$size" != national ]] ||
  [[ ! "$version" =~ ^2\.(39|40|41|42|43|44)$ ]] || (($# > 2)); then
  echo "usage: $0 small|sl|sl4|national [2.39|2.40|2.41|2.42|2.43|2.44]  (DHIS2 version, default 2.42)" >&2
  exit 2
fi
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
psql_cmd=("${PSQL:-psql}" -X -q -v ON_ERROR_STOP=1)

start="$(date +%s.%N)"

marker="$("${psql_cmd[@]}" -At -c \
  "SELECT coalesce(obj_description(to_regclass('public.datavalue'), 'pg_class'), '<none>')
   WHERE to_regclass('public.datavalue') IS NOT NULL")"
if [[ -n "$marker" ]]; then
  if [[ "$marker" != "dvexport demo"* ]]; then
    echo "$0: database ${PGDATABASE:-?} already has a datavalue table that is not a dvexport demo;" \
      "refusing to touch it" >&2
    exit 1
  fi
  "${psql_cmd[@]}" -1 <<'SQL'
SET client_min_messages = warning;
DROP TABLE IF EXISTS flyway_schema_history, datavalueaudit, api_token, systemsetting, userdatavieworgunits, usermembership,
  userrolerestrictions, userroleauthorities, userrolemembers, userrole, usergroupmembers, usergroup,
  userinfo, datavalue, completedatasetregistration, dataelementgroupmembers,
  dataelementgroup, orgunitgroupmembers, orgunitgroup, datasetelement, dataset, dataelement,
  categories_categoryoptions, categorycombos_categories, category, dataelementcategory,
  categoryoptioncombos_categoryoptions, categoryoption, dataelementcategoryoption,
  categorycombos_optioncombos, categoryoptioncombo, categorycombo, organisationunit, period,
  periodtype CASCADE;
DROP SEQUENCE IF EXISTS hibernate_sequence;
DROP FUNCTION IF EXISTS dvexport_demo_generate(text), dvexport_demo_hash(bigint, bigint),
  dvexport_demo_uid(text), log_datavalue_audit();
SQL
fi

# versions/<version>.sql prints nothing; another version than 2.42 may add values (2.43's
# new period types), hence the count after it.
count=()
[[ "$version" == 2.42 ]] || count=(-c "SELECT count(*) FROM datavalue")
rows="$("${psql_cmd[@]}" -At -1 \
  -f "$here/schema.sql" \
  -f "$here/generate.sql" \
  -c "SELECT dvexport_demo_generate('$size')" \
  -f "$here/versions/$version.sql" \
  "${count[@]}" | tail -n 1)"

# The read-only service role (scripts/lib/pg.sh) may read every table, DHIS2's user tables
# (userinfo, api_token, ...) included: authentication reads them. docs/DEPLOYMENT.md lists
# the least a real deployment needs.
"${psql_cmd[@]}" <<'SQL'
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_roles WHERE rolname = 'dvexport_reader') THEN
    GRANT USAGE ON SCHEMA public TO dvexport_reader;
    GRANT SELECT ON ALL TABLES IN SCHEMA public TO dvexport_reader;
  END IF;
END
$$;
-- The publication a change stream reads (docs/SYNC.md): datavalue only. Made again because a
-- reload drops and recreates the table, which leaves the publication without it.
SET client_min_messages = error;
DROP PUBLICATION IF EXISTS dvexport;
CREATE PUBLICATION dvexport FOR TABLE datavalue;
SQL

end="$(date +%s.%N)"
suffix=""
[[ "$version" == 2.42 ]] || suffix=" dhis2=$version"
awk -v s="$start" -v e="$end" -v size="$size" -v rows="$rows" -v suffix="$suffix" \
  'BEGIN { printf "loaded size=%s datavalues=%s seconds=%.2f%s\n", size, rows, e - s, suffix }'
