#!/usr/bin/env bash
# tune_bound.sh - tune's branch and bound (model/study/tunebound.c) picks what pricing every plan picks: on small
# mixtures of experts (Mixtral 8x7B on 4 JUPITER Booster nodes, Qwen3-30B-A3B on 4 Leonardo Booster nodes) and a
# dense model (Llama 2 7B on 2 Leonardo Booster nodes) and uneven interleaved stages (DeepSeek-V2-Lite's 27 layers on
# PP 8 x VPP 2: the interleaved screening is a list schedule, which can end below the old formula), the finalists (options, times, memory), the best sharded
# plan and EP 1's line (with its best plan) are the same with PREFLIGHT_TUNE_EXHAUSTIVE=1 (every plan that fits priced), fewer plans
# are priced without it, and no plan priced in the exhaustive search screens below its bound; with the pricing
# rounds over one worker or three, the same.
# ctest-labels: slow
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
cases=("--machine jupiter-booster --model mixtral-8x7b --nodes 4 --gbs 64"
  "--machine leonardo-booster --model qwen3-30b-a3b --nodes 4 --gbs 64 --objective billing"
  "--machine leonardo-booster --model llama2-7b --nodes 2 --gbs 64 --top 3"
  "--machine jupiter-booster --model deepseek-v2-lite --nodes 8 --gbs 512 --pp 8 --schedule interleaved:2")
i=0
for c in "${cases[@]}"; do
  i=$((i + 1))
  # shellcheck disable=SC2086
  expect_exit 0 env PREFLIGHT_TIMING=1 $P tune $c --format json -o "$T/b$i.json"
  cp "$T/err" "$T/b$i.err"
  # shellcheck disable=SC2086
  expect_exit 0 env PREFLIGHT_TIMING=1 PREFLIGHT_TUNE_EXHAUSTIVE=1 $P tune $c --format json -o "$T/e$i.json"
  cp "$T/err" "$T/e$i.err"
  expect_grep "timing: [0-9]+ plans evaluated in [0-9.]+ s \\([0-9]+ priced, 0 bounded, 0 priced below their bound;" "$T/err"
  python3 - "$T/b$i.json" "$T/e$i.json" "$T/b$i.err" "$T/e$i.err" <<'PY' && ok || bad "case $i: the bounded search differs from the exhaustive one"
import json, re, sys
b, e = (json.load(open(f)) for f in sys.argv[1:3])
key = lambda d: [(r["options"], r["iteration_time_s"], r["memory_GiB"], r["score"]) for r in d["rows"]]
assert key(b) == key(e), (key(b), key(e))
assert b.get("best_sharded") == e.get("best_sharded")
assert b.get("ep1") == e.get("ep1")
for k in ("plans_enumerated", "plans_pruned", "plans_evaluated"):   # the counts do not depend on the bound
    assert b[k] == e[k], k
t = [re.search(r"\(([0-9]+) priced, ([0-9]+) bounded, ([0-9]+) priced below", open(f).read()).groups()
     for f in sys.argv[3:5]]
(bp, bb, bo), (ep, eb, eo) = [[int(x) for x in g] for g in t]
assert bp + bb == ep == e["plans_evaluated"] and eb == 0 and eo == 0, t
assert bp < ep, t   # the bound leaves plans unpriced
PY
done
# the pricing rounds over workers (model/study/tuneprice.c) pick what one process picks: the first case with one
# worker (every round in the main process) and with three (a round of 16 or more marked plans dealt out)
for j in 1 3; do
  # shellcheck disable=SC2086
  expect_exit 0 env PREFLIGHT_TIMING=1 PREFLIGHT_JOBS=$j $P tune ${cases[0]} --format json -o "$T/j$j.json"
  cp "$T/err" "$T/j$j.err"
done
python3 - "$T/b1.json" "$T/j1.json" "$T/j3.json" "$T/j1.err" "$T/j3.err" <<'PY' && ok || bad "pricing over workers differs"
import json, re, sys
d = [json.load(open(f)) for f in sys.argv[1:4]]
for x in d[1:]:
    for k in ("rows", "best_sharded", "ep1", "plans_enumerated", "plans_pruned", "plans_evaluated"):
        assert x.get(k) == d[0].get(k), k
r = [[int(v) for v in re.search(r"([0-9]+) of ([0-9]+) pricing rounds over workers", open(f).read()).groups()]
     for f in sys.argv[4:6]]
assert r[0][0] == 0 and r[0][1] >= 1 and r[1][0] >= 1, r
PY
# a MoE search's shards merge to the unsharded result byte for byte (the all-to-all share is kept as computed,
# not recomputed from the shards' 15-digit times)
# shellcheck disable=SC2086
for k in 1 2; do expect_exit 0 $P tune ${cases[0]} --shard $k/2 -o "$T/s$k.json"; done
$P merge "$T/s1.json" "$T/s2.json" --format json >"$T/sm.json" 2>"$T/err"
if cmp -s "$T/b1.json" "$T/sm.json"; then ok; else bad "merged MoE tune shards differ from the unsharded search"; fi
# the MoE cases say what EP 1 comes to
python3 - "$T/b1.json" <<'PY' && ok || bad "ep1 in the JSON"
import json, sys
x = json.load(open(sys.argv[1]))["ep1"]
assert x["valid"] >= x["fit"] >= x["fit_zero1"] >= 0 and x.get("ep", 1) == 1 and x["options"].startswith("--tp")
assert abs(x["memory_GiB"] - sum(x[k] for k in ("weights_GiB", "gradients_GiB", "optimizer_GiB", "activations_GiB",
                                               "unsharded_units_GiB", "overhead_GiB"))) < 1e-6
assert x["fits"] == (x["memory_GiB"] <= x["capacity_GiB"])
# where EP 1 plans fit, the best of them by screening (that the bounded search's is the exhaustive one's and the
# same over one worker or three is checked above, with the rest of "ep1")
f = x["fastest"]
assert x["fits"] and f.get("ep", 1) == 1 and f["options"].startswith("--tp") and f["memory_GiB"] > 0, f
assert f["screen"] > 0 and f["iteration_time_s"] > 0, f
PY
# an uneven interleaved pipeline whose faster stages still run ahead of the busiest at the microbatches the engines
# simulate before extending (predict.c run_pipeline, engine/pipeform.c): the iteration is never shorter than the
# busiest stage's compute, in either engine, and the two agree (until 2026-11-27: 7.770 s against 7.937 s)
for e in simgrid analytic; do
  expect_exit 0 $P predict --machine jupiter-booster --model deepseek-v2-lite --nodes 8 --gbs 512 --tp 1 --pp 8 --mbs 1 \
    --recompute full --schedule interleaved:2 --pipeline-model-parallel-layout "Et*2|(t*2|)*7,t|(t*2|)*3,(t|)*3,tL" \
    --engine $e --format json -o "$T/un-$e.json"
done
python3 - "$T/un-simgrid.json" "$T/un-analytic.json" <<'PY' && ok || bad "uneven interleaved stages: the iteration is not shorter than the busiest stage's compute"
import json, sys
d = [json.load(open(f)) for f in sys.argv[1:3]]
for x in d:
    assert x["breakdown_s"]["compute"] <= x["iteration_time_s"], (x["breakdown_s"]["compute"], x["iteration_time_s"])
assert abs(d[0]["iteration_time_s"] / d[1]["iteration_time_s"] - 1) < 1e-4, [x["iteration_time_s"] for x in d]
PY
finish
