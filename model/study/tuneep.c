/* tuneep.c - what no expert parallelism (EP 1 and ETP 1: every routed expert whole on each GPU of its stage)
 * comes to in a tune of a mixture of experts that searches EP (tune.h): of the valid such plans, how many fit and
 * the one of least memory with its memory terms, so that `tune` says why the experts must be split (no plan with
 * at most the optimizer state sharded fits, the largest terms named) or that the memory model lets one fit, and
 * at what memory; and where some fit, the best of them by the screening against the best plan (what splitting
 * the experts gains in time).  EP 1 at ETP > 1 splits every expert by tensor parallelism instead, as EP would
 * split the experts between ranks (the same bytes a GPU): those plans rank with the others. */
#include "tune_int.h"

#include "core/core.h"

#include <stdio.h>
#include <string.h>

#define GiB (1024.0 * 1024.0 * 1024.0)

bool pf_tune_no_ep(const pf_plan *p) { return pf_plan_ep(p) == 1 && pf_plan_etp(p) == 1; }

/* The optimizer-only sharding (ZeRO-0/1, what Megatron-Core's MoE recipes run) before ZeRO-2/3, which shards the
 * experts' weights and gradients over the data-parallel ranks after all; within each a fitting plan first; then
 * the least memory. */
static int rank_of(bool fits, const pf_plan *p) { return (pf_plan_zero(p) <= 1 ? 0 : 2) + !fits; }

static void keep_into(pf_tune_ep1 *e, const pf_plan *p, const pf_memory *m) {
  bool fits = m->total_B <= m->capacity_B;
  e->valid++;
  e->fit += fits;
  e->fit_zero1 += fits && pf_plan_zero(p) <= 1;
  int k = rank_of(fits, p), ke = e->has ? rank_of(e->fits, &e->plan) : 4;
  if (k > ke) return;
  if (k == ke) {
    if (m->total_B > e->m.total_B) return;
    if (m->total_B == e->m.total_B) {
      char x[192 + PF_PP_LAYOUT_MAX], y[192 + PF_PP_LAYOUT_MAX];
      pf_tune_plan_text(p, x, sizeof x);
      pf_tune_plan_text(&e->plan, y, sizeof y);
      if (strcmp(x, y) >= 0) return;
    }
  }
  e->has = true, e->fits = fits, e->plan = *p, e->m = *m;
}

void pf_tune_keep_ep1(pf_tune_result *r, const pf_plan *p, const pf_memory *m) { keep_into(&r->ep1, p, m); }

void pf_tune_keep_ep1_priced(pf_tune_result *r, const pf_tune_cand *c) {
  pf_tune_ep1 *e = &r->ep1;
  if (!e->has_fastest || pf_tune_cand_better(c, &e->fastest)) e->fastest = *c, e->has_fastest = true;
}

void pf_tune_ep1_join(pf_tune_ep1 *into, const pf_tune_ep1 *from) {
  long valid = into->valid + from->valid, fit = into->fit + from->fit, fz = into->fit_zero1 + from->fit_zero1;
  if (from->has) keep_into(into, &from->plan, &from->m);
  if (from->has_fastest && (!into->has_fastest || pf_tune_cand_better(&from->fastest, &into->fastest)))
    into->fastest = from->fastest, into->has_fastest = true;
  into->valid = valid, into->fit = fit, into->fit_zero1 = fz;
}

double pf_tune_memory_over(const pf_memory *m, char *buf, size_t n) {
  struct { const char *name; double B; } t[] = {{"weights", m->weights_B}, {"gradients", m->gradients_B},
      {"optimizer", m->optimizer_B}, {"activations", m->activations_B}, {"overhead", m->overhead_B}};
  int k = sizeof t / sizeof *t;
  for (int i = 1; i < k; i++) /* largest first */
    for (int j = i; j > 0 && t[j].B > t[j - 1].B; j--) { __typeof__(t[0]) x = t[j]; t[j] = t[j - 1]; t[j - 1] = x; }
  double sum = 0;
  buf[0] = '\0';
  for (int i = 0; i < k && sum <= m->capacity_B; i++) {
    sum += t[i].B;
    size_t l = strlen(buf);
    snprintf(buf + l, n - l, "%s%s", i ? " + " : "", t[i].name);
  }
  return sum;
}

void pf_tune_memory_terms(const pf_memory *m, const char *dev, char *buf, size_t n) {
  char work[64] = "", names[96];
  if (m->working_B > 0) snprintf(work, sizeof work, "unsharded units %.1f, ", m->working_B / GiB);
  int l = snprintf(buf, n, "%.1f GiB per GPU (weights %.1f, gradients %.1f, optimizer %.1f, activations %.1f, "
                   "%soverhead %.1f) %s %s's %.1f GiB", m->total_B / GiB, m->weights_B / GiB, m->gradients_B / GiB,
                   m->optimizer_B / GiB, m->activations_B / GiB, work, m->overhead_B / GiB,
                   m->total_B > m->capacity_B ? "over" : "within", dev, m->capacity_B / GiB);
  if (m->total_B > m->capacity_B && l > 0 && (size_t)l < n) {
    double sum = pf_tune_memory_over(m, names, sizeof names);
    snprintf(buf + l, n - l, "; %s alone: %.1f GiB", names, sum / GiB);
  }
}

/* "; the best of them (screened), OPTIONS: T s (+x % time vs the best, screened), M GiB per GPU": the plan of the
 * class that screens best, exact as the best sharded plan is (tune.c prices them while their bound is not above
 * it) */
static void fastest_text(const pf_tune_result *r, pf_objective o, char *buf, size_t n) {
  const pf_tune_ep1 *e = &r->ep1;
  if (!e->has_fastest) {
    snprintf(buf, n, "; none could be priced");
    return;
  }
  char txt[192 + PF_PP_LAYOUT_MAX], vs[160];
  pf_tune_plan_text(&e->fastest.plan, txt, sizeof txt);
  pf_tune_vs_best_text(r, o, &e->fastest.plan, e->fastest.screen, vs, sizeof vs);
  snprintf(buf, n, "; the best of them (screened), %s: %.4g s%s, %.1f GiB per GPU", txt, e->fastest.t_iter_s, vs,
           e->fastest.memory_GiB);
}

#define CLASS "EP 1, ETP 1 (no expert parallelism: every routed expert whole on each GPU of its stage)"

void pf_tune_ep1_text(const pf_tune_result *r, pf_objective o, const char *dev, char *buf, size_t n) {
  const pf_tune_ep1 *e = &r->ep1;
  buf[0] = '\0';
  if (!e->has) return;
  char txt[192 + PF_PP_LAYOUT_MAX], terms[320], fast[512 + PF_PP_LAYOUT_MAX] = "";
  pf_tune_plan_text(&e->plan, txt, sizeof txt);
  pf_tune_memory_terms(&e->m, dev, terms, sizeof terms);
  if (e->fit > 0) fastest_text(r, o, fast, sizeof fast);
  if (e->fits)
    snprintf(buf, n, CLASS ": %ld of %ld valid plans fit (%ld with at most the optimizer state sharded); the least "
             "memory %s, %s: %s%s", e->fit, e->valid, e->fit_zero1,
             pf_plan_zero(&e->plan) <= 1 ? "of these" : "(only ZeRO-2/3 fit)", txt, terms, fast);
  else if (pf_plan_zero(&e->plan) <= 1 && e->fit > 0) /* only sharding the experts' weights over DP fits them */
    snprintf(buf, n, CLASS " refused with at most the optimizer state sharded: none of %ld valid plans fits; the "
             "closest, %s: %s; %ld fit only with weights and gradients sharded over the data-parallel ranks too "
             "(ZeRO-2/3)%s", e->valid, txt, terms, e->fit, fast);
  else
    snprintf(buf, n, CLASS " refused: none of %ld valid plans fits; the closest, %s: %s", e->valid, txt, terms);
}

/* JSON "ep1" (and back, for merge): the counts, the plan, its memory terms in GiB. */
static const char *const keys[] = {"weights_GiB", "gradients_GiB", "optimizer_GiB", "activations_GiB",
                                   "unsharded_units_GiB", "overhead_GiB", "memory_GiB", "capacity_GiB"};

static double *field(pf_memory *m, int i) {
  double *f[] = {&m->weights_B, &m->gradients_B, &m->optimizer_B, &m->activations_B, &m->working_B, &m->overhead_B,
                 &m->total_B, &m->capacity_B};
  return f[i];
}

void pf_tune_ep1_json(cJSON *d, const pf_tune_result *r) {
  const pf_tune_ep1 *e = &r->ep1;
  if (!e->has) return;
  cJSON *o = cJSON_AddObjectToObject(d, "ep1");
  char txt[192 + PF_PP_LAYOUT_MAX];
  pf_tune_plan_text(&e->plan, txt, sizeof txt);
  cJSON_AddNumberToObject(o, "valid", (double)e->valid);
  cJSON_AddNumberToObject(o, "fit", (double)e->fit);
  cJSON_AddNumberToObject(o, "fit_zero1", (double)e->fit_zero1);
  cJSON_AddBoolToObject(o, "fits", e->fits);
  pf_plan_json_fields(o, &e->plan, PF_PLAN_FORM_TUNE);
  cJSON_AddStringToObject(o, "options", txt);
  pf_memory m = e->m;
  for (int i = 0; i < (int)(sizeof keys / sizeof *keys); i++) cJSON_AddNumberToObject(o, keys[i], *field(&m, i) / GiB);
  if (!e->has_fastest) return;
  cJSON *f = cJSON_AddObjectToObject(o, "fastest"); /* the best EP 1 plan priced, as best_sharded */
  pf_tune_plan_text(&e->fastest.plan, txt, sizeof txt);
  pf_plan_json_fields(f, &e->fastest.plan, PF_PLAN_FORM_TUNE);
  cJSON_AddStringToObject(f, "options", txt);
  cJSON_AddNumberToObject(f, "iteration_time_s", e->fastest.t_iter_s);
  cJSON_AddNumberToObject(f, "memory_GiB", e->fastest.memory_GiB);
  cJSON_AddNumberToObject(f, "screen", e->fastest.screen);
  pf_tune_simulated_json(f, r, &e->fastest.plan);
}

int pf_tune_ep1_merge(const cJSON *doc, pf_tune_result *r) {
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(doc, "ep1");
  if (!o) return 0;
  pf_memory m;
  memset(&m, 0, sizeof m);
  double cnt[3];
  const char *ck[] = {"valid", "fit", "fit_zero1"};
  for (int i = 0; i < 3; i++) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, ck[i]);
    if (!cJSON_IsNumber(x) || !(x->valuedouble >= 0 && x->valuedouble <= 1e15))
      return pf_error_set(PF_EPARSE, "ep1: %s missing", ck[i]);
    cnt[i] = x->valuedouble;
  }
  for (int i = 0; i < (int)(sizeof keys / sizeof *keys); i++) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, keys[i]);
    if (!cJSON_IsNumber(x)) return pf_error_set(PF_EPARSE, "ep1: %s missing", keys[i]);
    *field(&m, i) = x->valuedouble * GiB;
  }
  pf_tune_ep1 e = {.valid = (long)cnt[0], .fit = (long)cnt[1], .fit_zero1 = (long)cnt[2], .has = true, .m = m};
  if (pf_plan_json_read(o, &e.plan) < 0) return pf_error_set(PF_EPARSE, "ep1: malformed plan");
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "fastest"); /* absent: none priced in that shard */
  if (f) {
    const char *fk[] = {"iteration_time_s", "memory_GiB", "screen"};
    double *dst[] = {&e.fastest.t_iter_s, &e.fastest.memory_GiB, &e.fastest.screen};
    for (int i = 0; i < 3; i++) {
      const cJSON *x = cJSON_GetObjectItemCaseSensitive(f, fk[i]);
      if (!cJSON_IsNumber(x)) return pf_error_set(PF_EPARSE, "ep1.fastest: %s missing", fk[i]);
      *dst[i] = x->valuedouble;
    }
    if (pf_plan_json_read(f, &e.fastest.plan) < 0) return pf_error_set(PF_EPARSE, "ep1.fastest: malformed plan");
    e.fastest.score = e.fastest.screen;
    e.has_fastest = true;
  }
  pf_tune_ep1_join(&r->ep1, &e);
  return 0;
}
