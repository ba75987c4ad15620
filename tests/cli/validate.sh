#!/usr/bin/env bash
# validate.sh - `preflight validate`: the reference sets, output formats, --max-error exit codes, malformed
# CSVs rejected with file:line:field, the parity plot, and the README/docs generator.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
V=$PF_SRC/scenarios/validation
F=$PF_SRC/tests/fixtures/validation

# the reference sets: exit 0, every row with its error, the summary
expect_exit 0 $P validate "$V/epicure.csv"
expect_grep "^summary: median \|error\| [0-9.]+ %, mean [0-9.]+ %" "$T/out"
expect_grep "scaling_efficiency" "$T/out"
expect_grep "language" "$T/out"
rows=$(grep -cvE '^(#|machine,)' "$V/epicure.csv")
shown=$(grep -cE '^ +[0-9]+  ' "$T/out")
[ "$rows" = "$shown" ] && ok || bad "epicure.csv: $rows rows, $shown printed"
expect_exit 0 $P validate "$V/epicure.csv" --format json
python3 - "$T/out" <<'PY' && ok || bad "validate JSON: summary fields and rows"
import json, sys
d = json.load(open(sys.argv[1]))
s = d["summary"]
assert d["schema_version"] == 1
assert s["median_abs_pct_error"] >= 0 and s["mean_abs_pct_error"] >= 0
assert "scaling_efficiency" in s["by_metric"] and "language" in s["by_tag"]
assert all("source" in r and "000_ff12095d05d26000.txt:" in r["source"] for r in d["rows"])
assert all(r["status"] == "predicted" for r in d["rows"])
PY
expect_exit 0 $P validate "$V/maelstrom.csv" --summary-only
expect_grep "^summary: median" "$T/out"
expect_grep "not predicted" "$T/out"
expect_exit 0 $P validate "$V/maelstrom.csv" --format csv
expect_grep "^line,machine,model,nodes,gpus,metric" "$T/out"
expect_grep "^11,juwels-booster,maelstrom-ap1-unet,1,4,energy_J,J,,219996,,predicted," "$T/out"
# every MAELSTROM energy/power row is predicted in its metering scope, time held at duration_s (docs/energy.md)
expect_exit 0 $P validate "$V/maelstrom.csv" --format json
python3 - "$T/out" <<'PY' && ok || bad "maelstrom energy rows predicted per scope"
import json, sys
d = json.load(open(sys.argv[1]))
rows = [r for r in d["rows"] if r["metric"] in ("energy_J", "avg_power_W")]
assert len(rows) == 188 and all(r["status"] == "predicted" for r in rows), len(rows)
assert {"gpu_job", "node_job", "node_gpus_job"} <= set(d["summary"]["by_scope"]), d["summary"]["by_scope"]
PY
# AP2's training steps are the report's samples over the global batch (148k / (32 x GPUs), 001:746, the rule
# AP1's rows follow with 89208 / 32), not "Training time for epoch" over "Avg. training time per batch", whose
# ratio differs between machines on the same data (6336 A100 .. 9144 GH200): scripts/maelstrom-duration.py
python3 - "$V/maelstrom.csv" <<'PY' && ok || bad "AP2 energy rows: iterations = ceil(148000 / (32 x GPUs))"
import csv, sys
rows = [r for r in csv.DictReader(l for l in open(sys.argv[1]) if not l.startswith("#"))
        if r["model"] == "maelstrom-ap2-deberta-v3-small" and r["metric"] in ("energy_J", "avg_power_W")]
assert len(rows) == 74, len(rows)
for r in rows:
    g = int(r["gpus"])
    assert int(r["iterations"]) == -(-148000 // (32 * g)), (r["machine"], g, r["iterations"])
    assert int(r["eval_iterations"]) == round(int(r["iterations"]) * 3.8 / 12), r["eval_iterations"]
PY
# --hold-time training stretches the predicted iteration to the measured train_s (a diagnostic of the power model)
expect_exit 0 $P validate "$V/maelstrom.csv" --hold-time training --format json
python3 - "$T/out" <<'PY' && ok || bad "--hold-time training"
import json, sys
d = json.load(open(sys.argv[1]))
r = {x["line"]: x for x in d["rows"]}
assert r[12]["status"] == "predicted" and r[12]["predicted"] > 500, r[12]  # AP1 A100: GPUs busy the whole epoch
PY
expect_exit 2 $P validate "$V/maelstrom.csv" --hold-time sometimes
expect_grep "hold-time" "$T/err"
# a whole-job row without its duration is not predicted, and says what is missing
printf '%s\n' "machine,model,layers,hidden,heads,seq,vocab,nodes,gpus,tp,pp,dp,mbs,gbs,precision,sp,dist_opt,recompute,schedule,metric,value,unit,baseline_nodes,source,iterations,scope,duration_s" \
  "juwels-booster,gpt3-1.3b,,,,,,1,4,1,1,,1,64,bf16,,,full,,avg_power_W,1500,W,,doc:1,100,gpu_job," \
  "juwels-booster,gpt3-1.3b,,,,,,1,4,1,1,,1,64,bf16,,,full,,avg_power_W,1500,W,,doc:2,100,gpu_job,600" > "$T/job.csv"
expect_exit 0 $P validate "$T/job.csv" --format csv
expect_grep "not predicted,.*needs duration_s" "$T/out"
expect_grep "^3,juwels-booster,gpt3-1.3b,1,4,avg_power_W,W,,1500,,predicted," "$T/out"
# eval_iterations: forward-only passes within the job, at their own kernels' power; they fill waiting time of
# the fixed window, so the job's energy rises by less than the passes' own energy (docs/energy.md)
printf '%s\n' "machine,model,layers,hidden,heads,seq,vocab,nodes,gpus,tp,pp,dp,mbs,gbs,precision,sp,dist_opt,recompute,schedule,metric,value,unit,baseline_nodes,source,iterations,scope,duration_s,eval_iterations" \
  "juwels-booster,gpt3-1.3b,,,,,,1,4,1,1,,1,64,bf16,,,full,,energy_J,9e5,J,,doc:1,100,gpu_job,600," \
  "juwels-booster,gpt3-1.3b,,,,,,1,4,1,1,,1,64,bf16,,,full,,energy_J,9e5,J,,doc:2,100,gpu_job,600,50" > "$T/eval.csv"
expect_exit 0 $P validate "$T/eval.csv" --format json
cp "$T/out" "$T/eval.json"
expect_exit 0 $P predict --machine juwels-booster --model gpt3-1.3b --nodes 1 --gpus 4 --tp 1 --pp 1 --mbs 1 --gbs 64 --precision bf16 --recompute full --format json
python3 - "$T/eval.json" "$T/out" <<'PY' && ok || bad "eval_iterations: the evaluation passes' energy within the window"
import json, sys
v, p = (json.load(open(f)) for f in sys.argv[1:3])
a, b = v["rows"][0]["predicted"], v["rows"][1]["predicted"]
ev = p["energy"]["eval_iteration"]["gpu_J"]
assert 0 < b - a < 50 * ev, (a, b, ev)
PY
sed 's/,50$/,-1/' "$T/eval.csv" > "$T/eval-bad.csv"
expect_exit 2 $P validate "$T/eval-bad.csv"
expect_grep "eval_iterations.*must not be negative" "$T/err"
printf '%s\n' "machine,model,layers,hidden,heads,seq,vocab,nodes,gpus,tp,pp,dp,mbs,gbs,precision,sp,dist_opt,recompute,schedule,metric,value,unit,baseline_nodes,source,iterations,scope,eval_iterations" \
  "juwels-booster,gpt3-1.3b,,,,,,1,4,1,1,,1,64,bf16,,,full,,energy_J,9e5,J,,doc:1,100,gpu_job,50" > "$T/eval-bad.csv"
expect_exit 2 $P validate "$T/eval-bad.csv"
expect_grep "eval_iterations.*needs duration_s" "$T/err"

# throughput_ratio: samples/s at the row's batch over samples/s at baseline_mbs, as two predictions give it
H="machine,model,layers,hidden,heads,seq,vocab,nodes,gpus,tp,pp,dp,mbs,gbs,precision,sp,dist_opt,recompute,schedule,metric,value,unit,baseline_nodes,source,baseline_mbs"
printf '%s\n' "$H" "jureca-dc-a100,maelstrom-ap5-wgan,,,,,,1,1,1,1,,64,64,fp32,,,,,throughput_ratio,1.2,x,,doc:1,8" > "$T/ratio.csv"
expect_exit 0 $P validate "$T/ratio.csv" --format json
cp "$T/out" "$T/ratio.json"
expect_exit 0 $P predict --machine jureca-dc-a100 --model maelstrom-ap5-wgan --gpus 1 --mbs 64 --gbs 64 --precision fp32 --format json
cp "$T/out" "$T/b64.json"
expect_exit 0 $P predict --machine jureca-dc-a100 --model maelstrom-ap5-wgan --gpus 1 --mbs 8 --gbs 8 --precision fp32 --format json
python3 - "$T/ratio.json" "$T/b64.json" "$T/out" <<'PY' && ok || bad "throughput_ratio = samples/s over samples/s at baseline_mbs"
import json, sys
v, a, b = (json.load(open(p)) for p in sys.argv[1:4])
r = v["rows"][0]
assert r["status"] == "predicted" and r["baseline_mbs"] == 8, r
want = a["samples_per_s"] / b["samples_per_s"]
assert abs(r["predicted"] / want - 1) < 1e-5, (r["predicted"], want)  # JSON keeps 6 digits
assert abs(r["error_pct"] / 100 - (r["predicted"] / 1.2 - 1)) < 1e-5
PY
printf '%s\n' "$H" "jureca-dc-a100,maelstrom-ap5-wgan,,,,,,1,1,1,1,,64,64,fp32,,,,,throughput_ratio,1.2,x,,doc:1," > "$T/bad.csv"
expect_exit 2 $P validate "$T/bad.csv"
expect_grep "bad.csv:2: baseline_mbs \"\": throughput_ratio needs baseline_mbs" "$T/err"
printf '%s\n' "$H" "jureca-dc-a100,maelstrom-ap5-wgan,,,,,,1,1,1,1,,64,64,fp32,,,,,iteration_time_s,1.2,s,,doc:1,8" > "$T/bad.csv"
expect_exit 2 $P validate "$T/bad.csv"
expect_grep "baseline_mbs \"8\": only used with metric throughput_ratio" "$T/err"

# flops_convention (--flops-convention as a column): a TFLOP/s row counted with causal attention as half is
# compared in that count (GPT-3 1.3B: the attention core is 12 s^2 h a layer of the model's FLOPs a sample,
# and the causal count half of it)
H="machine,model,layers,hidden,heads,seq,vocab,nodes,gpus,tp,pp,dp,mbs,gbs,precision,sp,dist_opt,recompute,schedule,metric,value,unit,baseline_nodes,source,flops_convention"
printf '%s\n' "$H" "juwels-booster,gpt3-1.3b,,,,,,1,4,1,1,,1,64,bf16,,,full,,tflops_per_gpu,100,TFLOP/s,,doc:1," \
  "juwels-booster,gpt3-1.3b,,,,,,1,4,1,1,,1,64,bf16,,,full,,tflops_per_gpu,100,TFLOP/s,,doc:1,causal" > "$T/conv.csv"
expect_exit 0 $P validate "$T/conv.csv" --format json
cp "$T/out" "$T/conv.json"
expect_exit 0 $P models --format json
python3 - "$T/conv.json" "$T/out" <<'PY' && ok || bad "flops_convention causal: the prediction in the source's count"
import json, sys
r = json.load(open(sys.argv[1]))["rows"]
m = [x for x in json.load(open(sys.argv[2]))["models"] if x["id"] == "gpt3-1.3b"][0]
s, h, l = m["seq"], m["hidden"], m["layers"]
F = m["flops_per_sample"]
core = 12.0 * s * s * h * l  # forward + backward over the whole score matrix
assert abs(r[1]["predicted"] / r[0]["predicted"] - (F - core / 2) / F) < 1e-5, (r[1]["predicted"], r[0]["predicted"])
PY
printf '%s\n' "$H" "juwels-booster,gpt3-1.3b,,,,,,1,4,1,1,,1,64,bf16,,,full,,tflops_per_gpu,100,TFLOP/s,,doc:1,half" > "$T/bad.csv"
expect_exit 2 $P validate "$T/bad.csv"
expect_grep "bad.csv:2: flops-convention \"half\": valid: full, causal" "$T/out"
# and predict's own TFLOP/s in that count
expect_exit 0 $P predict --machine juwels-booster --model gpt3-1.3b --gpus 4 --gbs 64 --recompute full --flops-convention causal
expect_grep "TFLOP/s/GPU \(model, causal attention\)" "$T/out"

# rows that cannot be predicted are listed with the reason and left out of the summary
expect_exit 0 $P validate "$F/small.csv" --format json
python3 - "$T/out" <<'PY' && ok || bad "not-predicted rows excluded from the summary"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["summary"]["predicted"] == 2 and d["summary"]["not_predicted"] == 2
np = [r for r in d["rows"] if r["status"] != "predicted"]
assert "scope" in np[0]["reason"] and "no model" in np[1]["reason"]
PY

# --max-error: exit 1 above the median, 0 below it (small.csv's median error is at least 100 %)
expect_exit 1 $P validate "$F/small.csv" --max-error 99
expect_grep "exceeds --max-error" "$T/err"
expect_exit 0 $P validate "$F/small.csv" --max-error 100000
expect_exit 2 $P validate "$F/small.csv" --max-error lots

# malformed input: exit 2 naming file, line and field
expect_exit 2 $P validate "$F/bad-count.csv"
expect_grep "bad-count.csv:3: 26 fields, expected 27" "$T/err"
expect_exit 2 $P validate "$F/bad-value.csv"
expect_grep "bad-value.csv:2: value \"ten\"" "$T/err"
expect_exit 2 $P validate "$F/bad-machine.csv"
expect_grep "bad-machine.csv:3: machine" "$T/err"
expect_exit 2 $P validate "$T/nonexistent.csv"
expect_exit 2 $P validate
expect_exit 2 $P validate "$V/epicure.csv" --format xml

# parity plot and markdown
expect_exit 0 $P validate "$V/epicure.csv" --plot "$T/parity.svg" --format markdown
expect_grep "^<svg " "$T/parity.svg"
expect_grep "class=\"caption\">Predicted" "$T/parity.svg"
expect_grep "class=\"ylabel\"[^>]*>predicted scaling_efficiency \(%\)" "$T/parity.svg"
expect_grep "^</svg>" "$T/parity.svg"
python3 -c "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])" "$T/parity.svg" && ok || bad "parity SVG is not well-formed"
expect_grep "^\| line \| machine" "$T/out"
expect_grep "^\| all predicted \| [0-9]+ \|" "$T/out"

# -o writes atomically and infers the format
expect_exit 0 $P validate "$F/small.csv" -o "$T/v.json"
python3 -c "import json,sys; json.load(open(sys.argv[1]))" "$T/v.json" && ok || bad "-o v.json is JSON"
expect_exit 2 $P validate "$F/small.csv" -o "$T/no/such/dir/v.json"

# the generator of the README / docs tables: writes docs from validate's own output
mkdir -p "$T/tree/docs" "$T/tree/scenarios" && cp -r "$PF_SRC/scenarios/validation" "$T/tree/scenarios/"
printf '# x\n\n<!-- validation:begin -->\nold\n<!-- validation:end -->\ntail\n' > "$T/tree/README.md"
expect_exit 0 env PREFLIGHT="$P" PF_ROOT="$T/tree" bash "$PF_SRC/scripts/validation-tables.sh"
expect_grep "^tail$" "$T/tree/README.md"
expect_grep "epicure.csv" "$T/tree/README.md"
if grep -q "^old$" "$T/tree/README.md"; then bad "README section not replaced"; else ok; fi
expect_grep "<!-- validation:begin -->" "$T/tree/docs/validation.md"
expect_grep "maelstrom.csv" "$T/tree/docs/validation.md"
med=$($P validate "$V/epicure.csv" --format json | python3 -c "import json,sys; print('%.1f' % json.load(sys.stdin)['summary']['median_abs_pct_error'])")
expect_grep "\| all predicted \| [0-9]+ \| $med %" "$T/tree/README.md"

finish
