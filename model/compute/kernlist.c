/* kernlist.c - every kernel of one GPU's iteration, listed (see compute.h,
 * pf_stage_kernel_rows): the same lists the timeline runs (transformers:
 * pf_transformer_lists, layer lists: pf_layers_kernel_lists, the step tail:
 * pf_step_tail_kernels), each launch priced by pf_kernel_cost_eval, merged by
 * phase and name, and the time the GPU waits for the host per phase from the
 * stage's timelines (pf_stage_work_compute). */
#include "compute.h"

#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pf_kernel_rows_free(pf_kernel_rows *r) {
  free(r->r);
  memset(r, 0, sizeof *r);
}

static pf_kernel_row *row(pf_kernel_rows *R, const char *phase, const char *name) {
  for (int i = 0; i < R->n; i++)
    if (R->r[i].phase == phase && !strcmp(R->r[i].name, name)) return &R->r[i];
  if (R->n == R->cap) {
    int cap = R->cap ? 2 * R->cap : 64;
    pf_kernel_row *p = realloc(R->r, (size_t)cap * sizeof *p);
    if (!p) return NULL;
    R->r = p, R->cap = cap;
  }
  pf_kernel_row *x = &R->r[R->n++];
  memset(x, 0, sizeof *x);
  snprintf(x->name, sizeof x->name, "%s", name);
  x->phase = phase;
  return x;
}

static void source_of(const pf_kernel_env *env, const pf_kernel *k, char *buf, size_t len) {
  const pf_device *d = env->dev;
  const char *s = pf_step_kernel_source(k->name);
  switch (k->kind) {
  case PF_KERNEL_GEMM:
  case PF_KERNEL_CONV:
    snprintf(buf, len, "%s %.0fx%.0fx%.0f%s at %s's %s GEMM rate (GEMM table or curve, kernel.c)",
             k->kind == PF_KERNEL_CONV ? "implicit GEMM" : "GEMM", k->m, k->n, k->k, k->batch > 1 ? " batched" : "",
             d->id, pf_precision_name(k->prec));
    break;
  case PF_KERNEL_ATTENTION:
    snprintf(buf, len, "fused attention at %s's attention_fwd/bwd rate by key length and head dim (kernel.c)", d->id);
    break;
  case PF_KERNEL_FIXED:
    if (k->sync) snprintf(buf, len, "device-to-host copy the host waits for, its lead lost (hostqueue.c)");
    else snprintf(buf, len, "%s", s ? s : "priced by its module");
    break;
  default:
    if (s) snprintf(buf, len, "%s", s);
    else snprintf(buf, len, "%.3g MB through HBM at %s's hbm_eff (kernel.c)", k->bytes / 1e6, d->id);
  }
}

static int add_list(pf_kernel_rows *R, const pf_kernel_env *env, const pf_kernel_list *l, double times,
                    const char *phase) {
  for (int i = 0; i < l->n && times > 0; i++) {
    const pf_kernel *k = &l->k[i];
    pf_kernel_cost c;
    int rc = pf_kernel_cost_eval(env, k, &c);
    if (rc < 0) return rc;
    pf_kernel_row *x = row(R, phase, k->name ? k->name : "(unnamed)");
    if (!x) return pf_error_set(PF_ENOMEM, "out of memory");
    double n = (k->count > 0 ? k->count : 1.0) * times;
    x->launches += n;
    x->total_s += n * c.time_s;
    x->time_s = x->total_s / x->launches;
    x->limit = c.limit;
    if (!x->source[0]) source_of(env, k, x->source, sizeof x->source);
  }
  return 0;
}

static int host_wait(pf_kernel_rows *R, const char *phase, double s) {
  if (!(s > 1e-12)) return 0;
  pf_kernel_row *x = row(R, phase, "(host-bound wait)");
  if (!x) return pf_error_set(PF_ENOMEM, "out of memory");
  x->launches = 0, x->total_s = s, x->limit = PF_LIMIT_N;
  snprintf(x->source, sizeof x->source, "GPU idle until the host has issued the next kernel (hostqueue.c)");
  return 0;
}

static int layer_rows(const pf_scenario *sc, const pf_kernel_env *env, double M, pf_kernel_rows *R) {
  pf_kernel_list lists[PF_LAYERS_PASSES * PF_LAYERS_MAX_NETS];
  double times[PF_LAYERS_PASSES * PF_LAYERS_MAX_NETS];
  int n = 0, rc = pf_layers_kernel_lists(sc, lists, times, &n);
  pf_kernel_list in = {0};
  if (rc == 0) rc = pf_step_input_kernels(sc, &in);
  if (rc == 0 && n > 0) rc = add_list(R, env, &in, times[0] * M, "forward");
  pf_kernel_list_free(&in);
  for (int i = 0; i < n && rc == 0; i++)
    rc = add_list(R, env, &lists[i], times[i] * M, i % PF_LAYERS_PASSES ? "backward" : "forward");
  for (int i = 0; i < PF_LAYERS_PASSES * PF_LAYERS_MAX_NETS; i++) pf_kernel_list_free(&lists[i]);
  return rc;
}

int pf_stage_kernel_rows(const pf_scenario *sc, int stage, pf_kernel_rows *R) {
  memset(R, 0, sizeof *R);
  pf_stage_work w;
  int rc = pf_stage_work_compute(sc, stage, &w);
  if (rc < 0) return rc;
  pf_host_costs hc;
  pf_host_costs_get(sc, &hc);
  pf_kernel_env env = {.dev = &sc->machine.dev, .host_op_s = hc.fwd_op_s, .host_bwd_op_s = hc.bwd_op_s,
                       .eff_scale = sc->compute_eff_scale, .clock_ratio = 1};
  double M = sc->plan.grad_accum > 0 ? sc->plan.grad_accum : 1;
  if (sc->workload.kind == PF_WL_TRANSFORMER) {
    pf_stage_lists L;
    if ((rc = pf_transformer_lists(sc, stage, &L)) < 0) return rc;
    rc = add_list(R, &env, &L.fwd, L.dense * M, "forward");
    if (rc == 0) rc = add_list(R, &env, &L.moe_fwd, L.moe * M, "forward");
    if (rc == 0) rc = add_list(R, &env, &L.ends_f, M, "forward");
    if (rc == 0) rc = add_list(R, &env, &L.bwd, L.dense * M, "backward");
    if (rc == 0) rc = add_list(R, &env, &L.moe_bwd, L.moe * M, "backward");
    if (rc == 0) rc = add_list(R, &env, &L.ends_b, M, "backward");
    pf_stage_lists_free(&L);
  } else if (sc->workload.kind == PF_WL_LAYERS) {
    rc = layer_rows(sc, &env, M, R);
  }
  pf_kernel_list tail = {0};
  pf_kernel_env oenv = env;
  oenv.eff_scale = 1;
  if (rc == 0) rc = pf_step_tail_kernels(sc, &w, &tail);
  if (rc == 0) rc = add_list(R, &oenv, &tail, 1, "step");
  pf_kernel_list_free(&tail);
  if (rc == 0) rc = host_wait(R, "forward", M * pf_step_host_bound_s(&w.fwd));
  if (rc == 0) rc = host_wait(R, "backward", M * pf_step_host_bound_s(&w.bwd));
  if (rc == 0) rc = host_wait(R, "step", pf_step_host_bound_s(&w.opt));
  if (rc < 0) pf_kernel_rows_free(R);
  return rc < 0 ? rc : 0;
}
