/* tunezero.c - the best sharded plan of a tune (tune.h): the ZeRO-2 / ZeRO-3 (FSDP) plan that screens best,
 * kept whether or not it ranks among the finalists, so that `tune` always says what full sharding would give
 * and at what memory (docs/model.md, "Sharded data parallelism"). */
#include "tune.h"

#include "core/core.h"

#include <stdio.h>
#include <string.h>

bool pf_tune_cand_better(const pf_tune_cand *c, const pf_tune_cand *b) {
  if (c->screen != b->screen) return c->screen < b->screen;
  if (c->memory_GiB != b->memory_GiB) return c->memory_GiB < b->memory_GiB;
  char x[192], y[192];
  pf_tune_plan_text(&c->plan, x, sizeof x);
  pf_tune_plan_text(&b->plan, y, sizeof y);
  return strcmp(x, y) < 0;
}

void pf_tune_keep_sharded(pf_tune_result *r, const pf_tune_cand *c) {
  if (pf_plan_zero(&c->plan) < 2) return;
  if (!r->has_sharded || pf_tune_cand_better(c, &r->sharded)) r->sharded = *c, r->has_sharded = true;
}

void pf_tune_sharded_json(cJSON *d, const pf_tune_result *r) {
  if (!r->has_sharded) return;
  cJSON *o = cJSON_AddObjectToObject(d, "best_sharded");
  const pf_tune_cand *c = &r->sharded;
  char txt[192 + PF_PP_LAYOUT_MAX];
  pf_tune_plan_text(&c->plan, txt, sizeof txt);
  pf_plan_json_fields(o, &c->plan, PF_PLAN_FORM_TUNE);
  cJSON_AddStringToObject(o, "options", txt);
  cJSON_AddNumberToObject(o, "iteration_time_s", c->t_iter_s);
  cJSON_AddNumberToObject(o, "tokens_per_s", c->tokens_per_s);
  cJSON_AddNumberToObject(o, "memory_GiB", c->memory_GiB);
  cJSON_AddNumberToObject(o, "screen", c->screen);
  pf_tune_simulated_json(o, r, &c->plan);
}

int pf_tune_sharded_merge(const cJSON *doc, pf_tune_result *r) {
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(doc, "best_sharded");
  if (!o) return 0;
  pf_tune_cand c;
  memset(&c, 0, sizeof c);
  const char *keys[] = {"iteration_time_s", "tokens_per_s", "memory_GiB", "screen"};
  double *dst[] = {&c.t_iter_s, &c.tokens_per_s, &c.memory_GiB, &c.screen};
  for (int i = 0; i < 4; i++) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, keys[i]);
    if (!cJSON_IsNumber(x)) return pf_error_set(PF_EPARSE, "best_sharded: %s missing", keys[i]);
    *dst[i] = x->valuedouble;
  }
  if (pf_plan_json_read(o, &c.plan) < 0) return pf_error_set(PF_EPARSE, "best_sharded: malformed plan");
  c.score = c.screen;
  pf_tune_keep_sharded(r, &c);
  return 0;
}

void pf_tune_sharded_text(const pf_tune_result *r, pf_objective o, char *buf, size_t n) {
  buf[0] = '\0';
  if (!r->has_sharded) return;
  const pf_tune_cand *c = &r->sharded;
  char txt[192 + PF_PP_LAYOUT_MAX], vs[160];
  pf_tune_plan_text(&c->plan, txt, sizeof txt);
  pf_tune_vs_best_text(r, o, &c->plan, c->screen, vs, sizeof vs);
  snprintf(buf, n, "best sharded plan (ZeRO-%d%s, screened): %.4g s%s, %.1f GiB per GPU: %s", pf_plan_zero(&c->plan),
           c->plan.shard_group == PF_SHARD_NODE ? " hybrid" : "", c->t_iter_s, vs, c->memory_GiB, txt);
}
