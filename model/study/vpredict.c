/* vpredict.c - predicting what validation rows measure (see validate.h):
 * the scenario a row describes, the baseline of a scaling row, the metric from
 * the prediction and the signed error; many rows at once over all cores, each
 * distinct configuration predicted once (a cache kept across calls, so a file
 * validated in chunks by cmd_validate.c predicts each configuration once).
 * Scaling efficiency as EPICURE defines it (DESIGN 5.6): TFLOP/s per GPU at n
 * over TFLOP/s per GPU at baseline_nodes. */
#include "batch.h"
#include "power/power.h"
#include "core/core.h"
#include "validate.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- prediction ---- */

int pf_vrow_scenario(const pf_vrow *r, const pf_validate_opts *o, pf_scenario *sc, char *why, size_t whylen) {
  int rc;
  if (o && o->build) { /* the command builds it (its options, overridden by the row's option columns) */
    pf_scenario_init(sc);
    if ((rc = o->build(r, o->build_arg, sc, why, whylen)) != 0) return rc;
    if (o->calibration) snprintf(sc->calibration, sizeof sc->calibration, "%s", o->calibration);
    pf_fitparams_apply(o->fit, sc);
    return pf_scenario_apply_calibration(sc); /* after the fit: an overlay's own fit wins, as it always has */
  }
  for (int i = 0; i < r->nopt; i++)
    if (!pf_validate_core_option(r->opt_name[i]))
      return pf_error_set(PF_EINVAL, "line %d: column %s is a scenario option that only the preflight command applies",
                          r->line, r->opt_name[i]);
  pf_scenario_init(sc);
  const pf_machine *m;
  rc = pf_validate_machine(r->machine, &m);
  if (rc < 0) return rc;
  sc->machine = *m;
  pf_workload *w = &sc->workload;
  bool shape = r->layers || r->hidden || r->heads;
  if (r->model[0]) {
    if ((rc = pf_workload_get(r->model, w)) < 0) return rc;
    if (r->layers) w->layers = r->layers;
    if (r->hidden) w->hidden = r->hidden;
    if (r->heads) w->heads = r->heads;
  } else if (shape) {
    memset(w, 0, sizeof *w);
    snprintf(w->id, sizeof w->id, "custom-transformer");
    snprintf(w->name, sizeof w->name, "custom transformer");
    w->kind = PF_WL_TRANSFORMER;
    w->learned_pos = w->tied_embeddings = true;
    w->layers = r->layers;
    w->hidden = r->hidden;
    w->heads = r->heads;
    w->source = "validation row";
    if (!r->layers || !r->hidden || !r->heads || !r->seq || !r->vocab) {
      snprintf(why, whylen, "a custom transformer needs layers, hidden, heads, seq and vocab");
      return 1;
    }
  } else if (r->params > 0 && r->flops_per_sample > 0) {
    memset(w, 0, sizeof *w);
    snprintf(w->id, sizeof w->id, "custom");
    snprintf(w->name, sizeof w->name, "custom model");
    w->kind = PF_WL_GENERIC;
    w->params = r->params;
    w->flops_per_sample = r->flops_per_sample;
    w->source = "validation row";
  } else {
    snprintf(why, whylen, "no model: give model, a transformer shape, or params and flops_per_sample");
    return 1;
  }
  if (r->seq) w->seq = r->seq;
  if (r->vocab) w->vocab = r->vocab;
  if ((rc = pf_workload_check(w)) < 0) return rc;
  pf_plan *p = &sc->plan;
  sc->nodes = r->nodes;
  sc->gpus = r->gpus;
  if (r->tp) p->tp = r->tp;
  if (r->pp) p->pp = r->pp;
  p->dp = r->dp;
  if (r->mbs) p->mbs = r->mbs;
  p->gbs = r->gbs;
  p->grad_accum = r->grad_accum;
  if (r->precision[0] && (rc = pf_precision_parse(r->precision, &sc->precision)) < 0) return rc;
  if (r->recompute[0] && (rc = pf_recompute_parse(r->recompute, &p->recompute)) < 0) return rc;
  if (r->schedule[0] && (rc = pf_schedule_parse(r->schedule, &p->schedule, &p->vstages)) < 0) return rc;
  p->sp = r->sp;
  p->dist_opt = r->dist_opt;
  if (o && o->calibration) snprintf(sc->calibration, sizeof sc->calibration, "%s", o->calibration);
  if (o) pf_fitparams_apply(o->fit, sc);
  return pf_scenario_apply_calibration(sc);
}

/* The fit's parameters replace the scenario's; its input rate only where it has one (0: the scenario's
 * own, off unless --input-rate or a row's input_rate column gave one). */
void pf_fitparams_apply(const pf_fitparams *fp, pf_scenario *sc) {
  if (!fp) return;
  sc->compute_eff_scale = fp->compute_eff;
  sc->comm_eff_scale = fp->comm_eff;
  sc->step_overhead_s = fp->step_overhead_s;
  if (fp->input_rate_Bps > 0) sc->input_rate_Bps = fp->input_rate_Bps;
}

static bool job_scope(pf_scope s) {
  return s == PF_SCOPE_GPU_JOB || s == PF_SCOPE_NODE_JOB || s == PF_SCOPE_NODE_GPUS_JOB || s == PF_SCOPE_PACKAGE_JOB;
}

/* Can the row be predicted at all (energy scopes)? 1 with the reason if not. */
static int row_predictable(const pf_vrow *r, char *why, size_t whylen) {
  if (r->metric != PF_MET_ENERGY && r->metric != PF_MET_POWER) return 0;
  if (r->scope == PF_SCOPE_NONE) {
    snprintf(why, whylen, "scope not stated: energy and power rows need the metering scope (gpu, gpu_per_gpu, "
             "node, gpu_job, node_gpus_job, node_job, package_job)");
    return 1;
  }
  if (job_scope(r->scope) && !(r->duration_s > 0 && r->iterations > 0)) {
    snprintf(why, whylen, "%s: measured over a whole job; needs duration_s (the metered runtime) and iterations "
             "(training steps in it)", pf_scope_name(r->scope));
    return 1;
  }
  return 0;
}

/* Energy of a row's scope (energy.h): a whole job of duration_s holding `iterations` predicted iterations and
 * `eval_iterations` forward-only passes (time held at the measured value: utilisation = predicted busy time /
 * measured duration), or the iterations alone. */
static double scope_energy(const pf_vrow *r, const pf_scenario *sc, const pf_prediction *p, bool hold_training,
                           double *window_s) {
  double it = r->iterations > 0 ? r->iterations : 1;
  const pf_energy *e = &p->energy;
  if (!job_scope(r->scope)) {
    *window_s = it * p->iteration_time_s;
    if (r->scope == PF_SCOPE_NODE) return e->node_J * it;
    return e->gpu_J * it;
  }
  /* the kernels of `iterations` steps; with the training time measured too, the predicted iteration is
   * stretched (or shrunk) to it when asked (--hold-time training): the busy share and utilisation of an
   * iteration are the model's, its length the measurement's (a bracket with the default: the stretched
   * iteration does proportionally more work than the model counts; docs/energy.md) */
  double k = it;
  if (hold_training && r->train_s > 0 && p->iteration_time_s > 0) k = r->train_s / p->iteration_time_s;
  pf_energy_use u = {.window_s = r->duration_s, .clock_ratio = e->use.clock_ratio};
  pf_energy_use_add(&u, &e->use, k);
  /* the evaluation passes the row names: their own (forward) kernels, not training's */
  pf_energy_use_add(&u, &p->eval_energy.use, r->eval_iterations);
  /* the measured training time is the step loop's: what of it the predicted kernels leave was spent between
   * kernels (waiting on the input pipeline or the host), at wait_W; the rest of duration_s at context */
  if (r->train_s > u.loop_s) u.loop_s = r->train_s;
  pf_energy j;
  memset(&j, 0, sizeof j);
  pf_energy_window(sc, &u, &j);
  *window_s = r->duration_s;
  switch (r->scope) {
  case PF_SCOPE_NODE_JOB: return j.node_J;
  case PF_SCOPE_NODE_GPUS_JOB: return j.node_gpus_J;
  case PF_SCOPE_PACKAGE_JOB: return j.package_J;
  default: return j.gpu_J; /* the devices used alone: a GCD without its sibling, a GH200's GPU without Grace */
  }
}

/* The scenarios a row needs: out[0] at the row's node count, out[1] the
 * baseline of a scaling row (at baseline_nodes) or of a throughput_ratio row
 * (at baseline_mbs, the global batch scaled with it, dp and gradient
 * accumulation kept).  Returns how many (1 or 2) or a PF_E* code. */
static int row_scenarios(const pf_vrow *r, const pf_scenario *sc0, const pf_fitparams *fp, pf_scenario *out) {
  out[0] = *sc0;
  out[0].ran = true; /* the row was measured: its plan ran (pf_memory_check) */
  pf_fitparams_apply(fp, &out[0]);
  if (r->metric != PF_MET_SCALING && r->metric != PF_MET_BATCH_RATIO) return 1;
  /* the plan at n decides the grad_accum (weak) or global batch (strong) the baseline keeps */
  pf_scenario *chk = malloc(sizeof *chk);
  if (!chk) return pf_error_set(PF_ENOMEM, "out of memory");
  *chk = out[0];
  int rc = pf_plan_check(chk);
  if (rc == 0) {
    pf_scenario *base = &out[1];
    *base = out[0];
    if (r->metric == PF_MET_BATCH_RATIO) {
      base->plan.mbs = r->baseline_mbs;
      base->plan.gbs = chk->plan.gbs / chk->plan.mbs * r->baseline_mbs;
      base->plan.grad_accum = 0;
    } else {
      base->nodes = r->baseline_nodes;
      base->gpus = 0;
      base->plan.dp = 0;
      if (r->scaling == PF_SCALING_WEAK) { base->plan.gbs = 0; base->plan.grad_accum = chk->plan.grad_accum; }
      else { base->plan.gbs = chk->plan.gbs; base->plan.grad_accum = 0; }
    }
  }
  free(chk);
  return rc < 0 ? rc : 2;
}

/* What a row's baseline differs in, for messages: "baseline 4 nodes", "baseline micro-batch 8". */
static const char *baseline_label(const pf_vrow *r, char *buf, size_t n) {
  if (r->metric == PF_MET_BATCH_RATIO) snprintf(buf, n, "baseline micro-batch %d", r->baseline_mbs);
  else snprintf(buf, n, "baseline %d nodes", r->baseline_nodes);
  return buf;
}

/* The row's metric from the prediction at n (p, scenario sc after pf_predict)
 * and, for scaling rows, at the baseline (base). */
static double row_value(const pf_vrow *r, const pf_scenario *sc, const pf_prediction *p, const pf_prediction *base,
                        bool hold_training) {
  double it = r->iterations > 0 ? r->iterations : 1;
  switch (r->metric) {
  case PF_MET_ITER_TIME: return p->iteration_time_s;
  case PF_MET_TIME: return p->iteration_time_s * it;
  case PF_MET_TFLOPS: return p->tflops_per_gpu;
  case PF_MET_TOKENS: return p->tokens_per_s;
  case PF_MET_SAMPLES: return p->samples_per_s;
  case PF_MET_SCALING: return pf_scaling_efficiency(p->tflops_per_gpu, base->tflops_per_gpu);
  case PF_MET_BATCH_RATIO: return p->samples_per_s / base->samples_per_s;
  case PF_MET_ENERGY:
  case PF_MET_POWER: {
    double win, E = scope_energy(r, sc, p, hold_training, &win);
    if (r->scope == PF_SCOPE_GPU_PER_GPU) E /= sc->gpus;
    return r->metric == PF_MET_ENERGY ? E : win > 0 ? E / win : NAN;
  }
  default: return NAN;
  }
}

int pf_vrow_predict(const pf_vrow *r, const pf_scenario *sc0, const pf_fitparams *fp, double *value,
                    pf_prediction *pred, char *why, size_t whylen) {
  *value = NAN;
  if (row_predictable(r, why, whylen)) return 1;
  pf_scenario *sc = malloc(2 * sizeof *sc);
  pf_prediction *p = malloc(2 * sizeof *p);
  if (!sc || !p) { free(sc); free(p); return pf_error_set(PF_ENOMEM, "out of memory"); }
  int n = row_scenarios(r, sc0, fp, sc), rc = n < 0 ? n : 0;
  if (rc == 0 && n == 2 && (rc = pf_resolve_predict(&sc[1], &p[1])) < 0) {
    char d[PF_VTEXT];
    snprintf(d, sizeof d, "%s", pf_error_detail());
    char lb[64];
    rc = pf_error_set(rc, "%s: %s", baseline_label(r, lb, sizeof lb), d);
  }
  if (rc == 0) rc = pf_resolve_predict(&sc[0], &p[0]);
  if (rc == 0) *value = row_value(r, &sc[0], &p[0], &p[1], false);
  if (rc < 0) snprintf(why, whylen, "%s", pf_error_detail());
  if (pred && rc == 0) *pred = p[0];
  free(sc);
  free(p);
  return rc;
}

double pf_bound_error(pf_bound b, double m, double hi, double p) {
  switch (b) {
  case PF_BOUND_LOWER: return p >= m ? 0 : (p - m) / m;
  case PF_BOUND_UPPER: return p <= m ? 0 : (p - m) / m;
  case PF_BOUND_RANGE:
    if (p < m) return (p - m) / m;
    if (p > hi) return (p - hi) / hi;
    return 0;
  default: return (p - m) / m;
  }
}

double pf_vrow_error(const pf_vrow *r, double p) { return pf_bound_error(r->bound, r->measured, r->measured_hi, p); }

/* ---- predictions of many rows: each distinct scenario once ----
 *
 * Rows that describe the same configuration (a file often repeats one run's
 * configuration for several metrics) share one prediction: the key of a
 * scenario is every field pf_vrow_scenario() reads, and for a scaling row's
 * baseline also the baseline node count and the scaling kind.  The cache
 * keeps results across calls, so a file validated in chunks (cmd_validate.c
 * streams it) predicts each configuration once. */

#define VCACHE_MAX 1024

typedef struct {
  char key[4096];
  int rc;
  char detail[512];
  pf_prediction pred;
  pf_scenario sc; /* the scenario as pf_predict left it (its GPU and node counts, the machine: energy scopes) */
} vcache_entry;

struct pf_vcache {
  vcache_entry *e;
  int n;
};

pf_vcache *pf_vcache_new(void) { return calloc(1, sizeof(pf_vcache)); }

void pf_vcache_free(pf_vcache *c) {
  if (!c) return;
  free(c->e);
  free(c);
}

static void scenario_key(const pf_vrow *r, const pf_validate_opts *o, bool baseline, char *k, size_t n) {
  int w = snprintf(k, n, "%s|%s|%d|%d|%d|%d|%d|%.17g|%.17g|%d|%d|%d|%d|%d|%d|%d|%d|%s|%s|%s|%d|%d|%s", r->machine,
                   r->model, r->layers, r->hidden, r->heads, r->seq, r->vocab, r->params, r->flops_per_sample,
                   r->nodes, r->gpus, r->tp, r->pp, r->dp, r->mbs, r->gbs, r->grad_accum, r->precision, r->recompute,
                   r->schedule, r->sp, r->dist_opt, o && o->calibration ? o->calibration : "");
  if (w > 0 && (size_t)w < n && o && o->fit)
    w += snprintf(k + w, n - (size_t)w, "|fit %.17g %.17g %.17g %.17g", o->fit->compute_eff, o->fit->comm_eff,
                  o->fit->step_overhead_s, o->fit->input_rate_Bps);
  for (int i = 0; i < r->nopt && w > 0 && (size_t)w < n; i++) /* the option columns (flash_attn, cp, ...) */
    w += snprintf(k + w, n - (size_t)w, "|%s=%s", r->opt_name[i], r->opt_value[i]);
  if (w > 0 && (size_t)w < n && o && o->build)
    w += snprintf(k + w, n - (size_t)w, "|built %p %p", (void *)o->build, o->build_arg);
  if (w > 0 && (size_t)w < n && baseline)
    w += snprintf(k + w, n - (size_t)w, "|baseline %d %d %d", r->baseline_nodes, (int)r->scaling, r->baseline_mbs);
  if (w < 0 || (size_t)w >= n) k[0] = '\0'; /* too long to be a key: not cached */
}

static vcache_entry *cache_find(pf_vcache *c, const char *key) {
  for (int i = 0; i < c->n; i++)
    if (strcmp(c->e[i].key, key) == 0) return &c->e[i];
  return NULL;
}

int pf_validate_run_cached(pf_vset *s, const pf_validate_opts *o, pf_vcache *cache) {
  if (!cache->e && !(cache->e = calloc(VCACHE_MAX, sizeof *cache->e))) return pf_error_set(PF_ENOMEM, "out of memory");
  /* the scenarios of rows not in the cache, each distinct one once */
  pf_scenario *sc = malloc((size_t)(2 * s->n + 1) * sizeof *sc);
  pf_batch_item *items = calloc((size_t)(2 * s->n + 1), sizeof *items);
  char (*keys)[4096] = malloc((size_t)(2 * s->n + 1) * sizeof *keys);
  int *slot = malloc((size_t)(2 * s->n + 1) * sizeof *slot); /* per row: 2 cache slots (or -1) */
  pf_scenario *row_sc = malloc(3 * sizeof *row_sc);
  int rc = 0, n = 0;
  if (!sc || !items || !keys || !slot || !row_sc) { rc = pf_error_set(PF_ENOMEM, "out of memory"); goto done; }
  if (cache->n + 2 * s->n > VCACHE_MAX) cache->n = 0; /* full: start over (results stay exact, only time is lost) */
  for (int i = 0; i < s->n; i++) {
    pf_vrow *r = &s->rows[i];
    r->reason[0] = '\0';
    r->predicted = r->error = NAN;
    r->status = PF_ROW_PREDICTED;
    r->fail_code = 0;
    slot[2 * i] = slot[2 * i + 1] = -1;
    int k = pf_vrow_scenario(r, o, row_sc, r->reason, sizeof r->reason);
    if (k == 0) k = row_predictable(r, r->reason, sizeof r->reason);
    if (k > 0) { r->status = PF_ROW_NOT_PREDICTED; continue; }
    if (k == 0) k = row_scenarios(r, row_sc, o ? o->fit : NULL, row_sc + 1); /* 1 or 2 scenarios */
    if (k == PF_ENOMEM) { rc = k; goto done; }
    if (k < 0) {
      snprintf(r->reason, sizeof r->reason, "%s", pf_error_detail());
      r->status = PF_ROW_FAILED;
      r->fail_code = k;
      continue;
    }
    for (int j = 0; j < k; j++) {
      char key[4096];
      scenario_key(r, o, j == 1, key, sizeof key);
      if (!key[0]) snprintf(key, sizeof key, "\001%d", cache->n); /* no key: an entry of its own */
      vcache_entry *e = cache_find(cache, key);
      if (!e) { /* a new scenario: reserve its cache slot, predict it below */
        e = &cache->e[cache->n++];
        snprintf(e->key, sizeof e->key, "%s", key);
        e->rc = 1; /* pending */
        sc[n] = row_sc[1 + j];
        items[n].sc = &sc[n];
        snprintf(keys[n], sizeof keys[n], "%s", key);
        n++;
      }
      slot[2 * i + j] = (int)(e - cache->e);
    }
  }
  if ((rc = pf_predict_batch(items, n, 0, "rows")) < 0) goto done;
  for (int q = 0; q < n && rc == 0; q++) /* an engine failure stops the validation (exit 2): never a row */
    if (pf_error_is_failure(items[q].rc)) rc = pf_error_set(items[q].rc, "%s", items[q].detail);
  if (rc < 0) goto done;
  for (int q = 0; q < n; q++) {
    vcache_entry *e = cache_find(cache, keys[q]);
    e->rc = items[q].rc;
    snprintf(e->detail, sizeof e->detail, "%s", items[q].detail);
    e->pred = items[q].pred;
    e->sc = *items[q].sc;
  }
  for (int i = 0; i < s->n; i++) {
    pf_vrow *r = &s->rows[i];
    if (r->status != PF_ROW_PREDICTED) continue;
    const vcache_entry *e0 = &cache->e[slot[2 * i]], *e1 = slot[2 * i + 1] >= 0 ? &cache->e[slot[2 * i + 1]] : NULL;
    if (e1 && e1->rc < 0) {
      r->status = PF_ROW_FAILED;
      r->fail_code = e1->rc;
      char lb[64];
      snprintf(r->reason, sizeof r->reason, "%s: %.400s", baseline_label(r, lb, sizeof lb), e1->detail);
      continue;
    }
    if (e0->rc < 0) {
      r->status = PF_ROW_FAILED;
      r->fail_code = e0->rc;
      snprintf(r->reason, sizeof r->reason, "%s", e0->detail);
      continue;
    }
    r->predicted = row_value(r, &e0->sc, &e0->pred, e1 ? &e1->pred : NULL, o && o->hold_training);
    r->error = pf_vrow_error(r, r->predicted);
    if (!e0->pred.fits) /* a note on a predicted row: the memory model's disagreement with the run */
      snprintf(r->reason, sizeof r->reason, "memory: %.1f of %.1f GiB a GPU predicted (framework allowance %.1f), "
               "but the run fitted", e0->pred.memory.total_B / 1073741824.0, e0->pred.memory.capacity_B / 1073741824.0,
               e0->pred.memory.overhead_B / 1073741824.0);
  }
done:
  if (rc < 0) cache->n = 0; /* pending entries must not be read later */
  free(sc); free(items); free(keys); free(slot); free(row_sc);
  return rc;
}

int pf_validate_run(pf_vset *s, const pf_validate_opts *o) {
  pf_vcache *c = pf_vcache_new();
  if (!c) return pf_error_set(PF_ENOMEM, "out of memory");
  int rc = pf_validate_run_cached(s, o, c);
  pf_vcache_free(c);
  return rc;
}

