#!/usr/bin/env python3
"""Checks that every room of the service stays readable: no file over 600 lines and no function
over 80 lines below service/, except the tables of data named in EXCEPTIONS (with why).

Function extents come from Universal Ctags (Debian's universal-ctags, installed by
scripts/lib/deps.sh): the first and last line of every function definition, free functions and
member functions defined in a class alike. A lambda counts as part of the function around it.

Usage: structure_test.py ROOT, or --self-test to check that a long file and a long function
are reported and a short one is not.
"""

import json
import os
import shutil
import subprocess
import sys
import tempfile

MAX_FILE_LINES = 600
MAX_FUNCTION_LINES = 80
CHECKED = ("service",)
SOURCE_SUFFIXES = (".h", ".cc")

# "path" or "path:function" -> why it may be longer. Tables of data belong here, and what is
# known to be over and still to split (say so in the issue that splits it).
# Files allowed over MAX_FILE_LINES, each with why (none today).
EXCEPTIONS: dict[str, str] = {}


def ctags_executable():
    for name in ("ctags-universal", "universal-ctags", "ctags"):
        path = shutil.which(name)
        if path:
            return path
    return None


def source_files(root):
    for top in CHECKED:
        for directory, _, files in os.walk(os.path.join(root, top)):
            for name in sorted(files):
                if name.endswith(SOURCE_SUFFIXES):
                    path = os.path.join(directory, name)
                    yield os.path.relpath(path, root).replace(os.sep, "/")


def check(root):
    """Returns one message per file or function over its limit below "root"."""
    problems = []
    files = list(source_files(root))
    for relative in files:
        with open(os.path.join(root, relative), encoding="utf-8", errors="replace") as source:
            lines = sum(1 for _ in source)
        if lines > MAX_FILE_LINES and relative not in EXCEPTIONS:
            problems.append(f"{relative}: {lines} lines (at most {MAX_FILE_LINES})")
    ctags = ctags_executable()
    if ctags is None:
        return problems + ["universal-ctags is not installed (scripts/lib/deps.sh installs it)"]
    if not files:
        return problems
    result = subprocess.run(
        [ctags, "--output-format=json", "--fields=+ne", "--kinds-C++=f", "--language-force=C++",
         "-o", "-", "-L", "-"],
        input="\n".join(files), cwd=root, capture_output=True, text=True, check=True)
    for line in result.stdout.splitlines():
        tag = json.loads(line)
        if tag.get("_type") != "tag" or "end" not in tag:
            continue
        length = tag["end"] - tag["line"] + 1
        key = f"{tag['path']}:{tag['name']}"
        if length > MAX_FUNCTION_LINES and key not in EXCEPTIONS:
            problems.append(f"{tag['path']}:{tag['line']}: {tag['name']} is {length} lines "
                            f"(at most {MAX_FUNCTION_LINES})")
    return sorted(problems)


def self_test():
    """A tree with a long file and a long function must be reported, short ones not."""
    long_body = "".join(f"  x += {i};\n" for i in range(MAX_FUNCTION_LINES))
    short_body = "".join(f"  x += {i};\n" for i in range(MAX_FUNCTION_LINES - 3))
    files = {
        "service/a/long_function.cc": f"int Long(int x) {{\n{long_body}  return x;\n}}\n",
        "service/a/short_function.cc": f"int Short(int x) {{\n{short_body}  return x;\n}}\n",
        "service/a/long_file.h": "// line\n" * (MAX_FILE_LINES + 1),
        "service/a/member.h": ("struct S {\n  int Member(int x) {\n" + long_body +
                               "    return x;\n  }\n};\n"),
    }
    with tempfile.TemporaryDirectory() as root:
        for path, text in files.items():
            os.makedirs(os.path.dirname(os.path.join(root, path)), exist_ok=True)
            with open(os.path.join(root, path), "w", encoding="utf-8") as out:
                out.write(text)
        problems = check(root)
    expected = [
        "service/a/long_file.h: 601 lines",
        "service/a/long_function.cc:1: Long is 83 lines",
        "service/a/member.h:2: Member is 83 lines",
    ]
    found = all(any(p.startswith(e) for p in problems) for e in expected)
    if not found or len(problems) != len(expected):
        print("self-test failed: expected reports starting with", *expected, "got", *problems,
              sep="\n  ")
        return 1
    print("self-test passed: the long file and both long functions were reported, nothing else")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 2:
        print(__doc__)
        return 2
    problems = check(argv[1])
    if problems:
        print(f"Over the limits (a file at most {MAX_FILE_LINES} lines, a function at most "
              f"{MAX_FUNCTION_LINES}; split it into named steps):")
        for problem in problems:
            print("  " + problem)
        return 1
    print(f"structure: no file below {', '.join(CHECKED)}/ over {MAX_FILE_LINES} lines, "
          f"no function over {MAX_FUNCTION_LINES}, but the {len(EXCEPTIONS)} named in EXCEPTIONS")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
