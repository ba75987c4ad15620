#!/usr/bin/env bash
# tune_sharding.sh - tune and plan search the sharding level (study/tune.c, tunezero.c): the issue's
# acceptance command considers FSDP plans and reports the best one with its memory; with --zero 3 every
# ranked plan is ZeRO-3; plan prints the sharding it chose.
# ctest-labels: slow
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
# tune considers FSDP plans and reports the best with its memory (the issue's acceptance command)
expect_exit 0 $P tune --machine leonardo-booster --model llama2-13b --nodes 4 --gbs 256
expect_grep "^best sharded plan \(ZeRO-[23].*\): [0-9.]+ s \([+-][0-9.]+ % time vs the best, screened\), [0-9.]+ GiB per GPU: .*--zero [23]" "$T/out"
expect_exit 0 $P tune --machine leonardo-booster --model llama2-13b --nodes 4 --gbs 256 --zero 3 --top 3 --format json
python3 - "$T/out" <<'PY' && ok || bad "tune --zero 3: every row ZeRO-3, best_sharded with memory"
import json, sys
d = json.load(open(sys.argv[1]))
assert all(r["zero"] == 3 for r in d["rows"]), [r["zero"] for r in d["rows"]]
assert d["best_sharded"]["zero"] == 3 and d["best_sharded"]["memory_GiB"] > 0
PY
# plan prints the sharding it chose
expect_exit 0 $P plan --machine leonardo-booster --model llama2-13b --gbs 256 --nodes 4 --tokens 1e10
expect_grep " zero-[0-3]" "$T/out"
finish
