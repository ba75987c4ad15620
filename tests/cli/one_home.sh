#!/usr/bin/env bash
# one_home.sh - one home per concern (issue 13 acceptance, issue 9 item 8): in the C, C++
# and CUDA sources of model/ and calibrate/ (comments and strings removed), rename() is
# called in one file (model/core/file.c), fork() in one (model/core/workers.c), and the
# command-line prologue lives in model/cli/options.c: every sub-command but calibrate
# starts with pf_cli_begin() and none parses options, prints help, decides the format or
# checks an output path itself.  (calibrate shares calibrate/harness/output.c's prologue
# with its GPU back-end executables, which are separate programs.)
exec python3 - "$PF_SRC" <<'PY'
import os, re, sys
root = sys.argv[1]

def code(path):
    s = open(path, encoding="utf-8", errors="replace").read()
    s = re.sub(r"/\*.*?\*/", " ", s, flags=re.S)             # block comments
    s = re.sub(r"//[^\n]*", " ", s)                          # line comments
    s = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', s)              # string literals
    s = re.sub(r"'(?:\\.|[^'\\\n])'", "''", s)                # char literals
    return s

files = {}
for top in ("model", "calibrate"):
    for d, _, names in os.walk(os.path.join(root, top)):
        for n in names:
            if n.endswith((".c", ".h", ".cu", ".cpp")):
                p = os.path.join(d, n)
                files[os.path.relpath(p, root)] = code(p)

def callers(pattern):
    rx = re.compile(pattern)
    return sorted(f for f, s in files.items() if rx.search(s))

fails = []
def expect(what, got, want):
    if got != sorted(want):
        fails.append(f"{what}: in {got}, expected only in {sorted(want)}")

# ccl_main.c publishes NCCL's unique id to its peer ranks through a rendezvous file (not output)
expect("rename()", callers(r"(?<![\w.>])rename\s*\("), ["calibrate/ccl/ccl_main.c", "model/core/file.c"])
expect("fork()", callers(r"(?<![\w.>])fork\s*\("), ["model/core/workers.c"])
for fn in ("pf_opts_parse", "pf_opts_help", "pf_opts_format", "pf_opts_load_scenario"):
    got = [f for f in callers(r"\b%s\s*\(" % fn) if not f.endswith("options.h")]
    expect(fn + "()", got, ["model/cli/options.c"])
expect("pf_output_check()", [f for f in callers(r"\bpf_output_check\s*\(") if not f.endswith("file.h")],
       ["model/cli/options.c", "model/core/file.c", "calibrate/harness/output.c"])
cmds = sorted(f for f in files if re.match(r"model/cli/cmd_\w+\.c$", f) and not f.endswith("cmd_calibrate.c"))
if len(cmds) < 8:
    fails.append(f"only {len(cmds)} sub-commands found: {cmds}")
for f in cmds:
    if not re.search(r"\bpf_cli_begin\s*\(", files[f]):
        fails.append(f"{f}: does not start with pf_cli_begin()")
for f in fails:
    print("FAIL:", f, file=sys.stderr)
print(f"{len(files)} source files checked; {len(fails)} failed")
sys.exit(1 if fails else 0)
PY
