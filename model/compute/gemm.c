/* gemm.c - the GEMM shapes of a training step (`calibrate --for`) and the
 * efficiency of one product (the device's measured table over its curve:
 * machine/gemmtab.c). */
#include "gemm.h"

#include "compute.h"
#include "core/core.h"

#include <math.h>
#include <stdlib.h>

double pf_gemm_eff(const pf_device *d, pf_precision p, pf_gemm_layout layout, double m, double n, double k) {
  return pf_gemm_eff_batched(d, p, layout, m, n, k, 1.0);
}

/* ---- the shapes of a scenario (calibrate --for) ---- */

typedef struct shape_set {
  pf_gemm_sample *s;
  int n, cap;
  int err;
} shape_set;

static void collect(void *ctx, const pf_kernel *k) {
  shape_set *x = ctx;
  if ((k->kind != PF_KERNEL_GEMM && k->kind != PF_KERNEL_CONV) || (k->batch > 1) || x->err) return;
  if (!(k->m >= 1 && k->n >= 1 && k->k >= 1 && k->m < 1e8 && k->n < 1e8 && k->k < 1e8)) return;
  double m = floor(k->m + 0.5), n = floor(k->n + 0.5), kk = floor(k->k + 0.5);
  for (int i = 0; i < x->n; i++)
    if (x->s[i].m == m && x->s[i].n == n && x->s[i].k == kk && x->s[i].layout == k->layout && x->s[i].prec == k->prec)
      return;
  if (x->n == x->cap) {
    int cap = x->cap ? 2 * x->cap : 32;
    pf_gemm_sample *g = realloc(x->s, (size_t)cap * sizeof *g);
    if (!g) {
      x->err = PF_ENOMEM;
      return;
    }
    x->s = g;
    x->cap = cap;
  }
  x->s[x->n++] = (pf_gemm_sample){.m = m, .n = n, .k = kk, .layout = k->layout, .prec = k->prec};
}

int pf_scenario_gemm_shapes(struct pf_scenario *sc, pf_gemm_sample **out, int *n) {
  *out = NULL;
  *n = 0;
  int rc = pf_plan_check(sc);
  if (rc < 0) return rc;
  shape_set x = {0};
  pf_kernel_observe(collect, &x);
  for (int st = 0; st < sc->plan.pp && rc == 0; st += sc->plan.pp > 1 ? sc->plan.pp - 1 : 1) {
    pf_stage_work w;
    rc = pf_stage_work_compute(sc, st, &w);
  }
  pf_kernel_observe(NULL, NULL);
  if (rc == 0 && x.err) rc = pf_error_set(PF_ENOMEM, "out of memory");
  if (rc < 0) {
    free(x.s);
    return rc;
  }
  *out = x.s;
  *n = x.n;
  return 0;
}
