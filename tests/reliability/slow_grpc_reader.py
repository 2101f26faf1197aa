#!/usr/bin/env python3
"""A grpcio client (Debian's python3-grpcio) that reads an ExportFile stream slowly.

Calls /dvexport.v1.DataValueExport/ExportFile with the serialized request read
from --request (raw bytes: no generated stubs), takes one message at a time and
sleeps so that it never reads faster than --rate bytes per second; with
--stop-after N it stops reading after the N-th message until a line (or the
end) arrives on its standard input, then reads on: gRPC hands the client the
call's status only after the messages its transport holds. --small-window turns
gRPC's BDP probing off, which keeps the receive window at 64 KiB (by default it
grows to megabytes). Each message is written to
--out as a 4-byte big-endian length and its bytes, for the caller to parse. The
last line on stdout is JSON: the call's status code name, its details, the
messages and bytes read, and the seconds from the last message read to the end.
Exit status 0 once the call ended (whatever its status), 2 on bad arguments.
"""

import argparse
import json
import struct
import sys
import time

import grpc

METHOD = "/dvexport.v1.DataValueExport/ExportFile"


def main():
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--target", required=True, help="host:port of the server")
    parser.add_argument("--request", required=True, help="file holding a serialized ExportFileRequest")
    parser.add_argument("--out", required=True, help="file receiving the length-prefixed messages")
    parser.add_argument("--rate", type=float, default=0, help="bytes per second at most (0: no limit)")
    parser.add_argument("--stop-after", type=int, default=0,
                        help="stop reading after this many messages, until a line on stdin")
    parser.add_argument("--small-window", action="store_true", help="no BDP probing: a 64 KiB window")
    parser.add_argument("--deadline", type=float, default=120, help="the call's deadline in seconds")
    args = parser.parse_args()
    if args.rate < 0 or args.stop_after < 0 or args.deadline <= 0:
        parser.error("--rate and --stop-after must not be negative, --deadline must be positive")

    with open(args.request, "rb") as f:
        request = f.read()
    messages = 0
    received = 0
    code = "OK"
    details = ""
    options = [("grpc.http2.bdp_probe", 0)] if args.small_window else []
    with grpc.insecure_channel(args.target, options=options) as channel, open(args.out, "wb") as out:
        # No serializers: the request and the messages are raw bytes.
        call = channel.unary_stream(METHOD)(request, timeout=args.deadline)
        start = time.monotonic()
        try:
            for message in call:
                messages += 1
                received += len(message)
                out.write(struct.pack(">I", len(message)))
                out.write(message)
                if messages == args.stop_after:
                    print("stopped", flush=True)
                    sys.stdin.readline()
                if args.rate:
                    pause = start + received / args.rate - time.monotonic()
                    if pause > 0:
                        time.sleep(pause)
        except grpc.RpcError as e:
            code = e.code().name
            details = e.details() or ""
        ended = time.monotonic()
        if code == "OK":
            code = call.code().name
            details = call.details() or ""
    print(json.dumps({"code": code, "details": details, "messages": messages, "bytes": received,
                      "seconds": round(ended - start, 3)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
