#!/usr/bin/env python3
"""Checks from the #include lines that each layer includes only itself and the layers below it.

Includes are written from the repository root ("service/encode/x.h"), so every library could
include any header; this test is what keeps the layers apart:

  common          -> nothing of ours
  service/dhis2   -> common, proto (the requests it validates)
  service/encode  -> common, proto (wire_format.h: the generated field numbers)
  service/db      -> service/dhis2, service/encode, common
  service/auth    -> service/db, service/dhis2, common
  service/pipeline -> service/auth, service/db, service/dhis2, service/encode, common, proto
  service/http    -> service/pipeline, service/auth, service/dhis2, common, proto
  service/grpc    -> service/pipeline, service/auth, service/encode, common, proto (the gRPC door,
                     a peer of service/http)
  service/server  -> service/grpc and service/http (the process opens both doors; the only room
                     that includes both), service/pipeline, service/auth, service/db,
                     service/dhis2, service/encode, common, proto
  client          -> common, proto
  tools           -> client, common, proto

"proto" is the generated code of proto/ ("dvexport/v1/...", "grpc/health/v1/..."). Tests may
include anything and are not checked. Usage: layering_test.py ROOT, or --self-test to check
that a forbidden include is reported.
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
    "service/grpc": {"service/pipeline", "service/auth", "service/encode", "common", "proto"},
    "service/server": {"service/grpc", "service/http", "service/pipeline", "service/auth", "service/db",
                       "service/dhis2", "service/encode", "common", "proto"},
    "client": {"common", "proto"},
    "tools": {"client", "common", "proto"},
}

# First path components that are ours: an include starting with one of them that belongs to no
# layer above (tests/..., service/other/...) is forbidden outside tests.
OUR_TOP_LEVEL = {"common", "service", "client", "tools", "tests", "proto", "deploy", "scripts"}

SOURCE_SUFFIXES = (".h", ".hh", ".hpp", ".cc", ".cpp", ".cxx")
INCLUDE = re.compile(r'^\s*#\s*include\s*"([^"]+)"')


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
    }
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as out:
                out.write(text)
        problems = check(root)
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
    ]
    found = all(any(p.startswith(e) for p in problems) for e in expected)
    if not found or len(problems) != len(expected):
        print("self-test failed: expected reports starting with", *expected, "got", *problems,
              sep="\n  ")
        return 1
    print("self-test passed: every forbidden include was reported, no allowed one")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    problems = check(argv[1])
    if problems:
        print("Forbidden includes (a layer may include only itself and the layers below it):")
        for problem in problems:
            print("  " + problem)
        return 1
    print("layering: every #include of common, service, client and tools is allowed")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
