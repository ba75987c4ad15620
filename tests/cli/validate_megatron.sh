#!/usr/bin/env bash
# validate_megatron.sh - `validate --megatron-log`: both log formats, configuration from the argument dump
# or from options, malformed logs rejected with the line number.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
M=$PF_SRC/tests/fixtures/megatron

# current format with an argument dump: the plan comes from the log, nodes from world_size / GPUs per node
expect_exit 0 $P validate --megatron-log "$M/current.log" --machine leonardo-booster
expect_grep "6 iteration lines \(time in ms\), 5 used" "$T/out"
expect_grep "2 nodes, 8 GPUs, TP 2 x PP 1 x DP 4, mbs 4, gbs 256, bf16" "$T/out"
expect_grep "^iteration_time_s +5.611 s" "$T/out"
expect_grep "^tflops_per_gpu +105 TFLOP/s" "$T/out"
expect_grep "^energy_J \(per GPU\) +2216 J" "$T/out"
expect_grep "^avg_power_W \(per GPU\) +395 W" "$T/out"
expect_exit 0 $P validate --megatron-log "$M/current.log" --machine leonardo-booster --format json
python3 - "$T/out" <<'PY' && ok || bad "megatron JSON"
import json, sys
d = json.load(open(sys.argv[1]))
m, c = d["megatron_log"], d["configuration"]
assert m["iterations_logged"] == 6 and m["iterations_used"] == 5 and m["time_format"] == "ms"
assert abs(m["median_iteration_time_s"] - 5.6112) < 1e-9
assert (c["nodes"], c["gpus"], c["tp"], c["pp"], c["dp"], c["gbs"], c["precision"]) == (2, 8, 2, 1, 4, 256, "bf16")
rows = {r["metric"]: r for r in d["rows"]}
assert set(rows) == {"iteration_time_s", "tflops_per_gpu", "energy_J", "avg_power_W"}
assert all(r["status"] == "predicted" and "error_pct" in r for r in rows.values())
assert "current.log:" in rows["iteration_time_s"]["source"]
PY
# options override the log
expect_exit 0 $P validate --megatron-log "$M/current.log" --machine leonardo-booster --nodes 4
expect_grep "4 nodes, 16 GPUs, TP 2 x PP 1 x DP 8" "$T/out"

# a log whose TFLOP/s count causal attention as half (Megatron-LM core_v0.12 on): recognised from its own
# TFLOP/s x time, and the prediction compared in that count (the same error as the full count above)
awk '{ if (match($0, /TFLOP\/s\/GPU\): [0-9.]+/)) $0 = substr($0, 1, RSTART + 13) \
  sprintf("%.1f", substr($0, RSTART + 14, RLENGTH - 14) * 0.933) substr($0, RSTART + RLENGTH); print }' \
  "$M/current.log" > "$T/causal.log"
expect_exit 0 $P validate --megatron-log "$T/causal.log" --machine leonardo-booster
expect_grep "TFLOP/s with causal attention counted as half" "$T/out"
expect_grep "^tflops_per_gpu +98 TFLOP/s +100.3 TFLOP/s +\+2.4%" "$T/out"
expect_exit 0 $P validate --megatron-log "$M/current.log" --machine leonardo-booster
grep -q "causal attention" "$T/out" && bad "a full-count log taken as causal" || ok
expect_grep "^tflops_per_gpu +105 TFLOP/s +107.5 TFLOP/s +\+2.4%" "$T/out"

# CUDA graphs in the dump: per-layer capture of the attention (--cuda-graph-impl transformer_engine
# --cuda-graph-scope attn) is --cuda-graph-modules attn, which spares the host and so the step
sed "s/^  use_distributed_optimizer \.* True$/&\n  cuda_graph_impl ................................. transformer_engine\n  cuda_graph_scope ................................ ['attn']/" \
  "$M/current.log" > "$T/graphs.log"
expect_exit 0 $P validate --megatron-log "$M/current.log" --machine leonardo-booster --format json
cp "$T/out" "$T/eager.json"
expect_exit 0 $P validate --megatron-log "$T/graphs.log" --machine leonardo-booster --format json
python3 - "$T/eager.json" "$T/out" <<'PY' && ok || bad "cuda_graph_scope ['attn'] in the dump: a faster step than eager"
import json, sys
e, g = ({r["metric"]: r for r in json.load(open(p))["rows"]} for p in sys.argv[1:3])
assert g["iteration_time_s"]["predicted"] < e["iteration_time_s"]["predicted"], (g, e)
PY
expect_exit 0 $P validate --megatron-log "$T/graphs.log" --machine leonardo-booster --cuda-graph-modules attn --format json
python3 - "$T/out" "$T/eager.json" <<'PY' && ok || bad "the dump's scope and --cuda-graph-modules attn agree"
import json, sys
a, b = (json.load(open(p))["rows"][0]["predicted"] for p in sys.argv[1:3])
assert a < b, (a, b)
PY

# older format (seconds, "TFLOPs:", launcher prefixes), no argument dump: configuration from options
expect_exit 0 $P validate --megatron-log "$M/old.log" --machine jureca-dc-a100 --model gpt3-6.7b --nodes 4 \
  --tp 4 --pp 2 --precision fp16
expect_grep "5 iteration lines \(time in s\), 4 used" "$T/out"
expect_grep "gbs 512" "$T/out"
expect_grep "^iteration_time_s +21.89 s" "$T/out"
expect_grep "^tflops_per_gpu +129 TFLOP/s" "$T/out"
expect_exit 2 $P validate --megatron-log "$M/old.log" --machine jureca-dc-a100
expect_grep "no argument dump" "$T/err"

# --max-error applies to the log's rows too
expect_exit 1 $P validate --megatron-log "$M/current.log" --machine leonardo-booster --max-error 0.001
expect_exit 0 $P validate --megatron-log "$M/current.log" --machine leonardo-booster --max-error 1000

# malformed: the iteration number does not parse (line 46); no iteration lines; no machine; no file
expect_exit 2 $P validate --megatron-log "$M/malformed.log" --machine leonardo-booster
expect_grep "malformed.log:46: iteration" "$T/err"
expect_exit 2 $P validate --megatron-log "$M/no-iterations.log" --machine leonardo-booster
expect_grep "no-iterations.log:44: no per-iteration lines" "$T/err"
expect_exit 2 $P validate --megatron-log "$M/current.log"
expect_grep "machine is required" "$T/err"
expect_exit 2 $P validate --megatron-log "$M/none.log" --machine leonardo-booster
expect_exit 2 $P validate --megatron-log "$M/current.log" --fit x.csv

# Megatron's overlap flags in the argument dump reach the prediction
sed 's/^  use_distributed_optimizer \.* True$/&\n  overlap_grad_reduce ............................. True\n  overlap_param_gather ............................ True/' \
  "$M/current.log" > "$T/overlap.log"
expect_exit 0 $P validate --megatron-log "$T/overlap.log" --machine leonardo-booster --format json
python3 - "$T/out" <<'PY' && ok || bad "overlap flags from the log's arguments"
import json, sys
c = json.load(open(sys.argv[1]))["configuration"]
assert c["overlap_grad_reduce"] is True and c["overlap_param_gather"] is True and c["dist_opt"] is True, c
PY
# full recomputation by the block method and bf16 gradient reduction from the argument dump: 2 layers a chunk
# recomputed is faster than every layer, and the bf16 gradients are taken (the option is accepted, rc 0)
sed -e 's/recompute_granularity \.* None/recompute_granularity ........................... full/' \
  -e 's/accumulate_allreduce_grads_in_fp32 \.* True/accumulate_allreduce_grads_in_fp32 .............. False/' \
  "$M/current.log" >"$T/full.log"
sed 's/^  recompute_granularity .*/&\n  recompute_method ................................ block\n  recompute_num_layers ............................ 2/' \
  "$T/full.log" >"$T/block.log"
$P validate --megatron-log "$T/full.log" --machine leonardo-booster --format json >"$T/f.json" 2>"$T/err" &&
  $P validate --megatron-log "$T/block.log" --machine leonardo-booster --format json >"$T/b.json" 2>>"$T/err" &&
  python3 - "$T" <<'PY' && ok || bad "block recomputation from the log: $(head -c 300 "$T/err")"
import json, sys
t = sys.argv[1]
pred = lambda k: {r["metric"]: r for r in json.load(open(f"{t}/{k}.json"))["rows"]}["iteration_time_s"]["predicted"]
assert pred("b") < pred("f"), (pred("b"), pred("f"))
PY
finish
