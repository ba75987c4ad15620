#!/usr/bin/env bash
# trace.sh - `predict --trace FILE.json` writes a valid Chrome/Perfetto trace:
# a JSON object with traceEvents; every X event has name, ph, ts, dur, pid, tid;
# compute, P2P-send, DP-collective and optimizer tracks are all present, and the
# DP collectives start no earlier than their stage's last backward.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
expect_exit 0 $P predict --machine lumi-g --model gpt3-1.3b --nodes 8 --tp 2 --pp 4 --mbs 1 --gbs 64 \
  --dist-opt --no-overlap-grad-reduce --no-overlap-param-gather --trace "$T/iter.json" --format json
cp "$T/out" "$T/pred.json"   # without the overlaps (on by default): overlap.sh checks the trace with them
python3 - "$T/iter.json" "$T/pred.json" <<'PY' && ok || bad "trace structure"
import json, sys
tr, pred = json.load(open(sys.argv[1])), json.load(open(sys.argv[2]))
ev = tr["traceEvents"]
assert isinstance(ev, list) and ev
xs = [e for e in ev if e.get("ph") == "X"]
for e in xs:
    for k in ("name", "ph", "ts", "dur", "pid", "tid"):
        assert k in e, (k, e)
    assert e["dur"] >= 0 and e["ts"] >= 0
cats = {e.get("cat") for e in xs}
for c in ("forward", "backward", "p2p_fwd", "p2p_bwd", "dp_comm", "optimizer"):
    assert c in cats, (c, cats)
pp = pred["parallel"]["pp"]
# per stage: the gradient collective starts at or after that stage's last backward
last_b = {}
for e in xs:
    if e["cat"] == "backward":
        last_b[e["tid"]] = max(last_b.get(e["tid"], 0), e["ts"] + e["dur"])
grad = [e for e in xs if e["cat"] == "dp_comm" and e["name"].startswith("gradient")]
assert len(grad) == pp, len(grad)
for e in grad:
    assert e["ts"] + 0.1 >= last_b[e["tid"]], (e, last_b)  # 100 ns: the DES ends actions within tens of ns of the analytic times (SimGrid solver precision)
end = max(e["ts"] + e["dur"] for e in xs) / 1e6
assert abs(end - pred["iteration_time_s"]) <= 1e-6 * pred["iteration_time_s"] + 1e-6, (end, pred["iteration_time_s"])
print(f"{len(xs)} X events on {len({(e['pid'], e['tid']) for e in xs})} tracks; ends at {end:.6f} s")
PY
# an unwritable trace path is an error with the path in the message
expect_exit 2 $P predict --machine lumi-g --model gpt3-1.3b --nodes 8 --tp 2 --pp 4 --gbs 64 --trace /nonexistent/dir/t.json
expect_grep "/nonexistent/dir/t.json" "$T/err"
finish
