#!/usr/bin/env python3
"""attention-mla-torch.py - fused attention at Multi-head Latent Attention's shapes, timed on a real GPU.

Runs only on a machine with an NVIDIA GPU and PyTorch; no test calls it.  It measures what docs/model.md's
attention kernel prices when the queries' and keys' head width differs from the values' (DeepSeek-V2/V3's
MLA: 192 = 128 + 64 rope against 128; arXiv 2405.04434 section 2.1), beside the same heads at one width of
128, through each of PyTorch's fused back-ends that takes the shape: cuDNN (the kernel family Transformer
Engine runs on Hopper), FlashAttention-2 and the memory-efficient kernel.  bf16, causal, one micro-batch.

FLOPs of the products a causal kernel does (half the score matrix), for key width dk and value width dv:
forward QK^T and PV, 2 b h s^2 (dk + dv) / 2; backward the scores recomputed (dk), dV = P^T dO (dv),
dP = dO V^T (dv), dQ = dS K (dk), dK = dS^T Q (dk), 2 b h s^2 (3 dk + 2 dv) / 2 (FlashAttention-2's 2.5x the
forward when dk = dv; Dao 2023, section 3).

Also MLA's query and key assembly as Megatron-Core's unfused path runs it (multi_latent_attention.py: the
rotary part concatenated to each head's no-rope part, the key's one rope head broadcast to every head, the
values split from the up projection's output): torch.cat and copies at the shapes one rank holds, with the
bytes each moves.

Each measurement: gpu-kernel-timing.py's timer (3 warm-up calls, then 20 timed with CUDA events, the median).

Usage: attention-mla-torch.py OUT.json
"""
import importlib
import json
import os
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
gkt = importlib.import_module("gpu-kernel-timing")  # its timer (3 warm-up calls, 20 timed, the median) and passes


BACKENDS = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION,
            "efficient": SDPBackend.EFFICIENT_ATTENTION}


def attention_row(dev, backend, b, h, s, dk, dv):
    q = torch.randn(b, h, s, dk, device=dev, dtype=torch.bfloat16, requires_grad=True)
    k = torch.randn(b, h, s, dk, device=dev, dtype=torch.bfloat16, requires_grad=True)
    v = torch.randn(b, h, s, dv, device=dev, dtype=torch.bfloat16, requires_grad=True)
    go = torch.randn(b, h, s, dv, device=dev, dtype=torch.bfloat16)
    with sdpa_kernel([BACKENDS[backend]]):
        tf, tb = gkt.fwd_bwd_times(gkt.causal, q, k, v, go)
    tfb = tf + tb
    ff = 2.0 * b * h * s * s * (dk + dv) / 2
    fb = 2.0 * b * h * s * s * (3 * dk + 2 * dv) / 2
    return {"backend": backend, "b": b, "heads": h, "seq": s, "dk": dk, "dv": dv, "fwd_s": tf, "fwdbwd_s": tfb,
            "bwd_s": tfb - tf, "fwd_TFLOPs": ff / tf / 1e12, "bwd_TFLOPs": fb / (tfb - tf) / 1e12,
            "bwd_over_fwd_time": (tfb - tf) / tf}


def assembly_rows(dev, s, h):
    """MLA's q and k assembly and the values' split, unfused (Megatron-Core's path without the MLA rope fusion)."""
    nope, rope, dv, el = 128, 64, 128, 2
    q = torch.randn(s, 1, h, nope + rope, device=dev, dtype=torch.bfloat16)  # q up projection's output
    kv = torch.randn(s, 1, h, nope + dv, device=dev, dtype=torch.bfloat16)   # kv up projection's output
    kpe = torch.randn(s, 1, 1, rope, device=dev, dtype=torch.bfloat16)       # the one rope key head
    qn, qp = torch.split(q, [nope, rope], dim=-1)
    kn, v = torch.split(kv, [nope, dv], dim=-1)
    qp2 = qp.contiguous()
    ops = {
        "q_cat": (lambda: torch.cat([qn, qp2], dim=-1), s * h * (nope + rope) * el * 2),
        "k_cat_expand": (lambda: torch.cat([kn, kpe.expand(-1, -1, h, -1)], dim=-1),
                         s * h * nope * el + s * rope * el + s * h * (nope + rope) * el),
        "v_contiguous": (lambda: v.contiguous(), s * h * dv * el * 2),
    }
    rows = []
    for name, (fn, nbytes) in ops.items():
        t = gkt.timed(fn)
        rows.append({"op": name, "seq": s, "heads": h, "s": t, "bytes": nbytes, "TBps": nbytes / t / 1e12})
    return rows


def main():
    torch.manual_seed(1)
    dev = torch.device("cuda:0")
    rows, errors = [], []
    shapes = [(1, h, s, 192, 128) for h in (128, 64, 32, 16) for s in (2048, 4096, 8192)]
    shapes += [(1, h, s, 192, 192) for h in (128, 32) for s in (4096,)]
    shapes += [(1, h, s, 128, 128) for h in (128, 64, 32, 16) for s in (2048, 4096, 8192)]
    shapes += [(1, 16, 16384, d, d) for d in (64, 128, 256)]
    for backend in BACKENDS:
        for b, h, s, dk, dv in shapes:
            try:
                r = attention_row(dev, backend, b, h, s, dk, dv)
                print(json.dumps(r), flush=True)
                rows.append(r)
            except Exception as e:  # a back-end that does not take the shape says so; the row is left out
                errors.append({"backend": backend, "shape": [b, h, s, dk, dv], "error": str(e).splitlines()[0][:300]})
            torch.cuda.empty_cache()
    asm = []
    for s, h in ((4096, 128), (4096, 64), (4096, 32)):
        for r in assembly_rows(dev, s, h):
            print(json.dumps(r), flush=True)
            asm.append(r)
    gkt.save(sys.argv[1], {"attention": rows, "assembly": asm, "errors": errors},
             cudnn=torch.backends.cudnn.version(), dtype="bf16", causal=True, seed=1)


if __name__ == "__main__":
    sys.exit(main())
