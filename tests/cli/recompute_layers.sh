#!/usr/bin/env bash
# recompute_layers.sh - --recompute-num-layers N with --recompute full, Megatron's block method (plan.h): the first N
# layers of each model chunk recompute, the rest keep their activations, so memory and time fall between no
# recomputation and full recomputation of every layer; N at or above a chunk's layers is full recomputation; the
# option needs --recompute full.  The split is Megatron-Bridge's Llama 3 8B H100 FP8 recipe (CP 1, 5 layers
# recomputed, FP8 weights, bf16 gradients), which fits only with its 5 layers.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
B=(--machine dgx-h100-superpod --model llama3-8b --gpus 8 --gbs 128 --precision fp8 --fp8-recipe current
   --fp8-param-gather --grad-reduce-in-bf16 --format json)
$P predict "${B[@]}" --recompute none >"$T/none.json" 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && grep -q "does not fit" "$T/err" && ok || bad "no recomputation should not fit (rc $rc)"
for n in 5 32; do
  $P predict "${B[@]}" --recompute full --recompute-num-layers $n >"$T/n$n.json" 2>"$T/err" ||
    bad "--recompute-num-layers $n: $(head -c 300 "$T/err")"
done
$P predict "${B[@]}" --recompute full >"$T/full.json" 2>"$T/err" || bad "--recompute full: $(head -c 300 "$T/err")"
python3 - "$T" <<'PY' && ok || bad "block recomputation between none and full (see above)"
import json, sys
t = sys.argv[1]
none, n5, n32, full = (json.load(open(f"{t}/{k}.json")) for k in ("none", "n5", "n32", "full"))
a = lambda d: d["memory_per_gpu_GiB"]["activations"]
assert a(full) < a(n5) < a(none), (a(full), a(n5), a(none))
# 5 of 32 layers checkpointed: the other 27 keep all they keep without recomputation
assert abs((a(n5) - a(full)) / (a(none) - a(full)) - 27 / 32) < 0.02, (a(none), a(n5), a(full))
assert n5["fits"] and n5["parallel"]["recompute_num_layers"] == 5
assert n5["iteration_time_s"] < full["iteration_time_s"], (n5["iteration_time_s"], full["iteration_time_s"])
assert n32["iteration_time_s"] == full["iteration_time_s"] and a(n32) == a(full)
PY
# interleaved: N counts in each model chunk (2 of a stage of 16 layers here): 8 a chunk is every layer
I=(--machine dgx-h100-superpod --model llama3-8b --gpus 8 --tp 1 --pp 2 --gbs 128 --recompute full --format json)
$P predict "${I[@]}" --schedule interleaved:2 --recompute-num-layers 2 >"$T/i2.json" 2>"$T/err" &&
  $P predict "${I[@]}" --schedule interleaved:2 >"$T/if.json" 2>>"$T/err" || bad "interleaved: $(head -c 300 "$T/err")"
$P predict "${I[@]}" --schedule interleaved:2 --recompute-num-layers 8 >"$T/i8.json" 2>"$T/err" ||
  bad "N 8: $(cat "$T/err")"
python3 - "$T" <<'PY' && ok || bad "interleaved chunks (see above)"
import json, sys
t = sys.argv[1]
i2, i8, f = (json.load(open(f"{t}/{k}.json")) for k in ("i2", "i8", "if"))
act = lambda d: d["memory_per_gpu_GiB"]["activations"]
assert i2["iteration_time_s"] < f["iteration_time_s"] and act(i2) > act(f), (i2["iteration_time_s"], act(i2), act(f))
assert i8["iteration_time_s"] == f["iteration_time_s"]  # 8 layers a chunk of 8: every layer
PY
$P predict --machine dgx-h100-superpod --model llama3-8b --gpus 8 --recompute selective --recompute-num-layers 4 \
  >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 2 ] && grep -q "applies with --recompute full" "$T/err" && ok || bad "selective + N: rc $rc $(cat "$T/err")"
# tune keeps the asked N in the options it prints (so they reproduce the plan it priced)
$P tune --machine dgx-h100-superpod --model gpt3-1.3b --gpus 8 --gbs 64 --recompute-num-layers 2 --top 1 >"$T/t" 2>&1 &&
  grep -q -- "--recompute full --recompute-num-layers 2 --schedule" "$T/t" && ok || bad "tune options: $(head -c 400 "$T/t")"
finish
