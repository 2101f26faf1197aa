#!/usr/bin/python3
"""Time from starting a command (a cold CLI process) to the first byte on its standard output.

Runs the command after "--" --runs times, one after the other, reading its standard output
through a pipe as a user's `dvexport export -o - | ...` would, and prints one line:
  first_byte_ms=<median> runs=<each run's first byte, ms> total_ms=<median to the end>
The time includes the process's start (exec, dynamic linking, gRPC's start), the connection,
authentication, the server's first chunk and the CLI's first write. Exit status 1 if a run fails
or writes nothing, 2 on bad arguments. Used by scripts/bench.
"""

import argparse
import statistics
import subprocess
import sys
import time


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("command", nargs=argparse.REMAINDER)
    args = parser.parse_args()
    command = args.command[1:] if args.command[:1] == ["--"] else args.command
    if not command or args.runs < 1:
        parser.error("usage: cold_first_byte.py [--runs N] -- COMMAND [ARG...]")
    firsts, totals = [], []
    for _ in range(args.runs):
        start = time.perf_counter()
        process = subprocess.Popen(command, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                   bufsize=0)
        first = process.stdout.read(1)
        first_at = time.perf_counter()
        while process.stdout.read(1 << 20):
            pass
        status = process.wait()
        end = time.perf_counter()
        if status != 0 or not first:
            print(f"cold_first_byte: {command[0]} exited {status} after "
                  f"{'no output' if not first else 'its first byte'}", file=sys.stderr)
            return 1
        firsts.append((first_at - start) * 1000)
        totals.append((end - start) * 1000)
    print(f"first_byte_ms={statistics.median(firsts):.1f} "
          f"runs={','.join(f'{t:.1f}' for t in firsts)} "
          f"total_ms={statistics.median(totals):.1f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
