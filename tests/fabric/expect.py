#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""tests/fabric/expect.py - the P_Key tables of tests/fabric/run, each read
independently of the simulator's code; every command prints one port's
P_Keys, sorted, one "0x%04x" per line.

  partitions FILE GUID   what OpenSM's partitions.conf FILE gives port GUID:
                         0x8000 | P_Key where it is a full member, the P_Key
                         where limited (full wins); ALL counts every port
  pktr FILE LID          the non-zero entries of saquery's PKeyTableRecord
                         dump FILE for LID, over every block
  dump FILE NODE         the "NODE pkey INDEX KEY" lines of the simulator's
                         SIGUSR1 dump FILE (the library's cached table)
"""
import re
import sys


def partitions(path, guid):
    """The keys of port @guid by partitions.conf's grammar (opensm's
    doc/partition-config.txt: NAME=PKEY [, flags] : MEMBER[=full|limited|both],
    ... ;)."""
    want = int(guid, 16)
    keys = {}
    text = re.sub(r"#.*", "", open(path).read())
    for stmt in text.split(";"):
        if ":" not in stmt:
            continue
        head, members = stmt.split(":", 1)
        pkey = int(head.split("=")[1].split(",")[0].strip(), 16) & 0x7FFF
        for m in members.split(","):
            m = m.strip()
            if not m:
                continue
            name, _, kind = m.partition("=")
            name = name.strip()
            if name != "ALL" and (not name.startswith("0x") or int(name, 16) != want):
                continue
            full = kind.strip() in ("full", "both")
            keys[pkey] = keys.get(pkey, False) or full
    return sorted(k | (0x8000 if f else 0) for k, f in keys.items())


def pktr(path, lid):
    """PKeyTableRecords of @lid in saquery's dump."""
    keys, cur = [], None
    for line in open(path):
        m = re.match(r"\s*LID\.+(\d+)", line)
        if m:
            cur = int(m.group(1))
            continue
        if cur == int(lid) and re.match(r"\s*(0x[0-9a-f]{4}\s*)+$", line):
            keys += [int(k, 16) for k in line.split() if int(k, 16)]
    return sorted(keys)


def dump(path, node):
    """The simulator's dump lines of @node."""
    keys = []
    for line in open(path):
        f = line.split()
        if len(f) == 4 and f[0] == node and f[1] == "pkey":
            keys.append(int(f[3], 16))
    return sorted(keys)


def main():
    cmd, path, what = sys.argv[1:4]
    keys = {"partitions": partitions, "pktr": pktr, "dump": dump}[cmd](path, what)
    for k in keys:
        print("0x%04x" % k)


main()
