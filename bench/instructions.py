#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Instructions per operation, from valgrind's callgrind, beside the ns.

  instructions.py LATEST_JSON PROC TARGET_MS JOBS
      for every row of LATEST_JSON timed in one thread (not the threaded
      cases, not read_latency, not the hyperfine or 0.1 rows), counts the
      instructions of each side's work under callgrind: one
      `PROC CASE lib N SIDE N...` per case, the library and every row's
      baseline or peer, whose run_side() has callgrind count each side's
      work alone (set-up and tear-down left out); N sized from the row's
      ns/op so that the work would take about TARGET_MS natively; JOBS
      valgrinds at a time. Adds lib_instr_per_op and base_instr_per_op to
      the rows and prints a table. A threaded case's rows take the counts
      of its single-thread twin (TWINS: the same reads, one thread, no
      writer) row by row, the same baseline or peer, with instr_from
      naming the twin; a hyperfine row takes its case's. The counts do not
      move with the neighbours' load: a regression shows in them even when
      the ns do not.
"""
import concurrent.futures
import glob
import json
import math
import re
import subprocess
import sys
import tempfile

# A threaded case's single-thread twin, by name: the case whose rows count
# the same reads of the same table by one thread with no writer, with the
# same baseline and peers.
TWINS = {r"cached_read_\d+t": "cached_get"}


def callgrind_count(cmd):
    """Instructions callgrind counts running cmd."""
    res = subprocess.run(["valgrind", "--tool=callgrind",
                          "--callgrind-out-file=/dev/null"] + cmd,
                         check=True, stdout=subprocess.DEVNULL,
                         stderr=subprocess.PIPE, text=True)
    m = re.search(r"Collected\s*:\s*(\d+)", res.stderr)
    if not m:
        sys.exit(f"instructions: no count from callgrind for {cmd}")
    return int(m.group(1))


def side_counts(proc, case, sides):
    """{side: instructions} for `proc case side n...`, sides {side: n},
    from the counts run_side() has callgrind write out after each."""
    with tempfile.TemporaryDirectory() as out:
        cmd = [proc, case]
        for side, n in sides.items():
            cmd += [side, str(n)]
        subprocess.run(["valgrind", "--tool=callgrind",
                        f"--callgrind-out-file={out}/cg.out"] + cmd,
                       check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)
        counts = {}
        for path in glob.glob(f"{out}/cg.out.*"):
            with open(path) as f:
                text = f.read()
            side = re.search(r"^desc: Trigger: Client Request: (.*)$",
                             text, re.M)
            total = re.search(r"^summary: (\d+)$", text, re.M)
            if side and total:
                counts[side.group(1)] = int(total.group(1))
    missing = set(sides) - set(counts)
    if missing:
        sys.exit(f"instructions: no count for {case} {sorted(missing)}")
    return counts


def per_op(proc, case, sides):
    """{side: instructions per operation} of `proc case side n...`, sides
    {side: n}."""
    counts = side_counts(proc, case, sides)
    return {side: counts[side] / n for side, n in sides.items()}


def count_cases(proc, runs, jobs):
    """{(case, side): instructions per operation} for runs {case: {side:
    n}}, one valgrind per case, jobs at a time."""
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        futures = {case: pool.submit(per_op, proc, case, sides)
                   for case, sides in runs.items()}
        return {(case, side): n for case, fut in futures.items()
                for side, n in fut.result().items()}


def single_thread(row):
    """A row of a case one thread times per operation."""
    return ("threads" not in row and "stat" not in row
            and "@" not in row["case"] and "_vs_" not in row["case"])


def counted_as(row):
    """The case whose counts a row takes: its own (one thread), its twin's
    (threaded), its case's (a hyperfine row); None for the latency and 0.1
    rows, counted elsewhere or not at all."""
    case = row["case"]
    if "stat" in row or "_vs_" in case:
        return None
    if "@" in case:
        return case.split("@")[0]
    if "threads" in row:
        return next((twin for pattern, twin in TWINS.items()
                     if re.fullmatch(pattern, case)), None)
    return case


def operations(ns, target_ms):
    """Operations lasting about target_ms natively: whole bursts of 32
    when there are many (a burst case runs whole bursts), at least one."""
    n = max(1, math.ceil(target_ms * 1e6 / ns))
    return n if n < 32 else -(-n // 32) * 32


def main(argv):
    if len(argv) != 5:
        sys.exit(__doc__)
    latest, proc, target_ms, jobs = argv[1], argv[2], float(argv[3]), \
        int(argv[4])
    with open(latest) as f:
        rows = json.load(f)
    runs = {}                   # case -> {side: operations}
    for row in (r for r in rows if single_thread(r)):
        sides = runs.setdefault(row["case"], {})
        sides.setdefault("lib", operations(row["lib_ns"], target_ms))
        sides[row["base"]] = operations(row["base_ns"], target_ms)
    counts = count_cases(proc, runs, jobs)
    print(f"{'case':<26} {'baseline or peer':<20} {'lib instr/op':>13} "
          f"{'base instr/op':>14} {'base / lib':>10}")
    for row in rows:
        case = counted_as(row)
        if case is None:
            continue
        lib, base = counts.get((case, "lib")), counts.get((case, row["base"]))
        line = f"{row['case']:<26} {row['base']:<20} "
        if lib is None or base is None:
            print(line + f"no count: no single-thread {case or 'twin'} "
                  f"row for {row['base']} in this run")
            continue
        row["lib_instr_per_op"] = round(lib, 2)
        row["base_instr_per_op"] = round(base, 2)
        if "threads" in row:
            row["instr_from"] = case
        print(line + f"{lib:>13.2f} {base:>14.2f} {base / lib:>9.2f}x"
              + (f"  (as {case})" if "threads" in row else ""))
    with open(latest, "w") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv)
