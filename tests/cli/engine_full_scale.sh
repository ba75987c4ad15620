#!/usr/bin/env bash
# engine_full_scale.sh - `--engine full` at scale (issue 26 item 4): a collective step's
# repetitions are one transfer per pair (model/engine/fullcall.h), so the simulated
# activities grow linearly with the GPUs, not as the ring's 2p(p-1) flows, and the ring's
# ranks still finish each step together (a barrier per step), so the result stays within
# 5 % of the default engine where the per-repetition replay was (leonardo-booster, 1,024
# GPUs, a DP ring over 256 ranks: +0.45 % before, docs/engine.md 6).  Past 4,096 GPUs the
# engine says where it stops.
# ctest-labels: slow
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
events() { json_get "$1" '["engine"]["des_events"]'; }
# the same 8 microbatches per pipeline at 256 and 1,024 GPUs (GBS = 8 x DP)
for g in 256 1024; do
  expect_exit 0 $P predict --machine leonardo-booster --model gpt3-1.3b --gpus $g --tp 1 --pp 4 --gbs $((g * 2)) \
    --engine full --format json
  cp "$T/out" "$T/full$g.json"
done
e256=$(events "$T/full256.json"); e1024=$(events "$T/full1024.json")
# linear: 4x the GPUs give about 4x the activities (the per-repetition replay gave 1,075,200 at 1,024, 12x)
python3 -c "import sys; sys.exit(0 if $e1024 <= 4.5 * $e256 else 1)" && ok ||
  bad "activities grow faster than the GPUs: $e256 at 256, $e1024 at 1,024"
python3 -c "import sys; sys.exit(0 if $e1024 < 100000 else 1)" && ok || bad "$e1024 activities at 1,024 GPUs"
expect_exit 0 $P predict --machine leonardo-booster --model gpt3-1.3b --gpus 1024 --tp 1 --pp 4 --gbs 2048 --format json
python3 - "$T/out" "$T/full1024.json" <<'PY' && ok || bad "engines differ by more than 5 % at 1,024 GPUs"
import json, sys
a, b = (json.load(open(f))["iteration_time_s"] for f in sys.argv[1:3])
print(f"leonardo-booster 1,024 GPUs: default {a:.6f} s, full {b:.6f} s ({100 * (b / a - 1):+.2f} %)")
sys.exit(0 if abs(b / a - 1) <= 0.05 else 1)
PY
# where it stops
expect_exit 2 $P predict --machine leonardo-booster --model gpt3-1.3b --gpus 8192 --tp 1 --pp 4 --gbs 8192 --engine full
expect_grep "stops at 4096 GPUs" "$T/err"
finish
