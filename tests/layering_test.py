#!/usr/bin/env python3
"""Checks from the #include lines that each layer includes only itself and the layers below it.

Includes are written from the repository root ("service/encode/x.h"), so every library could
include any header; this test is what keeps the layers apart. The floors, top down:

  service/server   the process: flags, main, start and stop; the only room over both doors
  service/grpc, service/http   the two doors, peers: neither includes the other
  service/pipeline what an export is, whichever door it came through
  service/auth     authentication (over service/db's reads of DHIS2's user tables)
  service/db       every SQL statement
  service/encode, service/dhis2   bytes out; DHIS2's rules without I/O
  common           what client and service both need
  client -> common, proto; tools -> client, common, proto

Each layer's allowed includes are in ALLOWED below. "proto" is the generated code of proto/
("dvexport/v1/...", "grpc/health/v1/"). A door also must not reach libpqxx or libpq through
any header it includes, however deep (FREE_OF): what it needs of the pipeline is in
service/pipeline/export.h and the pqxx-free headers beside it.

Tests may include anything and are not checked. Usage: layering_test.py ROOT, or --self-test
to check that a forbidden include of each kind is reported.
"""

import os
import re
import sys
import tempfile

# Layer -> the path prefixes of its own files (relative to the root, with '/').
LAYERS = {
    "common": ("common/",),
    "service/dhis2": ("service/dhis2/",),
    "service/encode": ("service/encode/",),
    "service/db": ("service/db/",),
    "service/auth": ("service/auth/",),
    "service/pipeline": ("service/pipeline/",),
    "service/http": ("service/http/",),
    "service/grpc": ("service/grpc/",),
    "service/server": ("service/server/",),
    "client": ("client/",),
    "tools": ("tools/",),
    "proto": ("dvexport/v1/", "grpc/health/v1/"),
}

ALLOWED = {
    "common": set(),
    "service/dhis2": {"common", "proto"},
    "service/encode": {"common", "proto"},
    "service/db": {"service/dhis2", "service/encode", "common"},
    "service/auth": {"service/db", "service/dhis2", "common"},
    "service/pipeline": {"service/auth", "service/db", "service/dhis2", "service/encode",
                         "common", "proto"},
    "service/http": {"service/pipeline", "service/auth", "service/dhis2", "common", "proto"},
    "service/grpc": {"service/pipeline", "service/encode", "common", "proto"},
    "service/server": {"service/grpc", "service/http", "service/pipeline", "service/auth",
                       "service/db", "service/dhis2", "service/encode", "common", "proto"},
    "client": {"common", "proto"},
    "tools": {"client", "common", "proto"},
}

# Layer -> what it must not reach through any chain of includes (prefixes of the included path).
FREE_OF = {
    "service/grpc": ("pqxx/", "libpq-fe.h"),
    "service/http": ("pqxx/", "libpq-fe.h"),
}

# First path components that are ours: an include starting with one of them that belongs to no
# layer above (tests/..., service/other/...) is forbidden outside tests.
OUR_TOP_LEVEL = {"common", "service", "client", "tools", "tests", "proto", "deploy", "scripts"}

SOURCE_SUFFIXES = (".h", ".hh", ".hpp", ".cc", ".cpp", ".cxx")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')
ANY_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"]([^">]+)[>"]')


def layer_of(path):
    for layer, prefixes in LAYERS.items():
        if path.startswith(prefixes):
            return layer
    return None


def check(root):
    """Returns one message per forbidden include below "root"."""
    problems = []
    for layer in ALLOWED:
        top = os.path.join(root, layer)
        for directory, _, files in os.walk(top):
            for name in sorted(files):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                path = os.path.join(directory, name)
                relative = os.path.relpath(path, root).replace(os.sep, "/")
                with open(path, encoding="utf-8", errors="replace") as source:
                    for number, line in enumerate(source, 1):
                        match = INCLUDE.match(line)
                        if not match:
                            continue
                        included = match.group(1)
                        target = layer_of(included)
                        if target is None:
                            if included.split("/", 1)[0] in OUR_TOP_LEVEL:
                                problems.append(
                                    f"{relative}:{number}: {layer} includes \"{included}\", which "
                                    f"belongs to no library layer")
                            continue
                        if target != layer and target not in ALLOWED[layer]:
                            allowed = ", ".join(sorted(ALLOWED[layer])) or "nothing of ours"
                            problems.append(
                                f"{relative}:{number}: {layer} includes \"{included}\" of "
                                f"{target}; {layer} may include only itself and: {allowed}")
    return problems


def includes_of(root, relative, cache):
    """The include paths of file "relative" (from the root), every kind."""
    if relative not in cache:
        found = []
        path = os.path.join(root, relative)
        if os.path.isfile(path):
            with open(path, encoding="utf-8", errors="replace") as source:
                for line in source:
                    match = ANY_INCLUDE.match(line)
                    if match:
                        found.append(match.group(1))
        cache[relative] = found
    return cache[relative]


def check_free_of(root):
    """Returns one message per file of a FREE_OF layer that reaches a forbidden header."""
    problems = []
    cache = {}
    for layer, forbidden in FREE_OF.items():
        for directory, _, files in os.walk(os.path.join(root, layer)):
            for name in sorted(files):
                if not name.endswith(SOURCE_SUFFIXES):
                    continue
                start = os.path.relpath(os.path.join(directory, name), root).replace(os.sep, "/")
                # Breadth first, so that the chain reported is a shortest one.
                via = {start: None}
                queue = [start]
                hit = None
                while queue and hit is None:
                    current = queue.pop(0)
                    for included in includes_of(root, current, cache):
                        if included.startswith(forbidden):
                            hit = (current, included)
                            break
                        if included not in via and os.path.isfile(os.path.join(root, included)):
                            via[included] = current
                            queue.append(included)
                if hit is not None:
                    chain = []
                    node = hit[0]
                    while node is not None:
                        chain.append(node)
                        node = via[node]
                    path = " -> ".join(reversed(chain))
                    problems.append(f"{start}: {layer} reaches <{hit[1]}> through {path}; a door "
                                    f"includes only pqxx-free headers of the pipeline")
    return problems


def self_test():
    """A tree with one forbidden include of each kind must be reported, an allowed one not."""
    files = {
        "common/a.h": '#include "absl/status/status.h"\n#include "common/b.h"\n',
        "service/encode/e.cc": '#include "common/a.h"\n',
        "client/c.cc": '#include "client/d.h"\n  #  include "service/encode/crc32.h"\n',
        "common/b.h": '#include "tests/support/x.h"\n',
        "service/dhis2/p.cc": '#include "dvexport/v1/export.pb.h"\n',
        "service/encode/q.cc": '#include "service/db/read_session.h"\n',
        "service/pipeline/r.cc": '#include "service/grpc/export_call.h"\n',
        "service/http/s.cc": '#include "service/pipeline/export.h"\n#include "service/db/x.h"\n',
        "service/grpc/u.cc": '#include "service/pipeline/export.h"\n'
                             '#include "service/http/http_server.h"\n'
                             '#include "service/server/export_server.h"\n',
        "service/server/t.cc": '#include "service/http/http_server.h"\n'
                               '#include "service/grpc/export_service.h"\n',
        "service/http/v.cc": '#include "service/pipeline/w.h"\n',
        "service/pipeline/w.h": '#include "service/pipeline/x.h"\n',
        "service/pipeline/x.h": '#include <pqxx/pqxx>\n',
    }
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as out:
                out.write(text)
        problems = check(root) + check_free_of(root)
    expected = [
        'client/c.cc:2: client includes "service/encode/crc32.h" of service/encode',
        'common/b.h:1: common includes "tests/support/x.h", which belongs to no library layer',
        'service/encode/q.cc:1: service/encode includes "service/db/read_session.h" of service/db',
        'service/pipeline/r.cc:1: service/pipeline includes "service/grpc/export_call.h" of '
        'service/grpc',
        'service/http/s.cc:2: service/http includes "service/db/x.h" of service/db',
        'service/grpc/u.cc:2: service/grpc includes "service/http/http_server.h" of service/http',
        'service/grpc/u.cc:3: service/grpc includes "service/server/export_server.h" of '
        'service/server',
        'service/http/v.cc: service/http reaches <pqxx/pqxx> through service/http/v.cc -> '
        'service/pipeline/w.h -> service/pipeline/x.h',
    ]
    found = all(any(p.startswith(e) for p in problems) for e in expected)
    if not found or len(problems) != len(expected):
        print("self-test failed: expected reports starting with", *expected, "got", *problems,
              sep="\n  ")
        return 1
    print("self-test passed: every forbidden include and a door's chain to libpqxx were "
          "reported, no allowed include")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    problems = check(argv[1]) + check_free_of(argv[1])
    if problems:
        print("Forbidden includes (a layer may include only itself and the layers below it):")
        for problem in problems:
            print("  " + problem)
        return 1
    print("layering: every #include of common, service, client and tools is allowed, and no "
          "door reaches libpqxx or libpq")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
