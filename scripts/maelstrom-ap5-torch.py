#!/usr/bin/env python3
"""maelstrom-ap5-torch.py - MAELSTROM AP5's WGAN training step, rebuilt in PyTorch, timed and metered on a real GPU.

Runs only on a machine with an NVIDIA GPU, PyTorch and nvidia-ml-py (pynvml); no test calls it.  It answers what
the layer list of `maelstrom-ap5-wgan` (model/workload/maelstrom.c) cannot say by itself: how long the step's
kernels really take and what they draw, in TF32 and in plain FP32, so that the report's AP5 times (TensorFlow
2.6, docs/energy.md "A100: AP5's time") can be split into the network's own cost and the framework's.

The networks and the step are the application's (mlangguth89/downscaling_benchmark@3712347a, models/unet_model.py
UNet_Sha and models/wgan_model.py Critic_Simple and WGAN_Model.train_step, with the JUBE benchmark's settings:
batch 32, d_steps 5, z_branch), written again here in PyTorch:
  - generator: 15 input channels on 96 x 120; conv block = 3x3 convolution, batch norm, Swish; encoder two
    blocks of 56, then one of 112 and one of 224, each followed by 2x2 average pooling; bridge block of 448;
    each decoder level a sub-pixel block (3x3 convolution to 4 C, Swish, depth to space), the skip
    concatenated, two conv blocks of C; two 1x1 output convolutions (temperature and the z branch).
  - critic: four 3x3 stride-2 conv blocks of 64, 128, 256, 512 on the one dynamic channel, global average
    pooling, dense 64 with Swish, dense 1.
  - step: five critic updates, each on its own 32-sample slice of a 192-sample batch (generator forward in
    training mode without gradients, critic on generated and real samples, the gradient penalty's input
    gradient with create_graph and its double backward, Adam), then one generator update on the last slice
    (forward through the critic, Wasserstein and 1000 x mean-absolute-error loss, gradients for the generator's
    variables only, as TensorFlow's tape computes them, Adam).
The parameter counts are printed and checked against the report's 9 332 299 trainable and 5 280 statistics.
Data are random tensors already on the GPU: the input pipeline is not part of what is measured.

Each variant (TF32 or FP32 convolutions, NCHW or channels-last layout) runs WARM seconds, then METER seconds
metered by NVML's energy counter (the Meter of gpu-power-points.py).  Then, in TF32 and NCHW, the parts are
timed apart with CUDA events (one critic update with and without the gradient penalty, one generator update),
the critic update's pieces (generator forward, critic forward, the penalty's input gradient and its double
backward), also with the critic's batch norm removed and with ReLU for Swish (which part the penalty's cost
sits in), and one step is profiled: every kernel's name, count and GPU time, so that the kernels can be set against the
layer list's kernels (`preflight kernels --model maelstrom-ap5-wgan ...`; docs/model.md, "AP5's step
measured whole").

Usage: maelstrom-ap5-torch.py OUT.json [--warm S] [--meter S] [--only NAME,...]
"""
import importlib.util
import json
import os
import sys

import torch
import torch.nn.functional as F
from torch import nn

_here = os.path.dirname(os.path.abspath(__file__))
_spec = importlib.util.spec_from_file_location("gpu_power_points", os.path.join(_here, "gpu-power-points.py"))
gpp = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(gpp)

BATCH, D_STEPS, H, W, C_IN = 32, 5, 96, 120, 15


class ConvBlock(nn.Sequential):
    """conv_block: 3x3 convolution ('same'), batch norm, Swish."""

    def __init__(self, cin, cout, stride=1, norm=True, act=nn.SiLU):
        super().__init__(nn.Conv2d(cin, cout, 3, stride=stride, padding=1),
                         nn.BatchNorm2d(cout) if norm else nn.Identity(), act())


class SubPixel(nn.Module):
    """subpixel_block: 3x3 convolution to 4 C channels, Swish, depth to space by 2."""

    def __init__(self, cin, cout):
        super().__init__()
        self.conv = nn.Conv2d(cin, 4 * cout, 3, padding=1)

    def forward(self, x):
        return F.pixel_shuffle(F.silu(self.conv(x)), 2)


class Decoder(nn.Module):
    def __init__(self, cin, cout):
        super().__init__()
        self.up = SubPixel(cin, cout)
        self.convs = nn.Sequential(ConvBlock(2 * cout, cout), ConvBlock(cout, cout))

    def forward(self, x, skip):
        return self.convs(torch.cat([self.up(x), skip], dim=1))


class Generator(nn.Module):
    """UNet_Sha, channels_start 56, average pooling, sub-pixel decoder, z branch."""

    def __init__(self, c=56):
        super().__init__()
        self.e1 = nn.Sequential(ConvBlock(C_IN, c), ConvBlock(c, c))
        self.e2 = ConvBlock(c, 2 * c)
        self.e3 = ConvBlock(2 * c, 4 * c)
        self.bridge = ConvBlock(4 * c, 8 * c)
        self.d1 = Decoder(8 * c, 4 * c)
        self.d2 = Decoder(4 * c, 2 * c)
        self.d3 = Decoder(2 * c, c)
        self.out_dyn = nn.Conv2d(c, 1, 1)
        self.out_z = nn.Conv2d(c, 1, 1)

    def forward(self, x):
        s1 = self.e1(x)
        s2 = self.e2(F.avg_pool2d(s1, 2))
        s3 = self.e3(F.avg_pool2d(s2, 2))
        b = self.bridge(F.avg_pool2d(s3, 2))
        d = self.d3(self.d2(self.d1(b, s3), s2), s1)
        return torch.cat([self.out_dyn(d), self.out_z(d)], dim=1)


class Critic(nn.Module):
    """Critic_Simple: four stride-2 conv blocks from 64 channels, global average pooling, dense 64 Swish, dense 1."""

    def __init__(self, c=64, norm=True, act=nn.SiLU):
        super().__init__()
        kw = {"norm": norm, "act": act}
        self.convs = nn.Sequential(ConvBlock(1, c, 2, **kw), ConvBlock(c, 2 * c, 2, **kw),
                                   ConvBlock(2 * c, 4 * c, 2, **kw), ConvBlock(4 * c, 8 * c, 2, **kw))
        self.fc1 = nn.Linear(8 * c, c)
        self.fc2 = nn.Linear(c, 1)

    def forward(self, x):
        return self.fc2(F.silu(self.fc1(self.convs(x).mean(dim=(2, 3)))))


def counts(m):
    trainable = sum(p.numel() for p in m.parameters() if p.requires_grad)
    stats = sum(b.numel() for n, b in m.named_buffers() if n.endswith("running_mean") or n.endswith("running_var"))
    return trainable, stats


class Step:
    """WGAN_Model.train_step on one 192-sample batch."""

    def __init__(self, dev, layout, critic=None):
        self.gen = Generator().to(dev).to(memory_format=layout).train()
        self.crit = (critic or Critic()).to(dev).to(memory_format=layout).train()
        self.gparams = list(self.gen.parameters())
        self.opt_c = torch.optim.Adam(self.crit.parameters(), lr=1e-6)
        self.opt_g = torch.optim.Adam(self.gparams, lr=1e-5)
        n = BATCH * (D_STEPS + 1)
        self.x = torch.randn(n, C_IN, H, W, device=dev).contiguous(memory_format=layout)
        self.y = torch.randn(n, 2, H, W, device=dev).contiguous(memory_format=layout)
        self.dev = dev

    def critic_update(self, i, gp=True):
        sl = slice(i * BATCH, (i + 1) * BATCH)
        real = self.y[sl, 0:1]
        with torch.no_grad():  # the generator runs inside the critic's tape, but no gradient reaches it
            fake = self.gen(self.x[sl])[:, 0:1]
        c_loss = self.crit(fake).mean() - self.crit(real).mean()
        if gp:
            alpha = torch.randn(BATCH, 1, 1, 1, device=self.dev)  # tf.random.normal, as the application draws it
            mix = (real + alpha * (fake - real)).requires_grad_(True)
            g = torch.autograd.grad(self.crit(mix).sum(), mix, create_graph=True)[0]
            norm = g.square().mean(dim=(1, 2, 3)).sqrt()
            c_loss = c_loss + 10.0 * (norm - 1.0).square().mean()
        self.opt_c.zero_grad(set_to_none=True)
        c_loss.backward()
        self.opt_c.step()

    def generator_update(self):
        sl = slice(BATCH * D_STEPS, BATCH * (D_STEPS + 1))
        out = self.gen(self.x[sl])
        g_loss = -self.crit(out[:, 0:1]).mean() + 1000.0 * (out - self.y[sl]).abs().mean()
        grads = torch.autograd.grad(g_loss, self.gparams)  # the generator's variables only: no critic wgrad
        for p, g in zip(self.gparams, grads):
            p.grad = g
        self.opt_g.step()

    def __call__(self):
        for i in range(D_STEPS):
            self.critic_update(i)
        self.generator_update()


def pieces(step):
    """The critic update taken apart (CUDA-event means): the generator's forward without gradients, the critic's
    forward alone, the gradient penalty's input gradient (create_graph), and that gradient's double backward with
    the interpolated forward's backward (the penalty term's whole backward)."""
    real, x = step.y[0:BATCH, 0:1], step.x[0:BATCH]
    with torch.no_grad():
        fake = step.gen(x)[:, 0:1]
    alpha = torch.randn(BATCH, 1, 1, 1, device=step.dev)

    def gen_fwd():
        with torch.no_grad():
            step.gen(x)

    def crit_fwd():
        with torch.no_grad():
            step.crit(real)

    def gp_grad():
        mix = (real + alpha * (fake - real)).requires_grad_(True)
        return torch.autograd.grad(step.crit(mix).sum(), mix, create_graph=True)[0]

    def gp_whole():
        g = gp_grad()
        (g.square().mean(dim=(1, 2, 3)).sqrt() - 1.0).square().mean().backward()
    return {"gen_fwd_nograd_s": gpp.timed(gen_fwd, 20), "critic_fwd_nograd_s": gpp.timed(crit_fwd, 20),
            "gp_input_grad_s": gpp.timed(gp_grad, 20), "gp_whole_s": gpp.timed(gp_whole, 20)}


def profile(step, path):
    """Every kernel of one step: name, calls, total GPU seconds, sorted by time."""
    from torch.profiler import ProfilerActivity, profile as tprof
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with tprof(activities=[ProfilerActivity.CUDA]) as prof:
        step()
        torch.cuda.synchronize()
    rows = {}
    for ev in prof.events():
        if ev.device_type != torch.autograd.DeviceType.CUDA:
            continue
        r = rows.setdefault(ev.name, [0, 0.0])
        r[0] += 1
        r[1] += ev.time_range.elapsed_us() / 1e6
    out = sorted(({"kernel": k, "calls": v[0], "s": v[1]} for k, v in rows.items()), key=lambda r: -r["s"])
    total = sum(r["s"] for r in out)
    with open(path, "w") as f:
        json.dump({"kernel_s_total": total, "kernels": out}, f, indent=1)
    return total, sum(r["calls"] for r in out)


def main():
    a, only = gpp.point_args(meter=5.0)
    torch.backends.cudnn.benchmark = True  # TensorFlow autotunes its convolutions by default
    g, c = counts(Generator()), counts(Critic())
    h, dev, info = gpp.open_gpu(a, generator_params=g, critic_params=c, trainable=g[0] + c[0],
                                statistics=g[1] + c[1], report=[9332299, 5280])
    pts, parts = [], {}

    def variant(name, layout):
        step = Step(dev, layout)
        pts.append(gpp.run_point(h, "ap5-" + name, step, a.warm, a.meter))
        if layout != torch.contiguous_format:
            return
        parts[name] = {
            "critic_update_s": gpp.timed(lambda: step.critic_update(0), 20),
            "critic_update_no_gp_s": gpp.timed(lambda: step.critic_update(0, gp=False), 20),
            "generator_update_s": gpp.timed(step.generator_update, 20),
            "step_s": gpp.timed(step, 5),
        }
        parts[name].update(pieces(step))
        for ab, crit in (("no-bn", Critic(norm=False)), ("relu", Critic(act=nn.ReLU))):
            st = Step(dev, layout, crit)
            parts[name][ab] = {"critic_update_s": gpp.timed(lambda: st.critic_update(0), 20),
                               "critic_update_no_gp_s": gpp.timed(lambda: st.critic_update(0, gp=False), 20)}
            parts[name][ab].update(pieces(st))
            st = None
        kt, kn = profile(step, os.path.splitext(a.out)[0] + f"-{name}-kernels.json")
        parts[name]["kernel_s_sum"] = kt
        parts[name]["kernels"] = kn
        print(json.dumps({name: parts[name]}), flush=True)

    gpp.run_variants(pts, "ap5-", only, gpp.LAYOUT_VARIANTS, variant)
    gpp.save(a.out, info, pts, parts)


if __name__ == "__main__":
    sys.exit(main())
