#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Freestanding check of the headers, in two steps.

  freestanding.py gen HEADER OUT.c
      Writes a C file that takes the address of every public static inline
      function of HEADER, so the compiler must emit all of them.
  freestanding.py check NM LIB...
      Fails (TAP "not ok") if any object in LIB references a symbol it does
      not define: the headers promise no libc, not even memcpy or memset.
"""
import re
import subprocess
import sys

PUBLIC_FN = re.compile(r"static inline\s+[^;{}()]*?\b(ibk_[a-z0-9][a-z0-9_]*)\s*\(")


def gen(header, out):
    with open(header, encoding="utf-8") as f:
        names = sorted(set(PUBLIC_FN.findall(f.read())))
    if not names:
        sys.exit(f"{header}: no public functions found")
    with open(out, "w", encoding="utf-8") as f:
        f.write(f'#include "{header.rsplit("/", 1)[-1]}"\n\n')
        f.write("typedef void (*ibk_any_fn)(void);\n")
        f.write("ibk_any_fn const ibk_every_function[] = {\n")
        for n in names:
            f.write(f"\t(ibk_any_fn){n},\n")
        f.write("};\n")


def check(nm, libs):
    failed = 0
    for i, lib in enumerate(libs, 1):
        out = subprocess.run([nm, "-u", lib], capture_output=True, text=True,
                             check=True).stdout
        undefined = [line.split()[-1] for line in out.splitlines()
                     if line.strip() and not line.endswith(":")]
        ok = not undefined
        name = lib.rsplit("/", 1)[-1]
        print(f"{'' if ok else 'not '}ok {i} - {name} references no external symbol")
        for sym in undefined:
            print(f"# undefined: {sym}")
        failed += not ok
    print(f"1..{len(libs)}")
    return 1 if failed else 0


if __name__ == "__main__":
    if len(sys.argv) == 4 and sys.argv[1] == "gen":
        gen(sys.argv[2], sys.argv[3])
    elif len(sys.argv) >= 4 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3:]))
    else:
        sys.exit(__doc__)
