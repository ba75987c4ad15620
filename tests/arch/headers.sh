#!/usr/bin/env bash
# headers.sh - every header of model/ compiles alone (a translation unit that
# includes it and nothing else), with the project's warnings as errors: a
# header names everything it needs.  PF_CC and PF_HEADER_FLAGS come from
# tests/CMakeLists.txt (the compiler and the include paths of the libraries).
set -u
. "$PF_SRC/tests/cli/lib.bash"
cd "$PF_SRC/model"
for h in */*.h; do
  printf '#include "%s"\n' "$h" >"$T/tu.c"
  # shellcheck disable=SC2086
  if $PF_CC -std=c11 -D_POSIX_C_SOURCE=200809L -Wall -Wextra -Werror -Wno-unused-function -fsyntax-only \
      -I"$PF_SRC/model" -I"$PF_SRC/model/$(dirname "$h")" $PF_HEADER_FLAGS "$T/tu.c" 2>"$T/err"; then
    ok
  else
    bad "$h does not compile alone"; head -5 "$T/err" >&2
  fi
done
finish
