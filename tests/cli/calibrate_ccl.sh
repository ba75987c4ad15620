#!/usr/bin/env bash
# calibrate_ccl.sh - `preflight calibrate --collectives` (NCCL/RCCL opened at run time by preflight-cal-ccl)
# and the overlay of its "collectives" section with --calibration, tested with SYNTHETIC files
# (tests/fixtures/calibration/ccl-synthetic-*.json): the measured busbw replaces the fabric's share of the
# line rate (one node) or the network's (two nodes).  Without a GPU the back-end must exit 3 saying why.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
FX=$PF_SRC/tests/fixtures/calibration

$P calibrate --collectives --quick -o "$T/ccl.json" >"$T/out" 2>"$T/err"; rc=$?
if [ $rc = 0 ]; then # a node with GPUs and NCCL/RCCL: a real section
  python3 - "$T/ccl.json" <<'PY' && ok || bad "calibrate --collectives: JSON"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["collectives"]
assert d["schema_version"] == 1 and s["library"] in ("nccl", "rccl") and s["results"]
assert {r["op"] for r in s["results"]} >= {"all_reduce", "all_gather", "reduce_scatter", "sendrecv"}
PY
elif [ $rc = 3 ]; then
  grep -qE "NCCL|RCCL|GPU|driver|runtime" "$T/err" && ok || bad "exit 3 without saying what is missing: $(cat "$T/err")"
  [ ! -e "$T/ccl.json" ] && ok || bad "a failed calibration wrote $T/ccl.json"
else
  bad "calibrate --collectives: exit $rc (expected 0 with a GPU, 3 without)"
fi
expect_exit 2 $P calibrate --collectives --nope
expect_grep "unknown option \"--nope\"" "$T/err"
expect_exit 0 $P calibrate --collectives --help
expect_grep "srun" "$T/out"
PREFLIGHT_CAL_DIR=/nonexistent expect_exit 3 $P calibrate --collectives
expect_grep "/nonexistent/preflight-cal-ccl" "$T/err"
# the back-end reads its numbers whole (strtol/strtod with end checks; atoi once took "5x" for 5)
CCL=$PF_BUILD/preflight-cal-ccl
expect_exit 2 "$CCL" --iters 5x
expect_grep '--iters "5x": invalid' "$T/err"
expect_exit 2 "$CCL" -f 2x
expect_grep '-f "2x": invalid' "$T/err"

# the overlay: one node -> the fabric, two nodes -> the network
expect_exit 0 $P collective --machine mn5-acc --nodes 1,2 --op all_gather -b 1G -e 1G --format csv \
  --calibration "$FX/ccl-synthetic-1node.json"
python3 - "$T/out" <<'PY' && ok || bad "1-node overlay: all_gather busbw follows the measured 300 GB/s"
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
one = float(rows[0]["busbw_GBps"]); two = float(rows[1]["busbw_GBps"])
assert abs(one / 300 - 1) < 0.01, one
assert 80 < two < 100, two  # the network keeps its default share
PY
expect_exit 0 $P collective --machine mn5-acc --nodes 2 --op all_gather -b 1G -e 1G --format csv \
  --calibration "$FX/ccl-synthetic-2nodes.json"
python3 - "$T/out" <<'PY' && ok || bad "2-node overlay: busbw follows the measured 45 GB/s"
import csv, sys
r = list(csv.DictReader(open(sys.argv[1])))[0]
assert abs(float(r["busbw_GBps"]) / 45 - 1) < 0.01, r
PY
expect_exit 0 $P predict --machine mn5-acc --model gpt3-13b --nodes 2 --tp 4 --pp 2 --gbs 16 --sp --format json
python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['breakdown_s']['tp_comm'])" "$T/out" >"$T/tp0"
expect_exit 0 $P predict --machine mn5-acc --model gpt3-13b --nodes 2 --tp 4 --pp 2 --gbs 16 --sp --format json \
  --calibration "$FX/ccl-synthetic-1node.json"
python3 - "$T/out" "$(cat "$T/tp0")" <<'PY' && ok || bad "predict --calibration: a slower fabric makes TP slower"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["breakdown_s"]["tp_comm"] > float(sys.argv[2]) and d["calibration"]
PY
# bad files
expect_exit 2 $P collective --machine mn5-acc --calibration "$FX/full-h100.json"
expect_grep "no \"collectives\" section" "$T/err"
printf '{"schema_version":1,"collectives":{"gpus_per_node":4,"results":[]}}' >"$T/bad.json"
expect_exit 2 $P collective --machine mn5-acc --calibration "$T/bad.json"
expect_grep "bad.json: field collectives.nodes" "$T/err"
printf '{"schema_version":1,"collectives":{"nodes":64,"gpus_per_node":8,"results":[]}}' >"$T/big.json"
expect_exit 2 $P collective --machine mn5-acc --calibration "$T/big.json"
expect_grep "measured on 64 nodes x 8 GPUs" "$T/err"
finish
