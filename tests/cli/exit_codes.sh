#!/usr/bin/env bash
# exit_codes.sh - one exit-code table for all commands (docs/exit-codes.md, issue 24): runs every case
# of tests/exit-codes/cases.txt (each command in each class it can end in) and checks its status, that
# a failure says why on stderr, and that every command of `preflight --help` has a case for 0 and 2.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
S=$PF_SRC
export PREFLIGHT_PROGRESS=0
declare -A seen
while IFS= read -r line; do
  [[ -z "$line" || "$line" == \#* ]] && continue
  want=${line%% *}
  rest=${line#* }
  cmd=$(echo "${rest%%|*}" | tr -d ' ')
  run=${rest#*| }
  seen[$cmd:$want]=1
  (cd "$T" && eval "$run") > "$T/out" 2> "$T/err"
  got=$?
  if [ "$got" = "$want" ]; then ok; else bad "$cmd: exit $got, expected $want: $run"; head -3 "$T/err" >&2; fi
  if [ "$want" != 0 ]; then [ -s "$T/err" ] && ok || bad "$cmd: exit $got without a message: $run"; fi
done < "$PF_SRC/tests/exit-codes/cases.txt"
# every command has its success and its usage error in the table
for c in $($P --help | awk '/^commands:/ {on = 1; next} on && /^  [a-z]/ {print $1} on && /^$/ {exit}'); do
  for s in 0 2; do [ -n "${seen[$c:$s]-}" ] && ok || bad "no case for $c ending in $s"; done
done
finish
