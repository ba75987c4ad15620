/* budget.h - what a training run costs on a machine, in the terms of an
 * allocation request: wall time, jobs under the site's wall-time limit,
 * checkpoint and failure overheads, GPU-hours, node-hours, site billing units
 * and energy (DESIGN 5.7); its range is the prediction interval's
 * (interval.h), applied by the command.
 *
 * Checkpoints and failures (budget.c has the sources):
 *   checkpoint size    S = 14 B per parameter (bf16 weights + fp32 main weights and two Adam moments)
 *   write time         d = S / B, B = min(nodes x one NIC's rate, file-system write bandwidth)
 *   system MTBF        M = GPU MTBF / GPUs
 *   interval (Young)   tau = sqrt(2 d M), at least d, at most the job's wall-time limit
 *   work T_c = iterations x t_iter grows to
 *     T = T_c (1 + d / tau) / (1 - (tau / 2 + R) / M)
 *   (each failure loses half an interval of work and the restart R), then
 *   jobs = ceil(T / (L - start-up)) and the wall time adds their start-ups.
 * Energy: training power over the computing time (iterations, other phases,
 * lost work redone), the nodes' waiting power (GPUs holding a context, no
 * kernels) over checkpoint writes, restarts and start-ups.
 */
#ifndef PREFLIGHT_BUDGET_H
#define PREFLIGHT_BUDGET_H

#include "predict.h"

typedef struct pf_budget_opts {
  double tokens;              /* training tokens, or */
  double epochs, samples;     /* epochs of samples */
  double other_fraction;      /* other phases named by the user: fraction of compute time */
  double eval_interval;       /* evaluate every this many iterations (Megatron --eval-interval; 0 = none) */
  double eval_iters;          /* forward-only iterations per evaluation (Megatron --eval-iters) */
  double checkpoint_B;        /* 0: 14 B per parameter */
  double fs_bw_Bps;           /* 0: min(nodes x NIC rate, the machine's storage bandwidth) */
  double gpu_mtbf_s;          /* 0: no failures */
  double restart_s;           /* lost per failure besides the lost work */
  double startup_s;           /* per job */
  double walltime_s;          /* 0: the machine's limit (or one job when unknown) */
} pf_budget_opts;

typedef struct pf_budget {
  double iterations, compute_s;      /* T_c */
  double checkpoint_B, checkpoint_s, interval_s, checkpoint_frac;
  double mtbf_s, failures, failure_s; /* system MTBF, expected failures, time they cost */
  double other_s;
  double evaluations, eval_s;        /* evaluations in the run and their time (forward-only iterations) */
  double jobs, walltime_limit_s, startup_total_s;
  double wall_s;
  double gpu_h, node_h, billed_node_h, units, energy_MWh;
  double busy_s, waiting_s;          /* wall time with the GPUs computing (training, other phases, lost work
                                        redone) and waiting (checkpoint writes, restarts, start-ups) */
  double energy_busy_MWh, energy_waiting_MWh; /* facility energy of each: energy_MWh is their sum */
  double energy_eval_MWh;            /* the evaluations' share of energy_busy_MWh (forward kernels' power) */
  bool failures_dominate;            /* (tau/2 + R) >= M: the run cannot progress */
} pf_budget;

/* Defaults: failures at the Llama 3 rate, 10 min restart, 10 min start-up. */
void pf_budget_opts_init(pf_budget_opts *o);

/* Fill b for scenario sc (after pf_predict) and its prediction p.  Returns 0
 * or PF_EINVAL (no run length). */
int pf_budget_compute(const pf_scenario *sc, const pf_prediction *p, const pf_budget_opts *o, pf_budget *b);

#endif
