#!/usr/bin/env bash
# collective.sh - `preflight collective` (nccl-tests-style tables of one collective priced alone) and
# `preflight validate` on measured collectives (scenarios/validation/collectives.csv, nccl-tests output).
# Issue 9 acceptance: mn5-acc all_reduce -b 8 -e 8G -f 2 at 1, 2, 16 and 128 nodes prints nccl-tests tables,
# large messages stay within the route's line rate, small ones are latency-bound; the published rows give a
# median busbw error of at most 15 %.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT

expect_exit 0 $P collective --machine mn5-acc --nodes 1 --op all_reduce -b 8 -e 8G -f 2
expect_grep "^#       size         count      type   redop    root     time   algbw   busbw  #wrong     time" "$T/out"
expect_grep "^#        \(B\)    \(elements\)" "$T/out"
expect_grep "^# Avg bus bandwidth    : [0-9.]+" "$T/out"
rows=$(grep -cE '^ +[0-9]+ +[0-9]+ +float +sum +-1 ' "$T/out")
[ "$rows" = 31 ] && ok || bad "8 B .. 8 GiB by 2: $rows rows, expected 31"
expect_exit 0 $P collective --machine mn5-acc --nodes 2,16,128 --op all_reduce -b 8 -e 8G -f 2 --format json
python3 - "$T/out" <<'PY' && ok || bad "multi-node all_reduce: line rate, latency-bound small messages"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["schema_version"] == 1 and d["op"] == "all_reduce" and d["library"] == "nccl"
assert [r["nodes"] for r in d["runs"]] == [2, 16, 128]
for r in d["runs"]:
    res = r["results"]
    assert len(res) == 31 and res[0]["size_B"] == 8 and res[-1]["size_B"] == 8 * 2**30
    big = res[-1]["busbw_GBps"]
    # 4 x NDR200 per node: 100 GB/s line rate for the node, nccl-tests' busbw of a ring or tree
    assert 70 <= big <= 100, (r["nodes"], big)
    # small messages: time flat (latency), busbw ~ 0
    t8, t32k = res[0]["time_us"], res[12]["time_us"]
    assert t8 > 5 and t32k < 1.2 * t8, (t8, t32k)
    assert res[0]["busbw_GBps"] < 0.01
    print(f"{r['nodes']:4d} nodes: 8 B {t8} us, 8 GiB busbw {big} GB/s ({res[-1]['algorithm']}/{res[-1]['protocol']})")
PY
# other ops, csv, determinism
for op in all_gather reduce_scatter alltoall sendrecv; do
  expect_exit 0 $P collective --machine lumi-g --nodes 2 --op $op -b 1M -e 64M -f 8 --format csv
  expect_grep "^lumi-g,$op,2,8,16,1048576," "$T/out"
done
expect_exit 0 $P collective --machine lumi-g --nodes 32 --placement scattered --seed 3 -e 1G
cp "$T/out" "$T/a"
expect_exit 0 $P collective --machine lumi-g --nodes 32 --placement scattered --seed 3 -e 1G
cmp -s "$T/out" "$T/a" && ok || bad "collective: output differs between identical runs"
expect_grep "placement scattered" "$T/out"
# bad input
expect_exit 2 $P collective --machine mn5-acc --op all_sum
expect_grep "--op \"all_sum\"" "$T/err"
expect_exit 2 $P collective --machine mn5-acc -b lots
expect_grep "^preflight collective: -b \"lots\"" "$T/err"
# more than the machine has: the job cannot run as asked, exit 1 as predict's --nodes (docs/exit-codes.md)
expect_exit 1 $P collective --machine mn5-acc --nodes 99999
expect_grep "--nodes 99999 exceeds the [0-9]+ nodes of mn5-acc" "$T/err"
expect_exit 1 $P collective --machine mn5-acc --gpus-per-node 9
expect_exit 2 $P collective --machine mn5-acc -b 1G -e 1K
expect_exit 2 $P collective
expect_exit 0 $P collective --help
expect_grep "^  -b SIZE" "$T/out"

# the published rows: median busbw error within 15 %
expect_exit 0 $P validate "$PF_SRC/scenarios/validation/collectives.csv" --max-error 15
expect_grep "^summary: median \|error\| [0-9.]+ %" "$T/out"
expect_grep "discoverer-gpu +all_reduce .* nvls/Simple" "$T/out"
expect_exit 0 $P validate "$PF_SRC/scenarios/validation/collectives.csv" --format json
python3 - "$T/out" <<'PY' && ok || bad "collective validation JSON"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["summary"]["predicted"] == len(d["rows"]) >= 7
assert d["summary"]["median_abs_pct_error"] <= 15
assert all(r["source"] for r in d["rows"])
PY
# nccl-tests output: nodes and GPUs per node from its "# Rank" lines
F=$PF_SRC/tests/fixtures/collectives/all_reduce_perf-2x4.txt
expect_exit 0 $P validate "$F" --machine mn5-acc
expect_grep "mn5-acc +all_reduce +2 +4 +1 GiB +busbw +85.41" "$T/out"
expect_grep "^summary: median" "$T/out"
expect_exit 0 $P validate "$F" --machine mn5-acc --nodes 1 --gpus-per-node 8 --summary-only
expect_exit 2 $P validate "$F"
expect_grep "needs --machine" "$T/err"
printf 'machine,op,nodes,size_B,metric,value,source\nmn5-acc,all_reduce,1,1e9,busbw,fast,x\n' >"$T/bad.csv"
expect_exit 2 $P validate "$T/bad.csv"
expect_grep "bad.csv:2: value \"fast\"" "$T/err"
printf 'machine,op,nodes,size_B,metric,value,source\nnosuch,all_reduce,1,1e9,busbw,1,x\n' >"$T/bad.csv"
expect_exit 2 $P validate "$T/bad.csv"
expect_grep "bad.csv:2: machine \"nosuch\"" "$T/err"
# the tuner per library version (ccltuner.c, docs/communication.md 3.4): the machine file's ccl.version picks
# NCCL's tables, and the choice follows them: 16 DGX H100 nodes, all-reduce of 512 MiB: NCCL 2.18's tree
# Simple step (4 / 14 us) makes Simple the cheapest protocol, NCCL 2.19-2.20's (28 us) LL128; no version: the
# newest range, said so
for v in 2.18.3 2.19.3; do
  sed "s/^  power = { node_base/  ccl = { library = \"nccl\"; version = \"$v\"; };\n  power = { node_base/" \
    "$PF_SRC/machines/dgx-h100-superpod.cfg" >"$T/dgx-$v.cfg"
  expect_exit 0 $P collective --machine "$T/dgx-$v.cfg" --nodes 16 -b 512M -e 512M
  cp "$T/out" "$T/tuner-$v.out"
done
expect_grep "^# tuner: NCCL 2.18 tuning constants for the machine file's ccl.version 2.18.3 \(NVIDIA/nccl src/graph/tuning.cc at v2.18.3-1" "$T/tuner-2.18.3.out"
expect_grep "^# tuner: NCCL 2.19-2.20 tuning constants for the machine file's ccl.version 2.19.3" "$T/tuner-2.19.3.out"
expect_grep "^ +536870912 .* tree +Simple$" "$T/tuner-2.18.3.out"
expect_grep "^ +536870912 .* tree +LL128$" "$T/tuner-2.19.3.out"
expect_exit 0 $P collective --machine dgx-h100-superpod --nodes 1 -b 1M -e 1M
expect_grep "^# tuner: NCCL 2.23-2.28 tuning constants assumed: the machine file names no ccl.version" "$T/out"
expect_exit 0 $P collective --machine lumi-g --nodes 2 -b 1M -e 1M --format json
[ "$(json_get "$T/out" '["tuner"]')" = "RCCL 2.18-2.20 (ROCm 6.0-6.2)" ] && ok || bad "lumi-g: RCCL's own tables"
# all-to-all: one NIC per GPU (nccl-tests#267): e4-gh200 bonds two NICs to its GPU, the all-to-all's busbw at
# 2 nodes is one NIC's (22.5 GB/s at 0.9 of 200 Gb/s), send/receive uses both
expect_exit 0 $P collective --machine e4-gh200 --nodes 2 --op alltoall -b 1G -e 1G
expect_grep "^# Collective test starting: alltoall_perf" "$T/out"
expect_grep "^ +1073741824 +134217728 +float +none +-1 .* 22\.[0-9]+ +N/A .*direct" "$T/out"
finish
