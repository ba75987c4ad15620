#!/usr/bin/env bash
# golden.sh - the golden output corpus (tests/golden/README.md): every case of tests/golden/commands.txt
# is run again with $PREFLIGHT by tests/golden/generate.sh and must match tests/golden/expected/NAME.out
# byte for byte (stdout, stderr and exit status; version, git description and checkout path
# normalised).  One pass or fail per case; a failure prints the head of its diff.  A case without an
# expected file, or an expected file without a case, fails too.  When a change alters an output on
# purpose, regenerate with `tests/golden/generate.sh build/preflight tests/golden/expected` and explain
# each difference in the commit message.
# Labelled slow (about 15 s; the sanitizer run skips it: its -O0 build is not the binary the corpus
# describes).
# ctest-labels: slow
source "$PF_SRC/tests/cli/lib.bash"
G=$PF_SRC/tests/golden
E=$G/expected
if ! bash "$G/generate.sh" "$PREFLIGHT" "$T/got" 2>"$T/gen.err"; then
  bad "generate.sh failed"
  sed 's/^/  /' "$T/gen.err" >&2
fi
for want in "$E"/*.out; do
  [ -e "$want" ] || { bad "no expected outputs in $E"; break; }
  name=$(basename "$want" .out)
  got=$T/got/$name.out
  if [ ! -e "$got" ]; then
    bad "$name: expected output but no such case in commands.txt (remove $E/$name.out or regenerate)"
  elif cmp -s "$want" "$got"; then
    ok
  else
    bad "$name: output differs from tests/golden/expected/$name.out"
    diff -a -u --label "expected/$name.out" --label "got/$name.out" "$want" "$got" | head -n 20 | sed 's/^/  /' >&2
  fi
done
for got in "$T"/got/*.out; do
  [ -e "$got" ] || continue
  name=$(basename "$got" .out)
  [ -e "$E/$name.out" ] || bad "$name: new case without an expected output (regenerate tests/golden/expected)"
done
finish
