-- Step: the demo's DHIS2 2.42 schema (schema.sql) back to DHIS2 2.41's (2.41.9.1), by undoing
-- the 2.42 migrations that touch the tables in schema.sql. Included by versions/2.41.sql, 2.40.sql
-- and 2.39.sql; the migrations are dhis2/dhis2-core's, tag 2.42.5.2, under dhis-2/dhis-support/
-- dhis-support-db-migration/src/main/resources/org/hisp/dhis/db/migration/2.42/:
--   V2_42_12__Remove_attribute_from_attributeValues.sql  removed the "attribute" member of every
--       attributevalues entry: before it, {"<attr uid>": {"value": ..., "attribute": {"id": ...}}}
--   V2_42_18__Update_settings_values_to_plain.sql  unwrapped JSON string values and dropped the
--       systemsetting.translations jsonb column: before it, value is the setting's Jackson JSON
--       (strings quoted, numbers and booleans bare; SystemSetting.setDisplayValue @2.41.9.1) and
--       translations its Map<String,String> (jbObject, SystemSetting.hbm.xml @2.41.9.1)
--   V2_42_19__Update_dataset_expiry_days_to_double.sql  expirydays integer -> double precision
--       (timelydays: already double in 2.41.9.1 by 2.41/V2_41_50, which 2.40 does not have)
--   V2_42_29__add_2FA_type_userinfo.sql  created userinfo.twofactortype (ADD COLUMN IF NOT
--       EXISTS; neither 2.40's nor 2.41's User.hbm.xml maps it, hbm2ddl is "validate": 2.41
--       has no such column; 2FA is on when secret is set and not 'APPROVAL_...')
--   V2_42_32__User_name_as_generated_column.sql  created userinfo.name (generated)
--   V2_42_38__authorities_unique_and_new_data_entry.sql  added UNIQUE (userroleid, authority)
--       to userroleauthorities (DHIS2 names it userroleauthorities_unique_key; schema.sql
--       userroleauthorities_unique_authority) and renamed M_dhis-web-dataentry (not in the demo)
-- (V2_42_14 verifiedemail/emailverificationtoken: not in schema.sql's userinfo subset.)
--
-- And where schema.sql's 2.42 differs from what DHIS2's migrations leave in 2.41 and 2.42 alike
-- (reported, for schema.sql to follow):
--   userrolerestrictions.userroleid is int8 with FK fk_userrolerestrictions_userroleid
--       (2.41/V2_41_16__Fix_hibernate_validate_ddl.sql; 2.40.1+ 2.40/V2_40_25, the same file)
--   category's primary key keeps its 2.40 name dataelementcategory_pkey (2.41/V2_41_30 renames
--       the table, not its constraints; the base dump dhis2_base_schema.sql names it so)

-- V2_42_32, V2_42_29
ALTER TABLE userinfo DROP COLUMN name;
ALTER TABLE userinfo DROP COLUMN twofactortype;

-- V2_42_38
ALTER TABLE userroleauthorities DROP CONSTRAINT userroleauthorities_unique_authority;

-- V2_42_19
ALTER TABLE dataset ALTER COLUMN expirydays TYPE integer USING round(expirydays)::integer;

-- V2_42_12: every attributevalues entry gets its "attribute" member back.
DO $$
DECLARE
  t text;
BEGIN
  FOR t IN SELECT c.table_name FROM information_schema.columns c
           JOIN information_schema.tables x USING (table_schema, table_name)
           WHERE c.table_schema = 'public' AND c.column_name = 'attributevalues'
             AND c.data_type = 'jsonb' AND x.table_type = 'BASE TABLE'
           ORDER BY 1 LOOP
    EXECUTE format($q$
      UPDATE %I SET attributevalues = (
        SELECT jsonb_object_agg(e.key, e.value || jsonb_build_object('attribute',
                                                   jsonb_build_object('id', e.key)))
        FROM jsonb_each(attributevalues) AS e)
      WHERE attributevalues <> '{}'::jsonb$q$, t);
  END LOOP;
END
$$;

-- V2_42_18: the translations column again; the values as 2.41 writes them (JSON).
ALTER TABLE systemsetting ADD COLUMN translations jsonb;

-- userrolerestrictions and category's primary key as DHIS2 has them (see above).
ALTER TABLE userrolerestrictions ALTER COLUMN userroleid TYPE int8;
ALTER TABLE userrolerestrictions
    ADD CONSTRAINT fk_userrolerestrictions_userroleid FOREIGN KEY (userroleid) REFERENCES userrole (userroleid);
ALTER TABLE category RENAME CONSTRAINT category_pkey TO dataelementcategory_pkey;
