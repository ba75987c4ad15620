/* fit.c - fit the model's parameters to a user's measured runs: which rows,
 * in which configurations, which parameters they constrain, the fit, its
 * uncertainty and its leave-one-out error.  The parameters, their coordinates
 * and the least-squares engine are in fit_lm.c; the overlay JSON in
 * fit_json.c.
 * A parameter whose residuals do not move when it does (e.g. comm_eff on
 * single-GPU runs) is not constrained by the rows and stays at its default;
 * the input rate is constrained by the rows whose workload has sample bytes
 * (pf_input_time reads nothing for the others), whether or not its term binds
 * at the start.  With fewer configurations than free parameters comm_eff,
 * then step_overhead_s, then input_rate_Bps keep their defaults (one
 * configuration fits compute_eff alone).
 * Uncertainty: rel_sigma = sqrt(sum r_i^2 / (n - k)), k free parameters; a
 * prediction's band is p x exp(+-rel_sigma).
 * Leave-one-out: runs with the same configuration (repeats) form a group; each
 * fold (a group, or every group of one machine) is left out in turn, the rest
 * refitted (from the full fit, and from the input rate's own starts), and the
 * fold's rows predicted: the error a new, unseen configuration (machine)
 * would get.
 */
#include "fit_int.h"

#include "core/core.h"
#include "job/job.h"

#include <gsl/gsl_errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* Single-stage pipelines: the analytic engine gives the DES's answer in
 * microseconds; use it where it reproduces the DES prediction at the defaults
 * to 1e-9.  And the bytes one node reads per iteration (rate 1 B/s, loader
 * work off: pf_input_time's read term), 0 without sample bytes. */
static void configurations(pf_fitdata *d) {
  pf_scenario *a = malloc(sizeof *a), *b = malloc(sizeof *b);
  pf_prediction *pa = malloc(sizeof *pa), *pb = malloc(sizeof *pb);
  for (int g = 0; a && b && pa && pb && g < d->ngroups; g++) {
    *a = d->gsc[g];
    a->input_rate_Bps = 1;
    a->input_sample_s = 0;
    d->node_B[g] = pf_plan_check(a) == 0 ? pf_input_time(a) : 0;
    if (d->gsc[g].plan.pp != 1 || d->gsc[g].engine != PF_ENGINE_DES) continue;
    *a = d->gsc[g];
    *b = d->gsc[g];
    b->engine = PF_ENGINE_ANALYTIC;
    if (pf_resolve_predict(a, pa) == 0 && pf_resolve_predict(b, pb) == 0 &&
        fabs(pa->iteration_time_s - pb->iteration_time_s) <= 1e-9 * pa->iteration_time_s)
      d->gsc[g].engine = PF_ENGINE_ANALYTIC;
  }
  free(a); free(b); free(pa); free(pb);
}

/* Time scale: median measured iteration time where known, else from the default predictions. */
static double time_scale(pf_fitdata *d, const double *tm) {
  int k = 0;
  double *x = malloc((size_t)(d->n + d->ngroups) * sizeof *x), ts = 1.0;
  if (!x) return ts;
  for (int i = 0; i < d->n; i++) if (!isnan(tm[i])) x[k++] = tm[i];
  if (k == 0) {
    pf_prediction *p = malloc(sizeof *p);
    pf_scenario *sc = malloc(sizeof *sc);
    for (int g = 0; p && sc && g < d->ngroups; g++) {
      *sc = d->gsc[g];
      if (pf_resolve_predict(sc, p) == 0) x[k++] = p->iteration_time_s;
    }
    free(p); free(sc);
  }
  if (k > 0) ts = pf_median(x, k);
  free(x);
  return ts;
}

/* Each row's measured iteration time from its residual at the defaults, and
 * the input rate's scale: the median rate at which the input alone takes a
 * row's measured time (1 GB/s where no row has sample bytes). */
static void input_scale(pf_fitdata *d, const double *res0, pf_fit_result *out) {
  double *r = malloc((size_t)(d->n + 1) * sizeof *r);
  int nr = 0;
  for (int i = 0; i < d->n; i++) {
    d->tmeas[i] = res0[i] < 50.0 ? d->giter[d->grp[i]] / exp(res0[i]) : NAN;
    double b = d->node_B[d->grp[i]];
    if (b > 0) out->input_rows++;
    if (r && b > 0 && d->tmeas[i] > 0 && isfinite(d->tmeas[i])) r[nr++] = b / d->tmeas[i];
  }
  d->rscale = nr > 0 ? pf_median(r, nr) : 1e9;
  free(r);
}

const char *pf_loo_name(pf_loo l) { return l == PF_LOO_MACHINE ? "machine" : "configuration"; }

/* The machine of configuration g (its first row's). */
static const char *group_machine(const pf_fitdata *d, int g) {
  for (int k = 0; k < d->n; k++) if (d->grp[k] == g) return d->s->rows[d->row[k]].machine;
  return "";
}

/* Leave each fold out (a configuration, or a machine's configurations), refit the rest, predict its rows. */
static int leave_one_out(pf_fitdata *d, const double u[NPAR], pf_loo by, pf_fit_result *out) {
  double *x = malloc((size_t)d->n * sizeof *x);
  int *fold = malloc((size_t)(d->ngroups + 1) * sizeof *fold);
  pf_scenario *sc = malloc(sizeof *sc);
  pf_prediction *p = malloc(sizeof *p);
  int rc = 0, nx = 0;
  if (!x || !fold || !sc || !p) {
    free(x); free(fold); free(sc); free(p);
    return pf_error_set(PF_ENOMEM, "out of memory");
  }
  for (int g = 0; g < d->ngroups; g++) { /* a fold is numbered by its first configuration */
    fold[g] = g;
    for (int h = 0; by == PF_LOO_MACHINE && h < g; h++)
      if (!strcmp(group_machine(d, h), group_machine(d, g))) { fold[g] = fold[h]; break; }
  }
  bool off_full = d->input_off;
  for (int f = 0; f < d->ngroups && rc == 0; f++) {
    if (fold[f] != f) continue;
    d->nsub = 0;
    for (int k = 0; k < d->n; k++) if (fold[d->grp[k]] != f) d->sub[d->nsub++] = k;
    if (d->nsub == 0) continue; /* nothing left to refit on */
    double ul[NPAR];
    memcpy(ul, u, sizeof ul);
    char st[128], start[16];
    d->err = 0;
    d->input_off = off_full;
    if ((rc = pf_fit_best(d, ul, NULL, st, sizeof st, start, sizeof start)) < 0) break;
    pf_fitparams fp = pf_fit_params_of(d, ul);
    for (int g = 0; g < d->ngroups; g++) {
      if (fold[g] != f) continue;
      *sc = d->gsc[g];
      pf_fitparams_apply(&fp, sc);
      if (pf_resolve_predict(sc, p) < 0) continue;
      for (int k = 0; k < d->n; k++) {
        if (d->grp[k] != g) continue;
        pf_vrow *r = &d->s->rows[d->row[k]];
        double it = r->iterations > 0 ? r->iterations : 1;
        double v = r->metric == PF_MET_ITER_TIME ? p->iteration_time_s
                   : r->metric == PF_MET_TIME    ? p->iteration_time_s * it
                   : r->metric == PF_MET_TFLOPS  ? p->tflops_per_gpu
                   : r->metric == PF_MET_TOKENS  ? p->tokens_per_s
                                                 : p->samples_per_s;
        r->loo_predicted = v;
        r->loo_error = pf_vrow_error(r, v);
        x[nx++] = 100 * fabs(r->loo_error);
      }
    }
  }
  d->input_off = off_full;
  d->nsub = d->n;
  for (int k = 0; k < d->n; k++) d->sub[k] = k;
  if (rc == 0 && nx > 0) {
    out->loo_done = true;
    out->loo_by = by;
    out->loo = pf_vstats_of(x, nx);
  }
  free(x); free(fold); free(sc); free(p);
  return rc;
}

/* Which parameters do the rows constrain?  Residuals at a 5 % step of each
 * (of the efficiency, or of a typical step as overhead); the input rate by the
 * rows with sample bytes.  Then drop to at most one free parameter per
 * configuration. */
static int constrained(pf_fitdata *d, const double *res0, pf_fit_result *out) {
  double *r1 = malloc((size_t)d->n * sizeof *r1);
  if (!r1) return pf_error_set(PF_ENOMEM, "out of memory");
  for (int k = 0; k < NPAR; k++) {
    if (k == P_INPUT) { out->fixed[k] = out->input_rows == 0; continue; }
    double v[NPAR] = {0, 0, 0, 0};
    v[k] = 0.05;
    pf_fit_residuals(d, v, r1);
    double dn = 0;
    for (int i = 0; i < d->n; i++) dn += fabs(r1[i] - res0[i]);
    out->fixed[k] = dn / d->n < 1e-6;
  }
  free(r1);
  int nfree = 0;
  for (int k = 0; k < NPAR; k++) nfree += !out->fixed[k];
  static const int drop_order[] = {P_COMM, P_OVERHEAD, P_INPUT};
  for (int j = 0; j < 3 && nfree > d->ngroups; j++)
    if (!out->fixed[drop_order[j]]) { out->fixed[drop_order[j]] = true; nfree--; }
  memcpy(d->fixed, out->fixed, sizeof d->fixed);
  return 0;
}

static int fit_rows(pf_vset *s, const pf_validate_opts *o, pf_loo loo, pf_fitdata *d, double *tm, double *res,
                    pf_fit_result *out) {
  bool any_fit = false;
  for (int i = 0; i < s->n; i++) if (!strcmp(s->rows[i].use, "fit")) any_fit = true;
  pf_validate_opts vo = {0};
  if (o) vo = *o;
  vo.fit = NULL;
  int rc;
  for (int i = 0; i < s->n; i++) {
    pf_vrow *r = &s->rows[i];
    r->group = -1;
    if (!pf_fit_row_usable(r, any_fit)) continue;
    int g = -1;
    for (int k = 0; k < d->n; k++)
      if (same_config(&s->rows[d->row[k]], r)) { g = d->grp[k]; break; }
    if (g < 0) {
      char why[PF_VTEXT];
      g = d->ngroups;
      if ((rc = pf_vrow_scenario(r, &vo, &d->gsc[g], why, sizeof why)) != 0)
        return rc > 0 ? pf_error_set(PF_EINVAL, "%s:%d: %s", s->path, r->line, why) : rc;
      d->ngroups++;
    }
    r->group = g;
    d->row[d->n] = i;
    d->grp[d->n] = g;
    tm[d->n] = r->metric == PF_MET_ITER_TIME ? r->measured
               : r->metric == PF_MET_TIME    ? r->measured / (r->iterations > 0 ? r->iterations : 1)
                                             : NAN;
    d->n++;
  }
  if (d->n == 0)
    return pf_error_set(PF_EINVAL, "%s: no rows to fit: need predicted rows with an exact iteration_time_s, time_s, "
                        "tflops_per_gpu, tokens_per_s or samples_per_s%s", s->path, any_fit ? " and use = fit" : "");
  out->rows_used = d->n;
  out->groups = d->ngroups;
  for (int g = 0; g < d->ngroups; g++) {
    const pf_scenario *sc = &d->gsc[g];
    int gpn = sc->machine.gpus_per_node > 0 ? sc->machine.gpus_per_node : 1;
    int n = sc->nodes > 0 ? sc->nodes : (sc->gpus + gpn - 1) / gpn;
    if (n > out->max_nodes) out->max_nodes = n;
  }
  configurations(d);
  d->tscale = time_scale(d, tm);
  d->nsub = d->n;
  for (int k = 0; k < d->n; k++) d->sub[k] = k;
  d->input_off = true;
  double u[NPAR] = {0, 0, 0, 0};
  if ((rc = pf_fit_residuals(d, u, res)) < 0) {
    char msg[PF_VTEXT];
    snprintf(msg, sizeof msg, "%s", pf_error_detail());
    return pf_error_set(rc, "fit: prediction failed at the model's defaults: %s", msg);
  }
  out->rms_before = pf_fit_rms(res, d->n);
  input_scale(d, res, out);
  if ((rc = constrained(d, res, out)) < 0) return rc;
  rc = pf_fit_best(d, u, &out->iterations, out->status, sizeof out->status, out->input_start, sizeof out->input_start);
  if (rc < 0) return rc;
  out->p = pf_fit_params_of(d, u);
  for (int k = 0; k < NPAR; k++) out->at_bound[k] = out->fixed[k] ? 0 : pf_fit_at_bound(&out->p, k);
  if ((rc = pf_fit_residuals(d, u, res)) < 0) return rc;
  out->rms_after = pf_fit_rms(res, d->n);
  out->input_binding = d->input_off ? 0 : pf_fit_binding(d);
  int nfree = !d->input_off;
  for (int k = 0; k < NPAR; k++) nfree += k != P_INPUT && !out->fixed[k];
  double ss = 0;
  for (int i = 0; i < d->n; i++) ss += res[i] * res[i];
  out->dof = d->n - nfree;
  out->rel_sigma = out->dof > 0 ? sqrt(ss / out->dof) : 0;
  if (loo != PF_LOO_NONE && d->ngroups > 1 && (rc = leave_one_out(d, u, loo, out)) < 0) return rc;
  /* every row again at the fitted parameters, with its band */
  pf_validate_opts fo = {0};
  if (o) fo = *o;
  fo.fit = &out->p;
  if ((rc = pf_validate_run(s, &fo)) < 0) return rc;
  for (int i = 0; i < s->n; i++) {
    pf_vrow *r = &s->rows[i];
    if (r->status != PF_ROW_PREDICTED) continue;
    r->band_lo = r->predicted * exp(-out->rel_sigma);
    r->band_hi = r->predicted * exp(out->rel_sigma);
  }
  return 0;
}

int pf_fit(pf_vset *s, const pf_validate_opts *o, pf_loo loo, pf_fit_result *out) {
  memset(out, 0, sizeof *out);
  out->p = (pf_fitparams){1.0, 1.0, 0.0, 0.0};
  snprintf(out->input_start, sizeof out->input_start, "off");
  pf_fitdata d = {0};
  d.s = s;
  size_t n1 = (size_t)(s->n + 1);
  d.row = malloc(n1 * sizeof *d.row);
  d.grp = malloc(n1 * sizeof *d.grp);
  d.sub = malloc(n1 * sizeof *d.sub);
  d.gsc = malloc(n1 * sizeof *d.gsc);
  d.node_B = calloc(n1, sizeof *d.node_B);
  d.tmeas = malloc(n1 * sizeof *d.tmeas);
  d.giter = calloc(n1, sizeof *d.giter);
  d.gbind = calloc(n1, sizeof *d.gbind);
  double *tm = malloc(n1 * sizeof *tm), *res = malloc(n1 * sizeof *res);
  int rc;
  if (!d.row || !d.grp || !d.sub || !d.gsc || !d.node_B || !d.tmeas || !d.giter || !d.gbind || !tm || !res) {
    rc = pf_error_set(PF_ENOMEM, "out of memory");
  } else {
    gsl_error_handler_t *old = gsl_set_error_handler_off();
    rc = fit_rows(s, o, loo, &d, tm, res, out);
    gsl_set_error_handler(old);
  }
  free(d.row); free(d.grp); free(d.sub); free(d.gsc); free(d.node_B); free(d.tmeas); free(d.giter); free(d.gbind);
  free(tm); free(res);
  return rc;
}
