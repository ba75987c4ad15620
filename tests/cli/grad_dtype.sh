#!/usr/bin/env bash
# grad_dtype.sh - the gradients' element size (pf_grad_bytes, docs/model.md "Memory"): Megatron keeps bf16 runs'
# gradient buffer and DP reduction in fp32 and fp16 runs' in fp16; --grad-reduce-in-bf16 (Megatron-LM's flag,
# Megatron-Bridge's grad_reduce_in_fp32 = False) halves a bf16 run's gradients and its DP gradient traffic, which is
# what lets the Llama 3 8B split of Megatron-Bridge's H100 recipe (TP 1, CP 2, 8 GPUs) fit; other frameworks'
# mixed precision keeps fp32 gradients; a precision without 2-byte gradients refuses the flag.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
L8=(--machine dgx-h100-superpod --model llama3-8b --gpus 8 --cp 2 --gbs 128 --format json)

$P predict "${L8[@]}" >"$T/fp32.json" 2>"$T/err"
rc=$?
[ $rc -eq 1 ] && grep -q "does not fit" "$T/err" && ok ||
  bad "llama3-8b CP 2 with fp32 gradients should not fit (rc $rc)"
$P predict "${L8[@]}" --grad-reduce-in-bf16 >"$T/bf16.json" 2>"$T/err" ||
  bad "--grad-reduce-in-bf16: $(head -c 300 "$T/err")"
# the same plan at TP 2 fits either way: the gradients halve, and so does the DP gradient traffic through the fabric
T2=(--machine dgx-h100-superpod --model llama3-8b --gpus 16 --tp 2 --gbs 128 --format json)
$P predict "${T2[@]}" >"$T/a.json" 2>"$T/err" && $P predict "${T2[@]}" --grad-reduce-in-bf16 >"$T/b.json" 2>>"$T/err" ||
  bad "TP 2 predictions: $(head -c 300 "$T/err")"
python3 - "$T" <<'PY' && ok || bad "gradient bytes (see above)"
import json, sys
t = sys.argv[1]
bf = json.load(open(f"{t}/bf16.json"))
assert bf["fits"] and abs(bf["memory_per_gpu_GiB"]["gradients"] - 8.03e9 * 2 / 2**30) < 0.1, bf["memory_per_gpu_GiB"]
a, b = json.load(open(f"{t}/a.json")), json.load(open(f"{t}/b.json"))
ga, gb = a["memory_per_gpu_GiB"]["gradients"], b["memory_per_gpu_GiB"]["gradients"]
assert abs(gb / ga - 0.5) < 1e-6, (ga, gb)
na, nb = a["communication"]["nic_bytes"], b["communication"]["nic_bytes"]
assert nb < 0.75 * na, (na, nb)  # the DP gradient traffic halves; the parameter all-gather stays bf16
assert b["communication"]["dp_kernel_s"] < a["communication"]["dp_kernel_s"], (a["communication"], b["communication"])
PY
$P predict --machine dgx-h100-superpod --model gpt3-1.3b --gpus 8 --precision fp32 --grad-reduce-in-bf16 \
  >/dev/null 2>"$T/err"
rc=$?
[ $rc -eq 2 ] && grep -q "needs --precision bf16 or fp8" "$T/err" && ok ||
  bad "fp32 with the flag: rc $rc $(cat "$T/err")"
# a layer list under PyTorch's mixed precision keeps fp32 gradients (fp32 parameters)
$P predict --machine dgx-h100-superpod --model resnet50 --gpus 8 --precision fp16 --mbs 64 --gbs 512 --format json \
  >"$T/rn.json" 2>"$T/err" || bad "resnet50: $(head -c 300 "$T/err")"
python3 -c "
import json; m = json.load(open('$T/rn.json'))['memory_per_gpu_GiB']
assert abs(m['gradients'] - 4 * 25.557e6 / 2**30) < 1e-3, m" && ok ||
  bad "resnet50 fp16 gradients: $(head -c 300 "$T/rn.json")"
finish
