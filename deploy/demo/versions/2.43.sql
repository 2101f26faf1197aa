-- DHIS2 2.43 (2.43.1): the demo database moved on to 2.43's schema, with its Flyway history.
-- Applied by deploy/demo/load.sh after schema.sql + generate.sql, same transaction.
--   settings: first the rows a 2.42 server writes (plain text since 2.42/V2_42_18), then
--   schema: steps/2.42-to-2.43.sql (2.43.1: V2_43_6, V2_43_9, V2_43_10, V2_43_17, V2_43_25,
--           V2_43_26, V2_43_27, V2_43_46, V2_43_47, V2_43_51, V2_43_53; period.iso; the 2.43-only
--           periods 2024FriW6, 2024Feb, 2024Aug with 18 values)
--   history: flyway.sql, tag 2.43.1 (highest 2.42.43, 2.43.64), a failed 2.44.1 last

\ir settings-plain.sql
\ir steps/2.42-to-2.43.sql
\ir flyway.sql
SELECT pg_temp.dvexport_demo_flyway('243', '2.44.1') \g /dev/null
COMMENT ON TABLE datavalue IS 'dvexport demo: DHIS2 2.43 schema subset (deploy/demo/schema.sql, versions/2.43.sql)';
