-- Step: DHIS2 2.40's schema (steps/2.41-to-2.40.sql) back to DHIS2 2.39's (2.39.10.1), which
-- dvexport does not support (it must refuse it). Included by versions/2.39.sql. The migrations
-- are dhis2/dhis2-core's, tag 2.40.11.1, under dhis-2/dhis-support/dhis-support-db-migration/
-- src/main/resources/org/hisp/dhis/db/migration/2.40/:
--   V2_40_7__Drop_column_twoFA_userinfo.sql  dropped userinfo.twofa (boolean; where false,
--       secret was cleared first): 2.39 still has it
--   V2_40_8__Create_table_userrolerestrictions.sql  created userrolerestrictions: 2.39 has none
--   V2_40_11__Add_description_column_to_org_unit_group.sql  orgunitgroup.description (text)
--   V2_40_17__Unique_non_null_short_names.sql  (after the Java V2_40_16, which filled them)
--       shortname NOT NULL + dataset_unique_shortname, orgunitgroup_unique_shortname,
--       dataelementgroup_unique_shortname, dataelementcategoryoption_unique_shortname. The
--       Hibernate-named unique constraints of the base dump (uk_t0srkng3akwg3pcp5qlwcx06n,
--       uk_6x37lph70r5mh15a71pf1tj17 on orgunitgroup, dataelementgroup) stay: 2.39 has them.
-- (V2_40_3 category description and 2.39's V2_39_23 option description: not in schema.sql.)

DROP TABLE userrolerestrictions;

ALTER TABLE userinfo ADD COLUMN twofa boolean;
UPDATE userinfo SET twofa = false;

ALTER TABLE orgunitgroup DROP COLUMN description;

ALTER TABLE dataset DROP CONSTRAINT dataset_unique_shortname;
ALTER TABLE dataset ALTER COLUMN shortname DROP NOT NULL;
ALTER TABLE orgunitgroup DROP CONSTRAINT orgunitgroup_unique_shortname;
ALTER TABLE orgunitgroup ALTER COLUMN shortname DROP NOT NULL;
ALTER TABLE dataelementgroup DROP CONSTRAINT dataelementgroup_unique_shortname;
ALTER TABLE dataelementgroup ALTER COLUMN shortname DROP NOT NULL;
ALTER TABLE dataelementcategoryoption DROP CONSTRAINT dataelementcategoryoption_unique_shortname;
ALTER TABLE dataelementcategoryoption ALTER COLUMN shortname DROP NOT NULL;
