#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Every struct, enum and union tag of the headers against every function
and typedef name: no name may be both.

  names.py HEADER...

C keeps tags apart from ordinary identifiers, C++ does not: a tag that is
also a function's name (struct ibk_mw_bind beside ibk_mw_bind()) makes a
C++ user write `struct` before every use, and tools confuse the two. The
names come from the headers' text with comments, strings and preprocessor
lines removed, so both sides of every #if count. Prints TAP: one line per
header set, naming each name that is both.
"""
import re
import sys

TOKEN = re.compile(r"[A-Za-z_]\w*|[0-9][\w.]*|\"\"|''|\S")
# Words that take parentheses at file scope without naming a function.
NOT_FUNCTIONS = {
    "__attribute__", "__declspec", "__typeof__", "typeof", "sizeof",
    "alignas", "_Alignas", "_Alignof", "alignof", "_Static_assert",
    "static_assert", "_Atomic", "__asm__", "asm", "decltype",
}
# A few header macros expand to a static_assert: their calls are not
# function declarations either.
MACRO_CALL = re.compile(r"^[A-Z_][A-Z0-9_]*$")


def strip(text):
    """The header's C text: comments, strings and directives blanked."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    text = re.sub(r"'(?:\\.|[^'\\\n])*'", "''", text)
    text = re.sub(r"^[ \t]*#(?:[^\n]*\\\n)*[^\n]*", " ", text, flags=re.M)
    return text


def names(text):
    """(tags, functions, typedefs) declared in the C text."""
    tokens = TOKEN.findall(strip(text))
    tags = {tokens[i + 1] for i, t in enumerate(tokens[:-1])
            if t in ("struct", "enum", "union") and
            re.match(r"[A-Za-z_]", tokens[i + 1])}
    functions, typedefs = set(), set()
    opened = []         # per open brace: "scope" (extern "C"), "body", "aggregate"
    statement = []      # the file-scope tokens of the current declaration
    for tok in tokens:
        top = all(kind == "scope" for kind in opened)
        if tok == "{":
            if not top:
                opened.append("inner")
            elif statement == ["extern", '""']:
                opened.append("scope")
                statement = []
            elif function_name(statement, functions):
                opened.append("body")
            else:
                opened.append("aggregate")
        elif tok == "}":
            if opened.pop() == "body":
                statement = []          # a function body ends its definition
        elif not top:
            continue
        elif tok == ";":
            if statement[:1] == ["typedef"]:
                typedef_name(statement, typedefs)
            else:
                function_name(statement, functions)
            statement = []
        else:
            statement.append(tok)
    return tags, functions, typedefs


def function_name(statement, functions):
    """The first identifier called at the statement's top level."""
    depth = 0
    for i, tok in enumerate(statement[:-1]):
        if tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
        elif depth == 0 and statement[i + 1] == "(" and \
                re.match(r"[A-Za-z_]", tok) and tok not in NOT_FUNCTIONS and \
                not MACRO_CALL.match(tok):
            functions.add(tok)
            return True
    return False


def typedef_name(statement, typedefs):
    """The name a typedef declares: `(*name)` for a function pointer, else
    the last identifier at the top level before any array bound."""
    for i, tok in enumerate(statement[:-2]):
        if tok == "(" and statement[i + 1] == "*":
            typedefs.add(statement[i + 2])
            return
    depth, last = 0, None
    for tok in statement:
        if tok in ("(", "["):
            depth += 1
        elif tok in (")", "]"):
            depth -= 1
        elif depth == 0 and re.match(r"[A-Za-z_]", tok):
            last = tok
    if last:
        typedefs.add(last)


def main(headers):
    tags, ordinary = set(), {}
    for h in headers:
        with open(h, encoding="utf-8") as f:
            t, fns, tds = names(f.read())
        tags |= t
        for n in fns:
            ordinary[n] = "function"
        for n in tds:
            ordinary.setdefault(n, "typedef")
    print("1..2")
    ok = bool(tags) and len(ordinary) > 100
    print(f"{'ok' if ok else 'not ok'} 1 - {len(tags)} tags, "
          f"{len(ordinary)} functions and typedefs found")
    both = sorted(n for n in tags if n in ordinary)
    for n in both:
        print(f"# tag and {ordinary[n]}: {n}")
    print(f"{'not ok' if both else 'ok'} 2 - no tag is also a function's or "
          f"a typedef's name ({len(both)} are)")
    return 1 if both or not ok else 0


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    sys.exit(main(sys.argv[1:]))
