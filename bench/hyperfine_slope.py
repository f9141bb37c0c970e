#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Per-operation cost from hyperfine parameter scans, and bench/run's summary.

  hyperfine_slope.py plan   LATEST_JSON TARGET_MS POINTS CASE...
      prints "CASE SIDE MAX STEP" per case and side: a scan of n from 0 to
      MAX in POINTS-1 steps whose longest run does about TARGET_MS of work,
      from the in-process ns/op in LATEST_JSON.
  hyperfine_slope.py fit    LATEST_JSON TAGS RESULTS_DIR CASE...
      fits mean wall time against n (least squares) in
      RESULTS_DIR/hyperfine_CASE_{lib,base}.json, prints a
      "case=CASE@hyperfine lib_ns=... base=... base_ns=..." row per case and
      appends those rows to LATEST_JSON; adds the keys of TAGS (a JSON
      object: run mode, source commit, how busy the machine was) to every
      row.
  hyperfine_slope.py summary LATEST_JSON
      prints every row of LATEST_JSON as a table: the ns and their ratio
      (speedup), and the ratio of the instructions per operation (instr,
      base / lib) where callgrind counted them.
"""
import json
import sys


def load(path):
    with open(path) as f:
        return json.load(f)


def row_of(rows, name):
    for row in rows:
        if row["case"] == name:
            return row
    sys.exit(f"hyperfine_slope: no case {name} in the harness results")


def plan(latest, target_ms, points, cases):
    rows = load(latest)
    for name in cases:
        row = row_of(rows, name)
        for side in ("lib", "base"):
            ns = row[side + "_ns"]
            step = max(1, int(float(target_ms) * 1e6 / ns / (int(points) - 1)))
            # whole bursts: the runner rounds n down to them
            step = -(-step // 32) * 32
            print(name, side, step * (int(points) - 1), step)


def fit_line(xs, ys):
    """Least-squares slope, intercept and R^2 of ys against xs."""
    n = len(xs)
    mx, my = sum(xs) / n, sum(ys) / n
    sxx = sum((x - mx) ** 2 for x in xs)
    sxy = sum((x - mx) * (y - my) for x, y in zip(xs, ys))
    syy = sum((y - my) ** 2 for y in ys)
    slope = sxy / sxx
    r2 = sxy * sxy / (sxx * syy) if syy else 1.0
    return slope, my - slope * mx, r2


def scan_fit(path):
    results = load(path)["results"]
    xs = [float(r["parameters"]["n"]) for r in results]
    ys = [r["mean"] for r in results]
    return fit_line(xs, ys)


def fit(latest, tags, results_dir, cases):
    tags = json.loads(tags)
    rows = [r for r in load(latest) if not r["case"].endswith("@hyperfine")]
    for row in rows:
        row.update(tags)
    for name in cases:
        base_name = row_of(rows, name)["base"]
        lib = scan_fit(f"{results_dir}/hyperfine_{name}_lib.json")
        base = scan_fit(f"{results_dir}/hyperfine_{name}_base.json")
        row = {
            "case": name + "@hyperfine",
            "row": f"{name}@hyperfine.{base_name}",
            "lib_ns": round(lib[0] * 1e9, 4),
            "base": base_name,
            "base_ns": round(base[0] * 1e9, 4),
            "speedup": round(base[0] / lib[0], 3),
            "lib_intercept_ms": round(lib[1] * 1e3, 3),
            "base_intercept_ms": round(base[1] * 1e3, 3),
            "lib_r2": round(lib[2], 5),
            "base_r2": round(base[2], 5),
        }
        row.update(tags)
        rows.append(row)
        print(f"case={row['case']} lib_ns={row['lib_ns']:.3f} "
              f"base={base_name} base_ns={row['base_ns']:.3f}")
        print(f"    intercept (process start-up and set-up): "
              f"lib {row['lib_intercept_ms']:.2f} ms, "
              f"base {row['base_intercept_ms']:.2f} ms; "
              f"R^2 lib {row['lib_r2']:.4f}, base {row['base_r2']:.4f}")
    with open(latest, "w") as f:
        json.dump(rows, f, indent=1)
        f.write("\n")


def instr_ratio(row):
    """The row's base / lib instructions per operation, or blank where
    callgrind counted none."""
    lib, base = row.get("lib_instr_per_op"), row.get("base_instr_per_op")
    return f"{base / lib:>7.2f}x" if lib and base else f"{'':>8}"


def summary(latest):
    rows = load(latest)
    print(f"{'case':<34} {'lib ns/op':>10} {'base ns/op':>11} "
          f"{'speedup':>8} {'instr':>8}  baseline")
    for r in rows:
        print(f"{r['case']:<34} {r['lib_ns']:>10.3f} {r['base_ns']:>11.3f} "
              f"{r['base_ns'] / r['lib_ns']:>7.2f}x {instr_ratio(r)}  "
              f"{r['base']}")


def main(argv):
    if len(argv) >= 6 and argv[1] == "plan":
        plan(argv[2], argv[3], argv[4], argv[5:])
    elif len(argv) >= 6 and argv[1] == "fit":
        fit(argv[2], argv[3], argv[4], argv[5:])
    elif len(argv) == 3 and argv[1] == "summary":
        summary(argv[2])
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv)
