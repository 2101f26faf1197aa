#!/usr/bin/env bash
# End to end through the real binaries: dvexport-server on a free port, the
# dvexport CLI writing .json, .csv, .xml, .adx and their .gz files, and .json.zip,
# .json.zst (and CSV likewise), checked by independent tools (python3's json,
# csv, xml.etree (expat), gzip and zipfile modules, unzip, zstd) and against the
# database.
# Usage: cli_export_test.sh SERVER_BINARY CLI_BINARY   (DVEXPORT_TEST_PG set)
set -euo pipefail
server_bin=$1
cli_bin=$2

# shellcheck source=tests/e2e/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"

start_server "$server_bin"

psql_q() { psql "$DVEXPORT_TEST_PG" -XAtq -c "$1"; }
mapfile -t data_sets < <(psql_q "SELECT uid FROM dataset ORDER BY uid")
# The root with the most units below it.
root=$(psql_q "SELECT o.uid FROM organisationunit o WHERE o.parentid IS NULL ORDER BY
  (SELECT count(*) FROM organisationunit c WHERE c.path LIKE o.path || '%') DESC, o.uid LIMIT 1")
expected=$(psql_q "SELECT count(*) FROM datavalue dv JOIN period pe ON pe.periodid = dv.periodid
  JOIN organisationunit ou ON ou.organisationunitid = dv.sourceid
  WHERE dv.dataelementid IN (SELECT dataelementid FROM datasetelement)
  AND ou.path LIKE '/$root%' AND pe.startdate >= '2023-01-01' AND pe.enddate <= '2024-12-31'
  AND NOT dv.deleted")
(( expected > 0 )) || fail "no values expected: is the demo database loaded?"

args=(export --server "$server" --org-unit "$root" --children --start-date 2023-01-01
  --end-date 2024-12-31)
for ds in "${data_sets[@]}"; do args+=(--data-set "$ds"); done

for file in values.json values.csv values.xml values.json.gz values.csv.gz values.xml.gz \
  values.json.zip values.csv.zip values.json.zst values.csv.zst; do
  "$cli_bin" "${args[@]}" -o "$work/$file" 2>"$work/cli.log" || { cat "$work/cli.log" >&2; fail "export to $file"; }
  grep -q "^dvexport: wrote $expected values" "$work/cli.log" || { cat "$work/cli.log" >&2; fail "summary of $file"; }
done

python3 - "$work" "$expected" <<'PY'
import csv, gzip, io, json, sys
import xml.etree.ElementTree as ET
work, expected = sys.argv[1], int(sys.argv[2])
raw = open(f"{work}/values.json", "rb").read()
doc = json.loads(raw.decode("utf-8"))
assert list(doc.keys()) == ["dataValues"], doc.keys()
assert len(doc["dataValues"]) == expected, (len(doc["dataValues"]), expected)
assert gzip.decompress(open(f"{work}/values.json.gz", "rb").read()) == raw, "json.gz differs"
text = open(f"{work}/values.csv", "rb").read()
assert gzip.decompress(open(f"{work}/values.csv.gz", "rb").read()) == text, "csv.gz differs"
rows = list(csv.reader(io.StringIO(text.decode("utf-8"), newline="")))
assert rows[0][0] == "dataelement" and len(rows) == expected + 1, len(rows)
xml = open(f"{work}/values.xml", "rb").read()
assert gzip.decompress(open(f"{work}/values.xml.gz", "rb").read()) == xml, "xml.gz differs"
assert xml.startswith(b"<?xml version='1.0' encoding='UTF-8'?><dataValueSet "), xml[:80]
root = ET.fromstring(xml)  # expat: fails on anything not well-formed
ns = "{http://dhis2.org/schema/dxf/2.0}"
assert root.tag == ns + "dataValueSet", root.tag
values = list(root)
assert len(values) == expected and all(v.tag == ns + "dataValue" for v in values), len(values)
# The same values as the JSON, but what XML 1.0 cannot carry (U+FFFD).
def xml_chars(s):
    return "".join(c if c in "\t\n\r" or (" " <= c and c not in "\ufffe\uffff") else "\ufffd"
                   for c in s)
keys = ["dataElement", "period", "orgUnit", "categoryOptionCombo", "attributeOptionCombo",
        "value", "storedBy", "created", "lastUpdated", "comment"]
from_json = sorted(tuple(None if v[k] is None else xml_chars(v[k]) for k in keys)
                   for v in doc["dataValues"])
from_xml = sorted(tuple(v.get(k) for k in keys) for v in values)
assert from_xml == from_json, "xml values differ from json values"
# One entry, named as DHIS2 2.42 names it.
import zipfile
for ext, plain in (("json", raw), ("csv", text)):
    with zipfile.ZipFile(f"{work}/values.{ext}.zip") as z:
        name = f"dataValues_2023-01-01_2024-12-31.{ext}"
        assert z.namelist() == [name], z.namelist()
        assert z.read(name) == plain, f"{ext}.zip differs"
PY
for ext in json csv; do
  unzip -tq "$work/values.$ext.zip" >/dev/null || fail "unzip -t values.$ext.zip"
  zstd -qdc "$work/values.$ext.zst" | cmp -s - "$work/values.$ext" || fail "values.$ext.zst differs"
done
# Levels: zstd 9 (the server's default --max_zstd_level) gives the same content, no larger;
# zstd 10 is refused by the server, naming the limit.
"$cli_bin" "${args[@]}" -o "$work/best.json.zst" --compression-level 9 2>/dev/null ||
  fail "zstd level 9"
zstd -qdc "$work/best.json.zst" | cmp -s - "$work/values.json" || fail "level 9 differs"
(( $(stat -c %s "$work/best.json.zst") <= $(stat -c %s "$work/values.json.zst") )) ||
  fail "zstd level 9 is larger than level 1"
if "$cli_bin" "${args[@]}" -o "$work/refused.json.zst" --compression-level 10 2>"$work/cli.log"; then
  fail "zstd level 10 was accepted"
fi
grep -q "above this server's zstd limit, 9 (--max_zstd_level" "$work/cli.log" ||
  fail "zstd level 10: $(cat "$work/cli.log")"

# -o - writes the same bytes to stdout.
"$cli_bin" "${args[@]}" --format json -o - >"$work/stdout.json" 2>/dev/null
cmp -s "$work/stdout.json" "$work/values.json" || fail "stdout export differs from file export"
"$cli_bin" "${args[@]}" --format xml -o - >"$work/stdout.xml" 2>/dev/null
cmp -s "$work/stdout.xml" "$work/values.xml" || fail "stdout xml export differs from file export"

# count prints the number of values; stream writes one JSON line per value;
# health says SERVING and exits 0.
filters=("${args[@]:1}")
counted=$("$cli_bin" count "${filters[@]}")
[[ "$counted" == "$expected" ]] || fail "count printed '$counted', expected $expected"
"$cli_bin" stream "${filters[@]}" -o "$work/values.ndjson" 2>"$work/cli.log" ||
  { cat "$work/cli.log" >&2; fail "stream"; }
[[ "$(wc -l <"$work/values.ndjson")" == "$expected" ]] || fail "stream line count"
python3 - "$work/values.ndjson" <<'PY'
import json, sys
for line in open(sys.argv[1], encoding="utf-8"):
    v = json.loads(line)
    assert "period" in v and "created" in v and v["deleted"] is False, v
PY
[[ "$("$cli_bin" health --server "$server")" == "SERVING" ]] || fail "health"
"$cli_bin" export "${filters[@]}" --format json-pretty -o "$work/pretty.json" 2>/dev/null ||
  fail "json-pretty export"
python3 -c 'import json, sys; assert json.load(open(sys.argv[1])) == json.load(open(sys.argv[2]))' \
  "$work/pretty.json" "$work/values.json" || fail "json-pretty differs from json once parsed"

# ADX: .adx, .adx.gz and .adx.zst hold the same document, one value per (data set, value) of the
# data sets whose categories have codes; one whose category has none fails before any byte.
mapfile -t adx_sets < <(psql_q "SELECT uid FROM dataset WHERE code NOT LIKE 'DS_ADX%' ORDER BY uid")
adx_args=(export --server "$server" --org-unit "$root" --children --start-date 2023-01-01
  --end-date 2024-12-31)
for ds in "${adx_sets[@]}"; do adx_args+=(--data-set "$ds"); done
adx_expected=$(psql_q "SELECT count(*) FROM datavalue dv JOIN period pe ON pe.periodid = dv.periodid
  JOIN organisationunit ou ON ou.organisationunitid = dv.sourceid
  JOIN datasetelement dse ON dse.dataelementid = dv.dataelementid
  JOIN dataset ds ON ds.datasetid = dse.datasetid AND ds.code NOT LIKE 'DS_ADX%'
  JOIN categorycombos_optioncombos cco ON cco.categorycomboid = ds.categorycomboid
  AND cco.categoryoptioncomboid = dv.attributeoptioncomboid
  WHERE ou.path LIKE '/$root%' AND pe.startdate >= '2023-01-01' AND pe.enddate <= '2024-12-31'
  AND NOT dv.deleted")
for file in values.adx values.adx.gz values.adx.zst; do
  "$cli_bin" "${adx_args[@]}" -o "$work/$file" 2>"$work/cli.log" || { cat "$work/cli.log" >&2; fail "export to $file"; }
  grep -q "^dvexport: wrote $adx_expected values" "$work/cli.log" || { cat "$work/cli.log" >&2; fail "summary of $file"; }
done
gzip -dc "$work/values.adx.gz" | cmp -s - "$work/values.adx" || fail "adx.gz differs"
zstd -qdc "$work/values.adx.zst" | cmp -s - "$work/values.adx" || fail "adx.zst differs"
python3 - "$work/values.adx" "$adx_expected" <<'PY'
import sys
import xml.etree.ElementTree as ET
ns = "{urn:ihe:qrph:adx:2015}"
root = ET.parse(sys.argv[1]).getroot()  # expat: fails on anything not well-formed
assert root.tag == ns + "adx", root.tag
values = [v for g in root for v in g]
assert len(values) == int(sys.argv[2]), (len(values), sys.argv[2])
assert all(g.tag == ns + "group" and "/P" in g.get("period") for g in root)
PY
adx_broken=$(psql_q "SELECT uid FROM dataset WHERE code = 'DS_ADX_DONOR'")
if "$cli_bin" "${adx_args[@]}" --data-set "$adx_broken" -o "$work/broken.adx" 2>"$work/err.log"; then
  fail "an ADX export of a category without code should fail"
fi
grep -q "FAILED_PRECONDITION: Category CODE for Donor is missing or invalid: null" "$work/err.log" ||
  { cat "$work/err.log" >&2; fail "ADX error message"; }
[[ ! -e "$work/broken.adx" ]] || fail "a failed ADX export left a file"

# A failing export exits 1, says why, and leaves the target untouched.
echo "keep me" >"$work/existing.json"
if "$cli_bin" export --server "$server" --org-unit "$root" --data-set aaaaaaaaaaa \
  --period 202401 -o "$work/existing.json" 2>"$work/err.log"; then
  fail "an unknown data set should fail"
fi
grep -q "NOT_FOUND" "$work/err.log" || { cat "$work/err.log" >&2; fail "error message"; }
[[ "$(cat "$work/existing.json")" == "keep me" ]] || fail "the target file was changed"
[[ -z "$(find "$work" -name '.*dvexport*')" ]] || fail "a temporary file was left behind"

# A usage error exits 2.
set +e
"$cli_bin" export --no-such-flag >/dev/null 2>&1
[[ $? == 2 ]] || fail "usage errors should exit 2"
"$cli_bin" count --server "$server" -o x.json >/dev/null 2>&1
[[ $? == 2 ]] || fail "count -o should be a usage error"
# health exits 1 when the server cannot be reached.
"$cli_bin" health --server 127.0.0.1:1 --timeout 5 >/dev/null 2>&1
[[ $? == 1 ]] || fail "health of an unreachable server should exit 1"
set -e

# DHIS2 2.43's order and paging on the 2.43 demo database: --order OU,DE --limit 5 --offset 5
# exports rows 6 to 10 of the same ordered export without --limit and --offset.
if [[ -z "${DVEXPORT_TEST_PG_243:-}" ]]; then
  echo "cli_export_test: SKIP the 2.43 --order/--offset case: DVEXPORT_TEST_PG_243 is not set"
else
  kill "$server_pid" && wait "$server_pid" || fail "the server did not exit 0 on SIGTERM"
  server_pid=
  rm -f "$work/port"
  start_server "$server_bin" --pg "$DVEXPORT_TEST_PG_243"
  ordered=(export --server "$server" --data-set QfF9ZANatcj --org-unit ImspTQPwCqd --children
    --start-date 2023-01-01 --end-date 2024-12-31 --order OU,DE)
  "$cli_bin" "${ordered[@]}" -o "$work/ordered.csv" 2>"$work/cli.log" ||
    { cat "$work/cli.log" >&2; fail "2.43 export ordered by OU,DE"; }
  "$cli_bin" "${ordered[@]}" --limit 5 --offset 5 -o "$work/page.csv" 2>"$work/cli.log" ||
    { cat "$work/cli.log" >&2; fail "2.43 export with --limit 5 --offset 5"; }
  python3 - "$work/ordered.csv" "$work/page.csv" <<'PY' || fail "2.43 page is not rows 6-10"
import csv, sys
full, page = (list(csv.reader(open(p, encoding="utf-8", newline=""))) for p in sys.argv[1:])
assert len(full) > 11, f"only {len(full) - 1} values ordered: too few for a second page"
assert page[0] == full[0], (page[0], full[0])
assert page[1:] == full[6:11], (page[1:], full[6:11])
PY
fi
echo "cli_export_test: $expected values in every format"
