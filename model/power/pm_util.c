/* pm_util.c - the utilisation power model with DVFS voltage: what a used
 * device draws while its compute kernels run (DESIGN 5.5; docs/energy.md
 * has the formulas).  The default model (first row of pmodel.c's table).
 *
 * Device (one logical GPU, without its package share), over a window T
 * (energy.c adds the terms outside the compute kernels):
 *   E_dev = context_W T                                 (a live context, clocks up)
 *         + V(r)^2 ((active_W - context_W) t_busy         (the active floor: kernels running at all)
 *                   + tensor_W sum t u_tensor + vector_W sum t u_vector)
 *         + hbm_W sum t u_hbm                           (the compute kernels: this file)
 *         + max(0, comm_W - context_W) t_comm_exposed   (communication kernels alone)
 * u are the kernels' achieved shares of the datasheet peaks (kernel.c), so
 * sum t u_tensor = FLOPs / peak: the dynamic energy follows the work done,
 * not how long it took (the linear utilisation model of SimGrid's host energy
 * plugin and of AccelWattch-style component models, research notes 3.6-3.7,
 * 4.3).
 *
 * DVFS under a cap: dynamic power is C V^2 f (CMOS switching power); the
 * core voltage falls roughly linearly with the clock down to a floor
 * (v_floor of the full-clock voltage at half the clock, V_FLOOR by default:
 * assumed, A100/H100 V-f tables run ~0.7 V at half clock against ~1.0 V at
 * boost; Tang et al. 2019, arXiv 1905.11012, measure the same shape on V100).
 * At clock ratio r the compute-bound part of a kernel takes 1/r as long and
 * its switching energy scales with V(r)^2; the HBM stream keeps its rate and
 * energy per byte (memory clocks are not capped with the SM clock).
 *
 * Its coefficients are the device file's power.{tensor, vector, hbm,
 * voltage_floor} (pf_device's named fields): machine/devpower.c reads them
 * with their defaults and sources, a machine file may override them per site,
 * a calibration's power_model.coefficients replace them (calapply.c).
 */
#include "pmodel.h"

#include <math.h>

#define V_FLOOR 0.7   /* voltage at and below half clock / full-clock voltage (assumed, see above) */
#define R_KNEE 0.5    /* clock ratio below which the voltage stays at the floor */

static double util_voltage(const pf_device *d, double r) {
  double vf = d->v_floor > 0 ? d->v_floor : V_FLOOR;
  if (r >= 1.0) return 1.0;
  if (r <= R_KNEE) return vf;
  return vf + (1.0 - vf) * (r - R_KNEE) / (1.0 - R_KNEE);
}

/* dynamic energy of the compute kernels at clock r */
static double util_dynamic_J(const pf_device *d, const pf_energy_use *u, double r) {
  double v = util_voltage(d, r);
  double floor_J = fmax(0.0, d->active_W - d->context_W) * pf_energy_busy_s(u, r);
  return v * v * (floor_J + d->tensor_W * u->tensor_util_s + d->vector_W * u->vector_util_s) +
         d->hbm_W * u->hbm_util_s;
}

const pf_power_model pf_power_utilisation = {
    .name = "utilisation",
    .summary = "context + V(r)^2 (active - context + tensor_W u_tensor + vector_W u_vector) + hbm_W u_hbm (SimGrid host energy, "
               "AccelWattch; DVFS voltage after Tang et al. 2019)",
    .keys = NULL, /* its keys are the device file's flat power keys (devpower.c), not a power.utilisation group */
    .nkeys = 0,
    .dynamic_J = util_dynamic_J,
    .voltage = util_voltage,
};
