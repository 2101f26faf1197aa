-- The DHIS2 2.42 schema subset read by dvexport (and by DHIS2's own
-- /api/dataValueSets export), for the demo and test databases.
--
-- Sources (docs/DHIS2-COMPATIBILITY.md names DHIS2's own): the base DDL
-- dhis2_base_schema.sql (a 2.30 dump) plus the Flyway migrations up to 2.42:
--   2.32 V2_32_2  completedatasetregistration.lastupdatedby/lastupdated/completed
--   2.32 V2_32_10 most *id columns become bigint; periodtype.periodtypeid,
--                 period.periodtypeid, dataset.periodtypeid and
--                 datasetelement.datasetelementid stay integer
--   2.31 / 2.33 / 2.36  translations, attributevalues, sharing jsonb columns
--   2.37 V2_37_4  in_organisationunit_path uses varchar_pattern_ops
--   2.40 V2_40_17 shortname NOT NULL + *_unique_shortname on dataset,
--                 orgunitgroup, dataelementgroup
--   2.41 V2_41_30 dataelementcategoryoption renamed categoryoption and
--                 dataelementcategory renamed category (one SQL migration)
--   2.42 V2_42_19/20 dataset.expirydays/timelydays become double precision
--
-- Table, column, primary key, unique constraint and index names are DHIS2's
-- (the uk_* names are Hibernate's, copied from the base dump). Foreign key
-- names are DHIS2's for datavalue, period and organisationunit; the others
-- (fk_<table>_<column>) are ours, because the dump names most of them with
-- Hibernate hashes we did not copy. Columns the export never reads and that
-- need extensions (organisationunit.geometry: PostGIS) or other tables
-- (optionset, ...) are left out; FKs to those tables are left out. The user
-- tables at the end are what authentication and DHIS2's read rules need.
--
-- The comment on datavalue marks the database as a dvexport demo; load.sh
-- only ever drops tables in a database carrying that mark.

SET client_min_messages = warning;

CREATE TABLE periodtype (
    periodtypeid integer NOT NULL,
    name character varying(50) NOT NULL
);
ALTER TABLE ONLY periodtype ADD CONSTRAINT periodtype_pkey PRIMARY KEY (periodtypeid);

CREATE TABLE period (
    periodid bigint NOT NULL,
    periodtypeid integer,
    startdate date NOT NULL,
    enddate date NOT NULL
);
ALTER TABLE ONLY period ADD CONSTRAINT period_pkey PRIMARY KEY (periodid);
ALTER TABLE ONLY period
    ADD CONSTRAINT uk_tbkbjga8h4j5u33d7hbcuk66t UNIQUE (periodtypeid, startdate, enddate);
ALTER TABLE ONLY period
    ADD CONSTRAINT fk_period_periodtypeid FOREIGN KEY (periodtypeid) REFERENCES periodtype(periodtypeid);

CREATE TABLE organisationunit (
    organisationunitid bigint NOT NULL,
    uid character varying(11) NOT NULL,
    code character varying(50),
    created timestamp without time zone NOT NULL,
    lastupdated timestamp without time zone NOT NULL,
    name character varying(230) NOT NULL,
    shortname character varying(50) NOT NULL,
    parentid bigint,
    path character varying(255),
    hierarchylevel integer,
    description text,
    openingdate date NOT NULL,
    closeddate date,
    comment text,
    url character varying(255),
    contactperson character varying(255),
    address character varying(255),
    email character varying(150),
    phonenumber character varying(150),
    userid bigint,
    translations jsonb DEFAULT '[]'::jsonb,
    attributevalues jsonb DEFAULT '{}'::jsonb
);
ALTER TABLE ONLY organisationunit ADD CONSTRAINT organisationunit_pkey PRIMARY KEY (organisationunitid);
ALTER TABLE ONLY organisationunit ADD CONSTRAINT organisationunit_code_key UNIQUE (code);
ALTER TABLE ONLY organisationunit ADD CONSTRAINT uk_ehl4v33tq7hlkmc28vbno1b4n UNIQUE (code);
ALTER TABLE ONLY organisationunit ADD CONSTRAINT uk_g1nrfjv5x04ap1ceohiwah380 UNIQUE (uid);
ALTER TABLE ONLY organisationunit ADD CONSTRAINT uk_pw2bgc9ykjad2obefeqha28t4 UNIQUE (path);
ALTER TABLE ONLY organisationunit
    ADD CONSTRAINT fk_parentid FOREIGN KEY (parentid) REFERENCES organisationunit(organisationunitid);
CREATE INDEX in_parentid ON organisationunit USING btree (parentid);
CREATE INDEX in_organisationunit_path ON organisationunit USING btree (path varchar_pattern_ops);
CREATE INDEX in_organisationunit_hierarchylevel ON organisationunit USING btree (hierarchylevel);

-- Only what the data elements, data sets and option combos point at.
CREATE TABLE categorycombo (
    categorycomboid bigint NOT NULL,
    uid character varying(11) NOT NULL,
    code character varying(50),
    created timestamp without time zone NOT NULL,
    lastupdated timestamp without time zone NOT NULL,
    lastupdatedby bigint,
    name character varying(230) NOT NULL,
    datadimensiontype character varying(255) NOT NULL,
    skiptotal boolean NOT NULL,
    userid bigint,
    translations jsonb DEFAULT '[]'::jsonb,
    sharing jsonb DEFAULT '{}'::jsonb
);
ALTER TABLE ONLY categorycombo ADD CONSTRAINT categorycombo_pkey PRIMARY KEY (categorycomboid);
ALTER TABLE ONLY categorycombo ADD CONSTRAINT uk_dlhi39gmt2e0dun73f04w7w7u UNIQUE (uid);
ALTER TABLE ONLY categorycombo ADD CONSTRAINT uk_h97pko7n41oky8pfptkflp8l6 UNIQUE (name);
ALTER TABLE ONLY categorycombo ADD CONSTRAINT uk_3a4ee92kxafw85hsopq4qle47 UNIQUE (code);

CREATE TABLE categoryoptioncombo (
    categoryoptioncomboid bigint NOT NULL,
    uid character varying(11) NOT NULL,
    code character varying(50),
    created timestamp without time zone NOT NULL,
    lastupdated timestamp without time zone NOT NULL,
    lastupdatedby bigint,
    name text,
    ignoreapproval boolean,
    translations jsonb DEFAULT '[]'::jsonb,
    attributevalues jsonb DEFAULT '{}'::jsonb
);
ALTER TABLE ONLY categoryoptioncombo ADD CONSTRAINT categoryoptioncombo_pkey PRIMARY KEY (categoryoptioncomboid);
ALTER TABLE ONLY categoryoptioncombo ADD CONSTRAINT uk_qki43s9vdndg15c9tyv718u1j UNIQUE (uid);
ALTER TABLE ONLY categoryoptioncombo ADD CONSTRAINT uk_60p9gh2un0pb7l9tctfd4o3b3 UNIQUE (code);
CREATE INDEX in_categoryoptioncombo_name ON categoryoptioncombo USING btree (name);

-- Which option combos belong to which category combo (one combo per COC).
CREATE TABLE categorycombos_optioncombos (
    categoryoptioncomboid bigint NOT NULL,
    categorycomboid bigint NOT NULL
);
ALTER TABLE ONLY categorycombos_optioncombos
    ADD CONSTRAINT categorycombos_optioncombos_pkey PRIMARY KEY (categoryoptioncomboid);
ALTER TABLE ONLY categorycombos_optioncombos
    ADD CONSTRAINT fk_categorycombos_optioncombos_categoryoptioncomboid
    FOREIGN KEY (categoryoptioncomboid) REFERENCES categoryoptioncombo(categoryoptioncomboid);
ALTER TABLE ONLY categorycombos_optioncombos
    ADD CONSTRAINT fk_categorycombos_optioncombos_categorycomboid
    FOREIGN KEY (categorycomboid) REFERENCES categorycombo(categorycomboid);

-- Category options (2.41: formerly dataelementcategoryoption) and which
-- options make up each option combo: an attribute combo plus its options
-- name one attribute option combo (DHIS2 attributeCombo + attributeOptions).
-- The pkey keeps the pre-2.41 table name, as a rename does; the other
-- constraint names are ours (the dump's Hibernate names were not copied).
CREATE TABLE categoryoption (
    categoryoptionid bigint NOT NULL,
    uid character varying(11) NOT NULL,
    code character varying(50),
    created timestamp without time zone NOT NULL,
    lastupdated timestamp without time zone NOT NULL,
    lastupdatedby bigint,
    name character varying(230) NOT NULL,
    shortname character varying(50) NOT NULL,
    startdate date,
    enddate date,
    userid bigint,
    translations jsonb DEFAULT '[]'::jsonb,
    attributevalues jsonb DEFAULT '{}'::jsonb,
    sharing jsonb DEFAULT '{}'::jsonb
);
ALTER TABLE ONLY categoryoption ADD CONSTRAINT dataelementcategoryoption_pkey PRIMARY KEY (categoryoptionid);
ALTER TABLE ONLY categoryoption ADD CONSTRAINT categoryoption_uid_key UNIQUE (uid);
ALTER TABLE ONLY categoryoption ADD CONSTRAINT categoryoption_code_key UNIQUE (code);
ALTER TABLE ONLY categoryoption ADD CONSTRAINT categoryoption_name_key UNIQUE (name);
ALTER TABLE ONLY categoryoption ADD CONSTRAINT categoryoption_unique_shortname UNIQUE (shortname);

CREATE TABLE categoryoptioncombos_categoryoptions (
    categoryoptioncomboid bigint NOT NULL,
    categoryoptionid bigint NOT NULL
);
ALTER TABLE ONLY categoryoptioncombos_categoryoptions
    ADD CONSTRAINT categoryoptioncombos_categoryoptions_pkey PRIMARY KEY (categoryoptioncomboid, categoryoptionid);
ALTER TABLE ONLY categoryoptioncombos_categoryoptions
    ADD CONSTRAINT fk_categoryoptioncombos_categoryoptions_categoryoptioncomboid
    FOREIGN KEY (categoryoptioncomboid) REFERENCES categoryoptioncombo(categoryoptioncomboid);
ALTER TABLE ONLY categoryoptioncombos_categoryoptions
    ADD CONSTRAINT fk_categoryoptioncombos_categoryoptions_categoryoptionid
    FOREIGN KEY (categoryoptionid) REFERENCES categoryoption(categoryoptionid);

-- Categories, the categories of each category combo and the options of each
-- category (Category.hbm.xml, CategoryCombo.hbm.xml: both lists ordered by
-- sort_order, from 1), read by the ADX export. Constraint names are ours.
CREATE TABLE category (
    categoryid bigint NOT NULL,
    uid character varying(11) NOT NULL,
    code character varying(50),
    created timestamp without time zone NOT NULL,
    lastupdated timestamp without time zone NOT NULL,
    lastupdatedby bigint,
    name character varying(230) NOT NULL,
    shortname character varying(50) NOT NULL,
    datadimensiontype character varying(255) NOT NULL,
    datadimension boolean NOT NULL,
    userid bigint,
    translations jsonb DEFAULT '[]'::jsonb,
    attributevalues jsonb DEFAULT '{}'::jsonb,
    sharing jsonb DEFAULT '{}'::jsonb
);
ALTER TABLE ONLY category ADD CONSTRAINT category_pkey PRIMARY KEY (categoryid);
ALTER TABLE ONLY category ADD CONSTRAINT category_uid_key UNIQUE (uid);
ALTER TABLE ONLY category ADD CONSTRAINT category_code_key UNIQUE (code);
ALTER TABLE ONLY category ADD CONSTRAINT category_name_key UNIQUE (name);

CREATE TABLE categorycombos_categories (
    categorycomboid bigint NOT NULL,
    sort_order integer NOT NULL,
    categoryid bigint NOT NULL
);
ALTER TABLE ONLY categorycombos_categories
    ADD CONSTRAINT categorycombos_categories_pkey PRIMARY KEY (categorycomboid, sort_order);
ALTER TABLE ONLY categorycombos_categories
    ADD CONSTRAINT fk_categorycombos_categories_categorycomboid
    FOREIGN KEY (categorycomboid) REFERENCES categorycombo(categorycomboid);
ALTER TABLE ONLY categorycombos_categories
    ADD CONSTRAINT fk_categorycombos_categories_categoryid
    FOREIGN KEY (categoryid) REFERENCES category(categoryid);

CREATE TABLE categories_categoryoptions (
    categoryid bigint NOT NULL,
    sort_order integer NOT NULL,
    categoryoptionid bigint NOT NULL
);
ALTER TABLE ONLY categories_categoryoptions
    ADD CONSTRAINT categories_categoryoptions_pkey PRIMARY KEY (categoryid, sort_order);
ALTER TABLE ONLY categories_categoryoptions
    ADD CONSTRAINT fk_categories_categoryoptions_categoryid
    FOREIGN KEY (categoryid) REFERENCES category(categoryid);
ALTER TABLE ONLY categories_categoryoptions
    ADD CONSTRAINT fk_categories_categoryoptions_categoryoptionid
    FOREIGN KEY (categoryoptionid) REFERENCES categoryoption(categoryoptionid);
CREATE INDEX in_categories_categoryoptions_coid ON categories_categoryoptions(categoryoptionid, categoryid);

CREATE TABLE dataelement (
    dataelementid bigint NOT NULL,
    uid character varying(11) NOT NULL,
    code character varying(50),
    created timestamp without time zone NOT NULL,
    lastupdated timestamp without time zone NOT NULL,
    lastupdatedby bigint,
    name character varying(230) NOT NULL,
    shortname character varying(50) NOT NULL,
    description text,
    formname character varying(230),
    style jsonb,
    valuetype character varying(50) NOT NULL,
    domaintype character varying(255) NOT NULL,
    aggregationtype character varying(50) NOT NULL,
    categorycomboid bigint NOT NULL,
    url character varying(255),
    zeroissignificant boolean NOT NULL,
    optionsetid bigint,
    commentoptionsetid bigint,
    userid bigint,
    translations jsonb DEFAULT '[]'::jsonb,
    attributevalues jsonb DEFAULT '{}'::jsonb,
    sharing jsonb DEFAULT '{}'::jsonb,
    valuetypeoptions jsonb
);
ALTER TABLE ONLY dataelement ADD CONSTRAINT dataelement_pkey PRIMARY KEY (dataelementid);
ALTER TABLE ONLY dataelement ADD CONSTRAINT dataelement_code_key UNIQUE (code);
ALTER TABLE ONLY dataelement ADD CONSTRAINT uk_94srnunkibylfaxt4knxfn58e UNIQUE (code);
ALTER TABLE ONLY dataelement ADD CONSTRAINT uk_2nhc265rlfu3dlc3qouvjdprl UNIQUE (name);
ALTER TABLE ONLY dataelement ADD CONSTRAINT uk_jc27pe1xeptws5xprct7mgxrj UNIQUE (shortname);
ALTER TABLE ONLY dataelement ADD CONSTRAINT uk_3r6dr8m9qwa89afngtr43x9jh UNIQUE (uid);
ALTER TABLE ONLY dataelement
    ADD CONSTRAINT fk_dataelement_categorycomboid FOREIGN KEY (categorycomboid) REFERENCES categorycombo(categorycomboid);

CREATE TABLE dataset (
    datasetid bigint NOT NULL,
    uid character varying(11) NOT NULL,
    code character varying(50),
    created timestamp without time zone NOT NULL,
    lastupdated timestamp without time zone NOT NULL,
    lastupdatedby bigint,
    name character varying(230) NOT NULL,
    shortname character varying(50) NOT NULL,
    description text,
    formname text,
    style jsonb,
    periodtypeid integer NOT NULL,
    categorycomboid bigint NOT NULL,
    mobile boolean NOT NULL,
    version integer,
    expirydays double precision,
    timelydays double precision,
    notifycompletinguser boolean,
    workflowid bigint,
    openfutureperiods integer,
    fieldcombinationrequired boolean,
    validcompleteonly boolean,
    novaluerequirescomment boolean,
    skipoffline boolean,
    dataelementdecoration boolean,
    renderastabs boolean,
    renderhorizontally boolean,
    compulsoryfieldscompleteonly boolean,
    userid bigint,
    dataentryform bigint,
    notificationrecipients bigint,
    translations jsonb DEFAULT '[]'::jsonb,
    attributevalues jsonb DEFAULT '{}'::jsonb,
    sharing jsonb DEFAULT '{}'::jsonb
);
ALTER TABLE ONLY dataset ADD CONSTRAINT dataset_pkey PRIMARY KEY (datasetid);
ALTER TABLE ONLY dataset ADD CONSTRAINT uk_ayk5ey2r1fh1akknxtpcpyp9r UNIQUE (uid);
ALTER TABLE ONLY dataset ADD CONSTRAINT uk_oeni5ndit5g033f1s1j08bdry UNIQUE (code);
ALTER TABLE ONLY dataset ADD CONSTRAINT dataset_unique_shortname UNIQUE (shortname);
ALTER TABLE ONLY dataset
    ADD CONSTRAINT fk_dataset_periodtypeid FOREIGN KEY (periodtypeid) REFERENCES periodtype(periodtypeid);
ALTER TABLE ONLY dataset
    ADD CONSTRAINT fk_dataset_categorycomboid FOREIGN KEY (categorycomboid) REFERENCES categorycombo(categorycomboid);

CREATE TABLE datasetelement (
    datasetelementid integer NOT NULL,
    datasetid bigint,
    dataelementid bigint NOT NULL,
    categorycomboid bigint
);
ALTER TABLE ONLY datasetelement ADD CONSTRAINT datasetelement_pkey PRIMARY KEY (datasetelementid);
ALTER TABLE ONLY datasetelement ADD CONSTRAINT datasetelement_unique_key UNIQUE (datasetid, dataelementid);
ALTER TABLE ONLY datasetelement
    ADD CONSTRAINT fk_datasetelement_datasetid FOREIGN KEY (datasetid) REFERENCES dataset(datasetid);
ALTER TABLE ONLY datasetelement
    ADD CONSTRAINT fk_datasetelement_dataelementid FOREIGN KEY (dataelementid) REFERENCES dataelement(dataelementid);
ALTER TABLE ONLY datasetelement
    ADD CONSTRAINT fk_datasetelement_categorycomboid FOREIGN KEY (categorycomboid) REFERENCES categorycombo(categorycomboid);

CREATE TABLE orgunitgroup (
    orgunitgroupid bigint NOT NULL,
    uid character varying(11) NOT NULL,
    code character varying(50),
    created timestamp without time zone NOT NULL,
    lastupdated timestamp without time zone NOT NULL,
    lastupdatedby bigint,
    name character varying(230) NOT NULL,
    shortname character varying(50) NOT NULL,
    description text,
    symbol character varying(255),
    color character varying(255),
    userid bigint,
    translations jsonb DEFAULT '[]'::jsonb,
    attributevalues jsonb DEFAULT '{}'::jsonb,
    sharing jsonb DEFAULT '{}'::jsonb
);
ALTER TABLE ONLY orgunitgroup ADD CONSTRAINT orgunitgroup_pkey PRIMARY KEY (orgunitgroupid);
ALTER TABLE ONLY orgunitgroup ADD CONSTRAINT orgunitgroup_name_key UNIQUE (name);
ALTER TABLE ONLY orgunitgroup ADD CONSTRAINT uk_qwk9qdapql867enp5r7fa0uic UNIQUE (name);
ALTER TABLE ONLY orgunitgroup ADD CONSTRAINT uk_lswbn93sime7vmdqqe9lks7ge UNIQUE (uid);
ALTER TABLE ONLY orgunitgroup ADD CONSTRAINT uk_3phvecdmy2msmcpitqifpcy3c UNIQUE (code);
ALTER TABLE ONLY orgunitgroup ADD CONSTRAINT uk_t0srkng3akwg3pcp5qlwcx06n UNIQUE (shortname);
ALTER TABLE ONLY orgunitgroup ADD CONSTRAINT orgunitgroup_unique_shortname UNIQUE (shortname);

CREATE TABLE orgunitgroupmembers (
    organisationunitid bigint NOT NULL,
    orgunitgroupid bigint NOT NULL
);
ALTER TABLE ONLY orgunitgroupmembers
    ADD CONSTRAINT orgunitgroupmembers_pkey PRIMARY KEY (orgunitgroupid, organisationunitid);
ALTER TABLE ONLY orgunitgroupmembers
    ADD CONSTRAINT fk_orgunitgroupmembers_organisationunitid
    FOREIGN KEY (organisationunitid) REFERENCES organisationunit(organisationunitid);
ALTER TABLE ONLY orgunitgroupmembers
    ADD CONSTRAINT fk_orgunitgroupmembers_orgunitgroupid
    FOREIGN KEY (orgunitgroupid) REFERENCES orgunitgroup(orgunitgroupid);

CREATE TABLE dataelementgroup (
    dataelementgroupid bigint NOT NULL,
    uid character varying(11) NOT NULL,
    code character varying(50),
    created timestamp without time zone NOT NULL,
    lastupdated timestamp without time zone NOT NULL,
    lastupdatedby bigint,
    name character varying(230) NOT NULL,
    shortname character varying(50) NOT NULL,
    description text,
    userid bigint,
    translations jsonb DEFAULT '[]'::jsonb,
    attributevalues jsonb DEFAULT '{}'::jsonb,
    sharing jsonb DEFAULT '{}'::jsonb
);
ALTER TABLE ONLY dataelementgroup ADD CONSTRAINT dataelementgroup_pkey PRIMARY KEY (dataelementgroupid);
ALTER TABLE ONLY dataelementgroup ADD CONSTRAINT uk_otvwcgv4bxjtqfj3flhrnmgf7 UNIQUE (uid);
ALTER TABLE ONLY dataelementgroup ADD CONSTRAINT uk_jo65jc3wyrxfekiu3upk80mtr UNIQUE (code);
ALTER TABLE ONLY dataelementgroup ADD CONSTRAINT uk_aqbaj76r9qxmnylr6p8kj9g37 UNIQUE (name);
ALTER TABLE ONLY dataelementgroup ADD CONSTRAINT uk_6x37lph70r5mh15a71pf1tj17 UNIQUE (shortname);
ALTER TABLE ONLY dataelementgroup ADD CONSTRAINT dataelementgroup_unique_shortname UNIQUE (shortname);

CREATE TABLE dataelementgroupmembers (
    dataelementid bigint NOT NULL,
    dataelementgroupid bigint NOT NULL
);
ALTER TABLE ONLY dataelementgroupmembers
    ADD CONSTRAINT dataelementgroupmembers_pkey PRIMARY KEY (dataelementgroupid, dataelementid);
ALTER TABLE ONLY dataelementgroupmembers
    ADD CONSTRAINT fk_dataelementgroupmembers_dataelementid
    FOREIGN KEY (dataelementid) REFERENCES dataelement(dataelementid);
ALTER TABLE ONLY dataelementgroupmembers
    ADD CONSTRAINT fk_dataelementgroupmembers_dataelementgroupid
    FOREIGN KEY (dataelementgroupid) REFERENCES dataelementgroup(dataelementgroupid);

CREATE TABLE completedatasetregistration (
    datasetid bigint NOT NULL,
    periodid bigint NOT NULL,
    sourceid bigint NOT NULL,
    attributeoptioncomboid bigint NOT NULL,
    date timestamp without time zone,
    storedby character varying(255),
    lastupdatedby character varying(255),
    lastupdated timestamp without time zone,
    completed boolean NOT NULL
);
ALTER TABLE ONLY completedatasetregistration
    ADD CONSTRAINT completedatasetregistration_pkey PRIMARY KEY (datasetid, periodid, sourceid, attributeoptioncomboid);
ALTER TABLE ONLY completedatasetregistration
    ADD CONSTRAINT fk_completedatasetregistration_datasetid FOREIGN KEY (datasetid) REFERENCES dataset(datasetid);
ALTER TABLE ONLY completedatasetregistration
    ADD CONSTRAINT fk_completedatasetregistration_periodid FOREIGN KEY (periodid) REFERENCES period(periodid);
ALTER TABLE ONLY completedatasetregistration
    ADD CONSTRAINT fk_completedatasetregistration_sourceid FOREIGN KEY (sourceid) REFERENCES organisationunit(organisationunitid);
ALTER TABLE ONLY completedatasetregistration
    ADD CONSTRAINT fk_completedatasetregistration_attributeoptioncomboid
    FOREIGN KEY (attributeoptioncomboid) REFERENCES categoryoptioncombo(categoryoptioncomboid);

-- datavalue: exactly as DHIS2 2.42. dvexport_demo_generate() drops the key,
-- indexes and FKs below before its bulk insert and recreates them with the same
-- names and definitions (keep the two in step).
CREATE TABLE datavalue (
    dataelementid bigint NOT NULL,
    periodid bigint NOT NULL,
    sourceid bigint NOT NULL,
    categoryoptioncomboid bigint NOT NULL,
    attributeoptioncomboid bigint NOT NULL,
    value character varying(50000),
    storedby character varying(255),
    created timestamp without time zone NOT NULL,
    lastupdated timestamp without time zone NOT NULL,
    comment character varying(50000),
    followup boolean,
    deleted boolean NOT NULL
);
ALTER TABLE ONLY datavalue
    ADD CONSTRAINT datavalue_pkey PRIMARY KEY (dataelementid, periodid, sourceid, categoryoptioncomboid, attributeoptioncomboid);
CREATE INDEX in_datavalue_deleted ON datavalue USING btree (deleted);
CREATE INDEX in_datavalue_lastupdated ON datavalue USING btree (lastupdated);
ALTER TABLE ONLY datavalue
    ADD CONSTRAINT fk_datavalue_dataelementid FOREIGN KEY (dataelementid) REFERENCES dataelement(dataelementid);
ALTER TABLE ONLY datavalue
    ADD CONSTRAINT fk_datavalue_periodid FOREIGN KEY (periodid) REFERENCES period(periodid);
ALTER TABLE ONLY datavalue
    ADD CONSTRAINT fk_datavalue_organisationunitid FOREIGN KEY (sourceid) REFERENCES organisationunit(organisationunitid);
ALTER TABLE ONLY datavalue
    ADD CONSTRAINT fk_datavalue_categoryoptioncomboid FOREIGN KEY (categoryoptioncomboid) REFERENCES categoryoptioncombo(categoryoptioncomboid);
ALTER TABLE ONLY datavalue
    ADD CONSTRAINT fk_datavalue_attributeoptioncomboid FOREIGN KEY (attributeoptioncomboid) REFERENCES categoryoptioncombo(categoryoptioncomboid);

COMMENT ON TABLE datavalue IS 'dvexport demo: DHIS2 2.42 schema subset (deploy/demo/schema.sql)';

-- The 20 period types of PeriodType.PERIOD_TYPES in 2.42, in that order.
-- DHIS2 assigns the ids from a sequence; any ids work, code must go by name.
INSERT INTO periodtype (periodtypeid, name) VALUES
    (1, 'Daily'),
    (2, 'Weekly'),
    (3, 'WeeklyWednesday'),
    (4, 'WeeklyThursday'),
    (5, 'WeeklySaturday'),
    (6, 'WeeklySunday'),
    (7, 'BiWeekly'),
    (8, 'Monthly'),
    (9, 'BiMonthly'),
    (10, 'Quarterly'),
    (11, 'QuarterlyNov'),
    (12, 'SixMonthly'),
    (13, 'SixMonthlyApril'),
    (14, 'SixMonthlyNov'),
    (15, 'Yearly'),
    (16, 'FinancialApril'),
    (17, 'FinancialJuly'),
    (18, 'FinancialSep'),
    (19, 'FinancialOct'),
    (20, 'FinancialNov');

-- Users, groups, roles, org unit assignments, personal access tokens and system
-- settings: what DHIS2 2.42 reads to authenticate a caller and decide what it
-- may read (docs/SECURITY.md). Column names, types and NOT NULLs are DHIS2
-- 2.42's (User.hbm.xml, UserGroup.hbm.xml, UserRole.hbm.xml, ApiToken.hbm.xml;
-- migrations 2.37 V2_37_22, 2.38 V2_38_34, 2.40 V2_40_8, 2.41 V2_41_49,
-- 2.42 V2_42_29, V2_42_32, V2_42_38); profile columns the service never reads
-- are left out. As in DHIS2, usergroupmembers.userid and userrolemembers.userid
-- hold userinfo.userinfoid.
CREATE TABLE userinfo (
    userinfoid bigint NOT NULL,
    uid character varying(11) NOT NULL,
    code character varying(50),
    created timestamp without time zone,
    lastupdated timestamp without time zone NOT NULL,
    lastupdatedby bigint,
    creatoruserid bigint,
    username character varying(255) NOT NULL,
    password character varying(60),
    secret text,
    twofactortype character varying(50) DEFAULT 'NOT_ENABLED'::character varying NOT NULL,
    externalauth boolean,
    openid text,
    ldapid text,
    passwordlastupdated timestamp without time zone,
    lastlogin timestamp without time zone,
    disabled boolean,
    accountexpiry timestamp without time zone,
    surname character varying(160) NOT NULL,
    firstname character varying(160) NOT NULL,
    name character varying(321) GENERATED ALWAYS AS (((firstname)::text || ' '::text) || (surname)::text) STORED NOT NULL,
    email character varying(160),
    dataviewmaxorgunitlevel integer,
    attributevalues jsonb DEFAULT '{}'::jsonb
);
ALTER TABLE ONLY userinfo ADD CONSTRAINT userinfo_pkey PRIMARY KEY (userinfoid);
ALTER TABLE ONLY userinfo ADD CONSTRAINT uk_userinfo_uid UNIQUE (uid);
ALTER TABLE ONLY userinfo ADD CONSTRAINT uk_userinfo_code UNIQUE (code);
ALTER TABLE ONLY userinfo ADD CONSTRAINT uk_userinfo_username UNIQUE (username);
ALTER TABLE ONLY userinfo ADD CONSTRAINT uk_userinfo_ldapid UNIQUE (ldapid);

CREATE TABLE usergroup (
    usergroupid bigint NOT NULL,
    uid character varying(11) NOT NULL,
    code character varying(50),
    created timestamp without time zone NOT NULL,
    lastupdated timestamp without time zone NOT NULL,
    lastupdatedby bigint,
    name character varying(230) NOT NULL,
    userid bigint,
    translations jsonb DEFAULT '[]'::jsonb,
    attributevalues jsonb DEFAULT '{}'::jsonb,
    sharing jsonb DEFAULT '{}'::jsonb
);
ALTER TABLE ONLY usergroup ADD CONSTRAINT usergroup_pkey PRIMARY KEY (usergroupid);
ALTER TABLE ONLY usergroup ADD CONSTRAINT uk_usergroup_uid UNIQUE (uid);
ALTER TABLE ONLY usergroup ADD CONSTRAINT uk_usergroup_name UNIQUE (name);

CREATE TABLE usergroupmembers (
    userid bigint NOT NULL,
    usergroupid bigint NOT NULL
);
ALTER TABLE ONLY usergroupmembers ADD CONSTRAINT usergroupmembers_pkey PRIMARY KEY (usergroupid, userid);
ALTER TABLE ONLY usergroupmembers
    ADD CONSTRAINT fk_usergroupmembers_userid FOREIGN KEY (userid) REFERENCES userinfo(userinfoid);
ALTER TABLE ONLY usergroupmembers
    ADD CONSTRAINT fk_usergroupmembers_usergroupid FOREIGN KEY (usergroupid) REFERENCES usergroup(usergroupid);

CREATE TABLE userrole (
    userroleid bigint NOT NULL,
    uid character varying(11) NOT NULL,
    code character varying(50),
    created timestamp without time zone NOT NULL,
    lastupdated timestamp without time zone NOT NULL,
    lastupdatedby bigint,
    name character varying(230) NOT NULL,
    description text,
    userid bigint,
    translations jsonb DEFAULT '[]'::jsonb,
    sharing jsonb DEFAULT '{}'::jsonb
);
ALTER TABLE ONLY userrole ADD CONSTRAINT userrole_pkey PRIMARY KEY (userroleid);
ALTER TABLE ONLY userrole ADD CONSTRAINT uk_userrole_uid UNIQUE (uid);
ALTER TABLE ONLY userrole ADD CONSTRAINT uk_userrole_name UNIQUE (name);

CREATE TABLE userrolemembers (
    userroleid bigint NOT NULL,
    userid bigint NOT NULL
);
ALTER TABLE ONLY userrolemembers ADD CONSTRAINT userrolemembers_pkey PRIMARY KEY (userid, userroleid);
ALTER TABLE ONLY userrolemembers
    ADD CONSTRAINT fk_userrolemembers_userid FOREIGN KEY (userid) REFERENCES userinfo(userinfoid);
ALTER TABLE ONLY userrolemembers
    ADD CONSTRAINT fk_userrolemembers_userroleid FOREIGN KEY (userroleid) REFERENCES userrole(userroleid);

CREATE TABLE userroleauthorities (
    userroleid bigint NOT NULL,
    authority character varying(255)
);
ALTER TABLE ONLY userroleauthorities
    ADD CONSTRAINT userroleauthorities_unique_authority UNIQUE (userroleid, authority);
ALTER TABLE ONLY userroleauthorities
    ADD CONSTRAINT fk_userroleauthorities_userroleid FOREIGN KEY (userroleid) REFERENCES userrole(userroleid);

CREATE TABLE userrolerestrictions (
    userroleid integer NOT NULL,
    restriction character varying(255)
);

-- Data capture org units (usermembership) and data view org units.
CREATE TABLE usermembership (
    organisationunitid bigint NOT NULL,
    userinfoid bigint NOT NULL
);
ALTER TABLE ONLY usermembership ADD CONSTRAINT usermembership_pkey PRIMARY KEY (userinfoid, organisationunitid);
ALTER TABLE ONLY usermembership
    ADD CONSTRAINT fk_usermembership_userinfoid FOREIGN KEY (userinfoid) REFERENCES userinfo(userinfoid);
ALTER TABLE ONLY usermembership
    ADD CONSTRAINT fk_usermembership_organisationunitid FOREIGN KEY (organisationunitid) REFERENCES organisationunit(organisationunitid);

CREATE TABLE userdatavieworgunits (
    userinfoid bigint NOT NULL,
    organisationunitid bigint NOT NULL
);
ALTER TABLE ONLY userdatavieworgunits ADD CONSTRAINT userdatavieworgunits_pkey PRIMARY KEY (userinfoid, organisationunitid);
ALTER TABLE ONLY userdatavieworgunits
    ADD CONSTRAINT fk_userdatavieworgunits_userinfoid FOREIGN KEY (userinfoid) REFERENCES userinfo(userinfoid);
ALTER TABLE ONLY userdatavieworgunits
    ADD CONSTRAINT fk_userdatavieworgunits_organisationunitid FOREIGN KEY (organisationunitid) REFERENCES organisationunit(organisationunitid);

-- Personal access tokens: key is the lowercase hex SHA-256 of the whole token,
-- createdby its owner (userinfo.userinfoid), expire milliseconds since 1970,
-- attributes the JSON array of its IP, method and referrer lists.
CREATE TABLE api_token (
    apitokenid bigint NOT NULL,
    uid character varying(11) NOT NULL,
    code character varying(50),
    created timestamp without time zone NOT NULL,
    lastupdated timestamp without time zone NOT NULL,
    lastupdatedby bigint NOT NULL,
    createdby bigint NOT NULL,
    version integer,
    type character varying(50),
    expire bigint,
    key character varying(128) NOT NULL,
    attributes jsonb DEFAULT '{}'::jsonb,
    translations jsonb DEFAULT '[]'::jsonb,
    sharing jsonb DEFAULT '{}'::jsonb
);
ALTER TABLE ONLY api_token ADD CONSTRAINT api_token_pkey PRIMARY KEY (apitokenid);
ALTER TABLE ONLY api_token ADD CONSTRAINT uk_api_token_uid UNIQUE (uid);
ALTER TABLE ONLY api_token ADD CONSTRAINT uk_api_token_code UNIQUE (code);
ALTER TABLE ONLY api_token ADD CONSTRAINT uk_api_token_key UNIQUE (key);

-- System settings (plain text values since 2.42 V2_42_18): credentialsExpires
-- (months; 0 or absent: passwords never expire) is read by authentication.
CREATE TABLE systemsetting (
    systemsettingid bigint NOT NULL,
    name character varying(255) NOT NULL,
    value text
);
ALTER TABLE ONLY systemsetting ADD CONSTRAINT systemsetting_pkey PRIMARY KEY (systemsettingid);
ALTER TABLE ONLY systemsetting ADD CONSTRAINT uk_systemsetting_name UNIQUE (name);
