/* energy.h - power by state over the simulated iteration (DESIGN 5.5). */
#ifndef PREFLIGHT_ENERGY_H
#define PREFLIGHT_ENERGY_H

#include "preflight/predict.h"

/* Per-GPU time in each state over one iteration of length t_iter. */
typedef struct pf_gpu_timeline {
  double gemm_s, mem_s, comm_s, idle_s;
} pf_gpu_timeline;

/* Device power in each state, clamped at the cap. */
double pf_energy_gemm_W(const pf_device *d);
double pf_energy_mem_W(const pf_device *d);

/* Fill p->energy from the average GPU timeline over the job. */
void pf_energy_compute(const pf_scenario *sc, const pf_gpu_timeline *avg, double t_iter, pf_energy *e);

#endif
