/* tunejson.c - a tune result as JSON (tune.h): the counters and the finalists with every plan field, and the
 * merge of shards' documents into the result the unsharded search gives. */
#include "tune_int.h"

#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static cJSON *cand_json(const pf_tune_cand *c) {
  cJSON *o = cJSON_CreateObject();
  const pf_plan *p = &c->plan;
  char txt[192 + PF_PP_LAYOUT_MAX];
  pf_tune_plan_text(p, txt, sizeof txt);
  pf_plan_json_fields(o, p, PF_PLAN_FORM_TUNE);
  cJSON_AddStringToObject(o, "options", txt);
  cJSON_AddNumberToObject(o, "iteration_time_s", c->t_iter_s);
  cJSON_AddNumberToObject(o, "tokens_per_s", c->tokens_per_s);
  cJSON_AddNumberToObject(o, "tflops_per_gpu", c->tflops_per_gpu);
  cJSON_AddNumberToObject(o, "memory_GiB", c->memory_GiB);
  cJSON_AddNumberToObject(o, "energy_J", c->energy_J);
  pf_breakdown_json(o, &c->breakdown_s, PF_BREAKDOWN_PLAN_N, NULL);
  if (c->plan.ep > 1 && c->t_iter_s > 0) /* expert parallelism: the all-to-alls' share of the iteration */
    cJSON_AddNumberToObject(o, "ep_a2a_share", c->a2a_share);
  cJSON_AddNumberToObject(o, "screen", c->screen);
  cJSON_AddNumberToObject(o, "score", c->score);
  return o;
}

cJSON *pf_tune_json(const pf_tune_result *r, const pf_tune_config *o) {
  cJSON *d = cJSON_CreateObject();
  cJSON_AddStringToObject(d, "objective", pf_objective_name(o->objective));
  cJSON_AddNumberToObject(d, "plans_enumerated", (double)r->enumerated);
  cJSON_AddNumberToObject(d, "plans_pruned", (double)r->pruned);
  cJSON_AddNumberToObject(d, "plans_evaluated", (double)r->evaluated);
  cJSON_AddNumberToObject(d, "plans_simulated", r->nfinal);
  cJSON *arr = cJSON_AddArrayToObject(d, "finalists");
  for (int i = 0; i < r->nfinal; i++) cJSON_AddItemToArray(arr, cand_json(&r->final[i]));
  pf_tune_sharded_json(d, r);
  pf_tune_ep1_json(d, r);
  return d;
}

static double num(const cJSON *o, const char *k, int *bad) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
  if (!cJSON_IsNumber(x)) { *bad = 1; return 0; }
  return x->valuedouble;
}

/* a plan counter of a shard: a whole number a long holds, else malformed (a cast of 1e300 is undefined) */
static long counter(const cJSON *o, const char *k, int *bad) {
  double v = num(o, k, bad);
  if (!(v >= 0 && v <= 1e15)) { *bad = 1; return 0; }
  return (long)v;
}

static int cand_parse(const cJSON *o, pf_tune_cand *c) {
  int bad = 0;
  memset(c, 0, sizeof *c);
  if (pf_plan_json_read(o, &c->plan) < 0) bad = 1;
  c->t_iter_s = num(o, "iteration_time_s", &bad);
  c->tokens_per_s = num(o, "tokens_per_s", &bad);
  c->tflops_per_gpu = num(o, "tflops_per_gpu", &bad);
  c->memory_GiB = num(o, "memory_GiB", &bad);
  c->energy_J = num(o, "energy_J", &bad);
  if (pf_breakdown_json_read(o, PF_BREAKDOWN_PLAN_N, &c->breakdown_s) < 0) bad = 1;
  const cJSON *sh = cJSON_GetObjectItemCaseSensitive(o, "ep_a2a_share"); /* EP > 1 rows only */
  if (sh && !cJSON_IsNumber(sh)) bad = 1;
  c->a2a_share = sh ? sh->valuedouble : 0;
  c->screen = num(o, "screen", &bad);
  c->score = num(o, "score", &bad);
  c->simulated = true;
  return bad ? -1 : 0;
}

int pf_tune_merge(cJSON *const *docs, int n, const pf_tune_config *o, pf_tune_result *out) {
  memset(out, 0, sizeof *out);
  int total = 0;
  for (int i = 0; i < n; i++) total += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(docs[i], "finalists"));
  pf_tune_cand *all = calloc((size_t)(total ? total : 1), sizeof *all);
  if (!all) return pf_error_set(PF_ENOMEM, "out of memory");
  int k = 0, bad = 0;
  for (int i = 0; i < n; i++) {
    out->enumerated += counter(docs[i], "plans_enumerated", &bad);
    out->pruned += counter(docs[i], "plans_pruned", &bad);
    out->evaluated += counter(docs[i], "plans_evaluated", &bad);
    const cJSON *f, *arr = cJSON_GetObjectItemCaseSensitive(docs[i], "finalists");
    cJSON_ArrayForEach(f, arr) {
      if (cand_parse(f, &all[k]) < 0) { free(all); return pf_error_set(PF_EPARSE, "shard %d: malformed finalist", i + 1); }
      k++;
    }
    if (bad) { free(all); return pf_error_set(PF_EPARSE, "shard %d: missing plan counters", i + 1); }
    int zr = pf_tune_sharded_merge(docs[i], out);
    if (zr == 0) zr = pf_tune_ep1_merge(docs[i], out);
    if (zr < 0) { free(all); return zr; }
  }
  int keep = 2 * (o->top > 0 ? o->top : 10);
  qsort(all, (size_t)k, sizeof *all, pf_tune_by_screen);
  if (k > keep) k = keep;
  qsort(all, (size_t)k, sizeof *all, pf_tune_by_score);
  if (k == 0) {
    free(all);
    return pf_error_set(PF_ENOFIT, "no parallel configuration fits (%ld plans tried over %d shards)", out->enumerated, n);
  }
  out->final = all;
  out->nfinal = k;
  return 0;
}
