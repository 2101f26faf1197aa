#!/usr/bin/env python3
"""DHIS2's app data engine (@dhis2/app-service-data, unchanged) against dvexport's HTTP door on a
DHIS2 2.43 database: the engine's queries of /api/43/dataValueSets, compared with curl of the same
URLs and headers and with what the database holds (psql).

Run by dhis2_app_engine_test.sh, which installs the engine from npm (the pinned lockfile of
dhis2_app_engine/) and starts dvexport-server on DVEXPORT_TEST_PG_243.

Usage: dhis2_app_engine_test.py --engine ENGINE_EXPORT_JS --base http://127.0.0.1:PORT
       --token TOKEN --pg CONNINFO --work DIR
"""

import argparse
import json
import subprocess
import sys
import time
from collections import Counter

API_VERSION = 43
DATA_SET = "JurnHCkmDCn"  # Child Health
DATA_SETS = ["JurnHCkmDCn", "Se00xj4OCO2", "av9SOZj6FcK", "QfF9ZANatcj"]
PERIODS = ["202401", "202402"]
ROOT = "ImspTQPwCqd"  # Sierra Leone
PAGE = 40

# The members a value of 2.43's JSON document may have; the first ones it always has.
ALWAYS = {"dataElement", "categoryOptionCombo", "attributeOptionCombo", "created", "lastUpdated"}
OPTIONAL = {"period", "orgUnit", "value", "storedBy", "comment", "followup", "deleted"}

failures = []


def check(condition, message):
    if not condition:
        failures.append(message)
        print(f"FAIL: {message}", file=sys.stderr)
    return condition


def psql(pg, sql):
    out = subprocess.run(["psql", pg, "-XAtq", "-v", "ON_ERROR_STOP=1", "-c", sql],
                         check=True, capture_output=True, text=True).stdout
    return [line for line in out.split("\n") if line]


def quoted(ids):
    return "ARRAY[" + ",".join(f"'{i}'" for i in ids) + "]"


def expected_values(pg, data_sets, periods, org_unit, children, include_deleted=False):
    """The values DHIS2 2.43 exports for the selection (a superuser: no sharing applies), each as
    its JSON object with every member, null members and empty storedBy/comment left out."""
    ou = f"ou.path LIKE '%/{org_unit}%'" if children else f"ou.uid = '{org_unit}'"
    deleted = "" if include_deleted else "AND NOT dv.deleted"
    stamp = "'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"+0000\"'"
    sql = f"""
      SELECT json_strip_nulls(json_build_object(
        'dataElement', de.uid, 'period', pe.iso, 'orgUnit', ou.uid,
        'categoryOptionCombo', coc.uid, 'attributeOptionCombo', aoc.uid,
        'value', dv.value, 'storedBy', NULLIF(dv.storedby, ''),
        'created', to_char(dv.created, {stamp}), 'lastUpdated', to_char(dv.lastupdated, {stamp}),
        'comment', NULLIF(dv.comment, ''), 'followup', dv.followup,
        'deleted', CASE WHEN dv.deleted THEN true END))
      FROM datavalue dv JOIN dataelement de USING (dataelementid) JOIN period pe USING (periodid)
      JOIN organisationunit ou ON ou.organisationunitid = dv.sourceid
      JOIN categoryoptioncombo coc ON coc.categoryoptioncomboid = dv.categoryoptioncomboid
      JOIN categoryoptioncombo aoc ON aoc.categoryoptioncomboid = dv.attributeoptioncomboid
      WHERE dv.dataelementid IN (SELECT dse.dataelementid FROM datasetelement dse
                                 JOIN dataset ds USING (datasetid)
                                 WHERE ds.uid = ANY({quoted(data_sets)}))
        AND pe.iso = ANY({quoted(periods)}) AND {ou} {deleted}"""
    return [json.loads(line) for line in psql(pg, sql)]


def canonical(values):
    return Counter(json.dumps(v, sort_keys=True) for v in values)


def run_engine(args, name, spec):
    path = f"{args.work}/{name}.spec.json"
    with open(path, "w") as f:
        json.dump(spec, f)
    started = time.monotonic()
    run = subprocess.run(["node", args.engine, path], capture_output=True, text=True)
    seconds = time.monotonic() - started
    if run.returncode != 0:
        print(run.stderr, file=sys.stderr)
        sys.exit(f"FAIL: the engine script failed ({name}, exit {run.returncode})")
    with open(f"{args.work}/{name}.out.json", "w") as f:
        f.write(run.stdout)
    out = json.loads(run.stdout)
    print(f"engine run {name}: {len(spec['queries'])} queries in {seconds:.2f} s "
          f"({out['engine']})")
    return out["results"]


def curl_json(url, headers):
    command = ["curl", "-sS", "-w", "\n%{http_code} %{content_type}", url]
    for key, value in headers.items():
        command += ["-H", f"{key}: {value}"]
    out = subprocess.run(command, check=True, capture_output=True, text=True).stdout
    body, _, tail = out.rpartition("\n")
    status, _, content_type = tail.partition(" ")
    return int(status), content_type, json.loads(body)


def check_result(name, result, base, expected_query):
    """One request, GET, at the URL the engine is documented to build, answered 200 with JSON."""
    requests = result["requests"]
    if not check(len(requests) == 1, f"{name}: the engine sent {len(requests)} requests"):
        return False
    request = requests[0]
    print(f"  {name}: GET {request['url']} -> {result.get('status')} {result.get('contentType')}")
    check(request["method"] == "GET", f"{name}: method {request['method']}")
    check(request["url"] == f"{base}/api/{API_VERSION}/dataValueSets?{expected_query}",
          f"{name}: URL {request['url']}, expected ...?{expected_query}")
    if not check("data" in result, f"{name}: the engine failed: {result.get('error')}"):
        return False
    check(result["status"] == 200, f"{name}: status {result['status']}")
    check(result["contentType"] == "application/json;charset=UTF-8",
          f"{name}: Content-Type {result['contentType']}")
    return True


def check_document(name, document, header, expected):
    """The document's top-level members and its values against the database's."""
    check(isinstance(document, dict), f"{name}: the engine's data is no JSON object "
          "(it parses only application/json)")
    top = {k: v for k, v in document.items() if k != "dataValues"}
    check(top == header, f"{name}: top-level members {top}, expected {header}")
    check(list(document)[-1] == "dataValues", f"{name}: dataValues is not the last member")
    values = document["dataValues"]
    in_header = {k for k in ("period", "orgUnit") if k in header}
    for i, value in enumerate(values):
        keys = set(value)
        if not check(None not in value.values(), f"{name}: value {i} has a null member: {value}"):
            break
        if not check(ALWAYS - in_header <= keys <= (ALWAYS | OPTIONAL) - in_header,
                     f"{name}: value {i}'s members {sorted(keys)}"):
            break
        if not check(list(value)[0] == "dataElement", f"{name}: value {i} starts {list(value)}"):
            break
    expected = [{k: v for k, v in e.items() if k not in in_header} for e in expected]
    got, want = canonical(values), canonical(expected)
    check(got == want, f"{name}: {len(values)} values, the database {len(expected)}; "
          f"only exported: {list((got - want).elements())[:3]}; "
          f"only in the database: {list((want - got).elements())[:3]}")
    return values


def main():
    parser = argparse.ArgumentParser()
    for flag in ("--engine", "--base", "--token", "--pg", "--work"):
        parser.add_argument(flag, required=True)
    args = parser.parse_args()
    started = time.monotonic()
    pg, base = args.pg, args.base

    # A facility with Child Health values in January 2024 (one data set, one period, one org unit
    # without children: 2.43's header holds all three and the values leave period and orgUnit
    # out).
    facility = psql(pg, f"""SELECT ou.uid FROM datavalue dv JOIN period pe USING (periodid)
      JOIN organisationunit ou ON ou.organisationunitid = dv.sourceid
      WHERE pe.iso = '202401' AND NOT dv.deleted
        AND dv.dataelementid IN (SELECT dataelementid FROM datasetelement JOIN dataset USING
                                 (datasetid) WHERE dataset.uid = '{DATA_SET}')
      GROUP BY ou.uid ORDER BY count(*) DESC, ou.uid LIMIT 1""")
    if not facility:
        sys.exit("FAIL: no Child Health values in 202401: is the 2.43 demo database loaded?")
    facility = facility[0]

    full = expected_values(pg, [DATA_SET], PERIODS, ROOT, True)
    sets = expected_values(pg, DATA_SETS, PERIODS, ROOT, True, include_deleted=True)
    single = expected_values(pg, [DATA_SET], ["202401"], facility, False)
    check(len(full) > 2 * PAGE, f"the selection has {len(full)} values: too few to page")
    check(any("deleted" in v for v in sets) and any("comment" in v for v in sets) and
          any("followup" not in v for v in sets),
          "the data sets' values have no deleted value, comment or null followup to test")

    selection = {"dataSet": DATA_SET, "period": PERIODS, "orgUnit": ROOT, "children": True}
    selection_query = "dataSet=JurnHCkmDCn&period=202401,202402&orgUnit=ImspTQPwCqd&children=true"
    ordered = dict(selection, order=["PE", "OU"])
    queries = {
        "full": ({"resource": "dataValueSets", "params": selection}, selection_query),
        "ordered": ({"resource": "dataValueSets", "params": ordered},
                    selection_query + "&order=PE,OU"),
        "first": ({"resource": "dataValueSets", "params": dict(ordered, limit=7)},
                  selection_query + "&order=PE,OU&limit=7"),
        "sets": ({"resource": "dataValueSets",
                  "params": {"dataSet": DATA_SETS, "period": PERIODS, "orgUnit": ROOT,
                             "children": True, "includeDeleted": True}},
                 "dataSet=" + ",".join(DATA_SETS) +
                 "&period=202401,202402&orgUnit=ImspTQPwCqd&children=true&includeDeleted=true"),
        "single": ({"resource": "dataValueSets",
                    "params": {"dataSet": DATA_SET, "period": "202401", "orgUnit": facility}},
                   f"dataSet=JurnHCkmDCn&period=202401&orgUnit={facility}"),
    }
    # Full pages, the partial one if any, and one past the end (empty).
    pages = len(full) // PAGE + (2 if len(full) % PAGE else 1)
    for k in range(pages):
        queries[f"page{k}"] = (
            {"resource": "dataValueSets",
             "params": dict(ordered, limit=PAGE, offset=k * PAGE)},
            selection_query + f"&order=PE,OU&limit={PAGE}&offset={k * PAGE}")

    spec = {"baseUrl": base, "apiVersion": API_VERSION, "apiToken": args.token,
            "queries": {name: query for name, (query, _) in queries.items()}}
    results = run_engine(args, "token", spec)
    print("what the engine sent and got:")
    ok = {name: check_result(name, results[name], base, query_string)
          for name, (_, query_string) in queries.items()}
    headers = results["full"]["requests"][0]["headers"]
    check(headers == {"X-Requested-With": "XMLHttpRequest", "Accept": "application/json",
                      "Authorization": f"ApiToken {args.token}"},
          f"the engine's headers: {headers}")

    # curl of the same URL with the same headers: the same document.
    for name in queries:
        if not ok[name]:
            continue
        request = results[name]["requests"][0]
        status, content_type, document = curl_json(request["url"], request["headers"])
        check((status, content_type) == (200, results[name]["contentType"]),
              f"{name}: curl got {status} {content_type}")
        check(document == results[name]["data"], f"{name}: curl's document differs from the "
              "engine's")

    if not all(ok.values()):
        sys.exit(f"FAIL: {len(failures)} checks failed")

    data = {name: results[name]["data"] for name in queries}
    one_set = {"dataSet": DATA_SET}
    check_document("full", data["full"], one_set, full)
    ordered_values = check_document("ordered", data["ordered"], one_set, full)
    check_document("sets", data["sets"], {}, sets)
    check_document("single", data["single"],
                   {"dataSet": DATA_SET, "period": "202401", "orgUnit": facility}, single)
    check(len(data["single"]["dataValues"]) > 0, "single: no values")

    # order=PE,OU: by the period's start and end, then the org unit's path.
    period_rows = psql(pg, "SELECT iso, startdate, enddate FROM period WHERE iso = ANY("
                       f"{quoted(PERIODS)})")
    period_key = {row.split("|")[0]: tuple(row.split("|")[1:]) for row in period_rows}
    path_of = dict(row.split("|") for row in psql(
        pg, f"SELECT uid, path FROM organisationunit WHERE path LIKE '%/{ROOT}%'"))
    keys = [period_key[v["period"]] + (path_of[v["orgUnit"]],) for v in ordered_values]
    check(keys == sorted(keys), "ordered: the values are not in order=PE,OU's order")

    # limit and offset: the pages, one after the other, are the ordered export.
    check(data["first"]["dataValues"] == ordered_values[:7],
          "first (limit=7): not the first 7 values of the ordered export")
    concatenated = []
    for k in range(pages):
        page = data[f"page{k}"]
        check({m: v for m, v in page.items() if m != "dataValues"} == one_set,
              f"page{k}: top-level members {list(page)}")
        want = min(PAGE, max(0, len(ordered_values) - k * PAGE))
        check(len(page["dataValues"]) == want,
              f"page{k}: {len(page['dataValues'])} values, expected {want}")
        concatenated += page["dataValues"]
    check(concatenated == ordered_values,
          f"the {pages} pages ({len(concatenated)} values) are not the ordered export "
          f"({len(ordered_values)} values)")

    # Without a token the engine sends "Authorization: " (empty): DHIS2's 401, which the engine
    # turns into its access error.
    anonymous = run_engine(args, "anonymous", {
        "baseUrl": base, "apiVersion": API_VERSION,
        "queries": {"anonymous": queries["full"][0]}})["anonymous"]
    request = anonymous["requests"][0]
    authorization = request["headers"].get("Authorization")
    print(f"  anonymous: GET {request['url']} (Authorization: {authorization!r}) -> "
          f"{anonymous.get('status')} {anonymous.get('error')}")
    check(request["headers"].get("Authorization") == "",
          f"anonymous: Authorization {request['headers'].get('Authorization')!r}")
    check(anonymous.get("status") == 401 and anonymous.get("error", {}).get("type") == "access"
          and anonymous["error"].get("message") == "Unauthorized"
          and anonymous["error"].get("details") == {
              "httpStatus": "Unauthorized", "httpStatusCode": 401, "status": "ERROR",
              "message": "Unauthorized"},
          f"anonymous: {anonymous.get('status')} {anonymous.get('error')}")

    counts = {name: len(data[name]["dataValues"]) for name in ("full", "sets", "single")}
    print(f"values: {counts}, {pages} pages of {PAGE}; {time.monotonic() - started:.1f} s")
    if failures:
        sys.exit(f"FAIL: {len(failures)} checks failed")
    print("PASS")


if __name__ == "__main__":
    main()
