#!/usr/bin/env bash
# plan.sh - budget lines: hours, billing units in the site's unit, energy; arithmetic checked.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
A="--model gpt3-1.3b --tp 1 --pp 1 --mbs 4 --gbs 512 --dist-opt --precision bf16"
expect_exit 0 $P plan --machine lumi-g $A --nodes 2,4 --tokens 1e10 --overhead 0.1 --gpu-mtbf 0 --job-startup 0 --format json
python3 - "$T/out" <<'PY' && ok || bad "plan arithmetic on lumi-g"
import json, sys
d = json.load(open(sys.argv[1]))
for r in d["rows"]:
    # iterations = tokens / (gbs x seq); without failures and start-ups,
    # wall = iterations x t x (1 + other phases) x (1 + checkpoint write / interval)
    assert r["iterations"] == -(-1e10 // (512 * 2048)), r
    ck = r["checkpoint"]
    assert abs(ck["overhead_fraction"] - ck["write_s"] / (ck["interval_h"] * 3600)) < 1e-12
    wall = r["iterations"] * r["iteration_time_s"] * 1.1 * (1 + ck["overhead_fraction"]) / 3600
    assert abs(r["wall_time_h"] / wall - 1) < 1e-9
    assert abs(r["node_hours"] / (r["nodes"] * wall) - 1) < 1e-9
    assert abs(r["gpu_hours"] / (r["gpus"] * wall) - 1) < 1e-9
    # LUMI bills a GPU-hour per MI250X: 4 per node-hour
    assert r["billing_units"]["unit"] == "GPU-hour" and abs(r["billing_units"]["value"] / (4 * r["node_hours"]) - 1) < 1e-9
    assert r["energy_MWh"] > 0
assert d["recommended"]["fastest_nodes"] == 4
PY
# evaluation as Megatron runs it: K forward-only iterations every N, each a forward pass of the global batch
expect_exit 0 $P plan --machine lumi-g $A --nodes 2 --tokens 1e10 --gpu-mtbf 0 --job-startup 0 --eval-interval 100 --eval-iters 5 --format json
python3 - "$T/out" <<'PY' && ok || bad "plan --eval-interval/--eval-iters arithmetic"
import json, sys
r = json.load(open(sys.argv[1]))["rows"][0]
ev, ck = r["evaluation"], r["checkpoint"]
assert ev["interval"] == 100 and ev["iters"] == 5 and ev["evaluations"] == r["iterations"] // 100, ev
# a forward pass is cheaper than a training step, and not free
assert 0.15 * r["iteration_time_s"] < ev["eval_iteration_s"] < 0.6 * r["iteration_time_s"], (ev, r["iteration_time_s"])
train = r["iterations"] * r["iteration_time_s"]
assert abs(ev["time_h"] * 3600 - ev["evaluations"] * 5 * ev["eval_iteration_s"]) < 1e-6 * train
assert abs(r["wall_time_h"] * 3600 / ((train + ev["time_h"] * 3600) * (1 + ck["overhead_fraction"])) - 1) < 1e-9
# the evaluations draw their own forward kernels' power: part of the computing energy, near training's power
e = r["energy_phases"]
eval_MW, train_MW = ev["energy_MWh"] / ev["time_h"], (e["computing_MWh"] - ev["energy_MWh"]) / (e["computing_h"] - ev["time_h"])
assert 0.5 * train_MW < eval_MW < 1.2 * train_MW, (eval_MW, train_MW)
PY
expect_exit 0 $P plan --machine lumi-g $A --nodes 2 --tokens 1e10 --eval-interval 100
expect_grep "evaluation: [0-9]+ evaluations of 100 forward-only iterations \(every 100;" "$T/out"
expect_exit 2 $P plan --machine lumi-g $A --nodes 2 --tokens 1e10 --eval-iters 0
expect_grep "eval-iters" "$T/err"
# energy by phase: computing at the power of its kernels, checkpoint writes / restarts / start-ups with the GPUs waiting
expect_exit 0 $P plan --machine lumi-g $A --nodes 2 --tokens 1e10 --format json
python3 - "$T/out" <<'PY' && ok || bad "plan energy phases"
import json, sys
r = json.load(open(sys.argv[1]))["rows"][0]
e = r["energy_phases"]
assert abs(e["computing_h"] + e["waiting_h"] - r["wall_time_h"]) < 1e-6 * r["wall_time_h"], (e, r["wall_time_h"])
assert abs(e["computing_MWh"] + e["waiting_MWh"] - r["energy_MWh"]) < 1e-9 * r["energy_MWh"]
assert e["waiting_h"] > 0 and e["waiting_MWh"] > 0
# a waiting node draws less than a training one, more than nothing
assert 0 < e["waiting_MWh"] / e["waiting_h"] < e["computing_MWh"] / e["computing_h"], e
PY
expect_exit 0 $P plan --machine lumi-g $A --nodes 2 --tokens 1e10
expect_grep "energy: .* MWh over .* h of computing at the power of its kernels, .* MWh over .* h of checkpoint" "$T/out"
expect_exit 0 $P plan --machine leonardo-booster $A --nodes 2 --tokens 1e10
expect_grep "core-hour" "$T/out"
expect_grep "1 node-hour = 32 core-hour" "$T/out"
expect_grep "^ +2 +8 +1 x 1 x 8 " "$T/out"   # the configuration is echoed
# a MoE plan's EP is echoed beside the split
expect_exit 0 $P plan --machine dgx-h100-superpod --model qwen3-30b-a3b --tp 1 --pp 1 --ep 8 --mbs 1 --gbs 1024 \
  --seq 4096 --tokens 1e10 --nodes 4
expect_grep "^ +4 +32 +1 x 1 x 32 \(EP 8\) +1 1f1b " "$T/out"
expect_exit 0 $P plan --machine lumi-g --model resnet50 --mbs 256 --gbs 8192 --precision fp16 --nodes 2,4 --epochs 90 --samples 1281167
expect_grep "GCD-hours" "$T/out"
expect_grep "Scaling evidence" "$T/out"
expect_exit 2 $P plan --machine lumi-g $A --nodes 2
expect_grep "tokens" "$T/err"
expect_exit 1 $P plan --machine lumi-g --model gpt3-175b --nodes 1 --tokens 1e9
finish
