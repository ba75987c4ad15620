#!/usr/bin/env python3
"""conv-shapes-torch.py - every convolution of MAELSTROM AP5's WGAN timed alone on a real GPU, pass by pass.

Runs only on a machine with an NVIDIA GPU, PyTorch and nvidia-ml-py; no test calls it. Where maelstrom-ap5-torch.py
times the whole step, this times each distinct convolution shape of the step (batch 32; the shapes of
model/workload/maelstrom.c) in its three passes, forward, data gradient (dgrad) and weight gradient (wgrad), as
cuDNN runs them after autotuning (torch.backends.cudnn.benchmark), in TF32 and IEEE FP32 with NCHW tensors and in
TF32 with channels-last (NHWC) tensors; and the batch norm (training forward and backward) and Swish of each
activation shape (there the column gflop_or_mb holds the megabytes of one activation). The output is a CSV (one row
per shape, pass and variant: mean GPU seconds by CUDA events), against which `preflight kernels` prices the same
implicit GEMMs (docs/model.md, "Convolution layout copies" and "AP5's step measured whole").

Usage: conv-shapes-torch.py OUT.csv [--reps N]
"""
import argparse
import importlib.util
import os
import sys

import torch
import torch.nn.functional as F

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("gpu_power_points", os.path.join(_here, "gpu-power-points.py"))
gpp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpp)

N = 32
# (layer, cin, cout, h, w, kernel, stride): the generator's convolutions (sub-pixel ones produce 4 C), then the
# critic's stride-2 blocks on one channel
CONVS = [
    ("g.e1a", 15, 56, 96, 120, 3, 1), ("g.e1b", 56, 56, 96, 120, 3, 1), ("g.e2", 56, 112, 48, 60, 3, 1),
    ("g.e3", 112, 224, 24, 30, 3, 1), ("g.bridge", 224, 448, 12, 15, 3, 1),
    ("g.d1.sub", 448, 896, 12, 15, 3, 1), ("g.d1a", 448, 224, 24, 30, 3, 1), ("g.d1b", 224, 224, 24, 30, 3, 1),
    ("g.d2.sub", 224, 448, 24, 30, 3, 1), ("g.d2a", 224, 112, 48, 60, 3, 1), ("g.d2b", 112, 112, 48, 60, 3, 1),
    ("g.d3.sub", 112, 224, 48, 60, 3, 1), ("g.d3a", 112, 56, 96, 120, 3, 1), ("g.out", 56, 1, 96, 120, 1, 1),
    ("c.1", 1, 64, 96, 120, 3, 2), ("c.2", 64, 128, 48, 60, 3, 2), ("c.3", 128, 256, 24, 30, 3, 2),
    ("c.4", 256, 512, 12, 15, 3, 2),
]
# activation shapes (channels, h, w) for batch norm + Swish
ACTS = [(56, 96, 120), (112, 48, 60), (224, 24, 30), (448, 12, 15), (64, 48, 60), (512, 6, 8)]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--reps", type=int, default=20)
    a = ap.parse_args()
    torch.manual_seed(1)
    torch.backends.cudnn.benchmark = True
    dev = torch.device("cuda:0")
    rows = ["layer,pass,variant,cin,cout,h,w,kernel,stride,m,n,k,gflop_or_mb,time_s,tflops"]
    for variant, tf32, fmt in (("tf32-nchw", True, torch.contiguous_format), ("fp32-nchw", False, torch.contiguous_format),
                               ("tf32-nhwc", True, torch.channels_last)):
        gpp.set_tf32(tf32)
        for name, cin, cout, h, w, kk, s in CONVS:
            pad = kk // 2
            x = torch.randn(N, cin, h, w, device=dev).contiguous(memory_format=fmt)
            wt = torch.randn(cout, cin, kk, kk, device=dev).contiguous(memory_format=fmt)
            y = F.conv2d(x, wt, stride=s, padding=pad)
            go = torch.randn_like(y)
            ho, wo = y.shape[2], y.shape[3]
            m, n, k = N * ho * wo, cout, cin * kk * kk
            gflop = 2.0 * m * n * k / 1e9
            conv_bwd = torch.ops.aten.convolution_backward
            passes = (
                ("fwd", lambda: F.conv2d(x, wt, stride=s, padding=pad)),
                ("dgrad", lambda: conv_bwd(go, x, wt, None, [s, s], [pad, pad], [1, 1], False, [0, 0], 1,
                                           [True, False, False])),
                ("wgrad", lambda: conv_bwd(go, x, wt, None, [s, s], [pad, pad], [1, 1], False, [0, 0], 1,
                                           [False, True, False])),
            )
            for pname, fn in passes:
                try:
                    t = gpp.timed(fn, a.reps)
                    rows.append(f"{name},{pname},{variant},{cin},{cout},{h},{w},{kk},{s},{m},{n},{k},{gflop:.4f},"
                                f"{t:.4e},{gflop / t / 1e3:.2f}")
                except Exception as e:  # one failing shape is reported, the others still run
                    rows.append(f"{name},{pname},{variant},{cin},{cout},{h},{w},{kk},{s},{m},{n},{k},{gflop:.4f},"
                                f"error,{type(e).__name__}")
                print(rows[-1], flush=True)
        for c, h, w in (ACTS if variant == "tf32-nchw" else ()):
            x = torch.randn(N, c, h, w, device=dev, requires_grad=True)
            bn = torch.nn.BatchNorm2d(c).to(dev).train()
            gy = torch.randn(N, c, h, w, device=dev)
            mb = N * c * h * w * 4 / 1e6

            def bn_fb():
                y = bn(x)
                torch.autograd.grad(y, (x,) + tuple(bn.parameters()), gy)
            for pname, fn in (("bn-fwd", lambda: bn(x)), ("bn-fwd-bwd", bn_fb), ("silu-fwd", lambda: F.silu(x))):
                t = gpp.timed(fn, a.reps)
                rows.append(f"bn{c}x{h}x{w},{pname},{variant},{c},{c},{h},{w},0,1,0,0,0,{mb:.3f},{t:.4e},0")
                print(rows[-1], flush=True)
    with open(a.out, "w") as f:
        f.write("\n".join(rows) + "\n")


if __name__ == "__main__":
    sys.exit(main())
