-- Step: the demo's DHIS2 2.42 schema (schema.sql) forward to DHIS2 2.43's (2.43.1), with the
-- 2.43 migrations that touch the tables in schema.sql. Included by versions/2.43.sql and
-- 2.44.sql. The migrations are dhis2/dhis2-core's, tag 2.43.1, under dhis-2/dhis-support/
-- dhis-support-db-migration/src/main/resources/org/hisp/dhis/db/migration/2.43/ (Java ones under
-- .../src/main/java/org/hisp/dhis/db/migration/v43/):
--   V2_43_6__data_value_defaults.sql  datavalue created/lastupdated DEFAULT now(), storedby
--       DEFAULT current_setting('dhis2.user')::text (an insert without storedby and without that
--       setting fails, as in DHIS2)
--   V2_43_9__add_iso_colum_to_period.sql  period.iso varchar(50) UNIQUE (period_iso_key) and
--       the unique index periodtype_name_key
--   V2_43_10__Period_ISO_column.java  fills iso with PeriodType.getPeriodTypeByName(name)
--       .createPeriod(startdate).getIsoDate() (the SQL below, per period type: dhis-api
--       .../period/*PeriodType.java @2.43.1, ISO calendar)
--   V2_43_17__data_entry_import_adjustments.sql  iso NOT NULL; index
--       idx_categorycombos_optioncombos_categorycomboid; the data import settings deleted; the
--       audit trigger trg_datavalue_audit (function log_datavalue_audit, writes datavalueaudit
--       with ids from hibernate_sequence: both made here, as in the base dump, ids bigint since
--       2.32 V2_32_10; the sequence starts at 900001, above the demo's ids)
--   V2_43_25__add_description_to_usergroup.sql  usergroup.description varchar(255)
--   V2_43_26/V2_43_27__add_default_value_for_translations(_cont).sql  translations DEFAULT
--       '[]' (already so in schema.sql) and NOT NULL on dataelement, categorycombo,
--       categoryoptioncombo, categoryoption, category, dataelementgroup, dataset, organisationunit
--   V2_43_37__set_username_not_null.sql  userinfo.username NOT NULL (already so in schema.sql)
--   V2_43_46__add_weekly_new_periods_config_table.sql  periodtype WeeklyFriday
--   V2_43_47__add_financial_new_periods_config_table.sql  periodtype FinancialFeb, FinancialAug
--       (both with ids from hibernate_sequence; their configuration_dataoutputperiodtype rows,
--       and that table of V2_43_31, are left out: schema.sql has no configuration table)
--   V2_43_51__add_column_label_periodtype.sql  periodtype.label varchar(230), NULL
--   V2_43_53__drop_style_system_setting.sql  keyStyle -> keyCustomColorMobile
-- The settings statements run on the rows versions/2.43.sql writes first, as a 2.42 server
-- would have (schema.sql's 2.42 demo has none).
--
-- Data 2.43 alone can hold (the generator's rows are unchanged): one period of each new type,
-- written by a 2.43 server (ids from hibernate_sequence, iso set), and 6 values in each (18):
-- facilities 1-3 (110001-110003) x (element 2 "Fixed" 20002/2002, element 4 default 20004/2001):
--   2024FriW6  WeeklyFriday  2024-02-02..2024-02-08
--   2024Feb    FinancialFeb  2024-02-01..2025-01-31
--   2024Aug    FinancialAug  2024-08-01..2025-07-31

-- V2_43_6
ALTER TABLE datavalue
    ALTER COLUMN created SET DEFAULT now(),
    ALTER COLUMN lastupdated SET DEFAULT now(),
    ALTER COLUMN storedby SET DEFAULT current_setting('dhis2.user')::text;

-- V2_43_9
ALTER TABLE period
    ADD COLUMN IF NOT EXISTS iso varchar(50) UNIQUE;
CREATE UNIQUE INDEX IF NOT EXISTS periodtype_name_key ON periodtype (name);

-- V2_43_10: the ISO id of the period of that type starting at startdate.
--   Daily yyyyMMdd; Monthly yyyyMM; BiMonthly yyyy + %02d of (month + 1) / 2 + 'B';
--   Weekly* (week starting on its day D, WeekFields.of(D, 4)): the week's 4th day t decides:
--     year(t) + prefix + ((day of year(t) - 1) / 7 + 1); prefixes W, WedW, ThuW, FriW, SatW, SunW;
--   BiWeekly: Monday of the odd ISO week, ISO week-based year + 'BiW' + (ISO week / 2 + 1);
--   Quarterly yyyyQn; QuarterlyNov: Nov-Jan NovQ1 (year of its January), Feb NovQ2, May NovQ3,
--     Aug NovQ4; SixMonthly yyyySn; SixMonthlyApril yyyyAprilS1 (Apr) / S2 (Oct);
--     SixMonthlyNov: (year + 1)NovS1 from November, yyyyNovS2 from May; Yearly yyyy;
--   Financial*: the start year + April, July, Sep, Oct, Feb, Aug; FinancialNov: start year + 1.
UPDATE period p SET iso = x.iso
FROM (
  SELECT p.periodid,
    CASE
      WHEN pt.name = 'Daily' THEN to_char(p.startdate, 'YYYYMMDD')
      WHEN pt.name IN ('Weekly', 'WeeklyWednesday', 'WeeklyThursday', 'WeeklyFriday',
                       'WeeklySaturday', 'WeeklySunday') THEN
        extract(year FROM w.t)::int || w.prefix || ((extract(doy FROM w.t)::int - 1) / 7 + 1)
      WHEN pt.name = 'BiWeekly' THEN
        extract(isoyear FROM b.s)::int || 'BiW' || (extract(week FROM b.s)::int / 2 + 1)
      WHEN pt.name = 'Monthly' THEN to_char(p.startdate, 'YYYYMM')
      WHEN pt.name = 'BiMonthly' THEN y || lpad(((m + 1) / 2)::text, 2, '0') || 'B'
      WHEN pt.name = 'Quarterly' THEN y || 'Q' || ((m - 1) / 3 + 1)
      WHEN pt.name = 'QuarterlyNov' THEN
        (y + CASE WHEN m >= 11 THEN 1 ELSE 0 END) || 'NovQ' || (((m + 1) % 12) / 3 + 1)
      WHEN pt.name = 'SixMonthly' THEN y || CASE WHEN m <= 6 THEN 'S1' ELSE 'S2' END
      WHEN pt.name = 'SixMonthlyApril' THEN
        CASE WHEN m BETWEEN 4 AND 9 THEN y || 'AprilS1'
             WHEN m >= 10 THEN y || 'AprilS2' ELSE (y - 1) || 'AprilS2' END
      WHEN pt.name = 'SixMonthlyNov' THEN
        CASE WHEN m >= 11 THEN (y + 1) || 'NovS1' WHEN m <= 4 THEN y || 'NovS1'
             ELSE y || 'NovS2' END
      WHEN pt.name = 'Yearly' THEN y::text
      WHEN pt.name IN ('FinancialFeb', 'FinancialApril', 'FinancialJuly', 'FinancialAug',
                       'FinancialSep', 'FinancialOct', 'FinancialNov') THEN
        (y - CASE WHEN m < f.base THEN 1 ELSE 0 END + CASE WHEN f.base = 11 THEN 1 ELSE 0 END)
        || f.suffix
    END AS iso
  FROM period p
  JOIN periodtype pt ON pt.periodtypeid = p.periodtypeid
  CROSS JOIN LATERAL (SELECT extract(year FROM p.startdate)::int AS y,
                             extract(month FROM p.startdate)::int AS m) AS d
  LEFT JOIN (VALUES ('Weekly', 1, 'W'), ('WeeklyWednesday', 3, 'WedW'),
                    ('WeeklyThursday', 4, 'ThuW'), ('WeeklyFriday', 5, 'FriW'),
                    ('WeeklySaturday', 6, 'SatW'), ('WeeklySunday', 7, 'SunW'))
         AS wd(name, dow, prefix) ON wd.name = pt.name
  LEFT JOIN LATERAL (
    SELECT wd.prefix,
           p.startdate - ((extract(isodow FROM p.startdate)::int - wd.dow + 7) % 7) + 3 AS t
  ) AS w ON wd.name IS NOT NULL
  CROSS JOIN LATERAL (
    SELECT p.startdate - (extract(isodow FROM p.startdate)::int - 1)
           - CASE WHEN extract(week FROM p.startdate)::int % 2 = 0 THEN 7 ELSE 0 END AS s
  ) AS b
  LEFT JOIN (VALUES ('FinancialFeb', 2, 'Feb'), ('FinancialApril', 4, 'April'),
                    ('FinancialJuly', 7, 'July'), ('FinancialAug', 8, 'Aug'),
                    ('FinancialSep', 9, 'Sep'), ('FinancialOct', 10, 'Oct'),
                    ('FinancialNov', 11, 'Nov'))
         AS f(name, base, suffix) ON f.name = pt.name
) AS x
WHERE x.periodid = p.periodid AND p.iso IS NULL;

DO $$
DECLARE
  missing text;
BEGIN
  SELECT string_agg(DISTINCT pt.name, ', ') INTO missing
  FROM period p JOIN periodtype pt ON pt.periodtypeid = p.periodtypeid WHERE p.iso IS NULL;
  IF missing IS NOT NULL THEN
    RAISE EXCEPTION '2.42-to-2.43: no ISO id for periods of type %', missing;
  END IF;
END
$$;

-- V2_43_17
DELETE FROM systemsetting WHERE name
    IN (
        'keyDataImportStrictDataElements',
        'keyDataImportStrictCategoryOptionCombos',
        'keyDataImportRequireCategoryOptionCombo',
        'keyDataImportStrictDataSetApproval',
        'keyDataImportStrictDataSetLocking',
        'keyDataImportStrictDataSetInputPeriods'
       );
ALTER TABLE period
    ALTER COLUMN iso SET NOT NULL;
CREATE INDEX IF NOT EXISTS idx_categorycombos_optioncombos_categorycomboid ON categorycombos_optioncombos(categorycomboid);

CREATE SEQUENCE hibernate_sequence START WITH 900001 INCREMENT BY 1 NO MINVALUE NO MAXVALUE CACHE 1;
CREATE TABLE datavalueaudit (
    datavalueauditid bigint NOT NULL,
    dataelementid bigint NOT NULL,
    periodid bigint NOT NULL,
    organisationunitid bigint NOT NULL,
    categoryoptioncomboid bigint NOT NULL,
    attributeoptioncomboid bigint NOT NULL,
    value character varying(50000),
    created timestamp without time zone,
    modifiedby character varying(100),
    audittype character varying(100) NOT NULL
);
ALTER TABLE ONLY datavalueaudit ADD CONSTRAINT datavalueaudit_pkey PRIMARY KEY (datavalueauditid);

CREATE OR REPLACE FUNCTION log_datavalue_audit()
    RETURNS TRIGGER AS $$
BEGIN
    IF TG_OP = 'INSERT' OR
       (TG_OP = 'UPDATE' AND (
           OLD.value IS DISTINCT FROM NEW.value OR OLD.deleted IS DISTINCT FROM NEW.deleted
       ))
    THEN
        INSERT INTO datavalueaudit (
            datavalueauditid,
            created,
            modifiedby,
            dataelementid,
            periodid,
            organisationunitid,
            categoryoptioncomboid,
            attributeoptioncomboid,
            value,
            audittype
        )
        VALUES (
           nextval('hibernate_sequence'),
           now(),
           left(NEW.storedby, 100),
           NEW.dataelementid,
           NEW.periodid,
           NEW.sourceid,
           NEW.categoryoptioncomboid,
           NEW.attributeoptioncomboid,
           NEW.value,
           CASE
               WHEN TG_OP = 'INSERT' THEN 'CREATE'
               WHEN NEW.deleted AND (OLD.deleted IS NULL OR NOT OLD.deleted) THEN 'DELETE'
               ELSE 'UPDATE'
           END
        );
    END IF;
    RETURN NEW;
END;
$$ LANGUAGE plpgsql;

CREATE TRIGGER trg_datavalue_audit
    AFTER INSERT OR UPDATE ON datavalue
    FOR EACH ROW
    EXECUTE FUNCTION log_datavalue_audit();

-- V2_43_25
ALTER TABLE usergroup ADD COLUMN IF NOT EXISTS description varchar(255);

-- V2_43_26, V2_43_27
ALTER TABLE dataelement ALTER COLUMN translations SET NOT NULL;
ALTER TABLE categorycombo ALTER COLUMN translations SET NOT NULL;
ALTER TABLE categoryoptioncombo ALTER COLUMN translations SET NOT NULL;
ALTER TABLE categoryoption ALTER COLUMN translations SET NOT NULL;
ALTER TABLE category ALTER COLUMN translations SET NOT NULL;
ALTER TABLE dataelementgroup ALTER COLUMN translations SET NOT NULL;
ALTER TABLE dataset ALTER COLUMN translations SET NOT NULL;
ALTER TABLE organisationunit ALTER COLUMN translations SET NOT NULL;

-- V2_43_53 (ids from hibernate_sequence: 900001)
insert into systemsetting(systemsettingid, name, value)
select nextval('hibernate_sequence'), 'keyCustomColorMobile', mappings.new_value
from (values
    ('light_blue/light_blue.css', '#007DEB'),
    ('green/green.css', '#218C51'),
    ('india/india.css', '#EA5911'),
    ('myanmar/myanmar.css', '#8C2121')) as mappings(old_value, new_value)
inner join systemsetting s
on s.value = mappings.old_value
where s.name = 'keyStyle';

delete from systemsetting where name = 'keyStyle';

-- V2_43_46, V2_43_47, V2_43_51
INSERT INTO periodtype (periodtypeid, name) VALUES (nextval('hibernate_sequence'), 'WeeklyFriday');
INSERT INTO periodtype (periodtypeid, name) VALUES (nextval('hibernate_sequence'), 'FinancialFeb');
INSERT INTO periodtype (periodtypeid, name) VALUES (nextval('hibernate_sequence'), 'FinancialAug');
ALTER TABLE periodtype ADD COLUMN IF NOT EXISTS label character varying(230);

-- The 2.43-only periods and their values (ids from hibernate_sequence; the trigger audits each value).
INSERT INTO period (periodid, periodtypeid, startdate, enddate, iso)
SELECT nextval('hibernate_sequence'), pt.periodtypeid, v.s, v.e, v.iso
FROM (VALUES (1, 'WeeklyFriday', date '2024-02-02', date '2024-02-08', '2024FriW6'),
             (2, 'FinancialFeb', date '2024-02-01', date '2025-01-31', '2024Feb'),
             (3, 'FinancialAug', date '2024-08-01', date '2025-07-31', '2024Aug')) AS v(k, name, s, e, iso)
JOIN periodtype pt ON pt.name = v.name
ORDER BY v.k;

INSERT INTO datavalue (dataelementid, periodid, sourceid, categoryoptioncomboid,
                       attributeoptioncomboid, value, storedby, created, lastupdated, comment,
                       followup, deleted)
SELECT x.de, p.periodid, 110000 + f.i, x.coc, 2001, (f.i * 10 + x.k + p.periodid % 7)::text,
       'admin', c.ts, c.ts + CASE WHEN f.i = 2 THEN interval '3 days 4 hours' ELSE interval '0' END,
       CASE WHEN f.i = 3 AND x.k = 1 THEN 'Entered on a 2.43 server' END, false, false
FROM period p
CROSS JOIN generate_series(1, 3) AS f(i)
CROSS JOIN (VALUES (1, 20002::bigint, 2002::bigint), (2, 20004, 2001)) AS x(k, de, coc)
CROSS JOIN LATERAL (SELECT p.enddate + interval '3 days 10 hours' + f.i * interval '17 minutes'
                           + x.k * interval '1.5 seconds' AS ts) AS c
WHERE p.iso IN ('2024FriW6', '2024Feb', '2024Aug')
ORDER BY p.startdate, f.i, x.k;

-- Where schema.sql's 2.42 differs from what DHIS2's migrations leave in 2.42 and 2.43 alike
-- (reported, for schema.sql to follow; steps/2.42-to-2.41.sql does the same for 2.41):
--   userrolerestrictions.userroleid int8 with fk_userrolerestrictions_userroleid (2.41/V2_41_16)
--   category's primary key dataelementcategory_pkey (2.41/V2_41_30 renames only the table)
--   userroleauthorities' unique constraint userroleauthorities_unique_key (2.42/V2_42_38)
ALTER TABLE userrolerestrictions ALTER COLUMN userroleid TYPE int8;
ALTER TABLE userrolerestrictions
    ADD CONSTRAINT fk_userrolerestrictions_userroleid FOREIGN KEY (userroleid) REFERENCES userrole (userroleid);
ALTER TABLE category RENAME CONSTRAINT category_pkey TO dataelementcategory_pkey;
ALTER TABLE userroleauthorities
    RENAME CONSTRAINT userroleauthorities_unique_authority TO userroleauthorities_unique_key;
