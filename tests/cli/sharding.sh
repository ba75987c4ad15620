#!/usr/bin/env bash
# sharding.sh - ZeRO-2 / ZeRO-3 (FSDP) from the command line (docs/model.md, "Sharded data parallelism"):
# the per-unit all-gathers and reduce-scatters appear in breakdown_s and in the --trace timeline; the plan
# JSON names the level; the memory terms fall with the level (tune and plan: tune_sharding.sh); a validation row and a scenario file take the level;
# bad values name the option.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
J="--machine dgx-h100-superpod --model llama2-7b --nodes 2 --gbs 128 --recompute full"
expect_exit 0 $P predict $J --zero 3 --trace "$T/z3.json" --format json
cp "$T/out" "$T/pred3.json"
expect_exit 0 $P predict $J --zero 1 --format json
cp "$T/out" "$T/pred1.json"
python3 - "$T/z3.json" "$T/pred3.json" "$T/pred1.json" <<'PY' && ok || bad "ZeRO-3 breakdown, trace and memory"
import json, sys
tr, p3, p1 = (json.load(open(f)) for f in sys.argv[1:4])
b3, b1 = p3["breakdown_s"], p1["breakdown_s"]
assert b3["fsdp_allgather"] > 0 and b3["fsdp_reduce_scatter"] > 0, b3
assert b1["fsdp_allgather"] == 0 and b1["fsdp_reduce_scatter"] == 0, b1
assert p3["parallel"]["zero"] == 3 and p3["parallel"]["shard_group"] == "all", p3["parallel"]
assert p1["parallel"]["zero"] == 1, p1["parallel"]
m3, m1 = p3["memory_per_gpu_GiB"], p1["memory_per_gpu_GiB"]
dp = p3["parallel"]["dp"]
assert abs(m3["weights"] * dp - m1["weights"]) < 1e-3 * m1["weights"], (m3, m1)
assert abs(m3["gradients"] * dp - m1["gradients"]) < 1e-3 * m1["gradients"], (m3, m1)
assert m3["unsharded_units"] > 0 and "unsharded_units" not in m1
xs = [e for e in tr["traceEvents"] if e.get("ph") == "X"]
ag = [e for e in xs if e["cat"] == "fsdp_allgather"]
rs = [e for e in xs if e["cat"] == "fsdp_reduce_scatter"]
mb = p3["parallel"]["microbatches"]
units = 32 + 2  # layers, embedding, output layer
assert len(ag) == 2 * units * mb and len(rs) == units * mb, (len(ag), len(rs), mb)
assert all(e["pid"] == 4 for e in ag + rs)
end = max(e["ts"] + e["dur"] for e in xs) / 1e6
assert end <= p3["iteration_time_s"] * (1 + 1e-6) + 1e-6, (end, p3["iteration_time_s"])
print(f"{len(ag)} all-gathers, {len(rs)} reduce-scatters; fsdp {b3['fsdp_allgather']:.3f} + {b3['fsdp_reduce_scatter']:.3f} s")
PY
# the table names the level, the shard group and the library
expect_exit 0 $P predict $J --zero 3 --fsdp-shard-group node
expect_grep "ZeRO-3 \(HYBRID_SHARD, megatron, over 8 ranks, replicated across nodes\)" "$T/out"
expect_grep "fsdp_allgather" "$T/out"
# a scenario file and a validation row take the level
printf 'machine = "dgx-h100-superpod";\nmodel = "llama2-7b";\nnodes = 2;\ngbs = 128;\nzero = 2;\n' > "$T/s.cfg"
expect_exit 0 $P predict "$T/s.cfg" --format json
expect_grep '"zero":[[:space:]]*2' "$T/out"
cat > "$T/v.csv" <<'CSV'
machine,model,layers,hidden,heads,seq,vocab,nodes,gpus,tp,pp,dp,mbs,gbs,precision,sp,dist_opt,recompute,schedule,metric,value,unit,baseline_nodes,source,zero,fsdp_shard_group
dgx-h100-superpod,llama2-7b,,,,,,2,,1,1,,1,128,bf16,false,true,full,1f1b,iteration_time_s,10,s,,test row,3,node
CSV
expect_exit 0 $P validate "$T/v.csv" --format json
python3 - "$T/out" <<'PY' && ok || bad "validation row with zero and fsdp_shard_group columns"
import json, sys
d = json.load(open(sys.argv[1]))
rows = d["rows"]
assert rows and rows[0]["predicted"] > 0, rows
PY
# a Megatron-LM log run with Megatron-FSDP (--use-megatron-fsdp --data-parallel-sharding-strategy ...) becomes a
# row at that level
sed 's/^  use_distributed_optimizer \.* True$/&\n  use_megatron_fsdp ............................... True\n  data_parallel_sharding_strategy ................. optim_grads/' \
  "$PF_SRC/tests/fixtures/megatron/current.log" > "$T/fsdp.log"
expect_exit 0 $P validate --megatron-log "$T/fsdp.log" --machine leonardo-booster --format csv
expect_grep "^zero,|,zero,|,zero$" "$T/out"
expect_grep ",2,megatron$" "$T/out"
# bad values name the option; refusals give the library's reason
expect_exit 2 $P predict $J --zero 5
expect_grep "zero" "$T/err"
expect_exit 2 $P predict $J --zero 1 --fsdp-shard-group node
expect_grep "needs --zero 2 or 3" "$T/err"
expect_exit 1 $P predict $J --zero 3 --pp 2 --fsdp-impl deepspeed
expect_grep "incompatible with pipeline parallelism" "$T/err"
finish
