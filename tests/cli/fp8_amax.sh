#!/usr/bin/env bash
# fp8_amax.sh - FP8 delayed scaling's amax all-reduce (Transformer Engine's
# reduce_and_update_fp8_tensors over Megatron's TP x DP x CP amax group, after every
# forward and backward of every model chunk; model/comm/comm.c fp8_amax) is priced by the
# communication module and shown as breakdown_s.fp8_amax: zero in bf16, with the current
# recipe and on one GPU; with interleaving 12 it is 12 calls per pass, so it grows.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
amax() { # amax ARGS...: breakdown_s.fp8_amax of a GPT-3 175B prediction on 128 H100 SXM 80 GB
  $P predict --machine dgx-h100-superpod --model gpt3-175b --gpus 128 --tp 4 --pp 8 --mbs 1 --gbs 256 --sp \
    --dist-opt "$@" --format json >"$T/out" 2>"$T/err" || { bad "predict $*: $(head -c 200 "$T/err")"; echo 0; return; }
  json_get "$T/out" '["breakdown_s"]["fp8_amax"]'
}
d1=$(amax --precision fp8 --fp8-recipe delayed)
d12=$(amax --precision fp8 --fp8-recipe delayed --schedule interleaved:12)
cur=$(amax --precision fp8 --fp8-recipe current)
bf=$(amax --precision bf16)
python3 - "$d1" "$d12" "$cur" "$bf" <<'PY' && ok || bad "fp8_amax: delayed $d1, interleaved:12 $d12, current $cur, bf16 $bf"
import sys
d1, d12, cur, bf = map(float, sys.argv[1:])
print(f"fp8_amax: delayed {d1*1e3:.2f} ms, interleaved:12 {d12*1e3:.2f} ms, current {cur}, bf16 {bf}")
# latency-bound: a few to some tens of microseconds a call, 2 calls a microbatch (64 here) per chunk
assert 0 < d1 < 0.05 and d12 > 5 * d1 and cur == 0 and bf == 0
PY
# one GPU: no group to reduce over
expect_exit 0 $P predict --machine dgx-h100-superpod --model gpt3-1.3b --gpus 1 --mbs 1 --gbs 8 --precision fp8 \
  --fp8-recipe delayed --format json
[ "$(json_get "$T/out" '["breakdown_s"]["fp8_amax"]')" = "0" ] && ok || bad "fp8_amax on one GPU"
finish
