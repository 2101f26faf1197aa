-- Deterministic synthetic data for the DHIS2 schema subset in schema.sql.
--
--   SELECT dvexport_demo_generate('small');  -- ~10,000 values, for tests
--   SELECT dvexport_demo_generate('sl');     -- ~1,000,000 values, Sierra Leone shaped
--   SELECT dvexport_demo_generate('sl4');    -- ~4,000,000 values: sl with 4x the facilities
--   SELECT dvexport_demo_generate('national'); -- ~12,000,000 values: a large country's database
--
-- Same size, same data, every run: no random(), no now(); every choice comes
-- from dvexport_demo_hash() of the row's ids, and every uid from md5 of a seed
-- (dvexport_demo_uid). Seeds do not depend on the size, so an object that
-- exists in both sizes (e.g. data element 1, facility 1) has the same uid.
--
-- Shape (sl / small):
--   org units   1 country (Sierra Leone, ImspTQPwCqd, OU_525), 13 / 3 real
--               districts, 150 / 6 chiefdoms, 1200 / 30 facilities, plus a
--               second root "Outside Sierra Leone" with one facility (level 1, 2)
--   data elems  250 / 40, codes DE_<id> (two without a code)
--   data sets   4 monthly + 1 quarterly; one uses the attribute combo
--               "Funding Partner" (non-default attribute option combos)
--   periods     24 monthly 2023-01..2024-12 (the bulk), 8 quarterly, and one or
--               a few of every other period type with a little data each
-- national: sl's data sets, elements and combos over 5 years (60 monthly periods
-- 2020-01..2024-12, 20 quarterly) at 2,000 facilities, about 3x as dense (a large
-- country's facilities report more of each form): ~12x sl's values, for scale.
--   users       admin (superuser), district, programme, partner, disabled; their
--               groups, roles, org units, the sharing of data sets, category
--               options and the other metadata, and 7 personal access tokens
--               (docs/DEMO.md: who may read what, the passwords and tokens)
-- Awkward text (quotes, backslashes, commas, CR/LF/tab, padding, '#', control
-- characters, non-ASCII, non-BMP) sits in data element 1 "Awkward text sample"
-- at facility 1, monthly periods 2023-01..2024-12, default option combos.

SET client_min_messages = warning;

-- An 11-character DHIS2 uid (letter, then 10 of [0-9a-zA-Z]) derived from seed.
CREATE OR REPLACE FUNCTION dvexport_demo_uid(seed text) RETURNS character varying
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT string_agg(
           CASE WHEN i = 0
             THEN substr('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', get_byte(h, 0) % 52 + 1, 1)
             ELSE substr('0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ', get_byte(h, i) % 62 + 1, 1)
           END, '' ORDER BY i)
  FROM (SELECT decode(md5('dvexport-demo/' || seed), 'hex') AS h) s, generate_series(0, 10) AS i
$$;

-- A 24-bit hash of key k, salted (Knuth multiplicative hashing on 31 bits of
-- k xor salt). A plain SQL expression so that the planner inlines it.
CREATE OR REPLACE FUNCTION dvexport_demo_hash(k bigint, salt bigint) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE AS $$
  SELECT ((((k # salt) & 2147483647) * 2654435761) & 4294967295) >> 8
$$;

CREATE OR REPLACE FUNCTION dvexport_demo_generate(size text) RETURNS bigint
LANGUAGE plpgsql AS $fn$
DECLARE
  n_districts int;
  n_chiefdoms int;
  n_facilities int;
  n_des int;
  -- Per mille: chance that a reported (data element, option combo) has a
  -- value, for monthly data sets, quarterly data set, and unassigned elements.
  density int;
  density_quarterly int;
  density_unassigned int;
  n1 int; n2 int; n3 int; n4 int; n5 int; n_shared int;
  meta_ts constant timestamp := '2013-03-04 10:11:12.345';
  attr constant text := dvexport_demo_uid('attribute:external-id');
  users constant text[] := ARRAY['admin', 'system', 'mchp_user', 'chc.officer', 'dhmt_bo',
                                 'android', 'import_2023'];
  texts constant text[] := ARRAY['Functional', 'Not functional', 'Stock out', 'Partially stocked',
                                 'Yes', 'No', 'Solar fridge', 'Kerosene fridge', 'Ça marche', 'N/A'];
  long_texts constant text[] := ARRAY[
    'Supervisor noted that the "cold chain" log was incomplete, and the fridge temperature was not recorded for 3 days.',
    'Outreach to 4 villages; 2 sessions cancelled (rain).',
    'Registers audited by DHMT, no discrepancies found',
    'Staff: 1 CHO, 2 MCH aides, 1 vaccinator; one post vacant since March'];
  comments constant text[] := ARRAY['Verified by DHMT', 'Late report', 'Stock-out of registers',
                                    'Data entered from paper form', 'Revised after supervision visit',
                                    'Outreach session included', 'Counted twice, corrected',
                                    'Value estimated'];
  places constant text[] := ARRAY['Ba', 'Bo', 'Bu', 'Da', 'Ga', 'Gbo', 'Ja', 'Ka', 'Ko', 'Ku', 'La',
                                  'Lu', 'Ma', 'Mo', 'Nya', 'Pa', 'Sa', 'Se', 'Ta', 'To', 'Wa',
                                  'Ya', 'Dodo', 'Kam', 'Nie'];
  place_ends constant text[] := ARRAY['ma', 'ndu', 'kor', 'bla', 'hun', 'wo', 'ti', 'lor', 'ne',
                                      'ra', 'gbe', 'ya'];
  de_stems constant text[] := ARRAY[
    'ANC 1st visit', 'ANC 2nd visit', 'ANC 3rd visit', 'ANC 4th or more visits', 'BCG doses given',
    'Measles doses given', 'Yellow fever doses given', 'Penta1 doses given', 'Penta2 doses given',
    'Penta3 doses given', 'OPV0 doses given', 'Malaria cases treated', 'Malaria RDT positive',
    'Diarrhoea cases', 'Pneumonia cases', 'Deliveries by skilled attendant', 'Live births',
    'Still births', 'Low birth weight', 'Maternal deaths', 'Family planning new users',
    'IPT 1st dose', 'IPT 2nd dose', 'LLITN given', 'Vitamin A supplements', 'TB cases notified',
    'HIV tests done', 'HIV positive', 'Outpatient visits', 'Inpatient admissions'];
  de_qualifiers constant text[] := ARRAY['Community', 'Referral', 'Outreach campaign',
                                         'Private sector', 'School', 'Catch-up', 'Emergency',
                                         'Urban'];
  -- The first bulk month and quarter (the bulk ends with 2024-12 in every size).
  bulk_start date := date '2023-01-01';
  n_values bigint;
  admin_uid text;
  g_hmis text;
  g_child text;
  g_partner text;
BEGIN
  IF size = 'small' THEN
    n_districts := 3; n_chiefdoms := 6; n_facilities := 30; n_des := 40;
    density := 380; density_quarterly := 500; density_unassigned := 200;
  ELSIF size = 'sl' THEN
    n_districts := 13; n_chiefdoms := 150; n_facilities := 1200; n_des := 250;
    density := 170; density_quarterly := 300; density_unassigned := 40;
  ELSIF size = 'sl4' THEN
    -- sl with four times the facilities (the same chiefdoms): ~4,000,000 values, for scaling.
    n_districts := 13; n_chiefdoms := 150; n_facilities := 4800; n_des := 250;
    density := 170; density_quarterly := 300; density_unassigned := 40;
  ELSIF size = 'national' THEN
    -- Issue 22: a national database, ~12,000,000 values (10-12x sl), so that the benchmark
    -- sees what a large country's export costs. 2,000 facilities over 5 years give 4.2x sl's
    -- facility-months; densities about 2.9x sl's give the rest.
    n_districts := 13; n_chiefdoms := 150; n_facilities := 2000; n_des := 250;
    density := 490; density_quarterly := 860; density_unassigned := 115;
    bulk_start := date '2020-01-01';
  ELSE
    RAISE EXCEPTION 'dvexport_demo_generate: size must be small, sl, sl4 or national, not %', size;
  END IF;
  IF EXISTS (SELECT 1 FROM datavalue) OR EXISTS (SELECT 1 FROM organisationunit) THEN
    RAISE EXCEPTION 'dvexport_demo_generate: the tables are not empty';
  END IF;

  -- One plan, one row order: no parallel workers, enough memory to sort.
  SET LOCAL max_parallel_workers_per_gather = 0;
  SET LOCAL work_mem = '256MB';
  SET LOCAL maintenance_work_mem = '512MB';

  -- Data element blocks: data sets 1..5, then elements in no data set.
  n1 := round(n_des * 0.24); n2 := round(n_des * 0.24); n3 := round(n_des * 0.20);
  n4 := round(n_des * 0.12); n5 := round(n_des * 0.08);
  n_shared := ceil(n1 / 10.0);  -- elements 2..1+n_shared are in data sets 1 and 4

  -- Category combos and option combos. The default uids are DHIS2's; Fixed and
  -- Outreach are the Sierra Leone demo's (reference §8); the rest are ours.
  INSERT INTO categorycombo (categorycomboid, uid, code, created, lastupdated, name,
                             datadimensiontype, skiptotal)
  VALUES (1001, 'bjDvmb4bfuf', 'default', meta_ts, meta_ts, 'default', 'DISAGGREGATION', false),
         (1002, dvexport_demo_uid('cc:location'), 'CC_LOCATION', meta_ts, meta_ts,
          'Location Fixed/Outreach', 'DISAGGREGATION', false),
         (1003, dvexport_demo_uid('cc:sex-age'), 'CC_SEX_AGE', meta_ts, meta_ts, 'Sex and Age',
          'DISAGGREGATION', false),
         (1004, dvexport_demo_uid('cc:funding-partner'), NULL, meta_ts, meta_ts,
          'Funding Partner', 'ATTRIBUTE', false),
         -- For ADX's errors: a category without code, an option without code.
         (1005, dvexport_demo_uid('cc:donor'), 'CC_DONOR', meta_ts, meta_ts, 'Donor',
          'ATTRIBUTE', false),
         (1006, dvexport_demo_uid('cc:programme'), 'CC_PROGRAMME', meta_ts, meta_ts, 'Programme',
          'ATTRIBUTE', false);

  INSERT INTO categoryoptioncombo (categoryoptioncomboid, uid, code, created, lastupdated, name,
                                   ignoreapproval, attributevalues)
  SELECT c.id, c.uid, c.code, meta_ts, meta_ts, c.name, false,
         CASE WHEN c.ext IS NULL THEN '{}'::jsonb
              ELSE jsonb_build_object(attr, jsonb_build_object('value', c.ext)) END
  FROM (VALUES
    (2001, 'HllvX50cXC0', 'default', 'default', 'EXT-COC-default'),
    (2002, 'pq2XI5kz2BY', 'COC_167661', 'Fixed', 'EXT-COC-fixed'),
    (2003, 'PT59n8BQbqM', 'COC_167660', 'Outreach', 'EXT-COC-outreach'),
    (2004, dvexport_demo_uid('coc:male-under-5'), 'COC_200004', 'Male, <5y', 'EXT-COC-m<5'),
    (2005, dvexport_demo_uid('coc:female-under-5'), NULL, 'Female, <5y', NULL),
    (2006, dvexport_demo_uid('coc:male-5-plus'), 'COC_200006', 'Male, 5y+', 'EXT-COC-m5+'),
    (2007, dvexport_demo_uid('coc:female-5-plus'), NULL, 'Female, 5y+', NULL),
    (2008, dvexport_demo_uid('coc:partner-a'), 'COC_200008', 'Partner A', 'EXT-AOC-A'),
    (2009, dvexport_demo_uid('coc:partner-b'), NULL, 'Partner B', 'EXT-AOC-B'),
    (2010, dvexport_demo_uid('coc:partner-c'), 'COC_200010', NULL, NULL),
    (2011, dvexport_demo_uid('coc:donor-x'), 'COC_200011', 'Donor X', NULL),
    (2012, dvexport_demo_uid('coc:programme-y'), 'COC_200012', 'Programme Y', NULL)
  ) AS c(id, uid, code, name, ext);

  INSERT INTO categorycombos_optioncombos (categoryoptioncomboid, categorycomboid)
  VALUES (2001, 1001), (2002, 1002), (2003, 1002), (2004, 1003), (2005, 1003), (2006, 1003),
         (2007, 1003), (2008, 1004), (2009, 1004), (2010, 1004), (2011, 1005), (2012, 1006);

  -- Category options and the options of each option combo.
  INSERT INTO categoryoption (categoryoptionid, uid, code, created, lastupdated, name, shortname)
  VALUES (3001, 'xYerKDKCefk', 'default', meta_ts, meta_ts, 'default', 'default'),
         (3002, dvexport_demo_uid('co:fixed'), 'CO_FIXED', meta_ts, meta_ts, 'Fixed', 'Fixed'),
         (3003, dvexport_demo_uid('co:outreach'), 'CO_OUTREACH', meta_ts, meta_ts, 'Outreach',
          'Outreach'),
         (3004, dvexport_demo_uid('co:male'), 'CO_MALE', meta_ts, meta_ts, 'Male', 'Male'),
         (3005, dvexport_demo_uid('co:female'), 'CO_FEMALE', meta_ts, meta_ts, 'Female', 'Female'),
         (3006, dvexport_demo_uid('co:under-5'), 'CO_UNDER_5', meta_ts, meta_ts, '<5y', '<5y'),
         (3007, dvexport_demo_uid('co:5-plus'), 'CO_5_PLUS', meta_ts, meta_ts, '5y+', '5y+'),
         (3008, dvexport_demo_uid('co:partner-a'), 'CO_PARTNER_A', meta_ts, meta_ts, 'Partner A',
          'Partner A'),
         (3009, dvexport_demo_uid('co:partner-b'), 'CO_PARTNER_B', meta_ts, meta_ts, 'Partner B',
          'Partner B'),
         (3010, dvexport_demo_uid('co:partner-c'), 'CO_PARTNER_C', meta_ts, meta_ts, 'Partner C',
          'Partner C'),
         (3011, dvexport_demo_uid('co:donor-x'), 'CO_DONOR_X', meta_ts, meta_ts, 'Donor X',
          'Donor X'),
         (3012, dvexport_demo_uid('co:programme-y'), NULL, meta_ts, meta_ts, 'Programme Y',
          'Programme Y');
  INSERT INTO categoryoptioncombos_categoryoptions (categoryoptioncomboid, categoryoptionid)
  VALUES (2001, 3001), (2002, 3002), (2003, 3003), (2004, 3004), (2004, 3006), (2005, 3005),
         (2005, 3006), (2006, 3004), (2006, 3007), (2007, 3005), (2007, 3007), (2008, 3008),
         (2009, 3009), (2010, 3010), (2011, 3011), (2012, 3012);

  -- Categories (ADX names disaggregations by their codes): each combo's categories in order,
  -- each category's options. Donor has no code and Programme Y's option none, for ADX's errors.
  INSERT INTO category (categoryid, uid, code, created, lastupdated, name, shortname,
                        datadimensiontype, datadimension)
  VALUES (4001, 'GLevLNI9wkl', 'default', meta_ts, meta_ts, 'default', 'default',
          'DISAGGREGATION', false),
         (4002, dvexport_demo_uid('c:location'), 'LOCATION', meta_ts, meta_ts, 'Location',
          'Location', 'DISAGGREGATION', true),
         (4003, dvexport_demo_uid('c:sex'), 'SEX', meta_ts, meta_ts, 'Sex', 'Sex',
          'DISAGGREGATION', true),
         (4004, dvexport_demo_uid('c:age'), 'AGE', meta_ts, meta_ts, 'Age', 'Age',
          'DISAGGREGATION', true),
         (4005, dvexport_demo_uid('c:funding-partner'), 'FUNDING_PARTNER', meta_ts, meta_ts,
          'Funding Partner', 'Funding Partner', 'ATTRIBUTE', true),
         (4006, dvexport_demo_uid('c:donor'), NULL, meta_ts, meta_ts, 'Donor', 'Donor',
          'ATTRIBUTE', true),
         (4007, dvexport_demo_uid('c:programme'), 'PROGRAMME', meta_ts, meta_ts, 'Programme',
          'Programme', 'ATTRIBUTE', true);
  INSERT INTO categorycombos_categories (categorycomboid, sort_order, categoryid)
  VALUES (1001, 1, 4001), (1002, 1, 4002), (1003, 1, 4003), (1003, 2, 4004), (1004, 1, 4005),
         (1005, 1, 4006), (1006, 1, 4007);
  INSERT INTO categories_categoryoptions (categoryid, sort_order, categoryoptionid)
  VALUES (4001, 1, 3001), (4002, 1, 3002), (4002, 2, 3003), (4003, 1, 3004), (4003, 2, 3005),
         (4004, 1, 3006), (4004, 2, 3007), (4005, 1, 3008), (4005, 2, 3009), (4005, 3, 3010),
         (4006, 1, 3011), (4007, 1, 3012);

  -- Org units. Ids: country 100001, districts 100002.., chiefdoms 101001..,
  -- facilities 110001.., outside root 190001 and its facility 190002.
  INSERT INTO organisationunit (organisationunitid, uid, code, created, lastupdated, name, shortname,
                                parentid, path, hierarchylevel, openingdate, attributevalues)
  VALUES (100001, 'ImspTQPwCqd', 'OU_525', meta_ts, meta_ts, 'Sierra Leone', 'Sierra Leone', NULL,
          '/ImspTQPwCqd', 1, '1994-01-01', jsonb_build_object(attr, jsonb_build_object('value', 'SL')));

  INSERT INTO organisationunit (organisationunitid, uid, code, created, lastupdated, name, shortname,
                                parentid, path, hierarchylevel, openingdate, attributevalues)
  SELECT 100001 + d.i, d.uid, 'OU_' || (100001 + d.i), meta_ts, meta_ts, d.name, d.name, 100001,
         '/ImspTQPwCqd/' || d.uid, 2, '1994-01-01',
         jsonb_build_object(attr, jsonb_build_object('value', 'SL-D' || d.i))
  FROM (VALUES (1, 'O6uvpzGd5pu', 'Bo'), (2, 'fdc6uOvgoji', 'Bombali'), (3, 'lc3eMKXaEfw', 'Bonthe'),
               (4, 'jUb8gELQApl', 'Kailahun'), (5, 'PMa2VCrupOd', 'Kambia'),
               (6, 'kJq2mPyFEHo', 'Kenema'), (7, 'qhqAxPSTUXp', 'Koinadugu'),
               (8, 'Vth0fbpFcsO', 'Kono'), (9, 'jmIPBj66vD6', 'Moyamba'),
               (10, 'TEQlaapDQoK', 'Port Loko'), (11, 'bL4ooGhyHRQ', 'Pujehun'),
               (12, 'eIQbndfxQMb', 'Tonkolili'), (13, 'at6UHUQatSo', 'Western Area')
       ) AS d(i, uid, name)
  WHERE d.i <= n_districts
  ORDER BY d.i;

  INSERT INTO organisationunit (organisationunitid, uid, code, created, lastupdated, name, shortname,
                                parentid, path, hierarchylevel, openingdate, attributevalues)
  SELECT 101000 + c.i, u.uid, 'OU_' || (101000 + c.i), meta_ts, meta_ts, c.name, c.name, p.organisationunitid,
         p.path || '/' || u.uid, 3, '1994-01-01',
         jsonb_build_object(attr, jsonb_build_object('value', 'SL-C' || c.i))
  FROM (SELECT i, places[(i - 1) % 25 + 1] || place_ends[((i - 1) / 25) % 12 + 1] AS name
        FROM generate_series(1, n_chiefdoms) AS i) AS c
  CROSS JOIN LATERAL (SELECT dvexport_demo_uid('ou:chiefdom:' || c.i) AS uid) AS u
  JOIN organisationunit p ON p.organisationunitid = 100001 + ((c.i - 1) % n_districts) + 1
  ORDER BY c.i;

  -- Facilities. h drives the type (MCHP, CHP, CHC, Clinic, Hospital) and the
  -- name; every 20th facility copies the name and type of the one 10 before
  -- it (org unit names are not unique in DHIS2).
  CREATE TEMP TABLE t_fac ON COMMIT DROP AS
  SELECT f.i, (110000 + f.i)::bigint AS id, dvexport_demo_uid('ou:facility:' || f.i) AS uid,
         n.i AS name_i, dvexport_demo_hash(n.i, 11) AS h,
         101000 + ((f.i - 1) % n_chiefdoms) + 1 AS parent
  FROM generate_series(1, n_facilities) AS f(i)
  CROSS JOIN LATERAL (SELECT CASE WHEN f.i % 20 = 0 THEN f.i - 10 ELSE f.i END AS i) AS n;

  INSERT INTO organisationunit (organisationunitid, uid, code, created, lastupdated, name, shortname,
                                parentid, path, hierarchylevel, openingdate, closeddate,
                                attributevalues)
  SELECT f.id, f.uid, CASE WHEN f.i % 37 = 0 THEN NULL ELSE 'OU_' || f.id END, meta_ts, meta_ts,
         n.name, left(n.name, 50), f.parent, p.path || '/' || f.uid, 4,
         date '1970-01-01' + (dvexport_demo_hash(f.i, 12) % 15000)::int,
         CASE WHEN f.i % 97 = 0 THEN date '2024-06-30' END,
         CASE WHEN f.i % 11 = 0 THEN '{}'::jsonb
              ELSE jsonb_build_object(attr, jsonb_build_object('value', 'SL-F' || f.i)) END
  FROM t_fac f
  JOIN organisationunit p ON p.organisationunitid = f.parent
  CROSS JOIN LATERAL (
    SELECT places[(f.name_i - 1) % 25 + 1] || place_ends[((f.name_i - 1) / 25) % 12 + 1]
           || (ARRAY['', ' II', ' III', ' IV', ' V'])[(f.name_i - 1) / 300 % 5 + 1] || ' ' ||
           CASE WHEN f.h % 100 < 45 THEN 'MCHP' WHEN f.h % 100 < 75 THEN 'CHP'
                WHEN f.h % 100 < 93 THEN 'CHC' WHEN f.h % 100 < 97 THEN 'Clinic'
                ELSE 'Hospital' END AS name) AS n
  ORDER BY f.i;

  -- A second root: data under it must never come back for Sierra Leone.
  INSERT INTO organisationunit (organisationunitid, uid, code, created, lastupdated, name, shortname,
                                parentid, path, hierarchylevel, openingdate)
  VALUES (190001, dvexport_demo_uid('ou:outside-root'), 'OU_190001', meta_ts, meta_ts,
          'Outside Sierra Leone', 'Outside Sierra Leone', NULL,
          '/' || dvexport_demo_uid('ou:outside-root'), 1, '2000-01-01'),
         (190002, dvexport_demo_uid('ou:outside-facility'), 'OU_190002', meta_ts, meta_ts,
          'Border Post MCHP', 'Border Post MCHP', 190001,
          '/' || dvexport_demo_uid('ou:outside-root') || '/' || dvexport_demo_uid('ou:outside-facility'),
          2, '2000-01-01');

  -- Data elements. Element 1 holds the awkward text; 2 and 3 have awkward names.
  CREATE TEMP TABLE t_de ON COMMIT DROP AS
  SELECT i, (20000 + i)::bigint AS id,
         CASE WHEN i <= n1 THEN 1 WHEN i <= n1 + n2 THEN 2 WHEN i <= n1 + n2 + n3 THEN 3
              WHEN i <= n1 + n2 + n3 + n4 THEN 4 WHEN i <= n1 + n2 + n3 + n4 + n5 THEN 5
              ELSE 0 END AS ds,
         CASE WHEN i = 1 OR i % 19 = 3 THEN 'TEXT' WHEN i % 29 = 7 THEN 'BOOLEAN'
              WHEN i % 37 = 11 THEN 'LONG_TEXT' WHEN i % 17 = 0 THEN 'NUMBER'
              WHEN i % 13 = 6 THEN 'INTEGER' ELSE 'INTEGER_ZERO_OR_POSITIVE' END AS valuetype
  FROM generate_series(1, n_des) AS i;
  ALTER TABLE t_de ADD COLUMN catcombo bigint, ADD COLUMN name text;
  UPDATE t_de SET
    catcombo = CASE WHEN valuetype IN ('TEXT', 'BOOLEAN', 'LONG_TEXT') THEN 1001
                    WHEN i % 5 IN (1, 2) THEN 1002 WHEN i % 5 = 3 THEN 1003 ELSE 1001 END,
    name = CASE i
             WHEN 1 THEN 'Awkward text sample'
             WHEN 2 THEN 'Children <5 "screened", MUAC'
             WHEN 3 THEN 'Décès maternels (été) — 中文'
             ELSE de_stems[(i - 1) % 30 + 1]
                  || CASE WHEN (i - 1) / 30 = 0 THEN '' ELSE ' - ' || de_qualifiers[(i - 1) / 30] END
                  || CASE valuetype WHEN 'TEXT' THEN ' (remarks)' WHEN 'BOOLEAN' THEN ' reported'
                                    WHEN 'LONG_TEXT' THEN ' (narrative)' ELSE '' END
           END;

  INSERT INTO dataelement (dataelementid, uid, code, created, lastupdated, name, shortname, formname,
                           valuetype, domaintype, aggregationtype, categorycomboid,
                           zeroissignificant, attributevalues)
  SELECT id, dvexport_demo_uid('de:' || i), CASE WHEN i IN (7, 17) THEN NULL ELSE 'DE_' || id END,
         meta_ts, meta_ts, name,
         CASE WHEN length(name) <= 50 THEN name ELSE left(name, 42) || ' #' || i END, name,
         valuetype, 'AGGREGATE',
         CASE WHEN valuetype IN ('TEXT', 'BOOLEAN', 'LONG_TEXT') THEN 'NONE' ELSE 'SUM' END,
         catcombo, i % 7 = 0,
         CASE WHEN i % 9 = 0 THEN '{}'::jsonb
              ELSE jsonb_build_object(attr, jsonb_build_object('value', 'EXT-DE-' || i)) END
  FROM t_de ORDER BY i;

  -- Data sets: 1-4 monthly, 5 quarterly; 4 uses the attribute combo.
  INSERT INTO dataset (datasetid, uid, code, created, lastupdated, name, shortname, periodtypeid,
                       categorycomboid, mobile, expirydays, timelydays, attributevalues)
  SELECT 5000 + k, dvexport_demo_uid('ds:' || k), code, meta_ts, meta_ts, name, shortname, pt, cc,
         false, 0, 15, jsonb_build_object(attr, jsonb_build_object('value', 'EXT-DS-' || k))
  FROM (VALUES (1, 'DS_CHILD_HEALTH', 'Child Health', 'Child Health', 8, 1001),
               (2, 'DS_RH', 'Reproductive Health', 'Reproductive Health', 8, 1001),
               (3, 'DS_CMC', 'Clinical Monitoring Checklist', 'Clinical Monitoring', 8, 1001),
               (4, 'DS_PARTNER', 'Partner Support (Funding Partner)', 'Partner Support', 8, 1004),
               (5, 'DS_POP', 'Population & Infrastructure', 'Population & Infrastructure', 10, 1001)
       ) AS d(k, code, name, shortname, pt, cc)
  ORDER BY k;

  -- Two data sets without elements whose attribute combos ADX cannot name (see the
  -- categories); their uids sort after the others'.
  INSERT INTO dataset (datasetid, uid, code, created, lastupdated, name, shortname, periodtypeid,
                       categorycomboid, mobile, expirydays, timelydays)
  VALUES (5006, 'zzAdxDonor1', 'DS_ADX_DONOR', meta_ts, meta_ts, 'ADX: donor without code',
          'ADX donor', 8, 1005, false, 0, 15),
         (5007, 'zzAdxProgr1', 'DS_ADX_PROGRAMME', meta_ts, meta_ts,
          'ADX: programme option without code', 'ADX programme', 8, 1006, false, 0, 15);

  INSERT INTO datasetelement (datasetelementid, datasetid, dataelementid)
  SELECT 6000 + row_number() OVER (ORDER BY m.k, m.i), 5000 + m.k, 20000 + m.i
  FROM (SELECT ds AS k, i FROM t_de WHERE ds > 0
        UNION ALL
        SELECT 4, i FROM t_de WHERE i BETWEEN 2 AND 1 + n_shared) AS m;

  -- Groups, with overlapping and empty ones.
  INSERT INTO dataelementgroup (dataelementgroupid, uid, code, created, lastupdated, name, shortname)
  SELECT 8000 + k, dvexport_demo_uid('deg:' || k), code, meta_ts, meta_ts, name, name
  FROM (VALUES (1, 'DEG_IMM', 'Immunisation'), (2, 'DEG_MAT', 'Maternal Health'),
               (3, NULL, 'Malaria'), (4, 'DEG_UNASSIGNED', 'Not in any data set'),
               (5, 'DEG_EMPTY', 'Empty group')) AS g(k, code, name);
  INSERT INTO dataelementgroupmembers (dataelementid, dataelementgroupid)
  SELECT id, 8001 FROM t_de WHERE (ds = 1 AND i % 2 = 0) OR (ds = 0 AND i % 3 = 0)
  UNION ALL SELECT id, 8002 FROM t_de WHERE (ds = 2 AND i % 3 <> 0) OR i = 3
  UNION ALL SELECT id, 8003 FROM t_de WHERE i % 6 = 1
  UNION ALL SELECT id, 8004 FROM t_de WHERE ds = 0;

  INSERT INTO orgunitgroup (orgunitgroupid, uid, code, created, lastupdated, name, shortname)
  SELECT 7000 + k, dvexport_demo_uid('oug:' || k), code, meta_ts, meta_ts, name, name
  FROM (VALUES (1, 'OUG_CHC', 'CHC'), (2, 'OUG_CHP', 'CHP'), (3, 'OUG_MCHP', 'MCHP'),
               (4, 'OUG_CLINIC', 'Clinic'), (5, 'OUG_HOSPITAL', 'Hospital'),
               (6, 'OUG_PUBLIC', 'Public facilities'), (7, NULL, 'Rural'),
               (8, 'OUG_CHIEFDOM_HQ', 'Chiefdom HQ'), (9, 'OUG_EMPTY', 'Empty group')
       ) AS g(k, code, name);
  INSERT INTO orgunitgroupmembers (organisationunitid, orgunitgroupid)
  SELECT f.id, 7000 + CASE WHEN f.h % 100 < 45 THEN 3 WHEN f.h % 100 < 75 THEN 2
                           WHEN f.h % 100 < 93 THEN 1 WHEN f.h % 100 < 97 THEN 4 ELSE 5 END
  FROM t_fac f
  UNION ALL SELECT f.id, 7006 FROM t_fac f WHERE NOT (f.h % 100 BETWEEN 93 AND 96)
  UNION ALL SELECT f.id, 7007 FROM t_fac f WHERE dvexport_demo_hash(f.i, 13) % 3 <> 0
  UNION ALL SELECT 101000 + c, 7008 FROM generate_series(1, n_chiefdoms) AS c WHERE c % 4 = 1;

  -- Periods. Bulk: monthly 2023-01..2024-12 and quarterly 2023Q1..2024Q4
  -- (national: from 2020-01 and 2020Q1). The others get a little data each (or
  -- none: 2025-02). Ids are shuffled so that id order is not date order.
  CREATE TEMP TABLE t_pe ON COMMIT DROP AS
  SELECT 10000 + row_number() OVER (ORDER BY md5(x.pt || x.s::text)) AS id, x.pt, x.s AS startdate,
         x.e AS enddate, x.role
  FROM (
    SELECT 8 AS pt, m::date AS s, (m + interval '1 month - 1 day')::date AS e, 'month' AS role
    FROM generate_series(bulk_start, date '2024-12-01', interval '1 month') AS m
    UNION ALL
    SELECT 10, q::date, (q + interval '3 months - 1 day')::date, 'quarter'
    FROM generate_series(bulk_start, date '2024-10-01', interval '3 months') AS q
    UNION ALL
    SELECT pt, s::date, e::date, role FROM (VALUES
      -- The month before the bulk (2022-12; national: 2019-12).
      (8, (bulk_start - interval '1 month')::date, (bulk_start - interval '1 day')::date, 'misc'),
      (8, '2025-01-01', '2025-01-31', 'misc'),  -- after it
      (8, '2025-02-01', '2025-02-28', 'empty'), -- a period without data
      (1, '2024-01-01', '2024-01-01', 'misc'),
      (1, '2024-02-29', '2024-02-29', 'misc'),
      (1, '2024-12-31', '2024-12-31', 'misc'),
      (2, '2020-12-28', '2021-01-03', 'misc'),  -- 2020W53
      (2, '2024-01-01', '2024-01-07', 'misc'),  -- 2024W1
      (2, '2024-06-03', '2024-06-09', 'misc'),  -- 2024W23
      (2, '2024-12-30', '2025-01-05', 'misc'),  -- 2025W1, ends after 2024-12-31
      (3, '2024-01-03', '2024-01-09', 'misc'),
      (4, '2024-01-04', '2024-01-10', 'misc'),
      (5, '2024-01-06', '2024-01-12', 'misc'),
      (6, '2024-01-07', '2024-01-13', 'misc'),
      (7, '2024-01-01', '2024-01-14', 'misc'),
      (9, '2024-01-01', '2024-02-29', 'misc'),
      (9, '2024-11-01', '2024-12-31', 'misc'),
      (11, '2023-11-01', '2024-01-31', 'misc'),
      (12, '2024-01-01', '2024-06-30', 'misc'),
      (13, '2024-04-01', '2024-09-30', 'misc'),
      (14, '2023-11-01', '2024-04-30', 'misc'),
      (15, '2023-01-01', '2023-12-31', 'misc'),
      (15, '2024-01-01', '2024-12-31', 'misc'),
      (16, '2023-04-01', '2024-03-31', 'misc'),
      (17, '2023-07-01', '2024-06-30', 'misc'),
      (18, '2023-09-01', '2024-08-31', 'misc'),
      (19, '2023-10-01', '2024-09-30', 'misc'),
      (20, '2023-11-01', '2024-10-31', 'misc')
    ) AS v(pt, s, e, role)
  ) AS x;
  INSERT INTO period (periodid, periodtypeid, startdate, enddate)
  SELECT id, pt, startdate, enddate FROM t_pe ORDER BY id;

  -- Which facility reported which data set for which period (k = 0: the
  -- elements in no data set, "reported" always). Facility 1 always reports
  -- data sets 1 and 2; data set 4 comes from every fourth facility.
  CREATE TEMP TABLE t_report ON COMMIT DROP AS
  SELECT f.id AS ou, f.i AS fi, p.id AS pe, p.startdate, p.enddate, r.k,
         CASE WHEN r.k = 4 THEN 2008 + f.i % 3 ELSE 2001 END AS aoc,
         dvexport_demo_hash(f.id * 7919 + p.id * 104729 + r.k * 1299709, 3) AS h
  FROM t_fac f
  CROSS JOIN (VALUES (0, 1000), (1, 600), (2, 500), (3, 400), (4, 800), (5, 800)) AS r(k, rate)
  JOIN t_pe p ON p.role = CASE WHEN r.k = 5 THEN 'quarter' ELSE 'month' END
  WHERE (r.k <> 4 OR f.i % 4 = 0)
    AND ((f.i = 1 AND r.k IN (1, 2))
         OR dvexport_demo_hash(f.id * 7919 + p.id * 104729 + r.k * 1299709, 0) % 1000 < r.rate);

  -- (data set, element, option combo) pairs; element 1 only gets the awkward rows.
  CREATE TEMP TABLE t_pair ON COMMIT DROP AS
  SELECT m.k, d.id AS de, d.i AS de_i, d.valuetype, cc.categoryoptioncomboid AS coc
  FROM (SELECT ds AS k, i FROM t_de WHERE i > 1
        UNION ALL
        SELECT 4, i FROM t_de WHERE i BETWEEN 2 AND 1 + n_shared) AS m
  JOIN t_de d ON d.i = m.i
  JOIN categorycombos_optioncombos cc ON cc.categorycomboid = d.catcombo;

  -- Bulk insert without key, indexes or FKs; they are rebuilt below.
  ALTER TABLE datavalue DROP CONSTRAINT fk_datavalue_dataelementid,
                        DROP CONSTRAINT fk_datavalue_periodid,
                        DROP CONSTRAINT fk_datavalue_organisationunitid,
                        DROP CONSTRAINT fk_datavalue_categoryoptioncomboid,
                        DROP CONSTRAINT fk_datavalue_attributeoptioncomboid,
                        DROP CONSTRAINT datavalue_pkey;
  DROP INDEX in_datavalue_deleted;
  DROP INDEX in_datavalue_lastupdated;

  INSERT INTO datavalue (dataelementid, periodid, sourceid, categoryoptioncomboid,
                         attributeoptioncomboid, value, storedby, created, lastupdated, comment,
                         followup, deleted)
  SELECT c.de, c.pe, c.ou, c.coc, c.aoc,
         CASE c.valuetype
           WHEN 'INTEGER_ZERO_OR_POSITIVE' THEN (h.v % 250)::text
           WHEN 'INTEGER' THEN (h.v % 250 - 20)::text
           WHEN 'NUMBER' THEN CASE WHEN h.v % 3 = 0 THEN (h.v % 5000 / 10) || '.' || h.v % 10
                                   ELSE (h.v % 500)::text END
           WHEN 'BOOLEAN' THEN CASE WHEN h.v % 2 = 0 THEN 'true' ELSE 'false' END
           WHEN 'TEXT' THEN texts[h.v % 10 + 1]
           ELSE long_texts[h.v % 4 + 1]
         END,
         CASE WHEN h.s % 100 < 3 THEN NULL ELSE users[(h.s >> 8) % 7 + 1] END,
         t.created,
         t.created + CASE WHEN h.u % 5 = 0
                          THEN ((h.u >> 3) % 200) * interval '1 day'
                               + ((h.u >> 11) % 8192) * interval '1 second'
                               + ((h.t >> 14) % 1000) * interval '1 millisecond'
                          ELSE interval '0' END,
         CASE WHEN h.c % 1000 < 10 THEN comments[(h.c >> 10) % 8 + 1] END,
         CASE WHEN (h.c >> 14) % 10 < 6 THEN false WHEN (h.c >> 14) % 10 = 6 THEN true END,
         (h.s >> 12) % 100 = 0
  FROM (
    -- The bulk: reported data sets, a share of their (element, option combo) pairs.
    SELECT x.de, x.valuetype, x.coc, r.pe, r.ou, r.aoc, r.enddate, r.startdate,
           x.de * 1000003 + r.pe * 7919 + r.ou * 104729 + x.coc * 15485863 + r.aoc AS key
    FROM t_report r
    JOIN t_pair x ON x.k = r.k
    WHERE dvexport_demo_hash(x.de * 1000003 + r.pe * 7919 + r.ou * 104729 + x.coc * 15485863 + r.aoc, 0) % 1000
          < CASE r.k WHEN 0 THEN density_unassigned WHEN 5 THEN density_quarterly ELSE density END
    UNION ALL
    -- A little data in every other period, at facilities 1-8 and at the
    -- country, district 1 and chiefdom 1 levels; and monthly data for the
    -- facility outside Sierra Leone. Elements 2-4 only.
    SELECT x.de, x.valuetype, x.coc, p.id, o.id, 2001, p.enddate, p.startdate,
           x.de * 1000003 + p.id * 7919 + o.id * 104729 + x.coc * 15485863 + 2001
    FROM t_pe p
    JOIN (SELECT id, 'misc' AS role FROM t_fac WHERE i <= 8
          UNION ALL VALUES (100001::bigint, 'misc'), (100002, 'misc'), (101001, 'misc'),
                           (190002, 'month')) AS o(id, role) ON o.role = p.role
    JOIN (SELECT DISTINCT ON (de, coc) de, valuetype, coc FROM t_pair WHERE de_i BETWEEN 2 AND 4) AS x
      ON true
  ) AS c
  CROSS JOIN LATERAL (
    SELECT dvexport_demo_hash(c.key, 1) AS v, dvexport_demo_hash(c.key, 625341585) AS s,
           dvexport_demo_hash(c.key, 1759714724) AS t, dvexport_demo_hash(c.key, 461845907) AS u,
           dvexport_demo_hash(c.key, 1540483477) AS c) AS h
  -- Created 1-40 days after the period ends (after the month before the bulk
  -- for older periods);
  -- whole seconds, milliseconds or microseconds.
  CROSS JOIN LATERAL (
    SELECT greatest(c.enddate, bulk_start - 1)::timestamp + (1 + h.t % 40) * interval '1 day'
           + ((h.t >> 6) % 86400) * interval '1 second'
           + CASE h.u % 4 WHEN 0 THEN interval '0'
                          WHEN 1 THEN ((h.u >> 2) % 1000) * interval '1 millisecond'
                          ELSE ((h.u >> 2) % 1000000) * interval '1 microsecond' END AS created) AS t
  ORDER BY c.startdate, c.ou, c.de, c.coc, c.aoc;

  -- The awkward rows: data element 1 (TEXT), facility 1, one per month from
  -- 2023-01 (row 1) to 2024-12 (row 24); row 13 (2024-01) mixes everything.
  INSERT INTO datavalue (dataelementid, periodid, sourceid, categoryoptioncomboid,
                         attributeoptioncomboid, value, storedby, created, lastupdated, comment,
                         followup, deleted)
  SELECT 20001, p.id, 110001, 2001, 2001, a.value, a.storedby,
         coalesce(a.created, timestamp '2024-02-01 08:00:00.123456' + a.n * interval '1 hour'),
         coalesce(a.lastupdated, timestamp '2024-03-01 09:30:00.654321' + a.n * interval '1 hour'),
         a.comment, a.followup, a.deleted
  FROM (VALUES
    (1, 'He said "hello"', 'awkward', 'Quote " inside and "quoted"', NULL::timestamp, NULL::timestamp, false, false),
    (2, 'C:\temp\new\file', 'awkward', 'Back\slash \\ and \n (not a newline)', NULL, NULL, true, false),
    (3, 'a,b,c', 'awkward', 'Comma, separated, values', NULL, NULL, NULL, false),
    (4, E'line1\nline2', 'awkward', E'Multi\nline\ncomment', NULL, NULL, false, false),
    (5, E'crlf\r\nend', 'awkward', E'Carriage\rreturn', NULL, NULL, false, false),
    (6, E'tab\there', 'awkward', E'\tleading tab', NULL, NULL, false, false),
    (7, '  padded  ', 'awkward', ' leading and trailing spaces ', NULL, NULL, false, false),
    (8, '#hashtag', 'awkward', '#not a comment line', NULL, NULL, false, false),
    (9, 'ctl' || chr(1) || 'x' || chr(31) || 'y', 'awkward',
        'bell' || chr(7) || ' bs' || chr(8) || ' ff' || chr(12) || ' vt' || chr(11) || ' del' || chr(127),
        NULL, NULL, false, false),
    (10, 'Café é', 'awkward', 'Naïve café — 中文 测试', NULL, NULL, false, false),
    (11, '😀 grin', 'awkward', 'Emoji U+1F600: 😀, U+1F4A9: 💩', NULL, NULL, false, false),
    (12, E'line\u2028sep', 'awkward', E'para\u2029sep', NULL, NULL, false, false),
    (13, E'All: "q" \\ , \n \r \t # é 中 😀 ' || chr(1) || ' end', 'josé.ñúñez',
         E'All: "q" \\ , \n \r \t # é 中 😀 ' || chr(31) || ' end', NULL, NULL, true, false),
    (14, '', '', '', NULL, NULL, false, false),
    (15, NULL, 'awkward', 'Comment only, value is null', NULL, NULL, false, false),
    (16, '"quoted",value', 'awkward', '"', NULL, NULL, false, false),
    (17, '   ', NULL, E'\n', NULL, NULL, NULL, false),
    (18, repeat('x', 1000) || 'end', 'awkward', repeat('Long comment ', 200), NULL, NULL, false, false),
    (19, 'a/b</script>', 'awkward', 'Forward / slash', NULL, NULL, false, false),
    (20, '𝄞 G clef (U+1D11E)', 'awkward', '𐍈 hwair (U+10348)', NULL, NULL, false, false),
    (21, 'NULL', 'null', 'null', NULL, NULL, false, false),
    (22, '42', 'awkward', 'Microseconds .999999 must truncate to .999',
         timestamp '2024-01-31 23:59:59.999999', timestamp '2024-12-31 23:59:59.999500', false, false),
    (23, 'deleted row', 'awkward', 'Deleted: exported only with includeDeleted', NULL, NULL, true, true),
    (24, '0', 'josé.ñúñez', NULL, timestamp '2025-01-01 00:00:00', timestamp '2025-01-01 00:00:00', NULL, false)
  ) AS a(n, value, storedby, comment, created, lastupdated, followup, deleted)
  JOIN t_pe p ON p.role = 'month' AND p.startdate = date '2023-01-01' + (a.n - 1) * interval '1 month'
  ORDER BY a.n;

  ALTER TABLE datavalue ADD CONSTRAINT datavalue_pkey
    PRIMARY KEY (dataelementid, periodid, sourceid, categoryoptioncomboid, attributeoptioncomboid);
  CREATE INDEX in_datavalue_deleted ON datavalue USING btree (deleted);
  CREATE INDEX in_datavalue_lastupdated ON datavalue USING btree (lastupdated);
  ALTER TABLE datavalue
    ADD CONSTRAINT fk_datavalue_dataelementid FOREIGN KEY (dataelementid) REFERENCES dataelement(dataelementid),
    ADD CONSTRAINT fk_datavalue_periodid FOREIGN KEY (periodid) REFERENCES period(periodid),
    ADD CONSTRAINT fk_datavalue_organisationunitid FOREIGN KEY (sourceid) REFERENCES organisationunit(organisationunitid),
    ADD CONSTRAINT fk_datavalue_categoryoptioncomboid FOREIGN KEY (categoryoptioncomboid) REFERENCES categoryoptioncombo(categoryoptioncomboid),
    ADD CONSTRAINT fk_datavalue_attributeoptioncomboid FOREIGN KEY (attributeoptioncomboid) REFERENCES categoryoptioncombo(categoryoptioncomboid);

  -- Completeness: one registration per reported (data set, period, facility),
  -- a few not completed. Data set 2 / 2024-01 / facility 1 has values but
  -- deliberately no registration.
  INSERT INTO completedatasetregistration (datasetid, periodid, sourceid, attributeoptioncomboid,
                                           date, storedby, lastupdatedby, lastupdated, completed)
  SELECT 5000 + r.k, r.pe, r.ou, r.aoc, t.ts, users[r.h % 7 + 1], users[r.h % 7 + 1], t.ts,
         r.h % 20 <> 0
  FROM t_report r
  CROSS JOIN LATERAL (
    SELECT r.enddate::timestamp + (2 + r.h % 20) * interval '1 day'
           + ((r.h >> 5) % 86400) * interval '1 second'
           + ((r.h >> 3) % 1000) * interval '1 millisecond' AS ts) AS t
  WHERE r.k > 0
    AND NOT (r.k = 2 AND r.fi = 1 AND r.startdate = date '2024-01-01')
  ORDER BY r.startdate, r.ou, r.k;

  -- DHIS2 users, groups, roles, sharing and personal access tokens, set as a DHIS2 admin would
  -- (docs/DEMO.md: who may read what, and why). The same in every size. Ids 91001.. (users),
  -- 92001.. (groups), 93001.. (roles), 94001.. (tokens): apart from the other ids here, and from
  -- the small ids tests give the users they make. Every shared object has an owner (admin):
  -- DHIS2's SQL filter and its metadata lookups let everyone read an object without one.
  -- Passwords (demo only): bcrypt $2a$, cost 10, as DHIS2 writes them; precomputed with Python's
  -- crypt module (libxcrypt), each with its own salt.
  admin_uid := dvexport_demo_uid('user:admin');
  g_hmis := dvexport_demo_uid('usergroup:hmis-officers');
  g_child := dvexport_demo_uid('usergroup:child-health-programme');
  g_partner := dvexport_demo_uid('usergroup:partner-a-staff');

  INSERT INTO userinfo (userinfoid, uid, code, created, lastupdated, lastupdatedby, creatoruserid,
                        username, password, twofactortype, externalauth, passwordlastupdated,
                        disabled, accountexpiry, surname, firstname, email)
  SELECT 91000 + u.k, dvexport_demo_uid('user:' || u.username), NULL, meta_ts, meta_ts, 91001,
         91001, u.username, u.password, 'NOT_ENABLED', false, meta_ts, u.disabled, NULL,
         u.surname, u.firstname, u.username || '@demo.dvexport.example'
  FROM (VALUES
    (1, 'admin', '$2a$10$uraJxPBOO2rz5CS2oPJTz.37gl4.9fXNOlou3xUYAdg4FVeA7WCk2', false,
        'Traore', 'John'),
    (2, 'district', '$2a$10$0JWmTcPTSjMezf5CuXegiensCH429pwsYPo2X.VcCJRqBhTjRoKXa', false,
        'Kamara', 'Fatmata'),
    (3, 'programme', '$2a$10$Xnt3KhPuQ/gKbb7DDbbbSuh8ayb5FmNNOp1dM2CyyWoX543j8Iqki', false,
        'Sesay', 'Mohamed'),
    (4, 'partner', '$2a$10$S/SfHLQ.nLQleRLOFTPb9.OKXja/bcW87uE.H1odjjhT6juYzi6EK', false,
        'Conteh', 'Aminata'),
    (5, 'disabled', '$2a$10$HxO3NRPNzw.yntdff11i1.NluQ9uyHMrdnP6rUqrlfBPq5/5.YiHu', true,
        'Bangura', 'Ibrahim')
  ) AS u(k, username, password, disabled, surname, firstname)
  ORDER BY u.k;

  -- Roles: only "ALL" makes a superuser; the viewers' authorities play no part in reading.
  INSERT INTO userrole (userroleid, uid, created, lastupdated, lastupdatedby, name, description,
                        userid, sharing)
  VALUES (93001, dvexport_demo_uid('userrole:superuser'), meta_ts, meta_ts, 91001, 'Superuser',
          'Every authority (ALL)', 91001, '{}'),
         (93002, dvexport_demo_uid('userrole:data-viewer'), meta_ts, meta_ts, 91001,
          'Data viewer', 'Dashboards and data visualizer', 91001, '{}');
  INSERT INTO userroleauthorities (userroleid, authority)
  VALUES (93001, 'ALL'), (93002, 'M_dhis-web-dashboard'), (93002, 'M_dhis-web-data-visualizer');
  INSERT INTO userrolemembers (userroleid, userid)
  VALUES (93001, 91001), (93002, 91002), (93002, 91003), (93002, 91004), (93002, 91005);

  INSERT INTO usergroup (usergroupid, uid, created, lastupdated, lastupdatedby, name, userid)
  VALUES (92001, g_hmis, meta_ts, meta_ts, 91001, 'HMIS officers', 91001),
         (92002, g_child, meta_ts, meta_ts, 91001, 'Child Health programme', 91001),
         (92003, g_partner, meta_ts, meta_ts, 91001, 'Partner A staff', 91001);
  INSERT INTO usergroupmembers (userid, usergroupid)
  VALUES (91002, 92001), (91003, 92002), (91004, 92003), (91005, 92001);

  -- Org units. admin: both roots, so that E2012 passes for every org unit. district: Bo (data
  -- capture and data view). programme: data view Sierra Leone. partner: data capture Sierra
  -- Leone only, which DHIS2 takes for data view when a user has none.
  INSERT INTO usermembership (organisationunitid, userinfoid)
  VALUES (100001, 91001), (190001, 91001), (100002, 91002), (100001, 91004), (100001, 91005);
  INSERT INTO userdatavieworgunits (userinfoid, organisationunitid)
  VALUES (91001, 100001), (91001, 190001), (91002, 100002), (91003, 100001);

  -- Sharing (access strings: metadata read/write, data read/write, then ----). Data sets:
  -- everyone may see them (public rw------), reading their data takes a group: HMIS officers
  -- every data set, the Child Health programme its data set, Partner A staff Partner Support.
  UPDATE dataset SET sharing = jsonb_build_object(
    'owner', admin_uid, 'public', 'rw------', 'external', false, 'users', '{}'::jsonb,
    'userGroups', jsonb_build_object(g_hmis, jsonb_build_object('id', g_hmis, 'access', 'r-r-----'))
                  || CASE datasetid
                       WHEN 5001 THEN jsonb_build_object(g_child,
                                        jsonb_build_object('id', g_child, 'access', 'r-r-----'))
                       WHEN 5004 THEN jsonb_build_object(g_partner,
                                        jsonb_build_object('id', g_partner, 'access', 'r-r-----'))
                       ELSE '{}'::jsonb END);
  -- Category options: data readable by everyone (public rwrw----, DHIS2's default option too),
  -- except the Funding Partner options: metadata only (rw------), data for HMIS officers, and
  -- Partner A's for Partner A staff. A partner's values are thus dropped for whoever may not
  -- read its option.
  UPDATE categoryoption SET sharing = jsonb_build_object(
    'owner', admin_uid, 'public', CASE WHEN categoryoptionid IN (3008, 3009, 3010) THEN 'rw------'
                                       ELSE 'rwrw----' END,
    'external', false, 'users', '{}'::jsonb,
    'userGroups', CASE WHEN categoryoptionid IN (3008, 3009, 3010)
                    THEN jsonb_build_object(g_hmis, jsonb_build_object('id', g_hmis, 'access', 'r-r-----'))
                         || CASE WHEN categoryoptionid = 3008
                              THEN jsonb_build_object(g_partner,
                                     jsonb_build_object('id', g_partner, 'access', 'r-r-----'))
                              ELSE '{}'::jsonb END
                    ELSE '{}'::jsonb END);
  -- Metadata everyone may read (rw------, DHIS2's default for new objects), except the data
  -- element group Malaria: only HMIS officers may see it (r-------), for anyone else it does not
  -- exist.
  UPDATE dataelement SET sharing = jsonb_build_object(
    'owner', admin_uid, 'public', 'rw------', 'external', false, 'users', '{}'::jsonb,
    'userGroups', '{}'::jsonb);
  UPDATE dataelementgroup SET sharing = jsonb_build_object(
    'owner', admin_uid, 'public', CASE WHEN dataelementgroupid = 8003 THEN '--------' ELSE 'rw------' END,
    'external', false, 'users', '{}'::jsonb,
    'userGroups', CASE WHEN dataelementgroupid = 8003
                    THEN jsonb_build_object(g_hmis, jsonb_build_object('id', g_hmis, 'access', 'r-------'))
                    ELSE '{}'::jsonb END);
  UPDATE orgunitgroup SET sharing = jsonb_build_object(
    'owner', admin_uid, 'public', 'rw------', 'external', false, 'users', '{}'::jsonb,
    'userGroups', '{}'::jsonb);
  UPDATE category SET sharing = jsonb_build_object(
    'owner', admin_uid, 'public', 'rw------', 'external', false, 'users', '{}'::jsonb,
    'userGroups', '{}'::jsonb);
  UPDATE usergroup SET sharing = jsonb_build_object(
    'owner', admin_uid, 'public', 'rw------', 'external', false, 'users', '{}'::jsonb,
    'userGroups', '{}'::jsonb);
  UPDATE userrole SET sharing = jsonb_build_object(
    'owner', admin_uid, 'public', 'rw------', 'external', false, 'users', '{}'::jsonb,
    'userGroups', '{}'::jsonb);

  -- Personal access tokens in DHIS2's format (prefix, code, CRC-32 checksum over the code and
  -- DHIS2's trailing zero bytes); key is the lowercase hex SHA-256 of the whole token, expire
  -- milliseconds since 1970 (4102444800000: 2100-01-01, 1704067200000: 2024-01-01). Demo
  -- tokens, published in docs/DEMO.md: never load this into a reachable database.
  INSERT INTO api_token (apitokenid, uid, code, created, lastupdated, lastupdatedby, createdby,
                         version, type, expire, key, attributes, sharing)
  SELECT 94000 + t.k, dvexport_demo_uid('api_token:' || t.k), NULL, meta_ts, meta_ts, t.owner,
         t.owner, 1, t.type, t.expire, encode(sha256(convert_to(t.token, 'UTF8')), 'hex'),
         t.attributes::jsonb,
         jsonb_build_object('owner', dvexport_demo_uid('user:' || o.username), 'public', '--------',
                            'external', false, 'users', '{}'::jsonb, 'userGroups', '{}'::jsonb)
  FROM (VALUES
    (1, 91001, 'PERSONAL_ACCESS_TOKEN_V2', 4102444800000,
        'd2p_EMi4vUP6lQIv4P9Dib3LY1l1BU5tWXppEMi4vUP6lQIv0GuVIb', '[]'),
    (2, 91001, 'PERSONAL_ACCESS_TOKEN_V1', 4102444800000,
        'd2pat_R4Ua1P1CD8w0rEBctX3aAk73uHHmPDxb1113515116', '[]'),
    (3, 91002, 'PERSONAL_ACCESS_TOKEN_V2', 4102444800000,
        'd2p_gZGPOgx7oXSYJjAcLX7vEosfR3CTh7cVgZGPOgx7oXSY2u4HxU', '[]'),
    -- The programme's token may only GET; an export counts as a GET.
    (4, 91003, 'PERSONAL_ACCESS_TOKEN_V2', 4102444800000,
        'd2p_E5emSnrGkGewbFjsjFXns7r8Z2AuO2qLE5emSnrGkGew0Aft8Z',
        '[{"type": "MethodAllowedList", "allowedMethods": ["GET"]}]'),
    (5, 91004, 'PERSONAL_ACCESS_TOKEN_V2', 4102444800000,
        'd2p_5Bnr5f6IYo3IFTjB7nsgk9e2zYL6ySSp5Bnr5f6IYo3I4R4fWQ', '[]'),
    -- Refused: its owner is disabled.
    (6, 91005, 'PERSONAL_ACCESS_TOKEN_V2', 4102444800000,
        'd2p_LgrgK2qD9Df8EutLYPDphal4ugZsEWCrgxk8N3hVqX4a1ot4MP', '[]'),
    -- Refused: expired (the district user's old token).
    (7, 91002, 'PERSONAL_ACCESS_TOKEN_V2', 1704067200000,
        'd2p_aV5JpuQPofsMO7Ndvtvji19xqyPeOFMFqQrfqzyfFkZH14IWVK', '[]')
  ) AS t(k, owner, type, expire, token, attributes)
  JOIN userinfo o ON o.userinfoid = t.owner
  ORDER BY t.k;

  ANALYZE;
  SELECT count(*) INTO n_values FROM datavalue;
  RETURN n_values;
END
$fn$;
