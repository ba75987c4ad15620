#!/usr/bin/env python3
"""gpu-power-points.py - the power a real GPU draws at the operating points of docs/energy.md.

Runs only on a machine with a GPU and PyTorch: an NVIDIA one with nvidia-ml-py (pynvml), or an AMD one with
ROCm's amdsmi Python package; no test calls it.  It is the PyTorch-side companion of `preflight calibrate`
(whose power points are the harness's own kernels and the vendor GEMM): here the points are what a training
framework really launches, so that the device files' power terms (context, wait, active, tensor, hbm) can be
set from a measurement instead of a default rule.

Each point runs back to back for WARM seconds, then METER seconds metered by the driver's energy counter
(NVML's total energy in mJ since driver load; amdsmi's energy accumulator times its resolution in uJ; power =
energy / wall time), with the clock (and on NVIDIA the clock-event reasons) sampled every 0.1 s over the
metered window.  An MI250/MI250X OAM's two GCDs are counted once, on its even GCD, the odd one reading 0
(ROCm/rocm_smi_lib#160, ml-energy/zeus#203): the meter then reads the pair's even GCD, records
"devices_per_reading": 2 and the package's bare idle (before any context), and gives each point's power
both as read ("package_W") and as this GCD's share (the package less the other GCD at half its bare idle),
which is what a per-GCD device file holds.  Nothing else may run on the other GCD meanwhile.
Tested on NVIDIA H100 and H200 (calibrate/results/); the AMD path has not run on a GPU yet.  Points:

  context      the process holds a GPU context and 1 GiB, nothing runs (bare context power)
  wait-2ms     a 20 us kernel, synchronize, then the host sleeps 2 ms (a GPU waiting on host work)
  wait-20ms    the same with 20 ms of sleep: against wait-2ms, whether the power of a wait depends on its
               length (a power-management time constant; docs/energy.md, "MI250")
  eager-tiny   4096-element adds launched from Python back to back (launch-bound: the GPU idles between)
  graph-tiny   the same adds replayed as one CUDA graph (short kernels back to back: the active floor)
  copy         device-to-device copy of 2 GiB of random bytes (HBM-bound)
  gemm         bf16 8192^3 matmul on random operands (the full-load point; the clock shows what the power
               cap costs)
  gemm-fp32    fp32 8192^3 matmul with TF32 off (cuBLAS SGEMM on the FP32 pipes: what the device file's
               `vector` coefficient prices)
  gemm-tf32    the same matmul with TF32 on (the tensor cores at the TF32 rate)
  duty50       that matmul, synchronize, then the host sleeps as long as the matmul took (half busy): is the
               mean power the time-weighted mean of the gemm and wait points, as the model assumes?
  dense4       4 dense bf16 transformer layers, hidden 8192, sequence 4096, micro-batch 2, forward and
               backward (issue 27's test case: westai-h100, one GPU)
  small-train  a DeBERTa-v3-small-sized encoder (6 layers, hidden 768, 12 heads, FFN 3072, vocabulary 128100)
               fine-tuned at batch 32, sequence 64, fp16 autocast with GradScaler and AdamW (MAELSTROM AP2's
               shape: a host-bound training step)
  deberta-ap2  MAELSTROM AP2 itself: Hugging Face transformers' DebertaV2ForSequenceClassification built from
               microsoft/deberta-v3-small's config (no weights are downloaded: random initialisation), batch 32,
               sequence 64, fp16 autocast, GradScaler, gradient clipping at 1.0 and AdamW, as the Trainer's
               fp16=True step runs it

Usage: gpu-power-points.py OUT.json [--warm S] [--meter S] [--only NAME,...] [--smi-index N]
"""
import argparse
import json
import sys
import threading
import time
import traceback

import torch
import torch.nn.functional as F


class NvmlSource:
    """NVML on one device: the energy counter (mJ), power reading, SM clock and clock-event reasons."""
    share = 1

    def __init__(self, index):
        import pynvml
        self.nv = pynvml
        pynvml.nvmlInit()
        self.h = pynvml.nvmlDeviceGetHandleByIndex(index)

    def energy_J(self):
        return self.nv.nvmlDeviceGetTotalEnergyConsumption(self.h) / 1000.0

    def sample(self):
        """(clock MHz, power W, reason bits), None where not readable."""
        try:
            return (self.nv.nvmlDeviceGetClockInfo(self.h, self.nv.NVML_CLOCK_SM),
                    self.nv.nvmlDeviceGetPowerUsage(self.h) / 1000.0,
                    self.nv.nvmlDeviceGetCurrentClocksEventReasons(self.h))
        except self.nv.NVMLError:
            return None, None, 0

    def describe(self):
        return {"gpu": self.nv.nvmlDeviceGetName(self.h), "driver": self.nv.nvmlSystemGetDriverVersion(),
                "power_limit_W": self.nv.nvmlDeviceGetEnforcedPowerLimit(self.h) / 1000.0,
                "max_sm_clock_MHz": self.nv.nvmlDeviceGetMaxClockInfo(self.h, self.nv.NVML_CLOCK_SM),
                "power_source": "nvml"}

    def close(self):
        self.nv.nvmlShutdown()


def _first(d, *keys):
    """The first of keys present in dict d (amdsmi renamed its fields between ROCm releases), else None."""
    for k in keys:
        if isinstance(d, dict) and d.get(k) not in (None, "N/A"):
            return d[k]
    return None


class AmdSource:
    """amdsmi on one GCD or GPU: the energy accumulator x its resolution (uJ), socket power and GFX clock.  On an
    MI250/MI250X the odd GCD's counter reads 0 and its OAM is read on the even one: share 2 (module docstring)."""

    def __init__(self, index):
        import amdsmi
        self.a = amdsmi
        amdsmi.amdsmi_init()
        hs = amdsmi.amdsmi_get_processor_handles()
        self.own, self.h, self.share = hs[index], hs[index], 1
        partner = index ^ 1
        own = self._count(hs[index]) > 0
        if partner < len(hs) and own != (self._count(hs[partner]) > 0):
            self.share = 2
            if not own:
                self.h = hs[partner]
        self.read_index = index if self.h is self.own else partner

    def _count(self, h):
        try:
            return _first(self.a.amdsmi_get_energy_count(h), "energy_accumulator", "power") or 0
        except self.a.AmdSmiException:
            return 0

    def energy_J(self):
        d = self.a.amdsmi_get_energy_count(self.h)
        return _first(d, "energy_accumulator", "power") * d["counter_resolution"] * 1e-6

    def sample(self):
        try:
            p = _first(self.a.amdsmi_get_power_info(self.h), "current_socket_power", "average_socket_power")
            c = _first(self.a.amdsmi_get_clock_info(self.own, self.a.AmdSmiClkType.GFX), "clk", "cur_clk")
            return c, p, 0
        except self.a.AmdSmiException:
            return None, None, 0

    def describe(self):
        out = {"power_source": "amdsmi", "devices_per_reading": self.share, "smi_index_read": self.read_index}
        for key, fn, field in (("gpu", "amdsmi_get_gpu_asic_info", ("market_name",)),
                               ("driver", "amdsmi_get_gpu_driver_info", ("driver_version",)),
                               ("power_cap_uW", "amdsmi_get_power_cap_info", ("power_cap",))):
            try:
                out[key] = _first(getattr(self.a, fn)(self.h), *field)
            except Exception:  # a field this ROCm release lacks is left out, not an error
                out[key] = None
        if out.get("power_cap_uW"):  # the package's cap; a GCD's share of it as a device file's tdp
            out["power_limit_W"] = out["power_cap_uW"] * 1e-6 / self.share
        return out

    def close(self):
        self.a.amdsmi_shut_down()


# The package's bare idle (W) read before the context, for a reading of two GCDs (AmdSource.share 2).
PACKAGE_IDLE_W = None


def per_device_W(package_W, share):
    """One GCD's share of a package reading: the package less the other GCD at half the package's bare idle."""
    if share <= 1 or PACKAGE_IDLE_W is None:
        return package_W
    return package_W - PACKAGE_IDLE_W * (share - 1) / share


class Meter:
    """A source's energy over a window, with its clock, power and reasons sampled every 0.1 s."""

    def __init__(self, h):
        self.h = h

    def __enter__(self):
        self.stop = False
        self.clocks, self.reasons, self.power = [], 0, []
        self.e0 = self.h.energy_J()
        self.t0 = time.perf_counter()
        self.th = threading.Thread(target=self._sample, daemon=True)
        self.th.start()
        return self

    def _sample(self):
        while not self.stop:
            c, p, r = self.h.sample()
            if c is not None:
                self.clocks.append(c)
            if p is not None:
                self.power.append(p)
            self.reasons |= r
            time.sleep(0.1)

    def __exit__(self, *exc):
        if torch.cuda.is_initialized():
            torch.cuda.synchronize()
        self.t1 = time.perf_counter()
        self.e1 = self.h.energy_J()
        self.stop = True
        self.th.join()

    def result(self):
        wall = self.t1 - self.t0
        c = sorted(self.clocks) or [0]
        read = (self.e1 - self.e0) / wall
        r = {
            "wall_s": wall,
            "energy_J": (self.e1 - self.e0),
            "power_W": per_device_W(read, self.h.share),
            "power_usage_median_W": sorted(self.power)[len(self.power) // 2] if self.power else None,
            "sm_clock_MHz_median": c[len(c) // 2],
            "sm_clock_MHz_min": c[0],
            "clock_event_reasons_mask": self.reasons,
        }
        if self.h.share > 1:
            r["package_W"] = read
        return r


def set_tf32(on):
    """fp32 convolutions and matmuls at the TF32 tensor-core rate (on) or the IEEE FP32 one (off)."""
    mode = "tf32" if on else "ieee"
    try:
        torch.backends.cudnn.conv.fp32_precision = mode
        torch.backends.cuda.matmul.fp32_precision = mode
    except AttributeError:  # PyTorch before 2.9
        torch.backends.cudnn.allow_tf32 = on
        torch.backends.cuda.matmul.allow_tf32 = on


def timed(fn, reps, warm=3):
    """Mean GPU seconds of fn over reps back-to-back calls, by CUDA events, after warm calls (a call shorter
    than its host dispatch measures the host's issue rate, not the GPU)."""
    for _ in range(warm):
        fn()
    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    torch.cuda.synchronize()
    e0.record()
    for _ in range(reps):
        fn()
    e1.record()
    torch.cuda.synchronize()
    return e0.elapsed_time(e1) / 1000.0 / reps


def run_point(h, name, step, warm, meter, flops_per_step=None, bytes_per_step=None):
    """Run step() back to back: warm seconds unmetered, then meter seconds metered."""
    t_end = time.perf_counter() + warm
    while time.perf_counter() < t_end:
        step()
    torch.cuda.synchronize()
    n = 0
    with Meter(h) as m:
        t_end = time.perf_counter() + meter
        while time.perf_counter() < t_end:
            step()
            n += 1
    r = m.result()
    r["name"] = name
    r["steps"] = n
    r["step_s"] = r["wall_s"] / n if n else None
    if flops_per_step and n:
        r["TFLOPs"] = flops_per_step * n / r["wall_s"] / 1e12
    if bytes_per_step and n:
        r["TBps"] = bytes_per_step * n / r["wall_s"] / 1e12
    print(json.dumps(r), flush=True)
    return r


def dense_layers(hidden, layers, dev):
    """Weights of a GPT-style layer: QKV, projection, FFN up and down (4 x hidden), bf16 leaves."""
    shapes = ((3 * hidden, hidden), (hidden, hidden), (4 * hidden, hidden), (hidden, 4 * hidden))
    return [[(torch.randn(o, i, device=dev, dtype=torch.bfloat16) * 0.01).requires_grad_(True) for (o, i) in shapes]
            for _ in range(layers)]


def dense_forward(x, ws, heads):
    b, s, hdim = x.shape
    for wqkv, wo, w1, w2 in ws:
        y = F.layer_norm(x, (hdim,))
        q, k, v = F.linear(y, wqkv).view(b, s, 3, heads, hdim // heads).permute(2, 0, 3, 1, 4)
        a = F.scaled_dot_product_attention(q, k, v, is_causal=True).transpose(1, 2).reshape(b, s, hdim)
        x = x + F.linear(a, wo)
        y = F.layer_norm(x, (hdim,))
        x = x + F.linear(F.gelu(F.linear(y, w1)), w2)
    return x


class SmallEncoder(torch.nn.Module):
    def __init__(self, vocab=128100, hidden=768, layers=6, heads=12, ffn=3072, classes=2):
        super().__init__()
        self.emb = torch.nn.Embedding(vocab, hidden)
        self.pos = torch.nn.Embedding(512, hidden)
        layer = torch.nn.TransformerEncoderLayer(hidden, heads, ffn, dropout=0.1, activation="gelu",
                                                 batch_first=True, norm_first=False)
        self.enc = torch.nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.head = torch.nn.Linear(hidden, classes)

    def forward(self, ids):
        pos = torch.arange(ids.shape[1], device=ids.device)
        return self.head(self.enc(self.emb(ids) + self.pos(pos))[:, 0])


def deberta_point(h, dev, warm, meter):
    """MAELSTROM AP2's training step (DeBERTa-v3-small fine-tuning), as the Hugging Face Trainer runs it."""
    from transformers import DebertaV2Config, DebertaV2ForSequenceClassification
    # microsoft/deberta-v3-small config.json
    cfg = DebertaV2Config(vocab_size=128100, hidden_size=768, num_hidden_layers=6, num_attention_heads=12,
                          intermediate_size=3072, hidden_act="gelu", max_position_embeddings=512, type_vocab_size=0,
                          relative_attention=True, position_buckets=256, norm_rel_ebd="layer_norm",
                          share_att_key=True, pos_att_type=["p2c", "c2p"], max_relative_positions=-1,
                          position_biased_input=False, layer_norm_eps=1e-7, num_labels=2)
    model = DebertaV2ForSequenceClassification(cfg).to(dev).train()
    opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
    scaler = torch.amp.GradScaler("cuda")
    ids = torch.randint(0, 128100, (32, 64), device=dev)
    mask = torch.ones_like(ids)
    lab = torch.randint(0, 2, (32,), device=dev)

    def step():
        with torch.autocast("cuda", dtype=torch.float16):
            loss = model(input_ids=ids, attention_mask=mask, labels=lab).loss
        scaler.scale(loss).backward()
        scaler.unscale_(opt)
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        scaler.step(opt)
        scaler.update()
        opt.zero_grad(set_to_none=True)
        loss.item()
    return run_point(h, "deberta-ap2", step, warm, meter)


def point_args(meter=6.0):
    """OUT.json [--warm S] [--meter S] [--only NAME,...]: this script's command line and the per-application
    scripts' (maelstrom-ap1-torch.py, maelstrom-ap5-torch.py); the arguments and the --only names (None: all)."""
    ap = argparse.ArgumentParser()
    ap.add_argument("out")
    ap.add_argument("--warm", type=float, default=2.0)
    ap.add_argument("--meter", type=float, default=meter)
    ap.add_argument("--only", default="")
    ap.add_argument("--smi-index", type=int, default=0,
                    help="the NVML / amdsmi index of the GPU torch sees as cuda:0 (default 0)")
    a = ap.parse_args()
    return a, (set(a.only.split(",")) if a.only else None)


_SOURCES = []


def open_gpu(a, **extra):
    """Seed 1, the power source of GPU 0 (NVML, or amdsmi under ROCm at --smi-index) and the run's record (the
    device, its driver and power limit, the versions, the windows of a, and extra) printed; returns the source,
    the torch device and the record.  A reading of a whole MI250/MI250X OAM first meters its bare idle, before
    this process makes a context."""
    global PACKAGE_IDLE_W
    torch.manual_seed(1)
    rocm = getattr(torch.version, "hip", None) is not None
    h = AmdSource(a.smi_index) if rocm else NvmlSource(a.smi_index)
    _SOURCES.append(h)
    info = h.describe()
    if h.share > 1:
        with Meter(h) as m:
            time.sleep(3.0)
        PACKAGE_IDLE_W = (m.e1 - m.e0) / (m.t1 - m.t0)
        info["package_idle_W"] = PACKAGE_IDLE_W
    info.update({"torch": torch.__version__, "hip": getattr(torch.version, "hip", None),
                 "cudnn": torch.backends.cudnn.version(), "seed": 1, "warm_s": a.warm, "meter_s": a.meter})
    info.update(extra)
    print(json.dumps(info), flush=True)
    return h, torch.device("cuda:0"), info


# The per-application scripts' variants: TF32 or plain FP32 convolutions and matmuls, on NCHW (PyTorch's default)
# or channels-last tensors.
LAYOUT_VARIANTS = (("tf32-nchw", True, torch.contiguous_format), ("fp32-nchw", False, torch.contiguous_format),
                   ("tf32-nhwc", True, torch.channels_last), ("fp32-nhwc", False, torch.channels_last))


def run_variants(pts, prefix, only, variants, body):
    """body(name, layout) for each of variants that --only keeps, with TF32 set as the variant says; a variant
    that fails is printed and recorded in pts ({"name": prefix + name, "error": ...}) and the others still run;
    the caching allocator is emptied and the peak-memory counter reset after each."""
    for name, tf32, layout in variants:
        if only is not None and name not in only:
            continue
        set_tf32(tf32)
        try:
            body(name, layout)
        except Exception as e:
            traceback.print_exc()
            pts.append({"name": prefix + name, "error": repr(e)[:300]})
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()


def save(path, info, pts, parts=None):
    """TF32 back off, the record, points (and parts) written to path, the power sources closed."""
    set_tf32(False)
    doc = {"info": info, "points": pts}
    if parts is not None:
        doc["parts"] = parts
    with open(path, "w") as f:
        json.dump(doc, f, indent=1)
    while _SOURCES:
        _SOURCES.pop().close()


def main():
    a, only = point_args()
    want = lambda n: only is None or n in only
    h, dev, info = open_gpu(a)
    pts = []
    ballast = torch.empty(1 << 30, dtype=torch.uint8, device=dev)
    torch.cuda.synchronize()
    time.sleep(1.0)
    if want("context"):
        pts.append(run_point(h, "context", lambda: time.sleep(0.05), a.warm, a.meter))

    small = torch.randn(256, 256, device=dev)
    for name, sleep_s in (("wait-2ms", 0.002), ("wait-20ms", 0.020)):
        if want(name):
            def wait_step(sleep_s=sleep_s):
                torch.mm(small, small)
                torch.cuda.synchronize()
                time.sleep(sleep_s)
            pts.append(run_point(h, name, wait_step, a.warm, a.meter))

    tiny = torch.zeros(4096, device=dev)
    if want("eager-tiny"):
        def eager_step():
            for _ in range(100):
                tiny.add_(1.0)
        pts.append(run_point(h, "eager-tiny", eager_step, a.warm, a.meter))
    if want("graph-tiny"):
        g = torch.cuda.CUDAGraph()
        s = torch.cuda.Stream()
        with torch.cuda.stream(s):
            for _ in range(3):
                tiny.add_(1.0)
        torch.cuda.current_stream().wait_stream(s)
        with torch.cuda.graph(g):
            for _ in range(1000):
                tiny.add_(1.0)
        pts.append(run_point(h, "graph-tiny", g.replay, a.warm, a.meter))
        r = pts[-1]
        r["kernel_s"] = r["step_s"] / 1000

    if want("copy"):
        # random bytes: fresh allocations read as zeros, and zeros toggle no bits (a lower power)
        src = torch.randint(0, 256, (1 << 31,), dtype=torch.uint8, device=dev)
        dst = torch.empty_like(src)
        pts.append(run_point(h, "copy", lambda: dst.copy_(src), a.warm, a.meter, bytes_per_step=2 * src.numel()))
        del src, dst

    if want("gemm"):
        n = 8192
        x = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
        y = torch.randn(n, n, device=dev, dtype=torch.bfloat16)
        pts.append(run_point(h, "gemm", lambda: torch.mm(x, y), a.warm, a.meter, flops_per_step=2.0 * n ** 3))
        if want("duty50"):
            busy = pts[-1]["step_s"]

            def duty_step():
                torch.mm(x, y)
                torch.cuda.synchronize()
                time.sleep(busy)
            pts.append(run_point(h, "duty50", duty_step, a.warm, a.meter, flops_per_step=2.0 * n ** 3))
        del x, y

    for name, tf32 in (("gemm-fp32", False), ("gemm-tf32", True)):
        if want(name):
            set_tf32(tf32)
            n = 8192
            x = torch.randn(n, n, device=dev)
            y = torch.randn(n, n, device=dev)
            pts.append(run_point(h, name, lambda: torch.mm(x, y), a.warm, a.meter, flops_per_step=2.0 * n ** 3))
            del x, y
            set_tf32(False)

    if want("dense4"):
        hid, seq, mbs, heads, nl = 8192, 4096, 2, 64, 4
        ws = dense_layers(hid, nl, dev)
        x0 = torch.randn(mbs, seq, hid, device=dev, dtype=torch.bfloat16)

        def dense_step():
            out = dense_forward(x0, ws, heads)
            out.float().square().mean().backward()
        # 6 x parameters x tokens for the layers' GEMMs, plus causal attention: 4 s^2 h per layer forward
        # halved by the mask, x3 for backward (the Megatron/Narayanan count without recomputation)
        tokens = mbs * seq
        flops = nl * (6 * 12 * hid * hid * tokens + 3 * 4 * mbs * seq * seq * hid / 2)
        pts.append(run_point(h, "dense4", dense_step, a.warm, a.meter, flops_per_step=flops))
        del ws, x0

    if want("small-train"):
        model = SmallEncoder().to(dev)
        opt = torch.optim.AdamW(model.parameters(), lr=2e-5)
        scaler = torch.amp.GradScaler("cuda")
        ids = torch.randint(0, 128100, (32, 64), device=dev)
        lab = torch.randint(0, 2, (32,), device=dev)

        def train_step():
            opt.zero_grad(set_to_none=True)
            with torch.autocast("cuda", dtype=torch.float16):
                loss = F.cross_entropy(model(ids), lab)
            scaler.scale(loss).backward()
            scaler.step(opt)
            scaler.update()
            loss.item()  # the Trainer reads the loss each logging step; here every step, a host sync
        pts.append(run_point(h, "small-train", train_step, a.warm, a.meter))

    if want("deberta-ap2"):
        pts.append(deberta_point(h, dev, a.warm, a.meter))

    del ballast
    save(a.out, info, pts)


if __name__ == "__main__":
    sys.exit(main())
