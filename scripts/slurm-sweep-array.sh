#!/usr/bin/env bash
# slurm-sweep-array.sh - a study of about 10^6 configurations as a Slurm job array.
#
# Every array task computes one disjoint slice of the points (`preflight sweep --shard I/N --format csv`:
# about 1/N of the points each, exact numbers, no per-point documents), and a job that depends on the
# array joins the slices (`preflight merge`), byte-identical to running the whole sweep in one process.
#
#   scripts/slurm-sweep-array.sh submit [N]   # sbatch an N-task array (default 1000) and the merge after it
#   scripts/slurm-sweep-array.sh task         # one array task (what the array runs; uses SLURM_ARRAY_TASK_ID)
#   scripts/slurm-sweep-array.sh merge [N]    # join the N shards into study.csv
#   scripts/slurm-sweep-array.sh local K      # a small study (48 points) in K shards on this machine, merged
#                                             # and compared with the unsharded sweep (no Slurm needed)
#
# The study: 5 EuroHPC machines x 6 models x 13 node counts (1..4096) x TP 1,2,4,8 x PP 1..32 x micro-batch
# 1,2,4 x recompute none/selective/full x schedule 1F1B/interleaved:2 x distributed optimizer on/off x
# --overlap-grad-reduce on/off x precision bf16/fp8 = 1,347,840 points.  Points that are not valid plans, do
# not fit or ask for a precision the device lacks are rows with the reason.
# Environment: PREFLIGHT (the binary, default build/preflight), OUT (folder, default study/),
# SBATCH_ACCOUNT / SBATCH_PARTITION as sbatch reads them.
#SBATCH --job-name=preflight-study
#SBATCH --time=01:00:00
#SBATCH --nodes=1
#SBATCH --output=%x-%A_%a.out
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
P=${PREFLIGHT:-$here/build/preflight}
OUT=${OUT:-study}
STUDY=(--machines lumi-g,leonardo-booster,mn5-acc,jupiter-booster,meluxina-gpu
       --models llama2-7b,llama2-13b,llama2-70b,llama3-8b,llama3-70b,gpt3-175b
       --nodes 1..4096 --vary tp=1,2,4,8 --vary pp=1,2,4,8,16,32 --vary mbs=1,2,4
       --vary recompute=none,selective,full --vary schedule=1f1b,interleaved:2 --vary dist-opt=on,off
       --vary overlap-grad-reduce=on,off --vary precision=bf16,fp8 --gbs 1024 --sp)
SMALL=(--machines mn5-acc,leonardo-booster --model llama2-7b --nodes 4,8,16 --vary tp=2,4
       --vary recompute=selective,full --vary dist-opt=on,off --gbs 512 --sp)

case "${1:-}" in
  submit)
    n=${2:-1000}
    mkdir -p "$OUT"
    jid=$(sbatch --parsable --array=1-"$n" --export=ALL,SHARDS="$n",OUT="$OUT" "$0" task)  # not-run-by-tests: submit needs a Slurm cluster (tests use `local`)
    sbatch --dependency=afterok:"$jid" --export=ALL,OUT="$OUT" "$0" merge "$n"  # not-run-by-tests: as above
    ;;
  task)
    n=${SHARDS:?SHARDS is set by submit}
    i=${SLURM_ARRAY_TASK_ID:?run through sbatch --array}
    "$P" sweep "${STUDY[@]}" --shard "$i/$n" --format csv -o "$OUT/shard-$i.csv"
    ;;
  merge)
    n=${2:-1000}
    "$P" merge "$OUT"/shard-*.csv --format csv -o "$OUT/study.csv"
    echo "$OUT/study.csv: $(($(wc -l <"$OUT/study.csv") - 1)) points from $n shards"
    ;;
  local)
    k=${2:-4}
    tmp=$(mktemp -d)
    trap 'rm -rf "$tmp"' EXIT
    for ((i = 1; i <= k; i++)); do
      "$P" sweep "${SMALL[@]}" --shard "$i/$k" --format csv -o "$tmp/shard-$i.csv"
    done
    "$P" merge "$tmp"/shard-*.csv --format csv -o "$tmp/merged.csv"
    "$P" sweep "${SMALL[@]}" --format csv -o "$tmp/whole.csv"
    cmp "$tmp/merged.csv" "$tmp/whole.csv"
    echo "local study: $(($(wc -l <"$tmp/merged.csv") - 1)) points in $k shards, merged result identical to the unsharded sweep"
    ;;
  *)
    sed -n '2,20p' "$0" | sed 's/^# \{0,1\}//'
    exit 2
    ;;
esac
