#!/usr/bin/env python3
"""gemm-fp8-torch.py - FP8 matrix products as Transformer Engine runs them on Hopper, at the shapes of the shipped
BF16 table, at the per-expert shapes of the built-in mixtures of experts, and at full load with NVML power.

Runs only on a machine with an NVIDIA Hopper GPU, PyTorch and nvidia-ml-py; no test calls it.  What it measures
and why (docs/model.md, "GEMM: a measured table over a physical curve"):

  table    every shape of shared/data/h100-gemm-bf16.csv ($PF_GEMM_SHAPES names another copy) in BF16 again,
           as PyTorch's autograd runs it (forward X W^T, data gradient dY W, weight gradient dY^T X), and in FP8 through
           torch._scaled_mm (cuBLASLt, per-tensor scales, bf16 output), the kernel Transformer Engine calls on
           Hopper: both operands K-major (TE casts and transposes them first, priced in compute/fp8.c), forward
           E4M3 x E4M3 with fast accumulation, data and weight gradient E5M2 x E4M3 with the split accumulator
           (TE module/base.py: _2X_ACC_FPROP = False, _2X_ACC_DGRAD = _2X_ACC_WGRAD = True).  The BF16 rows
           repeat the shipped table's method on this card, so the two precisions are compared on one GPU.
  experts  one product per expert (Transformer Engine's GroupedLinear: one cuBLAS GEMM per expert) at the
           SwiGLU expert shapes of six built-in MoE models, tokens per expert 64-4096, BF16 and FP8, forward,
           data and weight gradient; and torch._grouped_mm (one CUTLASS launch for all experts) beside the loop.
  graph    the per-expert products again, 16-1024 rows, each timed as 20 calls captured in one CUDA graph (no host
           dispatch between them: the kernel alone, also where it is shorter than a call's dispatch), with the
           names of the kernels cuBLASLt picked (torch.profiler): what a small-row product really runs.
  power    8192^3 at full load for --meter seconds after --warm: BF16, FP8 fast accumulation, FP8 split
           accumulator (NVML energy, SM clock, clock-event reasons: the power cap).

Timing as the shipped table's: each product 2 warm-up calls, then 10 single calls each between CUDA events
with the GPU idle before it (so a time holds one eager call's host dispatch and one launch), the median kept
(`time_s`); also `loop_s`, the mean of 20 back-to-back calls (the kernel, where it is longer than a dispatch).
Random operands (seed 1): constant data run faster and cooler (calibrate/results/README.md).

Usage: gemm-fp8-torch.py OUT.json [--warm S] [--meter S] [--only table,experts,graph,power]
       (writes OUT.json and OUT-table.csv, OUT-experts.csv, OUT-graph.csv beside it)
$PF_EXPERT_ETP, a comma list of expert tensor-parallel sizes (default 1), runs experts and graph at each: an expert's
hidden size divided by ETP, as Megatron-Core's expert TP splits fc1's columns and fc2's rows (column `etp`).
"""
import csv
import importlib
import json
import os
import statistics
import sys
import time
import traceback

import torch
from torch.profiler import ProfilerActivity, profile

_here = os.path.dirname(os.path.abspath(__file__))
# The shapes: $PF_GEMM_SHAPES, else the shared data beside the checkout.
SHAPES = os.environ.get("PF_GEMM_SHAPES") or os.path.join(_here, "..", "..", "shared", "data", "h100-gemm-bf16.csv")
sys.path.insert(0, _here)
gpp = importlib.import_module("gpu-power-points")  # its point arguments, NVML record, timer and save

E4M3, E5M2 = torch.float8_e4m3fn, torch.float8_e5m2
# SwiGLU experts (hidden, moe_ffn_hidden_size) of built-in models (model/workload built-ins and their configs).
EXPERTS = (("deepseek-v3", 7168, 2048), ("qwen3-235b-a22b", 4096, 1536), ("qwen3-30b-a3b", 2048, 768),
           ("mixtral-8x7b", 4096, 14336), ("gpt-oss-120b", 2880, 2880), ("olmoe-1b-7b", 2048, 1024))
TOKENS = (64, 128, 256, 512, 1024, 2048, 4096)
ETPS = tuple(int(x) for x in os.environ.get("PF_EXPERT_ETP", "1").split(","))


def expert_shapes(models=EXPERTS):
    """(model, hidden, the expert's hidden size on one ETP rank, ETP) for every ETP that divides it."""
    return [(m, h, f // e, e) for e in ETPS for m, h, f in models if f % e == 0]


def single(fn, reps=10, warm=2):
    """Median seconds of one call between CUDA events, the GPU idle before each (host dispatch + launch)."""
    for _ in range(warm):
        fn()
    ts = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        e0.record()
        fn()
        e1.record()
        torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) / 1000.0)
    return statistics.median(ts)


def operands(m, n, k, dtype, layout, dev, hybrid=True):
    """The product C[m, n] = A[m, k] B[k, n] as a training step calls it; returns the call."""
    if dtype == "bf16":
        bf = torch.bfloat16
        if layout == "NN":    # forward: X[m, k] W^T, W stored [n, k]
            x, w = torch.randn(m, k, device=dev, dtype=bf), torch.randn(n, k, device=dev, dtype=bf)
            return lambda: torch.mm(x, w.t())
        if layout == "NT":    # data gradient: dY[m, k] W, W stored [k, n]
            g, w = torch.randn(m, k, device=dev, dtype=bf), torch.randn(k, n, device=dev, dtype=bf)
            return lambda: torch.mm(g, w)
        g, x = torch.randn(k, m, device=dev, dtype=bf), torch.randn(k, n, device=dev, dtype=bf)
        return lambda: torch.mm(g.t(), x)  # weight gradient: dY^T X over k tokens
    # fp8: both operands K-major (A row-major [m, k], B column-major), per-tensor scales, bf16 out
    ta = E5M2 if hybrid and layout == "NT" else E4M3  # the output gradient is E5M2 (HYBRID format)
    tb = E5M2 if hybrid and layout == "TN" else E4M3
    a = torch.randn(m, k, device=dev).to(ta)
    b = torch.randn(n, k, device=dev).to(tb).t()
    one = torch.ones((), device=dev, dtype=torch.float32)
    fast = layout == "NN"
    return lambda: torch._scaled_mm(a, b, one, one, out_dtype=torch.bfloat16, use_fast_accum=fast)


def measure(w, m, n, k, layout, dtype, dev, extra):
    try:
        try:
            fn = operands(m, n, k, dtype, layout, dev)
            fn()
        except RuntimeError:  # no E5M2 x E4M3 product in this build: both E4M3 (same tensor-core rate)
            if dtype != "fp8" or layout == "NN":
                raise
            fn = operands(m, n, k, dtype, layout, dev, hybrid=False)
            dtype = "fp8-e4m3"
        t = single(fn)
        loop = gpp.timed(fn, 20, warm=1)
        row = [m, n, k, layout, dtype, "%.9f" % t, "%.1f" % (2 * m * n * k / t / 1e12), "%.9f" % loop,
               "%.1f" % (2 * m * n * k / loop / 1e12)] + extra
    except Exception as e:  # one shape's failure is recorded, the rest still run
        row = [m, n, k, layout, dtype, "", "", "", ""] + extra + [repr(e)[:200]]
    w.writerow(row)
    return row


def table(out, dev):
    shapes = [(int(r["m"]), int(r["n"]), int(r["k"]), r["layout"]) for r in csv.DictReader(open(SHAPES))]
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["m", "n", "k", "layout", "dtype", "time_s", "tflops", "loop_s", "loop_tflops"])
        for dtype in ("bf16", "fp8"):
            t0 = time.perf_counter()
            for m, n, k, layout in shapes:
                measure(w, m, n, k, layout, dtype, dev, [])
                f.flush()
            print("table %s: %d shapes in %.1f s" % (dtype, len(shapes), time.perf_counter() - t0), flush=True)
    return {"rows": 2 * len(shapes), "shapes_from": "shared/data/h100-gemm-bf16.csv"}


def grouped(w, model, h, f, groups, tokens, dev, etp):
    """torch._grouped_mm: fc1 forward of `groups` experts with `tokens` rows each, one launch."""
    bf = torch.bfloat16
    try:
        a = torch.randn(groups * tokens, h, device=dev, dtype=bf)
        b = torch.randn(groups, 2 * f, h, device=dev, dtype=bf).transpose(-2, -1)
        offs = torch.arange(tokens, groups * tokens + 1, tokens, device=dev, dtype=torch.int32)
        fn = lambda: torch._grouped_mm(a, b, offs=offs, out_dtype=bf)  # noqa: E731
        t = single(fn)
        loop = gpp.timed(fn, 20, warm=1)
        fl = 2 * groups * tokens * 2 * f * h
        w.writerow([tokens, 2 * f, h, "NN", "bf16-grouped", "%.9f" % t, "%.1f" % (fl / t / 1e12), "%.9f" % loop,
                    "%.1f" % (fl / loop / 1e12), model, "fc1", groups, etp])
    except Exception as e:
        w.writerow([tokens, 2 * f, h, "NN", "bf16-grouped", "", "", "", "", model, "fc1", groups, etp, repr(e)[:200]])


def expert_gemms(m, h, fe):
    """(shape, layout, which GEMM) of one expert's SwiGLU MLP over m rows: fc1 is [h -> 2 f_e], fc2 [f_e -> h];
    forward, data gradient, weight gradient."""
    return (((m, 2 * fe, h), "NN", "fc1"), ((m, h, fe), "NN", "fc2"), ((m, h, 2 * fe), "NT", "fc1"),
            ((m, fe, h), "NT", "fc2"), ((2 * fe, h, m), "TN", "fc1"), ((h, fe, m), "TN", "fc2"))


def experts(out, dev):
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["m", "n", "k", "layout", "dtype", "time_s", "tflops", "loop_s", "loop_tflops", "model", "gemm",
                    "groups", "etp"])
        t0 = time.perf_counter()
        for model, h, fe, etp in expert_shapes():
            for m in TOKENS:
                for dtype in ("bf16", "fp8"):
                    for (mm, nn, kk), lay, g in expert_gemms(m, h, fe):
                        measure(w, mm, nn, kk, lay, dtype, dev, [model, g, 1, etp])
                f.flush()
        for model, h, fe, etp in expert_shapes(EXPERTS[:2]):
            for groups in (4, 8, 32):
                for m in (128, 512, 2048):
                    grouped(w, model, h, fe, groups, m, dev, etp)
            f.flush()
        print("experts in %.1f s" % (time.perf_counter() - t0), flush=True)
    return {"models": [e[0] for e in EXPERTS], "tokens_per_expert": list(TOKENS), "etp": list(ETPS)}


def graph_s(fn, calls=20):
    """Seconds a call of fn takes inside a CUDA graph of `calls` calls (median of 5 replays): the kernels alone."""
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(calls):
            fn()
    g.replay()
    torch.cuda.synchronize()
    ts = []
    for _ in range(5):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        g.replay()
        e1.record()
        torch.cuda.synchronize()
        ts.append(e0.elapsed_time(e1) / 1000.0 / calls)
    return statistics.median(ts)


def kernel_names(fn):
    """The GPU kernels one call of fn launches (the library's pick: tile shape, split-K)."""
    with profile(activities=[ProfilerActivity.CUDA]) as p:
        fn()
        torch.cuda.synchronize()
    return ";".join(e.name.split("(")[0][:80] for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA)


def graph(out, dev):
    with open(out, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(["m", "n", "k", "layout", "dtype", "graph_s", "tflops", "model", "gemm", "etp", "kernels"])
        t0 = time.perf_counter()
        for model, h, fe, etp in expert_shapes():
            for m in (16, 32, 64, 128, 256, 512, 1024):
                for dtype in ("bf16", "fp8"):
                    for (mm, nn, kk), lay, g in expert_gemms(m, h, fe):
                        try:
                            fn = operands(mm, nn, kk, dtype, lay, dev)
                            t = graph_s(fn)
                            w.writerow([mm, nn, kk, lay, dtype, "%.9f" % t, "%.1f" % (2 * mm * nn * kk / t / 1e12),
                                        model, g, etp, kernel_names(fn)])
                        except Exception as e:
                            w.writerow([mm, nn, kk, lay, dtype, "", "", model, g, etp, repr(e)[:200]])
            f.flush()
        print("graph in %.1f s" % (time.perf_counter() - t0), flush=True)
    return {"calls_per_graph": 20, "replays": 5, "etp": list(ETPS)}


def power(h, dev, warm, meter):
    n = 8192
    pts = []
    for name, dtype, lay in (("gemm-bf16", "bf16", "NN"), ("gemm-fp8-fast", "fp8", "NN"),
                             ("gemm-fp8-split", "fp8", "NT")):
        fn = operands(n, n, n, dtype, lay, dev)
        pts.append(gpp.run_point(h, name, fn, warm, meter, flops_per_step=2.0 * n ** 3))
    return pts


def main():
    a, only = gpp.point_args(meter=4.0)
    sms = torch.cuda.get_device_properties(0).multi_processor_count
    h, dev, info = gpp.open_gpu(a, cuda=torch.version.cuda, sms=sms)
    base = a.out[:-5] if a.out.endswith(".json") else a.out
    pts, parts = [], {}
    for name, body in (("table", lambda: table(base + "-table.csv", dev)),
                       ("experts", lambda: experts(base + "-experts.csv", dev)),
                       ("graph", lambda: graph(base + "-graph.csv", dev)),
                       ("power", lambda: pts.extend(power(h, dev, a.warm, a.meter)))):
        if only is not None and name not in only:
            continue
        try:
            parts[name] = body()
        except Exception as e:
            traceback.print_exc()
            parts[name] = {"error": repr(e)[:300]}
        torch.cuda.empty_cache()
    gpp.save(a.out, info, pts, parts)


if __name__ == "__main__":
    main()
