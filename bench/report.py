#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The README's figures, written from one run, not copied by hand.

  report.py RESULTS_DIR
      prints the README's performance section as RESULTS_DIR's run gives
      it: the machine and command of the run (RESULTS_DIR/run.txt), a
      table of every ns/op row of RESULTS_DIR/latest.json with its
      instructions per operation and their ratio beside the ns', the
      read-latency table of the library and each peer, and the run's
      MET/MISSED line per performance target (bench/run: RESULTS/report.md)
      and, after it, the summary of issue 21's targets: each hot path's
      figures, the peers beside, the target and met or missed, worked
      out here from the rows (not from the run's own MET lines)
  report.py RESULTS_DIR README BENCH_README
      replaces what lies between "<!-- perf summary: begin -->" and
      "<!-- perf summary: end -->" of README with the summary, and what
      lies between "<!-- bench:begin -->" and "<!-- bench:end -->" of
      BENCH_README with the section (bench/run --publish only). Leaves
      a file alone if it has no such lines.
"""
import json
import sys

BEGIN, END = "<!-- bench:begin -->", "<!-- bench:end -->"
SUM_BEGIN = "<!-- perf summary: begin -->"
SUM_END = "<!-- perf summary: end -->"


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


# What each variant side (bench/variants.h) is, and the simpler path it is
# timed against: (case prefix, simpler side) -> (the variant, the simpler
# path, the variant's side: "lib", or another variant's when the run has
# it; a chain from the library's path down to the plainest loop)
SCALAR = "the scalar loop (IBK_NO_SIMD)"
VARIANTS = {
    ("pkey_match_burst", "variant:scalar"):
        ("the SSE2 kernel (AVX2 builds keep it), 16 keys a step", SCALAR,
         "lib"),
    ("pkey_match_burst", "variant:plain"):
        (SCALAR + " in chunks of 16", "ibk_pkey_match() key by key",
         "variant:scalar"),
    ("rx_ud_burst", "variant:sse2"):
        ("AVX2, eight headers a register",
         "SSE2 (-march=x86-64), four a register", "lib"),
    ("rx_ud_burst", "variant:scalar"):
        ("SSE2, four headers a register", SCALAR, "variant:sse2"),
    ("rx_ud_burst", "variant:plain"):
        (SCALAR + " counting in chunks of 16",
         "the same, counting one by one", "variant:scalar"),
    ("rkey_check_burst", "variant:scalar"):
        ("AVX2, four requests a step",
         SCALAR + "; an SSE2 build runs it too", "lib"),
    ("rkey_check_burst", "variant:singles"):
        ("one read section for the burst", "32 single checks", "lib"),
    ("refill_", "variant:cells"):
        ("machine words, 8 a step", "cell by cell (IBK__CELL_LOOPS)", "lib"),
}
BAR = 0.10


def variant_table(rows):
    """Each fast variant beside the simpler path it replaces, same run."""
    out = ["| case | the variant | the simpler path | variant ns "
           "| simpler ns | gain | 10 % bar |",
           "| --- | --- | --- | ---: | ---: | ---: | --- |"]
    timed = timed_rows(rows)
    for r in timed:
        what = next((v for (case, side), v in VARIANTS.items()
                     if r["base"] == side and r["case"].startswith(case) and
                     (case.endswith("_") or r["case"] == case)), None)
        if not what:
            continue
        fast = next((o["base_ns"] for o in timed
                     if o["case"] == r["case"] and o["base"] == what[2]),
                    r["lib_ns"])
        gain = r["base_ns"] / fast - 1
        out.append(f"| `{r['case']}` | {what[0]} | {what[1]} "
                   f"| {fmt(fast)} | {fmt(r['base_ns'])} "
                   f"| {gain * 100:+.0f} % "
                   f"| {'pays' if gain >= BAR else '**below**'} |")
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
            "Each fast variant beside the simpler path it replaces, same "
            "run: a variant stays only where it is at least 10 % faster "
            "(gain: the simpler path's time over the variant's, less one):",
            ""] + variant_table(rows) + ["",
            "One get of a 65536-entry table while a writer refills all of "
            "it back to back (`read_latency`, in us):", ""] + \
        latency_table(rows) + ["", "Targets (the README's Performance "
                               "section), as the run printed them:", "",
                               "```"] + \
        sorted(set(targets), key=targets.index) + ["```", ""]


def row(rows, case, base=None, stat=None):
    """The row of CASE against BASE (any base if None), or None."""
    for r in rows:
        if r["case"] == case and (base is None or r["base"] == base) and \
                r.get("stat") == stat:
            return r
    return None


def verdict(ok):
    return "met" if ok else "**missed**"


def summary(rows):
    """Issue 21's targets, one line a hot path, from the run's rows."""
    out = ["| hot path | ibkeys | the peers beside it, same run | target "
           "| |", "| --- | --- | --- | --- | --- |"]

    def line(path, lib, peers, target, ok):
        out.append(f"| {path} | {lib} | {peers} | {target} | {verdict(ok)} |")

    def x(r):
        return r["base_ns"] / r["lib_ns"]

    ud, ud_rxe = row(rows, "rx_ud_burst", "per_packet_branchy"), \
        row(rows, "rx_ud_burst", "rxe_check_keys")
    if ud and ud_rxe:
        line("UD burst receive, a packet",
             f"{fmt(ud['lib_ns'])} ns, {fmt(ud['lib_instr_per_op'])} instr",
             f"branchy {fmt(ud['base_ns'])} ns, rxe's checks "
             f"{fmt(ud_rxe['base_ns'])} ns", "<= 0.5 ns, <= 6 instr",
             ud["lib_ns"] <= 0.5 and ud["lib_instr_per_op"] <= 6)
    pp, pb = row(rows, "port_rx_mixed", "rwlock_per_packet"), \
        row(rows, "port_rx_mixed", "rwlock_per_burst")
    if pp and pb:
        line("mixed-QP port burst, a packet",
             f"{fmt(pp['lib_ns'])} ns, {fmt(pp['lib_instr_per_op'])} instr",
             f"rwlock a packet {fmt(pp['base_ns'])} ns ({x(pp):.2f}x), "
             f"a burst {fmt(pb['base_ns'])} ns ({x(pb):.2f}x)",
             ">= 4x / >= 1.5x (<= 40 instr retired: only an AVX2 pass "
             "below the 10 % bar met it)",
             x(pp) >= 4 and x(pb) >= 1.5)
    ck, rte, qs = (row(rows, "cached_read_1t", b) for b in
                   ("ck_sequence", "rte_seqlock", "urcu_qsbr"))
    if ck and rte and qs:
        line("cached get, 1 reader",
             f"{fmt(ck['lib_ns'])} ns, {fmt(ck['lib_instr_per_op'])} instr",
             f"`ck_sequence` {fmt(ck['base_ns'])}, `rte_seqlock` "
             f"{fmt(rte['base_ns'])}, QSBR {fmt(qs['base_ns'])} ns "
             f"({qs['lib_ns'] / qs['base_ns']:.2f}x QSBR's)",
             "faster than `ck_sequence` and `rte_seqlock`, <= 1.3x QSBR, "
             "<= `ck_sequence`'s instr",
             x(ck) > 1 and x(rte) > 1 and
             qs["lib_ns"] <= 1.3 * qs["base_ns"] and
             ck["lib_instr_per_op"] <= ck["base_instr_per_op"])
    g16, g256 = row(rows, "gid_find_16"), row(rows, "gid_find_256")
    if g16 and g256:
        line("GID find, 256 and 16 entries",
             f"{fmt(g256['lib_ns'])} ns, "
             f"{fmt(g256['lib_instr_per_op'])} instr",
             f"`memcmp` scan {fmt(g256['base_ns'])} ns ({x(g256):.1f}x), "
             f"at 16 {x(g16):.2f}x", ">= 15x, >= 2x at 16, <= 90 instr",
             x(g256) >= 15 and x(g16) >= 2 and
             g256["lib_instr_per_op"] <= 90)
    rk, rb = row(rows, "rkey_check"), row(rows, "rkey_check_burst")
    if rk and rb:
        line("R_Key check, 1024 MRs and windows",
             f"{fmt(rk['lib_ns'])} ns, {fmt(rk['lib_instr_per_op'])} instr"
             f"; bursts {fmt(rb['lib_instr_per_op'])} a request",
             f"array check {fmt(rk['base_ns'])} ns ({x(rk):.2f}x; bursts "
             f"{x(rb):.2f}x)", ">= 2x, <= 40 instr in bursts (<= 60 for one "
             "request retired: only a QP prepared once, 6 % faster, met it)",
             x(rk) >= 2 and x(rb) >= 2 and rb["lib_instr_per_op"] <= 40)
    sets = [row(rows, f"set_one_{n}") for n in (16, 128, 4096, 65536)]
    if all(sets):
        instr = [r["lib_instr_per_op"] for r in sets]
        line("set one entry, 16 to 65536 entries",
             f"{fmt(sets[-1]['lib_ns'])} ns, "
             + " / ".join(fmt(i) for i in instr) + " instr",
             f"QSBR's copy {fmt(row(rows, 'set_one_65536', 'urcu_qsbr')['base_ns'])} ns"
             if row(rows, "set_one_65536", "urcu_qsbr") else "",
             "<= 500 instr, flat in the size",
             max(instr) <= 500 and max(instr) <= 1.25 * min(instr))
    rf = row(rows, "refill_65536")
    if rf:
        per = rf["lib_instr_per_op"] / 65536
        line("refill, 65536 entries",
             f"{fmt(rf['lib_ns'] / 1e3)} us, {per:.1f} instr an entry",
             f"`memcpy` under a lock {fmt(rf['base_ns'] / 1e3)} us",
             "<= 30 instr an entry", per <= 30)
    tail = row(rows, "read_latency_p9999", stat="p9999")
    worst = row(rows, "read_latency_max_nocsw", stat="max_nocsw")
    floor = [r for r in rows if r["case"].startswith("read_latency_floor_")
             and r.get("stat") == "max_nocsw"]
    if tail and worst and floor:
        ratio = worst["lib_ns"] / floor[0]["lib_ns"]
        retries = tail.get("lib_max_retries_per_read")
        line("a get under back-to-back refills",
             f"p99.99 {fmt(tail['lib_ns'] / 1e3)} us, worst not switched "
             f"out {ratio:.2f}x the empty region's, at most {retries} retry",
             "QSBR p99.99 " + fmt(row(rows, "read_latency_p9999", "urcu_qsbr",
                                       "p9999")["base_ns"] / 1e3) + " us"
             if row(rows, "read_latency_p9999", "urcu_qsbr", "p9999")
             else "",
             "p99.99 <= 0.5 us, worst <= 3x the empty region's, "
             "<= 1 retry", tail["lib_ns"] <= 500 and ratio <= 3 and
             retries is not None and retries <= 1)
    return [""] + out + [""]


def rewrite(readme, block, begin=BEGIN, end=END):
    """Writes BLOCK between README's BEGIN and END lines, if it has them."""
    with open(readme) as f:
        text = f.read()
    if begin not in text or end not in text:
        print(f"report: {readme} has no {begin} ... {end}: left alone")
        return
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    with open(readme, "w") as f:
        f.write(head + begin + "\n".join(block) + end + tail)
    print(f"report: {readme}'s figures rewritten")


def main(argv):
    if len(argv) not in (2, 4):
        sys.exit(__doc__)
    block = section(argv[1])
    with open(f"{argv[1]}/latest.json") as f:
        table = summary(json.load(f))
    if len(argv) == 2:
        sys.stdout.write(BEGIN + "\n".join(block) + END + "\n\n" +
                         SUM_BEGIN + "\n".join(table) + SUM_END + "\n")
    else:
        rewrite(argv[2], table, SUM_BEGIN, SUM_END)
        rewrite(argv[3], block)


if __name__ == "__main__":
    main(sys.argv)
