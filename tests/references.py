#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every reference a reader may follow leads somewhere in the repository.

  references.py ROOT

Reads the files git tracks under ROOT (C and C++ sources and headers,
scripts, meson files, Markdown; not CHANGES, whose business is names that
are gone) and prints TAP, one line per kind of reference, naming each that
leads nowhere:

  functions  a name written as a call, ibk_NAME() or ibk__NAME(), in a
             comment or a document, must be defined or called somewhere in
             the repository's C code (comments and strings left out): a
             renamed or removed helper leaves no comment behind;
  files      a path into the repository (tests/..., examples/..., bench/...,
             cross/..., or a bare NAME.md) must exist, relative to ROOT or
             to the file naming it, or name what meson builds (a program,
             or its source without .c); a capitalised part (NAME, TARGET)
             makes it a pattern, not checked;
  documents  no reference to a document outside the repository (the design
             brief and the fact sheets the project started from, by their
             names): cite the IBA section, the kernel or rdma-core
             function, the man page, or a file of the repository instead.
"""
import os
import re
import subprocess
import sys

C_EXT = (".c", ".h", ".cpp")
TEXT_EXT = C_EXT + (".py", ".sh", ".md", ".build", ".txt", ".ini", ".in",
                    ".cmake", ".patch")
CALL = re.compile(r"\b(ibk__?[a-z0-9_]+)\(\)")
IDENT = re.compile(r"\bibk__?[a-z0-9_]+\b")
PATH = re.compile(r"(?<![\w./-])((?:tests|examples|bench|cross)/[\w./-]*\w"
                  r"|[\w-]+\.md)\b")
OUTSIDE = re.compile(r"\bFACTS-[\w-]+\.md\b|\bDESIGN(?:\.md)?\b(?=[:.,)]|\s+\()")


def tracked(root):
    """The text files git tracks, relative to root, CHANGES left out; None
    outside a git checkout (a release tarball) or without git."""
    try:
        res = subprocess.run(["git", "-C", root, "ls-files"],
                             capture_output=True, text=True)
    except OSError:
        return None
    if res.returncode or not res.stdout:
        return None
    out = res.stdout.split("\n")
    files = []
    for f in out:
        if not f or f == "CHANGES" or "/corpus/" in f:
            continue
        base = os.path.basename(f)
        if f.endswith(TEXT_EXT) or base in ("run", "build", "sizes") or \
                "." not in base:
            path = os.path.join(root, f)
            if os.path.isfile(path) and not os.path.islink(path):
                files.append(f)
    return files


def code_of(text):
    """C text with comments and strings blanked."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    return re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)


def read(root, f):
    try:
        with open(os.path.join(root, f), encoding="utf-8") as fh:
            return fh.read()
    except UnicodeDecodeError:
        return ""


def main(argv):
    if len(argv) != 2:
        sys.exit(__doc__)
    root = argv[1]
    files = tracked(root)
    if files is None:
        print("1..0 # SKIP not a git checkout, or no git: no list of files")
        return 0
    texts = {f: read(root, f) for f in files}
    defined = set()
    for f, text in texts.items():
        if f.endswith(C_EXT):
            defined |= set(IDENT.findall(code_of(text)))

    targets = set()     # what meson builds: a path may name its output
    for f, text in texts.items():
        if os.path.basename(f) == "meson.build":
            targets |= set(re.findall(r"executable\(\s*'([^']+)'", text))

    def leads_somewhere(f, ref):
        """ref exists, names a meson target or its source, or is a pattern
        (a path with a capitalised placeholder, tests/fuzz/NAME.c)."""
        if any(part.isupper() for part in re.split(r"[/.]", ref)):
            return True
        here = os.path.join(root, os.path.dirname(f))
        for base in (root, here):
            path = os.path.join(base, ref)
            if any(os.path.exists(path + ext) for ext in ("", ".c", ".cpp")):
                return True
        return os.path.basename(ref) in targets or \
            (ref.endswith(".md") and "/" not in ref and
             any(os.path.basename(g) == ref for g in files))

    dangling = {"functions": [], "files": [], "documents": []}
    for f, text in sorted(texts.items()):
        for n, line in enumerate(text.split("\n"), 1):
            where = f"{f}:{n}"
            for name in CALL.findall(line):
                if name not in defined:
                    dangling["functions"].append(f"{where}: {name}()")
            for ref in PATH.findall(line):
                ref = ref.rstrip(".")
                if not OUTSIDE.match(ref) and not leads_somewhere(f, ref):
                    dangling["files"].append(f"{where}: {ref}")
            for ref in OUTSIDE.findall(line):
                dangling["documents"].append(f"{where}: {ref}")

    failed = 0
    for i, (kind, refs) in enumerate(dangling.items(), 1):
        ok = not refs
        failed += not ok
        print(f"{'ok' if ok else 'not ok'} {i} - {kind}: every reference "
              f"leads into the repository ({len(refs)} do not)")
        for r in refs[:40]:
            print(f"# {r}")
    print(f"1..{len(dangling)}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
