#!/usr/bin/env python3
"""gpu-kernel-timing.py - kernels of a training step timed on a real GPU: fused attention forward and
backward, the memory-bound operators, and the optimizer step.

Runs only on a machine with an NVIDIA GPU and PyTorch; no test calls it.  It measures what docs/model.md's
attention kernel prices: PyTorch's scaled_dot_product_attention with the FlashAttention back-end (bf16,
causal), forward alone and forward + backward, over the shapes a tensor-parallel rank sees in GPT-3 and
Llama training (heads per rank, head dimension, sequence, micro-batch).  The backward time is the
difference.  FLOPs as FlashAttention-2 counts them (Dao 2023, section 3 and its benchmark): forward
4 b h s^2 d, halved by the causal mask; backward 2.5 x the forward (five matrix products against two).

Memory-bound operators (layer norm, GELU, residual add, fp32 softmax, dropout) at a transformer layer's
activation shape, with the bytes each must move (inputs read, outputs written once), give the fraction of
HBM bandwidth they reach.  The optimizer: torch.optim.AdamW (fused=True) over fp32 parameters, 16 B read and
12 B written per parameter (parameter, gradient, two moments; parameter and moments written back).

Each measurement: 3 warm-up calls, then 20 timed with CUDA events, the median kept.

Usage: gpu-kernel-timing.py OUT.json
"""
import json
import sys

import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel


def timed(fn, reps=20):
    for _ in range(3):
        fn()
    torch.cuda.synchronize()
    ts = []
    for _ in range(reps):
        e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        e0.record()
        fn()
        e1.record()
        e1.synchronize()
        ts.append(e0.elapsed_time(e1) / 1e3)
    ts.sort()
    return ts[len(ts) // 2]


def fwd_bwd_times(attn, q, k, v, go):
    """(forward, backward) seconds of attn(q, k, v): the forward alone without autograd, then forward and the
    gradients of q, k, v against go (no accumulation into .grad) less the forward."""
    def fwd():
        with torch.no_grad():
            attn(q, k, v)

    def fwdbwd():
        o = attn(q, k, v)
        torch.autograd.grad(o, (q, k, v), go)

    tf = timed(fwd)
    return tf, timed(fwdbwd) - tf


def causal(q, k, v):
    return F.scaled_dot_product_attention(q, k, v, is_causal=True)


def save(path, sections, **info):
    """The run's record as JSON: info (the GPU, the PyTorch version, then the run's own fields) and the sections."""
    info = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__, **info}
    with open(path, "w") as f:
        json.dump({"info": info, **sections}, f, indent=1)


def main():
    torch.manual_seed(1)
    dev = torch.device("cuda:0")
    rows = []
    shapes = [(b, h, s, d) for d in (64, 128) for h in (8, 16, 32) for s in (1024, 2048, 4096, 8192) for b in (1, 2)]
    for b, h, s, d in shapes:
        q, k, v = (torch.randn(b, h, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
        go = torch.randn(b, h, s, d, device=dev, dtype=torch.bfloat16)
        with sdpa_kernel([SDPBackend.FLASH_ATTENTION]):
            tf, tb = fwd_bwd_times(causal, q, k, v, go)
        tfb = tf + tb
        flops_f = 4.0 * b * h * s * s * d / 2
        r = {"b": b, "heads": h, "seq": s, "head_dim": d, "fwd_s": tf, "fwdbwd_s": tfb, "bwd_s": tfb - tf,
             "fwd_TFLOPs": flops_f / tf / 1e12, "bwd_TFLOPs": 2.5 * flops_f / (tfb - tf) / 1e12,
             "bwd_over_fwd_time": (tfb - tf) / tf}
        print(json.dumps(r), flush=True)
        rows.append(r)
        del q, k, v, go
    mem = []
    for tokens, hid in ((8192, 8192), (4096, 4096), (16384, 2048)):
        x = torch.randn(tokens, hid, device=dev, dtype=torch.bfloat16)
        y = torch.randn(tokens, hid, device=dev, dtype=torch.bfloat16)
        wln = torch.ones(hid, device=dev, dtype=torch.bfloat16)
        e = x.numel() * 2
        ops = {"layer_norm": (lambda: F.layer_norm(x, (hid,), wln, wln), 2 * e),
               "gelu": (lambda: F.gelu(x), 2 * e),
               "add": (lambda: torch.add(x, y), 3 * e),
               "softmax_fp32": (lambda: torch.softmax(x.float(), -1), e + 2 * 4 * x.numel() + 4 * x.numel()),
               "dropout": (lambda: F.dropout(x, 0.1, True), 2 * e + x.numel())}
        for name, (fn, nbytes) in ops.items():
            t = timed(fn)
            r = {"op": name, "tokens": tokens, "hidden": hid, "s": t, "bytes": nbytes, "TBps": nbytes / t / 1e12}
            print(json.dumps(r), flush=True)
            mem.append(r)
        del x, y
    opt_rows = []
    for n in (1 << 28, 1 << 30):
        p = torch.nn.Parameter(torch.randn(n, device=dev))
        p.grad = torch.randn(n, device=dev)
        opt = torch.optim.AdamW([p], lr=1e-4, fused=True)
        t = timed(opt.step)
        r = {"optimizer": "AdamW fused", "params": n, "s": t, "bytes": 28 * n, "TBps": 28 * n / t / 1e12}
        print(json.dumps(r), flush=True)
        opt_rows.append(r)
        del p, opt
    save(sys.argv[1], {"attention": rows, "memory_bound": mem, "optimizer": opt_rows},
         backend="FLASH_ATTENTION", dtype="bf16", causal=True, seed=1)


if __name__ == "__main__":
    sys.exit(main())
