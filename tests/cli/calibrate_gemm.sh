#!/bin/bash
# calibrate_gemm.sh - `preflight calibrate --gemm` / `--for SCENARIO.cfg` without
# a GPU: usage errors (exit 2), the unavailable paths (exit 3, nothing written,
# no temporary shape file left), and the shapes a scenario hands the back-end.
# The GEMM table's use by predict is tested with a synthetic table
# (unit/test_calibration_gemm).
. "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
S=$PF_SRC/tests/fixtures/scenarios/gemm-for.cfg

expect_exit 0 "$P" calibrate --help
expect_grep 'for SCENARIO.cfg' "$T/out"
expect_grep 'calibrate --backend cuda --gemm' "$T/out"
# the cpu back-end has no vendor GEMM library
expect_exit 2 "$P" calibrate --backend cpu --gemm
expect_grep 'use --backend cuda or hip' "$T/err"
expect_exit 2 "$P" calibrate --backend cpu --for "$S"
expect_exit 2 "$P" calibrate --backend cuda --for "$S" --gemm-shapes "$S"
expect_grep 'exclude each other' "$T/err"
# a scenario that does not describe one run is an error before any device is touched
expect_exit 2 "$P" calibrate --backend cuda --for "$PF_SRC/scenarios/epicure-lumi-strong.cfg"
expect_grep 'sweep axis' "$T/err"
expect_exit 2 "$P" calibrate --backend cuda --for "$T/missing.cfg"

dir=$(dirname "$P")
if [ -x "$dir/preflight-cal-cuda" ] && ! { [ -e /dev/nvidiactl ] || [ -e /dev/nvidia0 ]; }; then
  # no GPU here: exit 3 with what was looked for; the output file is not created; the shapes file is removed
  before=$(ls "${TMPDIR:-/tmp}" | grep -c '^preflight-gemm-' || true)
  expect_exit 3 "$P" calibrate --backend cuda --quick --for "$S" -o "$T/g.json"
  expect_grep 'GEMM shapes of' "$T/err"
  expect_grep 'libcuda.so.1' "$T/err"
  if [ -e "$T/g.json" ]; then bad "no output on exit 3"; else ok; fi
  after=$(ls "${TMPDIR:-/tmp}" | grep -c '^preflight-gemm-' || true)
  if [ "$after" -le "$before" ]; then ok; else bad "temporary shape file left behind"; fi
  expect_exit 3 "$dir/preflight-cal-cuda" --gemm --quick
  expect_grep 'back-end unavailable' "$T/err"
  # the back-end checks its shapes file before it looks for a device (usage error, exit 2)
  printf 'm,n,k,layout,dtype\n64,64,64,XY,bf16\n' > "$T/bad.csv"
  expect_exit 2 "$dir/preflight-cal-cuda" --gemm-shapes "$T/bad.csv"
  expect_grep 'bad.csv:2' "$T/err"
else
  echo "# skip: preflight-cal-cuda not built or a GPU is present"
fi

# every calibration recorded on a real GPU (calibrate/results/) loads, with its GEMM table, and overlays its
# device: the first H200 run wrote each GEMM row's sample count as a second key "n" beside the shape's n,
# which the loader refuses (a duplicate key); the rows now say "samples"
for f in "$PF_SRC"/calibrate/results/*.json; do
  case "$f" in
    *-torch-*.json) continue ;; # PyTorch measurements beside the calibrations, not calibrations
    *-h200-141-*) m=discoverer-gpu ;;
    *-h100-sxm-80-*) m=dgx-h100-superpod ;;
    *) bad "$f: no machine with its device in this test"; continue ;;
  esac
  expect_exit 0 "$P" predict --machine $m --model gpt3-1.3b --nodes 1 --tp 1 --pp 1 --gbs 8 --mbs 1 \
    --calibration "$f" --format json
  expect_grep '"calibration"' "$T/out"
done
if grep -q '"n":[^,]*,[^}]*"cv":[^,]*,[^}]*"n":' "$PF_SRC"/calibrate/results/*.json; then
  bad "a GEMM row with the key n twice"
else ok; fi
finish
