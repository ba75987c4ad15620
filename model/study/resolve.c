/* resolve.c - a scenario made into the job the model reads (see predict.h):
 * the files it names read once (the calibration overlay on the machine: its
 * measured rates, power model, collective shares and fitted efficiencies),
 * then every constraint that crosses fields checked in the order a prediction
 * meets them (the power cap against what the device draws idle with a
 * context, the precision on the device, the parallel plan with its derived
 * fields, the engine against the overlap options).  pf_predict() takes the
 * result read-only. */
#include "predict.h"

#include "comm/comm.h"
#include "compute/compute.h"
#include "core/core.h"
#include "machine/machine.h"
#include "power/power.h"

#include <stdio.h>
#include <string.h>

int pf_scenario_apply_calibration(pf_scenario *sc) {
  sc->calibration_note[0] = '\0';
  sc->fit_anchored = false;
  sc->fit_rel_sigma = 0;
  sc->fit_max_nodes = 0;
  if (!sc->calibration[0]) return 0;
  int rc;
  pf_calibration cal;
  pf_ccl_cal cc; /* measured collectives (calibrate --collectives): the links' achievable shares */
  memset(&cal, 0, sizeof cal);
  if ((rc = pf_ccl_cal_load(sc->calibration, &cc)) < 0) return rc;
  if (!cc.present || cc.has_rates) { /* device rates, power model, fit */
    if ((rc = pf_calibration_load(sc->calibration, &cal)) < 0) return rc;
    char why[sizeof sc->calibration_note - 40];
    if (!pf_calibration_matches(&cal, &sc->machine, why, sizeof why)) {
      if (!sc->calibration_force) return pf_error_set(PF_EINVAL, "%s; --force-calibration applies it anyway", why);
      snprintf(sc->calibration_note, sizeof sc->calibration_note, "%s (applied with --force-calibration)", why);
    }
    if ((rc = pf_calibration_apply(&cal, &sc->machine)) < 0) return rc;
    /* the node's host: per-operator costs of eager PyTorch (compute/hostqueue.c) */
    if (cal.host_fwd_op_s > 0) sc->host_fwd_op_s = cal.host_fwd_op_s;
    if (cal.host_bwd_op_s > 0) sc->host_bwd_op_s = cal.host_bwd_op_s;
  }
  if ((rc = pf_ccl_cal_apply(&cc, &sc->machine)) < 0) return rc;
  if (cal.has_fit) {
    if (cal.fit_compute_eff > 0) sc->compute_eff_scale = cal.fit_compute_eff;
    if (cal.fit_comm_eff > 0) sc->comm_eff_scale = cal.fit_comm_eff;
    sc->step_overhead_s = cal.fit_step_overhead_s;
    sc->fit_anchored = true; /* the prediction interval is the anchored one (interval.c) */
    sc->fit_rel_sigma = cal.fit_rel_sigma > 0 ? cal.fit_rel_sigma : 0;
    sc->fit_max_nodes = cal.fit_max_nodes;
    /* a rate the command gave (--input-rate, a row's input_rate column) is the user's statement: it wins */
    if (cal.fit_input_rate_Bps > 0 && !(sc->input_rate_Bps > 0)) sc->input_rate_Bps = cal.fit_input_rate_Bps;
  }
  return 0;
}

int pf_job_resolve(pf_scenario *sc) {
  /* a cap below what the device draws with a live context and nothing running cannot be met at any clock */
  const pf_device *dv = &sc->machine.dev;
  double cap = pf_energy_cap_W(sc), floor_W = dv->context_W + dv->package_W;
  if (cap < floor_W)
    return pf_error_set(PF_EINVAL, "%s %.0f W is below what %s draws with a live context and nothing running (%.0f W%s):"
                        " no clock meets it", sc->power_cap_W > 0 ? "--power-cap" : "the device's power cap", cap,
                        dv->id, floor_W, dv->package_W > 0 ? ", its package share included" : "");
  int rc;
  if ((rc = pf_device_precision_check(&sc->machine.dev, sc->precision)) < 0) return rc;
  if ((rc = pf_plan_check(sc)) < 0) return rc;
  const pf_plan *p = &sc->plan;
  if (sc->engine == PF_ENGINE_FULL && (p->overlap_grad_reduce || p->overlap_param_gather))
    return pf_error_set(PF_EINVAL, "--engine full does not model --overlap-grad-reduce or --overlap-param-gather; "
                        "use the default engine (simgrid)");
  if (sc->engine == PF_ENGINE_FULL && p->schedule == PF_SCHED_DUALPIPE)
    return pf_error_set(PF_EINVAL, "--engine full replays Megatron's schedules event by event; --schedule dualpipe "
                        "is priced in closed form (docs/moe.md): use --engine analytic or the default engine");
  return 0;
}

int pf_resolve_predict(pf_scenario *sc, pf_prediction *out) {
  memset(out, 0, sizeof *out);
  int rc = pf_job_resolve(sc);
  return rc < 0 ? rc : pf_predict(sc, out);
}
