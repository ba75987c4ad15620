#!/usr/bin/env bash
# source_paths.sh - every source file a provenance string names exists: the
# built-in models' "source" fields (`preflight models --format json`) cite the
# file that builds them (model/workload/resnet.c, ...), and a file that moves
# must take its citations along (the architecture move's golden difference).
. "$PF_SRC/tests/cli/lib.bash"
expect_exit 0 "$PREFLIGHT" models --format json
grep -oE 'model/[a-z_]+/[a-z_]+\.[ch]' "$T/out" | sort -u >"$T/paths"
[ -s "$T/paths" ] && ok || bad "no source path cited in models --format json"
while read -r p; do
  [ -f "$PF_SRC/$p" ] && ok || bad "models --format json cites $p, which does not exist"
done <"$T/paths"
finish
