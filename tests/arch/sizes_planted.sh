#!/usr/bin/env bash
# sizes_planted.sh - tests/arch/sizes.py fails on each kind of oversize item:
# a copy of model/ and calibrate/ gets one planted item at a time (a function
# of 101 lines, a .c file of 501 lines, a function whose strings and comments
# hold stray braces, an allow-list entry no longer over its limit), and the
# checker must name it (file:line and function) and exit 1; a function of
# exactly 100 lines and the clean copy pass.
set -u
. "$PF_SRC/tests/cli/lib.bash"
CHECK="python3 $PF_SRC/tests/arch/sizes.py"

fresh() { rm -rf "$T/src"; mkdir "$T/src"; cp -r "$PF_SRC/model" "$PF_SRC/calibrate" "$T/src/"; }
# long_function NAME LINES [BODY_LINE]: a C function of LINES lines in all, signature and closing brace included
long_function() {
  printf '\nstatic int %s(int x) {\n' "$1"
  for ((i = 0; i < $2 - 2; i++)); do printf '  %s\n' "${3:-x += 1;}"; done
  printf '}\n'
}

fresh
expect_exit 0 $CHECK "$T/src"
expect_grep "^0 over the limits" "$T/out"

fresh # a function one line over: named with its file and first line
long_function planted_long 101 >>"$T/src/model/core/units.c"
line=$(grep -n 'planted_long(int x)' "$T/src/model/core/units.c" | cut -d: -f1)
expect_exit 1 $CHECK "$T/src"
expect_grep "^model/core/units.c:$line: planted_long: 101 lines \(limit 100\)" "$T/out"

fresh # exactly at the limit: allowed
long_function planted_ok 100 >>"$T/src/calibrate/harness/stats.c"
expect_exit 0 $CHECK "$T/src"

fresh # braces inside strings, character constants and comments do not end the function early
long_function planted_braces 101 'x += (int)sizeof "}" + (int)sizeof(char) * (x == '"'}'"'); /* } */' \
  >>"$T/src/model/study/vmetric.c"
expect_exit 1 $CHECK "$T/src"
expect_grep "model/study/vmetric.c:[0-9]+: planted_braces: 101 lines" "$T/out"

fresh # a .c file one line over
f="$T/src/model/core/error.c"
n=$(wc -l <"$f")
for ((i = n; i < 501; i++)); do echo "/* filler */" >>"$f"; done
expect_exit 1 $CHECK "$T/src"
expect_grep "^model/core/error.c: 501 lines \(limit 500\)" "$T/out"

fresh # an allowed item is reported but passes; an allow-list entry within the limits must be removed
long_function planted_allowed 120 >>"$T/src/model/core/units.c"
expect_exit 0 $CHECK "$T/src" --allow model/core/units.c:planted_allowed
expect_grep "planted_allowed: 120 lines \(limit 100\).*\[allowed for now" "$T/out"
expect_exit 1 $CHECK "$T/src" --allow model/core/units.c:planted_allowed --allow model/core/units.c:pf_units_parse
expect_grep "^model/core/units.c:pf_units_parse: on the allow-list of tests/arch/sizes.py but within the limits" "$T/out"
finish
