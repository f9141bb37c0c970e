#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One version everywhere.

  version.py ROOT MESON_VERSION [CMAKE]

VERSION is the source; each header's IBKEYS_VERSION_MAJOR/MINOR/PATCH and
IBKEYS_VERSION string, meson's project version (passed by meson.build) and
the version of the CMake package (ibkeysConfigVersion.cmake from a
configure of ROOT in a scratch directory; skipped without cmake) must all
be it. Prints TAP.
"""
import os
import re
import shutil
import subprocess
import sys
import tempfile


def header_version(path):
    """The version a header defines, or a reason it defines none."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    fields = {}
    for part in ("MAJOR", "MINOR", "PATCH"):
        m = re.search(rf"^#define IBKEYS_VERSION_{part}\s+(\d+)\s*$", text, re.M)
        if not m:
            return None, f"no IBKEYS_VERSION_{part}"
        fields[part] = m.group(1)
    numbers = "{MAJOR}.{MINOR}.{PATCH}".format(**fields)
    string = re.search(r'^#define IBKEYS_VERSION\s+"([^"]*)"\s*$', text, re.M)
    if not string or string.group(1) != numbers:
        return None, f"no IBKEYS_VERSION string \"{numbers}\""
    check = re.search(r"^#if IBKEYS_VERSION_MAJOR != (\d+) \|\| "
                      r"IBKEYS_VERSION_MINOR != (\d+) \|\| \\\n"
                      r"\s*IBKEYS_VERSION_PATCH != (\d+)$", text, re.M)
    if not check or ".".join(check.groups()) != numbers:
        return None, f"its check of the other header's is not {numbers}"
    return numbers, None


def cmake_version(root, cmake):
    """PACKAGE_VERSION of the CMake package's version file, configured in
    a scratch build directory."""
    with tempfile.TemporaryDirectory() as build:
        subprocess.run([cmake, "-S", root, "-B", build], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.STDOUT)
        with open(os.path.join(build, "ibkeysConfigVersion.cmake"),
                  encoding="utf-8") as f:
            m = re.search(r'set\(PACKAGE_VERSION "([^"]*)"\)', f.read())
    return m.group(1) if m else None


def main(root, meson_version, cmake=None):
    with open(os.path.join(root, "VERSION"), encoding="utf-8") as f:
        version = f.readline().strip()
    checks = []
    for h in ("ib_keys.h", "ib_tables.h"):
        got, why = header_version(os.path.join(root, h))
        checks.append((got == version, f"{h}: {why or got}, VERSION {version}"))
    checks.append((meson_version == version,
                   f"meson project version {meson_version}, VERSION {version}"))
    cmake = cmake or shutil.which("cmake")
    if cmake:
        got = cmake_version(root, cmake)
        checks.append((got == version,
                       f"CMake package version {got}, VERSION {version}"))
    print(f"1..{len(checks) + (0 if cmake else 1)}")
    for i, (ok, what) in enumerate(checks, 1):
        print(f"{'ok' if ok else 'not ok'} {i} - {what}")
    if not cmake:
        print(f"ok {len(checks) + 1} # SKIP cmake not found: the CMake "
              "package's version")
    return 0 if all(ok for ok, _ in checks) else 1

if __name__ == "__main__":
    if len(sys.argv) not in (3, 4):
        sys.exit(__doc__)
    sys.exit(main(*sys.argv[1:]))
