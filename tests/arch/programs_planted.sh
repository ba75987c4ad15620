#!/usr/bin/env bash
# programs_planted.sh - arch/programs finds a program that install-deps.sh does not install in every
# place a shell script can call one, and does not mistake quoted text, here-documents or case patterns
# for commands.  `jq` (not in scripts/programs.txt) is planted in each calling position.
set -u
src=$(cd "$(dirname "$0")/../.." && pwd)
t=$(mktemp -d); trap 'rm -rf "$t"' EXIT
fail=0
planted() { # planted NAME: the check must fail on $t/NAME.sh, naming jq
  if python3 "$src/tests/arch/programs.py" "$src" "$t/$1.sh" >"$t/out" 2>&1; then
    echo "FAIL: $1: a call of jq was not found" >&2; cat "$t/out" >&2; fail=1
  elif ! grep -q "calls 'jq'" "$t/out"; then
    echo "FAIL: $1: the message does not name jq" >&2; cat "$t/out" >&2; fail=1
  fi
}
clean() { # clean NAME: the check must pass on $t/NAME.sh
  if ! python3 "$src/tests/arch/programs.py" "$src" "$t/$1.sh" >"$t/out" 2>&1; then
    echo "FAIL: $1: flagged although nothing is called" >&2; cat "$t/out" >&2; fail=1
  fi
}
printf 'jq . x.json\n' >"$t/line.sh"; planted line
printf 'cat x | jq .\n' >"$t/pipe.sh"; planted pipe
printf 'true && jq .\n' >"$t/and.sh"; planted and
printf 'n="$(echo 1 | jq .)"\n' >"$t/subst-in-quotes.sh"; planted subst-in-quotes
printf 'x=`jq .`\n' >"$t/backtick.sh"; planted backtick
printf 'if jq . x; then :; fi\n' >"$t/if.sh"; planted if
printf 'for f in a b; do jq . "$f"; done\n' >"$t/loop.sh"; planted loop
printf 'f() { true; }\nFOO=1 jq .\n' >"$t/assign.sh"; planted assign
printf 'timeout 5 jq .\n' >"$t/wrapper.sh"; planted wrapper
printf 'run() { local w=$1; shift; "$@"; }\nrun 0 jq .\n' >"$t/function-wrapper.sh"; planted function-wrapper
printf 'case $x in\n  a) jq . ;;\nesac\n' >"$t/case.sh"; planted case
printf 'echo "jq is | not called; jq"\necho '"'"'jq | jq'"'"'\n# jq in a comment\n' >"$t/quoted.sh"; clean quoted
printf 'cat <<EOF\njq .\nEOF\n' >"$t/heredoc.sh"; clean heredoc
printf 'case $x in\n  jq|yq) echo ;;\nesac\n' >"$t/case-pattern.sh"; clean case-pattern
printf 'jq . # not-run-by-tests: a cluster-only branch\n' >"$t/marked.sh"; clean marked
[ $fail = 0 ] && echo "programs_planted: every planted call found, nothing quoted flagged"
exit $fail
