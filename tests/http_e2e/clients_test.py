"""The HTTP door called as DHIS2's Python clients (requests: dhis2.py, openhexa-toolbox, the
superset extractor) and the DHIS2 web apps (app-runtime) call it, and on raw connections:
keep-alive and HEAD. Bodies are compared with the gRPC CLI's files in --expected (q1: Child
Health, 202401, Sierra Leone with children; q2: two districts, two data sets, 2023; q3: two data
sets and two periods, comma-joined). Run by clients_test.sh."""

import argparse
import gzip

import requests

import http_raw  # beside this file
from http_raw import check

NO_STORE = "no-cache, no-store, max-age=0, must-revalidate"
JSON = "application/json;charset=UTF-8"


def same_bytes(name, got, expected):
    if got != expected:
        at = next((i for i, (a, b) in enumerate(zip(got, expected)) if a != b),
                  min(len(got), len(expected)))
        raise AssertionError(f"{name}: {len(got)} bytes against the CLI's {len(expected)}, first "
                             f"difference at byte {at}: {got[at:at + 80]!r} against "
                             f"{expected[at:at + 80]!r}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--http", required=True)  # 127.0.0.1:PORT
    parser.add_argument("--expected", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--password", required=True)
    args = parser.parse_args()
    base = f"http://{args.http}"
    host, port = args.http.rsplit(":", 1)
    port = int(port)

    def expected(name):
        with open(f"{args.expected}/{name}", "rb") as f:
            return f.read()

    q1 = {"dataSet": "JurnHCkmDCn", "period": "202401", "orgUnit": "ImspTQPwCqd",
          "children": "true"}
    # requests, as the Python clients use it: a Session with Basic auth, lists as repeated keys
    # (orgUnit=a&orgUnit=b), Python's True, redirects followed, Accept-Encoding: gzip, deflate.
    session = requests.Session()
    session.auth = ("admin", args.password)
    q2 = [("orgUnit", "O6uvpzGd5pu"), ("orgUnit", "fdc6uOvgoji"), ("children", True),
          ("dataSet", "JurnHCkmDCn"), ("dataSet", "Se00xj4OCO2"), ("startDate", "2023-01-01"),
          ("endDate", "2023-12-31")]
    r = session.get(f"{base}/api/dataValueSets.json", params=q2, timeout=60)
    check(r.status_code == 200, f"requests q2: {r.status_code} {r.text[:300]}")
    check(r.history == [], f"requests q2 was redirected: {r.history}")
    check("orgUnit=O6uvpzGd5pu&orgUnit=fdc6uOvgoji" in r.url, r.url)
    check(r.headers.get("Content-Type") == JSON, r.headers)
    check("Content-Encoding" not in r.headers, r.headers)
    check(r.headers.get("Cache-Control") == NO_STORE, r.headers)
    same_bytes("requests q2", r.content, expected("q2.json"))
    check(len(r.json()["dataValues"]) > 0, "requests q2: no values")

    # compression=gzip with both dates: DHIS2 names the file after them; requests leaves the body
    # packed, since there is no Content-Encoding.
    r = session.get(f"{base}/api/dataValueSets", params=q2 + [("compression", "gzip")],
                    timeout=60)
    check(r.status_code == 200, f"requests q2 gzip: {r.status_code} {r.text[:300]}")
    check(r.headers.get("Content-Disposition")
          == "attachment; filename=dataValues_2023-01-01_2023-12-31.json.gz", r.headers)
    check(r.content[:2] == b"\x1f\x8b", f"not gzip: {r.content[:20]!r}")
    same_bytes("requests q2 gzip", gzip.decompress(r.content), expected("q2.json"))

    # A token in the Authorization header (the superset extractor, OpenFn) and the .csv suffix.
    r = requests.get(f"{base}/api/dataValueSets.csv", params=q1, timeout=60,
                     headers={"Authorization": f"ApiToken {args.token}"})
    check(r.status_code == 200, f"requests csv: {r.status_code} {r.text[:300]}")
    check(r.headers.get("Content-Type") == "application/csv;charset=UTF-8", r.headers)
    same_bytes("requests csv", r.content, expected("q1.csv"))

    # Without credentials requests follows no redirect (DHIS2 would send it to its login page):
    # a 401 WebMessage, which openhexa and dhis2.py turn into their errors.
    r = requests.get(f"{base}/api/dataValueSets.json", params=q1, timeout=60)
    check(r.status_code == 401 and r.history == [], f"anonymous: {r.status_code} {r.history}")
    message = r.json()
    check(message["httpStatusCode"] == 401 and message["status"] == "ERROR", message)
    check("WWW-Authenticate" not in r.headers, r.headers)

    # The web apps (app-runtime): /api/42/..., lists comma-joined, X-Requested-With, JSON.
    app_headers = {"X-Requested-With": "XMLHttpRequest", "Accept": "application/json",
                   "Authorization": f"ApiToken {args.token}"}
    url = (f"{base}/api/42/dataValueSets?dataSet=JurnHCkmDCn,QfF9ZANatcj&period=202401,202402"
           "&orgUnit=ImspTQPwCqd&children=true")
    r = requests.get(url, headers=app_headers, timeout=60)
    check(r.status_code == 200, f"web app: {r.status_code} {r.text[:300]}")
    check(r.headers.get("Content-Type") == JSON, r.headers)
    same_bytes("web app q3", r.content, expected("q3.json"))
    # An XHR without a session or credentials: 401 JSON (what app-runtime reads), no redirect.
    r = requests.get(url, timeout=60, headers={"X-Requested-With": "XMLHttpRequest",
                                               "Accept": "application/json"})
    check(r.status_code == 401 and r.history == [], f"web app anonymous: {r.status_code}")
    check(r.json()["httpStatus"] == "Unauthorized", r.text)
    # A conflict the app shows from the message.
    r = requests.get(f"{base}/api/42/dataValueSets?dataSet=JurnHCkmDCn&period=202401",
                     headers=app_headers, timeout=60)
    check(r.status_code == 409, f"web app 409: {r.status_code} {r.text[:300]}")
    check(r.json()["errorCode"] == "E2006", r.text)

    # Keep-alive: two exports one after the other on one connection.
    target = "/api/dataValueSets.json?" + "&".join(f"{k}={v}" for k, v in q1.items())
    auth = [("Authorization", f"ApiToken {args.token}")]
    connection = http_raw.Connection(host, port, timeout=60)
    try:
        connection.request(target, auth)
        first = connection.read_response()
        check(first.status == 200 and first.complete, f"keep-alive first: {first!r}")
        check((first.header("Connection") or "").lower() != "close", first.headers)
        same_bytes("keep-alive first", first.body, expected("q1.json"))
        connection.request(target.replace(".json", ".csv"), auth)
        second = connection.read_response()
        check(second.status == 200 and second.complete, f"keep-alive second: {second!r}")
        same_bytes("keep-alive second", second.body, expected("q1.csv"))

        # HEAD on the same connection: GET's status and headers and no body, so that the GET
        # after it is read from the first byte after HEAD's headers.
        connection.request(target + "&compression=zip", auth, method="HEAD")
        head = connection.read_response(method="HEAD")
        connection.request(target + "&compression=zip", auth)
        get = connection.read_response()
        check(head.status == 200 and get.status == 200, f"HEAD {head!r} GET {get!r}")
        ignore = {"date", "dvexport-change-token", "transfer-encoding", "content-length"}
        head_headers = [(k.lower(), v) for k, v in head.headers if k.lower() not in ignore]
        get_headers = [(k.lower(), v) for k, v in get.headers if k.lower() not in ignore]
        check(head_headers == get_headers, f"HEAD {head.headers} GET {get.headers}")
        check(get.header("Content-Disposition") == "attachment; filename=dataValues.json.zip",
              get.headers)
        check(get.body[:4] == b"PK\x03\x04", f"not a zip: {get.body[:20]!r}")
        # Nothing is left on the connection after them.
        check(not connection.buffer, f"bytes after the responses: {connection.buffer[:100]!r}")
    finally:
        connection.close()
    print("clients_test.py: requests, the web apps, keep-alive and HEAD as expected")


if __name__ == "__main__":
    main()
