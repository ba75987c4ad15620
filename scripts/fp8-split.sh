#!/usr/bin/env bash
# fp8-split.sh - the GPT-3 175B FP8 step on H100 in docs/model.md ("FP8 as it runs"), split into what runs in
# FP8 and what does not: regenerate the output block between the fp8-split markers from the command above it
# (scripts/fp8-split.sh [PREFLIGHT]), or check it (--check [PREFLIGHT]; tests/cli/docs_fp8.sh).
set -eu
ROOT=$(cd "$(dirname "$0")/.." && pwd)
check=0
[ "${1:-}" = "--check" ] && { check=1; shift; }
BIN=${1:-$ROOT/build/preflight}
exec python3 - "$BIN" "$ROOT/docs/model.md" "$check" <<'PY'
import re, subprocess, sys
binary, doc, check = sys.argv[1], sys.argv[2], sys.argv[3] == "1"
text = open(doc).read()
m = re.search(r"(<!-- fp8-split begin -->\n```sh\n(.*?)\n```\n)(```text\n)(.*?)(```\n<!-- fp8-split end -->)", text, re.S)
if not m:
    sys.exit(f"{doc}: no fp8-split block (<!-- fp8-split begin --> ... <!-- fp8-split end -->)")
cmds = [c for c in m.group(2).split("\n") if c.startswith("preflight ")]
keep = re.compile(r"^(plan|iteration|breakdown|compute |fp8 |memory/GPU)")
out = ""
for c in cmds:
    r = subprocess.run([binary] + c.split()[1:], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"{doc}: `{c}` exited {r.returncode}: {r.stderr.strip()}")
    out += "".join(l + "\n" for l in r.stdout.splitlines() if keep.match(l))
if check:
    if out != m.group(4):
        line = text[: m.start(4)].count("\n") + 1
        sys.exit(f"{doc}:{line}: the FP8 split differs from what the command prints now: run scripts/fp8-split.sh")
    sys.exit(0)
open(doc, "w").write(text[: m.start(4)] + out + text[m.end(4):])
PY
