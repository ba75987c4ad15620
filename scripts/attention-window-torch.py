#!/usr/bin/env python3
"""attention-window-torch.py - fused attention at narrow heads and under a sliding window, timed on a real GPU.

Runs only on a machine with an NVIDIA GPU and PyTorch; no test calls it.  Two questions of docs/model.md's
attention kernel for GPT-OSS-like layers (head dim 64, every other layer windowed to 128 keys):

1. Head dim 64 against 128 on cuDNN (the back-end Transformer Engine runs on Hopper, and the only one that
   takes GPT-OSS's learnable softmax offset): causal bf16, forward alone and forward + backward, 16-64 heads,
   2k-8k tokens.  FLOPs 4 b h s^2 d / 2 forward, 2.5x that backward.
2. A sliding window against the whole causal prefix in one kernel family: PyTorch's FlexAttention (compiled,
   block-sparse, 128 x 128 blocks) with a causal mask and with a causal mask limited to the 128 keys before
   each query, at GPT-OSS's 64 heads of 64 and at 128-wide heads, 4k and 8k tokens.  The ratio of the two
   times is what the model's windowed kernel predicts from its key blocks; the absolute rate is FlexAttention's.

Each measurement: gpu-kernel-timing.py's timer (3 warm-up calls, then 20 timed with CUDA events, the median).

Usage: attention-window-torch.py OUT.json
"""
import importlib
import json
import os
import sys

import torch
from torch.nn.attention import SDPBackend, sdpa_kernel

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
gkt = importlib.import_module("gpu-kernel-timing")  # its timer (3 warm-up calls, 20 timed, the median) and passes


def tensors(dev, b, h, s, d):
    q, k, v = (torch.randn(b, h, s, d, device=dev, dtype=torch.bfloat16, requires_grad=True) for _ in range(3))
    return q, k, v, torch.randn(b, h, s, d, device=dev, dtype=torch.bfloat16)


def cudnn_rows(dev):
    rows = []
    for d in (64, 128):
        for h in (16, 32, 64):
            for s in (2048, 4096, 8192):
                q, k, v, go = tensors(dev, 1, h, s, d)
                with sdpa_kernel([SDPBackend.CUDNN_ATTENTION]):
                    tf, tb = gkt.fwd_bwd_times(gkt.causal, q, k, v, go)
                ff = 4.0 * h * s * s * d / 2
                r = {"backend": "cudnn", "heads": h, "seq": s, "head_dim": d, "fwd_s": tf, "bwd_s": tb,
                     "fwd_TFLOPs": ff / tf / 1e12, "bwd_TFLOPs": 2.5 * ff / tb / 1e12}
                print(json.dumps(r), flush=True)
                rows.append(r)
                del q, k, v, go
    return rows


def flex_rows(dev, errors):
    from torch.nn.attention.flex_attention import create_block_mask, flex_attention
    # one compilation per shape, mask and grad mode: 16 here, past the default limit of 8, beyond which
    # torch.compile runs FlexAttention's unfused fallback (the recorded run's 128-wide rows)
    torch._dynamo.config.recompile_limit = 64
    flex = torch.compile(flex_attention, dynamic=False)
    window = 128
    rows = []
    for d, h in ((64, 64), (128, 32)):
        for s in (4096, 8192):
            masks = {"causal": lambda b, hh, qi, ki: qi >= ki,
                     "window128": lambda b, hh, qi, ki: (qi >= ki) & (qi - ki <= window)}
            for name, fn in masks.items():
                try:
                    bm = create_block_mask(fn, None, None, s, s, device=dev)
                    q, k, v, go = tensors(dev, 1, h, s, d)
                    tf, tb = gkt.fwd_bwd_times(lambda a, b_, c: flex(a, b_, c, block_mask=bm), q, k, v, go)
                    r = {"backend": "flex", "mask": name, "heads": h, "seq": s, "head_dim": d, "fwd_s": tf,
                         "bwd_s": tb}
                    print(json.dumps(r), flush=True)
                    rows.append(r)
                    del q, k, v, go
                except Exception as e:  # noqa: BLE001 - recorded, the run goes on
                    errors.append({"mask": name, "shape": [h, s, d], "error": str(e).splitlines()[0][:300]})
    return rows


def main():
    torch.manual_seed(1)
    dev = torch.device("cuda:0")
    errors = []
    cud = cudnn_rows(dev)
    flx = flex_rows(dev, errors)
    gkt.save(sys.argv[1], {"cudnn": cud, "flex": flx, "errors": errors},
             cudnn=torch.backends.cudnn.version(), dtype="bf16", causal=True, seed=1)


if __name__ == "__main__":
    sys.exit(main())
