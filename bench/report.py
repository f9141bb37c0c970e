#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The README's figures, written from one run, not copied by hand.

  report.py RESULTS_DIR
      prints the README's performance section as RESULTS_DIR's run gives
      it: the machine and command of the run (RESULTS_DIR/run.txt), a
      table of every ns/op row of RESULTS_DIR/latest.json with its
      instructions per operation and their ratio beside the ns', the
      read-latency table of the library and each peer, and the run's
      MET/MISSED line per DESIGN.md target (bench/run: RESULTS/report.md)
  report.py RESULTS_DIR README
      replaces what lies between the lines "<!-- bench:begin -->" and
      "<!-- bench:end -->" of README with that section (bench/run
      --publish only). Leaves README alone if it has no such lines.
"""
import json
import sys

BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"


def fmt(x):
    """A figure with three significant digits or so."""
    if x is None:
        return ""
    if x >= 1000:
        return f"{x:,.0f}"
    if x >= 100:
        return f"{x:.0f}"
    if x >= 10:
        return f"{x:.1f}"
    return f"{x:.2f}"


def timed_rows(rows):
    """The ns/op rows of the in-process harness, in run order."""
    return [r for r in rows
            if "stat" not in r and "_vs_" not in r["case"]]


def timed_table(rows):
    out = ["| case | baseline or peer | lib ns | base ns | base / lib "
           "| lib instr | base instr | base / lib |",
           "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    for r in timed_rows(rows):
        lib, base = r.get("lib_instr_per_op"), r.get("base_instr_per_op")
        out.append(f"| `{r['case']}` | {r['base']} | {fmt(r['lib_ns'])} "
                   f"| {fmt(r['base_ns'])} | {r['base_ns'] / r['lib_ns']:.2f}x "
                   f"| {fmt(lib)} | {fmt(base)} "
                   f"| {f'{base / lib:.2f}x' if lib and base else ''} |")
    return out


def latency_table(rows):
    """One line per side of the get under back-to-back refills, in us: each
    statistic, then the same without batches the OS switched out."""
    stats = ("median", "median_nocsw", "p99", "p99_nocsw", "p9999",
             "p9999_nocsw", "max", "max_nocsw")
    sides = {}                  # side -> {stat: ns}
    order = []
    for r in rows:
        if r.get("stat") not in stats or not r["case"].startswith(
                "read_latency_") or "_find" in r["case"] or \
                "_floor" in r["case"]:
            continue
        for side, key in (("ibkeys latch", "lib_ns"), (r["base"],
                                                       "base_ns")):
            if side not in sides:
                sides[side] = {}
                order.append(side)
            sides[side][r["stat"]] = r[key]
    floor = {r["stat"]: r["lib_ns"] for r in rows
             if r["case"].startswith("read_latency_floor_")}
    out = ["| get by | median | (no csw) | p99 | (no csw) | p99.99 "
           "| (no csw) | worst | (no csw) |",
           "| --- |" + " ---: |" * len(stats)]
    for side in order + (["empty timed region (the machine)"]
                         if floor else []):
        s = sides.get(side, floor)
        # no batch escaped a context switch: no figure, not a zero
        out.append(f"| {side} | " + " | ".join(
            fmt(s[k] / 1e3) if s.get(k) else "n/a" for k in stats) + " |")
    return out


def machine(run_txt):
    """The run's header lines: command, machine, compiler, source, load."""
    lines = []
    for line in run_txt.splitlines():
        if not line.strip():
            break
        lines.append(line)
    return lines


def section(results):
    """The performance section of RESULTS_DIR's run, as markdown lines."""
    with open(f"{results}/latest.json") as f:
        rows = json.load(f)
    with open(f"{results}/run.txt") as f:
        run_txt = f.read()
    targets = [line for line in run_txt.splitlines()
               if line.startswith("target ")]
    return ["", "```"] + machine(run_txt) + ["```", "",
            "Every in-process row (ns per operation, median; instructions "
            "per operation from callgrind, the same work counted alone):",
            ""] + timed_table(rows) + ["",
            "One get of a 65536-entry table while a writer refills all of "
            "it back to back (`read_latency`, in us):", ""] + \
        latency_table(rows) + ["", "Targets (DESIGN.md), as the run "
                               "printed them:", "", "```"] + \
        sorted(set(targets), key=targets.index) + ["```", ""]


def rewrite(readme, block):
    """Writes BLOCK between README's BEGIN and END lines, if it has them."""
    with open(readme) as f:
        text = f.read()
    if BEGIN not in text or END not in text:
        print(f"report: {readme} has no {BEGIN} ... {END}: left alone")
        return
    head, rest = text.split(BEGIN, 1)
    _, tail = rest.split(END, 1)
    with open(readme, "w") as f:
        f.write(head + BEGIN + "\n".join(block) + END + tail)
    print(f"report: {readme}'s figures rewritten")


def main(argv):
    if len(argv) not in (2, 3):
        sys.exit(__doc__)
    block = section(argv[1])
    if len(argv) == 2:
        sys.stdout.write(BEGIN + "\n".join(block) + END + "\n")
    else:
        rewrite(argv[2], block)


if __name__ == "__main__":
    main(sys.argv)
