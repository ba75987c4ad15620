/* predict.h - one prediction: the simulated iteration and what follows from it.
 *
 * pf_predict() checks the plan and memory, computes per-stage work, runs the
 * pipeline engine (SimGrid DES of one representative pipeline by default),
 * adds data-parallel collectives started when the DES says their gradient
 * buckets are ready, the optimizer step, and the energy over the timeline.
 */
#ifndef PREFLIGHT_PREDICT_H
#define PREFLIGHT_PREDICT_H

#include "preflight/memory.h"
#include "preflight/plan.h"

#define PF_MAX_WARNINGS 8

typedef struct pf_breakdown {
  double compute, tp_comm, pp_bubble, pp_comm, dp_comm_exposed, optimizer, overhead;
} pf_breakdown;

typedef struct pf_energy {
  double gpu_J, node_J, network_J, facility_J;   /* per iteration, whole job */
  double avg_power_per_node_W, avg_power_per_gpu_W;
  double per_iteration_J;                        /* = facility_J */
} pf_energy;

typedef struct pf_prediction {
  double iteration_time_s, tokens_per_s, samples_per_s;
  double tflops_per_gpu, mfu;                    /* model FLOPs (Megatron's count) */
  double hw_tflops_per_gpu;                      /* including recomputation */
  double model_flops_per_iter;
  pf_breakdown breakdown_s;
  pf_memory memory;
  bool fits;
  pf_energy energy;
  double pipeline_s;                             /* DES makespan of the representative pipeline */
  double dp_comm_s;                              /* total DP collective time (before overlap) */
  char dp_algorithm[32];
  char engine[16];
  int des_events;                                /* simulated activities (0 for analytic) */
  int nwarnings;
  char warnings[PF_MAX_WARNINGS][256];
} pf_prediction;

/* Predict one scenario (pf_plan_check() is called). Returns 0, or PF_EPLAN /
 * PF_ENOFIT / PF_ESIM with detail; on PF_ENOFIT *out is filled (memory, fits
 * = false) so callers can print the numbers. */
int pf_predict(pf_scenario *sc, pf_prediction *out);

/* Add a warning (truncated to fit). */
void pf_prediction_warn(pf_prediction *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
