"""The HTTP door called as DHIS2's Python clients (requests: dhis2.py, openhexa-toolbox, the
superset extractor) and the DHIS2 web apps (app-runtime) call it, and on raw connections:
keep-alive and HEAD. Bodies are compared with the gRPC CLI's files in --expected (q1: Child
Health, 202401, Sierra Leone with children; q2: two districts, two data sets, 2023; q3: two data
sets and two periods, comma-joined). Run by clients_test.sh."""

import argparse
import base64
import gzip
import json

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
    parser.add_argument("--referrer-token", required=True)  # admin's, RefererAllowedList
    parser.add_argument("--limits-http", required=True)  # a server with small failure limits
    parser.add_argument("--limits-log", required=True)  # its stderr (the call log)
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
    check_dhis2_refusals(host, port, args, expected("q1.json"))
    check_limits_and_call_log(args)
    print("clients_test.py: requests, the web apps, keep-alive and HEAD as expected; DHIS2's "
          "refusals, the failure limits and the call log")


def raw_get(host, port, target, headers, source=None):
    """One GET on its own connection, headers sent exactly as given (repeated ones too)."""
    connection = http_raw.Connection(host, port, timeout=60, source=source)
    try:
        connection.request(target, headers)
        return connection.read_response()
    finally:
        connection.close()


def web_message(response):
    check(response.header("Content-Type") == JSON, response.headers)
    return json.loads(response.body.decode("utf-8"))


def check_dhis2_refusals(host, port, args, q1_json):
    """DHIS2 2.42's answers over HTTP (Dhis2ApiTokenFilter, ApiTokenResolver,
    CrudControllerAdvice, Tomcat's getHeader), not gRPC's."""
    target = ("/api/dataValueSets.json?dataSet=JurnHCkmDCn&period=202401&orgUnit=ImspTQPwCqd"
              "&children=true")
    # A malformed ApiToken header and a failed checksum: 400 (ApiTokenErrors.invalidRequest),
    # WWW-Authenticate: ApiToken (DhisApiTokenAuthenticationEntryPoint), DHIS2's message.
    bad_checksum = args.token[:-1] + ("A" if args.token[-1] != "A" else "B")
    for value, message in [("ApiToken  " + args.token, "Api token is malformed"),
                           ("apitoken d2p_not a token", "Api token is malformed"),
                           ("ApiToken " + bad_checksum, "Checksum validation failed")]:
        r = raw_get(host, port, target, [("Authorization", value)])
        check(r.status == 400, f"{message}: {r!r}")
        check(r.header("WWW-Authenticate") == "ApiToken", r.headers)
        check(r.header("Cache-Control") == "no-cache, private", r.headers)
        check(web_message(r) == {"httpStatus": "Bad Request", "httpStatusCode": 400,
                                 "status": "ERROR", "message": message}, r.body)

    # Two Authorization headers: the first counts, as Tomcat's getHeader gives DHIS2 the first.
    wrong_basic = "Basic " + base64.b64encode(b"admin:not-the-password").decode()
    r = raw_get(host, port, target,
                [("Authorization", f"ApiToken {args.token}"), ("Authorization", wrong_basic)])
    check(r.status == 200, f"token then wrong Basic: {r!r}")
    check(r.body == q1_json, "token then wrong Basic: not the CLI's bytes")
    r = raw_get(host, port, target,
                [("Authorization", wrong_basic), ("Authorization", f"ApiToken {args.token}")])
    check(r.status == 401, f"wrong Basic then token: {r!r}")
    check(r.header("WWW-Authenticate") is None, r.headers)
    check(web_message(r)["message"] == "Unauthorized", r.body)

    # HTTP wording: no credentials and another scheme are DHIS2's "Unauthorized", nothing about
    # gRPC metadata.
    for headers in [[], [("Authorization", "Bearer abc")], [("Authorization", "Basic !!!")]]:
        r = raw_get(host, port, target, headers)
        check(r.status == 401, f"{headers}: {r!r}")
        check(web_message(r) == {"httpStatus": "Unauthorized", "httpStatusCode": 401,
                                 "status": "ERROR", "message": "Unauthorized"}, r.body)

    # A token with a referrer list: DHIS2's rule on the Referer header (lower-cased, exact).
    referrer_refused = ("Failed to authenticate API token, request http referrer is missing or "
                        "not allowed.")
    token_header = ("Authorization", f"ApiToken {args.referrer_token}")
    for headers in [[token_header], [token_header, ("Referer", "https://evil.example.org/app")],
                    [token_header, ("Referer", "https://apps.example.org/app/")]]:
        r = raw_get(host, port, target, headers)
        check(r.status == 401, f"referrer {headers[1:]}: {r!r}")
        check(r.header("WWW-Authenticate") == "ApiToken", r.headers)
        check(web_message(r)["message"] == referrer_refused, r.body)
    r = raw_get(host, port, target, [token_header, ("Referer", "HTTPS://apps.example.org/app")])
    check(r.status == 200, f"allowed referrer: {r!r}")
    check(r.body == q1_json, "allowed referrer: not the CLI's bytes")


def check_limits_and_call_log(args):
    """The failure limits from many real loopback addresses (127.0.0.0/8) on a server allowing 3
    failed attempts per address and 4 per username, then its call log."""
    host, port = args.limits_http.rsplit(":", 1)
    port = int(port)
    target = "/api/dataValueSets.json?dataSet=JurnHCkmDCn&period=202401&orgUnit=ImspTQPwCqd"

    def basic(username, password, source, forwarded_for=None):
        value = "Basic " + base64.b64encode(username + b":" + password).decode()
        headers = [("Authorization", value)]
        if forwarded_for:
            headers.append(("X-Forwarded-For", forwarded_for))
        r = raw_get(host, port, target, headers, source=source)
        check(r.status == 401, f"{username!r} from {source} {forwarded_for}: {r!r}")
        return web_message(r)["message"]

    per_address = "too many failed authentication attempts from this address"
    per_username = "too many failed authentication attempts for this username"
    # Per address: 3 guesses (3 usernames) from 127.0.0.11, the 4th refused unverified; another
    # address is not held back.
    for n in range(3):
        check(basic(b"limits_%d" % n, b"wrong-%d" % n, "127.0.0.11") == "Unauthorized", n)
    check(basic(b"limits_3", b"wrong-3", "127.0.0.11").startswith(per_address), "per address")
    check(basic(b"limits_4", b"wrong-4", "127.0.0.12") == "Unauthorized", "another address")

    # IPv6 clients, as the trusted proxy (127.0.0.1) names them: one /64 is one bucket.
    for n, client in enumerate(["2001:db8:32:1::a", "2001:db8:32:1::b", "2001:db8:32:1:1:2:3:4"]):
        check(basic(b"limits_v6_%d" % n, b"wrong", "127.0.0.1", client) == "Unauthorized", client)
    check(basic(b"limits_v6_3", b"wrong", "127.0.0.1", "2001:db8:32:1:ffff::1")
          .startswith(per_address), "the same /64")
    check(basic(b"limits_v6_4", b"wrong", "127.0.0.1", "2001:db8:32:2::a") == "Unauthorized",
          "another /64")

    # Per username, from a new address each time: 4 guesses, then refused, for an existing user
    # and an unknown one alike (the answer does not tell them apart).
    for username, first in [(b"district", 21), (b"limits_nobody", 31)]:
        for n in range(4):
            source = f"127.0.0.{first + n}"
            check(basic(username, b"guess-%d" % n, source) == "Unauthorized", (username, n))
        message = basic(username, b"guess-4", f"127.0.0.{first + 4}")
        check(message.startswith(per_username), (username, message))
    # The right password too, until the bucket refills.
    check(basic(b"district", b"district-demo", "127.0.0.40").startswith(per_username), "right")

    # A username of hostile bytes, and a token refused, for the log.
    # (No ":": Basic's username ends at the first.)
    hostile = b'evil"}\n{"user"="admin\\\x01\r\n\xff\x7f'
    check(basic(hostile, b"hostile-password", "127.0.0.41") == "Unauthorized", "hostile")
    r = raw_get(host, port, target, [("Authorization", "ApiToken " + args.referrer_token)],
                source="127.0.0.42")
    check(r.status == 401, f"referrer token: {r!r}")

    # The call log: one JSON line per call, "client" the address it came from, "tried_user" the
    # username tried (never a password or a token).
    with open(args.limits_log, "rb") as f:
        log = f.read()
    for secret in [b"guess-", b"wrong-", b"district-demo", b"hostile-password",
                   args.referrer_token.encode()]:
        check(secret not in log, f"{secret!r} is in the call log")
    calls = [json.loads(line) for line in log.decode("utf-8").splitlines()
             if line.startswith('{"event":"export"')]
    refused = [(c.get("client"), c.get("tried_user")) for c in calls
               if c.get("status") == "UNAUTHENTICATED"]
    expected = ([("127.0.0.11", f"limits_{n}") for n in range(4)] + [("127.0.0.12", "limits_4")]
                + [("2001:db8:32:1::a", "limits_v6_0"), ("2001:db8:32:1::b", "limits_v6_1"),
                   ("2001:db8:32:1:1:2:3:4", "limits_v6_2"),
                   ("2001:db8:32:1:ffff::1", "limits_v6_3"), ("2001:db8:32:2::a", "limits_v6_4")]
                + [(f"127.0.0.{21 + n}", "district") for n in range(5)]
                + [(f"127.0.0.{31 + n}", "limits_nobody") for n in range(5)]
                + [("127.0.0.40", "district"),
                   ("127.0.0.41", hostile.decode("utf-8", errors="replace")),
                   ("127.0.0.42", None)])
    check(refused == expected, f"refused calls in the log: {refused}")
    check(all("user" not in c for c in calls if c.get("status") == "UNAUTHENTICATED"), calls)


if __name__ == "__main__":
    main()
