#!/usr/bin/env python3
"""maelstrom-ap1-torch.py - MAELSTROM AP1's U-Net training step, rebuilt in PyTorch, timed and metered on a GPU.

Runs only on a machine with an NVIDIA GPU, PyTorch and nvidia-ml-py (pynvml); no test calls it.  It asks of
`maelstrom-ap1-unet` (model/workload/maelstrom.c) what maelstrom-ap5-torch.py asked of AP5: how long the step's
kernels take on a real GPU and what they draw, with the data already on the GPU, so that the report's AP1
epochs (TensorFlow, netCDF read from disk; docs/model.md "Layer lists") can be split into the GPU's step and the
wait for the input pipeline.

The network is the application's (metno/maelstrom-train@c87b656 benchmark/benchmark.py, Unet(input_shape, 3,
layers=6) with its defaults), written again here in PyTorch on one lead time (Conv3D of kernel [1, 1, 1] on a
depth-1 input is a 1x1 convolution):
  - conv block: two 1x1 convolutions, each followed by batch norm without scale and centre and ReLU;
  - encoder: blocks of 16, 32, 64, 128, 256 features, each followed by 2x2 max pooling; a bridge block of 512;
  - decoder level (256 down to 16): 1x1 convolution with ReLU, nearest upsampling x 2, 2x2 convolution ('same')
    with ReLU, the encoder's output of that level concatenated before it, a conv block;
  - a dense 3 on every pixel (a 1x1 convolution), the quantile loss at 10/50/90 % on the one target channel;
  - Adam at 1e-3 (benchmark.py), batch 32 a GPU, input 256 x 256 x 17.
The parameter counts are printed and checked against the report's 1 314 019 trainable and 6 016 statistics.

Each variant (TF32 or FP32 convolutions, NCHW or channels-last) runs WARM seconds, then METER seconds metered by
NVML's energy counter (gpu-power-points.py's Meter); in TF32 one step of each layout is also profiled (every
kernel's name, count and GPU time: maelstrom-ap5-torch.py's profile).

Usage: maelstrom-ap1-torch.py OUT.json [--warm S] [--meter S] [--only NAME,...]
"""
import importlib.util
import json
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

_here = os.path.dirname(os.path.abspath(__file__))


def _load(name, file):
    spec = importlib.util.spec_from_file_location(name, os.path.join(_here, file))
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


gpp = _load("gpu_power_points", "gpu-power-points.py")
ap5 = _load("maelstrom_ap5_torch", "maelstrom-ap5-torch.py")

BATCH, H, W, C_IN, FEATURES, LEVELS = 32, 256, 256, 17, 16, 6


class Block(nn.Sequential):
    """Conv: two 1x1 convolutions, each with batch norm (scale=False, center=False, momentum 0.99) and ReLU."""

    def __init__(self, cin, cout):
        layers = []
        for c in (cin, cout):
            layers += [nn.Conv2d(c, cout, 1), nn.BatchNorm2d(cout, affine=False, momentum=0.01), nn.ReLU()]
        super().__init__(*layers)


class Up(nn.Module):
    """A decoder level: 1x1 convolution + ReLU, nearest upsampling, 2x2 'same' convolution + ReLU, the skip
    concatenated first (keras concatenate((layers[i], outputs))), a conv block."""

    def __init__(self, cin, f):
        super().__init__()
        self.pre = nn.Conv2d(cin, f, 1)
        self.post = nn.Conv2d(f, f, 2, padding="same")
        self.block = Block(2 * f, f)

    def forward(self, x, skip):
        x = F.relu(self.pre(x))
        x = F.interpolate(x, scale_factor=2, mode="nearest")
        x = F.relu(self.post(x))
        return self.block(torch.cat((skip, x), dim=1))


class Unet(nn.Module):
    def __init__(self):
        super().__init__()
        f, cin, self.down = FEATURES, C_IN, nn.ModuleList()
        for _ in range(LEVELS - 1):
            self.down.append(Block(cin, f))
            cin, f = f, 2 * f
        self.bridge = Block(cin, f)
        self.up = nn.ModuleList()
        for _ in range(LEVELS - 1):
            self.up.append(Up(f, f // 2))
            f //= 2
        self.out = nn.Conv2d(f, 3, 1)

    def forward(self, x):
        skips = []
        for b in self.down:
            x = b(x)
            skips.append(x)
            x = F.max_pool2d(x, 2)
        x = self.bridge(x)
        for u in self.up:
            x = u(x, skips.pop())
        return self.out(x)


def quantile_score(y, q):
    """benchmark.py quantile_score: sum over 10/50/90 % of mean((quantile - [err < 0]) err)."""
    loss = 0.0
    for i, qt in enumerate((0.1, 0.5, 0.9)):
        err = y[:, 0] - q[:, i]
        loss = loss + ((qt - (err < 0).float()) * err).mean()
    return loss


class Step:
    """One model.fit step on a 32-sample batch already on the GPU."""

    def __init__(self, dev, layout):
        self.net = Unet().to(dev).to(memory_format=layout)
        self.opt = torch.optim.Adam(self.net.parameters(), lr=1e-3)
        self.x = torch.randn(BATCH, C_IN, H, W, device=dev).contiguous(memory_format=layout)
        self.y = torch.randn(BATCH, 1, H, W, device=dev).contiguous(memory_format=layout)

    def __call__(self):
        loss = quantile_score(self.y, self.net(self.x))
        self.opt.zero_grad(set_to_none=True)
        loss.backward()
        self.opt.step()


def main():
    a, only = gpp.point_args(meter=5.0)
    torch.backends.cudnn.benchmark = True  # TensorFlow autotunes its convolutions by default
    n = ap5.counts(Unet())
    h, dev, info = gpp.open_gpu(a, batch=BATCH, trainable=n[0], statistics=n[1], report=[1314019, 6016])
    pts, parts = [], {}

    def variant(name, layout):
        step = Step(dev, layout)
        pts.append(gpp.run_point(h, "ap1-" + name, step, a.warm, a.meter))
        parts[name] = {"step_s": gpp.timed(step, 10), "max_allocated_GiB": torch.cuda.max_memory_allocated() / 2**30}
        if name.startswith("tf32"):
            kt, kn = ap5.profile(step, os.path.splitext(a.out)[0] + f"-{name}-kernels.json")
            parts[name]["kernel_s_sum"], parts[name]["kernels"] = kt, kn
        print(json.dumps({name: parts[name]}), flush=True)

    gpp.run_variants(pts, "ap1-", only, gpp.LAYOUT_VARIANTS[:3], variant)
    gpp.save(a.out, info, pts, parts)


if __name__ == "__main__":
    sys.exit(main())
