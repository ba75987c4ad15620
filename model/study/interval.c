/* interval.c - prediction intervals from the validation files (interval.h;
 * docs/validation.md, "Prediction intervals"): the pool of judged rows with
 * their regimes, the widening ladder, the 10th/90th percentiles of the rows'
 * errors (Hyndman & Fan definition 6, core/stats.c) and the anchored interval
 * of a fitted overlay.  The leave-one-group-out coverage is intcover.c. */
#include "interval.h"
#include "intpool.h"

#include "core/core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The standard normal's 90th percentile: a fit's rel_sigma (RMS log residual) as a normal spread. */
#define Z90 1.2815515655446004

/* The ladder: the features each level keeps, narrowest first.  Size goes first (the model's per-layer
 * kernels are the same at every size of a family), then the architecture (the vendor's software stack
 * stays), then the scale (the share of communication), then the vendor; the last level is every run. */
static const unsigned ladder[] = {
    PF_RK_KIND | PF_RK_VENDOR | PF_RK_ARCH | PF_RK_SIZE | PF_RK_SCALE,
    PF_RK_KIND | PF_RK_VENDOR | PF_RK_ARCH | PF_RK_SCALE,
    PF_RK_KIND | PF_RK_VENDOR | PF_RK_SCALE,
    PF_RK_KIND | PF_RK_VENDOR,
    PF_RK_KIND,
    0};

/* Is the row's measurement one the error distribution can take: an exact value or a range (a one-sided
 * bound says the error is at most so large, not how large it is). */
static bool measured(const pf_irow *x) { return x->r.bound == PF_BOUND_EXACT || x->r.bound == PF_BOUND_RANGE; }

/* r of a predicted row: measured time / predicted time (throughputs inverted), or measured / predicted
 * efficiency, from validate's signed error e = (p - m) / m (0 inside a range). */
double pf_irow_ratio(const pf_irow *x) {
  double e = x->r.error;
  if (!(e > -1) || !isfinite(e)) return NAN;
  pf_metric m = x->r.metric;
  bool rate = m == PF_MET_TFLOPS || m == PF_MET_TOKENS || m == PF_MET_SAMPLES;
  return rate ? 1 + e : 1 / (1 + e);
}

/* The rows of class cls matching k under mask, not in group skip, measured, predicted and usable. */
static int collect(pf_ipool *p, const pf_rkey *k, int cls, unsigned mask, int skip, double *q, int *nq) {
  int *idx = malloc(sizeof *idx * (size_t)(p->n ? p->n : 1)), n = 0;
  if (!idx) return pf_error_set(PF_ENOMEM, "out of memory");
  for (int i = 0; i < p->n; i++) {
    const pf_irow *x = &p->rows[i];
    if (x->cls == cls && x->group != skip && x->keyed && measured(x) && pf_rkey_match(&x->k, k, mask)) idx[n++] = i;
  }
  int rc = pf_ipool_predict(p, idx, n);
  *nq = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    const pf_irow *x = &p->rows[idx[i]];
    double r = x->r.status == PF_ROW_PREDICTED ? pf_irow_ratio(x) : NAN;
    if (isfinite(r) && r > 0) q[(*nq)++] = r;
  }
  free(idx);
  return rc;
}

int pf_interval_class(pf_ipool *p, const pf_rkey *k, int cls, int skip, double *lo, double *hi, int *n,
                      char *regime, size_t len) {
  double *q = malloc(sizeof *q * (size_t)(p->n ? p->n : 1));
  if (!q) return pf_error_set(PF_ENOMEM, "out of memory");
  int rc = 0, nq = 0;
  size_t levels = sizeof ladder / sizeof *ladder;
  for (size_t l = 0; l < levels; l++) {
    if ((rc = collect(p, k, cls, ladder[l], skip, q, &nq)) < 0) break;
    if (nq >= PF_INTERVAL_MIN_ROWS || l + 1 == levels) {
      pf_rkey_describe(k, ladder[l], regime, len);
      break;
    }
  }
  *n = nq;
  if (rc == 0 && nq > 0) {
    qsort(q, (size_t)nq, sizeof *q, pf_cmp_double);
    *lo = fmin(1.0, pf_quantile_sorted(q, nq, PF_INTERVAL_P_LO)); /* the prediction itself is always inside */
    *hi = fmax(1.0, pf_quantile_sorted(q, nq, PF_INTERVAL_P_HI));
  } else {
    *lo = *hi = 1.0;
  }
  free(q);
  return rc;
}

/* Anchored: the fit's residual spread with the scale-extrapolation spread the efficiency rows give. */
static void anchored(const pf_scenario *sc, pf_pred_interval *out) {
  double zs = Z90 * sc->fit_rel_sigma;
  double up = log(fmax(1.0, 1 / out->eff_lo)), down = log(fmin(1.0, 1 / out->eff_hi));
  out->time_hi = exp(sqrt(up * up + zs * zs));
  out->time_lo = exp(-sqrt(down * down + zs * zs));
  out->n_time = out->n_eff;
  out->anchored = true;
  const char *base = strrchr(sc->calibration, '/');
  snprintf(out->time_regime, sizeof out->time_regime, "anchored on %.64s (fit spread %.1f %%; scale from %.150s)",
           base ? base + 1 : sc->calibration, 100 * sc->fit_rel_sigma, out->eff_regime);
}

int pf_interval_of(pf_ipool *p, const pf_scenario *sc, bool efficiency, pf_pred_interval *out) {
  memset(out, 0, sizeof *out);
  out->eff_lo = out->eff_hi = 1;
  pf_rkey k;
  pf_rkey_of(sc, &k);
  int rc = !efficiency && !sc->fit_anchored ? 0 : pf_interval_class(p, &k, PF_ICLASS_EFF, -1, &out->eff_lo, &out->eff_hi, &out->n_eff, out->eff_regime,
                             sizeof out->eff_regime);
  if (rc < 0) return rc;
  if (sc->fit_anchored) {
    anchored(sc, out);
    return 0;
  }
  return pf_interval_class(p, &k, PF_ICLASS_TIME, -1, &out->time_lo, &out->time_hi, &out->n_time,
                           out->time_regime, sizeof out->time_regime);
}

void pf_interval_scale(const pf_prediction *p, double f, pf_prediction *out) {
  *out = *p;
  out->iteration_time_s = p->iteration_time_s * f;
  out->eval_iteration_s = p->eval_iteration_s * f;
  out->tokens_per_s = p->tokens_per_s / f;
  out->samples_per_s = p->samples_per_s / f;
  out->tflops_per_gpu = p->tflops_per_gpu / f;
}
