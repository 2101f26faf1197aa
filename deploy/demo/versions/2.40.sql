-- DHIS2 2.40 (2.40.11.1): the demo database reshaped into 2.40's schema, with its Flyway
-- history. Applied by deploy/demo/load.sh after schema.sql + generate.sql, same transaction.
--   schema: steps/2.42-to-2.41.sql, then steps/2.41-to-2.40.sql (2.41.9.1: V2_41_30 category
--           tables renamed back to dataelementcategory, dataelementcategoryoption; V2_41_49 token
--           type PERSONAL_ACCESS_TOKEN; V2_41_50 timelydays integer; the d2p_ tokens become 2.40
--           d2pat_ tokens). userrolerestrictions.userroleid is int8 with its FK: 2.40's own
--           2.40/V2_40_25__Fix_hibernate_validate_ddl.sql (since tag 2.40.1) does what V2_41_16 does
--   settings: as 2.41 (settings-json.sql)
--   history: flyway.sql, tag 2.40.11.1 (highest 2.40.33), a failed 2.41.1 last

\ir steps/2.42-to-2.41.sql
\ir steps/2.41-to-2.40.sql
\ir settings-json.sql
\ir flyway.sql
SELECT pg_temp.dvexport_demo_flyway('240', '2.41.1') \g /dev/null
COMMENT ON TABLE datavalue IS 'dvexport demo: DHIS2 2.40 schema subset (deploy/demo/schema.sql, versions/2.40.sql)';
