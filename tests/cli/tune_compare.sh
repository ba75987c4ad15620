#!/usr/bin/env bash
# tune_compare.sh - tune finds feasible plans ranked by throughput; compare runs one job on several machines.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
expect_exit 0 $P tune --machine leonardo-booster --model llama2-13b --nodes 16 --gbs 512 --top 5 --format json
python3 - "$T/out" <<'PY' && ok || bad "tune ranking"
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
assert len(rows) == 5 and d["plans_evaluated"] >= 5 and d["plans_enumerated"] == d["plans_evaluated"] + d["plans_pruned"]
tput = [r["tokens_per_s"] for r in rows]
assert tput == sorted(tput, reverse=True), tput
for r in rows:
    assert r["tp"] * r["pp"] * r["dp"] * r["cp"] == 64 and r["memory_GiB"] <= 64
PY
# the best plan, run through predict, gives the throughput tune reported
best=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['rows'][0]['options'])" "$T/out")
tput=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['rows'][0]['tokens_per_s'])" "$T/out")
expect_exit 0 $P predict --machine leonardo-booster --model llama2-13b --nodes 16 --gbs 512 $best --format json
python3 -c "import json,sys; d=json.load(open(sys.argv[1])); sys.exit(0 if abs(d['tokens_per_s']/float(sys.argv[2])-1)<1e-4 else 1)" "$T/out" "$tput" \
  && ok || bad "predict disagrees with tune's best plan"
# nothing fits: exit 1 with a reason
expect_exit 1 $P tune --machine e4-a2 --model gpt3-175b --nodes 1 --gbs 8
expect_grep "no parallel configuration" "$T/err"
expect_exit 2 $P tune --machine leonardo-booster --model llama2-13b --nodes 16
expect_grep "gbs" "$T/err"

expect_exit 0 $P compare --machines lumi-g,leonardo-booster,jupiter-booster --model llama2-7b --gpus 64 --tp 2 --gbs 512 --dist-opt --recompute selective --format csv
[ "$(wc -l < "$T/out")" = 4 ] && ok || bad "compare: one row per machine"
expect_grep "^jupiter-booster,16,64," "$T/out"
expect_grep "^lumi-g,8,64," "$T/out"
expect_exit 2 $P compare --machines lumi-g,nope --model llama2-7b --gpus 64 --gbs 512
expect_grep 'unknown machine id "nope"' "$T/err"
finish
