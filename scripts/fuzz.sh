#!/usr/bin/env bash
# fuzz.sh - build the libFuzzer targets with the whole library instrumented (clang, cmake -DPF_FUZZ=ON:
# -fsanitize=fuzzer-no-link,address,undefined on every object) and run each for FUZZ_TIME seconds, one
# after the other, from its seeds (tests/fuzz/seeds.txt) and the inputs that once crashed it
# (tests/fuzz/regressions/TARGET/).  `make fuzz` runs it; CI runs it with FUZZ_TIME=4.  docs/fuzzing.md.
#
# usage: scripts/fuzz.sh [TARGET...]      (default: every tests/fuzz/fuzz_*.c)
#   FUZZ_TIME   seconds per target (default 600)
#   FUZZ_BUILD  build folder (default build-fuzz); the corpus grows in FUZZ_BUILD/corpus/TARGET between
#               runs, crashing inputs land in FUZZ_BUILD/crashes/TARGET/, the summary in FUZZ_BUILD/fuzz-report.txt
#   FUZZ_JOBS   build parallelism (default nproc)
# Exit status 1 when a target found a crash, a leak, undefined behaviour or a time-out; 0 otherwise.
set -euo pipefail
src=$(cd "$(dirname "$0")/.." && pwd)
time_s=${FUZZ_TIME:-600}
build=${FUZZ_BUILD:-$src/build-fuzz}
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
CC=${FUZZ_CC:-clang} cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DPF_FUZZ=ON \
  -DPF_GPU_BACKENDS=OFF >/dev/null
cmake --build "$build" -j"$jobs" --target fuzz_targets
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in "$src"/tests/fuzz/fuzz_*.c; do
    t=$(basename "$f" .c); t=${t#fuzz_}
    [ "$t" = file ] || targets+=("$t")
  done
fi
export PREFLIGHT_MACHINES="$src/machines"
# fno-sanitize-recover makes UBSan abort, so libFuzzer keeps the input that showed it
export UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1
export LSAN_OPTIONS=suppressions=$src/tests/lsan.supp   # libconfig's own leaks (the file says which)
report="$build/fuzz-report.txt"
: >"$report"
failed=0
for t in "${targets[@]}"; do
  corpus="$build/corpus/$t" crashes="$build/crashes/$t"
  mkdir -p "$corpus" "$crashes"
  line=$(grep -E "^$t[ ]" "$src/tests/fuzz/seeds.txt" || true)
  [ -n "$line" ] || { echo "fuzz.sh: no seeds for $t in tests/fuzz/seeds.txt" >&2; exit 2; }
  (cd "$src" && for g in ${line#* }; do [ -f "$g" ] && cp "$g" "$corpus/seed-$(echo "$g" | tr / _)"; done)
  [ -d "$src/tests/fuzz/regressions/$t" ] && cp "$src/tests/fuzz/regressions/$t"/* "$corpus/" 2>/dev/null || true
  log="$build/fuzz-$t.log"
  echo "fuzz.sh: $t for ${time_s} s (log $log)" >&2
  rc=0
  # -timeout: one input taking 25 s is a finding (a hang); -rss_limit_mb: 2 GiB is a finding (issue 30's
  # "cost of hostile inputs"); -close_fd_mask=3: the commands' own messages stay out of the log
  ASAN_OPTIONS=detect_leaks=1 "$build/tests/fuzz_$t" -max_total_time="$time_s" -timeout=25 -rss_limit_mb=2048 \
    -close_fd_mask=3 -print_final_stats=1 -artifact_prefix="$crashes/" "$corpus" >"$log" 2>&1 || rc=$?
  execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
  rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log" | tail -1)
  cov=$(grep -Eo 'cov: [0-9]+' "$log" | tail -1 || true)
  finding=none
  if [ "$rc" -ne 0 ]; then
    finding="exit $rc: $(grep -m1 -E 'ERROR: |runtime error:|==ERROR|Timeout|out-of-memory' "$log" || echo see log)"
    failed=1
  fi
  printf '%-12s %6s s  %10s execs  %6s exec/s  %-10s findings: %s\n' "$t" "$time_s" "${execs:-?}" "${rate:-?}" \
    "${cov:-cov: ?}" "$finding" | tee -a "$report"
done
exit $failed
