#!/usr/bin/env bash
# foundation.sh - the foundation issue's acceptance commands, end to end.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT

# machines: every id, and lumi-g's node
expect_exit 0 $P machines --format json
for id in lumi-g leonardo-booster mn5-acc meluxina-gpu karolina-gpu discoverer-gpu vega-gpu deucalion-gpu \
          jupiter-booster jureca-dc-a100 jureca-dc-h100 jureca-dc-mi250 jureca-dc-gh200 jedi westai-h100 \
          juwels-booster e4-gh200 e4-a2 frontier alps aurora; do
  expect_grep "\"id\":[[:space:]]*\"$id\"" "$T/out"
done
expect_exit 0 $P machines show lumi-g --format json
[ "$(json_get "$T/out" "['gpus_per_node']")" = 8 ] && ok || bad "lumi-g: 8 GCDs per node"
[ "$(json_get "$T/out" "['nics_per_node']")" = 4 ] && ok || bad "lumi-g: 4 NICs"
[ "$(json_get "$T/out" "['nic_Gbps']")" = 200 ] && ok || bad "lumi-g: 200 Gb/s NICs"
[ "$(json_get "$T/out" "['network']")" = dragonfly ] && ok || bad "lumi-g: dragonfly"
expect_exit 0 $P machines show lumi-g
expect_grep "8 mi250x-gcd" "$T/out"

# models: GPT-3 175B within 1 % of 175e9
expect_exit 0 $P models show gpt3-175b --format json
python3 -c "import json,sys; p=json.load(open(sys.argv[1]))['params']; sys.exit(0 if abs(p/175e9-1)<0.01 else 1)" "$T/out" \
  && ok || bad "gpt3-175b parameter count"

# predict: EPICURE's MN5 configuration, every DESIGN 4.2 field, memory 30-55 GiB that fits in 64
MN5="--machine mn5-acc --model gpt3-175b --nodes 32 --tp 4 --pp 32 --mbs 1 --gbs 1536 --precision fp16 --sp --dist-opt --recompute selective"
expect_exit 0 $P predict $MN5 --format json
python3 - "$T/out" <<'PY' && ok || bad "predict JSON fields"
import json, sys
d = json.load(open(sys.argv[1]))
need = ["schema_version", "tool", "machine", "model", "nodes", "gpus", "parallel", "precision", "iteration_time_s",
        "tokens_per_s", "samples_per_s", "tflops_per_gpu", "mfu", "breakdown_s", "memory_per_gpu_GiB", "fits",
        "energy", "warnings"]
miss = [k for k in need if k not in d]
miss += ["parallel." + k for k in ["tp", "pp", "dp", "cp", "mbs", "gbs", "grad_accum", "microbatches", "schedule",
         "sp", "dist_opt", "recompute"] if k not in d["parallel"]]
miss += ["breakdown_s." + k for k in ["compute", "tp_comm", "pp_bubble", "pp_comm", "dp_comm_exposed", "optimizer"]
         if k not in d["breakdown_s"]]
miss += ["memory_per_gpu_GiB." + k for k in ["weights", "gradients", "optimizer", "activations", "total", "capacity"]
         if k not in d["memory_per_gpu_GiB"]]
miss += ["energy." + k for k in ["gpu_J", "node_J", "facility_J", "avg_power_per_node_W", "per_iteration_J"]
         if k not in d["energy"]]
assert not miss, miss
m = d["memory_per_gpu_GiB"]
assert 30 < m["total"] < 55 and m["total"] <= m["capacity"] == 64, m
assert d["fits"] is True and d["gpus"] == 128 and d["parallel"]["dp"] == 1 and d["parallel"]["microbatches"] == 1536
assert d["iteration_time_s"] > 0 and 0 < d["mfu"] < 1
PY
# determinism: identical input, byte-identical output
cp "$T/out" "$T/first.json"
expect_exit 0 $P predict $MN5 --format json
cmp -s "$T/out" "$T/first.json" && ok || bad "predict output differs between identical runs"
# -o writes the same JSON atomically
expect_exit 0 $P predict $MN5 -o "$T/pred.json"
cmp -s "$T/pred.json" "$T/first.json" && ok || bad "-o FILE.json differs from stdout JSON"

# does not fit: exit 1 with GiB needed vs capacity
expect_exit 1 $P predict --machine mn5-acc --model gpt3-175b --gpus 1 --tp 1 --pp 1 --gbs 8
expect_grep "needs [0-9.]+ GiB per GPU" "$T/err"
expect_grep "has 64.0 GiB" "$T/err"

# unknown machine: exit 2, names the nearest ids and where the list is (issue 24: no whole list)
expect_exit 2 $P predict --machine no-such-machine --model gpt3-175b --nodes 1
expect_grep 'run `preflight machines` for the list' "$T/err"
expect_exit 2 $P predict --machine lumi --model gpt3-175b --nodes 1
expect_grep 'unknown machine id "lumi"; did you mean lumi-g\?' "$T/err"
grep -q "leonardo-booster" "$T/err" && bad "the whole list printed" || ok
expect_exit 2 $P sweeep --nodes 1
expect_grep 'unknown command "sweeep"; did you mean sweep\?' "$T/err"
grep -q "commands:" "$T/err" && bad "the whole usage printed" || ok
expect_exit 0 $P --help
expect_grep "--version" "$T/out"
# impossible split: exit 1 naming the constraint
expect_exit 1 $P predict --machine mn5-acc --model gpt3-175b --gpus 128 --tp 3
expect_grep "not divisible by tensor x pipeline" "$T/err"
# a machine file with a syntax error: exit 2 naming the file and line
sed '5s/;$/ oops;/' "$PF_SRC/machines/mn5-acc.cfg" > "$T/broken.cfg"
expect_exit 2 $P predict --machine "$T/broken.cfg" --model gpt3-175b --nodes 32 --tp 4 --pp 32
expect_grep "broken.cfg:5" "$T/err"
# a bad quantity: exit 2 naming file, line and field
sed 's/rate = "200 Gbps"/rate = "200 Gbpz"/' "$PF_SRC/machines/mn5-acc.cfg" > "$T/badunit.cfg"
expect_exit 2 $P predict --machine "$T/badunit.cfg" --model gpt3-175b --nodes 32 --tp 4 --pp 32
expect_grep "badunit.cfg:[0-9]+: machine.node.nics.rate" "$T/err"
# bad options
expect_exit 2 $P predict --machine mn5-acc --model gpt3-175b --nodes x
expect_grep "nodes \"x\"" "$T/err"
expect_exit 2 $P predict --machine mn5-acc --model gpt3-175b --nodes 1 --bogus
expect_exit 2 $P predict --machine mn5-acc --model gpt3-175b --nodes 1 --precision fp7
expect_grep "valid: fp32" "$T/err"
# a scenario file gives the same result as the options; options override it
cat > "$T/s.cfg" <<'CFG'
machine = "mn5-acc"; model = "gpt3-175b"; nodes = 32; tp = 4; pp = 32; mbs = 1; gbs = 1536;
precision = "fp16"; sp = true; dist_opt = true; recompute = "selective";
CFG
expect_exit 0 $P predict "$T/s.cfg" --format json
cmp -s "$T/out" "$T/first.json" && ok || bad "scenario file differs from options"
cat > "$T/bad.cfg" <<'CFG'
machine = "mn5-acc";
tp = "four";
CFG
expect_exit 2 $P predict "$T/bad.cfg" --model gpt3-175b --nodes 32
expect_grep "bad.cfg:2" "$T/err"
# a value a parser refuses (a named choice, here the precision) is placed at its file and line too
cat > "$T/badprec.cfg" <<'CFG'
machine = "mn5-acc";
model = "gpt3-175b";
precision = "fp7";
CFG
expect_exit 2 $P predict "$T/badprec.cfg" --nodes 32
expect_grep "badprec.cfg:3: precision" "$T/err"
# a sweep scenario file serves predict too: its list is refused by name, one --nodes overrides it
expect_exit 2 $P predict "$PF_SRC/scenarios/epicure-lumi-strong.cfg"
expect_grep "epicure-lumi-strong.cfg:[0-9]+: nodes .*sweep axis" "$T/err"
expect_exit 0 $P predict "$PF_SRC/scenarios/epicure-lumi-strong.cfg" --nodes 64
# custom models
expect_exit 0 $P predict --machine jureca-dc-a100 --layers 24 --hidden 2048 --heads 16 --seq 2048 --vocab 50257 --nodes 2 --gbs 64
expect_exit 0 $P predict --machine jureca-dc-a100 --params 25.6e6 --flops-per-sample 24.5e9 --nodes 1 --gbs 1024 --mbs 256
expect_exit 0 $P predict --machine lumi-g --model resnet50 --nodes 2 --mbs 256 --gbs 4096 --precision fp16
finish
