/* interval.c - prediction intervals from the validation files (interval.h;
 * docs/validation.md, "Prediction intervals"): the pool of judged rows with
 * their regimes, the widening ladder, the 10th/90th percentiles of the rows'
 * errors (Hyndman & Fan definition 6, core/stats.c) and the anchored interval
 * of a fitted overlay; the power interval of the energy and power rows and
 * the energy ranges it gives with the time interval.  The leave-one-group-out
 * coverage is intcover.c. */
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
 * stays), then the scale (the share of communication), then the vendor, then the split between dense and
 * mixture-of-experts transformers (a transformer of the other kind shares its attention, norms and dense GEMMs,
 * which a CNN does not); the last level is every run. */
static const unsigned ladder[] = {
    PF_RK_KIND | PF_RK_VENDOR | PF_RK_ARCH | PF_RK_SIZE | PF_RK_SCALE,
    PF_RK_KIND | PF_RK_VENDOR | PF_RK_ARCH | PF_RK_SCALE,
    PF_RK_KIND | PF_RK_VENDOR | PF_RK_SCALE,
    PF_RK_KIND | PF_RK_VENDOR,
    PF_RK_KIND,
    PF_RK_FAMILY,
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

/* A scaling row's error per doubling of scale: ln r / log2(nodes / baseline) (NAN for other rows). */
static double per_doubling(const pf_irow *x, double r) {
  if (x->r.metric != PF_MET_SCALING || x->r.baseline_nodes <= 0 || x->nodes <= x->r.baseline_nodes) return NAN;
  return log(r) / log2((double)x->nodes / x->r.baseline_nodes);
}

/* The rows of class cls matching k under mask, not in group skip, measured, predicted and usable: their r,
 * or with doubling, their error per doubling of scale. */
static int collect(pf_ipool *p, const pf_rkey *k, int cls, unsigned mask, int skip, bool doubling, double *q,
                   double *nodes, int *nq) {
  int *idx = malloc(sizeof *idx * (size_t)(p->n ? p->n : 1)), n = 0;
  if (!idx) return pf_error_set(PF_ENOMEM, "out of memory");
  for (int i = 0; i < p->n; i++) {
    const pf_irow *x = &p->rows[i];
    /* a power row of use "check" is judged by the interval (coverage), never part of it: no coefficient, the
     * interval included, is set from check rows (docs/energy.md) */
    bool held = cls == PF_ICLASS_POWER && !strcmp(x->r.use, "check");
    if (x->cls == cls && x->group != skip && x->keyed && !held && measured(x) && pf_rkey_match(&x->k, k, mask))
      idx[n++] = i;
  }
  int rc = pf_ipool_predict(p, idx, n);
  *nq = 0;
  for (int i = 0; i < n && rc == 0; i++) {
    const pf_irow *x = &p->rows[idx[i]];
    double r = x->r.status == PF_ROW_PREDICTED ? pf_irow_ratio(x) : NAN;
    if (doubling && isfinite(r) && r > 0) r = per_doubling(x, r);
    if (!isfinite(r) || (!doubling && !(r > 0))) continue;
    nodes[*nq] = x->nodes;
    q[(*nq)++] = r;
  }
  free(idx);
  return rc;
}

int pf_interval_class(pf_ipool *p, const pf_rkey *k, int cls, int skip, bool doubling, double *lo, double *hi,
                      int *n, double *ref_nodes, char *regime, size_t len) {
  double *q = malloc(sizeof *q * (size_t)(p->n ? p->n : 1)), *nodes = malloc(sizeof *q * (size_t)(p->n ? p->n : 1));
  if (!q || !nodes) { free(q); free(nodes); return pf_error_set(PF_ENOMEM, "out of memory"); }
  int rc = 0, nq = 0;
  size_t levels = sizeof ladder / sizeof *ladder;
  /* power rows: every one at once.  A machine's power levels err together (its rows are one draw of the
   * error, not many), and the energy rows are all one-node runs of small models, so a narrower regime is one
   * or two machines' bias, not a spread (leave-one-group-out: 46 % covered through the ladder, docs/energy.md) */
  for (size_t l = cls == PF_ICLASS_POWER ? levels - 1 : 0; l < levels; l++) {
    if ((rc = collect(p, k, cls, ladder[l], skip, doubling, q, nodes, &nq)) < 0) break;
    if (nq >= PF_INTERVAL_MIN_ROWS || l + 1 == levels) {
      if (cls == PF_ICLASS_POWER) snprintf(regime, len, "every energy and power row, the time held");
      else pf_rkey_describe(k, ladder[l], regime, len);
      break;
    }
  }
  *n = nq;
  double one = doubling ? 0 : 1; /* no error: r = 1, or 0 per doubling */
  if (rc == 0 && nq > 0) {
    qsort(q, (size_t)nq, sizeof *q, pf_cmp_double);
    *lo = fmin(one, pf_quantile_sorted(q, nq, PF_INTERVAL_P_LO)); /* the prediction itself is always inside */
    *hi = fmax(one, pf_quantile_sorted(q, nq, PF_INTERVAL_P_HI));
  } else {
    *lo = *hi = one;
  }
  if (ref_nodes) *ref_nodes = nq > 0 ? pf_median(nodes, nq) : 1;
  free(q);
  free(nodes);
  return rc;
}

static int nodes_of(const pf_scenario *sc) {
  int gpn = sc->machine.gpus_per_node > 0 ? sc->machine.gpus_per_node : 1;
  return sc->nodes > 0 ? sc->nodes : (sc->gpus + gpn - 1) / gpn;
}

/* The scaling rows' error per doubling of scale near k (10th and 90th percentiles, d10 <= 0 <= d90) and its
 * regime. */
static int per_doubling_spread(pf_ipool *p, const pf_rkey *k, int skip, double *d10, double *d90, int *n,
                               char *regime, size_t len) {
  return pf_interval_class(p, k, PF_ICLASS_EFF, skip, true, d10, d90, n, NULL, regime, len);
}

int pf_interval_time(pf_ipool *p, const pf_rkey *k, int nodes, int skip, double *lo, double *hi, int *n,
                     char *regime, size_t len) {
  double ref = 1, d10, d90; /* ref stays 1 when pf_interval_class fails before setting it */
  int rc = pf_interval_class(p, k, PF_ICLASS_TIME, skip, false, lo, hi, n, &ref, regime, len);
  double D = log2(fmax(1.0, nodes / fmax(1.0, ref)));
  if (rc < 0 || D <= 0) return rc;
  char sreg[160];
  int ns;
  if ((rc = per_doubling_spread(p, k, skip, &d10, &d90, &ns, sreg, sizeof sreg)) < 0) return rc;
  double up = log(*hi), down = log(*lo), su = -d10 * D, sd = -d90 * D;
  *hi = exp(sqrt(up * up + su * su));
  *lo = exp(-sqrt(down * down + sd * sd));
  size_t w = strlen(regime);
  snprintf(regime + w, len - w, ", with %.1f doublings of scale from %.0f nodes at the scaling error of %.100s", D,
           ref, sreg);
  *n += ns;
  return 0;
}

/* Anchored: the fit's residual spread with the error of carrying the fit's largest scale to sc's, D
 * doublings at the scaling rows' error per doubling (their 10th and 90th percentiles d10 <= 0 <= d90, log
 * efficiency ratios: the time's log ratio is their negative). */
static int anchored(pf_ipool *p, const pf_rkey *k, const pf_scenario *sc, pf_pred_interval *out) {
  double d10, d90;
  char regime[160];
  int rc = per_doubling_spread(p, k, -1, &d10, &d90, &out->n_time, regime, sizeof regime);
  if (rc < 0) return rc;
  double D = log2(fmax(1.0, nodes_of(sc) / fmax(1.0, sc->fit_max_nodes)));
  double zs = Z90 * sc->fit_rel_sigma, up = -d10 * D, down = -d90 * D;
  out->time_hi = exp(sqrt(up * up + zs * zs));
  out->time_lo = exp(-sqrt(down * down + zs * zs));
  out->anchored = true;
  const char *base = strrchr(sc->calibration, '/');
  snprintf(out->time_regime, sizeof out->time_regime, "anchored on %.64s (fit spread %.1f %%, %.1f doublings of scale "
           "from %.0f nodes at the scaling error of %.120s)", base ? base + 1 : sc->calibration,
           100 * sc->fit_rel_sigma, D, fmax(1.0, sc->fit_max_nodes), regime);
  return 0;
}

int pf_interval_of(pf_ipool *p, const pf_scenario *sc, bool efficiency, pf_pred_interval *out) {
  memset(out, 0, sizeof *out);
  out->eff_lo = out->eff_hi = 1;
  pf_rkey k;
  pf_rkey_of(sc, &k);
  int rc = !efficiency ? 0 : pf_interval_class(p, &k, PF_ICLASS_EFF, -1, false, &out->eff_lo, &out->eff_hi, &out->n_eff, NULL, out->eff_regime,
                             sizeof out->eff_regime);
  /* the power interval: the energy and power rows, the time held; a fit overlay anchors time, not power */
  if (rc == 0)
    rc = pf_interval_class(p, &k, PF_ICLASS_POWER, -1, false, &out->power_lo, &out->power_hi, &out->n_power, NULL,
                           out->power_regime, sizeof out->power_regime);
  if (rc < 0) return rc;
  if (sc->fit_anchored) return anchored(p, &k, sc, out);
  return pf_interval_time(p, &k, nodes_of(sc), -1, &out->time_lo, &out->time_hi, &out->n_time, out->time_regime,
                          sizeof out->time_regime);
}

void pf_interval_energy(pf_prediction *p) {
  const pf_pred_interval *iv = &p->interval;
  if (iv->n_power <= 0) return; /* no energy rows: no power range (the energy keeps the value as its range) */
  pf_energy_range(&p->energy, iv->time_lo, iv->time_hi, iv->power_lo, iv->power_hi);
  pf_energy_range(&p->eval_energy, iv->time_lo, iv->time_hi, iv->power_lo, iv->power_hi);
}

void pf_interval_scale(const pf_prediction *p, double f, pf_prediction *out) {
  *out = *p;
  out->iteration_time_s = p->iteration_time_s * f;
  out->eval_iteration_s = p->eval_iteration_s * f;
  out->tokens_per_s = p->tokens_per_s / f;
  out->samples_per_s = p->samples_per_s / f;
  out->tflops_per_gpu = p->tflops_per_gpu / f;
}
