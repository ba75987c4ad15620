#!/bin/bash
# collective_toy.sh - `preflight collective` with a toy algorithm registered from
# tests/plugin_coll (preflight-toycoll: the preflight command plus coll_toy.c):
# --coll-algo=help lists it, --coll-algo toy uses it, auto does not.
T=$(mktemp -d)
trap 'rm -rf "$T"' EXIT
fail=0
bad() { echo "FAIL: $*"; fail=1; }
"$TOY" collective --coll-algo=help >"$T/help" || bad "--coll-algo=help: exit $?"
grep -q '^  toy  *toy star all-reduce' "$T/help" || bad "--coll-algo=help does not list toy"
grep -q '^  ring ' "$T/help" || bad "--coll-algo=help does not list ring"
"$TOY" collective --machine mn5-acc --nodes 2 --coll-algo toy -b 1M -e 1G -f 32 >"$T/toy" || bad "--coll-algo toy: exit $?"
[ "$(grep -c ' toy  *Simple\| toy  *LL' "$T/toy")" = 3 ] || bad "--coll-algo toy: not every size used toy"
"$TOY" collective --machine mn5-acc --nodes 2 --coll-algo toy --format json >"$T/toy.json" || bad "json: exit $?"
grep -q '"algorithm":[[:space:]]*"toy"' "$T/toy.json" || bad "--format json: no \"algorithm\": \"toy\""
"$TOY" collective --machine mn5-acc --nodes 2 -b 1M -e 1G -f 32 >"$T/auto" || bad "auto: exit $?"
grep -q ' toy ' "$T/auto" && bad "auto picked toy"
"$PREFLIGHT" collective --machine mn5-acc --nodes 2 --coll-algo toy >"$T/plain" 2>&1 && bad "preflight itself knows toy"
grep -q 'valid: auto' "$T/plain" || bad "preflight: no list of valid algorithms"
[ $fail = 0 ] && echo "collective_toy: ok"
exit $fail
