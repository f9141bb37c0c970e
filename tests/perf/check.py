#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""The hot paths' instructions per operation against their budgets.

  check.py BUDGETS PROC [JOBS]
      when BUDGETS' "@compiler ID VERSION" line is not the compiler
      meson built PROC with (its build directory's meson-info), prints
      one line saying so and "0 passed, 0 failed": another compiler
      emits other code, and the budgets are the named one's. Else
      counts, under callgrind (bench/instructions.py), the instructions
      per operation of every case and side that BUDGETS names, one
      valgrind per case, JOBS (default 2) at a time, with PROC
      (ibk-bench-proc), and prints one line per budget:
          ok|FAIL CASE SIDE FIGURE <=|> BUDGET  # what it is
      then checks that no budget is higher than in the previous commit's
      BUDGETS (git show HEAD~1:..., and HEAD's when the file differs from
      it), nor gone: a budget may only go down, unless HEAD's commit
      message names it in a "Budget-raised: LABEL: REASON" or
      "Budget-retired: LABEL: REASON" line (LABEL: the budget's line
      less its number). Last line: "N passed, N failed". Exits 1 if any
      failed.

BUDGETS, one budget a line, '#' to the end of a line a comment:
    CASE SIDE MAX             at most MAX instructions per operation
    CASE SIDE MAX/entry       at most MAX per table entry: the count of
                              an operation divided by the case's N (the
                              number its name ends in, refill_65536: 65536)
    CASE SIDE <= peer NAME    at most the count of the case's peer (or
                              baseline) NAME, counted in the same process
SIDE is lib, base, or a peer's name as ibk-bench-proc takes it.

Beside them, what the code costs in size, held the same way:
    CASE size FUNCTION MAX    at most MAX bytes of code (text, `size`) in an
                              object holding FUNCTION alone, with every
                              helper it pulls in, built as the bench builds
                              (-O2 -march=x86-64-v3, the budgets' compiler):
                              the public function CASE times
    section HEADER TITLE MAX  at most MAX lines of code (comments and blank
                              lines left out) in HEADER's section whose
                              banner's first line starts with TITLE
"""
import json
import os
import re
import subprocess
import sys
import tempfile

sys.dont_write_bytecode = True     # no __pycache__ in the source tree
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "bench"))
from instructions import count_cases  # noqa: E402 (after the path)

# Operations counted per case: few, so that the check stays short under
# callgrind, enough that the per-operation figure settles (whole bursts of
# 32). A refill rewrites the whole table: a few do.
OPS = 4096
OPS_BY_PREFIX = {"refill_": 4, "set_one_": 256}


def compiler_of_budgets(text):
    """What BUDGETS' "@compiler TEXT" line names, or None."""
    m = re.search(r"^@compiler\s+(.*?)\s*$", text, re.M)
    return m.group(1) if m else None


def compiler_path(proc):
    """The C compiler of the meson build holding proc."""
    build = os.path.dirname(os.path.dirname(os.path.abspath(proc)))
    with open(os.path.join(build, "compile_commands.json")) as f:
        return json.load(f)[0]["command"].split()[0]


def compiler_of_build(proc):
    """The compiler of the build holding proc, as its --version's first
    line names it, less the program's name: "(Debian 12.2.0-14) 12.2.0"."""
    first = subprocess.run([compiler_path(proc), "--version"],
                           capture_output=True,
                           text=True).stdout.partition("\n")[0]
    return first.partition(" ")[2]


def function_bytes(cc, root, fn, tmp):
    """Text bytes of an object that takes @fn's address, so that the
    compiler emits it and every helper it calls."""
    src, obj = os.path.join(tmp, fn + ".c"), os.path.join(tmp, fn + ".o")
    with open(src, "w") as f:
        f.write('#include "ib_tables.h"\n'
                "typedef void (*ibk_any_fn)(void);\n"
                f"ibk_any_fn ibk_size_probe = (ibk_any_fn){fn};\n")
    subprocess.run([cc, "-O2", "-march=x86-64-v3", "-std=c11", "-I", root,
                    "-c", src, "-o", obj], check=True)
    out = subprocess.run(["size", obj], capture_output=True, text=True,
                         check=True).stdout.splitlines()
    return int(out[1].split()[0])


def section_lines(root, header, title):
    """Lines of code (not blank, not comment) of @header's section whose
    banner title starts with @title, from its banner to the next one (or
    the end); None if no such one. Documentation is not size."""
    with open(os.path.join(root, header), encoding="utf-8") as f:
        lines = f.read().split("\n")
    banners = [i for i in range(len(lines) - 1)
               if lines[i].startswith("/* -----")]
    for k, i in enumerate(banners):
        if lines[i + 1].lstrip(" *").startswith(title):
            end = banners[k + 1] if k + 1 < len(banners) else len(lines)
            code = re.sub(r"/\*.*?\*/", "", "\n".join(lines[i:end]),
                          flags=re.S)
            code = re.sub(r"//[^\n]*", "", code)
            return sum(1 for line in code.split("\n") if line.strip())
    return None


def parse(text, where):
    """{key: (limit, comment)} of a budget file's text: key (case, side,
    'max'), (case, side, 'entry') or (case, side, 'peer', name); limit a
    number, or None for a relative budget."""
    budgets = {}
    for number, line in enumerate(text.splitlines(), 1):
        body, _, comment = line.partition("#")
        words = body.split()
        if not words or words[0] == "@compiler":
            continue
        if words[0] == "section" and len(words) >= 4 and \
                words[-1].isdigit():
            key = ("section", words[1], " ".join(words[2:-1]))
            limit = float(words[-1])
        elif len(words) == 4 and words[1] == "size" and words[3].isdigit():
            key, limit = (words[0], "size", words[2]), float(words[3])
        elif len(words) == 5 and words[2:4] == ["<=", "peer"]:
            key, limit = (words[0], words[1], "peer", words[4]), None
        elif len(words) == 3 and re.fullmatch(r"\d+(\.\d+)?(/entry)?",
                                              words[2]):
            per_entry = words[2].endswith("/entry")
            key = (words[0], words[1], "entry" if per_entry else "max")
            limit = float(words[2].split("/")[0])
        else:
            sys.exit(f"{where}:{number}: not a budget: {line.strip()}")
        if key in budgets:
            sys.exit(f"{where}:{number}: a second budget for "
                     f"{' '.join(key[:2])}")
        budgets[key] = (limit, comment.strip())
    return budgets


def entries(case):
    """The table size a case's name ends in (refill_65536: 65536)."""
    m = re.search(r"_(\d+)$", case)
    if not m:
        sys.exit(f"check: a /entry budget for {case}, whose name ends in "
                 f"no table size")
    return int(m.group(1))


def is_size(key):
    """A budget of code bytes or section lines, not of instructions."""
    return key[0] == "section" or key[1] == "size"


def check_sizes(budgets, cc, root):
    """Prints a line per size budget; returns (passed, failed)."""
    passed = failed = 0
    with tempfile.TemporaryDirectory() as tmp:
        for key, (limit, comment) in budgets.items():
            if not is_size(key):
                continue
            note = f"  # {comment}" if comment else ""
            if key[0] == "section":
                figure = section_lines(root, key[1], key[2])
                what, unit = f"section {key[1]} \"{key[2]}\"", "lines"
            else:
                figure = function_bytes(cc, root, key[2], tmp)
                what, unit = f"{key[0]} size {key[2]}", "bytes"
            ok = figure is not None and figure <= limit
            print(f"{'ok  ' if ok else 'FAIL'} {what} {figure} {unit} "
                  f"{'<=' if ok else '>'} {limit:g}{note}")
            passed += ok
            failed += not ok
    return passed, failed


def runs_of(budgets):
    """{case: {side: operations}} counting every side the budgets name."""
    runs = {}
    for key in budgets:
        if is_size(key):
            continue
        case = key[0]
        ops = next((n for prefix, n in OPS_BY_PREFIX.items()
                    if case.startswith(prefix)), OPS)
        sides = runs.setdefault(case, {})
        for side in [key[1]] + ([key[3]] if key[2] == "peer" else []):
            sides[side] = ops
    return runs


def counts_of(proc, runs, jobs):
    """{(case, side): instructions per operation}, and {case: why} for the
    cases left out: those this build lacks, or lacks a side of (no peer
    library), which ibk-bench-proc refuses."""
    missing = {}
    for case, sides in runs.items():
        for side in ["lib"] + [s for s in sides if s != "lib"]:
            if subprocess.run([proc, case, side, "0"],
                              stdout=subprocess.DEVNULL,
                              stderr=subprocess.DEVNULL).returncode:
                missing[case] = (
                    f"this build has no single-thread case {case}"
                    if side == "lib" else f"{case} has no side {side} in "
                    f"this build (its library not installed?)")
                break
    return count_cases(proc, {case: sides for case, sides in runs.items()
                              if case not in missing}, jobs), missing


def check_budgets(budgets, counts, missing):
    """Prints a line per budget; returns (passed, failed)."""
    passed = failed = 0
    for key, (limit, comment) in budgets.items():
        if is_size(key):
            continue
        case, side = key[:2]
        note = f"  # {comment}" if comment else ""
        if case in missing:
            print(f"FAIL {case} {side}: {missing[case]}{note}")
            failed += 1
            continue
        figure = counts[(case, side)]
        if key[2] == "peer":
            limit = counts[(case, key[3])]
            shown = f"{limit:.2f} ({key[3]})"
        elif key[2] == "entry":
            figure /= entries(case)
            shown = f"{limit:g}/entry"
        else:
            shown = f"{limit:g}"
        ok = figure <= limit
        unit = "/entry" if key[2] == "entry" else ""
        print(f"{'ok  ' if ok else 'FAIL'} {case} {side} {figure:.2f}{unit} "
              f"{'<=' if ok else '>'} {shown}{note}")
        passed += ok
        failed += not ok
    return passed, failed


def git_text(root, rev, path):
    """The file at rev, or None where git has none."""
    res = subprocess.run(["git", "-C", root, "show", f"{rev}:{path}"],
                         capture_output=True, text=True)
    return res.stdout if res.returncode == 0 else None


def label(key):
    """A budget's line less its number: the name a commit trailer uses."""
    if key[0] == "section":
        return " ".join(key)
    if key[2] in ("max", "entry"):
        return " ".join(key[:2])
    if key[2] == "peer":
        return f"{key[0]} {key[1]} <= peer {key[3]}"
    return " ".join(key)


def raised(old, new):
    """{label: words} of the budgets of old that new raises or drops."""
    out = {}
    for key, (limit, _) in old.items():
        if key not in new:
            out[label(key)] = (f"the budget{'' if limit is None else f' {limit:g}'}"
                               " is gone")
        elif limit is not None and new[key][0] > limit:
            out[label(key)] = f"{new[key][0]:g} above {limit:g}"
    return out


def trailers(root):
    """What follows "Budget-raised:" or "Budget-retired:" on each of HEAD's
    commit message lines that starts so: "LABEL: REASON" (a label may hold
    ": " itself, as a section's title may)."""
    msg = subprocess.run(["git", "-C", root, "log", "-1", "--format=%B"],
                         capture_output=True, text=True).stdout
    return [m.group(1) for m in re.finditer(
        r"^Budget-(?:raised|retired):\s*(\S.*)$", msg, re.M)]


def reason_for(allowed, name):
    """The reason a trailer of @allowed gives for the budget @name, or
    None."""
    return next((t[len(name) + 1:].strip() for t in allowed
                 if t.startswith(name + ":") and t[len(name) + 1:].strip()),
                None)


def check_only_down(path, budgets):
    """1 check: no budget higher than in HEAD~1's file, nor in HEAD's if
    the file differs from HEAD's, nor gone; except that the commit HEAD
    may raise or retire a budget of HEAD~1's by naming it, with its
    reason, in a trailer of its message:
        Budget-raised: section ib_keys.h Errors: what the lines buy
        Budget-retired: rkey_check lib: why the target goes
    (the label is the budget's line without its number). Returns
    (passed, failed)."""
    root = os.path.dirname(os.path.abspath(path))
    top = subprocess.run(["git", "-C", root, "rev-parse", "--show-toplevel"],
                         capture_output=True, text=True)
    if top.returncode:
        print("# budgets only go down: not checked outside a git checkout")
        return 0, 0
    rel = os.path.relpath(os.path.abspath(path), top.stdout.strip())
    allowed = trailers(root)
    problems, against = [], []
    for rev in ("HEAD~1", "HEAD"):
        text = git_text(root, rev, rel)
        if text is None:
            print(f"# budgets only go down: no {rel} at {rev}")
            continue
        against.append(rev)
        for name, words in raised(parse(text, f"{rev}:{rel}"),
                                  budgets).items():
            why = reason_for(allowed, name)
            if rev == "HEAD~1" and why:
                print(f"ok   budget {name}: {words}, as HEAD's message "
                      f"says: {why}")
            else:
                problems.append(f"{name}: {words} (against {rev})")
    for p in problems:
        print(f"FAIL budget raised: {p}")
    if against and not problems:
        print(f"ok   no budget raised or gone since {', '.join(against)}"
              f"{' but as HEAD says' if allowed else ''}")
    return int(bool(against) and not problems), int(bool(problems))


def main(argv):
    if len(argv) not in (3, 4):
        sys.exit(__doc__)
    path, proc = argv[1], argv[2]
    jobs = int(argv[3]) if len(argv) == 4 else 2
    with open(path) as f:
        text = f.read()
    budgets = parse(text, path)
    theirs, ours = compiler_of_budgets(text), compiler_of_build(proc)
    if theirs != ours:
        print(f"# perf: skipped, {os.path.basename(path)} holds {theirs}'s "
              f"code and this build's compiler is {ours}")
        print("0 passed, 0 failed")
        return 0
    counts, missing = counts_of(proc, runs_of(budgets), jobs)
    passed, failed = check_budgets(budgets, counts, missing)
    p, f = check_sizes(budgets, compiler_path(proc),
                       os.path.dirname(os.path.dirname(os.path.abspath(path))))
    passed, failed = passed + p, failed + f
    p, f = check_only_down(path, budgets)
    passed, failed = passed + p, failed + f
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
