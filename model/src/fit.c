/* fit.c - fit the model's efficiency parameters to a user's measured runs.
 *
 * Three parameters, applied by pf_predict() through the scenario (and written
 * as the "fit" section of a calibration overlay, docs/calibration.md):
 *   compute_eff      multiplies the achievable compute and HBM rates
 *   comm_eff         multiplies the achievable fabric and network bandwidth
 *   step_overhead_s  added once per iteration (framework, loader, launch)
 * Residual of row i: r_i = log(t_pred,i / t_meas,i), time-like metrics turned
 * into time (throughputs give t_pred/t_meas = m/p), so errors of fast and slow
 * runs weigh alike.  Minimised with GSL's trust-region Levenberg-Marquardt
 * (gsl_multifit_nlinear; More's scaling).  The predictor is a discrete-event
 * simulation whose rates carry SimGrid's numerical precision (~1e-5), so the
 * Jacobian is taken by forward differences with a step of 1e-3 in the
 * internal coordinates, not GSL's sqrt(eps) default.
 * Internal coordinates keep the parameters in physical ranges:
 *   compute_eff = clamp(exp(u0), 0.05, 4), comm_eff = clamp(exp(u1), 0.02, 4),
 *   step_overhead_s = clamp(s u2, 0, 3600 s), s = median measured time.
 * A parameter whose column of the Jacobian vanishes at the start (e.g.
 * comm_eff on single-GPU runs) is not constrained by the rows and stays at
 * its default.
 * Uncertainty: rel_sigma = sqrt(sum r_i^2 / (n - k)), k free parameters; a
 * prediction's band is p x exp(+-rel_sigma).
 * Leave-one-out: runs with the same configuration (repeats) form a group; each
 * group is left out in turn, the rest refitted (from the full fit), and the
 * group's rows predicted: the error a new, unseen configuration would get.
 */
#include "preflight/batch.h"
#include "preflight/error.h"
#include "preflight/report.h"
#include "preflight/validate.h"

#include <cjson/cJSON.h>
#include <gsl/gsl_errno.h>
#include <gsl/gsl_multifit_nlinear.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NPAR 3
#define FD_STEP 1e-3
static const double lo[NPAR] = {0.05, 0.02, 0.0};
static const double hi[NPAR] = {4.0, 4.0, 3600.0};

static bool time_like(pf_metric m) {
  return m == PF_MET_ITER_TIME || m == PF_MET_TIME || m == PF_MET_TFLOPS || m == PF_MET_TOKENS || m == PF_MET_SAMPLES;
}

bool pf_fit_row_usable(const pf_vrow *r, bool any_fit_marked) {
  if (r->status != PF_ROW_PREDICTED || r->bound != PF_BOUND_EXACT || !time_like(r->metric)) return false;
  if (any_fit_marked) return strcmp(r->use, "fit") == 0;
  return strcmp(r->use, "check") != 0;
}

/* Same configuration (everything but the metric and the measurement). */
static bool same_config(const pf_vrow *a, const pf_vrow *b) {
  return !strcmp(a->machine, b->machine) && !strcmp(a->model, b->model) && a->layers == b->layers &&
         a->hidden == b->hidden && a->heads == b->heads && a->seq == b->seq && a->vocab == b->vocab &&
         a->params == b->params && a->flops_per_sample == b->flops_per_sample && a->nodes == b->nodes &&
         a->gpus == b->gpus && a->tp == b->tp && a->pp == b->pp && a->dp == b->dp && a->mbs == b->mbs &&
         a->gbs == b->gbs && a->grad_accum == b->grad_accum && !strcmp(a->precision, b->precision) &&
         !strcmp(a->recompute, b->recompute) && !strcmp(a->schedule, b->schedule) && a->sp == b->sp &&
         a->dist_opt == b->dist_opt;
}

typedef struct {
  pf_vset *s;
  int n;              /* rows used */
  int *row;           /* index into s->rows */
  int *grp;           /* group of each used row */
  int ngroups;
  pf_scenario *gsc;   /* one scenario per group */
  /* current subset (LOO): rows whose group != skip */
  int skip;
  int nsub;
  int *sub;           /* indices into row[] */
  bool fixed[NPAR];
  double u_fixed[NPAR];
  double tscale;      /* median measured time, s */
  int evals;
  int err;            /* first prediction error */
} fitdata;

static double clampd(double x, double a, double b) { return x < a ? a : x > b ? b : x; }

static pf_fitparams params_of(const fitdata *d, const double u[NPAR]) {
  pf_fitparams p;
  p.compute_eff = clampd(exp(u[0]), lo[0], hi[0]);
  p.comm_eff = clampd(exp(u[1]), lo[1], hi[1]);
  p.step_overhead_s = clampd(d->tscale * u[2], lo[2], hi[2]);
  return p;
}

/* Predicted/measured time ratio of used row k from its group's prediction. */
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

/* Residuals of the current subset at full parameter vector u.  Each group is
 * predicted once; DES groups in parallel (pf_predict_batch), groups that the
 * analytic engine reproduces exactly (single-stage pipelines) in-process. */
static int residuals(fitdata *d, const double u[NPAR], double *res) {
  pf_fitparams fp = params_of(d, u);
  bool *need = calloc((size_t)d->ngroups, sizeof *need);
  pf_scenario *sc = malloc((size_t)d->ngroups * sizeof *sc);
  pf_batch_item *items = calloc((size_t)d->ngroups, sizeof *items);
  int *item_of = malloc((size_t)d->ngroups * sizeof *item_of);
  pf_prediction *cache = malloc((size_t)d->ngroups * sizeof *cache);
  int rc = 0, nb = 0;
  if (!need || !sc || !items || !item_of || !cache) { rc = PF_ENOMEM; goto out; }
  for (int k = 0; k < d->nsub; k++) need[d->grp[d->sub[k]]] = true;
  for (int g = 0; g < d->ngroups && rc == 0; g++) {
    item_of[g] = -1;
    if (!need[g]) continue;
    sc[g] = d->gsc[g];
    sc[g].compute_eff_scale = fp.compute_eff;
    sc[g].comm_eff_scale = fp.comm_eff;
    sc[g].step_overhead_s = fp.step_overhead_s;
    d->evals++;
    if (sc[g].engine == PF_ENGINE_ANALYTIC) {
      rc = pf_predict(&sc[g], &cache[g]);
    } else {
      items[nb].sc = &sc[g];
      item_of[g] = nb++;
    }
  }
  if (rc == 0 && nb > 0) rc = pf_predict_batch(items, nb, 0);
  for (int g = 0; g < d->ngroups && rc == 0; g++) {
    if (item_of[g] < 0) continue;
    if ((rc = items[item_of[g]].rc) < 0) pf_error_set(rc, "%s", items[item_of[g]].detail);
    else cache[g] = items[item_of[g]].pred;
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

/* GSL callbacks work on the free parameters only. */
static void full_u(const fitdata *d, const gsl_vector *x, double u[NPAR]) {
  size_t j = 0;
  for (int k = 0; k < NPAR; k++) u[k] = d->fixed[k] ? d->u_fixed[k] : gsl_vector_get(x, j++);
}

static int gsl_f(const gsl_vector *x, void *arg, gsl_vector *f) {
  fitdata *d = arg;
  double u[NPAR];
  full_u(d, x, u);
  double *res = malloc((size_t)d->nsub * sizeof *res);
  if (!res) return GSL_ENOMEM;
  int rc = residuals(d, u, res);
  for (int k = 0; k < d->nsub; k++) gsl_vector_set(f, (size_t)k, rc == 0 ? res[k] : 50.0);
  free(res);
  return GSL_SUCCESS;
}

static int gsl_df(const gsl_vector *x, void *arg, gsl_matrix *J) {
  fitdata *d = arg;
  double *f0 = malloc((size_t)d->nsub * sizeof *f0), *f1 = malloc((size_t)d->nsub * sizeof *f1);
  if (!f0 || !f1) { free(f0); free(f1); return GSL_ENOMEM; }
  double u[NPAR];
  full_u(d, x, u);
  residuals(d, u, f0);
  size_t j = 0;
  for (int k = 0; k < NPAR; k++) {
    if (d->fixed[k]) continue;
    double save = u[k];
    /* at an upper clamp, step inwards so the difference sees the parameter move */
    double h = FD_STEP;
    if ((k == 2 && d->tscale * u[k] >= hi[2]) || (k < 2 && exp(u[k]) >= hi[k])) h = -FD_STEP;
    u[k] = save + h;
    residuals(d, u, f1);
    for (int r = 0; r < d->nsub; r++) gsl_matrix_set(J, (size_t)r, j, (f1[r] - f0[r]) / h);
    u[k] = save;
    j++;
  }
  free(f0); free(f1);
  return GSL_SUCCESS;
}

/* Fit the current subset from u (in/out). Returns 0 or a PF_E* code. */
static int fit_subset(fitdata *d, double u[NPAR], int *iters, char *status, size_t slen) {
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
           st == GSL_SUCCESS     ? (info == 1 ? "converged (step size)" : info == 2 ? "converged (gradient)" : "converged")
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

static double rms(const double *r, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) s += r[i] * r[i];
  return n > 0 ? sqrt(s / n) : NAN;
}

int pf_fit(pf_vset *s, const pf_validate_opts *o, bool loo, pf_fit_result *out) {
  memset(out, 0, sizeof *out);
  out->p = (pf_fitparams){1.0, 1.0, 0.0};
  bool any_fit = false;
  for (int i = 0; i < s->n; i++) if (!strcmp(s->rows[i].use, "fit")) any_fit = true;
  fitdata d = {0};
  d.s = s;
  d.skip = -1;
  d.row = malloc((size_t)(s->n + 1) * sizeof *d.row);
  d.grp = malloc((size_t)(s->n + 1) * sizeof *d.grp);
  d.sub = malloc((size_t)(s->n + 1) * sizeof *d.sub);
  d.gsc = malloc((size_t)(s->n + 1) * sizeof *d.gsc);
  double *tm = malloc((size_t)(s->n + 1) * sizeof *tm);
  double *res = malloc((size_t)(s->n + 1) * sizeof *res);
  int rc = 0;
  if (!d.row || !d.grp || !d.sub || !d.gsc || !tm || !res) { rc = pf_error_set(PF_ENOMEM, "out of memory"); goto done; }
  pf_validate_opts vo = {0};
  if (o) vo = *o;
  vo.fit = NULL;
  for (int i = 0; i < s->n; i++) {
    pf_vrow *r = &s->rows[i];
    r->group = -1;
    if (!pf_fit_row_usable(r, any_fit)) continue;
    int g = -1;
    for (int k = 0; k < d.n; k++)
      if (same_config(&s->rows[d.row[k]], r)) { g = d.grp[k]; break; }
    if (g < 0) {
      char why[PF_VTEXT];
      g = d.ngroups;
      if ((rc = pf_vrow_scenario(r, &vo, &d.gsc[g], why, sizeof why)) != 0) {
        if (rc > 0) rc = pf_error_set(PF_EINVAL, "%s:%d: %s", s->path, r->line, why);
        goto done;
      }
      d.ngroups++;
    }
    r->group = g;
    d.row[d.n] = i;
    d.grp[d.n] = g;
    double ratio_meas = r->measured; /* a time scale for the overhead coordinate */
    switch (r->metric) {
    case PF_MET_ITER_TIME: tm[d.n] = ratio_meas; break;
    case PF_MET_TIME: tm[d.n] = ratio_meas / (r->iterations > 0 ? r->iterations : 1); break;
    default: tm[d.n] = NAN;
    }
    d.n++;
  }
  if (d.n == 0) {
    rc = pf_error_set(PF_EINVAL, "%s: no rows to fit: need predicted rows with an exact iteration_time_s, time_s, "
                      "tflops_per_gpu, tokens_per_s or samples_per_s%s", s->path,
                      any_fit ? " and use = fit" : "");
    goto done;
  }
  out->rows_used = d.n;
  out->groups = d.ngroups;
  /* single-stage pipelines: the analytic engine gives the DES's answer in microseconds; use it
   * where it reproduces the DES prediction at the defaults to 1e-9 */
  {
    pf_scenario *a = malloc(sizeof *a), *b = malloc(sizeof *b);
    pf_prediction *pa = malloc(sizeof *pa), *pb = malloc(sizeof *pb);
    for (int g = 0; a && b && pa && pb && g < d.ngroups; g++) {
      if (d.gsc[g].plan.pp != 1 || d.gsc[g].engine != PF_ENGINE_DES) continue;
      *a = d.gsc[g];
      *b = d.gsc[g];
      b->engine = PF_ENGINE_ANALYTIC;
      if (pf_predict(a, pa) == 0 && pf_predict(b, pb) == 0 &&
          fabs(pa->iteration_time_s - pb->iteration_time_s) <= 1e-9 * pa->iteration_time_s)
        d.gsc[g].engine = PF_ENGINE_ANALYTIC;
    }
    free(a); free(b); free(pa); free(pb);
  }
  /* time scale: median measured iteration time where known, else from the default predictions */
  {
    int k = 0;
    double *x = malloc((size_t)d.n * sizeof *x);
    if (!x) { rc = pf_error_set(PF_ENOMEM, "out of memory"); goto done; }
    for (int i = 0; i < d.n; i++) if (!isnan(tm[i])) x[k++] = tm[i];
    if (k == 0) {
      pf_prediction *p = malloc(sizeof *p);
      pf_scenario *sc = malloc(sizeof *sc);
      for (int g = 0; p && sc && g < d.ngroups; g++) {
        *sc = d.gsc[g];
        if (pf_predict(sc, p) == 0) x[k++] = p->iteration_time_s;
      }
      free(p); free(sc);
    }
    d.tscale = k > 0 ? pf_median(x, k) : 1.0;
    free(x);
  }
  gsl_error_handler_t *old = gsl_set_error_handler_off();
  d.nsub = d.n;
  for (int k = 0; k < d.n; k++) d.sub[k] = k;
  double u[NPAR] = {0, 0, 0};
  if ((rc = residuals(&d, u, res)) < 0) {
    char msg[PF_VTEXT];
    snprintf(msg, sizeof msg, "%s", pf_error_detail());
    rc = pf_error_set(rc, "fit: prediction failed at the model's defaults: %s", msg);
    gsl_set_error_handler(old);
    goto done;
  }
  out->rms_before = rms(res, d.n);
  /* which parameters do the rows constrain? */
  {
    double *r1 = malloc((size_t)d.n * sizeof *r1);
    if (!r1) { rc = pf_error_set(PF_ENOMEM, "out of memory"); gsl_set_error_handler(old); goto done; }
    for (int k = 0; k < NPAR; k++) {
      double v[NPAR] = {0, 0, 0};
      v[k] = 0.05; /* 5 % of the efficiency, or 5 % of a typical step as overhead */
      residuals(&d, v, r1);
      double dn = 0;
      for (int i = 0; i < d.n; i++) dn += fabs(r1[i] - res[i]);
      out->fixed[k] = dn / d.n < 1e-6;
      d.fixed[k] = out->fixed[k];
    }
    free(r1);
  }
  int nfree = 0;
  for (int k = 0; k < NPAR; k++) nfree += !d.fixed[k];
  /* fewer configurations than free parameters: keep comm_eff, then the overhead, at their defaults */
  static const int drop_order[] = {1, 2};
  for (int j = 0; j < 2 && nfree > d.ngroups; j++)
    if (!d.fixed[drop_order[j]]) { d.fixed[drop_order[j]] = out->fixed[drop_order[j]] = true; nfree--; }
  rc = fit_subset(&d, u, &out->iterations, out->status, sizeof out->status);
  if (rc < 0) { gsl_set_error_handler(old); goto done; }
  out->p = params_of(&d, u);
  {
    double pv[NPAR] = {out->p.compute_eff, out->p.comm_eff, out->p.step_overhead_s};
    for (int k = 0; k < NPAR; k++)
      out->at_bound[k] = out->fixed[k] ? 0 : pv[k] <= lo[k] * (1 + 1e-9) ? -1 : pv[k] >= hi[k] * (1 - 1e-9) ? 1 : 0;
  }
  residuals(&d, u, res);
  out->rms_after = rms(res, d.n);
  {
    double ss = 0;
    for (int i = 0; i < d.n; i++) ss += res[i] * res[i];
    int dof = d.n - nfree;
    out->rel_sigma = dof > 0 ? sqrt(ss / dof) : 0;
    out->dof = dof;
  }
  /* leave one configuration out */
  if (loo && d.ngroups > 1) {
    double *x = malloc((size_t)d.n * sizeof *x);
    pf_scenario *sc = malloc(sizeof *sc);
    pf_prediction *p = malloc(sizeof *p);
    if (!x || !sc || !p) { free(x); free(sc); free(p); rc = pf_error_set(PF_ENOMEM, "out of memory"); gsl_set_error_handler(old); goto done; }
    int nx = 0;
    double sum = 0, mx = 0;
    for (int g = 0; g < d.ngroups && rc == 0; g++) {
      d.nsub = 0;
      for (int k = 0; k < d.n; k++) if (d.grp[k] != g) d.sub[d.nsub++] = k;
      double ul[NPAR] = {u[0], u[1], u[2]};
      char st[128];
      d.err = 0;
      if ((rc = fit_subset(&d, ul, NULL, st, sizeof st)) < 0) break;
      pf_fitparams fp = params_of(&d, ul);
      *sc = d.gsc[g];
      sc->compute_eff_scale = fp.compute_eff;
      sc->comm_eff_scale = fp.comm_eff;
      sc->step_overhead_s = fp.step_overhead_s;
      if (pf_predict(sc, p) < 0) continue;
      for (int k = 0; k < d.n; k++) {
        if (d.grp[k] != g) continue;
        pf_vrow *r = &s->rows[d.row[k]];
        double ratio = time_ratio(r, p);
        double v = (r->metric == PF_MET_ITER_TIME || r->metric == PF_MET_TIME) ? r->measured * ratio : r->measured / ratio;
        r->loo_predicted = v;
        r->loo_error = pf_vrow_error(r, v);
        double a = 100 * fabs(r->loo_error);
        x[nx++] = a;
        sum += a;
        if (a > mx) mx = a;
      }
    }
    if (rc == 0 && nx > 0) {
      out->loo_done = true;
      out->loo.n = nx;
      out->loo.mean_abs_pct = sum / nx;
      out->loo.max_abs_pct = mx;
      out->loo.median_abs_pct = pf_median(x, nx);
    }
    free(x); free(sc); free(p);
  }
  gsl_set_error_handler(old);
  if (rc < 0) goto done;
  /* every row again at the fitted parameters, with its band */
  {
    pf_validate_opts fo = {0};
    if (o) fo = *o;
    fo.fit = &out->p;
    if ((rc = pf_validate_run(s, &fo)) < 0) goto done;
    for (int i = 0; i < s->n; i++) {
      pf_vrow *r = &s->rows[i];
      if (r->status != PF_ROW_PREDICTED) continue;
      r->band_lo = r->predicted * exp(-out->rel_sigma);
      r->band_hi = r->predicted * exp(out->rel_sigma);
    }
  }
done:
  free(d.row); free(d.grp); free(d.sub); free(d.gsc); free(tm); free(res);
  return rc;
}

char *pf_fit_json(const pf_fit_result *f, const char *input_path, const char *machine_hint) {
  cJSON *root = cJSON_CreateObject();
  cJSON_AddNumberToObject(root, "schema_version", 1);
  cJSON_AddStringToObject(root, "backend", "fit");
  cJSON *fit = cJSON_AddObjectToObject(root, "fit");
  cJSON_AddNumberToObject(fit, "compute_eff", f->p.compute_eff);
  cJSON_AddNumberToObject(fit, "comm_eff", f->p.comm_eff);
  cJSON_AddNumberToObject(fit, "step_overhead_s", f->p.step_overhead_s);
  cJSON_AddNumberToObject(fit, "rel_sigma", f->rel_sigma);
  cJSON *fixed = cJSON_AddArrayToObject(fit, "not_constrained");
  static const char *names[NPAR] = {"compute_eff", "comm_eff", "step_overhead_s"};
  for (int k = 0; k < NPAR; k++) if (f->fixed[k]) cJSON_AddItemToArray(fixed, cJSON_CreateString(names[k]));
  cJSON_AddNumberToObject(fit, "rms_log_residual_before", f->rms_before);
  cJSON_AddNumberToObject(fit, "rms_log_residual_after", f->rms_after);
  if (f->loo_done) {
    cJSON *l = cJSON_AddObjectToObject(fit, "leave_one_out");
    cJSON_AddNumberToObject(l, "rows", f->loo.n);
    cJSON_AddNumberToObject(l, "median_abs_pct_error", f->loo.median_abs_pct);
    cJSON_AddNumberToObject(l, "mean_abs_pct_error", f->loo.mean_abs_pct);
  }
  cJSON *prov = cJSON_AddObjectToObject(root, "provenance");
  cJSON_AddItemToObject(prov, "tool", pf_report_tool_json());
  cJSON_AddStringToObject(prov, "method", "validate --fit: GSL trust-region Levenberg-Marquardt on log(t_pred/t_meas)");
  cJSON_AddStringToObject(prov, "input", input_path ? input_path : "");
  if (machine_hint && *machine_hint) cJSON_AddStringToObject(prov, "machines", machine_hint);
  cJSON_AddNumberToObject(prov, "rows_used", f->rows_used);
  cJSON_AddNumberToObject(prov, "configurations", f->groups);
  char date[64];
  const char *fake = getenv("PF_FAKE_DATE");
  if (fake && *fake) snprintf(date, sizeof date, "%s", fake);
  else {
    time_t t = time(NULL);
    struct tm tmv;
    gmtime_r(&t, &tmv);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tmv);
  }
  cJSON_AddStringToObject(prov, "date", date);
  char *s = cJSON_Print(root);
  cJSON_Delete(root);
  if (!s) return NULL;
  size_t n = strlen(s);
  char *t = malloc(n + 2);
  if (t) { memcpy(t, s, n); t[n] = '\n'; t[n + 1] = '\0'; }
  free(s);
  return t;
}
