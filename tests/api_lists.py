#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Each header section opens with its API, one line a name.

  api_lists.py ROOT            check (TAP, one line a header)
  api_lists.py ROOT --update   rewrite the lists

A section of ib_keys.h or ib_tables.h starts at a banner comment
("/* ----" and its title). Its public functions (ibk_ but not ibk__) and
public function-like macros (IBK_...(...)) are listed, one a line with
its parameters' names, in the order the section defines them, at the end
of that banner, between the line
" * API:" and the banner's closing dashes, as stb headers put their API on
top: the first screen of a section shows what it offers, and the helpers
follow below. The list is generated from the definitions, so this check
fails when a function is added, removed or renamed without the list.
"""
import os
import re
import sys

HEADERS = ("ib_keys.h", "ib_tables.h")
MARK = " * API:"
CLOSE = re.compile(r"^ \* -{20,} \*/$")
DEF = re.compile(r"^(?:static inline|IBK__HOT|IBK__COLD)\b[^;{}()]*?"
                 r"\b(ibk_(?!_)[a-z0-9_]+)\s*\(", re.M)
MACRO = re.compile(r"^#define (IBK_(?!_)[A-Z0-9_]+)\(([^)]*)\)", re.M)


def sections(lines):
    """[(start, end)] of each banner's section: start at its '/* ----'."""
    starts = [i for i, line in enumerate(lines)
              if line.startswith("/* -----") and i + 1 < len(lines)
              and lines[i + 1].startswith(" * ") and
              not lines[i + 1].startswith(" * ---")]
    return [(s, starts[k + 1] if k + 1 < len(starts) else len(lines))
            for k, s in enumerate(starts)]


def banner_end(lines, start):
    """Index of the line closing the banner comment that opens at start."""
    for i in range(start + 1, len(lines)):
        if CLOSE.match(lines[i]):
            return i
    raise SystemExit(f"banner at line {start + 1} never closes")


def params_at(text, pos):
    """The parameter names of the list opening at text[pos] ('(')."""
    depth, i = 0, pos
    while True:
        depth += {"(": 1, ")": -1}.get(text[i], 0)
        if depth == 0:
            break
        i += 1
    names = []
    for p in text[pos + 1:i].split(","):
        p = re.sub(r"\[[^\]]*\]", "", " ".join(p.split()))
        m = re.search(r"(\w+)\s*$", p)
        if m and p.strip() != "void":
            names.append(m.group(1))
    return ", ".join(names)


def api_of(text):
    """The section's public names, in order, each with its parameters:
    'ibk_x(a, b)' or 'IBK_X(a, b)'."""
    text = re.sub(r"/\*.*?\*/", lambda m: "\n" * m.group(0).count("\n"),
                  text, flags=re.S)
    found = [(m.start(), f"{m.group(1)}({params_at(text, m.end() - 1)})")
             for m in DEF.finditer(text)]
    found += [(m.start(), f"{m.group(1)}({m.group(2).strip()})")
              for m in MACRO.finditer(text)]
    names, seen = [], set()
    for _, name in sorted(found):
        if name not in seen:
            seen.add(name)
            names.append(name)
    return names




def listed(lines):
    """(new lines, whether anything changed) with every section's list
    regenerated."""
    out, changed, done = list(lines), False, 0
    for start, end in reversed(sections(lines)):
        close = banner_end(lines, start)
        names = api_of("\n".join(lines[close + 1:end]))
        if not names:
            continue
        block = [" *", MARK] + [" *\t" + name for name in names]
        head = lines[start:close]
        if MARK in head:
            k = head.index(MARK)
            head = head[:k - 1] if head[k - 1] == " *" else head[:k]
        new = head + block
        if new != lines[start:close]:
            changed = True
        out[start:close] = new
        done += 1
    return out, changed


def main(argv):
    if len(argv) not in (2, 3) or (len(argv) == 3 and argv[2] != "--update"):
        sys.exit(__doc__)
    root, update = argv[1], len(argv) == 3
    failed = 0
    for i, h in enumerate(HEADERS, 1):
        path = os.path.join(root, h)
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        new, changed = listed(lines)
        if update:
            if changed:
                with open(path, "w", encoding="utf-8") as f:
                    f.write("\n".join(new))
            print(f"ok {i} - {h}: lists {'rewritten' if changed else 'as they were'}")
            continue
        failed += changed
        print(f"{'not ok' if changed else 'ok'} {i} - {h}: each section's "
              f"banner lists its API in definition order"
              f"{' (tests/api_lists.py ROOT --update)' if changed else ''}")
    print(f"1..{len(HEADERS)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
