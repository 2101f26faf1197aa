-- DHIS2 2.39 (2.39.10.1), which dvexport does not support and must refuse: 2.40's schema
-- without what the 2.40 migrations made, with 2.39's Flyway history. Applied by
-- deploy/demo/load.sh after schema.sql + generate.sql, same transaction.
--   schema: steps/2.42-to-2.41.sql, steps/2.41-to-2.40.sql, then steps/2.40-to-2.39.sql
--           (2.40.11.1: V2_40_7 userinfo.twofa back, V2_40_8 no userrolerestrictions, V2_40_11
--           no orgunitgroup.description, V2_40_17 short names nullable, not unique)
--   settings: as 2.41 (settings-json.sql)
--   history: flyway.sql, tag 2.39.10.1 (highest 2.39.31), a failed 2.40.1 last

\ir steps/2.42-to-2.41.sql
\ir steps/2.41-to-2.40.sql
\ir steps/2.40-to-2.39.sql
\ir settings-json.sql
\ir flyway.sql
SELECT pg_temp.dvexport_demo_flyway('239', '2.40.1') \g /dev/null
COMMENT ON TABLE datavalue IS 'dvexport demo: DHIS2 2.39 schema subset (deploy/demo/schema.sql, versions/2.39.sql)';
