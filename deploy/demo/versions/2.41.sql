-- DHIS2 2.41 (2.41.9.1): the demo database reshaped into 2.41's schema, with its Flyway
-- history. Applied by deploy/demo/load.sh after schema.sql + generate.sql, same transaction.
--   schema: steps/2.42-to-2.41.sql (2.42.5.2: V2_42_12, V2_42_18, V2_42_19, V2_42_29, V2_42_32,
--           V2_42_38 undone; 2.41/V2_41_16 applied)
--   settings: written as 2.41 writes them (SystemSetting.setDisplayValue @2.41.9.1: Jackson JSON
--           of the value, strings quoted; translations a jsonb map), for V2_42_18 to undo
--   history: flyway.sql, tag 2.41.9.1 (highest 2.40.24, 2.41.59), a failed 2.42.1 last
-- Token types: PERSONAL_ACCESS_TOKEN_V1 (d2pat_) and _V2 (d2p_), as 2.42 (ApiTokenType.java
-- @2.41.9.1; 2.41/V2_41_49__Update_api_token_tokentype.sql renamed PERSONAL_ACCESS_TOKEN).

\ir steps/2.42-to-2.41.sql
\ir settings-json.sql
\ir flyway.sql
SELECT pg_temp.dvexport_demo_flyway('241', '2.42.1') \g /dev/null
COMMENT ON TABLE datavalue IS 'dvexport demo: DHIS2 2.41 schema subset (deploy/demo/schema.sql, versions/2.41.sql)';
