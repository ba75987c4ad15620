/* fit_lm.c - the least-squares engine of `validate --fit` (fit.c drives it).
 *
 * Four parameters, applied by pf_resolve_predict() through the scenario
 * (pf_fitparams_apply; the "fit" section of a calibration overlay,
 * docs/calibration.md):
 *   compute_eff      multiplies the achievable compute and HBM rates
 *   comm_eff         multiplies the achievable fabric and network bandwidth
 *   step_overhead_s  added once per iteration (framework, launch)
 *   input_rate_Bps   bytes/s one node's loaders deliver: the input pipeline of
 *                    pf_input_time() (a node reads its GPUs' samples, the
 *                    workload's sample_bytes each; prefetching overlaps the
 *                    read with the step, which waits only for what is longer)
 * Residual of row i: r_i = log(t_pred,i / t_meas,i), time-like metrics turned
 * into time (throughputs give t_pred/t_meas = m/p), so errors of fast and slow
 * runs weigh alike.  Minimised with GSL's trust-region Levenberg-Marquardt
 * (gsl_multifit_nlinear; More's scaling).  The predictor is a discrete-event
 * simulation whose rates carry SimGrid's numerical precision (~1e-5), so the
 * Jacobian is taken by forward differences with a step of 1e-3 in the
 * internal coordinates, not GSL's sqrt(eps) default.
 * Internal coordinates keep the parameters in physical ranges:
 *   compute_eff = clamp(exp(u0), 0.05, 4), comm_eff = clamp(exp(u1), 0.02, 4),
 *   step_overhead_s = clamp(s u2, 0, 3600 s), s = median measured time,
 *   input_rate_Bps = clamp(R exp(u3), 1 MB/s, 1 TB/s), R = the median of R_i
 *   below over the rows with sample bytes.
 * The input rate and the max() kink: the input time counts only where it
 * exceeds the rest of the step, so at a rate where it binds on no row its
 * Jacobian column is zero and the fit would never move it.  Its starts come
 * from the data instead: off (the three-parameter fit), and the rates R_i =
 * (bytes one node reads per step) / (measured step time) at which the input
 * alone takes row i's measured time, at their lowest (every row with sample
 * bytes starts bound, at or above its measured time), median and highest; a
 * leave-one-out refit also starts from the full fit's rate.  Each start is
 * fitted and the lowest sum of squares kept, ties to the earlier start (off
 * first: the simpler model).  A kept rate that binds on no row leaves the
 * residuals of the off fit, and is reported as off.
 */
#include "fit_int.h"

#include "batch.h"
#include "core/core.h"

#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define FD_STEP 1e-3
static const double lo[NPAR] = {0.05, 0.02, 0.0, 1e6};
static const double hi[NPAR] = {4.0, 4.0, 3600.0, 1e12};

static double clampd(double x, double a, double b) { return x < a ? a : x > b ? b : x; }

/* Parameter k's physical value at coordinate uk, before the clamp. */
static double raw(const pf_fitdata *d, int k, double uk) {
  switch (k) {
  case P_OVERHEAD: return d->tscale * uk;
  case P_INPUT: return d->rscale * exp(uk);
  default: return exp(uk);
  }
}

double pf_fit_coord(const pf_fitdata *d, int k, double v) {
  switch (k) {
  case P_OVERHEAD: return v / d->tscale;
  case P_INPUT: return log(v / d->rscale);
  default: return log(v);
  }
}

pf_fitparams pf_fit_params_of(const pf_fitdata *d, const double u[NPAR]) {
  pf_fitparams p;
  p.compute_eff = clampd(raw(d, P_COMPUTE, u[P_COMPUTE]), lo[P_COMPUTE], hi[P_COMPUTE]);
  p.comm_eff = clampd(raw(d, P_COMM, u[P_COMM]), lo[P_COMM], hi[P_COMM]);
  p.step_overhead_s = clampd(raw(d, P_OVERHEAD, u[P_OVERHEAD]), lo[P_OVERHEAD], hi[P_OVERHEAD]);
  p.input_rate_Bps = d->input_off ? 0 : clampd(raw(d, P_INPUT, u[P_INPUT]), lo[P_INPUT], hi[P_INPUT]);
  return p;
}

int pf_fit_at_bound(const pf_fitparams *p, int k) {
  double v = pf_fit_param_value(p, k);
  if (k == P_INPUT && !(v > 0)) return 0; /* off */
  return v <= lo[k] * (1 + 1e-9) ? -1 : v >= hi[k] * (1 - 1e-9) ? 1 : 0;
}

double pf_fit_rms(const double *r, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += r[i] * r[i];
  return n > 0 ? sqrt(s / n) : NAN;
}

/* Predicted/measured time ratio of a row from its configuration's prediction. */
static double time_ratio(const pf_vrow *r, const pf_prediction *p) {
  double it = r->iterations > 0 ? r->iterations : 1;
  switch (r->metric) {
  case PF_MET_ITER_TIME: return p->iteration_time_s / r->measured;
  case PF_MET_TIME: return p->iteration_time_s * it / r->measured;
  case PF_MET_TFLOPS: return r->measured / p->tflops_per_gpu;
  case PF_MET_TOKENS: return r->measured / p->tokens_per_s;
  case PF_MET_SAMPLES: return r->measured / p->samples_per_s;
  default: return NAN;
  }
}

/* Each configuration is predicted once; DES configurations in parallel
 * (pf_predict_batch), those the analytic engine reproduces exactly
 * (single-stage pipelines, fit.c) in-process. */
int pf_fit_residuals(pf_fitdata *d, const double u[NPAR], double *res) {
  pf_fitparams fp = pf_fit_params_of(d, u);
  bool *need = calloc((size_t)d->ngroups, sizeof *need);
  pf_scenario *sc = malloc((size_t)d->ngroups * sizeof *sc);
  pf_batch_item *items = calloc((size_t)d->ngroups, sizeof *items);
  int *item_of = malloc((size_t)d->ngroups * sizeof *item_of);
  pf_prediction *cache = malloc((size_t)d->ngroups * sizeof *cache);
  int rc = 0, nb = 0;
  if (!need || !sc || !items || !item_of || !cache) { rc = pf_error_set(PF_ENOMEM, "out of memory"); goto out; }
  for (int k = 0; k < d->nsub; k++) need[d->grp[d->sub[k]]] = true;
  for (int g = 0; g < d->ngroups && rc == 0; g++) {
    item_of[g] = -1;
    if (!need[g]) continue;
    sc[g] = d->gsc[g];
    pf_fitparams_apply(&fp, &sc[g]);
    d->evals++;
    if (sc[g].engine == PF_ENGINE_ANALYTIC) {
      rc = pf_resolve_predict(&sc[g], &cache[g]);
    } else {
      items[nb].sc = &sc[g];
      item_of[g] = nb++;
    }
  }
  if (rc == 0 && nb > 0) rc = pf_predict_batch(items, nb, 0, "predict");
  for (int g = 0; g < d->ngroups && rc == 0; g++) {
    if (!need[g]) continue;
    if (item_of[g] >= 0) {
      if ((rc = items[item_of[g]].rc) < 0) { pf_error_set(rc, "%s", items[item_of[g]].detail); break; }
      cache[g] = items[item_of[g]].pred;
    }
    d->giter[g] = cache[g].iteration_time_s;
    d->gbind[g] = cache[g].breakdown_s.input > 0;
  }
  for (int k = 0; k < d->nsub && rc == 0; k++) {
    int i = d->sub[k];
    double ratio = time_ratio(&d->s->rows[d->row[i]], &cache[d->grp[i]]);
    res[k] = (ratio > 0 && isfinite(ratio)) ? log(ratio) : 50.0;
  }
out:
  free(need); free(sc); free(items); free(item_of); free(cache);
  if (rc < 0 && !d->err) d->err = rc;
  return rc;
}

int pf_fit_binding(const pf_fitdata *d) {
  int n = 0;
  for (int k = 0; k < d->nsub; k++) n += d->gbind[d->grp[d->sub[k]]];
  return n;
}

/* GSL callbacks work on the free parameters only. */
static void full_u(const pf_fitdata *d, const gsl_vector *x, double u[NPAR]) {
  size_t j = 0;
  for (int k = 0; k < NPAR; k++) u[k] = d->fixed[k] ? d->u_fixed[k] : gsl_vector_get(x, j++);
}

static int gsl_f(const gsl_vector *x, void *arg, gsl_vector *f) {
  pf_fitdata *d = arg;
  double u[NPAR];
  full_u(d, x, u);
  double *res = malloc((size_t)d->nsub * sizeof *res);
  if (!res) return GSL_ENOMEM;
  int rc = pf_fit_residuals(d, u, res);
  for (int k = 0; k < d->nsub; k++) gsl_vector_set(f, (size_t)k, rc == 0 ? res[k] : 50.0);
  free(res);
  return GSL_SUCCESS;
}

static int gsl_df(const gsl_vector *x, void *arg, gsl_matrix *J) {
  pf_fitdata *d = arg;
  double *f0 = malloc((size_t)d->nsub * sizeof *f0), *f1 = malloc((size_t)d->nsub * sizeof *f1);
  if (!f0 || !f1) { free(f0); free(f1); return GSL_ENOMEM; }
  double u[NPAR];
  full_u(d, x, u);
  pf_fit_residuals(d, u, f0);
  size_t j = 0;
  for (int k = 0; k < NPAR; k++) {
    if (d->fixed[k]) continue;
    double save = u[k];
    /* at an upper clamp, step inwards so the difference sees the parameter move */
    double h = raw(d, k, u[k]) >= hi[k] ? -FD_STEP : FD_STEP;
    u[k] = save + h;
    pf_fit_residuals(d, u, f1);
    for (int r = 0; r < d->nsub; r++) gsl_matrix_set(J, (size_t)r, j, (f1[r] - f0[r]) / h);
    u[k] = save;
    j++;
  }
  free(f0); free(f1);
  return GSL_SUCCESS;
}

/* Fit the current subset from u (in/out), d->fixed as they are. */
static int fit_subset(pf_fitdata *d, double u[NPAR], int *iters, char *status, size_t slen) {
  int nfree = 0;
  for (int k = 0; k < NPAR; k++) nfree += !d->fixed[k];
  for (int k = 0; k < NPAR; k++) d->u_fixed[k] = u[k];
  if (iters) *iters = 0;
  if (nfree == 0 || d->nsub == 0) { snprintf(status, slen, "nothing to fit"); return 0; }
  if (d->nsub < nfree) { /* GSL needs at least as many residuals as parameters */
    snprintf(status, slen, "fewer runs (%d) than free parameters (%d): parameters kept", d->nsub, nfree);
    return 0;
  }
  gsl_multifit_nlinear_parameters prm = gsl_multifit_nlinear_default_parameters();
  prm.trs = gsl_multifit_nlinear_trs_lm;
  gsl_multifit_nlinear_workspace *w =
      gsl_multifit_nlinear_alloc(gsl_multifit_nlinear_trust, &prm, (size_t)d->nsub, (size_t)nfree);
  gsl_vector *x = gsl_vector_alloc((size_t)nfree);
  if (!w || !x) {
    if (w) gsl_multifit_nlinear_free(w);
    if (x) gsl_vector_free(x);
    return pf_error_set(PF_ENOMEM, "out of memory");
  }
  size_t j = 0;
  for (int k = 0; k < NPAR; k++) if (!d->fixed[k]) gsl_vector_set(x, j++, u[k]);
  gsl_multifit_nlinear_fdf fdf = {.f = gsl_f, .df = gsl_df, .fvv = NULL, .n = (size_t)d->nsub,
                                  .p = (size_t)nfree, .params = d};
  int info = 0, rc = 0;
  d->err = 0;
  int st = gsl_multifit_nlinear_init(x, &fdf, w);
  if (st == GSL_SUCCESS) st = gsl_multifit_nlinear_driver(60, 1e-7, 1e-9, 1e-10, NULL, NULL, &info, w);
  if (d->err) rc = d->err;
  else if (st != GSL_SUCCESS && st != GSL_EMAXITER && st != GSL_ENOPROG)
    rc = pf_error_set(PF_ESIM, "fit: GSL: %s", gsl_strerror(st));
  snprintf(status, slen, "%s",
           st == GSL_SUCCESS ? (info == 1 ? "converged (step size)" : info == 2 ? "converged (gradient)" : "converged")
           : st == GSL_EMAXITER ? "stopped at 60 iterations"
           : st == GSL_ENOPROG  ? "no further progress"
                                : gsl_strerror(st));
  gsl_vector *xs = gsl_multifit_nlinear_position(w);
  j = 0;
  for (int k = 0; k < NPAR; k++) if (!d->fixed[k]) u[k] = gsl_vector_get(xs, j++);
  if (iters) *iters = (int)gsl_multifit_nlinear_niter(w);
  gsl_multifit_nlinear_free(w);
  gsl_vector_free(x);
  return rc;
}

typedef struct {
  const char *name;
  bool off;
  double u3;
} start_t;

/* The input rate's starts for the current subset (see the top of the file). */
static int starts_of(const pf_fitdata *d, const double u[NPAR], start_t *c) {
  int nc = 0;
  c[nc++] = (start_t){"off", true, u[P_INPUT]};
  if (!d->input_off) c[nc++] = (start_t){"full fit", false, u[P_INPUT]};
  double *R = malloc((size_t)(d->nsub + 1) * sizeof *R);
  int nr = 0;
  for (int k = 0; R && k < d->nsub; k++) {
    int i = d->sub[k];
    double b = d->node_B[d->grp[i]], t = d->tmeas[i];
    if (b > 0 && t > 0 && isfinite(t)) R[nr++] = b / t;
  }
  if (nr > 0) {
    double med = pf_median(R, nr); /* sorts R */
    double v[3] = {R[0], med, R[nr - 1]};
    static const char *nm[3] = {"min", "median", "max"};
    for (int j = 0; j < 3; j++) {
      double uc = pf_fit_coord(d, P_INPUT, clampd(v[j], lo[P_INPUT], hi[P_INPUT]));
      bool dup = false;
      for (int q = 0; q < nc; q++) dup |= !c[q].off && fabs(c[q].u3 - uc) < 1e-9;
      if (!dup) c[nc++] = (start_t){nm[j], false, uc};
    }
  }
  free(R);
  return nc;
}

int pf_fit_best(pf_fitdata *d, double u[NPAR], int *iters, char *status, size_t slen, char *start, size_t startlen) {
  if (d->fixed[P_INPUT]) { /* not constrained (no sample bytes) or dropped: the scenarios' input term as given */
    d->input_off = true;
    snprintf(start, startlen, "off");
    return fit_subset(d, u, iters, status, slen);
  }
  start_t c[5];
  int nc = starts_of(d, u, c);
  double *res = malloc((size_t)(d->nsub + 1) * sizeof *res);
  if (!res) return pf_error_set(PF_ENOMEM, "out of memory");
  double u0[NPAR], ubest[NPAR], best = INFINITY;
  memcpy(u0, u, sizeof u0);
  memcpy(ubest, u, sizeof ubest);
  bool best_off = true;
  int rc = 0, best_it = 0, kept = -1;
  char st[128], best_st[128] = "nothing to fit";
  for (int j = 0; j < nc && rc == 0; j++) {
    double uc[NPAR];
    memcpy(uc, u0, sizeof uc);
    uc[P_INPUT] = c[j].u3;
    d->input_off = d->fixed[P_INPUT] = c[j].off;
    int it = 0;
    rc = fit_subset(d, uc, &it, st, sizeof st);
    d->fixed[P_INPUT] = false;
    if (rc < 0 || (rc = pf_fit_residuals(d, uc, res)) < 0) break;
    double ss = 0;
    for (int k = 0; k < d->nsub; k++) ss += res[k] * res[k];
    if (kept < 0 || ss < best * (1 - 1e-9)) {
      kept = j;
      best = ss;
      best_off = c[j].off || pf_fit_binding(d) == 0; /* a rate that binds nowhere is the off fit */
      best_it = it;
      memcpy(ubest, uc, sizeof ubest);
      snprintf(best_st, sizeof best_st, "%s", st);
    }
  }
  free(res);
  if (rc < 0) return rc;
  memcpy(u, ubest, sizeof ubest);
  d->input_off = best_off;
  if (iters) *iters = best_it;
  snprintf(status, slen, "%s", best_st);
  snprintf(start, startlen, "%s", best_off ? "off" : c[kept].name);
  double *r2 = malloc((size_t)(d->nsub + 1) * sizeof *r2); /* leave giter/gbind at the kept fit */
  if (!r2) return pf_error_set(PF_ENOMEM, "out of memory");
  rc = pf_fit_residuals(d, u, r2);
  free(r2);
  return rc < 0 ? rc : 0;
}
