#!/usr/bin/env bash
# validate_ran.sh - a measured row's plan ran, so validate predicts it where the memory model puts it over the
# device only by its framework allowance (an assumption: memory.c), with that disagreement as the row's note; a row
# whose model state alone exceeds the device is still not predicted (docs/validation.md, "Rows").
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
H=machine,model,layers,hidden,heads,seq,vocab,nodes,gpus,tp,pp,dp,mbs,gbs,precision,sp,dist_opt,recompute,schedule
H=$H,metric,value,unit,baseline_nodes,source,notes,use,cp
R=,,,,,1,,1,1,,1,128,bf16,false,true,none,1f1b,iteration_time_s,10,s,,test,,check
printf '%s\n%s\n' "$H" "dgx-h100-superpod,llama3-8b,$R,2" >"$T/r.csv"
PREFLIGHT_CACHE=off $P validate "$T/r.csv" >"$T/out" 2>"$T/err" &&
  grep -q "1 predicted, 0 not predicted" "$T/out" && grep -q "memory: 81.9 of 80.0 GiB a GPU predicted" "$T/out" && ok ||
  bad "over by the allowance: $(cat "$T/out" "$T/err" | head -c 400)"
PREFLIGHT_CACHE=off $P validate "$T/r.csv" --format json >"$T/j" 2>"$T/err" &&
  python3 -c "
import json; r = json.load(open('$T/j'))['rows'][0]
assert r['status'] == 'predicted' and r['note'].startswith('memory:'), r" && ok || bad "json note: $(head -c 300 "$T/j")"
# predict keeps its verdict: the same plan asked of predict does not fit
$P predict --machine dgx-h100-superpod --model llama3-8b --gpus 8 --cp 2 --gbs 128 >/dev/null 2>"$T/err"
[ $? -eq 1 ] && grep -q "does not fit" "$T/err" && ok || bad "predict should still refuse it: $(cat "$T/err")"
# the model state alone over the device (GPT-3 175B on one GPU's share): not predicted
printf '%s\n%s\n' "$H" "dgx-h100-superpod,gpt3-175b,$R,1" >"$T/r2.csv"
PREFLIGHT_CACHE=off $P validate "$T/r2.csv" >"$T/out" 2>"$T/err"
[ $? -eq 1 ] && grep -q "does not fit" "$T/out" && ok ||
  bad "175B on 8 GPUs should not be predicted: $(head -c 300 "$T/out")"
finish
