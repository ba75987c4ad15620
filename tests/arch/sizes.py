#!/usr/bin/env python3
"""sizes.py - the size limits of the source (STYLE.md 12, issue 23): no .c
file over 500 lines and no function over 100 lines in model/ and calibrate/
(tests/ is not checked).  A file or a function past the limit usually holds
two concerns: name them and split.

A function is counted from the line its definition starts on (the return
type, at the start of a line) to the line of its closing brace, both
included; comments, strings and character constants are skipped when the
braces are matched.  Functions are looked for in .c, .h and .cu files, file
lengths in .c files.

Usage: sizes.py SOURCE_ROOT [--allow PATH[:FUNCTION]]...  Prints one line
per item over a limit ("calibrate/cpu/cpu_backend.c: 532 lines (limit 500)",
"model/job/plan.c:145: pf_plan_check: 123 lines (limit 100)") and exits 1 if
any is not on the allow-list below (or named by --allow); the test of the
test, tests/arch/sizes_planted.sh, plants a long function and a long file in
a copy of the tree and checks that each is named.
"""
import os
import re
import sys

FILE_LIMIT = 500
FUNCTION_LIMIT = 100
ROOTS = ("model", "calibrate")

# Items allowed over a limit for now, each with the reason and its owner (empty:
# nothing is).  A key is "PATH" for a file, "PATH:FUNCTION" for a function.  An
# entry that is no longer over its limit is reported too, so that the list only
# ever shrinks.
ALLOWED = {}

NAME = re.compile(r"([A-Za-z_][A-Za-z_0-9]*)\s*\($")


def blank_out(text):
    """text with comments, strings and character constants replaced by spaces
    (newlines kept, so line numbers stay)."""
    out = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(re.sub(r"[^\n]", " ", text[i:j]))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
            out.append(" " * (j - i))
            i = j
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + re.sub(r"[^\n]", " ", text[i + 1:j - 1]) + (text[j - 1] if j - 1 > i else ""))
            i = j
        else:
            out.append(c)
            i += 1
    return "".join(out)


def functions(text):
    """(name, first line, line count) of every function definition in text:
    a top-level "{" whose declaration has a "(" before any "=" (so that
    initialisers, structs and enums are not counted)."""
    lines = blank_out(text).split("\n")
    found = []
    depth = 0
    head, start = "", None  # the top-level declaration read so far, and its first line
    fn = None               # (name, first line) of the function whose body is open
    in_macro = False
    for k, line in enumerate(lines):
        if in_macro or (depth == 0 and line.lstrip().startswith("#")):
            in_macro = line.rstrip().endswith("\\")
            continue
        for c in line:
            if depth > 0:
                if c == "{":
                    depth += 1
                elif c == "}":
                    depth -= 1
                    if depth == 0:
                        if fn:
                            found.append((fn[0], fn[1] + 1, k - fn[1] + 1))
                        fn, head, start = None, "", None
                continue
            if c == "{":
                depth = 1
                sig = re.sub(r"\s+", " ", head).strip()
                paren = sig.find("(")
                m = NAME.search(sig[:paren + 1]) if paren > 0 and "=" not in sig[:paren] else None
                fn = (m.group(1), start) if m else None
            elif c in ";}":
                head, start = "", None
            else:
                if start is None and not c.isspace():
                    start = k
                head += c
        head += " "
    return found


def main(root, allowed):
    over = {}
    for top in ROOTS:
        for d, dirs, files in os.walk(os.path.join(root, top)):
            dirs[:] = sorted(x for x in dirs if x != "tests")
            for f in sorted(files):
                if not f.endswith((".c", ".h", ".cu")):
                    continue
                path = os.path.join(d, f)
                rel = os.path.relpath(path, root)
                text = open(path, encoding="utf-8", errors="replace").read()
                nlines = text.count("\n") + (0 if text.endswith("\n") or not text else 1)
                if f.endswith(".c") and nlines > FILE_LIMIT:
                    over[rel] = f"{rel}: {nlines} lines (limit {FILE_LIMIT}): split it by concern"
                for name, line, count in functions(text):
                    if count > FUNCTION_LIMIT:
                        over[f"{rel}:{name}"] = (f"{rel}:{line}: {name}: {count} lines (limit {FUNCTION_LIMIT}): "
                                                 "split it into named steps")
    fails = [msg for key, msg in sorted(over.items()) if key not in allowed]
    kept = [f"{msg} [allowed for now: {allowed[key]}]" for key, msg in sorted(over.items()) if key in allowed]
    stale = [f"{key}: on the allow-list of tests/arch/sizes.py but within the limits: remove it"
             for key in sorted(allowed) if key not in over]
    for line in kept + fails + stale:
        print(line)
    print(f"{len(fails) + len(stale)} over the limits ({len(kept)} allowed for now)")
    return 1 if fails or stale else 0


if __name__ == "__main__":
    args = sys.argv[1:]
    extra = {}
    while len(args) >= 3 and args[1] == "--allow":  # --allow KEY: one more entry (sizes_planted.sh)
        extra[args[2]] = "--allow"
        del args[1:3]
    if len(args) != 1:
        sys.exit("usage: sizes.py SOURCE_ROOT [--allow PATH[:FUNCTION]]...")
    sys.exit(main(args[0], {**ALLOWED, **extra}))
