/* compute.c - time of the work on one GPU (roofline per operation, see compute.h).
 *
 * A transformer layer is the list of GEMMs of Megatron-LM's layer with shapes
 * divided by TP (Narayanan et al. SC21, section 3.2), plus the memory-bound
 * element-wise kernels between them (norms, bias-dropout-add, activation,
 * softmax) whose bytes follow the activation sizes of Korthikanti et al. 2023.
 * Backward costs two GEMMs (data and weight gradient) per forward GEMM and
 * twice the element-wise traffic.  Recomputation re-runs the attention core
 * (selective) or the whole forward (full) inside backward.
 *
 * Defaults for efficiencies live in the device files, each with its source:
 * gemm_eff from measured BF16 GEMM shares (MAMF; research notes 2.5), hbm_eff
 * from stream benchmarks.  FlashAttention runs at FLASH_EFF x gemm_eff: Dao
 * (2023, FlashAttention-2) reports 50-73 % of A100 peak forward+backward,
 * i.e. about 0.85 of the 86.9 % large-GEMM share measured on A100.
 */
#include "preflight/compute.h"

#include <math.h>
#include <string.h>

#define FLASH_EFF 0.85
/* Achievable share of link bandwidth for ring collectives inside a node:
 * NCCL bus bandwidth on NVLink3/4 is 77-88 % of the link rate, xGMI about 75 %
 * (research notes, energy-and-calibration.md 2.5). */
#define FABRIC_EFF_NVLINK 0.80
#define FABRIC_EFF_XGMI 0.75
#define FABRIC_EFF_PCIE 0.80

double pf_gemm_eff(const pf_device *d, double M, double N, double K) {
  double dmin = fmin(M, fmin(N, K));
  return d->gemm_eff * dmin / (dmin + d->gemm_half_dim);
}

static double peak_for(const pf_device *d, pf_precision p) {
  double pk = pf_device_peak(d, p);
  if (pk <= 0) pk = d->peak_flops[PF_FP16] > 0 ? d->peak_flops[PF_FP16] : d->vector_flops[PF_FP32];
  return pk;
}

double pf_gemm_time(const pf_device *d, pf_precision p, double M, double N, double K) {
  return 2.0 * M * N * K / (peak_for(d, p) * pf_gemm_eff(d, M, N, K));
}

double pf_mem_time(const pf_device *d, double bytes) { return bytes / (d->memory_bw_Bps * d->hbm_eff); }

static double fabric_eff(pf_fabric_kind k) {
  switch (k) {
  case PF_FABRIC_NVLINK_SWITCH: case PF_FABRIC_NVLINK_MESH: return FABRIC_EFF_NVLINK;
  case PF_FABRIC_INFINITY_FABRIC: case PF_FABRIC_XE_LINK: return FABRIC_EFF_XGMI;
  case PF_FABRIC_PCIE: case PF_FABRIC_NONE: return FABRIC_EFF_PCIE;
  }
  return FABRIC_EFF_PCIE;
}

/* Ring over t GPUs inside a node.  The per-GPU bandwidth a ring step can use is
 * the GPU's total fabric bandwidth on a switch, and on a mesh the links to the
 * other t-1 members (NCCL runs one ring per link direction), capped by the total. */
double pf_fabric_collective_time(const pf_machine *m, int kind, int t, double bytes) {
  if (t <= 1 || bytes <= 0) return 0;
  double bw = m->fabric_bw_Bps;
  if (m->fabric != PF_FABRIC_NVLINK_SWITCH) bw = fmin(bw, (t - 1) * m->fabric_pair_bw_Bps);
  if (bw <= 0) bw = m->host_link_bw_Bps > 0 ? m->host_link_bw_Bps : 16e9;
  bw *= fabric_eff(m->fabric);
  double steps = (kind == 0) ? 2.0 * (t - 1) : (double)(t - 1);
  double vol = steps / t * bytes;
  return steps * m->fabric_latency_s + vol / bw;
}

typedef struct {
  double gemm, mem, launch, flops;
} acc;

static void add_gemm(acc *a, const pf_scenario *sc, double mult, double M, double N, double K, double eff_scale) {
  const pf_device *d = &sc->machine.dev;
  double t = pf_gemm_time(d, sc->precision, M, N, K) / eff_scale;
  a->gemm += mult * t / sc->compute_eff_scale;
  a->flops += mult * 2.0 * M * N * K;
  a->launch += mult * d->kernel_launch_s;
}

static void add_mem(acc *a, const pf_scenario *sc, double bytes, int kernels) {
  a->mem += pf_mem_time(&sc->machine.dev, bytes) / sc->compute_eff_scale;
  a->launch += kernels * sc->machine.dev.kernel_launch_s;
}

/* Forward work of one transformer layer (one microbatch) into *f; the attention
 * core separately into *core (so selective recomputation can repeat it). */
static void layer_forward(const pf_scenario *sc, acc *f, acc *core) {
  const pf_workload *w = &sc->workload;
  const pf_plan *p = &sc->plan;
  double b = p->mbs, t = p->tp, c = p->cp;
  double s = w->seq, sl = s / c, h = w->hidden, a = w->heads, dh = h / a;
  double kv = h * w->kv_heads / w->heads, ff = w->ffn_hidden;
  double M = b * sl;
  double el = pf_precision_bytes(sc->precision);
  double x = b * sl * h / (p->sp ? t : 1.0);        /* elements of the replicated-or-split hidden state */
  double y = b * sl * ff / t;                       /* elements of the MLP intermediate */

  add_gemm(f, sc, 1, M, (h + 2 * kv) / t, h, 1.0);  /* QKV */
  add_gemm(f, sc, 1, M, h, h / t, 1.0);             /* attention output projection */
  add_gemm(f, sc, 1, M, (w->swiglu ? 2 : 1) * ff / t, h, 1.0); /* fc1 (gate + up for SwiGLU) */
  add_gemm(f, sc, 1, M, h, ff / t, 1.0);            /* fc2 */
  /* norms (read + write), two bias-dropout-add (read 2, write 1 + mask), activation */
  double bytes = 2 * 2 * el * x + 2 * (3 * el + 1) * x + (w->swiglu ? 3.0 : 2.0) * el * y;
  if (!w->learned_pos) bytes += 2 * el * (b * sl * (h + kv) / t); /* rotary embedding on q and k */
  add_mem(f, sc, bytes, 7);

  /* attention core: scores, softmax, dropout, weighted sum over (a/t) heads */
  double heads = a / t;
  if (p->flash_attn) {
    add_gemm(core, sc, 2 * b * heads, sl, s, dh, FLASH_EFF); /* QK^T and AV fused, one kernel */
    core->launch -= sc->machine.dev.kernel_launch_s * 2 * b * heads;
    core->launch += sc->machine.dev.kernel_launch_s;
  } else {
    add_gemm(core, sc, b * heads, sl, s, dh, 1.0);   /* QK^T per head (batched) */
    add_gemm(core, sc, b * heads, sl, dh, s, 1.0);   /* AV */
    core->launch -= sc->machine.dev.kernel_launch_s * (2 * b * heads - 2);
    double z = b * heads * sl * s;
    add_mem(core, sc, z * (4 * el + 1) + z * 2 * el, 2); /* scale-mask-softmax fused, dropout */
  }
}

void pf_stage_work_compute(const pf_scenario *sc, int stage, pf_stage_work *out) {
  const pf_workload *w = &sc->workload;
  const pf_plan *p = &sc->plan;
  const pf_machine *m = &sc->machine;
  memset(out, 0, sizeof *out);
  double el = pf_precision_bytes(sc->precision);

  if (w->kind != PF_WL_TRANSFORMER) {
    /* CNN / generic: FLOPs at the GEMM ceiling for large convolutions; memory-bound
     * traffic of about 6 passes over the kept activations (BN, ReLU, residual adds
     * forward and backward) when the activation size is known. */
    acc f = {0, 0, 0, 0};
    double flops = w->flops_per_sample * p->mbs;
    const pf_device *d = &m->dev;
    pf_precision prec = sc->precision;
    if (prec == PF_FP32 && d->peak_flops[PF_TF32] > 0) prec = PF_TF32; /* cuDNN allows TF32 by default */
    double rate = peak_for(d, prec) * d->gemm_eff * sc->compute_eff_scale;
    f.gemm = flops / rate;
    f.flops = flops;
    double act = w->act_bytes_per_sample * p->mbs * (el < 4 ? 0.5 : 1.0);
    f.mem = 6.0 * act / (d->memory_bw_Bps * d->hbm_eff) / sc->compute_eff_scale;
    f.launch = 160 * d->kernel_launch_s * 3; /* ~160 kernels per ResNet-50 forward (53 conv + BN + ReLU) */
    double tot = f.gemm + f.mem + f.launch;
    out->fwd_s = tot / 3.0;
    out->bwd_s = tot * 2.0 / 3.0;
    out->gemm_s = f.gemm; out->mem_s = f.mem; out->launch_s = f.launch;
    out->fwd_flops = flops / 3.0;
    out->bwd_flops = flops * 2.0 / 3.0;
    out->params = w->params;
  } else {
    int lps = w->layers / p->pp;
    out->layers = lps;
    acc lf = {0, 0, 0, 0}, core = {0, 0, 0, 0};
    layer_forward(sc, &lf, &core);
    acc fwd = {lf.gemm + core.gemm, lf.mem + core.mem, lf.launch + core.launch, lf.flops + core.flops};
    acc bwd = {2 * fwd.gemm, 2 * fwd.mem, 2 * fwd.launch, 2 * fwd.flops};
    if (p->recompute == PF_RECOMPUTE_FULL) {
      bwd.gemm += fwd.gemm; bwd.mem += fwd.mem; bwd.launch += fwd.launch; bwd.flops += fwd.flops;
    } else if (p->recompute == PF_RECOMPUTE_SELECTIVE && !p->flash_attn) {
      bwd.gemm += core.gemm; bwd.mem += core.mem; bwd.launch += core.launch; bwd.flops += core.flops;
    }
    double fs = lps * (fwd.gemm + fwd.mem + fwd.launch);
    double bs = lps * (bwd.gemm + bwd.mem + bwd.launch);
    out->gemm_s = lps * (fwd.gemm + bwd.gemm);
    out->mem_s = lps * (fwd.mem + bwd.mem);
    out->launch_s = lps * (fwd.launch + bwd.launch);
    out->fwd_flops = lps * fwd.flops;
    out->bwd_flops = lps * bwd.flops;

    double b = p->mbs, sl = (double)w->seq / p->cp, h = w->hidden, t = p->tp;
    double V = pf_workload_padded_vocab(w, p->tp);
    if (stage == 0) { /* embedding lookup (+ position), dropout */
      acc e = {0, 0, 0, 0};
      add_mem(&e, sc, 3 * el * b * sl * h / (p->sp ? t : 1), 2);
      fs += e.mem + e.launch;
      bs += 2 * (e.mem + e.launch);
      out->mem_s += 3 * e.mem;
      out->launch_s += 3 * e.launch;
    }
    if (stage == p->pp - 1) { /* final norm, logits, cross-entropy in fp32 */
      acc o = {0, 0, 0, 0};
      add_gemm(&o, sc, 1, b * sl, V / t, h, 1.0);
      add_mem(&o, sc, 4 * el * b * sl * h / (p->sp ? t : 1) + 12.0 * b * sl * V / t, 3);
      fs += o.gemm + o.mem + o.launch;
      bs += 2 * (o.gemm + o.mem + o.launch);
      out->gemm_s += 3 * o.gemm;
      out->mem_s += 3 * o.mem;
      out->launch_s += 3 * o.launch;
      out->fwd_flops += o.flops;
      out->bwd_flops += 2 * o.flops;
    }
    out->fwd_s = fs;
    out->bwd_s = bs;

    /* TP collectives: per layer forward 2 all-reduces (or 2 all-gathers + 2
     * reduce-scatters with SP) of the full b s h activation; the same in backward;
     * full recomputation repeats the forward ones.  Not overlapped (Megatron's
     * default without --tp-comm-overlap). */
    if (p->tp > 1) {
      double buf = b * sl * h * el;
      double one = p->sp ? pf_fabric_collective_time(m, 1, p->tp, buf) + pf_fabric_collective_time(m, 2, p->tp, buf)
                         : pf_fabric_collective_time(m, 0, p->tp, buf);
      one /= sc->comm_eff_scale;
      out->fwd_tp_s = lps * 2 * one;
      out->bwd_tp_s = lps * 2 * one * (p->recompute == PF_RECOMPUTE_FULL ? 2 : 1);
      if (stage == p->pp - 1) { /* logits: all-reduce of the loss pieces is tiny; vocab-parallel softmax */
        out->fwd_tp_s += pf_fabric_collective_time(m, 0, p->tp, 3 * b * sl * 4.0);
      }
    }
    out->p2p_bytes = b * sl * h * el / p->tp; /* Megatron scatters the activation over TP for the send */
    out->params = (lps * pf_workload_layer_params(w) +
                   (stage == 0 ? pf_workload_embedding_params(w, p->tp) : 0) +
                   (stage == p->pp - 1 ? pf_workload_output_params(w, p->tp) : 0)) / p->tp;
  }
  /* optimizer step: Adam over the local parameter shard, ~30 B per parameter
   * (read fp32 grad, master, m, v; write master, m, v, low-precision weight),
   * plus the gradient-norm pass (4 B per parameter). */
  double shard = out->params / (p->dist_opt ? (double)p->dp * p->cp : 1.0);
  out->optimizer_s = pf_mem_time(&m->dev, shard * 30.0 + out->params * 4.0) + 20 * m->dev.kernel_launch_s;
}
