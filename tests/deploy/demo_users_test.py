#!/usr/bin/env python3
"""Checks the demo database's DHIS2 users against docs/DEMO.md, by DHIS2 2.42's own rules.

Against the small demo database (DVEXPORT_TEST_PG, the SELECT-only role, so that the grants
are checked too), without dvexport: every documented token is a valid DHIS2 personal access
token (prefix, code, CRC-32 checksum with DHIS2's trailing zero bytes) whose lowercase hex
SHA-256 is api_token.key, owned by the documented user, expired or not as documented; every
documented password matches userinfo.password (bcrypt $2a$ cost 10, checked with libxcrypt's
crypt); and what each user may read, decided with DHIS2's rules written here in SQL (the
metadata-read lookup, E2010, E2011, E2012 and the category option filter of the export query),
is what docs/DEMO.md says. docs/DEMO.md and scripts/demo must name the same tokens. And
docs/DEPLOYMENT.md's least grants, given to a new role (DVEXPORT_TEST_PG_ADMIN, rolled back),
let it run DHIS2's queries for a caller and read the export's tables, but not userinfo.secret.

Usage: demo_users_test.py REPO_ROOT   (DVEXPORT_TEST_PG and DVEXPORT_TEST_PG_ADMIN set;
PG_BINDIR or psql on PATH)
"""

import ctypes
import hashlib
import os
import pathlib
import re
import subprocess
import sys
import time
import zlib

ROOT = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".").resolve()
CONNINFO = os.environ.get("DVEXPORT_TEST_PG")
if not CONNINFO:
    sys.exit("demo_users_test: DVEXPORT_TEST_PG is not set (run through scripts/test)")
PSQL = os.path.join(os.environ["PG_BINDIR"], "psql") if os.environ.get("PG_BINDIR") else "psql"
failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
    return condition


def query(sql):
    """Rows of sql as lists of strings (NULL as None)."""
    run = subprocess.run(
        [PSQL, CONNINFO, "-X", "-q", "-At", "-F", "\t", "-P", "null=\\N", "-v", "ON_ERROR_STOP=1",
         "-c", sql],
        capture_output=True, text=True)
    if run.returncode != 0:
        sys.exit(f"demo_users_test: psql failed: {run.stderr.strip()}\n{sql}")
    out = run.stdout
    return [[None if f == "\\N" else f for f in line.split("\t")]
            for line in out.splitlines()]


def column(sql):
    return [row[0] for row in query(sql)]


# ---------------------------------------------------------------- what docs/DEMO.md says

# Sierra Leone, its district Bo, and the second root (Outside Sierra Leone, id 190001).
SL, BO, OUTSIDE = "ImspTQPwCqd", "O6uvpzGd5pu", "outside"
DATA_SETS = {"Child Health", "Reproductive Health", "Clinical Monitoring Checklist",
             "Partner Support (Funding Partner)", "Population & Infrastructure",
             "ADX: donor without code", "ADX: programme option without code"}
PARTNERS = {"Partner A", "Partner B", "Partner C"}

USERS = {
    # username: (password, superuser, disabled, data sets with data read (E2010),
    #            data view roots (E2012), AOCs whose values are dropped (the SQL filter),
    #            data element groups hidden by the metadata lookup)
    "admin": ("district", True, False, DATA_SETS, {SL, OUTSIDE}, set(), set()),
    "district": ("district-demo", False, False, DATA_SETS, {BO}, set(), set()),
    "programme": ("programme-demo", False, False, {"Child Health"}, {SL}, PARTNERS, {"Malaria"}),
    "partner": ("partner-demo", False, False, {"Partner Support (Funding Partner)"}, {SL},
                {"Partner B", "Partner C"}, {"Malaria"}),
    "disabled": ("disabled-demo", False, True, DATA_SETS, {SL}, set(), set()),
}

TOKENS = [
    # token, owner, expired, allowed methods
    ("d2p_EMi4vUP6lQIv4P9Dib3LY1l1BU5tWXppEMi4vUP6lQIv0GuVIb", "admin", False, []),
    ("d2pat_R4Ua1P1CD8w0rEBctX3aAk73uHHmPDxb1113515116", "admin", False, []),
    ("d2p_gZGPOgx7oXSYJjAcLX7vEosfR3CTh7cVgZGPOgx7oXSY2u4HxU", "district", False, []),
    ("d2p_E5emSnrGkGewbFjsjFXns7r8Z2AuO2qLE5emSnrGkGew0Aft8Z", "programme", False, ["GET"]),
    ("d2p_5Bnr5f6IYo3IFTjB7nsgk9e2zYL6ySSp5Bnr5f6IYo3I4R4fWQ", "partner", False, []),
    ("d2p_LgrgK2qD9Df8EutLYPDphal4ugZsEWCrgxk8N3hVqX4a1ot4MP", "disabled", False, []),
    ("d2p_aV5JpuQPofsMO7Ndvtvji19xqyPeOFMFqQrfqzyfFkZH14IWVK", "district", True, []),
]

# ---------------------------------------------------------------- DHIS2's token format

BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"


def base62(n):
    digits = ""
    while n:
        n, r = divmod(n, 62)
        digits = BASE62[r] + digits
    return digits.rjust(6, "0")


def valid_checksum(token):
    """ApiKeyTokenGenerator.isValidTokenChecksum, with CRC32Utils' zero bytes (3 for V1, 4 for V2)."""
    prefix, _, rest = token.partition("_")
    if prefix == "d2p" and re.fullmatch(r"[0-9A-Za-z]{50}", rest):
        return base62(zlib.crc32(rest[:44].encode() + bytes(4))) == rest[44:]
    if prefix == "d2pat" and re.fullmatch(r"[0-9A-Za-z]{32}[0-9]+", rest):
        return int(rest[32:]) == zlib.crc32(rest[:32].encode() + bytes(3))
    return False


# The self-check of the checksum code: DHIS2's own fixture (ApiKeyTokenGeneratorTest), and
# one changed character.
check(valid_checksum("d2p_lyt5j9WqXaVzJsUhvGJ1w0Ea5GL4jkszazPSWo5HWLFC1QnPCi"),
      "checksum: DHIS2's test token does not pass")
check(not valid_checksum("d2p_lyt5j9WqXaVzJsUhvGJ1w0Ea5GL4jkszazPSWo5HWLFC1QnPCj"),
      "checksum: an altered token passes")

# ---------------------------------------------------------------- libxcrypt

LIBCRYPT = ctypes.CDLL("libcrypt.so.1")
LIBCRYPT.crypt.restype = ctypes.c_char_p
LIBCRYPT.crypt.argtypes = [ctypes.c_char_p, ctypes.c_char_p]


def password_matches(password, stored):
    result = LIBCRYPT.crypt(password.encode(), stored.encode())
    return result is not None and result.decode() == stored


# ---------------------------------------------------------------- DHIS2's rules in SQL

def java_enabled(access, position):
    """AccessStringHelper.isEnabled: null grants; else a valid 8-character string with the letter."""
    letter = "r" if position in (1, 3) else "w"
    return (f"({access} IS NULL OR ({access} ~ '^[r-][w-][r-][w-]----$' "
            f"AND substr({access}, {position}, 1) = '{letter}'))")


def java_allows(sharing, user_id, position):
    """DefaultAclService.checkSharingPermission for the user with userinfoid user_id."""
    return f"""({java_enabled(f"{sharing}->>'public'", position)}
      OR EXISTS (SELECT 1 FROM jsonb_each(coalesce({sharing}->'userGroups', '{{}}')) g
                 WHERE g.value->>'id' IN (SELECT ug.uid FROM usergroupmembers m
                                          JOIN usergroup ug USING (usergroupid)
                                          WHERE m.userid = {user_id})
                   AND {java_enabled("g.value->>'access'", position)})
      OR EXISTS (SELECT 1 FROM jsonb_each(coalesce({sharing}->'users', '{{}}')) u
                 WHERE u.value->>'id' = (SELECT uid FROM userinfo WHERE userinfoid = {user_id})
                   AND {java_enabled("u.value->>'access'", position)}))"""


def sql_readable(sharing, user_id, pattern):
    """The SQL predicate of InternalHibernateGenericStoreImpl / JpaQueryUtils (keys, not ids)."""
    groups = (f"ARRAY(SELECT ug.uid::text FROM usergroupmembers m JOIN usergroup ug "
              f"USING (usergroupid) WHERE m.userid = {user_id})")
    uid = f"(SELECT uid FROM userinfo WHERE userinfoid = {user_id})"
    return f"""({sharing}->>'owner' IS NULL OR {sharing}->>'owner' = 'null'
      OR {sharing}->>'owner' = {uid}
      OR {sharing}->>'public' LIKE '{pattern}' OR {sharing}->>'public' IS NULL
      OR {sharing}->>'public' = 'null'
      OR ({sharing}->'users' ? {uid} AND {sharing}->'users'->{uid}->>'access' LIKE '{pattern}')
      OR ({sharing}->'userGroups' ?| {groups}
          AND EXISTS (SELECT 1 FROM jsonb_each({sharing}->'userGroups') je
                      WHERE je.key = ANY({groups}) AND je.value->>'access' LIKE '{pattern}')))"""


def user_id(username):
    return int(column(f"SELECT userinfoid FROM userinfo WHERE username = '{username}'")[0])


def superuser(uid):
    return column(f"""SELECT exists(SELECT 1 FROM userrolemembers m JOIN userroleauthorities a
                      USING (userroleid) WHERE m.userid = {uid} AND a.authority = 'ALL')""")[0] == "t"


def data_view(uid):
    """Data view org units, else data capture ones (getDataViewOrganisationUnitsWithFallback)."""
    return f"""(SELECT organisationunitid FROM userdatavieworgunits WHERE userinfoid = {uid}
                UNION ALL
                SELECT organisationunitid FROM usermembership WHERE userinfoid = {uid}
                  AND NOT EXISTS (SELECT 1 FROM userdatavieworgunits WHERE userinfoid = {uid}))"""


def in_hierarchy(uid):
    """The org units that pass E2012 (isInUserDataViewHierarchy: a path substring test)."""
    return set(column(f"""SELECT o.uid FROM organisationunit o WHERE EXISTS (
        SELECT 1 FROM organisationunit a WHERE a.organisationunitid IN {data_view(uid)}
          AND strpos(o.path, a.uid) > 0)"""))


# ---------------------------------------------------------------- the checks

outside_uid = column("SELECT uid FROM organisationunit WHERE organisationunitid = 190001")[0]
all_units = set(column("SELECT uid FROM organisationunit"))
now_ms = int(time.time() * 1000)
demo_doc = (ROOT / "docs" / "DEMO.md").read_text()
demo_script = (ROOT / "scripts" / "demo").read_text()

user_list = ",".join(f"'{u}'" for u in USERS)
check(set(column(f"SELECT username FROM userinfo WHERE username = ANY(ARRAY[{user_list}])"))
      == set(USERS), f"users: expected {sorted(USERS)}")

for token, owner, expired, methods in TOKENS:
    check(valid_checksum(token), f"{token[:8]}...: checksum does not pass")
    check(token in demo_doc, f"{token[:8]}... ({owner}) is not in docs/DEMO.md")
    check(token in demo_script, f"{token[:8]}... ({owner}) is not in scripts/demo")
    key = hashlib.sha256(token.encode("utf-8")).hexdigest()
    rows = query(f"""SELECT u.username, t.type, t.expire, t.attributes::text
                     FROM api_token t JOIN userinfo u ON u.userinfoid = t.createdby
                     WHERE t.key = '{key}'""")
    if not check(len(rows) == 1, f"{token[:8]}... ({owner}): no api_token row with its SHA-256 key"):
        continue
    username, kind, expire, attributes = rows[0]
    check(username == owner, f"{token[:8]}...: owner {username}, docs say {owner}")
    check(kind == ("PERSONAL_ACCESS_TOKEN_V1" if token.startswith("d2pat_")
                   else "PERSONAL_ACCESS_TOKEN_V2"), f"{token[:8]}...: type {kind}")
    check((int(expire) <= now_ms) == expired,
          f"{token[:8]}... ({owner}): expire {expire}, docs say expired={expired}")
    listed = re.findall(r'"allowedMethods": \[([^\]]*)\]', attributes)
    check([m.strip(' "') for m in ",".join(listed).split(",") if m.strip()] == methods,
          f"{token[:8]}... ({owner}): attributes {attributes}, docs say methods {methods}")
    check("Referrer" not in attributes and "IpAllowed" not in attributes,
          f"{token[:8]}... ({owner}): an IP or referrer list would refuse it over loopback gRPC")
check(int(column("SELECT count(*) FROM api_token WHERE apitokenid BETWEEN 94001 AND 94999")[0])
      == len(TOKENS), "api_token: the demo has tokens docs/DEMO.md does not list")

for username, (password, is_super, disabled, data_read, view_roots, dropped, hidden) in USERS.items():
    uid = user_id(username)
    row = query(f"""SELECT password, disabled, accountexpiry, twofactortype, externalauth
                    FROM userinfo WHERE userinfoid = {uid}""")[0]
    stored = row[0]
    check(re.fullmatch(r"\$2a\$10\$[./0-9A-Za-z]{53}", stored) is not None,
          f"{username}: the password hash is not bcrypt $2a$ cost 10")
    check(password_matches(password, stored), f"{username}: the documented password does not match")
    check(not password_matches(password + "x", stored), f"{username}: a wrong password matches")
    check(f"`{password}`" in demo_doc, f"{username}: password not in docs/DEMO.md")
    check((row[1] == "t") == disabled, f"{username}: disabled={row[1]}, docs say {disabled}")
    check(row[2] is None and row[3] == "NOT_ENABLED" and row[4] == "f",
          f"{username}: account expiry, two-factor or external authentication set: {row[2:]}")
    check(superuser(uid) == is_super, f"{username}: superuser={not is_super}, docs say {is_super}")

    # E2010: data sets whose data the user may read (Java: data read or data write).
    readable = set(DATA_SETS) if is_super else set(column(
        f"""SELECT name FROM dataset d
            WHERE {java_allows('d.sharing', uid, 3)} OR {java_allows('d.sharing', uid, 4)}"""))
    check(readable == data_read, f"{username}: data read on {sorted(readable)}, docs say "
          f"{sorted(data_read)}")
    # Resolution: every data set, data element and org unit group is visible as metadata;
    # data element groups as documented.
    if not is_super:
        for table, pattern in (("dataset", "r%"), ("dataelement", "r%"), ("orgunitgroup", "r%")):
            hidden_here = column(f"SELECT uid FROM {table} t WHERE NOT "
                                 f"{sql_readable('t.sharing', uid, pattern)}")
            check(not hidden_here, f"{username}: {table} hidden from the metadata lookup: "
                  f"{hidden_here}")
        hidden_groups = set(column(f"SELECT name FROM dataelementgroup t WHERE NOT "
                                   f"{sql_readable('t.sharing', uid, 'r%')}"))
        check(hidden_groups == hidden, f"{username}: data element groups hidden "
              f"{sorted(hidden_groups)}, docs say {sorted(hidden)}")

    # E2012: the units that pass are the documented roots' subtrees (superusers too).
    roots = {outside_uid if r == OUTSIDE else r for r in view_roots}
    root_list = ",".join(f"'{r}'" for r in roots)
    expected_units = set(column(
        "SELECT o.uid FROM organisationunit o JOIN organisationunit r "
        f"ON o.path LIKE r.path || '%' WHERE r.uid = ANY(ARRAY[{root_list}])"))
    passing = in_hierarchy(uid)
    check(passing == expected_units, f"{username}: {len(passing)} org units pass E2012, "
          f"expected the {len(expected_units)} under {sorted(roots)}")
    if is_super:
        check(passing == all_units, f"{username}: E2012 fails for some org unit")

    # The export query's filter: attribute option combos with an option the user may not read.
    if not is_super:
        # An AOC is named here by its options' names (Partner C's combo has no name).
        aocs = set(column(f"""SELECT string_agg(o.name, ', ' ORDER BY o.name)
            FROM categoryoptioncombos_categoryoptions x JOIN categoryoption o USING (categoryoptionid)
            WHERE x.categoryoptioncomboid IN (
              SELECT cocco.categoryoptioncomboid FROM categoryoptioncombos_categoryoptions cocco
              WHERE cocco.categoryoptionid NOT IN (
                SELECT co.categoryoptionid FROM categoryoption co
                WHERE {sql_readable('co.sharing', uid, '__r_____')}))
            GROUP BY x.categoryoptioncomboid"""))
        check(aocs == dropped, f"{username}: values of {sorted(aocs)} dropped, docs say "
              f"{sorted(dropped)}")
        # E2011 (Java), for the partner combos asked for explicitly: the same decision here.
        for partner in PARTNERS:
            allowed = column(f"""SELECT bool_and({java_allows('co.sharing', uid, 3)})
                OR bool_and({java_allows('co.sharing', uid, 4)})
                FROM categoryoptioncombos_categoryoptions cocco
                JOIN categoryoption co USING (categoryoptionid)
                WHERE cocco.categoryoptioncomboid = (
                  SELECT x.categoryoptioncomboid FROM categoryoptioncombos_categoryoptions x
                  JOIN categoryoption o USING (categoryoptionid) WHERE o.name = '{partner}')""")
            check((allowed[0] == "t") == (partner not in dropped),
                  f"{username}: E2011 for {partner}: allowed={allowed[0]}")

# Partner Support holds values of the three partners, and default values of the elements it
# shares with Child Health: the partner's export keeps those and Partner A's.
counts = dict(query("""SELECT co.name, count(*) FROM datavalue dv
    JOIN categoryoptioncombos_categoryoptions x ON x.categoryoptioncomboid = dv.attributeoptioncomboid
    JOIN categoryoption co USING (categoryoptionid)
    WHERE dv.dataelementid IN (SELECT dataelementid FROM datasetelement WHERE datasetid = 5004)
      AND NOT dv.deleted GROUP BY 1"""))
check(set(counts) == PARTNERS | {"default"} and all(int(n) > 0 for n in counts.values()),
      f"Partner Support: values by attribute option combo {counts}")

# ---------------------------------------------------------------- the least grants

# docs/DEPLOYMENT.md's grants, on a new role in a transaction that is rolled back: the service's
# own queries for a caller (service/db/identity.cc, access_rules.cc's data view, change tokens'
# functions) and the export's tables work as that role, and userinfo's secrets stay out of its
# reach. (The service reads userrolemembers and userroleauthorities, never userrole.)
deployment = (ROOT / "docs" / "DEPLOYMENT.md").read_text()
blocks = [b for b in re.findall(r"```sql\n(.*?)```", deployment, re.S) if "ON userinfo" in b]
ADMIN = os.environ.get("DVEXPORT_TEST_PG_ADMIN")
if check(len(blocks) == 1, "docs/DEPLOYMENT.md: no single sql block granting on userinfo") and \
        check(ADMIN, "DVEXPORT_TEST_PG_ADMIN is not set"):
    role = f"dvexport_grants_check_{os.getpid()}"
    grants = "\n".join(line for line in blocks[0].replace("dvexport_reader", role).splitlines()
                       if "ON DATABASE" not in line)
    token_key = hashlib.sha256(TOKENS[0][0].encode()).hexdigest()
    as_role = f"""BEGIN;
CREATE ROLE {role} NOLOGIN;
{grants}
SET ROLE {role};
SELECT u.userinfoid, u.uid, u.username, u.password, coalesce(u.disabled, false),
       floor(extract(epoch FROM u.accountexpiry) * 1000)::bigint,
       floor(extract(epoch FROM u.passwordlastupdated) * 1000)::bigint,
       u.twofactortype, coalesce(u.externalauth, false),
       EXISTS (SELECT 1 FROM userrolemembers m JOIN userroleauthorities a USING (userroleid)
               WHERE m.userid = u.userinfoid AND a.authority = 'ALL'),
       EXISTS (SELECT 1 FROM userrolemembers m JOIN userrolerestrictions r USING (userroleid)
               WHERE m.userid = u.userinfoid AND r.restriction = 'R_ENABLE_2FA')
  FROM userinfo u WHERE u.username = 'partner';
SELECT g.uid FROM usergroupmembers m JOIN usergroup g USING (usergroupid) WHERE m.userid = 91004;
SELECT apitokenid, uid, createdby, expire, attributes FROM api_token WHERE key = '{token_key}';
SELECT to_regclass('systemsetting') IS NOT NULL;
SELECT value FROM systemsetting WHERE name = 'credentialsExpires';
WITH dv AS (SELECT organisationunitid FROM userdatavieworgunits WHERE userinfoid = 91004)
SELECT a.uid FROM organisationunit a WHERE a.organisationunitid IN (
  SELECT organisationunitid FROM dv UNION ALL SELECT organisationunitid FROM usermembership
   WHERE userinfoid = 91004 AND NOT EXISTS (SELECT 1 FROM dv));
SELECT (pg_control_system()).system_identifier, pg_current_snapshot(), pg_current_wal_insert_lsn(),
       pg_relation_size('datavalue'::regclass), pg_is_in_recovery();
SELECT count(*) FROM information_schema.columns WHERE table_name = 'period' AND column_name = 'iso';
""" + "".join(f"SELECT * FROM {t} LIMIT 0;\n" for t in (
        "datavalue", "period", "periodtype", "organisationunit", "dataelement", "dataset",
        "datasetelement", "dataelementgroup", "dataelementgroupmembers", "orgunitgroup",
        "orgunitgroupmembers", "categorycombo", "categoryoptioncombo",
        "categorycombos_optioncombos", "categoryoption", "categoryoptioncombos_categoryoptions",
        "category", "categorycombos_categories", "categories_categoryoptions",
        "completedatasetregistration")) + "ROLLBACK;\n"
    run = subprocess.run([PSQL, ADMIN, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"],
                         input=as_role, capture_output=True, text=True)
    check(run.returncode == 0, f"docs/DEPLOYMENT.md's grants: {run.stderr.strip()}")
    secret = subprocess.run([PSQL, ADMIN, "-X", "-q", "-At", "-v", "ON_ERROR_STOP=1"],
                            input=f"BEGIN;\nCREATE ROLE {role} NOLOGIN;\n{grants}\nSET ROLE {role};\n"
                                  "SELECT secret FROM userinfo;\nROLLBACK;\n",
                            capture_output=True, text=True)
    check(secret.returncode != 0 and "permission denied" in secret.stderr,
          f"docs/DEPLOYMENT.md's grants let the role read userinfo.secret: {secret.stderr.strip()}")

if failures:
    for failure in failures:
        print("FAIL:", failure)
    sys.exit(1)
print(f"demo users: {len(USERS)} users, {len(TOKENS)} tokens as docs/DEMO.md says")
