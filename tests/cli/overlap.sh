#!/usr/bin/env bash
# overlap.sh - Megatron-LM's --overlap-grad-reduce / --overlap-param-gather / --ddp-bucket-size on the
# command line: the flags reach the JSON and the table's plan line (and stay out of default outputs),
# overlap never slows the iteration and never exposes more DP time, outputs are byte-identical run to
# run, a scenario file sets them as the flags do, --overlap-param-gather without --dist-opt and
# --engine full with overlap exit 2 naming the options, and the trace shows stage 0's gradient
# reduction starting inside its last backward and the iteration ending where the JSON says.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
BASE=(--machine lumi-g --model gpt-857m --nodes 32 --mbs 1 --gbs 512 --precision fp16 --dist-opt)

expect_exit 0 $P predict "${BASE[@]}" --format json;                                              cp "$T/out" "$T/off.json"
expect_exit 0 $P predict "${BASE[@]}" --overlap-grad-reduce --format json;                        cp "$T/out" "$T/ogr.json"
expect_exit 0 $P predict "${BASE[@]}" --overlap-grad-reduce --overlap-param-gather --format json; cp "$T/out" "$T/both.json"
expect_exit 0 $P predict "${BASE[@]}" --overlap-grad-reduce --overlap-param-gather --format json; cp "$T/out" "$T/both2.json"
cmp -s "$T/both.json" "$T/both2.json" && ok || bad "two identical runs with overlap differ"

python3 - "$T/off.json" "$T/ogr.json" "$T/both.json" <<'PY' && ok || bad "JSON flags / overlap invariants"
import json, sys
off, ogr, both = (json.load(open(f)) for f in sys.argv[1:4])
assert "overlap_grad_reduce" not in off["parallel"], off["parallel"]      # default output unchanged
assert ogr["parallel"]["overlap_grad_reduce"] is True and ogr["parallel"]["overlap_param_gather"] is False
assert both["parallel"]["overlap_grad_reduce"] is True and both["parallel"]["overlap_param_gather"] is True
t = [d["iteration_time_s"] for d in (off, ogr, both)]
e = [d["breakdown_s"]["dp_comm_exposed"] for d in (off, ogr, both)]
# 857M params in 256e6-parameter buckets over DP 256: each bucket's ring pays 255 steps x 31 us of RCCL's measured
# network step on LUMI-G (docs/communication.md 3.3), so overlapping the gradient reduce alone may cost up to 2 %
# of the iteration and 5 % of the exposed DP time; with the parameter all-gather overlapped too it gains
assert t[2] <= t[1] <= t[0] * 1.02, t
assert 0 <= e[2] <= e[1] <= e[0] * 1.05, e
assert e[2] < e[0] and t[2] < t[0], (t, e)
print("iteration", t, "dp exposed", e)
PY

# table: the plan line names the options
expect_exit 0 $P predict "${BASE[@]}" --overlap-grad-reduce --overlap-param-gather
expect_grep "^plan .*dist-opt, overlap-grad-reduce, overlap-param-gather" "$T/out"

# a scenario file sets the same
cat > "$T/s.cfg" <<'EOF'
machine = "lumi-g"; model = "gpt-857m"; nodes = 32; mbs = 1; gbs = 512; precision = "fp16";
dist_opt = true; overlap_grad_reduce = true; overlap_param_gather = true;
EOF
expect_exit 0 $P predict "$T/s.cfg" --format json
cmp -s "$T/out" "$T/both.json" && ok || bad "scenario file differs from the flags"

# --ddp-bucket-size reaches the JSON
expect_exit 0 $P predict "${BASE[@]}" --overlap-grad-reduce --ddp-bucket-size 100e6 --format json
expect_grep '"ddp_bucket_size":[[:space:]]*100000000' "$T/out"
expect_exit 2 $P predict "${BASE[@]}" --overlap-grad-reduce --ddp-bucket-size 0
expect_grep "ddp-bucket-size" "$T/err"

# errors name both options
expect_exit 2 $P predict --machine lumi-g --model gpt-857m --nodes 32 --gbs 512 --overlap-param-gather
expect_grep "overlap-param-gather" "$T/err"
expect_grep "dist-opt" "$T/err"
expect_exit 2 $P predict --machine lumi-g --model gpt3-1.3b --nodes 8 --tp 2 --pp 4 --gbs 64 --engine full --overlap-grad-reduce
expect_grep "overlap-grad-reduce" "$T/err"
expect_grep "engine full" "$T/err"

# --help lists them
expect_exit 0 $P predict --help
for o in overlap-grad-reduce overlap-param-gather ddp-bucket-size; do expect_grep "^  --$o" "$T/out"; done

# trace: stage 0 reduces gradients during its last backward; the iteration ends at the JSON's time
expect_exit 0 $P predict --machine lumi-g --model gpt3-1.3b --nodes 8 --tp 2 --pp 4 --mbs 1 --gbs 64 --dist-opt \
  --overlap-grad-reduce --overlap-param-gather --trace "$T/iter.json" --format json
cp "$T/out" "$T/pred.json"
python3 - "$T/iter.json" "$T/pred.json" <<'PY' && ok || bad "trace with overlap"
import json, sys
tr, pred = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
xs = [e for e in tr["traceEvents"] if e.get("ph") == "X"]
last_b = {}
for e in xs:
    if e["cat"] == "backward":
        last_b[e["tid"]] = max(last_b.get(e["tid"], 0), e["ts"] + e["dur"])
grad = {e["tid"]: e for e in xs if e["cat"] == "dp_comm" and e["name"].startswith("gradient")}
assert len(grad) == pred["parallel"]["pp"], grad
assert "overlapped" in grad[0]["name"], grad[0]
assert grad[0]["ts"] < last_b[0], (grad[0], last_b[0])          # bucketed stage: starts inside the backward
for s, e in grad.items():
    assert e["ts"] + 0.1 >= last_b[s] or s == 0, (s, e, last_b)  # one bucket per other stage: at its end (100 ns: SimGrid solver precision)
assert any(e["name"].startswith("parameter all-gather (overlapped") and e["ts"] == 0 for e in xs)
end = max(e["ts"] + e["dur"] for e in xs) / 1e6
assert abs(end - pred["iteration_time_s"]) <= 1e-6 * pred["iteration_time_s"] + 1e-6, (end, pred["iteration_time_s"])
PY
finish
