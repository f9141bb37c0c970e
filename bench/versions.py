#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Read cost of this tree beside an older release's, measured in one run.

  versions.py compare LATEST_JSON TAGS OLD_NAME NOW_BENCH OLD_BENCH ROUNDS
                      SAMPLES SAMPLE_MS LIMIT INSTR_JSON CASE...
      runs `ibk-bench --samples SAMPLES --sample-ms SAMPLE_MS CASE` of both
      builds, case by case, ROUNDS times, the two in turn (which goes first
      alternates by round); a case's figure per build is the median of its
      per-round medians. Prints a table, a
      "case=CASE_vs_OLD_NAME lib_ns=NOW base=vOLD_NAME base_ns=OLD" row and
      a MET/MISSED "target" line (now <= LIMIT x old) per case, and appends
      the rows to LATEST_JSON with the keys of TAGS (a JSON object). Both
      builds time the same baseline code beside the library: its now/old
      ratio shows how far the machine alone moved the figures. INSTR_JSON
      (or -): what callgrind wrote, shown beside the times.
  versions.py callgrind OUT_JSON N1 N2 NOW_PROC OLD_PROC CASE...
      instructions per operation of each case's library side in both
      builds, from callgrind: `ibk-bench-proc CASE lib N` at N1 and N2
      operations, (I(N2) - I(N1)) / (N2 - N1), so that start-up and set-up
      drop out. Writes {CASE: [now, old]} to OUT_JSON for compare; the
      count does not move with the neighbours' load.
"""
import json
import os
import statistics
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True     # no __pycache__ in the source tree
from instructions import callgrind_count  # noqa: E402 (after the flag)


def load(path):
    """A JSON file's content."""
    with open(path) as f:
        return json.load(f)


def run_bench(binary, case, samples, sample_ms):
    """One ibk-bench run of one case: (lib_ns, base_ns) medians."""
    with tempfile.NamedTemporaryFile(suffix=".json") as out:
        subprocess.run([binary, "--samples", str(samples), "--sample-ms",
                        str(sample_ms), "--json", out.name, case],
                       check=True, stdout=subprocess.DEVNULL)
        row = load(out.name)[0]
    return row["lib_ns"], row["base_ns"]


def instructions(proc, case, n):
    """Instructions callgrind counts for `proc case lib n`, all of them
    (the old build has no bench_proc_run() to count inside)."""
    return callgrind_count([proc, case, "lib", str(n)])


def callgrind(out, n1, n2, now_proc, old_proc, cases):
    """Instructions per operation of each case, both builds -> OUT."""
    n1, n2 = int(n1), int(n2)
    counts = {}
    for case in cases:
        per_op = []
        for proc in (now_proc, old_proc):
            i1 = instructions(proc, case, n1)
            i2 = instructions(proc, case, n2)
            per_op.append((i2 - i1) / (n2 - n1))
        counts[case] = per_op
        print(f"callgrind: {case}: {per_op[0]:.2f} instructions/op now, "
              f"{per_op[1]:.2f} in the old build")
    with open(out, "w") as f:
        json.dump(counts, f)


def compare(latest, tags, old_name, now_bench, old_bench, rounds, samples,
            sample_ms, limit, instr_path, cases):
    """Both builds case by case in turn; table, rows, verdicts."""
    tags = json.loads(tags)
    rounds, limit = int(rounds), float(limit)
    instr = load(instr_path) if os.path.exists(instr_path) else {}
    runs = {case: {"now": [], "old": []} for case in cases}
    for r in range(rounds):
        print(f"round {r + 1} of {rounds}", end="", flush=True)
        for case in cases:
            order = ("old", "now") if r % 2 == 0 else ("now", "old")
            for side in order:
                binary = now_bench if side == "now" else old_bench
                runs[case][side].append(run_bench(binary, case, samples,
                                                  sample_ms))
            print(".", end="", flush=True)
        print()

    print(f"\nread cost now vs {old_name}: in process, median over {rounds}"
          f" rounds ({samples} samples of ~{sample_ms} ms per side each);"
          f" ratio = now / {old_name}")
    print(f"{'case':<16} {'now ns':>8} {old_name + ' ns':>8} {'ratio':>6}"
          f" {'per round':>11}  {'baseline ratio':>14}  {'instr/op now':>12}"
          f" {old_name:>7} {'ratio':>6}")
    rows, verdicts = [], []
    for case in cases:
        now = statistics.median(x[0] for x in runs[case]["now"])
        old = statistics.median(x[0] for x in runs[case]["old"])
        base_now = statistics.median(x[1] for x in runs[case]["now"])
        base_old = statistics.median(x[1] for x in runs[case]["old"])
        per_round = [a[0] / b[0] for a, b in zip(runs[case]["now"],
                                                 runs[case]["old"])]
        line = (f"{case:<16} {now:>8.3f} {old:>8.3f} {now / old:>5.2f}x"
                f" {min(per_round):>5.2f}-{max(per_round):<5.2f}"
                f"  {base_now / base_old:>13.2f}x")
        row = {
            "case": f"{case}_vs_{old_name}",
            "row": f"{case}_vs_{old_name}.v{old_name}",
            "lib_ns": round(now, 4),
            "base": f"v{old_name}",
            "base_ns": round(old, 4),
            "speedup": round(old / now, 3),
            "ratio": round(now / old, 3),
            "round_ratios": [round(x, 3) for x in per_round],
            "baseline_ns_now": round(base_now, 4),
            "baseline_ns_old": round(base_old, 4),
            "rounds": rounds,
            "samples": int(samples),
        }
        extra = ""
        if case in instr:
            i_now, i_old = instr[case]
            line += f"  {i_now:>12.2f} {i_old:>7.2f} {i_now / i_old:>5.2f}x"
            row["lib_instr_per_op"] = round(i_now, 3)
            row["base_instr_per_op"] = round(i_old, 3)
            extra = f"; {i_now:.2f} vs {i_old:.2f} instructions/op"
        print(line)
        row.update(tags)
        rows.append(row)
        met = now / old <= limit
        verdicts.append(f"target {case} read cost <= {limit:.2f}x "
                        f"{old_name}'s: {'MET' if met else 'MISSED'} "
                        f"({now / old:.2f}x: {now:.3f} vs {old:.3f} ns, "
                        f"rounds {min(per_round):.2f}-"
                        f"{max(per_round):.2f}x{extra})")
    print("(baseline ratio: the same baseline code in both builds, so it "
          "shows how far the machine alone moved; instr/op: callgrind, the "
          "library side's loop, its own overhead included, the same in both "
          "builds; not for the threaded cached_read cases)\n")
    for row in rows:
        print(f"case={row['case']} lib_ns={row['lib_ns']:.3f} "
              f"base={row['base']} base_ns={row['base_ns']:.3f}")
    print()
    for v in verdicts:
        print(v)
    kept = [r for r in load(latest)
            if not r["case"].endswith(f"_vs_{old_name}")]
    with open(latest, "w") as f:
        json.dump(kept + rows, f, indent=1)
        f.write("\n")


def main(argv):
    """Dispatches on the subcommand; prints the usage otherwise."""
    if len(argv) >= 13 and argv[1] == "compare":
        compare(*argv[2:12], argv[12:])
    elif len(argv) >= 7 and argv[1] == "callgrind":
        callgrind(*argv[2:7], argv[7:])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
