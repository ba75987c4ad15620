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
# expert parallelism (issue 29): DeepSeek-V2-Lite (first layer dense, 26 MoE layers) on two H800 nodes, EP 8 with
# PP 3: track pid 5 "EP all-to-all" holds per MoE layer a dispatch and a combine inside each forward and their
# mirror images inside each backward, each inside its F / B interval and together shorter than it (2 x MoE layers
# calls per F / B); no such track without EP
expect_exit 0 $P predict --machine deepseek-h800 --model deepseek-v2-lite --gpus 24 --gbs 24 --tp 1 --pp 3 --ep 8 --mbs 1 \
  --trace ep.json --format json -o ep_pred.json
python3 - ep.json ep_pred.json <<'PY' && ok || bad "EP all-to-all events in the trace"
import json, sys
d = json.load(open(sys.argv[1]))["traceEvents"]
assert any(e["ph"] == "M" and e["pid"] == 5 and e["args"]["name"] == "EP all-to-all" for e in d)
xs = [e for e in d if e["ph"] == "X"]
a2a = [e for e in xs if e["pid"] == 5]
comp = [e for e in xs if e["pid"] == 0]
assert a2a and all(e["cat"] == "ep_a2a" for e in a2a)
layers = {0: 8, 1: 9, 2: 9}   # MoE layers a stage: 27 layers over 3 stages, layer 0 dense
for c in comp:
    inside = [e for e in a2a if e["tid"] == c["tid"] and c["ts"] - 1e-3 <= e["ts"] and e["ts"] + e["dur"] <= c["ts"] + c["dur"] + 1e-3]
    assert len(inside) == 2 * layers[c["tid"]], (c, len(inside))
    names = {e["name"].rsplit(" ", 1)[0] for e in inside}
    assert names == ({"dispatch", "combine"} if c["cat"] == "forward" else {"dispatch grad", "combine grad"}), names
    assert sum(e["dur"] for e in inside) < c["dur"]
assert len(a2a) == sum(2 * layers[c["tid"]] for c in comp)
PY
expect_exit 0 $P predict --machine deepseek-h800 --model deepseek-v2-lite --gpus 24 --gbs 24 --tp 1 --pp 3 --ep 1 --mbs 1 \
  --trace noep.json
python3 -c "import json,sys; d=json.load(open(sys.argv[1]))['traceEvents']; assert not [e for e in d if e['pid'] == 5]" \
  noep.json && ok || bad "an EP track without expert parallelism"
# an unwritable trace path is an error with the path in the message
expect_exit 2 $P predict --machine lumi-g --model gpt3-1.3b --nodes 8 --tp 2 --pp 4 --gbs 64 --trace /nonexistent/dir/t.json
expect_grep "/nonexistent/dir/t.json" "$T/err"
finish
