/* energy.c - power from what each device does, at every metering scope, and
 * the clock a power cap leaves (DESIGN 5.5; docs/energy.md has the formulas).
 *
 * Device (one logical GPU, without its package share), over a window T:
 *   E_dev = context_W T                                 (a live context, clocks up)
 *         + dynamic_J(r)                                (the compute kernels: the device's power model,
 *                                                        pmodel.h; the utilisation model, pm_util.c)
 *         + max(0, comm_W - context_W) t_comm_exposed   (communication kernels alone)
 *         + max(0, wait_W - context_W) t_gaps           (inside the step loop, no kernel running)
 * Communication hidden under compute is charged once: its time is inside the
 * compute kernels' window and adds nothing on top.  Devices of the job's
 * nodes that the job does not use draw idle_W; the package share (package_W:
 * Grace CPU and LPDDR5X of a GH200 module) is charged at package and node
 * scope, never as "GPU"; an MI250X package holds two GCDs, so a job on an odd
 * number of GCDs pays the idle sibling at package scope.
 * Node = packages + node_base_W (CPUs, host memory, NICs, fans, board);
 * network = the job's share of switches (one leaf per endpoints_per_leaf NIC
 * ports, as many above it); facility = (node + network) x PUE.
 *
 * Under a cap: at clock ratio r the compute-bound part of a kernel takes 1/r
 * as long (pf_energy_busy_s); what its energy does is the model's (DVFS
 * voltage in the utilisation model).  pf_energy_clock_for_cap() finds the
 * largest r at which the mean power of the step loop (kernels, exposed
 * communication and the gaps between them: the limiter averages over longer
 * than a step, an H200 running a GEMM and a host sleep as long, 3.2 ms a
 * step, kept 1980 MHz at 501 W; docs/energy.md "Power cap and DVFS") plus the
 * package share stays within the cap; pf_predict() then reprices the
 * iteration at that clock, so time and energy both follow.
 */
#include "power.h"

#include <math.h>
#include <string.h>

#define R_MIN 0.2    /* lowest clock a cap may force (GPUs' minimum application clocks ~ 15-25 %) */

double pf_energy_voltage(const pf_device *d, double r) {
  const pf_power_model *m = pf_power_model_of(d);
  return m->voltage ? m->voltage(d, r) : 1.0;
}

double pf_energy_busy_s(const pf_energy_use *u, double r) {
  double r0 = u->clock_ratio > 0 ? u->clock_ratio : 1.0;
  return u->busy_s - u->compute_bound_s + u->compute_bound_s * r0 / r;
}

/* busy power of model m on d at clock r */
static double busy_W(const pf_power_model *m, const pf_device *d, const pf_energy_use *u, double r) {
  double b = pf_energy_busy_s(u, r);
  return b > 0 ? d->context_W + m->dynamic_J(d, u, r) / b : d->context_W;
}

double pf_energy_busy_W(const pf_device *d, const pf_energy_use *u, double r) {
  return busy_W(pf_power_model_of(d), d, u, r);
}

/* what communication kernels (comm s) and the gaps between kernels (gaps s) add above the context power */
static double between_J(const pf_device *d, double comm, double gaps) {
  double comm_W = fmax(d->comm_W, d->wait_W); /* a communication kernel draws at least what waiting does */
  return fmax(0.0, comm_W - d->context_W) * comm + fmax(0.0, d->wait_W - d->context_W) * gaps;
}

/* mean power of model m on d over the step loop at clock r: the loop (u->loop_s at u's clock) stretched by what
 * its kernels take longer, at least their busy time; without a loop, the busy time's */
static double loop_W(const pf_power_model *m, const pf_device *d, const pf_energy_use *u, double r) {
  double b = pf_energy_busy_s(u, r);
  double L = fmax(u->loop_s + b - u->busy_s, b);
  if (!(L > 0)) return d->context_W;
  double comm = fmin(fmax(u->comm_s, 0.0), L - b);
  return d->context_W + (m->dynamic_J(d, u, r) + between_J(d, comm, fmax(0.0, L - b - comm))) / L;
}

double pf_energy_cap_W(const pf_scenario *sc) {
  const pf_device *d = &sc->machine.dev;
  if (sc->power_cap_W > 0) return sc->power_cap_W;
  return d->cap_W > 0 ? d->cap_W : d->tdp_W + d->package_W;
}

double pf_energy_clock_for_cap(const pf_scenario *sc, const pf_energy_use *u) {
  const pf_device *d = &sc->machine.dev;
  const pf_power_model *m = pf_power_model_of(d);
  double cap = pf_energy_cap_W(sc);
  if (loop_W(m, d, u, 1.0) + d->package_W <= cap) return 1.0;
  if (loop_W(m, d, u, R_MIN) + d->package_W >= cap) return R_MIN;
  double lo = R_MIN, hi = 1.0; /* the loop's power rises with r: bisect */
  for (int i = 0; i < 60; i++) {
    double mid = 0.5 * (lo + hi);
    if (loop_W(m, d, u, mid) + d->package_W > cap) hi = mid;
    else lo = mid;
  }
  return lo;
}

void pf_energy_window(const pf_scenario *sc, const pf_energy_use *u, pf_energy *e) {
  const pf_machine *m = &sc->machine;
  const pf_device *d = &m->dev;
  const pf_power_model *pm = pf_power_model_of(d);
  double T = u->window_s > 0 ? u->window_s : 0.0;
  double r = u->clock_ratio > 0 ? u->clock_ratio : 1.0;
  double busy = fmin(u->busy_s, T);
  double comm = fmin(fmax(u->comm_s, 0.0), T - busy);
  /* the work's energy whole, even where the predicted kernels outlast the window (a validation job measured
   * faster than predicted did all its iterations within T; its kernels ran faster, at higher power); the
   * cap below bounds the mean */
  double dyn = pm->dynamic_J(d, u, r);
  /* between kernels inside the step loop: the time of the loop no kernel fills (host, input pipeline, waiting
   * on a collective's peers) at wait_W; outside it (start-up, data loading, checkpoints) context_W */
  double gaps = fmax(0.0, fmin(u->loop_s, T) - busy - comm);
  double E_dev = d->context_W * T + dyn + between_J(d, comm, gaps);
  double cap = pf_energy_cap_W(sc);
  E_dev = fmin(E_dev, fmax(cap - d->package_W, d->idle_W) * T); /* the mean never exceeds the cap */

  int gpus = sc->gpus, nodes = sc->nodes, gpn = m->gpus_per_node;
  int dies = d->dies_per_package > 0 ? d->dies_per_package : 1;
  int slots = nodes * gpn;
  int packages = (gpus + dies - 1) / dies;
  e->gpu_J = gpus * E_dev;
  e->package_J = e->gpu_J + ((double)packages * dies - gpus) * d->idle_W * T + (double)packages * dies * d->package_W * T;
  e->node_gpus_J = e->gpu_J + (double)(slots > gpus ? slots - gpus : 0) * d->idle_W * T;
  e->node_J = e->node_gpus_J + (double)slots * d->package_W * T + m->node_base_W * nodes * T;
  /* switches: one leaf per endpoints_per_leaf (or per switch) NIC ports, plus as many upper switches */
  int ports = nodes * (m->nics_per_node > 0 ? m->nics_per_node : 1);
  int per_switch = m->net.endpoints_per_leaf > 0    ? m->net.endpoints_per_leaf
                   : m->net.endpoints_per_switch > 0 ? m->net.endpoints_per_switch
                                                     : 16;
  double switches = nodes > 1 ? 2.0 * ceil((double)ports / per_switch) : 0.0;
  e->network_J = switches * m->switch_W * T;
  e->facility_J = (e->node_J + e->network_J) * m->pue;
  e->per_iteration_J = e->facility_J;
  e->avg_power_per_node_W = T > 0 ? e->node_J / (nodes * T) : 0;
  e->avg_power_per_gpu_W = T > 0 && gpus > 0 ? e->gpu_J / (gpus * T) : 0;
  e->avg_power_per_package_W = T > 0 && packages > 0 ? e->package_J / (packages * T) : 0;
  e->gpu_busy_W = busy_W(pm, d, u, r);
  e->cap_W = cap;
  e->clock_ratio = r;
  e->use = *u;
}

void pf_energy_use_add_step(pf_energy_use *u, const pf_step *k, double f) {
  u->busy_s += f * (k->busy_s - k->comm_s); /* a collective on the compute stream is exposed communication */
  u->comm_s += f * k->comm_s;
  u->tensor_util_s += f * k->tensor_util_s;
  u->vector_util_s += f * k->vector_util_s;
  u->hbm_util_s += f * k->hbm_util_s;
  u->compute_bound_s += f * k->limit_s[PF_LIMIT_COMPUTE];
}

void pf_energy_use_add(pf_energy_use *u, const pf_energy_use *v, double f) {
  u->busy_s += f * v->busy_s;
  u->tensor_util_s += f * v->tensor_util_s;
  u->vector_util_s += f * v->vector_util_s;
  u->hbm_util_s += f * v->hbm_util_s;
  u->compute_bound_s += f * v->compute_bound_s;
  u->comm_s += f * v->comm_s;
  u->loop_s += f * v->loop_s;
}

void pf_energy_range(pf_energy *e, double t_lo, double t_hi, double p_lo, double p_hi) {
  double lo = p_lo > 0 ? p_lo : 1.0, hi = p_hi > 0 ? p_hi : 1.0;
  e->avg_power_per_gpu_W_low = e->avg_power_per_gpu_W * lo;
  e->avg_power_per_gpu_W_high = e->avg_power_per_gpu_W * hi;
  if (e->cap_W > 0 && e->avg_power_per_gpu_W_high > e->cap_W) e->avg_power_per_gpu_W_high = e->cap_W;
  double down = exp(-hypot(log(lo), log(t_lo > 0 ? t_lo : 1.0)));
  double up = exp(hypot(log(hi), log(t_hi > 0 ? t_hi : 1.0)));
  e->gpu_J_low = e->gpu_J * down;
  e->gpu_J_high = e->gpu_J * up;
  e->facility_J_low = e->facility_J * down;
  e->facility_J_high = e->facility_J * up;
}

void pf_energy_rates(pf_energy *e, double t_iter_s, double samples, double tokens) {
  e->per_sample_J = samples > 0 ? e->facility_J / samples : 0;
  e->per_token_J = tokens > 0 ? e->facility_J / tokens : 0;
  e->action_Js = e->facility_J * t_iter_s;
}
