#!/usr/bin/env bash
# hostqueue.sh - host dispatch as a queue (compute/hostqueue.c) and the step's own kernels
# (compute/stepkernels.c): with eager dispatch at sequence 128 and micro-batch 1 a calibration file that
# doubles the per-operator cost (results.host, 30 -> 60 us) doubles the host-bound part (+-10 %) and leaves
# the GPU time as it was; at sequence 4096 and micro-batch 8 doubling it from the default (12 -> 24 us)
# moves the step by less than 2 % (the step's Python per parameter tensor, serial after the host's sync,
# is what moves);
# a bad results.host value is refused naming the file and the field; Megatron-Core's own Python per layer
# (layer-python) is charged where it runs; DataParallel's step kernels (the
# replicate broadcast and the gradient reduction onto the first GPU) replace the DP all-reduce.
source "$PF_SRC/tests/cli/lib.bash"
P=$PREFLIGHT
for h in 12e-6 24e-6 30e-6 60e-6; do
  printf '{"schema_version": 1, "backend": "cuda", "device": {"name": "NVIDIA H100 80GB HBM3"},\n "results": {"host": {"torch_fwd_op_s": %s, "torch_bwd_op_s": %s}}}\n' "$h" "$h" > "$T/h$h.json"
done
M=(--machine mn5-acc --gpus 1 --layers 12 --hidden 768 --heads 12 --vocab 50257 --framework pytorch --host-overhead eager)
for h in 30e-6 60e-6; do
  expect_exit 0 $P predict "${M[@]}" --seq 128 --mbs 1 --gbs 1 --calibration "$T/h$h.json" --force-calibration --format json
  cp "$T/out" "$T/short$h.json"
done
for h in 12e-6 24e-6; do
  expect_exit 0 $P predict "${M[@]}" --seq 4096 --mbs 8 --gbs 8 --flash-attn --recompute selective \
    --calibration "$T/h$h.json" --force-calibration --format json
  cp "$T/out" "$T/long$h.json"
done
python3 - "$T" <<'PY' && ok || bad "doubling the per-operator cost: host-bound part x2 at seq 128, < 2 % at seq 4096"
import json, sys
t = sys.argv[1]
ld = lambda f: json.load(open(f"{t}/{f}"))
s1, s2, l1, l2 = ld("short30e-6.json"), ld("short60e-6.json"), ld("long12e-6.json"), ld("long24e-6.json")
gpu = lambda d: sum(d["compute_split_s"][k] for k in ("compute_bound", "memory_bound", "launch"))
assert s1["compute_split_s"]["host_op_s"] == 30e-6 and s2["compute_split_s"]["host_op_s"] == 60e-6
r = s2["compute_split_s"]["host_bound"] / s1["compute_split_s"]["host_bound"]
assert 1.8 <= r <= 2.2, r
assert abs(gpu(s2) - gpu(s1)) <= 1e-9 * gpu(s1), (gpu(s1), gpu(s2))
d = abs(l2["iteration_time_s"] / l1["iteration_time_s"] - 1)
assert 0 < d < 0.02, d
print("host-bound ratio", r, "long-step change", d)
PY
printf '{"schema_version": 1, "backend": "cuda", "device": {"name": "NVIDIA H100 80GB HBM3"},\n "results": {"host": {"torch_fwd_op_s": -1}}}\n' > "$T/bad.json"
expect_exit 2 $P predict "${M[@]}" --seq 128 --mbs 1 --gbs 1 --calibration "$T/bad.json" --force-calibration
expect_grep 'bad.json: field results.host.torch_fwd_op_s' "$T/err"
# DataParallel: its step kernels are in the optimizer phase, and no DP all-reduce is left exposed
expect_exit 0 $P predict --machine jureca-dc-a100 --model maelstrom-ap2-deberta-v3-small --gpus 4 --mbs 32 --gbs 128 \
  --precision fp32 --format json
python3 -c "
import json,sys; d=json.load(open(sys.argv[1])); b=d['breakdown_s']
assert abs(b['dp_comm_exposed']) < 1e-12 and b['optimizer'] > 0, b" "$T/out" && ok || bad "DataParallel: no all-reduce, a step tail"
# preflight kernels: the whole step's kernels, each with a time and a source; the step kernels follow
# --framework (Megatron: fused Adam and the master copy; PyTorch: foreach AdamW and clipping), and their
# total is the optimizer term of predict's breakdown
K=(--machine mn5-acc --gpus 1 --layers 12 --hidden 768 --heads 12 --seq 1024 --vocab 50257 --mbs 8 --gbs 8 --flash-attn)
for fw in megatron pytorch; do
  expect_exit 0 $P kernels "${K[@]}" --framework $fw --format json; cp "$T/out" "$T/k-$fw.json"
  expect_exit 0 $P predict "${K[@]}" --framework $fw --format json; cp "$T/out" "$T/p-$fw.json"
done
python3 - "$T" <<'PY' && ok || bad "kernels: step kernels per framework, their total is the optimizer term"
import json, sys
t = sys.argv[1]
for fw, want, not_want in (("megatron", "adam (fused)", "adamw (foreach)"), ("pytorch", "adamw (foreach)", "adam (fused)")):
    k = json.load(open(f"{t}/k-{fw}.json"))["kernels"]
    p = json.load(open(f"{t}/p-{fw}.json"))
    step = {r["name"]: r for r in k if r["phase"] == "step"}
    assert want in step and not_want not in step, (fw, list(step))
    assert all(r["source"] and r["total_s"] >= 0 for r in k)
    assert {"embedding", "logits", "loss-softmax", "final-norm"} <= {r["name"] for r in k if r["phase"] == "forward"}
    assert "embedding-wgrad" in {r["name"] for r in k if r["phase"] == "backward"}
    total = sum(r["total_s"] for r in step.values())
    opt = p["breakdown_s"]["optimizer"]
    assert abs(total - opt) <= 0.02 * opt, (fw, total, opt)
PY
# Megatron-Core's own Python per layer (layer-python, hostqueue.c): a host-only entry before each Megatron layer,
# forward and backward, none for PyTorch or under CUDA graphs; a tiny layer is host-bound by about the measured
# constants (1.69 + 1.14 ms a dense layer pass), a doubled eager cost (a calibration) doubles them, and a layer
# with real work (hidden 4096, sequence 4096) hides them
G=(--machine mn5-acc --gpus 1 --layers 4 --hidden 256 --heads 4 --vocab 1024 --seq 128 --mbs 1 --gbs 1 --flash-attn)
expect_exit 0 $P kernels "${G[@]}" --framework megatron --format json; cp "$T/out" "$T/kl-meg.json"
expect_exit 0 $P kernels "${G[@]}" --framework pytorch --format json; cp "$T/out" "$T/kl-pt.json"
expect_exit 0 $P kernels "${G[@]}" --framework megatron --host-overhead graphs --format json; cp "$T/out" "$T/kl-gr.json"
expect_exit 0 $P predict "${G[@]}" --framework megatron --format json; cp "$T/out" "$T/pl-12.json"
expect_exit 0 $P predict "${G[@]}" --framework megatron --calibration "$T/h24e-6.json" --force-calibration --format json
cp "$T/out" "$T/pl-24.json"
expect_exit 0 $P predict --machine mn5-acc --gpus 1 --layers 4 --hidden 4096 --heads 32 --vocab 1024 --seq 4096 \
  --mbs 1 --gbs 1 --flash-attn --framework megatron --format json
cp "$T/out" "$T/pl-big.json"
python3 - "$T" <<'PY' && ok || bad "layer-python: Megatron only, eager only, about the measured cost, hidden by real work"
import json, sys
t = sys.argv[1]
ld = lambda f: json.load(open(f"{t}/{f}"))
rows = lambda f: {(r["phase"], r["name"]): r for r in ld(f)["kernels"]}
m = rows("kl-meg.json")
assert m[("forward", "layer-python")]["launches"] == 4 and m[("backward", "layer-python")]["launches"] == 4, m
assert all(name != "layer-python" for _, name in rows("kl-pt.json")), "pytorch"
assert all(name != "layer-python" for _, name in rows("kl-gr.json")), "graphs"
hb = lambda f: ld(f)["compute_split_s"]["host_bound"]
assert 0.9 * 4 * (1.69e-3 + 1.14e-3) <= hb("pl-12.json") <= 1.5 * 4 * (1.69e-3 + 1.14e-3), hb("pl-12.json")
r = hb("pl-24.json") / hb("pl-12.json")
assert 1.8 <= r <= 2.1, r
big = ld("pl-big.json")
assert big["compute_split_s"]["host_bound"] < 0.05 * big["iteration_time_s"], big["compute_split_s"]
PY
# calibrate --host: with no back-end and no PyTorch with a GPU it measures nothing and says so (exit 3);
# with a PyTorch probe (a stub python printing what the probe prints) it writes results.host, which predict
# applies to eager PyTorch
printf '#!/bin/sh\nexit 3\n' > "$T/nopy"; chmod +x "$T/nopy"
PREFLIGHT_CAL_DIR=/nonexistent PREFLIGHT_PYTHON="$T/nopy" expect_exit 3 $P calibrate --host -o "$T/host.json"
expect_grep 'nothing to measure here: no cuda back-end ran .*no PyTorch with a GPU' "$T/err"
[ ! -e "$T/host.json" ] && ok || bad "calibrate --host wrote a file with nothing measured"
printf '#!/bin/sh\necho %s\n' "'{\"torch_version\": \"2.3.0\", \"device\": \"NVIDIA H100 80GB HBM3\", \"fwd_op_s\": 2.5e-05, \"bwd_op_s\": 3.5e-05}'" > "$T/py"
chmod +x "$T/py"
PREFLIGHT_CAL_DIR=/nonexistent PREFLIGHT_PYTHON="$T/py" expect_exit 0 $P calibrate --host -o "$T/host.json"
expect_exit 0 $P predict "${M[@]}" --seq 128 --mbs 1 --gbs 1 --calibration "$T/host.json" --force-calibration --format json
[ "$(json_get "$T/out" '["compute_split_s"]["host_op_s"]')" = "2.5e-05" ] && ok || bad "calibrate --host's cost not applied"
expect_exit 2 $P calibrate --host --backend cpu
finish
