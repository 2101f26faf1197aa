#!/usr/bin/env python3
"""Checks deploy/demo/load.sh's DHIS2 versions (deploy/demo/versions/, docs/DEMO.md).

For each version (2.39 .. 2.44) loads the small demo into a fresh database of its own on the
test server (dhis2_v239 .. dhis2_v244, made with DVEXPORT_TEST_PG_ADMIN, dropped afterwards)
and checks its shape against what DHIS2's migrations leave (the versions/*.sql headers cite
them): the Flyway history's highest successful version and its odd rows, the table names
(category vs dataelementcategory, userrolerestrictions), period.iso (2.43+ only, with the ISO
ids DHIS2 2.43's V2_43_10 computes), the period types, the system settings' encoding, the
token types and keys, the userinfo columns, and that the data values are 2.42's (plus the 18 of
2.43's new period types on 2.43 and 2.44).

Usage: demo_versions_test.py REPO_ROOT   (DVEXPORT_TEST_PG_ADMIN set; PG_BINDIR or psql on PATH)
"""

import hashlib
import os
import pathlib
import re
import shlex
import subprocess
import sys
import time

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
ADMIN = os.environ.get("DVEXPORT_TEST_PG_ADMIN")
if not ADMIN:
    sys.exit("demo_versions_test: DVEXPORT_TEST_PG_ADMIN is not set (run through scripts/test)")
PSQL = os.path.join(os.environ["PG_BINDIR"], "psql") if os.environ.get("PG_BINDIR") else "psql"
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def conninfo(dbname):
    """ADMIN with dbname replaced."""
    parts = [p for p in shlex.split(ADMIN) if not p.startswith("dbname=")]
    return " ".join(parts + [f"dbname={dbname}"])


def query(db, sql):
    run = subprocess.run(
        [PSQL, conninfo(db), "-X", "-q", "-At", "-F", "\t", "-P", "null=\\N", "-v",
         "ON_ERROR_STOP=1", "-c", sql], capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"demo_versions_test: psql failed on {db}: {run.stderr.strip()}\n{sql}")
    return [[None if f == "\\N" else f for f in line.split("\t")]
            for line in run.stdout.splitlines()]


def value(db, sql):
    rows = query(db, sql)
    return rows[0][0] if rows else None


def column(db, sql):
    return [row[0] for row in query(db, sql)]


VERSIONS = ["2.39", "2.40", "2.41", "2.42", "2.43", "2.44"]
# The highest successful migration (the newest patch tag's), and the failed row after it.
FLYWAY = {"2.39": ("2.39.31", "2.40.1"), "2.40": ("2.40.33", "2.41.1"),
          "2.41": ("2.41.59", "2.42.1"), "2.42": ("2.42.52", "2.43.1"),
          "2.43": ("2.43.64", "2.44.1"), "2.44": ("2.44.21", "2.44.22")}
# (period type, start date): ISO id, as DHIS2 2.43's PeriodType.createPeriod(start).getIsoDate().
ISO = {("Daily", "2024-02-29"): "20240229", ("Weekly", "2020-12-28"): "2020W53",
       ("Weekly", "2024-12-30"): "2025W1", ("WeeklyWednesday", "2024-01-03"): "2024WedW1",
       ("WeeklyThursday", "2024-01-04"): "2024ThuW1", ("WeeklySaturday", "2024-01-06"): "2024SatW2",
       ("WeeklySunday", "2024-01-07"): "2024SunW2", ("BiWeekly", "2024-01-01"): "2024BiW1",
       ("Monthly", "2022-12-01"): "202212", ("BiMonthly", "2024-11-01"): "202406B",
       ("Quarterly", "2024-10-01"): "2024Q4", ("QuarterlyNov", "2023-11-01"): "2024NovQ1",
       ("SixMonthly", "2024-01-01"): "2024S1", ("SixMonthlyApril", "2024-04-01"): "2024AprilS1",
       ("SixMonthlyNov", "2023-11-01"): "2024NovS1", ("Yearly", "2023-01-01"): "2023",
       ("FinancialApril", "2023-04-01"): "2023April", ("FinancialJuly", "2023-07-01"): "2023July",
       ("FinancialSep", "2023-09-01"): "2023Sep", ("FinancialOct", "2023-10-01"): "2023Oct",
       ("FinancialNov", "2023-11-01"): "2024Nov",
       ("WeeklyFriday", "2024-02-02"): "2024FriW6", ("FinancialFeb", "2024-02-01"): "2024Feb",
       ("FinancialAug", "2024-08-01"): "2024Aug"}
# 2.40's tokens (docs/DEMO.md): the d2p_ ones become the d2pat_ tokens 2.40 would have minted.
TOKENS_240 = {
    94001: "d2pat_EMi4vUP6lQIv4P9Dib3LY1l1BU5tWXpp1141566371",
    94002: "d2pat_R4Ua1P1CD8w0rEBctX3aAk73uHHmPDxb1113515116",
    94003: "d2pat_gZGPOgx7oXSYJjAcLX7vEosfR3CTh7cV4281150335",
    94004: "d2pat_E5emSnrGkGewbFjsjFXns7r8Z2AuO2qL1716974145",
    94005: "d2pat_5Bnr5f6IYo3IFTjB7nsgk9e2zYL6ySSp3970468793",
    94006: "d2pat_LgrgK2qD9Df8EutLYPDphal4ugZsEWCr1294458608",
    94007: "d2pat_aV5JpuQPofsMO7Ndvtvji19xqyPeOFMF0017558753"}


def vkey(v):
    return tuple(int(x) for x in v.split("."))


def load(version):
    db = "dhis2_v" + version.replace(".", "")
    query("postgres", f"DROP DATABASE IF EXISTS {db}")
    query("postgres", f"CREATE DATABASE {db}")
    env = dict(os.environ, PSQL=PSQL, PGDATABASE=db)
    for part in shlex.split(ADMIN):
        key, _, val = part.partition("=")
        if key in ("host", "port", "user"):
            env["PG" + key.upper()] = val
    start = time.monotonic()
    run = subprocess.run([str(ROOT / "deploy/demo/load.sh"), "small", version], env=env,
                         capture_output=True, text=True)
    seconds = time.monotonic() - start
    if run.returncode != 0:
        sys.exit(f"demo_versions_test: load.sh small {version} failed: {run.stderr.strip()}")
    suffix = "" if version == "2.42" else f" dhis2={version}"
    check(re.fullmatch(r"loaded size=small datavalues=\d+ seconds=\d+\.\d\d" + re.escape(suffix),
                       run.stdout.strip()),
          f"{version}: load.sh printed {run.stdout.strip()!r}")
    print(f"{version}: {run.stdout.strip()} ({seconds:.2f} s)")
    return db


def check_version(version, db, base_values):
    v = vkey(version)
    top, failed = FLYWAY[version]
    # Flyway: the highest successful x.y.z version, read as DHIS2's versions must be read.
    got = value(db, r"""SELECT version FROM flyway_schema_history
                        WHERE success AND version ~ '^2\.\d+\.\d+$'
                        ORDER BY string_to_array(version, '.')::int[] DESC LIMIT 1""")
    check(got == top, f"{version}: highest migration {got}, expected {top}")
    rows = query(db, "SELECT installed_rank, version, description, type, success "
                     "FROM flyway_schema_history ORDER BY installed_rank")
    check(rows[0][1:] == ["1", "<< Flyway Baseline >>", "BASELINE", "t"],
          f"{version}: first history row {rows[0]}")
    check(rows[-1][1] == failed and rows[-1][4] == "f",
          f"{version}: last history row {rows[-1]}, expected a failed {failed}")
    check([r[0] for r in rows] == [str(i) for i in range(1, len(rows) + 1)],
          f"{version}: installed_rank not 1..n")
    majors = {r[1].rsplit(".", 1)[0] for r in rows[1:-1]}
    check(f"2.{v[1]}" in majors and f"2.{v[1] + 1}" not in majors,
          f"{version}: successful rows' majors {sorted(majors)}")
    check(value(db, "SELECT count(*) FROM flyway_schema_history WHERE NOT success") == "1",
          f"{version}: not exactly one failed row")
    cols = query(db, """SELECT column_name, data_type, character_maximum_length, is_nullable
                        FROM information_schema.columns
                        WHERE table_name = 'flyway_schema_history' ORDER BY ordinal_position""")
    check(cols == [["installed_rank", "integer", None, "NO"],
                   ["version", "character varying", "50", "YES"],
                   ["description", "character varying", "200", "NO"],
                   ["type", "character varying", "20", "NO"],
                   ["script", "character varying", "1000", "NO"],
                   ["checksum", "integer", None, "YES"],
                   ["installed_by", "character varying", "100", "NO"],
                   ["installed_on", "timestamp without time zone", None, "NO"],
                   ["execution_time", "integer", None, "NO"],
                   ["success", "boolean", None, "NO"]],
          f"{version}: flyway_schema_history columns {cols}")
    check(value(db, "SELECT obj_description('datavalue'::regclass, 'pg_class')")
          .startswith("dvexport demo: DHIS2 " + version), f"{version}: datavalue's comment")

    # Category tables: renamed by 2.41's V2_41_30.
    tables = set(column(db, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'"))
    new_names = v >= (2, 41)
    for old, new in (("dataelementcategory", "category"),
                     ("dataelementcategoryoption", "categoryoption")):
        check((new in tables) == new_names and (old in tables) != new_names,
              f"{version}: category tables {old}/{new}: {sorted(tables & {old, new})}")
    check(("userrolerestrictions" in tables) == (v >= (2, 40)),
          f"{version}: userrolerestrictions present: {'userrolerestrictions' in tables}")
    if v >= (2, 40) and version != "2.42":  # schema.sql's 2.42 keeps integer (reported)
        check(value(db, "SELECT data_type FROM information_schema.columns WHERE table_name = "
                        "'userrolerestrictions' AND column_name = 'userroleid'") == "bigint",
              f"{version}: userrolerestrictions.userroleid not bigint")

    # period.iso: 2.43+ only, filled as V2_43_10 fills it.
    has_iso = value(db, "SELECT count(*) FROM information_schema.columns "
                        "WHERE table_name = 'period' AND column_name = 'iso'") == "1"
    check(has_iso == (v >= (2, 43)), f"{version}: period.iso present: {has_iso}")
    types = column(db, "SELECT name FROM periodtype ORDER BY periodtypeid")
    new_types = {"WeeklyFriday", "FinancialFeb", "FinancialAug"}
    check(len(types) == (23 if v >= (2, 43) else 20) and (new_types <= set(types)) == (v >= (2, 43)),
          f"{version}: period types {types}")
    has_label = value(db, "SELECT count(*) FROM information_schema.columns "
                          "WHERE table_name = 'periodtype' AND column_name = 'label'") == "1"
    check(has_label == (v >= (2, 43)), f"{version}: periodtype.label present: {has_label}")
    if has_iso:
        got_iso = {(r[0], r[1]): r[2] for r in query(
            db, "SELECT pt.name, p.startdate, p.iso FROM period p "
                "JOIN periodtype pt USING (periodtypeid)")}
        for key, iso in ISO.items():
            check(got_iso.get(key) == iso, f"{version}: period {key}: iso {got_iso.get(key)}, expected {iso}")
        check(value(db, "SELECT count(*) FROM period WHERE iso IS NULL") == "0",
              f"{version}: periods without iso")
        check(value(db, "SELECT is_nullable FROM information_schema.columns "
                        "WHERE table_name = 'period' AND column_name = 'iso'") == "NO",
              f"{version}: period.iso nullable")
        check(value(db, "SELECT column_default FROM information_schema.columns "
                        "WHERE table_name = 'datavalue' AND column_name = 'storedby'")
              == "current_setting('dhis2.user'::text)", f"{version}: datavalue.storedby default")
        check(value(db, "SELECT count(*) FROM pg_trigger WHERE tgname = 'trg_datavalue_audit'") == "1",
              f"{version}: no trg_datavalue_audit")
        check(value(db, "SELECT count(*) FROM information_schema.columns "
                        "WHERE table_name = 'usergroup' AND column_name = 'description'") == "1",
              f"{version}: no usergroup.description")

    # Data values: 2.42's, plus 2.43's 18 in its new period types.
    count = int(value(db, "SELECT count(*) FROM datavalue"))
    extra = int(value(db, "SELECT count(*) FROM datavalue dv JOIN period p USING (periodid) "
                          "JOIN periodtype pt USING (periodtypeid) WHERE pt.name IN "
                          "('WeeklyFriday', 'FinancialFeb', 'FinancialAug')")) if v >= (2, 43) else 0
    expected = base_values + (18 if v >= (2, 43) else 0)
    check(count == expected and extra == (18 if v >= (2, 43) else 0),
          f"{version}: {count} data values ({extra} in 2.43's period types), expected {expected}")

    # System settings: JSON with a translations column before 2.42's V2_42_18, plain after.
    has_translations = value(db, "SELECT count(*) FROM information_schema.columns WHERE "
                                 "table_name = 'systemsetting' AND column_name = 'translations'") == "1"
    check(has_translations == (v < (2, 42)), f"{version}: systemsetting.translations: {has_translations}")
    settings = dict(query(db, "SELECT name, value FROM systemsetting"))
    if v < (2, 42):
        check(settings.get("keyCalendar") == '"iso8601"' and settings.get("minPasswordLength") == "8"
              and settings.get("keyDataImportStrictDataElements") == "false",
              f"{version}: settings not JSON: {settings}")
        check(value(db, "SELECT translations ->> 'fr' FROM systemsetting "
                        "WHERE name = 'applicationTitle'") == "Démo Sierra Leone",
              f"{version}: applicationTitle's translation")
    elif version == "2.42":
        check(settings == {}, f"{version}: settings {settings}")
    else:
        check(settings == {"applicationTitle": "Sierra Leone demo", "keyCalendar": "iso8601",
                           "keyDateFormat": "yyyy-MM-dd", "minPasswordLength": "8",
                           "keyCustomColorMobile": "#007DEB"},
              f"{version}: settings {settings}")

    # Tokens: one type PERSONAL_ACCESS_TOKEN (d2pat_ only) before 2.41, V1/V2 after.
    tokens = {int(r[0]): (r[1], r[2]) for r in query(db, "SELECT apitokenid, type, key FROM api_token")}
    if v < (2, 41):
        check({t for t, _ in tokens.values()} == {"PERSONAL_ACCESS_TOKEN"},
              f"{version}: token types {tokens}")
        for tid, token in TOKENS_240.items():
            key = hashlib.sha256(token.encode()).hexdigest()
            check(tokens.get(tid, (None, None))[1] == key, f"{version}: token {tid}'s key is not {token}'s")
    else:
        check({t for t, _ in tokens.values()} == {"PERSONAL_ACCESS_TOKEN_V1", "PERSONAL_ACCESS_TOKEN_V2"},
              f"{version}: token types {tokens}")
        check(tokens[94002][1] == hashlib.sha256(TOKENS_240[94002].encode()).hexdigest(),
              f"{version}: the d2pat_ token's key changed")

    # userinfo: twofactortype (V2_42_29) and name (V2_42_32) from 2.42; twofa until 2.39.
    ucols = set(column(db, "SELECT column_name FROM information_schema.columns "
                           "WHERE table_name = 'userinfo'"))
    check(("twofactortype" in ucols) == (v >= (2, 42)) and ("name" in ucols) == (v >= (2, 42)),
          f"{version}: userinfo twofactortype/name: {sorted(ucols & {'twofactortype', 'name'})}")
    check(("twofa" in ucols) == (v < (2, 40)), f"{version}: userinfo.twofa: {'twofa' in ucols}")
    # attributevalues carry the "attribute" member until 2.42's V2_42_12.
    av = value(db, "SELECT attributevalues::text FROM organisationunit WHERE organisationunitid = 100001")
    check(('"attribute"' in av) == (v < (2, 42)), f"{version}: org unit attributevalues {av}")
    # The read-only role may read the new tables too.
    check(value(db, "SELECT has_table_privilege('dvexport_reader', 'flyway_schema_history', 'SELECT')")
          in ("t", None) or value(db, "SELECT count(*) FROM pg_roles WHERE rolname = 'dvexport_reader'") == "0",
          f"{version}: dvexport_reader may not read flyway_schema_history")


def main():
    dbs = {}
    try:
        for version in VERSIONS:
            dbs[version] = load(version)
        base_values = int(value(dbs["2.42"], "SELECT count(*) FROM datavalue"))
        for version in VERSIONS:
            check_version(version, dbs[version], base_values)
        # A reload over another version's demo (the drop list knows every version's tables).
        db = dbs["2.39"]
        env = dict(os.environ, PSQL=PSQL, PGDATABASE=db)
        for part in shlex.split(ADMIN):
            key, _, val = part.partition("=")
            if key in ("host", "port", "user"):
                env["PG" + key.upper()] = val
        for version in ("2.43", "2.39"):
            run = subprocess.run([str(ROOT / "deploy/demo/load.sh"), "small", version], env=env,
                                 capture_output=True, text=True)
            check(run.returncode == 0, f"reload {version} over another version: {run.stderr.strip()}")
        check_version("2.39", db, base_values)
        run = subprocess.run([str(ROOT / "deploy/demo/load.sh"), "small", "2.45"], env=env,
                             capture_output=True, text=True)
        check(run.returncode == 2 and "2.39|2.40|2.41|2.42|2.43|2.44" in run.stderr,
              f"load.sh small 2.45: {run.returncode} {run.stderr.strip()}")
    finally:
        for db in dbs.values():
            query("postgres", f"DROP DATABASE IF EXISTS {db}")
    for failure in failures:
        print("FAIL:", failure)
    if failures:
        sys.exit(1)
    print("demo_versions_test: all checks passed")


main()
