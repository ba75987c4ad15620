#!/usr/bin/env bash
# offload.sh - --cpu-offloading-num-layers N (plan.h, compute.c offload): N layers' activations wait in host memory,
# so the GPU holds (L - N) / L of the layers' activations, and each layer's transfer over the host link costs what
# it outlasts that layer's compute (free on GB200's NVLink-C2C here, paid on an H100's PCIe); Megatron's rules: PP 1,
# no recomputation.  The split is Megatron-Bridge's Llama 3 70B GB200 BF16 recipe (FSDP, 20 layers offloaded),
# which fits only with its offload.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
G=(--machine gb200-nvl72 --model llama3-70b --gpus 64 --zero 3 --gbs 128 --mbs 1 --grad-reduce-in-bf16 --format json)
$P predict "${G[@]}" >"$T/g0.json" 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && grep -q "does not fit" "$T/err" && ok || bad "70B FSDP on GB200 without offload should not fit (rc $rc)"
for n in 20 40; do
  $P predict "${G[@]}" --cpu-offloading-num-layers $n >"$T/g$n.json" 2>"$T/err" ||
    bad "offload $n: $(head -c 300 "$T/err")"
done
H=(--machine dgx-h100-superpod --model llama3-8b --gpus 8 --cp 2 --gbs 128 --grad-reduce-in-bf16 --format json)
$P predict "${H[@]}" >"$T/h0.json" 2>"$T/err" &&
  $P predict "${H[@]}" --cpu-offloading-num-layers 8 >"$T/h8.json" 2>>"$T/err" ||
  bad "H100 predictions: $(head -c 300 "$T/err")"
python3 - "$T" <<'PY' && ok || bad "offloaded activations and their transfers (see above)"
import json, sys
t = sys.argv[1]
g20, g40, h0, h8 = (json.load(open(f"{t}/{k}.json")) for k in ("g20", "g40", "h0", "h8"))
act = lambda d: d["memory_per_gpu_GiB"]["activations"]
assert g20["fits"] and g20["parallel"]["cpu_offloading_num_layers"] == 20
assert act(g40) < act(g20), (act(g20), act(g40))
# 8 of 32 layers: a quarter of the layers' activations leaves the GPU (the logits and embedding stay)
assert 0.18 < (act(h0) - act(h8)) / act(h0) <= 0.25, (act(h0), act(h8))
# PCIe Gen5 at 64 GB/s does not keep up with a layer's compute here: the step slows
assert h8["iteration_time_s"] > h0["iteration_time_s"], (h8["iteration_time_s"], h0["iteration_time_s"])
PY
$P predict --machine dgx-h100-superpod --model llama3-8b --gpus 8 --pp 2 --gbs 128 --cpu-offloading-num-layers 4 \
  >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 2 ] && grep -q "at PP 1 only" "$T/err" && ok || bad "PP 2 with offload: rc $rc $(cat "$T/err")"
# tune prices only what Megatron can run with it (PP 1, no recomputation) and prints the option with its plans
$P tune --machine dgx-h100-superpod --model gpt3-1.3b --gpus 8 --gbs 64 --cpu-offloading-num-layers 4 --top 3 \
  >"$T/t" 2>&1 &&
  grep -q -- "--pp 1 .*--recompute none --cpu-offloading-num-layers 4 --schedule" "$T/t" &&
  ! grep -q -- "--pp [2-9]" "$T/t" && ok || bad "tune with offload: $(head -c 400 "$T/t")"
finish
