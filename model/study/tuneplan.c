/* tuneplan.c - what "best" means (the objectives, pf_tune_score) and how tune describes a plan (tune.h): its
 * options as a command line would give them (pf_tune_plan_text: the shape, the settings, the sharding level, EP
 * and uneven stages) and why a plan ranks below the best (pf_tune_why: the breakdown term that grew most), and
 * the refusal when none fits, naming the plan that came closest (pf_tune_refuse). */
#include "tune_int.h"

#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *obj_names[] = {"time", "energy", "billing", "action"};

const char *pf_objective_name(pf_objective o) { return o <= PF_OBJ_ACTION ? obj_names[o] : "?"; }

int pf_objective_parse(const char *s, pf_objective *out) {
  int i = pf_name_index(s, obj_names, PF_OBJ_ACTION + 1, false);
  if (i >= 0) { *out = (pf_objective)i; return 0; }
  return pf_error_set(PF_EINVAL, "--objective \"%s\": valid: time, energy, billing, action", s);
}

/* Per iteration: time (s), facility energy (J), billing units, action (J s).
 * With the GPU count fixed, billing follows time; it differs across scales. */
double pf_tune_score_of(const pf_scenario *sc, double t, double energy_J, pf_objective o) {
  switch (o) {
  case PF_OBJ_TIME: return t;
  case PF_OBJ_ENERGY: return energy_J;
  case PF_OBJ_BILLING: return sc->nodes * t / 3600.0 * sc->machine.billing_per_node_hour;
  case PF_OBJ_ACTION: return energy_J * t;
  }
  return t;
}

double pf_tune_score(const pf_scenario *sc, const pf_prediction *p, pf_objective o) {
  return pf_tune_score_of(sc, p->iteration_time_s, p->energy.facility_J, o);
}

void pf_tune_vs_best_text(const pf_tune_result *r, pf_objective o, const pf_plan *p, double screen, char *buf,
                          size_t n) {
  buf[0] = '\0';
  if (r->nfinal <= 0 || !(r->final[0].screen > 0)) return;
  char sim[96] = "";
  int k = pf_tune_final_index(r, p); /* a finalist: the table's figure beside the screening */
  if (k >= 0 && r->final[0].score > 0)
    snprintf(sim, sizeof sim, "; simulated: %.4g s, %+.1f %%, rank %d", r->final[k].t_iter_s,
             100 * (r->final[k].score / r->final[0].score - 1), k + 1);
  snprintf(buf, n, " (%+.1f %% %s vs the best, screened%s)", 100 * (screen / r->final[0].screen - 1),
           pf_objective_name(o), sim);
}

int pf_tune_final_index(const pf_tune_result *r, const pf_plan *p) {
  char a[192 + PF_PP_LAYOUT_MAX], b[192 + PF_PP_LAYOUT_MAX];
  pf_tune_plan_text(p, a, sizeof a);
  for (int k = 0; k < r->nfinal; k++) {
    pf_tune_plan_text(&r->final[k].plan, b, sizeof b);
    if (!strcmp(a, b)) return k;
  }
  return -1;
}

void pf_tune_simulated_json(cJSON *o, const pf_tune_result *r, const pf_plan *p) {
  int k = pf_tune_final_index(r, p);
  if (k < 0) return;
  cJSON *s = cJSON_AddObjectToObject(o, "simulated");
  cJSON_AddNumberToObject(s, "rank", k + 1);
  cJSON_AddNumberToObject(s, "iteration_time_s", r->final[k].t_iter_s);
}

void pf_tune_plan_text(const pf_plan *p, char *buf, size_t n) {
  char sched[24];
  if (p->schedule == PF_SCHED_INTERLEAVED) snprintf(sched, sizeof sched, "interleaved:%d", p->vstages);
  else snprintf(sched, sizeof sched, "%s", pf_schedule_name(p->schedule));
  char zero[48] = "";
  if (pf_plan_zero(p) >= 2)
    snprintf(zero, sizeof zero, " --zero %d%s", p->zero,
             p->shard_group == PF_SHARD_NODE ? " --fsdp-shard-group node" : "");
  char rec[48]; /* full recomputation of the first N layers of each chunk, where the user asked for it */
  snprintf(rec, sizeof rec, "%s", pf_recompute_name(p->recompute));
  if (p->recompute == PF_RECOMPUTE_FULL && p->recompute_layers > 0)
    snprintf(rec, sizeof rec, "full --recompute-num-layers %d", p->recompute_layers);
  if (p->cpu_offload_layers > 0) /* kept as asked, like N above */
    snprintf(rec, sizeof rec, "%s --cpu-offloading-num-layers %d", pf_recompute_name(p->recompute),
             p->cpu_offload_layers);
  char etp[24] = ""; /* an expert TP other than Megatron's default (as --tp) */
  if (p->etp > 0 && p->etp != p->tp) snprintf(etp, sizeof etp, " --etp %d", p->etp);
  snprintf(buf, n, "--tp %d --pp %d%s%.0d%s%.0d%s --mbs %d --recompute %s --schedule %s%s%s%s%s%s%s", p->tp, p->pp,
           p->cp > 1 ? " --cp " : "", p->cp > 1 ? p->cp : 0, p->ep > 1 ? " --ep " : "", p->ep > 1 ? p->ep : 0, etp,
           p->mbs, rec, sched, p->sp ? " --sp" : "",
           zero[0] ? zero : p->dist_opt ? " --dist-opt" : "",
           p->overlap_grad_reduce ? " --overlap-grad-reduce" : "",
           p->overlap_param_gather ? " --overlap-param-gather" : "", p->flash_attn ? " --flash-attn" : "",
           p->tp_comm_overlap ? " --tp-comm-overlap" : "");
  size_t o = strlen(buf);
  if (o < n) pf_plan_layout_args(p, buf + o, n - o); /* uneven stages: the options that give them */
}

void pf_tune_why(const pf_tune_cand *c, const pf_tune_cand *b, pf_objective o, char *buf, size_t n) {
  if (c == b || c->score <= b->score) { snprintf(buf, n, "best"); return; }
  /* the first terms of the breakdown (compute ... optimizer): the ones a plan choice moves */
  int worst = 0;
  double d = pf_breakdown_get(&c->breakdown_s, 0) - pf_breakdown_get(&b->breakdown_s, 0);
  for (int i = 1; i < PF_BREAKDOWN_N; i++) { /* the plan's terms, the per-unit FSDP collectives and FP8's amax */
    if (i >= PF_BREAKDOWN_PLAN_N && i < PF_BREAKDOWN_N - 3) continue;
    double di = pf_breakdown_get(&c->breakdown_s, i) - pf_breakdown_get(&b->breakdown_s, i);
    if (di > d) worst = i, d = di;
  }
  snprintf(buf, n, "+%.1f %% %s: %s %+.3g s", 100 * (c->score / b->score - 1), pf_objective_name(o),
           pf_breakdown_name(worst), d);
}

/* The counts, and the memory terms of the valid plan that came closest (what the fixed options, e.g. --ep 1,
 * leave on each GPU: pf_memory_check's message), with the largest terms that alone exceed the device. */
int pf_tune_refuse(const pf_scenario *base, long enumerated, long pruned, const pf_plan *tight, const pf_memory *m) {
  char why[1536] = "";
  if (tight) {
    pf_scenario *sc = malloc(sizeof *sc);
    if (!sc) return pf_error_set(PF_ENOMEM, "out of memory");
    *sc = *base;
    sc->plan = *tight;
    char terms[512], txt[192 + PF_PP_LAYOUT_MAX], over[96] = "";
    pf_memory_check(sc, m);
    free(sc);
    snprintf(terms, sizeof terms, "%s", pf_error_detail());
    pf_tune_plan_text(tight, txt, sizeof txt);
    double sum = pf_tune_memory_over(m, over, sizeof over);
    snprintf(why, sizeof why, "; the closest, %s, %s; %s alone: %.1f GiB", txt, terms, over,
             sum / (1024.0 * 1024 * 1024));
  }
  return pf_error_set(PF_ENOFIT, "no parallel configuration of %s fits on %d GPUs of %s with global batch %d "
                      "(%ld plans tried, %ld pruned as invalid or too large)%s",
                      base->workload.id, base->gpus, base->machine.id, base->plan.gbs, enumerated, pruned,
                      why[0] ? why : "; none of them is a valid split (GPUs = TP x PP x CP x DP, the global batch "
                      "divisible by DP x micro-batch, heads by TP, experts by EP): try a global batch or a node count "
                      "with the factors of the GPUs a node");
}
