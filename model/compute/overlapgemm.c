/* overlapgemm.c - the compute that communication hides behind, in seconds:
 * the GEMMs of a transformer layer under --tp-comm-overlap (Megatron with
 * Transformer Engine's userbuffers: each TP all-gather runs under the GEMM
 * that consumes it, QKV and FC1, each reduce-scatter under the GEMM that
 * produces it, projection and FC2), and the attention core under context
 * parallelism's ring exchange (all but the first of CP chunks).  Each is its
 * FLOPs at the stage's achieved compute rate (compute.h; the communication
 * module prices the collectives and what overlap hides: comm.c,
 * docs/communication.md section 6).
 */
#include "compute.h"

/* Achieved FLOP/s of the stage's compute-bound kernels, to turn GEMM FLOPs into time. */
double pf_stage_gemm_rate(const pf_scenario *sc, const pf_stage_work *w) {
  if (w->fwd.flops > 0 && w->fwd.limit_s[PF_LIMIT_COMPUTE] > 0) return w->fwd.flops / w->fwd.limit_s[PF_LIMIT_COMPUTE];
  double peak = pf_kernel_peak(&sc->machine.dev, sc->precision);
  return peak > 0 ? peak * sc->machine.dev.gemm_eff : 1e12;
}

void pf_stage_tp_gemms(const pf_scenario *sc, const pf_stage_work *w, pf_tp_gemms *g) {
  const pf_plan *p = &sc->plan;
  const pf_workload *wl = &sc->workload;
  double M = p->mbs * (double)wl->seq / p->cp, h = wl->hidden, t = p->tp, rate = pf_stage_gemm_rate(sc, w);
  double kv = h * wl->kv_heads / wl->heads, ff = wl->ffn_hidden;
  g->qkv_s = 2 * M * (h + 2 * kv) / t * h / rate;
  g->proj_s = 2 * M * h / t * h / rate;
  g->fc1_s = 2 * M * (wl->swiglu ? 2 : 1) * ff / t * h / rate;
  g->fc2_s = 2 * M * ff / t * h / rate;
}

double pf_stage_cp_attention_s(const pf_scenario *sc, const pf_stage_work *w) {
  const pf_plan *p = &sc->plan;
  const pf_workload *wl = &sc->workload;
  double sl = (double)wl->seq / p->cp;
  return 4.0 * p->mbs * sl * wl->seq * wl->hidden / p->tp / pf_stage_gemm_rate(sc, w) * (p->cp - 1) / p->cp;
}
