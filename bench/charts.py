#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/run's charts, as PNG files, from one run's latest.json.

  charts.py LATEST_JSON OUT_DIR
      scaling.png       cost against table size, log-log, one column per
                        operation (P_Key find, GID find, set one entry,
                        refill): ns per operation above, instructions per
                        operation (callgrind) below, the library beside
                        its baseline and every peer (the OP_N rows)
      read_latency.png  the tail of single-read latency while a writer
                        refills a 65536-entry table back to back: for the
                        library and each baseline and peer, the latency
                        (log) that a fraction of reads exceed (log), from
                        the read_latency_max rows' quantiles
Needs matplotlib (Debian: python3-matplotlib).
"""
import json
import re
import sys

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402 (after the backend)


# The operations drawn against table size: the prefix of their cases'
# names (prefix_N, N entries) and a title.
SCALING = (("pkey_find", "P_Key find"), ("gid_find", "GID find"),
           ("set_one", "set one entry"), ("refill", "refill the table"))


def size_series(rows, prefix):
    """{side: [(size, ns, instructions)]} of the rows prefix_N, by size:
    "ibkeys" for the library, else the row's baseline or peer."""
    series = {}
    for r in rows:
        m = re.fullmatch(prefix + r"_(\d+)", r["case"])
        if not m:
            continue
        size = int(m.group(1))
        for side, ns, instr in (("ibkeys", r["lib_ns"],
                                 r.get("lib_instr_per_op")),
                                (r["base"], r["base_ns"],
                                 r.get("base_instr_per_op"))):
            points = series.setdefault(side, [])
            if size not in (p[0] for p in points):
                points.append((size, ns, instr))
    return {side: sorted(points) for side, points in series.items()}


def scaling(rows, out, title):
    """ns and instructions per operation against table size, a column
    per operation, the library drawn heavy."""
    fig, axes = plt.subplots(2, len(SCALING), figsize=(16, 7.5),
                             squeeze=False)
    all_series = [size_series(rows, prefix) for prefix, _ in SCALING]
    # one colour per baseline or peer in every panel
    palette = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    sides = sorted({side for series in all_series for side in series
                    if side != "ibkeys"})
    colour = {side: palette[i % len(palette)] for i, side in enumerate(sides)}
    colour["ibkeys"] = "black"
    for col, ((_, what), series) in enumerate(zip(SCALING, all_series)):
        for row, (index, unit) in enumerate(((1, "ns"),
                                             (2, "instructions"))):
            ax = axes[row][col]
            for side, points in series.items():
                pts = [(p[0], p[index]) for p in points if p[index]]
                if not pts:
                    continue
                lib = side == "ibkeys"
                ax.plot([p[0] for p in pts], [p[1] for p in pts],
                        "o-" if lib else ".--", label=side,
                        color=colour[side], linewidth=2.5 if lib else 1)
            ax.set_xscale("log", base=2)
            ax.set_yscale("log")
            ax.set_xlabel("entries in the table")
            ax.set_ylabel(f"{unit} per operation")
            ax.grid(True, which="both", alpha=0.3)
            if row == 0:
                ax.set_title(what)
            if row == 0 and series:
                ax.legend(fontsize=7)
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


def read_latency(rows, out, title):
    """Tail of the read latency: library, baseline, peers."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    seen_lib = False
    ppm = next((r["quantiles_ppm"] for r in rows
                if r["case"] == "read_latency_max"), [])

    def exceed(reads):
        """The fraction of reads slower than each quantile; the worst read
        is drawn at one read in the side's count."""
        return [max(1 - q / 1e6, 1 / reads) for q in ppm]

    for r in (r for r in rows if r["case"] == "read_latency_max"):
        if not seen_lib:
            ax.plot(exceed(r["lib_reads"]), r["lib_quantiles_ns"], "o-",
                    linewidth=2.5, color="black", label="ibkeys latch")
            seen_lib = True
        ax.plot(exceed(r["base_reads"]), r["base_quantiles_ns"], ".--",
                label=r["base"])
    for r in (r for r in rows if r["case"] == "read_latency_floor_max"):
        ax.plot(exceed(r["lib_reads"]), r["lib_quantiles_ns"], ":",
                color="grey", label="empty timed region (the machine)")
        break
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.invert_xaxis()
    ax.axhline(2000, color="red", linewidth=0.8)
    ax.text(0.5, 2300, "target: worst read 2 us", color="red", fontsize=8)
    ax.set_xlabel("fraction of reads slower (right: the worst read)")
    ax.set_ylabel("ns for one get")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(out, dpi=110)


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    with open(argv[1]) as f:
        rows = json.load(f)
    source = rows[0].get("source", "?")
    run = rows[0].get("run", "?")
    scaling(rows, f"{argv[2]}/scaling.png",
            f"cost against table size ({run} run, {source})")
    read_latency(rows, f"{argv[2]}/read_latency.png",
                 f"get latency under back-to-back refills ({run} run, "
                 f"{source})")
    print(f"charts: {argv[2]}/scaling.png, {argv[2]}/read_latency.png")


if __name__ == "__main__":
    main(sys.argv)
