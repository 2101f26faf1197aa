#!/usr/bin/python3
"""Sends many calls with wrong passwords at once, as a brute-force attacker would.

Opens --channels gRPC channels to --target and starts --calls CountDataValues
calls at once, spread over them, each with `authorization: Basic
base64(username:password)` for one of --usernames (comma-separated) and a
password that is wrong (random). The request is empty (no generated stubs:
raw bytes). Prints one JSON line: how many calls ended with each status code,
and the seconds from the first call's start to the last one's end. Exit status
0 once every call ended, 2 on bad arguments. Used by scripts/bench (a running
export must not slow down by more than 10% while this runs).
"""

import argparse
import base64
import collections
import json
import os
import sys
import time

import grpc

METHOD = "/dvexport.v1.DataValueExport/CountDataValues"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", required=True, help="host:port of the server")
    parser.add_argument("--calls", type=int, default=1000)
    parser.add_argument("--channels", type=int, default=10)
    parser.add_argument("--usernames", default="admin", help="comma-separated usernames to try")
    parser.add_argument("--deadline", type=float, default=60, help="each call's deadline, seconds")
    args = parser.parse_args()
    users = [u for u in args.usernames.split(",") if u]
    if args.calls < 1 or args.channels < 1 or not users or args.deadline <= 0:
        print("password_burst.py: --calls, --channels >= 1, --usernames not empty", file=sys.stderr)
        return 2
    channels = [grpc.insecure_channel(args.target, options=[("grpc.use_local_subchannel_pool", 1)])
                for _ in range(args.channels)]
    stubs = [c.unary_unary(METHOD, request_serializer=None, response_deserializer=None)
             for c in channels]
    start = time.monotonic()
    futures = []
    for i in range(args.calls):
        user = users[i % len(users)]
        password = base64.b64encode(os.urandom(12)).decode()
        value = base64.b64encode(f"{user}:{password}".encode()).decode()
        futures.append(stubs[i % len(stubs)].future(
            b"", timeout=args.deadline, metadata=(("authorization", "Basic " + value),)))
    codes = collections.Counter()
    for f in futures:
        try:
            f.result()
            codes["OK"] += 1
        except grpc.RpcError as e:
            codes[e.code().name] += 1
    print(json.dumps({"codes": codes, "seconds": round(time.monotonic() - start, 3)}))
    for c in channels:
        c.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
