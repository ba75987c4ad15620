#!/usr/bin/env bash
# docs_fp8.sh - the FP8 split of GPT-3 175B on H100 in docs/model.md is what the command above it prints
# (scripts/fp8-split.sh), and a changed number in the page fails the check.
set -u
. "$(dirname "$0")/lib.bash"
"$PF_SRC/scripts/fp8-split.sh" --check "$PREFLIGHT" && ok || bad "docs/model.md FP8 split is stale: run scripts/fp8-split.sh"
mkdir -p "$T/docs" "$T/scripts"
cp "$PF_SRC/scripts/fp8-split.sh" "$T/scripts/"
sed '/<!-- fp8-split begin -->/,/<!-- fp8-split end -->/s/^fp8         in FP8 [0-9]/fp8         in FP8 9/' "$PF_SRC/docs/model.md" > "$T/docs/model.md"
cmp -s "$T/docs/model.md" "$PF_SRC/docs/model.md" && bad "the stale-split fixture did not change the page"
out=$("$T/scripts/fp8-split.sh" --check "$PREFLIGHT" 2>&1); rc=$?
[ $rc -ne 0 ] && grep -q "model.md:[0-9]*: the FP8 split differs" <<<"$out" && ok || bad "a stale split passed the check (rc $rc: $out)"
finish
