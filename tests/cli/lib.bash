# lib.sh - helpers sourced by the command-line tests (not a test itself).
set -u
pass=0; fail=0
T=$(mktemp -d); trap 'rm -rf "$T"' EXIT
ok()   { pass=$((pass+1)); }
bad()  { fail=$((fail+1)); echo "FAIL: $*" >&2; }
# expect_exit CODE CMD...: run, keep stdout in $T/out and stderr in $T/err
expect_exit() {
  local want=$1; shift
  "$@" >"$T/out" 2>"$T/err"; local got=$?
  if [ "$got" = "$want" ]; then ok; else bad "exit $got, expected $want: $*"; sed 's/^/  stderr: /' "$T/err" | head -5 >&2; fi
}
expect_grep() { # expect_grep PATTERN FILE
  if grep -qE -- "$1" "$2"; then ok; else bad "no /$1/ in $2"; head -5 "$2" | sed 's/^/  got: /' >&2; fi
}
# jq-free JSON checks go through python3 when present, else through the binary's own parser tests
json_get() { python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(eval('d'+sys.argv[2]))" "$1" "$2"; }
finish() { echo "$pass passed, $fail failed"; [ "$fail" = 0 ]; }
