"""The checks of nginx_proxy_test.sh, through two nginx instances rendered from
deploy/nginx/dhis2-dataValueSets.conf: "plain" in front of a dvexport-server that believes no
X-Forwarded-For, "trusting" in front of one started with --http_trusted_proxies 127.0.0.1; both
send the rest of DHIS2 to dhis2_standin.py."""

import argparse
import base64
import gzip
import json
import os
import signal
import socket
import struct
import time

import requests

import http_raw  # beside this file
from http_raw import check, export_lines, next_export_line

Q1 = "dataSet=JurnHCkmDCn&period=202401&orgUnit=ImspTQPwCqd&children=true"
LIMITED = b"too many failed authentication attempts from this address"
# Every value of the small demo database, as XML: the largest export it gives (some MB).
EVERYTHING = ("dataSet=JurnHCkmDCn,Se00xj4OCO2,av9SOZj6FcK,QfF9ZANatcj,IF4YaBzxNHa"
              "&orgUnit=ImspTQPwCqd,EqZQbZsbFhc&children=true&startDate=2000-01-01"
              "&endDate=2030-12-31&includeDeleted=true")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--expected", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--password", required=True)
    parser.add_argument("--plain-nginx", type=int, required=True)
    parser.add_argument("--plain-log", required=True)
    parser.add_argument("--plain-pid", type=int, required=True)
    parser.add_argument("--trusting-nginx", type=int, required=True)
    parser.add_argument("--big-nginx", type=int, required=True)
    parser.add_argument("--big-log", required=True)
    parser.add_argument("--trusting-http", type=int, required=True)
    args = parser.parse_args()

    def expected(name):
        with open(os.path.join(args.expected, name), "rb") as f:
            return f.read()

    nginx = f"http://127.0.0.1:{args.trusting_nginx}"
    token = {"Authorization": f"ApiToken {args.token}"}

    # Exports reach dvexport: the CLI's bytes, dvexport's headers, nothing of the stand-in.
    for path, name in (("/api/dataValueSets.json", "q1.json"), ("/api/dataValueSets.csv", "q1.csv"),
                       ("/api/41/dataValueSets", "q1.json"), ("/api/dataValueSets/", "q1.json")):
        r = requests.get(f"{nginx}{path}?{Q1}", headers=token, timeout=60)
        check(r.status_code == 200, f"GET {path}: {r.status_code} {r.text[:300]}")
        check("X-Stand-In" not in r.headers, f"GET {path} reached the stand-in")
        check(r.headers.get("Dvexport-Change-Token"), f"GET {path}: {r.headers}")
        check(r.content == expected(name), f"GET {path}: not the CLI's {name} "
              f"({len(r.content)} against {len(expected(name))} bytes)")
    for path in ("/api/dataValueSets.json", "/api/dataValueSets.csv", "/api/41/dataValueSets"):
        get = requests.get(f"{nginx}{path}?{Q1}&compression=gzip", headers=token, timeout=60)
        head = requests.head(f"{nginx}{path}?{Q1}&compression=gzip", headers=token, timeout=60)
        check(head.status_code == 200 and get.status_code == 200, f"HEAD {path}: {head.status_code}")
        check("X-Stand-In" not in head.headers, f"HEAD {path} reached the stand-in")
        check(head.content == b"", f"HEAD {path}: a body")
        for field in ("Content-Type", "Content-Disposition", "Cache-Control"):
            check(head.headers.get(field) == get.headers.get(field),
                  f"HEAD {path}: {field} {head.headers.get(field)} against {get.headers.get(field)}")
        # requests sends Accept-Encoding: gzip; nginx must not compress the gzip body again.
        check("Content-Encoding" not in get.headers, get.headers)
        plain = expected("q1.csv" if ".csv" in path else "q1.json")
        check(gzip.decompress(get.content) == plain, f"GET {path} gzip: not the CLI's bytes")

    # The rest of DHIS2 reaches the stand-in.
    def stand_in(method, path, **kwargs):
        r = requests.request(method, f"{nginx}{path}", timeout=60, **kwargs)
        check(r.status_code == 200 and r.headers.get("X-Stand-In") == "dhis2",
              f"{method} {path}: {r.status_code} {r.headers} {r.text[:300]}")
        return r.json()

    body = json.dumps({"dataValues": [{"dataElement": "x", "value": "1"}]})
    seen = stand_in("POST", "/api/dataValueSets", data=body, headers={
        **token, "Content-Type": "application/json"})
    check(seen["method"] == "POST" and seen["path"] == "/api/dataValueSets"
          and seen["body"] == body, seen)
    seen = stand_in("POST", "/api/41/dataValueSets.json?dryRun=true", data=body, headers=token)
    check(seen["method"] == "POST", seen)
    seen = stand_in("GET", "/api/me", auth=("admin", args.password))
    check(seen["path"] == "/api/me" and seen["authorization"].startswith("Basic "), seen)
    stand_in("GET", f"/api/43/dataValueSets?{Q1}", headers=token)
    stand_in("GET", f"/api/dataValueSets/extra?{Q1}", headers=token)
    stand_in("DELETE", f"/api/dataValueSets?{Q1}", headers=token)
    # A browser or web app with DHIS2's session cookie only: DHIS2 knows its sessions.
    seen = stand_in("GET", f"/api/dataValueSets.json?{Q1}",
                    headers={"Cookie": "JSESSIONID=0123456789ABCDEF",
                             "X-Requested-With": "XMLHttpRequest"})
    check(seen["authorization"] is None, seen)
    # An OIDC bearer token (DHIS2 with oidc.jwt.token.authentication.enabled) is DHIS2's too.
    stand_in("GET", f"/api/dataValueSets.json?{Q1}", headers={"Authorization": "Bearer eyJ0.e30.x"})

    # A redirect from DHIS2 to the export, followed by requests with its credentials (same
    # origin): the export arrives whole.
    session = requests.Session()
    session.auth = ("admin", args.password)
    r = session.get(f"{nginx}/api/old-export?{Q1}", timeout=60)
    check([h.status_code for h in r.history] == [302], f"redirect: {r.history}")
    check(r.status_code == 200 and "X-Stand-In" not in r.headers, f"redirect: {r.status_code}")
    check(r.content == expected("q1.json"), "redirect: not the CLI's bytes")

    # Streaming: through nginx, an export of ~60 MB (the big database: 6 KB comments) read by a
    # client with a small receive window at about 2 MiB/s. Without buffering, nginx reads from
    # dvexport only as fast as the client takes the data, so after 3 s the server is still
    # exporting (more than the kernel's socket buffers on the way can hold remains); buffered,
    # nginx would read it all within a second or two and spool it to a temporary file. Then the
    # client goes away: nginx closes its upstream connection, and the export ends CANCELLED.
    seen = len(export_lines(args.big_log))
    connection = http_raw.Connection("127.0.0.1", args.big_nginx, rcvbuf=16384, timeout=60)
    started = time.monotonic()
    first = None
    received = 0
    try:
        connection.request(f"/api/dataValueSets.xml?{EVERYTHING}",
                           [("Authorization", f"ApiToken {args.token}")])
        connection.sock.settimeout(10)
        while time.monotonic() - started < 3.0:
            data = connection.sock.recv(16384)
            if not data:
                break
            if first is None:
                first = time.monotonic() - started
            received += len(data)
            time.sleep(len(data) / (2 * 1024 * 1024))
        ended = export_lines(args.big_log)[seen:]
        print(f"  streaming: {received} bytes in {time.monotonic() - started:.2f} s, first byte "
              f"after {first:.3f} s; the server's export ended meanwhile: {bool(ended)}")
        check(first is not None and first < 1.0, f"streaming: the first byte came after {first}")
        check(received > 1024 * 1024, f"streaming: only {received} bytes in 3 s")
        check(not ended, f"streaming: the server's export ended while the client read slowly: "
              f"nginx buffered it ({ended})")
    finally:
        connection.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        connection.close()
    line = next_export_line(args.big_log, seen)
    check(line.get("status") == "CANCELLED", f"streaming: the cut-off export ended {line}")
    check(int(line.get("bytes", 0)) < 50 * 1024 * 1024,
          f"streaming: the server sent {line.get('bytes')} bytes of the ~60 MB export to nginx")

    # X-Forwarded-For, seen through the failed-attempt limit per client address
    # (--auth_max_failures_per_ip 3 on both servers): clients on 127.0.0.2 and 127.0.0.4 reach
    # nginx, which connects from 127.0.0.1 and appends the client's address to the header.
    # (After the streaming export, so that the plain server knows admin's token: a credential it
    # knows still passes the limit, for the cut-off export below.)
    def attempt(port, source, user, password, forwarded=None):
        credential = base64.b64encode(f"{user}:{password}".encode()).decode()
        headers = [("Authorization", f"Basic {credential}")]
        if forwarded:
            headers.append(("X-Forwarded-For", forwarded))
        return http_raw.get("127.0.0.1", port, f"/api/dataValueSets.json?{Q1}", headers,
                            source=source)

    def limited(response):
        return response.status == 401 and LIMITED in response.body

    def exhaust(port, source, name, forwarded=lambda i: None):
        """Wrong passwords from "source" until its address is refused as having too many."""
        for i in range(8):
            response = attempt(port, source, f"{name}{i}", "wrong", forwarded(i))
            check(response.status == 401, f"{name}: {response!r}")
            if limited(response):
                return i
        raise AssertionError(f"{name}: 8 wrong passwords from {source} and no limit: "
                             f"{response!r}")

    # Trusting: 127.0.0.2 is limited, 127.0.0.4 (a password not yet cached) is not.
    exhaust(args.trusting_nginx, "127.0.0.2", "xffTrusting")
    response = attempt(args.trusting_nginx, "127.0.0.4", "district", "district-demo")
    check(response.status == 409 and b"E2012" in response.body,
          f"trusting server: another client behind nginx was refused: {response!r}")
    check(limited(attempt(args.trusting_nginx, "127.0.0.2", "programme", "programme-demo")),
          "trusting server: the limited client passed")
    # Plain: every client behind nginx is nginx's address, limited together.
    exhaust(args.plain_nginx, "127.0.0.2", "xffPlain")
    response = attempt(args.plain_nginx, "127.0.0.4", "district", "district-demo")
    check(limited(response), f"plain server: X-Forwarded-For was believed: {response!r}")
    # A client that is not a trusted proxy cannot name other addresses, even at the trusting
    # server: its wrong passwords all count for its own address.
    failures = exhaust(args.trusting_http, "127.0.0.9", "xffForged",
                       forwarded=lambda i: f"198.51.100.{i + 1}")
    # A client inside the trusted range (127.0.0.5, behind nginx) that forges X-Forwarded-For:
    # nginx appends its address to the forged one, and the server takes what nginx appended
    # (one hop), never walking left into the forgery: all its attempts count for 127.0.0.5.
    inside = exhaust(args.trusting_nginx, "127.0.0.5", "xffInside",
                     forwarded=lambda i: f"10.0.0.{i + 1}")
    print(f"  X-Forwarded-For: believed from nginx by the trusting server only; a forged one "
          f"ignored (limited after {failures} attempts; through nginx from inside the trusted "
          f"range after {inside})")

    # An export cut off upstream after its first bytes (dvexport killed) reaches the client
    # without its last chunk: the client knows the body is incomplete.
    connection = http_raw.Connection("127.0.0.1", args.plain_nginx, rcvbuf=16384, timeout=30)
    killed = []
    try:
        connection.request(f"/api/dataValueSets.xml?{EVERYTHING}",
                           [("Authorization", f"ApiToken {args.token}")])

        def kill_after_first_bytes(data):
            if not killed:
                os.kill(args.plain_pid, signal.SIGKILL)
                killed.append(True)
            time.sleep(len(data) / (1024 * 1024))

        response = connection.read_response(on_body=kill_after_first_bytes)
    finally:
        connection.close()
    check(response.status == 200 and killed, f"cut off: {response!r}")
    check(not response.complete,
          f"cut off: the body ended with its last chunk after {len(response.body)} bytes")
    print(f"  cut off: {len(response.body)} bytes, then the connection ended without the last chunk")
    print("nginx_proxy_test.py: exports reach dvexport and stream; the rest reaches DHIS2")


if __name__ == "__main__":
    main()
