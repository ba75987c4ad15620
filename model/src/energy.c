/* energy.c - GPU, node and facility energy of one iteration.
 *
 * Each GPU is, at any time, running GEMM-bound kernels, memory-bound kernels,
 * communication kernels only, or waiting with a live context (pipeline bubble,
 * exposed waits).  Power per state (shared/research/energy-and-calibration.md
 * 3.7-3.8 and 4.3):
 *   waiting   context_W (context alive; NCCL/RCCL kernels spinning count as comm)
 *   GEMM      context_W + 0.85 (tdp - context_W): tensor-core GEMMs draw close
 *             to the cap; 8xH100 nodes peak at 8.4 of 10.2 kW in training
 *             (Latif et al. 2024), H100 FP32 burn 580-650 W of 700 W
 *   memory    context_W + 0.55 (tdp - context_W) (HBM-bound kernels leave SMs idle)
 *   comm      comm_W
 * An MI250X's two GCDs share one package: per-GCD values are half the package.
 * Node power adds node_base_W (CPU, memory, NICs, board) over the iteration;
 * facility energy multiplies by the site's PUE.  The network's switches are
 * charged at switch_W for the share of switches the job's nodes use.
 */
#include "preflight/energy.h"

#include <math.h>
#include <string.h>

#define GEMM_SHARE 0.85
#define MEM_SHARE 0.55

double pf_energy_gemm_W(const pf_device *d) { return d->context_W + GEMM_SHARE * (d->tdp_W - d->context_W); }
double pf_energy_mem_W(const pf_device *d) { return d->context_W + MEM_SHARE * (d->tdp_W - d->context_W); }

void pf_energy_compute(const pf_scenario *sc, const pf_gpu_timeline *avg, double t_iter, pf_energy *e) {
  const pf_machine *m = &sc->machine;
  const pf_device *d = &m->dev;
  memset(e, 0, sizeof *e);
  double busy = avg->gemm_s + avg->mem_s + avg->comm_s;
  double idle = fmax(0.0, t_iter - busy);
  double gpu_J = avg->gemm_s * pf_energy_gemm_W(d) + avg->mem_s * pf_energy_mem_W(d) +
                 avg->comm_s * fmax(d->comm_W, d->context_W) + idle * d->context_W;
  gpu_J = fmin(gpu_J, d->tdp_W * t_iter); /* the cap bounds the average */
  e->gpu_J = gpu_J * sc->gpus;
  e->node_J = e->gpu_J + m->node_base_W * sc->nodes * t_iter;
  /* switches: one leaf per endpoints_per_leaf (or per switch) NIC ports, plus as many upper switches */
  int ports = sc->nodes * (m->nics_per_node > 0 ? m->nics_per_node : 1);
  int per_switch = m->net.endpoints_per_leaf > 0 ? m->net.endpoints_per_leaf
                   : m->net.endpoints_per_switch > 0 ? m->net.endpoints_per_switch : 16;
  double switches = sc->nodes > 1 ? 2.0 * ceil((double)ports / per_switch) : 0.0;
  e->network_J = switches * m->switch_W * t_iter;
  e->facility_J = (e->node_J + e->network_J) * m->pue;
  e->per_iteration_J = e->facility_J;
  e->avg_power_per_node_W = e->node_J / (sc->nodes * t_iter);
  e->avg_power_per_gpu_W = e->gpu_J / (sc->gpus * t_iter);
}
