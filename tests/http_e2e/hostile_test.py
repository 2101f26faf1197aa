"""The checks of hostile_test.sh against two dvexport-servers: "main" (--http_header_timeout_ms
given by --header-timeout-ms) takes the malformed and slow requests, "idle" (a long header
timeout, --http_max_connections_per_peer given by --per-peer) the idle connections."""

import argparse
import re
import os
import resource
import select
import socket
import struct
import time
import urllib.request

import http_raw  # beside this file
from http_raw import check, export_lines

Q1 = "dataSet=JurnHCkmDCn&period=202401&orgUnit=ImspTQPwCqd&children=true"
EVERYTHING = ("dataSet=JurnHCkmDCn,Se00xj4OCO2,av9SOZj6FcK,QfF9ZANatcj,IF4YaBzxNHa"
              "&orgUnit=ImspTQPwCqd,EqZQbZsbFhc&children=true&startDate=2000-01-01"
              "&endDate=2030-12-31&includeDeleted=true")


def metric(port, name):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as r:
        for line in r.read().decode().splitlines():
            if line.startswith(name + " ") or line.startswith(name + "{"):
                return float(line.rsplit(" ", 1)[1])
    raise AssertionError(f"no {name} on /metrics")


def wait_for_idle_slots(port, within=5.0):
    """dvexport_active_exports and dvexport_queued_exports come back to 0 within "within" s."""
    deadline = time.monotonic() + within
    while True:
        active, queued = (metric(port, "dvexport_active_exports"),
                          metric(port, "dvexport_queued_exports"))
        if active == 0 and queued == 0:
            return
        if time.monotonic() > deadline:
            raise AssertionError(f"export slots still held: active {active}, queued {queued}")
        time.sleep(0.1)


def send_raw(port, data, within=5.0, source=None):
    """Sends "data" on a new connection; returns (the response or None, whether the server closed
    the connection within "within" seconds)."""
    connection = http_raw.Connection("127.0.0.1", port, timeout=within, source=source)
    try:
        try:
            connection.send(data)
        except (BrokenPipeError, ConnectionResetError):
            return None, True  # closed while we were still sending
        closed = connection.closed_by_peer(within)
        response = None
        if connection.buffer.startswith(b"HTTP/1."):
            reader = http_raw.Connection.__new__(http_raw.Connection)
            reader.sock, reader.buffer = connection.sock, connection.buffer
            try:
                response = reader.read_response()
            except (EOFError, ValueError, OSError):
                response = None
        return response, closed
    finally:
        connection.close()


def normal_export(port, token, expected, source=None):
    response = http_raw.get("127.0.0.1", port, f"/api/dataValueSets.json?{Q1}",
                            [("Authorization", f"ApiToken {token}")], source=source)
    check(response.status == 200 and response.complete, f"a normal export: {response!r}")
    check(response.body == expected,
          f"a normal export: {len(response.body)} bytes against the CLI's {len(expected)}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--expected", required=True)
    parser.add_argument("--token", required=True)
    parser.add_argument("--main-http", type=int, required=True)
    parser.add_argument("--main-metrics", type=int, required=True)
    parser.add_argument("--main-log", required=True)
    parser.add_argument("--header-timeout-ms", type=int, required=True)
    parser.add_argument("--idle-http", type=int, required=True)
    parser.add_argument("--idle-metrics", type=int, required=True)
    parser.add_argument("--per-peer", type=int, required=True)
    parser.add_argument("--idle-count", type=int, required=True)
    parser.add_argument("--max-connections", type=int, required=True)
    args = parser.parse_args()
    with open(os.path.join(args.expected, "q1.json"), "rb") as f:
        q1_json = f.read()
    port = args.main_http
    auth = f"Authorization: ApiToken {args.token}\r\n"

    # Malformed requests: an error status (never 200) or nothing, and the connection closed.
    for data in (b"GARBAGE\r\n\r\n",
                 b"GET\r\n\r\n",
                 b"GET /api/dataValueSets\r\n\r\n",
                 b"GET /api/dataValueSets HTTP/1.1 extra\r\nHost: x\r\n\r\n",
                 b"\x00\x01\x02\xff\xfe\r\n\r\n",
                 b"GET /api/dataValueSets HTTP/7.1\r\nHost: x\r\n\r\n",
                 b"GET /api/dataValueSets HTTP/1.1\r\nNo colon here\r\n\r\n",
                 b"GET /api/dataValueSets HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
                 b"GET /api/dataValueSets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n"
                 b"\r\nZZZ\r\n\r\n",
                 b"GET /api/data\x00ValueSets HTTP/1.1\r\nHost: x\r\n\r\n"):
        response, closed = send_raw(port, data)
        status = response.status if response else None
        print(f"  malformed {data[:40]!r}: {status or 'no response'}, closed {closed}")
        check(status is None or 400 <= status < 600, f"malformed {data!r}: {response!r}")
        check(closed, f"malformed {data!r}: the connection stayed open")

    # Framing attacks (issue 32), each answered by one refusal, then the connection closed; the
    # process serves on (checked at the end, and by the shell script: the server still runs).
    smuggled = b"GET /api/dataValueSets HTTP/1.1\r\nHost: x\r\n\r\n"
    framing = [
        # A trailer field of 64 KiB: Beast threw, before any credential, and the process died.
        ("a 64 KiB trailer field", b"POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked"
         b"\r\n\r\n0\r\nX: " + b"a" * 65536 + b"\r\n\r\n", (400,)),
        # A header field of 64 KiB at the largest --http_max_header_kib (63, this server's).
        ("a 64 KiB header field", b"GET /api/dataValueSets HTTP/1.1\r\nHost: a\r\nX: "
         + b"a" * 65536 + b"\r\n\r\n", (431,)),
        ("a chunk extension of 1 MiB", b"GET / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: "
         b"chunked\r\n\r\n1;e=" + b"e" * (1 << 20) + b"\r\nx\r\n0\r\n\r\n", (400,)),
        ("no Host", b"GET /api/dataValueSets HTTP/1.1\r\n\r\n", (400,)),
        ("two Hosts", b"GET /api/dataValueSets HTTP/1.1\r\nHost: a\r\nHost: b\r\n\r\n",
         (400,)),
        ("an invalid Host", b"GET /api/dataValueSets HTTP/1.1\r\nHost: a/b\r\n\r\n", (400,)),
    ]
    for coding in (b"gzip", b"identity", b"chunked, identity", b"xchunked"):
        for length in (b"", b"Content-Length: %d\r\n" % len(smuggled)):
            framing.append((f"Transfer-Encoding: {coding.decode()} {'with' if length else 'without'}"
                            f" Content-Length, a GET in the body",
                            b"GET /api/dataValueSets HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: "
                            + coding + b"\r\n" + length + b"\r\n" + smuggled, (400,)))
    for name, data, statuses in framing:
        connection = http_raw.Connection("127.0.0.1", port, timeout=10)
        try:
            try:
                connection.send(data)
            except (BrokenPipeError, ConnectionResetError):
                pass
            closed = connection.closed_by_peer(10)
        finally:
            connection.close()
        answers = len(re.findall(rb"HTTP/1\.1 \d{3} ", connection.buffer))
        status = int(connection.buffer[9:12]) if connection.buffer.startswith(b"HTTP/1.") else None
        print(f"  {name}: {status}, {answers} answer(s), closed {closed}")
        check(status in statuses and answers == 1, f"{name}: {connection.buffer[:300]!r}")
        check(closed, f"{name}: the connection stayed open")
    # An absolute-form target is a request like any other (RFC 9112 3.2.2).
    response = http_raw.get("127.0.0.1", port, f"http://127.0.0.1:{port}/api/dataValueSets.json"
                            f"?{Q1}", [("Authorization", f"ApiToken {args.token}")])
    check(response.status == 200 and response.body == q1_json,
          f"absolute-form: {response.status} {response.body[:200]!r}")
    normal_export(port, args.token, q1_json)

    # Oversized headers: 431 or the connection closed.
    for name, data in (
            ("a 1 MiB header", b"GET /api/dataValueSets HTTP/1.1\r\nHost: x\r\nX-Big: "
             + b"a" * (1 << 20) + b"\r\n\r\n"),
            ("20,000 headers", b"GET /api/dataValueSets HTTP/1.1\r\nHost: x\r\n"
             + b"X-A: b\r\n" * 20000 + b"\r\n")):
        response, closed = send_raw(port, data)
        status = response.status if response else None
        print(f"  {name}: {status or 'no response'}, closed {closed}")
        check(status in (None, 431), f"{name}: {response!r}")
        check(closed, f"{name}: the connection stayed open")

    # A URL beyond the limit: 414. A long one within it (Android-style lists): served.
    response, _ = send_raw(port, ("GET /api/dataValueSets?dataSet=" + "A" * 100000
                                  + " HTTP/1.1\r\nHost: x\r\n" + auth + "\r\n").encode())
    check(response is not None and response.status == 414, f"a 100 KB URL: {response!r}")
    print("  a 100 KB URL: 414")
    long_target = f"/api/dataValueSets.json?{Q1}" + "&orgUnit=ImspTQPwCqd" * 150
    response = http_raw.get("127.0.0.1", port, long_target,
                            [("Authorization", f"ApiToken {args.token}")])
    check(response.status == 200 and response.body == q1_json,
          f"a {len(long_target)}-byte URL: {response.status} {response.body[:200]!r}")

    # Invalid UTF-8 and invalid percent-encoding: 400 naming the parameter.
    for query, parameter in (("dataSet=JurnHCkmDCn&period=202401&orgUnit=%FF%FE", "orgUnit"),
                             ("dataSet=%ZZ&period=202401&orgUnit=ImspTQPwCqd", "dataSet"),
                             ("dataSet=JurnHCkmDCn&period=%E2%82&orgUnit=ImspTQPwCqd", "period"),
                             ("dataSet=JurnHCkmDCn&orgUnit=ImspTQPwCqd&startDate=%C0%AF"
                              "&endDate=2024-01-31", "startDate"),
                             (f"{Q1}&children=%", "children"),
                             (f"{Q1}&includeDeleted=%ED%A0%80", "includeDeleted")):
        response = http_raw.get("127.0.0.1", port, f"/api/dataValueSets.json?{query}",
                                [("Authorization", f"ApiToken {args.token}")])
        print(f"  {query}: {response.status} {response.body[:160]!r}")
        check(response.status == 400, f"{query}: {response!r}")
        check(parameter.encode() in response.body, f"{query}: the message does not name "
              f"{parameter}: {response.body!r}")

    # Slowloris: one byte of the request per second; closed within the header timeout + slack.
    limit = args.header_timeout_ms / 1000 + 2.0
    connection = http_raw.Connection("127.0.0.1", port, timeout=limit + 5)
    request = f"GET /api/dataValueSets.json?{Q1} HTTP/1.1\r\nHost: x\r\n{auth}\r\n".encode()
    started = time.monotonic()
    closed_after = None
    try:
        for i in range(len(request)):
            try:
                connection.send(request[i:i + 1])
            except (BrokenPipeError, ConnectionResetError):
                closed_after = time.monotonic() - started
                break
            if connection.closed_by_peer(1.0):
                closed_after = time.monotonic() - started
                break
            if time.monotonic() - started > limit + 5:
                break
    finally:
        connection.close()
    print(f"  slowloris: closed after {closed_after} s (header timeout "
          f"{args.header_timeout_ms} ms); sent {connection.buffer[:60]!r}")
    check(closed_after is not None and closed_after <= limit,
          f"slowloris: closed after {closed_after} s, limit {limit} s")

    # A half-closed client: the request, then shutdown(SHUT_WR). The connection ends; the slot
    # comes back.
    connection = http_raw.Connection("127.0.0.1", port, timeout=15)
    try:
        connection.request(f"/api/dataValueSets.json?{Q1}",
                           [("Authorization", f"ApiToken {args.token}")])
        connection.sock.shutdown(socket.SHUT_WR)
        check(connection.closed_by_peer(15), "half-closed: the connection did not end")
    finally:
        connection.close()
    whole = connection.buffer.endswith(b"\r\n0\r\n\r\n")
    print(f"  half-closed: the connection ended after {len(connection.buffer)} bytes "
          f"({'the whole response' if whole else 'cut off'})")
    wait_for_idle_slots(args.main_metrics)

    # A client that disconnects mid-export (a reset after its first bytes): the export is
    # cancelled, its slot comes back within a few seconds.
    seen = len(export_lines(args.main_log))
    connection = http_raw.Connection("127.0.0.1", port, rcvbuf=4096, timeout=30)
    connection.request(f"/api/dataValueSets.xml?{EVERYTHING}",
                       [("Authorization", f"ApiToken {args.token}")])
    while b"\r\n\r\n" not in connection.buffer or len(connection.buffer) < 8192:
        connection._fill()
    check(connection.buffer.startswith(b"HTTP/1.1 200"), connection.buffer[:200])
    check(metric(args.main_metrics, "dvexport_active_exports") == 1,
          "mid-export: the export holds no slot")
    connection.sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()
    wait_for_idle_slots(args.main_metrics)
    deadline = time.monotonic() + 5
    while True:
        lines = export_lines(args.main_log)[seen:]
        if lines or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    check(lines and lines[-1].get("status") == "CANCELLED", f"mid-export: logged {lines}")
    print(f"  mid-export disconnect: slot back, logged {lines[-1].get('status')}")
    normal_export(port, args.token, q1_json)

    # Idle connections (10,000, or what the descriptor limit allows: hostile_test.sh), spread over
    # loopback addresses within the per-peer cap; then one address beyond the cap, a normal
    # export, and connections beyond --http_max_connections.
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    count = args.idle_count
    idle, capped, beyond = [], [], []
    started = time.monotonic()
    try:
        for i in range(count):
            source = f"127.0.{1 + i // (args.per_peer * 250)}.{1 + (i // args.per_peer) % 250}"
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((source, 0))
            s.settimeout(10)
            s.connect(("127.0.0.1", args.idle_http))
            idle.append(s)
        opened = time.monotonic() - started
        # One more address, 20 connections beyond the cap.
        for _ in range(args.per_peer + 20):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind(("127.0.200.1", 0))
            s.settimeout(10)
            s.connect(("127.0.0.1", args.idle_http))
            capped.append(s)

        def closed(sockets, within):
            """How many of "sockets" the server ended (EOF or reset) within "within" s."""
            poller = select.poll()
            for s in sockets:
                poller.register(s, select.POLLIN | select.POLLHUP | select.POLLERR)
            ended = set()
            deadline = time.monotonic() + within
            while time.monotonic() < deadline:
                for fd, _ in poller.poll(100):
                    ended.add(fd)
                    poller.unregister(fd)
            return len(ended)

        capped_closed = closed(capped, 3.0)
        idle_closed = closed(idle, 0.5)
        print(f"  idle connections: {count} opened in {opened:.1f} s over "
              f"{(count + args.per_peer - 1) // args.per_peer} addresses, {idle_closed} closed; "
              f"{len(capped)} from one address: {capped_closed} closed (cap {args.per_peer})")
        check(capped_closed == 20, f"per-peer cap: {capped_closed} of {len(capped)} closed")
        check(idle_closed == 0, f"{idle_closed} idle connections within the caps were closed")
        # Meanwhile the server serves a normal export (from another address).
        normal_export(args.idle_http, args.token, q1_json, source="127.0.250.1")
        # Its connection counts until the server has read this client's close (a moment; longer
        # under a sanitizer): only then is the total below exact.
        time.sleep(1.0)
        # Then fill it: 50 connections more than --http_max_connections. Every connection here
        # waits for a head, of which --http_max_pending_heads (max_connections - 1) may wait: each
        # one beyond those either is closed at once (no slot) or closes the one that has waited
        # longest (an idle one). Either way exactly that many end, and the newest are kept.
        held = count + args.per_peer
        for i in range(args.max_connections - held + 50):
            s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
            s.bind((f"127.0.251.{1 + i // 50}", 0))
            s.settimeout(10)
            s.connect(("127.0.0.1", args.idle_http))
            beyond.append(s)
        beyond_closed = closed(beyond, 3.0)
        evicted = closed(idle, 0.5)
        print(f"  {len(beyond)} more, {args.max_connections - held} within "
              f"--http_max_connections {args.max_connections}: {beyond_closed} of them closed, "
              f"{evicted} of the oldest idle ones closed for them")
        kept = args.max_connections - 1 - held
        check(beyond_closed + evicted == len(beyond) - kept,
              f"connection cap: {beyond_closed} + {evicted} of {len(beyond)} closed, "
              f"{len(beyond) - kept} expected")
        check(metric(args.idle_metrics, "dvexport_http_connections") <= args.max_connections,
              "more connections than --http_max_connections")
        check(metric(args.idle_metrics, "dvexport_http_evicted_heads_total") == evicted,
              "dvexport_http_evicted_heads_total does not count the idle connections closed")
    finally:
        for s in idle + capped + beyond:
            s.close()
    normal_export(args.idle_http, args.token, q1_json)
    wait_for_idle_slots(args.idle_metrics)

    # After all of it: no connection ended by an exception.
    normal_export(port, args.token, q1_json)
    wait_for_idle_slots(args.main_metrics)
    for metrics in (args.main_metrics, args.idle_metrics):
        check(metric(metrics, "dvexport_http_connection_failures_total") == 0,
              "a connection ended by an exception (see http_connection_failed in the log)")
    print("hostile_test.py: every hostile request handled; both servers serve and hold no slot")


if __name__ == "__main__":
    main()
