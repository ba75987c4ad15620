#!/usr/bin/env python3
"""run.py - the bad-input corpus: every case is a command that must fail (or
warn) with a given exit status and a message that says why.

cases.txt holds blocks separated by blank lines:

    case:   a-unique-name
    setup:  bash run first (may repeat; its failure fails the case)
    run:    bash whose exit status and stderr are checked (may repeat: one script)
    exit:   the expected exit status
    stderr: a substring that must appear in stderr (may repeat: all must)
    stdout: any        (default: stdout must be empty when the exit status is
                        not 0 -- a failure never looks like a result)
    check:  bash that must succeed afterwards (e.g. the old file is unchanged)
    root:   only | never   (cases that need, or cannot run as, uid 0)

Variables in the scripts: $P the preflight binary, $S the source tree, $M the machines folder, $B
the folder of the cases file, $F tests/fixtures, $T a fresh temporary folder per case.
Usage: run.py PREFLIGHT SRC_DIR [NAME_FILTER] [--cases DIR]   (DIR/cases.txt; default
tests/bad-input; tests/robustness holds issue 30's table and runs through this runner)
"""
import concurrent.futures
import os
import subprocess
import sys
import tempfile


def parse(path):
    cases, cur = [], None
    with open(path, encoding="utf-8") as f:
        for lineno, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line.strip():
                cur = None
                continue
            if line.startswith("#"):
                continue
            key, sep, val = line.partition(":")
            if not sep:
                sys.exit(f"{path}:{lineno}: expected 'key: value'")
            key, val = key.strip(), val.strip()
            if key == "case":
                cur = {"name": val, "line": lineno, "setup": [], "run": [], "stderr": [], "check": []}
                cases.append(cur)
                continue
            if cur is None:
                sys.exit(f"{path}:{lineno}: '{key}' outside a case (start with 'case: NAME')")
            if key in ("setup", "run", "stderr", "check"):
                cur[key].append(val)
            elif key in ("exit", "stdout", "root"):
                cur[key] = val
            else:
                sys.exit(f"{path}:{lineno}: unknown key '{key}'")
    names = [c["name"] for c in cases]
    dup = {n for n in names if names.count(n) > 1}
    if dup:
        sys.exit(f"{path}: duplicate case names: {sorted(dup)}")
    for c in cases:
        if "exit" not in c or not c["run"]:
            sys.exit(f"{path}:{c['line']}: case {c['name']} needs 'run' and 'exit'")
        if not c["stderr"]:
            sys.exit(f"{path}:{c['line']}: case {c['name']} needs at least one 'stderr' substring")
    return cases


def main():
    args = sys.argv[1:]
    here = None
    if "--cases" in args:
        i = args.index("--cases")
        here = os.path.abspath(args[i + 1])
        del args[i:i + 2]
    binary, src = os.path.abspath(args[0]), os.path.abspath(args[1])
    only = args[2] if len(args) > 2 else ""
    here = here or os.path.join(src, "tests", "bad-input")
    cases = parse(os.path.join(here, "cases.txt"))
    root = os.geteuid() == 0
    todo, skipped = [], []
    for c in cases:
        if only and only not in c["name"]:
            continue
        if (c.get("root") == "only" and not root) or (c.get("root") == "never" and root):
            skipped.append(c["name"])
        else:
            todo.append(c)

    def run_case(c):
        with tempfile.TemporaryDirectory(prefix="pf-bad-") as t:
            env = dict(os.environ, P=binary, M=os.path.join(src, "machines"), B=here, S=src,
                       F=os.path.join(src, "tests", "fixtures"), T=t, PREFLIGHT_PROGRESS="0")
            # a device copied into $T finds its measured GEMM table as the shipped ones do (tables/ beside it)
            os.symlink(os.path.join(src, "machines", "devices", "tables"), os.path.join(t, "tables"))
            def sh(script):
                try:
                    return subprocess.run(["bash", "-c", script], env=env, cwd=t, capture_output=True, text=True,
                                          timeout=120)
                except subprocess.TimeoutExpired:
                    return subprocess.CompletedProcess(script, -1, "", "(timed out after 120 s)")
            why = []
            for s in c["setup"]:
                r = sh(s)
                if r.returncode != 0:
                    why.append(f"setup failed ({r.returncode}): {s}\n    {r.stderr.strip()[:300]}")
                    break
            if not why:
                r = sh("\n".join(c["run"]))
                if str(r.returncode) != c["exit"]:
                    why.append(f"exit {r.returncode}, expected {c['exit']}")
                for sub in c["stderr"]:
                    if sub not in r.stderr:
                        why.append(f"stderr lacks: {sub}")
                if c.get("stdout") != "any" and c["exit"] != "0" and r.stdout:
                    why.append(f"stdout not empty on failure: {r.stdout[:120]!r}")
                if why:
                    why.append("stderr was: " + r.stderr.strip()[:600])
                for s in c["check"]:
                    k = sh(s)
                    if k.returncode != 0:
                        why.append(f"check failed: {s} {k.stderr.strip()[:200]}")
            return (c["name"], c["line"], why)

    # two at a time: the cases are independent (a folder each), and mostly process start-up
    with concurrent.futures.ThreadPoolExecutor(max_workers=2) as pool:
        results = list(pool.map(run_case, todo))
    failed = [r for r in results if r[2]]
    ran = len(todo)
    for name, line, why in failed:
        print(f"FAIL {name} (cases.txt:{line})", file=sys.stderr)
        for w in why:
            print("  " + w, file=sys.stderr)
    print(f"{ran - len(failed)} passed, {len(failed)} failed, {len(skipped)} skipped"
          + (f" ({', '.join(skipped)}: need {'no ' if root else ''}root)" if skipped else ""))
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
