#!/usr/bin/env bash
# DHIS2's URL GET /api/dataValueSets on dvexport-server's HTTP door, called as DHIS2's own clients
# call it (docs/DHIS2-COMPATIBILITY.md, "DHIS2's URL over HTTP"): curl as DHIS2's docs show it (-u,
# --compressed, ApiToken, .json/.csv/.xml/.adx.xml, Accept, compression=gzip|zip|zstd,
# attachment, versioned paths, HEAD), then Python requests and the web apps' way
# (clients_test.py). Every 200's body must be byte for byte what the gRPC CLI's ExportFile
# writes for the same request (one COPY per export: --read_streams 1), after gunzip or unzip
# where asked; statuses, WebMessages and headers are DHIS2 2.42's.
# Usage: clients_test.sh SERVER_BINARY CLI_BINARY   (DVEXPORT_TEST_PG set)
set -euo pipefail
server_bin=$1
cli_bin=$2
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# shellcheck source=tests/http_e2e/lib.sh
source "$here/lib.sh"

if ! python3 -c 'import requests' 2>/dev/null; then
  echo "SKIP: python3-requests is not installed (scripts/lib/deps.sh installs it)"
  exit 77
fi

start_http_server main "$server_bin" --read_streams 1
base="http://$http"

psql_q() { psql "$DVEXPORT_TEST_PG" -XAtq -c "$1"; }
# A facility with Child Health values in January 2024: one data set, one period, one org unit
# gives DHIS2's single data value set header ({"dataSet":...,"period":...,"orgUnit":...}).
facility=$(psql_q "SELECT ou.uid FROM datavalue dv JOIN period pe USING (periodid)
  JOIN periodtype pt USING (periodtypeid) JOIN organisationunit ou ON ou.organisationunitid = dv.sourceid
  WHERE pt.name = 'Monthly' AND pe.startdate = '2024-01-01' AND NOT dv.deleted
  AND dv.dataelementid IN (SELECT dataelementid FROM datasetelement JOIN dataset USING (datasetid)
                           WHERE dataset.uid = 'JurnHCkmDCn')
  ORDER BY ou.uid LIMIT 1")
[[ -n "$facility" ]] || fail "no Child Health values in 202401: is the demo database loaded?"

# What the gRPC CLI writes for each request.
mkdir -p "$work/expected"
q1=(--data-set JurnHCkmDCn --period 202401 --org-unit ImspTQPwCqd --children)
for file in q1.json q1.csv q1.xml q1.adx; do cli_export "$work/expected/$file" "${q1[@]}"; done
grep -q '"dataElement":' "$work/expected/q1.json" || fail "the CLI exported no values for q1"
cli_export "$work/expected/q2.json" --org-unit O6uvpzGd5pu --org-unit fdc6uOvgoji --children \
  --data-set JurnHCkmDCn --data-set Se00xj4OCO2 --start-date 2023-01-01 --end-date 2023-12-31
cli_export "$work/expected/q3.json" --data-set JurnHCkmDCn,QfF9ZANatcj --period 202401,202402 \
  --org-unit ImspTQPwCqd --children
cli_export "$work/expected/q4.json" --data-set JurnHCkmDCn --period 202401 --org-unit "$facility"
grep -q '^{"dataSet":"JurnHCkmDCn",' "$work/expected/q4.json" ||
  fail "q4 should have DHIS2's single data value set header: $(head -c 200 "$work/expected/q4.json")"

# get NAME [curl args...]: $work/NAME.body and $work/NAME.headers; prints the status.
get() {
  local name=$1
  shift
  curl -sS -o "$work/$name.body" -D "$work/$name.headers" -w '%{http_code}' "$@"
}
# header NAME FIELD: the value of FIELD in $work/NAME.headers (empty when absent).
header() {
  awk -v f="$(tr '[:upper:]' '[:lower:]' <<<"$2")" -F': ' \
    'tolower($1) == f { sub(/\r$/, ""); sub(/^[^:]*: /, ""); print; exit }' "$work/$1.headers"
}
expect_status() {  # NAME GOT WANT
  [[ "$2" == "$3" ]] || fail "$1: status $2, expected $3: $(head -c 400 "$work/$1.body")"
}
expect_header() {  # NAME FIELD VALUE
  local got
  got="$(header "$1" "$2")"
  [[ "$got" == "$3" ]] || fail "$1: $2 is '$got', expected '$3'"
}
expect_no_header() {  # NAME FIELD
  [[ -z "$(header "$1" "$2")" ]] || fail "$1: unexpected header $2: $(header "$1" "$2")"
}
expect_body() {  # NAME EXPECTED_FILE
  cmp -s "$work/$1.body" "$2" ||
    fail "$1: the body differs from the CLI's $(basename "$2") ($(stat -c %s "$work/$1.body") against $(stat -c %s "$2") bytes; first difference: $(cmp "$work/$1.body" "$2" 2>&1 | head -n 1))"
}
no_store="no-cache, no-store, max-age=0, must-revalidate"
json_type="application/json;charset=UTF-8"
q1_query="dataSet=JurnHCkmDCn&period=202401&orgUnit=ImspTQPwCqd&children=true"

# curl -u admin:PASSWORD, as DHIS2's docs show it: the .json suffix.
status=$(get basic_json -u "admin:$admin_password" "$base/api/dataValueSets.json?$q1_query")
expect_status basic_json "$status" 200
expect_body basic_json "$work/expected/q1.json"
expect_header basic_json Content-Type "$json_type"
expect_header basic_json Cache-Control "$no_store"
expect_header basic_json Transfer-Encoding chunked
expect_no_header basic_json Content-Encoding
expect_no_header basic_json Content-Disposition
expect_no_header basic_json Content-Length
[[ -n "$(header basic_json Dvexport-Change-Token)" ]] || fail "basic_json: no Dvexport-Change-Token"

# --compressed (Accept-Encoding: deflate, gzip, br) with a token: DHIS2 ignores Accept-Encoding,
# so the body is the plain JSON and no Content-Encoding comes back.
status=$(get compressed --compressed -H "Authorization: ApiToken $admin_token" \
  "$base/api/dataValueSets.json?$q1_query")
expect_status compressed "$status" 200
expect_no_header compressed Content-Encoding
expect_body compressed "$work/expected/q1.json"

# The other suffixes, and Accept instead of a suffix.
status=$(get csv -u "admin:$admin_password" "$base/api/dataValueSets.csv?$q1_query")
expect_status csv "$status" 200
expect_body csv "$work/expected/q1.csv"
expect_header csv Content-Type "application/csv;charset=UTF-8"
status=$(get xml -u "admin:$admin_password" "$base/api/dataValueSets.xml?$q1_query")
expect_status xml "$status" 200
expect_body xml "$work/expected/q1.xml"
expect_header xml Content-Type "application/xml;charset=UTF-8"
status=$(get adx -u "admin:$admin_password" "$base/api/dataValueSets.adx.xml?$q1_query")
expect_status adx "$status" 200
expect_body adx "$work/expected/q1.adx"
expect_header adx Content-Type "application/adx+xml;charset=UTF-8"
status=$(get accept_xml -H "Accept:application/xml" -u "admin:$admin_password" \
  "$base/api/dataValueSets?$q1_query")
expect_status accept_xml "$status" 200
expect_body accept_xml "$work/expected/q1.xml"
status=$(get format_csv -H "Authorization: ApiToken $admin_token" \
  "$base/api/dataValueSets.xml?$q1_query&format=csv")
expect_status format_csv "$status" 200
expect_body format_csv "$work/expected/q1.csv"

# Versioned paths and a trailing slash reach the same export.
for path in /api/28/dataValueSets.json /api/42/dataValueSets /api/dataValueSets/; do
  status=$(get versioned -H "Authorization: ApiToken $admin_token" "$base$path?$q1_query")
  expect_status "versioned $path" "$status" 200
  expect_body versioned "$work/expected/q1.json"
done
status=$(get header_form -H "Authorization: ApiToken $admin_token" \
  "$base/api/dataValueSets.json?dataSet=JurnHCkmDCn&period=202401&orgUnit=$facility")
expect_status header_form "$status" 200
expect_body header_form "$work/expected/q4.json"

# compression=gzip: a gzip body under the plain format's Content-Type, named by DHIS2's rule.
status=$(get gzip -H "Authorization: ApiToken $admin_token" \
  "$base/api/dataValueSets.json?$q1_query&compression=gzip")
expect_status gzip "$status" 200
expect_header gzip Content-Type "$json_type"
expect_header gzip Content-Disposition "attachment; filename=dataValues.json.gz"
expect_header gzip Content-Transfer-Encoding binary
expect_header gzip Cache-Control "$no_store"
expect_no_header gzip Content-Encoding
gzip -dc <"$work/gzip.body" >"$work/gunzipped.body" || fail "gzip: the body is not gzip"
expect_body gunzipped "$work/expected/q1.json"
# --compressed does not unpack it: there is no Content-Encoding to act on.
status=$(get gzip_compressed --compressed -u "admin:$admin_password" \
  "$base/api/dataValueSets.csv?$q1_query&compression=GZIP")
expect_status gzip_compressed "$status" 200
expect_header gzip_compressed Content-Type "application/csv;charset=UTF-8"
expect_header gzip_compressed Content-Disposition "attachment; filename=dataValues.csv.gz"
gzip -dc <"$work/gzip_compressed.body" >"$work/gunzipped_csv.body" || fail "csv.gz: not gzip"
expect_body gunzipped_csv "$work/expected/q1.csv"

# compression=zip: one entry, dataValues.json.
status=$(get zip -H "Authorization: ApiToken $admin_token" \
  "$base/api/dataValueSets.json?$q1_query&compression=zip")
expect_status zip "$status" 200
expect_header zip Content-Type "$json_type"
expect_header zip Content-Disposition "attachment; filename=dataValues.json.zip"
[[ "$(unzip -Z1 "$work/zip.body")" == dataValues.json ]] ||
  fail "zip: entries $(unzip -Z1 "$work/zip.body" | tr '\n' ' ')"
unzip -p "$work/zip.body" dataValues.json >"$work/unzipped.body"
expect_body unzipped "$work/expected/q1.json"

# compression=zstd, dvexport's own addition.
status=$(get zstd -H "Authorization: ApiToken $admin_token" \
  "$base/api/dataValueSets.json?$q1_query&compression=zstd")
expect_status zstd "$status" 200
expect_header zstd Content-Type "$json_type"
zstd -qdc <"$work/zstd.body" >"$work/unzstd.body" || fail "zstd: the body is not zstd"
expect_body unzstd "$work/expected/q1.json"

# attachment=my.json with a period: DHIS2 keeps the name and appends the format.
status=$(get attachment -H "Authorization: ApiToken $admin_token" \
  "$base/api/dataValueSets.json?$q1_query&attachment=my.json")
expect_status attachment "$status" 200
expect_header attachment Content-Disposition "attachment; filename=my.json.json"
expect_header attachment Content-Transfer-Encoding binary
expect_body attachment "$work/expected/q1.json"

# HEAD (curl -I): GET's headers, no body.
status=$(get head -I -H "Authorization: ApiToken $admin_token" \
  "$base/api/dataValueSets.json?$q1_query&compression=gzip")
expect_status head "$status" 200
# curl -I writes the headers to its output too: anything after them would be a body.
cmp -s "$work/head.body" "$work/head.headers" ||
  fail "HEAD: a body after the headers ($(stat -c %s "$work/head.body") bytes against $(stat -c %s "$work/head.headers"))"
for field in Content-Type Content-Disposition Cache-Control Content-Transfer-Encoding \
  X-Content-Type-Options; do
  expect_header head "$field" "$(header gzip "$field")"
done

# Refusals: DHIS2's WebMessages.
# No credentials and a wrong password: 401 JSON without WWW-Authenticate (not DHIS2's 302 to
# its login page, which no dvexport client could follow).
webmessage() {  # NAME STATUS HTTP_STATUS [ERROR_CODE MESSAGE_PART]: checks a JSON WebMessage
  python3 - "$work/$1.body" "$2" "$3" "${4:-}" "${5:-}" <<'PY' || fail "$1: $(head -c 400 "$work/$1.body")"
import json, sys
path, code, text, error_code, part = sys.argv[1:]
m = json.loads(open(path, "rb").read().decode("utf-8"))
keys = list(m)
assert keys[:4] == ["httpStatus", "httpStatusCode", "status", "message"], keys
assert m["httpStatus"] == text and m["httpStatusCode"] == int(code), m
assert m["status"] == "ERROR" and m["message"], m
if error_code:
    assert m.get("errorCode") == error_code and keys[-1] == "errorCode", m
    assert part in m["message"], (part, m["message"])
print(f"  {code} {m['message']}")
PY
}
status=$(get anonymous "$base/api/dataValueSets.json?$q1_query")
expect_status anonymous "$status" 401
expect_no_header anonymous WWW-Authenticate
[[ "$(header anonymous Content-Type)" == application/json* ]] ||
  fail "anonymous: Content-Type $(header anonymous Content-Type)"
webmessage anonymous 401 Unauthorized
status=$(get wrong_password -u admin:not-the-password "$base/api/dataValueSets.json?$q1_query")
expect_status wrong_password "$status" 401
expect_no_header wrong_password WWW-Authenticate
webmessage wrong_password 401 Unauthorized
# A token in DHIS2's format with a valid checksum that no user has; the district user's expired
# token (docs/DEMO.md): 401 with WWW-Authenticate: ApiToken.
unknown_token=$(python3 - <<'PY'
import zlib
A = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
code = "httpE2eUnknownToken0123456789abcdefghijklmno"[:44]
crc, digits = zlib.crc32(code.encode() + bytes(4)), ""
while crc:
    crc, r = divmod(crc, 62)
    digits = A[r] + digits
print(f"d2p_{code}{digits.rjust(6, '0')}")
PY
)
status=$(get unknown_token -H "Authorization: ApiToken $unknown_token" \
  "$base/api/dataValueSets.json?$q1_query")
expect_status unknown_token "$status" 401
expect_header unknown_token WWW-Authenticate ApiToken
webmessage unknown_token 401 Unauthorized
grep -q "The API token does not exists" "$work/unknown_token.body" ||
  fail "unknown_token: $(cat "$work/unknown_token.body")"
status=$(get expired_token \
  -H "Authorization: ApiToken d2p_aV5JpuQPofsMO7Ndvtvji19xqyPeOFMFqQrfqzyfFkZH14IWVK" \
  "$base/api/dataValueSets.json?$q1_query")
expect_status expired_token "$status" 401
expect_header expired_token WWW-Authenticate ApiToken
grep -q "Failed to authenticate API token, token has expired." "$work/expired_token.body" ||
  fail "expired_token: $(cat "$work/expired_token.body")"

# E2006 (no org unit): 409 with errorCode, JSON for JSON, XML for XML.
status=$(get e2006 -H "Authorization: ApiToken $admin_token" \
  "$base/api/dataValueSets.json?dataSet=JurnHCkmDCn&period=202401")
expect_status e2006 "$status" 409
expect_header e2006 Cache-Control "no-cache, private"
webmessage e2006 409 Conflict E2006 \
  "At least one organisation unit or organisation unit group must be specified"
status=$(get e2006_xml -u "admin:$admin_password" \
  "$base/api/dataValueSets.xml?dataSet=JurnHCkmDCn&period=202401")
expect_status e2006_xml "$status" 409
[[ "$(header e2006_xml Content-Type)" == application/xml* ]] ||
  fail "e2006_xml: Content-Type $(header e2006_xml Content-Type)"
python3 - "$work/e2006_xml.body" <<'PY' || fail "e2006_xml: $(cat "$work/e2006_xml.body")"
import sys
import xml.etree.ElementTree as ET
root = ET.parse(sys.argv[1]).getroot()
assert root.tag == "{http://dhis2.org/schema/dxf/2.0}webMessage", root.tag
assert root.get("httpStatusCode") == "409" and root.get("errorCode") == "E2006", root.attrib
PY
# E2012: the district user (docs/DEMO.md) may view Bo only; refused before the first byte.
status=$(get e2012 -u district:district-demo "$base/api/dataValueSets.json?$q1_query")
expect_status e2012 "$status" 409
# shellcheck disable=SC2016  # backquotes of DHIS2's message
webmessage e2012 409 Conflict E2012 'User is not allowed to view org unit: `ImspTQPwCqd`'
# Not a route of DHIS2 2.42 (versions 28 to 42).
status=$(get v43 -H "Authorization: ApiToken $admin_token" "$base/api/43/dataValueSets?$q1_query")
expect_status v43 "$status" 404

# The change token names what this export saw: an export of what changed since holds nothing.
token=$(header basic_json Dvexport-Change-Token)
status=$(get since -H "Authorization: ApiToken $admin_token" \
  "$base/api/dataValueSets.json?$q1_query&changesSince=$token")
expect_status since "$status" 200
# The same header as the full export's (one data set, period and org unit), no values.
empty_q1="$(sed 's/"dataValues":\[.*/"dataValues":[]}/' "$work/expected/q1.json")"
[[ "$(cat "$work/since.body")" == "$empty_q1" ]] ||
  fail "changesSince: $(head -c 300 "$work/since.body"), expected $empty_q1"

# A token of admin's with a referrer list (DHIS2's RefererAllowedList), for the Referer rule over
# HTTP; removed at exit.
referrer_token=$(python3 - <<'PY'
import zlib
A = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
code = "httpE2eReferrerToken0123456789abcdefghijklmn"[:44]
crc, digits = zlib.crc32(code.encode() + bytes(4)), ""
while crc:
    crc, r = divmod(crc, 62)
    digits = A[r] + digits
print(f"d2p_{code}{digits.rjust(6, '0')}")
PY
)
referrer_token_sql() {
  psql "$DVEXPORT_TEST_PG_ADMIN" -XAtq -v ON_ERROR_STOP=1 -c "$1" >/dev/null
}
remove_referrer_token() { referrer_token_sql "DELETE FROM api_token WHERE uid = 'httpE2eRefr'"; }
trap 'remove_referrer_token || true; http_e2e_cleanup' EXIT
remove_referrer_token
referrer_token_sql "INSERT INTO api_token (apitokenid, uid, created, lastupdated, lastupdatedby,
  createdby, version, type, key, attributes)
  SELECT 990032, 'httpE2eRefr', now(), now(), userinfoid, userinfoid, 1, 'PERSONAL_ACCESS_TOKEN_V2',
    encode(sha256('$referrer_token'::bytea), 'hex'),
    '[{\"type\":\"RefererAllowedList\",\"allowedReferrers\":[\"https://apps.example.org/app\"]}]'
  FROM userinfo WHERE username = 'admin'"

# A second server with small failure limits, for the limits per address and per username from
# many loopback addresses, IPv6 clients named by a trusted proxy (127.0.0.1), and its call log.
main_http=$http
main_pid=$server_pid
start_http_server limits "$server_bin" --auth_max_failures_per_ip 3 \
  --auth_max_failures_per_user 4 --auth_failure_window_s 3600 --http_trusted_proxies 127.0.0.1
limits_http=$http
http=$main_http
server_pid=$main_pid

# Python requests, the web apps, keep-alive and HEAD on one connection; DHIS2's refusals over
# HTTP; the failure limits and the call log.
python3 "$here/clients_test.py" --http "$http" --expected "$work/expected" \
  --token "$admin_token" --password "$admin_password" --referrer-token "$referrer_token" \
  --limits-http "$limits_http" --limits-log "$work/limits/server.log" || fail "clients_test.py"

kill -0 "$server_pid" 2>/dev/null || fail "the server died"
echo "clients_test: curl, Python requests and the web apps' requests give the CLI's bytes"
