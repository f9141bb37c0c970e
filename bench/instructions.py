#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Instructions per operation, from valgrind's callgrind, beside the ns.

  instructions.py LATEST_JSON PROC TARGET_MS JOBS
      for every row of LATEST_JSON timed in one thread (not the threaded
      cached_read cases, not read_latency, not the hyperfine or 0.1 rows),
      counts the instructions of each side's work under callgrind: one
      `PROC CASE lib N SIDE N...` per case, the library and every row's
      baseline or peer, whose run_side() has callgrind count each side's
      work alone (set-up and tear-down left out); N sized from the row's
      ns/op so that the work would take about TARGET_MS natively; JOBS
      valgrinds at a time. Adds lib_instr_per_op and base_instr_per_op to
      the rows and prints a table. The counts do not move with the
      neighbours' load: a regression shows in them even when the ns do not.
"""
import concurrent.futures
import glob
import json
import math
import re
import subprocess
import sys
import tempfile


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


def single_thread(row):
    """A row of a case one thread times per operation."""
    return ("threads" not in row and "stat" not in row
            and "@" not in row["case"] and "_vs_" not in row["case"])


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
    with concurrent.futures.ThreadPoolExecutor(max_workers=jobs) as pool:
        counts = {case: pool.submit(side_counts, proc, case, sides)
                  for case, sides in runs.items()}
        per_op = {(case, side): n / runs[case][side]
                  for case, fut in counts.items()
                  for side, n in fut.result().items()}
    print(f"{'case':<24} {'baseline or peer':<20} {'lib instr/op':>13} "
          f"{'base instr/op':>14}")
    for row in (r for r in rows if single_thread(r)):
        row["lib_instr_per_op"] = round(per_op[(row["case"], "lib")], 2)
        row["base_instr_per_op"] = round(per_op[(row["case"],
                                                 row["base"])], 2)
        print(f"{row['case']:<24} {row['base']:<20} "
              f"{row['lib_instr_per_op']:>13.2f} "
              f"{row['base_instr_per_op']:>14.2f}")
    with open(latest, "w") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")


if __name__ == "__main__":
    main(sys.argv)
