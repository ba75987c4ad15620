/* intcover.c - how often the nominal 80 % interval holds what was measured
 * (interval.h; docs/validation.md, "Prediction intervals"): each group of
 * rows (source file x model family) is left out in turn, its rows' intervals
 * are built from the other groups' rows by the same ladder a prediction uses,
 * and a row counts as inside when its measurement (a value, or the values a
 * bound or range allows) meets [predicted x lo, predicted x hi]. */
#include "intpool.h"

#include "core/core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Does the row's measurement meet the interval [lo, hi] of factors around its prediction? */
static bool inside(const pf_irow *x, double lo, double hi) {
  const pf_vrow *r = &x->r;
  bool rate = r->metric == PF_MET_TFLOPS || r->metric == PF_MET_TOKENS || r->metric == PF_MET_SAMPLES;
  double a = rate ? r->predicted / hi : r->predicted * lo, b = rate ? r->predicted / lo : r->predicted * hi;
  double tol = 1e-9 * fabs(r->measured);
  a -= tol;
  b += tol;
  switch (r->bound) {
  case PF_BOUND_LOWER: return b >= r->measured;
  case PF_BOUND_UPPER: return a <= r->measured;
  case PF_BOUND_RANGE: return b >= r->measured && a <= r->measured_hi;
  default: return a <= r->measured && r->measured <= b;
  }
}

int pf_interval_coverage(pf_ipool *p, pf_icover *out) {
  memset(out, 0, sizeof *out);
  int *idx = malloc(sizeof *idx * (size_t)(p->n ? p->n : 1)), n = 0;
  if (!idx) return pf_error_set(PF_ENOMEM, "out of memory");
  for (int i = 0; i < p->n; i++)
    if (p->rows[i].keyed) idx[n++] = i;
  int rc = pf_ipool_predict(p, idx, n); /* every row: each is judged once */
  free(idx);
  out->ngroups = p->ngroups;
  for (int g = 0; g < p->ngroups; g++) {
    snprintf(out->g[g].source, sizeof out->g[g].source, "%s", p->group_source[g]);
    snprintf(out->g[g].family, sizeof out->g[g].family, "%s", p->group_family[g]);
  }
  for (int i = 0; i < p->n && rc == 0; i++) {
    const pf_irow *x = &p->rows[i];
    if (!x->keyed || x->r.status != PF_ROW_PREDICTED) continue;
    double lo, hi;
    int used;
    char regime[320];
    rc = x->cls == PF_ICLASS_TIME
             ? pf_interval_time(p, &x->k, x->nodes, x->group, &lo, &hi, &used, regime, sizeof regime)
             : pf_interval_class(p, &x->k, x->cls, x->group, false, &lo, &hi, &used, NULL, regime, sizeof regime);
    if (rc < 0) break;
    pf_icover_group *g = &out->g[x->group];
    bool in = inside(x, lo, hi);
    g->n[x->cls]++;
    g->inside[x->cls] += in;
    if (x->r.bound == PF_BOUND_LOWER || x->r.bound == PF_BOUND_UPPER) {
      g->bounds++;
      g->bounds_inside += in;
    }
    if (!g->regime[0] || (x->cls == PF_ICLASS_TIME && g->n[PF_ICLASS_TIME] == 1))
      snprintf(g->regime, sizeof g->regime, "%s (%d rows)", regime, used);
  }
  return rc;
}
