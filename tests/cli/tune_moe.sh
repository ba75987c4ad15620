#!/usr/bin/env bash
# tune_moe.sh - tune on a mixture of experts (issue 29): DeepSeek-V3 on 1,024 JUPITER Booster nodes (4,096 GH200)
# with TP 2 and PP 16 kept.  The table has the expert-parallel size, the memory per GPU and the all-to-alls' share
# of the iteration as columns, the JSON the same per finalist (ep, memory_GiB, ep_a2a_share = breakdown ep_a2a /
# iteration); pinned to EP 1 with ZeRO-1 no plan fits, and the refusal names the memory terms that do not fit
# (weights and fp32 gradients of all 256 experts of a stage: 128.6 GiB of the GH200's 96 GiB when this test was
# written).  The whole acceptance search's wall time is bench/run.sh's (not a timed test).  About 10 s of CPU.
# ctest-labels: slow
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.bash"
P=${PREFLIGHT:?}
cd "$T"
args=(--machine jupiter-booster --model deepseek-v3 --nodes 1024 --gbs 4096 --tp 2 --pp 16 --cp 1 --mbs 1
  --recompute full)
expect_exit 0 "$P" tune "${args[@]}" --top 5
expect_grep '^rank +DP +EP +iter \(s\) +tokens/s +TFLOP/s/G +mem GiB +a2a % ' "$T/out"
python3 - "$T/out" <<'PY' && ok || bad "the table's EP, memory and all-to-all columns"
import sys
rows = [l.split() for l in open(sys.argv[1]) if l[:4].strip().isdigit()]
assert len(rows) == 5, rows
for r in rows:
    ep, mem, a2a = int(r[2]), float(r[6]), float(r[7])
    assert ep >= 2 and ("--ep %d" % ep) in " ".join(r), r   # the EP column is the plan's --ep
    assert 0 < mem <= 96.0, r
    assert 0 < a2a < 100, r
PY
expect_exit 0 "$P" tune "${args[@]}" --top 5 --format json -o t.json
python3 - t.json <<'PY' && ok || bad "the JSON's ep, memory_GiB and ep_a2a_share"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
for r in rows:
    assert r["ep"] >= 2, r
    assert 0 < r["memory_GiB"] <= 96.0
    share = r["ep_a2a_share"]
    assert abs(share - r["breakdown_s"]["ep_a2a"] / r["iteration_time_s"]) < 1e-9, r
    assert 0 < share < 1
PY
# EP 1 with the optimizer state sharded (ZeRO-1) but weights and gradients whole: refused with the terms
expect_exit 1 "$P" tune "${args[@]}" --ep 1 --dist-opt
expect_grep 'no parallel configuration of deepseek-v3 fits' "$T/err"
expect_grep 'the closest, --tp 2 --pp 16 .*--mbs 1' "$T/err"
expect_grep 'needs [0-9.]+ GiB per GPU \(weights [0-9.]+, gradients [0-9.]+, optimizer [0-9.]+, activations [0-9.]+, overhead [0-9.]+\) but gh200-96 has 96.0 GiB' "$T/err"
expect_grep 'gradients \+ weights alone: [0-9.]+ GiB' "$T/err"
python3 - "$T/err" <<'PY' && ok || bad "the terms named add up past the device"
import re, sys
t = open(sys.argv[1]).read()
w, g = (float(x) for x in re.search(r"weights ([0-9.]+), gradients ([0-9.]+)", t).groups())
alone = float(re.search(r"alone: ([0-9.]+) GiB", t).group(1))
assert abs(w + g - alone) < 0.2 and alone > 96.0, (w, g, alone)
PY
finish
