#!/usr/bin/env bash
# validate_fit.sh - `validate --fit`: runs synthesised by the tool itself with known efficiency parameters
# (a calibration JSON) are fitted back within 2 %; the overlay extrapolates through predict --calibration;
# the MAELSTROM runs report leave-one-out errors; a failed fit never clobbers an existing overlay.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
KNOWN=$PF_SRC/tests/fixtures/validation/known-fit.json   # compute_eff 0.8, comm_eff 0.6, step_overhead_s 0.25

# synthesise runs at 1-8 nodes, two global batches, with the known parameters
H="machine,model,layers,hidden,heads,seq,vocab,nodes,gpus,tp,pp,dp,mbs,gbs,precision,sp,dist_opt,recompute,schedule,metric,value,unit,baseline_nodes,source"
echo "$H" > "$T/runs.csv"
for n in 1 2 4 8; do
  for g in 256 1024; do
    t=$($P predict --machine juwels-booster --model gpt3-1.3b --nodes $n --tp 2 --mbs 4 --gbs $g --precision bf16 \
        --calibration "$KNOWN" --format json | python3 -c "import json,sys; print(repr(json.load(sys.stdin)['iteration_time_s']))")
    echo "juwels-booster,gpt3-1.3b,,,,,,$n,,2,1,,4,$g,bf16,,,,,iteration_time_s,$t,s,,synthetic $n nodes" >> "$T/runs.csv"
  done
done
[ "$(wc -l < "$T/runs.csv")" = 9 ] && ok || bad "8 synthetic runs"

expect_exit 0 env PF_FAKE_DATE=2026-01-02T03:04:05Z $P validate --fit "$T/runs.csv" -o "$T/fitted.json"
expect_grep "leave-one-configuration-out" "$T/out"
expect_grep "overlay written to" "$T/out"
python3 - "$T/fitted.json" <<'PY' && ok || bad "fit recovers the known parameters within 2 %"
import json, sys
d = json.load(open(sys.argv[1]))
f = d["fit"]
assert d["schema_version"] == 1 and d["backend"] == "fit"
for k, v in (("compute_eff", 0.8), ("comm_eff", 0.6), ("step_overhead_s", 0.25)):
    assert abs(f[k] / v - 1) < 0.02, (k, f[k])
assert f["rel_sigma"] < 0.01
p = d["provenance"]
assert p["date"] == "2026-01-02T03:04:05Z" and p["rows_used"] == 8 and p["input"].endswith("runs.csv")
PY
# extrapolate: 16 nodes with the fitted overlay equals 16 nodes with the known parameters
a=$($P predict --machine juwels-booster --model gpt3-1.3b --nodes 16 --tp 2 --mbs 4 --gbs 1024 --precision bf16 \
    --calibration "$T/fitted.json" --format json | python3 -c "import json,sys; print(json.load(sys.stdin)['iteration_time_s'])")
b=$($P predict --machine juwels-booster --model gpt3-1.3b --nodes 16 --tp 2 --mbs 4 --gbs 1024 --precision bf16 \
    --calibration "$KNOWN" --format json | python3 -c "import json,sys; print(json.load(sys.stdin)['iteration_time_s'])")
python3 -c "import sys; a,b=float(sys.argv[1]),float(sys.argv[2]); sys.exit(0 if abs(a/b-1)<0.01 else 1)" "$a" "$b" \
  && ok || bad "predict --calibration fitted.json: $a s vs $b s with the known parameters"
expect_exit 0 $P sweep --machine juwels-booster --model gpt3-1.3b --nodes 1,2 --tp 2 --mbs 4 --gbs 256 \
  --precision bf16 --calibration "$T/fitted.json"

# JSON report: each row with its band and leave-one-out value
expect_exit 0 $P validate --fit "$T/runs.csv" --format json
python3 - "$T/out" <<'PY' && ok || bad "fit JSON report"
import json, sys
d = json.load(open(sys.argv[1]))
assert len(d["fits"]) == 1 and d["fits"][0]["leave_one_out"]["rows"] == 8
f = d["fits"][0]
assert f["input_rate_Bps"] is None and f["input_rows"] == 0 and "input_rate_Bps" in f["not_constrained"]
for r in d["rows"]:
    assert r["band_lo"] <= r["predicted"] <= r["band_hi"] and "loo_error_pct" in r
PY

# the MAELSTROM runs: fit with leave-one-out error, the GH200 rows held out
expect_exit 0 $P validate --fit "$PF_SRC/scenarios/validation/maelstrom.csv" --summary-only
expect_grep "leave-one-configuration-out: median \|error\| [0-9.]+ %" "$T/out"
expect_grep "comm_eff" "$T/out"
# AP1's reads bound its runs: the input rate is fitted per machine (GB/s per node), off where nothing binds
expect_grep "input_rate_Bps +[0-9.e+]+ +\([0-9.]+ GB/s per node; binds on [0-9]+ of [0-9]+ runs with sample bytes" "$T/out"
expect_grep "input_rate_Bps +off +\(not constrained by these runs: fewer configurations than parameters\)" "$T/out"

# leonardo_runs CALIBRATION: three synthetic Leonardo runs (1-4 nodes) made with those parameters, as CSV rows
leonardo_runs() {
  for n in 1 2 4; do
    t=$($P predict --machine leonardo-booster --model gpt3-1.3b --nodes $n --tp 2 --mbs 4 --gbs 512 --precision bf16 \
        --calibration "$1" --format json | python3 -c "import json,sys; print(repr(json.load(sys.stdin)['iteration_time_s']))")
    echo "leonardo-booster,gpt3-1.3b,,,,,,$n,,2,1,,4,512,bf16,,,,,iteration_time_s,$t,s,,synthetic $n nodes"
  done
}
# leave-one-machine-out: runs of two machines made with the same known parameters; one fit over both
# (--fit-group all) predicts each machine's rows from the other's alone, within 2 %
cp "$T/runs.csv" "$T/two.csv"
leonardo_runs "$KNOWN" >> "$T/two.csv"
expect_exit 0 $P validate --fit "$T/two.csv" --fit-group all --loo machine --format json
python3 - "$T/out" <<'PY' && ok || bad "leave-one-machine-out predicts the held-out machine from the other"
import json, sys
d = json.load(open(sys.argv[1]))
f = d["fits"][0]
assert f["leave_one_out_by"] == "machine" and f["leave_one_out"]["rows"] == 11, f
machines = {r["machine"] for r in d["rows"]}
assert machines == {"juwels-booster", "leonardo-booster"}, machines
assert all(abs(r["loo_error_pct"]) < 2.0 for r in d["rows"]), [r["loo_error_pct"] for r in d["rows"]]
PY
# ... and a machine whose runs were made with half the compute efficiency is predicted with the other's:
# every left-out row misses by the factor between them (configuration folds keep both machines in the fit)
echo '{"schema_version": 1, "backend": "fit", "fit": {"compute_eff": 0.4, "comm_eff": 0.6, "step_overhead_s": 0.25}}' > "$T/half.json"
head -1 "$T/two.csv" > "$T/mixed.csv"; grep '^juwels-booster' "$T/two.csv" >> "$T/mixed.csv"
leonardo_runs "$T/half.json" >> "$T/mixed.csv"
expect_exit 0 $P validate --fit "$T/mixed.csv" --fit-group all --loo machine --format json
python3 - "$T/out" <<'PY' && ok || bad "leave-one-machine-out leaves the whole machine out"
import json, sys
d = json.load(open(sys.argv[1]))
e = {r["machine"]: [] for r in d["rows"]}
for r in d["rows"]: e[r["machine"]].append(r["loo_error_pct"])
assert all(x > 30 for x in e["juwels-booster"]) and all(x < -25 for x in e["leonardo-booster"]), e
PY
expect_exit 0 $P validate --fit "$T/two.csv" --fit-group all --loo machine
expect_grep "leave-one-machine-out: median \|error\| [0-9.]+ %" "$T/out"
# per machine (the default) a machine fold would leave nothing to refit on: refused, as are unknown folds
expect_exit 2 $P validate --fit "$T/two.csv" --loo machine
expect_grep "fit-group all" "$T/err"
expect_exit 2 $P validate --fit "$T/two.csv" --fit-group all --loo node
expect_exit 2 $P validate --fit "$T/two.csv" --fit-group all --loo machine --no-loo
# the fit's options without --fit are an error, not silently ignored
for o in "--loo machine" "--no-loo" "--fit-group all"; do
  expect_exit 2 $P validate "$T/two.csv" $o
  expect_grep "only with --fit" "$T/err"
done
# MAELSTROM, one fit per application, each machine left out in turn: the groups' rows together
expect_exit 0 $P validate --fit "$PF_SRC/scenarios/validation/maelstrom.csv" --fit-group model --loo machine --summary-only
expect_grep "leave-one-machine-out, the 3 fits' rows together \\(regression rows not judged\\): median \|error\| [0-9.]+ %" "$T/out"

# a failed fit leaves an existing overlay alone; nothing to fit is an error
echo '{"keep": true}' > "$T/keep.json"
expect_exit 2 $P validate --fit "$PF_SRC/tests/fixtures/validation/bad-value.csv" -o "$T/keep.json"
expect_grep '"keep": true' "$T/keep.json"
expect_exit 2 $P validate --fit "$PF_SRC/tests/fixtures/validation/small.csv" -o "$T/keep.json" --no-loo \
  --calibration /nonexistent.json
expect_grep '"keep": true' "$T/keep.json"

finish
