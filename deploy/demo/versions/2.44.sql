-- DHIS2 2.44 (not released when this was written; dvexport refuses it by default): 2.43's
-- demo database (versions/2.43.sql's steps) plus what 2.44 has so far on dhis2-core's master
-- (3f8c14a0, 2026-08-21) that touches schema.sql's tables:
--   2.44/V2_44_1__add_datavalue_null_empty_trim_index.sql  index idx_datavalue_null_empty_trim
-- and its Flyway history: 2.43.1's, then master's 2.44.1-2.44.21, a failed 2.44.22 last.

\ir settings-plain.sql
\ir steps/2.42-to-2.43.sql
create index if not exists idx_datavalue_null_empty_trim
    on datavalue (dataelementid)
    where deleted = false and (value is null or value = '');
\ir flyway.sql
SELECT pg_temp.dvexport_demo_flyway('244', '2.44.22') \g /dev/null
COMMENT ON TABLE datavalue IS 'dvexport demo: DHIS2 2.44 schema subset (deploy/demo/schema.sql, versions/2.44.sql)';
