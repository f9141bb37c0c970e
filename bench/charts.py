#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/run's charts, as PNG files, from one run's latest.json.

  charts.py LATEST_JSON OUT_DIR
      find_cost.png     ns per find against table size, log-log: the
                        library's P_Key and GID finds beside the linear
                        scans (pkey_find_N, gid_find_N rows)
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


def find_series(rows, prefix):
    """[(size, lib_ns, base_ns)] of the find rows prefix_N, by size."""
    points = []
    for r in rows:
        m = re.fullmatch(prefix + r"_(\d+)", r["case"])
        if m:
            points.append((int(m.group(1)), r["lib_ns"], r["base_ns"]))
    return sorted(points)


def find_cost(rows, out, title):
    """ns per find against table size, library and scan."""
    fig, ax = plt.subplots(figsize=(7, 4.5))
    for prefix, what, colour in (("pkey_find", "P_Key", "tab:blue"),
                                 ("gid_find", "GID", "tab:orange")):
        pts = find_series(rows, prefix)
        if not pts:
            continue
        sizes = [p[0] for p in pts]
        ax.plot(sizes, [p[1] for p in pts], "o-", color=colour,
                label=f"{what}: ibkeys find")
        ax.plot(sizes, [p[2] for p in pts], "s--", color=colour,
                label=f"{what}: linear scan")
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("entries in the table")
    ax.set_ylabel("ns per find (median)")
    ax.set_title(title)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend()
    fig.tight_layout()
    fig.savefig(out, dpi=110)


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
    find_cost(rows, f"{argv[2]}/find_cost.png",
              f"find by value ({run} run, {source})")
    read_latency(rows, f"{argv[2]}/read_latency.png",
                 f"get latency under back-to-back refills ({run} run, "
                 f"{source})")
    print(f"charts: {argv[2]}/find_cost.png, {argv[2]}/read_latency.png")


if __name__ == "__main__":
    main(sys.argv)
