#!/usr/bin/env bash
# bench/run.sh - wall time and peak memory of one `preflight predict` at 128,
# 1,024, 4,096 GPUs and the whole JUPITER Booster (23,536 GPUs), printed as a
# markdown table (docs/engine.md keeps the measured one).  Not a timed test.
#
#   bench/run.sh [PATH/TO/preflight] [REPEATS]
#
# Wall time is the median of REPEATS runs (default 3) of the whole process,
# including the fork()ed SimGrid children; peak memory is GNU time's %M, the
# largest resident set of the process and its reaped children.  The validation rows behind the range are
# kept in a fresh cache folder (study/vdisk.h): the first of the REPEATS predicts them, the others read them,
# as every run after a user's first does; the median is a run that read them.
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
bin=${1:-${PREFLIGHT:-$here/build/preflight}}
reps=${2:-3}
[ -x "$bin" ] || { echo "bench/run.sh: no preflight binary at $bin (build first or pass its path)" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench/run.sh: needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 2; }
export PREFLIGHT_MACHINES=${PREFLIGHT_MACHINES:-$here/machines}
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
export PREFLIGHT_CACHE=$tmp/cache

cases=(
  "128|mn5-acc, GPT-3 175B, TP4 PP32 DP1, GBS 1536|--machine mn5-acc --model gpt3-175b --nodes 32 --tp 4 --pp 32 --mbs 1 --gbs 1536 --precision fp16 --sp --dist-opt --recompute selective"
  "1,024|lumi-g, GPT-3 175B, TP8 PP16 DP8, GBS 1536|--machine lumi-g --model gpt3-175b --nodes 128 --tp 8 --pp 16 --mbs 1 --gbs 1536 --precision fp16 --sp --dist-opt --recompute selective"
  "4,096|lumi-g, GPT-3 175B, TP8 PP16 DP32, GBS 1536|--machine lumi-g --model gpt3-175b --nodes 512 --tp 8 --pp 16 --mbs 1 --gbs 1536 --precision fp16 --sp --dist-opt --recompute selective"
  "4,096|jupiter-booster, GPT-3 175B, TP4 PP16 DP64, GBS 4096|--machine jupiter-booster --model gpt3-175b --nodes 1024 --tp 4 --pp 16 --mbs 1 --gbs 4096 --precision bf16 --sp --dist-opt --recompute selective"
  "4,096|mn5-acc, GPT-3 175B, TP4 PP32 DP32, GBS 3072|--machine mn5-acc --model gpt3-175b --nodes 1024 --tp 4 --pp 32 --mbs 1 --gbs 3072 --precision fp16 --sp --dist-opt --recompute selective"
  "23,520|jupiter-booster (5,880 nodes), GPT-3 175B, TP4 PP8 DP735, GBS 11760|--machine jupiter-booster --model gpt3-175b --nodes 5880 --tp 4 --pp 8 --mbs 1 --gbs 11760 --precision bf16 --sp --dist-opt --recompute selective"
  "23,536|jupiter-booster (all 5,884 nodes), Llama 2 70B, TP4 PP4 DP1471, GBS 11768|--machine jupiter-booster --model llama2-70b --nodes 5884 --tp 4 --pp 4 --mbs 1 --gbs 11768 --precision bf16 --sp --dist-opt --recompute selective"
  "23,536|jupiter-booster (all 5,884 nodes), Llama 2 7B, pure DP23536 (dist-opt), GBS 23536|--machine jupiter-booster --model llama2-7b --nodes 5884 --tp 1 --pp 1 --mbs 1 --gbs 23536 --precision bf16 --dist-opt --recompute full"
  "23,536|jupiter-booster (all 5,884 nodes), GPT-3 1.3B, pure DP23536 all-reduce (auto: ring or tree)|--machine jupiter-booster --model gpt3-1.3b --nodes 5884 --tp 1 --pp 1 --mbs 1 --gbs 23536 --precision bf16"
  "64|lumi-g --engine full (every GCD in SimGrid), GPT-3 1.3B, TP2 PP4 DP8|--machine lumi-g --model gpt3-1.3b --nodes 8 --tp 2 --pp 4 --mbs 1 --gbs 64 --engine full"
  "256|leonardo-booster --engine full, GPT-3 1.3B, TP1 PP4 DP16|--machine leonardo-booster --model gpt3-1.3b --nodes 64 --tp 1 --pp 4 --mbs 1 --gbs 256 --engine full"
  "1,024|leonardo-booster --engine full, GPT-3 1.3B, TP1 PP4 DP256, GBS 2048 (issue 26 item 4)|--machine leonardo-booster --model gpt3-1.3b --gpus 1024 --tp 1 --pp 4 --gbs 2048 --engine full"
  "2,048|leonardo-booster --engine full, GPT-3 1.3B, TP1 PP4 DP512, GBS 2048|--machine leonardo-booster --model gpt3-1.3b --gpus 2048 --tp 1 --pp 4 --gbs 2048 --engine full"
  "4,096|leonardo-booster --engine full, GPT-3 1.3B, TP1 PP4 DP1024, GBS 2048|--machine leonardo-booster --model gpt3-1.3b --gpus 4096 --tp 1 --pp 4 --gbs 2048 --engine full"
  "4,096|lumi-g --engine full, GPT-3 175B, TP8 PP16 DP32, GBS 1536|--machine lumi-g --model gpt3-175b --nodes 512 --tp 8 --pp 16 --mbs 1 --gbs 1536 --precision fp16 --sp --dist-opt --recompute selective --engine full"
)

echo "| GPUs | case | wall (s), median of $reps | peak memory (MiB) | DES events | iteration (s) | TFLOP/s/GPU |"
echo "|---:|---|---:|---:|---:|---:|---:|"
for c in "${cases[@]}"; do
  IFS='|' read -r gpus label args <<<"$c"
  walls=()
  peak=0
  for ((i = 0; i < reps; i++)); do
    # shellcheck disable=SC2086
    if ! /usr/bin/time -f "%e %M" -o "$tmp/time" "$bin" predict $args --format json >"$tmp/out.json" 2>"$tmp/err"; then
      echo "| $gpus | $label | failed: $(head -c 200 "$tmp/err" | tr '\n' ' ') | | | | |"
      continue 2
    fi
    read -r wall kb <"$tmp/time"
    walls+=("$wall")
    [ "$kb" -gt "$peak" ] && peak=$kb
  done
  med=$(printf '%s\n' "${walls[@]}" | sort -g | awk '{a[NR]=$1} END{print a[int((NR+1)/2)]}')
  read -r ev it tf < <(python3 -c "import json,sys; d=json.load(open(sys.argv[1])); print(d['engine']['des_events'], d['iteration_time_s'], d['tflops_per_gpu'])" "$tmp/out.json")
  printf '| %s | %s | %.2f | %.0f | %s | %.4g | %.1f |\n' "$gpus" "$label" "$med" "$(echo "$peak / 1024" | bc -l)" "$ev" "$it" "$tf"
done
echo
# plans evaluated per second and core by `tune` (one worker: PREFLIGHT_JOBS=1): the evaluation phase, priced
# plans only (pruned ones - invalid or too large - are not counted), as tune reports it with PREFLIGHT_TIMING=1;
# the whole command's wall time (enumeration, pruning and the final simulation of the best 2 x top) beside it
for t in "leonardo-booster|llama2-13b|16|512" "lumi-g|gpt3-175b|64|1536" "mn5-acc|gpt3-175b|256|1536"; do
  IFS='|' read -r tm tmod tn tg <<<"$t"
  PREFLIGHT_TIMING=1 PREFLIGHT_JOBS=1 /usr/bin/time -f "%e" -o "$tmp/time" "$bin" tune --machine "$tm" --model "$tmod" \
    --nodes "$tn" --gbs "$tg" --format json >"$tmp/tune.json" 2>"$tmp/tune.err" || continue
  read -r tw <"$tmp/time"
  read -r ev es < <(sed -n 's/.*timing: \([0-9]*\) plans evaluated in \([0-9.]*\) s.*/\1 \2/p' "$tmp/tune.err")
  pr=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['plans_pruned'])" "$tmp/tune.json")
  printf 'tune %s %s on %s nodes, one worker: %s plans evaluated in %.2f s = %.0f evaluated plans/s per core (%s pruned; whole command %.2f s)\n' \
    "$tmod" "$tm" "$tn" "$ev" "$es" "$(echo "$ev / ($es + 0.0001)" | bc -l)" "$pr" "$tw"
done
# a mixture of experts at scale (issue 29's acceptance): DeepSeek-V3 on 1,024 JUPITER Booster nodes with only the
# global batch given: TP, CP, PP, the schedule, ETP, EP, the micro-batch, recomputation and the optimizer settings
# searched (669,600 plans; branch and bound: docs/proposals.md); the whole command on all cores (the bound pass and
# every pricing round over the workers: model/study/tuneprice.c), its CPU time the workers' too.  One run of
# /usr/bin/time: on this project's shared 2-core machine, time it with farm-bench -n 3 --vs OLD when the load is low
# (35.8 s of wall time, 70.1 s of CPU at a load of about 1 since tune searches ETP; 18 s before it; docs/model.md)
PREFLIGHT_TIMING=1 /usr/bin/time -f "%e %U %S" -o "$tmp/time" "$bin" tune --machine jupiter-booster --model deepseek-v3 \
  --nodes 1024 --gbs 4096 --format json >"$tmp/tune.json" 2>"$tmp/tune.err" &&
  read -r tw tu ts <"$tmp/time" &&
  printf 'tune deepseek-v3 jupiter-booster on 1024 nodes (open search): %s; whole command %.2f s (%.2f s CPU)\n' \
    "$(sed -n 's/.*timing: \([0-9]*\) plans evaluated in [0-9.]* s (\([0-9]*\) priced, \([0-9]*\) bounded.*/\1 plans evaluated (\2 priced, \3 bounded)/p' "$tmp/tune.err")" \
    "$tw" "$(echo "$tu + $ts" | bc -l)"
# the proposal sizing a user runs first: plan picks the node counts and tunes each (all cores)
for pl in "lumi-g|llama2-13b|1024|2e11"; do
  IFS='|' read -r pm pmod pg ptok <<<"$pl"
  /usr/bin/time -f "%e" -o "$tmp/time" "$bin" plan --machine "$pm" --model "$pmod" --gbs "$pg" --tokens "$ptok" \
    --format json >"$tmp/plan.json" 2>"$tmp/plan.err" || continue
  read -r pw <"$tmp/time"
  printf 'plan %s on %s, global batch %s, %s tokens: %.2f s (whole command)\n' "$pmod" "$pm" "$pg" "$ptok" "$pw"
done
echo
echo "Paired comparison against another binary (a refactor's speed check): bench/compare.sh OLD NEW"
echo "Machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo), $(uname -sr); binary: $bin"
