#!/usr/bin/env bash
# proposals.sh - sweep axes and baselines, shards and merge, tune's fixed options and search space, plan's
# Markdown section, and the plots read back against the numbers they plot (issue 12; issue 24's layout of the
# Markdown and the PDF/PNG figures: proposal_output.sh).
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.bash"
P=${PREFLIGHT:?}
cd "$T"

# --- sweep: the node axis is sorted and de-duplicated; the baseline is the smallest feasible point
S="--machine mn5-acc --model gpt3-175b --tp 4 --pp 32 --gbs 1536 --sp --dist-opt --recompute selective"
expect_exit 0 "$P" sweep $S --nodes 64,16,32,32 --format json -o a.json
expect_exit 0 "$P" sweep $S --nodes 16,32,64 --format json -o b.json
if cmp -s a.json b.json; then ok; else bad "sweep --nodes 64,16,32 differs from --nodes 16,32,64"; fi
"$P" sweep $S --nodes 64,16,32 >a.txt 2>/dev/null
"$P" sweep $S --nodes 16,32,64 >b.txt 2>/dev/null
if cmp -s a.txt b.txt; then ok; else bad "sweep tables differ with the node list's order"; fi
# 16 nodes hold 64 GPUs, fewer than TP x PP = 128: the row is reported, the rest computed, 32 nodes is the baseline
expect_grep '^ +16 +64 +\(invalid plan' a.txt
expect_grep '^ +32 +128 .* 1\.00 +100\.0%' a.txt
[ "$(json_get a.json "['rows'][2]['baseline_nodes']")" = "32" ] && ok || bad "baseline is not the smallest feasible point"
# a smallest point that does not fit in memory is a row too
expect_exit 0 "$P" sweep --machine mn5-acc --model gpt3-175b --tp 4 --pp 8 --gbs 512 --sp --dist-opt --recompute full --nodes 8,64
expect_grep 'does not fit' "$T/out"
expect_grep '^ +64 +256 +4 +8 ' "$T/out"

# --- any option as an axis, several machines
expect_exit 0 "$P" sweep --machines mn5-acc,leonardo-booster --model gpt3-1.3b --gbs 256 --nodes 4,2 --vary tp=2,1 --format csv
[ "$(grep -c '^mn5-acc,' "$T/out")" = 4 ] && ok || bad "--machines x --vary tp: expected 4 mn5-acc rows"
expect_grep '^leonardo-booster,1,2,' "$T/out"
expect_exit 2 "$P" sweep --machine mn5-acc --model gpt3-1.3b --nodes 2 --vary bogus=1,2
expect_grep 'not an option' "$T/err"

# --- shards: disjoint slices, merged byte-identical to the plain run (JSON and table)
A="--machine mn5-acc --model gpt3-1.3b --gbs 256 --dist-opt --nodes 1,2,4,8 --vary tp=1,2"
"$P" sweep $A --format json >full.json && ok || bad "plain sweep failed"
"$P" sweep $A >full.txt
for i in 1 2 3; do expect_exit 0 "$P" sweep $A --shard $i/3 -o s$i.json; done
python3 - s1.json s2.json s3.json <<'EOF' && ok || bad "shards are not disjoint and complete"
import json, sys
idx = [r["index"] for f in sys.argv[1:] for r in json.load(open(f))["rows"]]
assert sorted(idx) == list(range(8)) and len(set(idx)) == len(idx), idx
EOF
expect_exit 0 "$P" merge s2.json s3.json s1.json --format json -o merged.json
if cmp -s full.json merged.json; then ok; else bad "merged sweep JSON differs from the unsharded one"; fi
"$P" merge s1.json s2.json s3.json >merged.txt
if cmp -s full.txt merged.txt; then ok; else bad "merged sweep table differs from the unsharded one"; fi
expect_exit 2 "$P" merge s1.json s2.json
expect_grep 'has 3 shards' "$T/err"
expect_exit 2 "$P" merge s1.json s1.json s2.json
expect_exit 2 "$P" sweep $A --shard 4/3 --format json
# CSV shards (for very large studies) merge by streaming into the same table and CSV
for i in 1 2 3; do expect_exit 0 "$P" sweep $A --shard $i/3 --format csv -o c$i.csv; done
"$P" sweep $A --format csv >full.csv
expect_exit 0 "$P" merge c3.csv c1.csv c2.csv --format csv -o mc.csv
if cmp -s full.csv mc.csv; then ok; else bad "merged CSV shards differ from the unsharded CSV"; fi
"$P" merge c1.csv c2.csv c3.csv >mt.txt
if cmp -s full.txt mt.txt; then ok; else bad "merged CSV shards: table differs from the unsharded table"; fi
PREFLIGHT="$P" "$PF_SRC/scripts/slurm-sweep-array.sh" local 3 >/dev/null && ok || bad "slurm-sweep-array.sh local failed"

# --- tune: fixed options are kept; sharded tune merges to the same result
expect_exit 0 "$P" tune --machine leonardo-booster --model llama2-13b --nodes 16 --gbs 512 --tp 4 --top 5 --format json -o t.json
python3 - t.json <<'EOF' && ok || bad "tune --tp 4 returned another TP"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["rows"] and all(r["tp"] == 4 for r in d["rows"]), [r["tp"] for r in d["rows"]]
assert d["plans_evaluated"] > 0 and d["plans_pruned"] >= 0
EOF
expect_exit 0 "$P" tune --machine leonardo-booster --model llama2-13b --nodes 16 --gbs 512 --mbs 2 --recompute full --top 3 --format json -o t2.json
python3 - t2.json <<'EOF' && ok || bad "tune ignored --mbs / --recompute"
import json, sys
d = json.load(open(sys.argv[1]))
assert all(r["mbs"] == 2 and r["recompute"] == "full" for r in d["rows"])
EOF
# every interleaving degree Megatron accepts: 96 layers on 8 stages -> 12 per stage -> V in 1, 2, 3, 4, 6, 12
expect_exit 0 "$P" tune --machine mn5-acc --model gpt3-175b --gpus 256 --gbs 1536 --tp 4 --pp 8 --cp 1 --mbs 1 \
  --recompute full --sp --dist-opt --overlap-grad-reduce --overlap-param-gather --top 6 --format json -o v.json
python3 - v.json <<'EOF' && ok || bad "tune did not try every interleaving degree"
import json, sys
d = json.load(open(sys.argv[1]))
assert d["plans_enumerated"] == 6, d["plans_enumerated"]
v = sorted(r["vstages"] for r in d["rows"])
assert v == [1, 2, 3, 4, 6, 12], v
EOF
T3="--machine mn5-acc --model llama2-7b --nodes 4 --gbs 256 --tp 2 --top 4"
"$P" tune $T3 --format json >tf.json
for i in 1 2; do expect_exit 0 "$P" tune $T3 --shard $i/2 -o t$i.json; done
"$P" merge t1.json t2.json --format json >tm.json
if cmp -s tf.json tm.json; then ok; else bad "merged tune differs from the unsharded one"; fi

# --- plan: a Markdown section whose paragraph cites only numbers of its table
expect_exit 0 "$P" plan --machine lumi-g --model gpt3-175b --tp 4 --pp 32 --mbs 1 --gbs 1536 --precision fp16 --sp \
  --dist-opt --recompute selective --nodes 128,16,32,64 --tokens 3e11 --min-efficiency 0.9 --format md -o plan.md
python3 - plan.md <<'EOF' && ok || bad "plan --format md: paragraph numbers not in the table, or parts missing"
import re, sys
t = open(sys.argv[1]).read()
table = "\n".join(l for l in t.splitlines() if l.startswith("|"))
para = next(l for l in t.splitlines() if l.startswith("We request"))
cells = {c.strip() for l in table.splitlines() for c in l.split("|")}
nums = re.findall(r"\d+(?:\.\d+)?(?: %)?", para)
assert nums, para
for n in nums:
    assert any(n == c or c.startswith(n + " ") for c in cells) or n in cells, n
assert "node-hours" in para and "efficiency" in para
assert "## Compute resources" in t and "Sources and assumptions" in t
# --min-efficiency 0.9: the largest scale at or above 90 % is requested (first table: efficiency is column 5)
first = []
for l in t.splitlines()[t.splitlines().index(table.splitlines()[0]):]:
    if not l.startswith("|"): break
    first.append(l)
assert first[0].split("|")[5].strip() == "efficiency", first[0]
rows = [l.split("|") for l in first[2:]]
ok = [int(r[1]) for r in rows if int(r[5].strip().split()[0]) >= 90]
assert ("at %d nodes" % max(ok)) in para, (max(ok), para)
EOF
expect_grep 'range: none can be given|range: node-hours' plan.md

# --- plots: valid SVG with labelled axes; the sweep's points read back equal its JSON
"$P" sweep $S --nodes 32,64,128 --format json --plot sw.svg >sw.json && ok || bad "sweep --plot failed"
python3 -c "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])" sw.svg && ok || bad "sweep SVG is not well-formed"
python3 - sw.svg sw.json <<'EOF' && ok || bad "sweep SVG points differ from its JSON"
import json, sys, xml.etree.ElementTree as ET
svg = ET.parse(sys.argv[1]).getroot()
ns = "{http://www.w3.org/2000/svg}"
pts = [(c.get("data-series"), float(c.get("data-x")), float(c.get("data-y"))) for c in svg.iter(ns + "circle")
       if c.get("class") == "pt"]
rows = [r for r in json.load(open(sys.argv[2]))["rows"] if "iteration_time_s" in r]
labels = [t.text for t in svg.iter(ns + "text") if t.get("class") in ("xlabel", "ylabel")]
assert "nodes" in labels and "throughput (tokens/s)" in labels and "parallel efficiency (%)" in labels, labels
series = sorted({s for s, _, _ in pts if not s.startswith("ideal")})
assert len(series) == 1, series
got_t = sorted((x, y) for s, x, y in pts if s == series[0] and y > 1000)
got_e = sorted((x, y) for s, x, y in pts if s == series[0] and y <= 1000)
want_t = sorted((r["nodes"], r["tokens_per_s"]) for r in rows)
want_e = sorted((r["nodes"], 100 * r["scaling_efficiency"]) for r in rows)
assert got_t == want_t, (got_t, want_t)
assert all(abs(a[1] - b[1]) < 1e-9 and a[0] == b[0] for a, b in zip(got_e, want_e)), (got_e, want_e)
cap = [t for t in svg.iter(ns + "text") if t.get("class") == "caption"]
assert cap and "Predicted by preflight" in cap[0].text
EOF
"$P" plan --machine lumi-g --model gpt3-175b --tp 4 --pp 32 --gbs 1536 --sp --dist-opt --recompute selective \
  --nodes 16,32 --tokens 3e11 --plot cost.svg >/dev/null && ok || bad "plan --plot failed"
python3 -c "import sys, xml.etree.ElementTree as E; E.parse(sys.argv[1])" cost.svg && ok || bad "plan SVG is not well-formed"
grep -q 'class="ylabel"[^>]*>node-hours' cost.svg && ok || bad "cost plot: y axis without its label"

# --- machines new: a file to start from, that loads as written
expect_exit 0 "$P" machines new my-cluster --like mn5-acc -o my-cluster.cfg
expect_grep '^  id = "my-cluster";' my-cluster.cfg
expect_exit 0 "$P" predict --machine "$T/my-cluster.cfg" --model gpt3-1.3b --nodes 2
expect_exit 0 "$P" machines new blank -o blank.cfg
expect_exit 0 "$P" machines show "$T/blank.cfg"
expect_grep 'assumed: every value is a placeholder' blank.cfg
expect_exit 2 "$P" machines new 'Bad Id'
mkdir -p site && cp -r "$PF_SRC/machines/." site/ && cp blank.cfg site/blank.cfg
PREFLIGHT_MACHINES="$T/site" "$P" machines >m.txt && grep -q '^blank ' m.txt && ok || bad "PREFLIGHT_MACHINES folder not read"

# --- validate: every scenario option is a CSV column; command-line options fill the empty ones
H="machine,model,layers,hidden,heads,seq,vocab,nodes,gpus,tp,pp,dp,mbs,gbs,precision,sp,dist_opt,recompute,schedule,metric,value,unit,baseline_nodes,source"
printf '%s,flash_attn,overlap_grad_reduce\n' "$H" >flags.csv
printf 'mn5-acc,gpt3-13b,,,,,,4,,4,2,,1,256,bf16,true,true,,,iteration_time_s,10,s,,test,true,true\n' >>flags.csv
expect_exit 0 "$P" validate flags.csv --format json -o flags.json
"$P" predict --machine mn5-acc --model gpt3-13b --nodes 4 --tp 4 --pp 2 --mbs 1 --gbs 256 --sp --dist-opt \
  --flash-attn --overlap-grad-reduce --format json >p.json
python3 - flags.json p.json <<'EOF2' && ok || bad "a CSV row with flash_attn and overlap_grad_reduce differs from predict with the flags"
import json, sys
v = json.load(open(sys.argv[1]))["rows"][0]
p = json.load(open(sys.argv[2]))
assert abs(v["predicted"] / p["iteration_time_s"] - 1) < 1e-5, (v["predicted"], p["iteration_time_s"])
EOF2
# the same row without the columns, the flags given on the command line
printf '%s\n' "$H" >noflags.csv
printf 'mn5-acc,gpt3-13b,,,,,,4,,4,2,,1,256,bf16,true,true,,,iteration_time_s,10,s,,test\n' >>noflags.csv
expect_exit 0 "$P" validate noflags.csv --flash-attn --overlap-grad-reduce --format json -o cli.json
python3 -c "import json,sys; a=json.load(open(sys.argv[1]))['rows'][0]['predicted']; b=json.load(open(sys.argv[2]))['rows'][0]['predicted']; sys.exit(0 if a==b else 1)" flags.json cli.json \
  && ok || bad "command-line options do not fill a row's empty columns"
printf '%s,flash_atn\n' "$H" >typo.csv
printf 'mn5-acc,gpt3-13b,,,,,,4,,4,2,,1,256,bf16,true,true,,,iteration_time_s,10,s,,test,true\n' >>typo.csv
expect_exit 2 "$P" validate typo.csv
expect_grep 'typo.csv:1: column "flash_atn"' "$T/err"
expect_exit 0 "$P" validate "$PF_SRC/scenarios/templates/validation.csv"
# a Megatron-LM log converted to rows predicts what the log mode predicts
expect_exit 0 "$P" validate --megatron-log "$PF_SRC/tests/fixtures/megatron/current.log" --machine jureca-dc-a100 --format json -o mlog.json
expect_exit 0 "$P" validate --megatron-log "$PF_SRC/tests/fixtures/megatron/current.log" --machine jureca-dc-a100 --format csv -o mrows.csv
expect_exit 0 "$P" validate mrows.csv --format json -o mrows.json
python3 - mlog.json mrows.json <<'EOF2' && ok || bad "rows converted from a Megatron log predict differently from the log mode"
import json, sys
a = [r["predicted"] for r in json.load(open(sys.argv[1]))["rows"]]
b = [r["predicted"] for r in json.load(open(sys.argv[2]))["rows"]]
assert len(a) == len(b) == 4 and all(abs(x / y - 1) < 1e-9 for x, y in zip(a, b)), (a, b)
EOF2

# --- validate --fit: one fit per machine; an overlay fitted on one machine is refused on another
printf '%s,use\n' "$H" >two.csv
for n in 1 2 4; do
  printf 'mn5-acc,gpt3-1.3b,,,,,,%d,,1,1,,4,512,bf16,,true,,,iteration_time_s,%s,s,,test,fit\n' $n "$(awk -v n=$n 'BEGIN { printf "%.12g", 14 / n }')" >>two.csv
  printf 'leonardo-booster,gpt3-1.3b,,,,,,%d,,1,1,,4,512,bf16,,true,,,iteration_time_s,%s,s,,test,fit\n' $n "$(awk -v n=$n 'BEGIN { printf "%.12g", 24 / n }')" >>two.csv
done
expect_exit 0 "$P" validate --fit two.csv --no-loo --format json -o fit.json
python3 - "$T/out" <<'EOF2' && ok || bad "--fit over two machines did not report two fits"
import json, sys
d = json.load(open(sys.argv[1]))
assert [f["group"] for f in d["fits"]] == ["mn5-acc", "leonardo-booster"], [f["group"] for f in d["fits"]]
EOF2
[ -f fit.mn5-acc.json ] && [ -f fit.leonardo-booster.json ] && ok || bad "one overlay per machine expected"
expect_exit 0 "$P" predict --machine mn5-acc --model gpt3-1.3b --nodes 2 --gbs 512 --calibration fit.mn5-acc.json
expect_exit 2 "$P" predict --machine lumi-g --model gpt3-1.3b --nodes 2 --gbs 512 --calibration fit.mn5-acc.json
expect_grep 'fitted on mn5-acc, not on lumi-g; --force-calibration' "$T/err"
expect_exit 0 "$P" predict --machine lumi-g --model gpt3-1.3b --nodes 2 --gbs 512 --calibration fit.mn5-acc.json \
  --force-calibration
finish
