#!/usr/bin/env bash
# defaults.sh - the settings current Megatron-Core / NeMo recipes turn on are on by default for Megatron
# transformers, in predict, tune and plan; each --no-X turns its default off; layer lists and other
# frameworks keep them off (docs/defaults.md, model/job/defaults.c).
# ctest-labels: slow   (five full tune and plan searches: minutes under the sanitizers; the release run covers them)
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT

# tune with no flags is at least as fast as the best plan with --flash-attn before the defaults, when tune
# searched SP, the distributed optimizer and the overlaps but not the TP-comm overlap (main at 74eadee:
# 21.89 s without flags, 14.35 s with --flash-attn; the whole-step kernels of issue 25 add about 0.1 s to
# both, so the comparison runs on this binary)
T_ARGS="--machine leonardo-booster --model llama2-13b --nodes 16 --gbs 512 --format json"
expect_exit 0 $P tune $T_ARGS --flash-attn --no-tp-comm-overlap
cp "$T/out" "$T/before.json"
expect_exit 0 $P tune $T_ARGS --no-flash-attn --no-tp-comm-overlap
cp "$T/out" "$T/noflash.json"
expect_exit 0 $P tune $T_ARGS
python3 - "$T/out" "$T/before.json" "$T/noflash.json" <<'PY' && ok || bad "tune without flags: not as fast as with --flash-attn before"
import json, sys
best, before, noflash = (json.load(open(f))["rows"][0] for f in sys.argv[1:4])
assert best["iteration_time_s"] <= before["iteration_time_s"] * (1 + 1e-9), (best, before)
assert best["iteration_time_s"] < 0.75 * noflash["iteration_time_s"], (best, noflash)
assert best["flash_attn"] is True and best["dist_opt"] is True, best
PY
# plan's node-hours drop accordingly (9,358 before; 6,137 with --flash-attn, on main at 74eadee)
P_ARGS="--machine leonardo-booster --model llama2-13b --gbs 512 --tokens 2e11 --nodes 16 --format json"
expect_exit 0 $P plan $P_ARGS --no-flash-attn --no-tp-comm-overlap
cp "$T/out" "$T/plan-noflash.json"
expect_exit 0 $P plan $P_ARGS
python3 - "$T/out" "$T/plan-noflash.json" <<'PY' && ok || bad "plan without flags: node-hours did not drop"
import json, sys
r, old = (json.load(open(f))["rows"][0] for f in sys.argv[1:3])
assert r["node_hours"] < 0.75 * old["node_hours"], (r["node_hours"], old["node_hours"])
assert "--flash-attn" in r["parallel"]["options"], r["parallel"]
PY
# a setting given either way is kept by tune and plan
expect_exit 0 $P tune --machine leonardo-booster --model llama2-13b --nodes 16 --gbs 512 --no-flash-attn --top 2 --format json
python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['rows']; sys.exit(0 if all(not x['flash_attn'] for x in r) and r[0]['iteration_time_s'] > 20 else 1)" "$T/out" \
  && ok || bad "tune --no-flash-attn searched fused attention"
expect_exit 0 $P plan --machine leonardo-booster --model llama2-13b --gbs 512 --tokens 2e11 --nodes 16 --no-flash-attn --format json
python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['rows'][0]; sys.exit(0 if r['node_hours'] > 9000 and '--flash-attn' not in r['parallel']['options'] else 1)" "$T/out" \
  && ok || bad "plan --no-flash-attn"
# on Hopper the TP-comm overlap is searched on and off; it is in the best plan of a TP > 1 job
expect_exit 0 $P tune --machine mn5-acc --model gpt3-175b --nodes 64 --gbs 1536 --top 1 --format json
python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['rows'][0]; sys.exit(0 if r['tp'] > 1 and r['tp_comm_overlap'] and r['flash_attn'] else 1)" "$T/out" \
  && ok || bad "tune on mn5-acc: no TP-comm overlap in the best plan"

# predict: every default on (Hopper, TP 4), and each --no-X turns its own off, visible in the JSON
base="predict --machine mn5-acc --model llama2-7b --nodes 4 --tp 4 --pp 2 --gbs 128 --format json"
settings="flash-attn sp dist-opt overlap-grad-reduce overlap-param-gather tp-comm-overlap"
expect_exit 0 $P $base
python3 - "$T/out" $settings <<'PY' && ok || bad "predict: a default is not on"
import json, sys
p = json.load(open(sys.argv[1]))["parallel"]
for s in sys.argv[2:]:
    assert p[s.replace("-", "_")] is True, (s, p)
PY
for s in $settings; do
  expect_exit 0 $P $base --no-$s
  python3 - "$T/out" "$s" <<'PY' && ok || bad "--no-$s did not turn its default off"
import json, sys
p = json.load(open(sys.argv[1]))["parallel"]
s = sys.argv[2]
assert p[s.replace("-", "_")] is False, p
# the others stay on, except what needs the one turned off (TP-comm overlap needs SP, the param gather the
# distributed optimizer)
needs = {"sp": ["tp_comm_overlap"], "dist-opt": ["overlap_param_gather"]}.get(s, [])
for k in ["flash_attn", "sp", "dist_opt", "overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap"]:
    if k != s.replace("-", "_") and k not in needs:
        assert p[k] is True, (k, p)
PY
done
# the one given last wins; a given setting is checked as before
expect_exit 0 $P $base --no-sp --sp
[ "$(json_get "$T/out" "['parallel']['sp']")" = True ] && ok || bad "--no-sp --sp: the last did not win"
expect_exit 0 $P $base --sp --no-sp
[ "$(json_get "$T/out" "['parallel']['sp']")" = False ] && ok || bad "--sp --no-sp: the last did not win"
expect_exit 2 $P predict --machine mn5-acc --model llama2-13b --nodes 4 --tp 1 --pp 4 --gbs 128 --tp-comm-overlap
expect_grep "tp-comm-overlap needs --sp and --tp > 1" "$T/err"
expect_exit 2 $P predict --machine mn5-acc --model llama2-13b --nodes 4 --tp 4 --gbs 128 --no-dist-opt --overlap-param-gather
expect_grep "needs --dist-opt" "$T/err"
# a scenario file's "flash_attn = false;" is --no-flash-attn
printf 'machine = "mn5-acc";\nmodel = "llama2-7b";\nnodes = 4;\ntp = 4;\npp = 2;\ngbs = 128;\nflash_attn = false;\n' >"$T/s.cfg"
expect_exit 0 $P predict "$T/s.cfg" --format json
[ "$(json_get "$T/out" "['parallel']['flash_attn']")" = False ] && ok || bad "scenario file flash_attn = false"

# A100: no TP-comm overlap by default; AMD MI250X: fused attention, no TP-comm overlap
expect_exit 0 $P predict --machine leonardo-booster --model llama2-13b --nodes 4 --tp 4 --gbs 128 --format json
[ "$(json_get "$T/out" "['parallel']['tp_comm_overlap']")" = False ] && ok || bad "A100: TP-comm overlap on by default"
expect_exit 0 $P predict --machine lumi-g --model llama2-13b --nodes 4 --tp 4 --gbs 128 --format json
python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['parallel']; sys.exit(0 if p['flash_attn'] and p['sp'] and not p['tp_comm_overlap'] else 1)" "$T/out" \
  && ok || bad "lumi-g defaults"
# fp32: no fused attention kernel; --framework pytorch and layer lists: every setting off unless given
expect_exit 0 $P predict --machine leonardo-booster --model gpt-857m --nodes 1 --gbs 64 --precision fp32 --format json
[ "$(json_get "$T/out" "['parallel']['flash_attn']")" = False ] && ok || bad "fp32: fused attention on"
for extra in "--model gpt-857m --framework pytorch --gbs 64" "--model resnet50 --gbs 1024"; do
  expect_exit 0 $P predict --machine leonardo-booster --nodes 4 $extra --format json
  python3 - "$T/out" <<'PY' && ok || bad "defaults applied to: $extra"
import json, sys
p = json.load(open(sys.argv[1]))["parallel"]
assert not any(p[k] for k in ["flash_attn", "sp", "dist_opt", "overlap_grad_reduce", "overlap_param_gather", "tp_comm_overlap"]), p
PY
done
# --engine full models neither overlap: the defaults step aside, an overlap asked for is refused as before
expect_exit 0 $P predict --machine mn5-acc --model llama2-7b --nodes 2 --tp 2 --gbs 64 --engine full --format json
[ "$(json_get "$T/out" "['parallel']['overlap_grad_reduce']")" = False ] && ok || bad "engine full with default overlaps"
expect_exit 2 $P predict --machine mn5-acc --model llama2-7b --nodes 2 --tp 2 --gbs 64 --engine full --overlap-grad-reduce
# a validation row's false column is --no-X
cat >"$T/rows.csv" <<'CSV'
machine,model,layers,hidden,heads,seq,vocab,nodes,gpus,tp,pp,dp,mbs,gbs,precision,sp,dist_opt,recompute,schedule,metric,value,unit,baseline_nodes,source,flash_attn
mn5-acc,llama2-7b,,,,,,4,,4,2,,1,128,bf16,true,true,none,1f1b,iteration_time_s,10,s,,test,false
mn5-acc,llama2-7b,,,,,,4,,4,2,,1,128,bf16,true,true,none,1f1b,iteration_time_s,10,s,,test,true
CSV
expect_exit 0 $P validate "$T/rows.csv" --format json
python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['rows']; sys.exit(0 if r[0]['predicted'] > r[1]['predicted'] else 1)" "$T/out" \
  && ok || bad "validation row flash_attn=false did not turn fused attention off"
# a sweep axis of a flag: off is --no-X
expect_exit 0 $P sweep --machine mn5-acc --model llama2-7b --nodes 4 --tp 4 --pp 2 --gbs 128 --vary flash-attn=on,off --format json
python3 -c "import json,sys; r=json.load(open(sys.argv[1]))['rows']; sys.exit(0 if sorted(x['parallel']['flash_attn'] for x in r) == [False, True] else 1)" "$T/out" \
  && ok || bad "sweep --vary flash-attn=on,off"
# the help says when each is on
expect_exit 0 $P predict --help
for s in $settings; do expect_grep "^ +--no-$s " "$T/out"; done
expect_grep "fused attention \(default on for Megatron transformers" "$T/out"
finish
