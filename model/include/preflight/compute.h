/* compute.h - time of the work on one GPU: GEMMs at the achievable rate for
 * their shape, memory-bound operations at the achievable HBM bandwidth, and a
 * launch overhead per kernel (roofline per operation).
 *
 *   t_gemm = 2 M N K / (peak(prec) x eff(M,N,K)),  eff = gemm_eff x d / (d + d_half),
 *            d = min(M, N, K)   (saturation of tile occupancy for small shapes)
 *   t_mem  = bytes / (memory_bw x hbm_eff)
 * Per-op time is max(t_gemm, t_mem) + kernel_launch.
 */
#ifndef PREFLIGHT_COMPUTE_H
#define PREFLIGHT_COMPUTE_H

#include "preflight/plan.h"

typedef struct pf_stage_work {
  double fwd_s, bwd_s;           /* per microbatch, compute only (incl. recompute in bwd) */
  double fwd_tp_s, bwd_tp_s;     /* per microbatch, exposed TP collectives */
  double gemm_s, mem_s, launch_s;/* breakdown of fwd+bwd compute per microbatch */
  double fwd_flops, bwd_flops;   /* hardware FLOPs per microbatch (incl. recompute) */
  double p2p_bytes;              /* activation bytes sent to the next stage per microbatch */
  double params;                 /* parameters held by one GPU of this stage */
  double optimizer_s;            /* optimizer step */
  int layers;
} pf_stage_work;

/* Time of one GEMM (M x K) * (K x N) in precision p on device d. */
double pf_gemm_time(const pf_device *d, pf_precision p, double M, double N, double K);
/* Achievable fraction of peak for that shape. */
double pf_gemm_eff(const pf_device *d, double M, double N, double K);
/* Time to stream bytes through HBM. */
double pf_mem_time(const pf_device *d, double bytes);

/* Work of pipeline stage s (0..pp-1) for one microbatch. */
void pf_stage_work_compute(const pf_scenario *sc, int stage, pf_stage_work *w);

/* Time of a ring collective inside one node's fabric over t GPUs:
 * kind 0 all-reduce, 1 reduce-scatter, 2 all-gather; bytes = full buffer. */
double pf_fabric_collective_time(const pf_machine *m, int kind, int t, double bytes);

#endif
