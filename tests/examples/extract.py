#!/usr/bin/env python3
"""extract.py PREFLIGHT SRC [--help-only] - every example shown to users, one per line:
   ORIGIN<TAB>MARK<TAB>COMMAND

Examples are (1) the lines after "Examples:" in `preflight CMD --help` (and after
"examples:" in `preflight --help`) that start with "preflight ", and (2) the lines
in fenced code blocks of README.md and docs/*.md that start with "preflight ",
"build/preflight " or "$ " followed by one of those -- except blocks whose info
string is "synopsis" (usage summaries with placeholders), and output lines of the form
"preflight CMD: ..." (diagnostics a pasted run printed).  A trailing backslash
continues a line.  A trailing comment is dropped from the command; MARK is "gpu"
when it says "needs a GPU", "user" when it says "your " (the example needs the
user's own file and runs against a fixture of that name), else "-".
"""
import glob, os, re, subprocess, sys

binary, src = sys.argv[1], sys.argv[2]
COMMANDS = ["machines", "models", "predict", "sweep", "tune", "compare", "plan", "calibrate", "validate", "collective",
            "merge"]


def joined(lines):
    out, cur = [], ""
    for l in lines:
        if l.rstrip().endswith("\\"):
            cur += l.rstrip()[:-1].rstrip() + " "
            continue
        out.append(cur + l.strip() if cur else l)
        cur = ""
    if cur:
        out.append(cur)
    return out


def split_comment(line):
    """Command and trailing comment (a '#' after whitespace, outside quotes)."""
    q = None
    for i, ch in enumerate(line):
        if q:
            if ch == q:
                q = None
        elif ch in "'\"":
            q = ch
        elif ch == "#" and i > 0 and line[i - 1] in " \t":
            return line[:i].rstrip(), line[i + 1:].strip()
    return line.rstrip(), ""


def mark(comment):
    c = comment.lower()
    if "needs a gpu" in c:
        return "gpu"
    if "your " in c:
        return "user"
    return "-"


def emit(origin, line):
    line = line.strip()
    if line.startswith("$ "):
        line = line[2:]
    for prefix in ("build/preflight ", "preflight "):
        if line.startswith(prefix):
            if re.match(r"[a-z][a-z-]*: ", line[len(prefix):]):
                return  # a diagnostic the tour printed ("preflight sweep: warning: ..."), not a command
            cmd, comment = split_comment(line[len(prefix):])
            print(f"{origin}\t{mark(comment)}\tpreflight {cmd}")
            return


def from_help():
    for cmd in [None] + COMMANDS:
        args = [binary, "--help"] if cmd is None else [binary, cmd, "--help"]
        text = subprocess.run(args, capture_output=True, text=True, check=True).stdout
        lines = text.splitlines()
        start = next((i for i, l in enumerate(lines) if l.strip().lower() == "examples:"), None)
        if start is None:
            sys.exit(f"`{' '.join(args[1:])}` has no Examples: section")
        n = 0
        for l in joined(lines[start + 1:]):
            if l.strip().startswith("preflight "):
                emit(f"preflight {cmd or ''} --help".replace("  ", " "), l)
                n += 1
        if n == 0:
            sys.exit(f"`{' '.join(args[1:])}` shows no example")


def from_markdown(path):
    rel = os.path.relpath(path, src)
    inside, skip, block = False, False, []
    for no, l in enumerate(open(path, encoding="utf-8"), 1):
        if l.startswith("```"):
            if not inside:
                inside, skip, block, start = True, l[3:].strip() == "synopsis", [], no
            else:
                inside = False
                if not skip:
                    for j in joined(block):
                        emit(f"{rel}:{start}", j)
            continue
        if inside:
            block.append(l.rstrip("\n"))


from_help()
if sys.argv[3:] != ["--help-only"]:   # --help-only: the --help examples (tests/cli/install.sh, installed binary)
    for p in [os.path.join(src, "README.md")] + sorted(glob.glob(os.path.join(src, "docs", "*.md"))):
        from_markdown(p)
