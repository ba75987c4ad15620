#!/usr/bin/env bash
# bench/compare.sh - two preflight binaries side by side on the commands a
# refactor must not slow down: one prediction, a tune and a plan (the
# architecture issue's speed acceptance).  Runs are paired (A then B, REPEATS
# times) so that a machine whose speed drifts still gives a fair ratio; prints
# each command's median wall time for A and B and the median of the per-pair
# ratios B/A.  Not a timed test.
#
#   bench/compare.sh OLD_BINARY NEW_BINARY [REPEATS]
set -u
here=$(cd "$(dirname "$0")/.." && pwd)
a=${1:?usage: bench/compare.sh OLD_BINARY NEW_BINARY [REPEATS]}
b=${2:?usage: bench/compare.sh OLD_BINARY NEW_BINARY [REPEATS]}
reps=${3:-5}
for x in "$a" "$b"; do [ -x "$x" ] || { echo "bench/compare.sh: no binary at $x" >&2; exit 2; }; done
[ -x /usr/bin/time ] || { echo "bench/compare.sh: needs GNU time at /usr/bin/time (apt-get install time)" >&2; exit 2; }
export PREFLIGHT_MACHINES=${PREFLIGHT_MACHINES:-$here/machines}
export PREFLIGHT_VALIDATION=${PREFLIGHT_VALIDATION:-$here/scenarios/validation}
export PREFLIGHT_PROGRESS=0
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

cases=(
  "predict|predict --machine mn5-acc --model gpt3-175b --nodes 32 --tp 4 --pp 32 --mbs 1 --gbs 1536 --precision fp16 --sp --dist-opt --recompute selective"
  "tune|tune --machine leonardo-booster --model llama2-13b --nodes 16 --gbs 512"
  "plan|plan --machine lumi-g --model llama2-13b --gbs 1024 --tokens 2e11"
)
median() { sort -g | awk '{v[NR]=$1} END{print (NR%2) ? v[(NR+1)/2] : (v[NR/2]+v[NR/2+1])/2}'; }
wall() { # wall BIN ARGS...: one run's wall seconds
  local bin=$1; shift
  # shellcheck disable=SC2068
  /usr/bin/time -f "%e" -o "$tmp/t" "$bin" $@ >/dev/null 2>"$tmp/err" || { echo "failed: $bin $*" >&2; head -3 "$tmp/err" >&2; echo nan; return; }
  cat "$tmp/t"
}
echo "| command | A median (s) | B median (s) | median of B/A over $reps pairs |"
echo "|---|---:|---:|---:|"
for c in "${cases[@]}"; do
  IFS='|' read -r name args <<<"$c"
  wall "$a" "$args" >/dev/null; wall "$b" "$args" >/dev/null # warm-up (page cache)
  : >"$tmp/a"; : >"$tmp/b"; : >"$tmp/r"
  for ((i = 0; i < reps; i++)); do
    ta=$(wall "$a" "$args"); tb=$(wall "$b" "$args")
    echo "$ta" >>"$tmp/a"; echo "$tb" >>"$tmp/b"
    awk -v x="$ta" -v y="$tb" 'BEGIN{ if (x > 0) printf "%.4f\n", y / x }' >>"$tmp/r"
  done
  printf '| %s | %.3f | %.3f | %.3f |\n' "$name" "$(median <"$tmp/a")" "$(median <"$tmp/b")" "$(median <"$tmp/r")"
done
echo
echo "A: $a"
echo "B: $b"
echo "Machine: $(nproc) cores, $(awk '/MemTotal/{printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
