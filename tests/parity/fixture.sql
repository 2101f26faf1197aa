-- The parity fixture: a few hand-written objects and ten data values with
-- known answers for every export filter and id scheme (tests/parity).
-- Loaded after deploy/demo/schema.sql into a fresh database by parity_test.
--
-- Attribute "AttrExtId01" holds external ids in attributevalues; some objects
-- have none, some have no code, two org units share the name "Clinic".

SET client_min_messages = warning;

INSERT INTO categorycombo (categorycomboid, uid, code, created, lastupdated, name,
                           datadimensiontype, skiptotal) VALUES
  (1, 'bjDvmb4bfuf', 'default', '2020-01-01', '2020-01-01', 'default', 'DISAGGREGATION', false),
  (2, 'ccFunding01', 'CC_FUNDING', '2020-01-01', '2020-01-01', 'Funding and project',
   'ATTRIBUTE', false);

INSERT INTO categoryoption (categoryoptionid, uid, code, created, lastupdated, name, shortname)
VALUES
  (11, 'xYerKDKCefk', 'default', '2020-01-01', '2020-01-01', 'default', 'default'),
  (12, 'coPartnerA1', 'CO_PA', '2020-01-01', '2020-01-01', 'Partner A', 'Partner A'),
  (13, 'coPartnerB1', 'CO_PB', '2020-01-01', '2020-01-01', 'Partner B', 'Partner B'),
  (14, 'coProject01', 'CO_P1', '2020-01-01', '2020-01-01', 'Project 1', 'Project 1'),
  (15, 'coProject02', 'CO_P2', '2020-01-01', '2020-01-01', 'Project 2', 'Project 2');

-- 21 default; 22..24 the attribute combos of ccFunding01; 25 a disaggregation
-- without code or attribute value.
INSERT INTO categoryoptioncombo (categoryoptioncomboid, uid, code, created, lastupdated, name,
                                 ignoreapproval, attributevalues) VALUES
  (21, 'HllvX50cXC0', 'default', '2020-01-01', '2020-01-01', 'default', false,
   '{"AttrExtId01": {"value": "EXT-DEFAULT"}}'),
  (22, 'aocAP1x0022', 'AOC_AP1', '2020-01-01', '2020-01-01', 'Partner A, Project 1', false,
   '{"AttrExtId01": {"value": "EXT-AP1"}}'),
  (23, 'aocBP1x0023', NULL, '2020-01-01', '2020-01-01', 'Partner B, Project 1', false, '{}'),
  (24, 'aocAP2x0024', 'AOC_AP2', '2020-01-01', '2020-01-01', 'Partner A, Project 2', false, '{}'),
  (25, 'cocOther025', NULL, '2020-01-01', '2020-01-01', 'Other', false, '{}');

INSERT INTO categorycombos_optioncombos (categoryoptioncomboid, categorycomboid) VALUES
  (21, 1), (22, 2), (23, 2), (24, 2), (25, 1);

INSERT INTO categoryoptioncombos_categoryoptions (categoryoptioncomboid, categoryoptionid) VALUES
  (21, 11), (22, 12), (22, 14), (23, 13), (23, 14), (24, 12), (24, 15), (25, 11);

INSERT INTO dataelement (dataelementid, uid, code, created, lastupdated, name, shortname,
                         valuetype, domaintype, aggregationtype, categorycomboid,
                         zeroissignificant, attributevalues) VALUES
  (101, 'deAlpha0001', 'DE_A', '2020-01-01', '2020-01-01', 'Alpha', 'Alpha', 'NUMBER',
   'AGGREGATE', 'SUM', 1, false, '{"AttrExtId01": {"value": "EXT-A"}}'),
  (102, 'deBravo0002', 'DE_B', '2020-01-01', '2020-01-01', 'Bravo', 'Bravo', 'NUMBER',
   'AGGREGATE', 'SUM', 1, false, '{}'),
  (103, 'deCharl0003', NULL, '2020-01-01', '2020-01-01', 'Charlie', 'Charlie', 'NUMBER',
   'AGGREGATE', 'SUM', 1, false, '{"AttrExtId01": {"value": "EXT-C"}}'),
  (104, 'deDelta0004', 'DE_D', '2020-01-01', '2020-01-01', 'Delta', 'Delta', 'NUMBER',
   'AGGREGATE', 'SUM', 1, false, '{}');

INSERT INTO dataset (datasetid, uid, code, created, lastupdated, name, shortname, periodtypeid,
                     categorycomboid, mobile, attributevalues) VALUES
  (201, 'dsMonthly01', 'DS_MONTHLY', '2020-01-01', '2020-01-01', 'Monthly set', 'Monthly set',
   8, 2, false, '{"AttrExtId01": {"value": "EXT-DS"}}'),
  (202, 'dsOther0002', NULL, '2020-01-01', '2020-01-01', 'Other set', 'Other set', 8, 1, false,
   '{}');

INSERT INTO datasetelement (datasetelementid, datasetid, dataelementid) VALUES
  (1, 201, 101), (2, 201, 102), (3, 202, 103);

INSERT INTO dataelementgroup (dataelementgroupid, uid, code, created, lastupdated, name,
                              shortname, attributevalues) VALUES
  (301, 'degGroup001', 'DEG_1', '2020-01-01', '2020-01-01', 'Element group one', 'DEG one',
   '{"AttrExtId01": {"value": "EXT-DEG"}}');

INSERT INTO dataelementgroupmembers (dataelementid, dataelementgroupid) VALUES
  (103, 301), (104, 301);

INSERT INTO organisationunit (organisationunitid, uid, code, created, lastupdated, name,
                              shortname, parentid, path, hierarchylevel, openingdate,
                              attributevalues) VALUES
  (401, 'ouRoot00001', 'OU_ROOT', '2020-01-01', '2020-01-01', 'Root', 'Root', NULL,
   '/ouRoot00001', 1, '2000-01-01', '{}'),
  (402, 'ouClinA0001', 'OU_A', '2020-01-01', '2020-01-01', 'Clinic', 'Clinic A', 401,
   '/ouRoot00001/ouClinA0001', 2, '2000-01-01', '{"AttrExtId01": {"value": "EXT-OU-A"}}'),
  (403, 'ouClinB0002', NULL, '2020-01-01', '2020-01-01', 'Clinic', 'Clinic B', 401,
   '/ouRoot00001/ouClinB0002', 2, '2000-01-01', '{}'),
  (404, 'ouClinC0003', 'OU_C', '2020-01-01', '2020-01-01', 'Clinic C', 'Clinic C', 401,
   '/ouRoot00001/ouClinC0003', 2, '2000-01-01', '{}');

INSERT INTO orgunitgroup (orgunitgroupid, uid, code, created, lastupdated, name, shortname,
                          attributevalues) VALUES
  (501, 'ougGroup001', 'OUG_1', '2020-01-01', '2020-01-01', 'Unit group one', 'OUG one',
   '{"AttrExtId01": {"value": "EXT-OUG-1"}}'),
  (502, 'ougGroup002', 'OUG_2', '2020-01-01', '2020-01-01', 'Unit group two', 'OUG two', '{}');

-- ouClinA0001 is in both groups.
INSERT INTO orgunitgroupmembers (organisationunitid, orgunitgroupid) VALUES
  (402, 501), (403, 501), (402, 502);

-- 202401, 202402, 2024Q1 (periodtype ids from schema.sql: Monthly 8, Quarterly 10).
INSERT INTO period (periodid, periodtypeid, startdate, enddate) VALUES
  (601, 8, '2024-01-01', '2024-01-31'),
  (602, 8, '2024-02-01', '2024-02-29'),
  (603, 10, '2024-01-01', '2024-03-31');

-- Each value is its own number, so that a test can name the rows it expects.
INSERT INTO datavalue (dataelementid, periodid, sourceid, categoryoptioncomboid,
                       attributeoptioncomboid, value, storedby, created, lastupdated, comment,
                       followup, deleted) VALUES
  (101, 601, 402, 21, 21, '1', 'admin', '2024-02-01 10:00:00', '2024-02-01 10:00:00', NULL,
   false, false),
  (102, 601, 402, 21, 21, '2', 'admin', '2024-02-01 10:00:00', '2024-03-15 12:30:00.5',
   'checked', true, false),
  (103, 601, 403, 21, 21, '3', NULL, '2024-02-01 10:00:00', '2024-04-01 00:00:00', NULL, NULL,
   false),
  (104, 602, 404, 21, 21, '4', 'admin', '2024-03-01 10:00:00', '2024-03-01 10:00:00', NULL,
   false, false),
  (101, 602, 403, 21, 22, '5', 'admin', '2024-03-01 10:00:00', '2024-03-01 10:00:00', NULL,
   false, false),
  (101, 602, 403, 21, 23, '6', 'admin', '2024-03-01 10:00:00', '2024-03-01 10:00:00', NULL,
   false, false),
  (101, 602, 403, 21, 24, '7', 'admin', '2024-03-01 10:00:00', '2024-03-01 10:00:00', NULL,
   false, false),
  (102, 602, 402, 21, 21, '8', 'admin', '2024-03-01 10:00:00', '2024-03-02 10:00:00', NULL,
   false, true),
  (104, 603, 402, 21, 21, '9', 'admin', '2024-04-01 10:00:00', '2999-01-01 00:00:00', NULL,
   false, false),
  (101, 601, 401, 25, 21, '10', 'admin', '2024-02-01 10:00:00', '2024-02-01 10:00:00', NULL,
   false, false);

INSERT INTO completedatasetregistration (datasetid, periodid, sourceid, attributeoptioncomboid,
                                         date, storedby, completed) VALUES
  (201, 601, 402, 21, '2024-02-05 08:00:00', 'admin', true);
