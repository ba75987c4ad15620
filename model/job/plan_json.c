/* plan_json.c - the JSON of a parallel plan in the forms the documents use
 * (see plan_json.h): one place spells the plan's keys, so a new plan field is
 * added here once for every document that should carry it. */
#include "plan_json.h"

#include <limits.h>
#include <stdio.h>
#include <string.h>

/* The plan's shape, the prefix of every form but ASKED. */
static void shape(cJSON *o, const pf_plan *pl) {
  cJSON_AddNumberToObject(o, "tp", pl->tp);
  cJSON_AddNumberToObject(o, "pp", pl->pp);
  cJSON_AddNumberToObject(o, "dp", pl->dp);
  cJSON_AddNumberToObject(o, "cp", pl->cp);
  if (pl->ep > 1) cJSON_AddNumberToObject(o, "ep", pl->ep); /* MoE expert parallelism: only where used */
  if (pl->etp > 0) cJSON_AddNumberToObject(o, "etp", pl->etp);
  cJSON_AddNumberToObject(o, "mbs", pl->mbs);
  cJSON_AddNumberToObject(o, "gbs", pl->gbs);
  /* uneven pipeline stages: the layout that runs, in Megatron's --pipeline-model-parallel-layout syntax */
  if (pl->pp_split[0]) cJSON_AddStringToObject(o, "pp_layout", pl->pp_split);
}

/* The sharding level (always) and, from ZeRO-2 on, the shard group, prefetch depth and library (shard.c). */
static void sharding(cJSON *o, const pf_plan *pl) {
  int z = pf_plan_zero(pl);
  cJSON_AddNumberToObject(o, "zero", z);
  if (z < 2) return;
  cJSON_AddStringToObject(o, "shard_group", pf_shard_group_name(pl->shard_group));
  cJSON_AddNumberToObject(o, "fsdp_prefetch", pl->fsdp_prefetch);
  cJSON_AddStringToObject(o, "fsdp_impl", pf_fsdp_impl_name(pl->fsdp_impl));
}

/* How a mixture of experts runs (moeplan.c): only what differs from the defaults, so dense plans read as before. */
static void moe_fields(cJSON *o, const pf_plan *pl) {
  char mods[PF_RECOMPUTE_MODS_MAX];
  if (pl->recompute_modules)
    cJSON_AddStringToObject(o, "recompute_modules", pf_recompute_modules_name(pl->recompute_modules, mods, sizeof mods));
  if (pl->dispatcher != PF_MOE_DISPATCH_ALLTOALL)
    cJSON_AddStringToObject(o, "moe_token_dispatcher_type", pf_moe_dispatcher_name(pl->dispatcher));
  if (pl->deepep_sms > 0) cJSON_AddNumberToObject(o, "moe_deepep_num_sms", pl->deepep_sms);
  if (pl->flex_backend != PF_FLEX_DEEPEP)
    cJSON_AddStringToObject(o, "moe_flex_dispatcher_backend", pf_flex_backend_name(pl->flex_backend));
  if (pl->hybridep_sms > 0) cJSON_AddNumberToObject(o, "moe_hybridep_num_sms", pl->hybridep_sms);
  if (pl->ep_overlap) cJSON_AddBoolToObject(o, "overlap_moe_expert_parallel_comm", true);
  if (pl->fp8_act_cache) cJSON_AddBoolToObject(o, "fp8_activation_cache", true);
}

static void full(cJSON *o, const pf_plan *pl) {
  cJSON_AddNumberToObject(o, "grad_accum", pl->grad_accum);
  cJSON_AddNumberToObject(o, "microbatches", pl->grad_accum);
  char sched[32];
  if (pl->schedule == PF_SCHED_INTERLEAVED) snprintf(sched, sizeof sched, "interleaved:%d", pl->vstages);
  else snprintf(sched, sizeof sched, "%s", pf_schedule_name(pl->schedule));
  cJSON_AddStringToObject(o, "schedule", sched);
  cJSON_AddBoolToObject(o, "sp", pl->sp);
  cJSON_AddBoolToObject(o, "dist_opt", pl->dist_opt);
  sharding(o, pl);
  cJSON_AddBoolToObject(o, "overlap_grad_reduce", pl->overlap_grad_reduce);
  cJSON_AddBoolToObject(o, "overlap_param_gather", pl->overlap_param_gather);
  if (pl->ddp_bucket_size > 0) cJSON_AddNumberToObject(o, "ddp_bucket_size", pl->ddp_bucket_size);
  cJSON_AddStringToObject(o, "recompute", pf_recompute_name(pl->recompute));
  if (pl->recompute_layers > 0) cJSON_AddNumberToObject(o, "recompute_num_layers", pl->recompute_layers);
  if (pl->grad_reduce_bf16) cJSON_AddBoolToObject(o, "grad_reduce_in_bf16", true);
  if (pl->cpu_offload_layers > 0) cJSON_AddNumberToObject(o, "cpu_offloading_num_layers", pl->cpu_offload_layers);
  cJSON_AddBoolToObject(o, "flash_attn", pl->flash_attn);
  cJSON_AddBoolToObject(o, "tp_comm_overlap", pl->tp_comm_overlap);
  if (pl->fp8_recipe != PF_FP8_AUTO) cJSON_AddStringToObject(o, "fp8_recipe", pf_fp8_recipe_name(pl->fp8_recipe));
  if (pl->fp8_attention) cJSON_AddBoolToObject(o, "fp8_attention", true);
  moe_fields(o, pl);
}

static void tune(cJSON *o, const pf_plan *pl) {
  cJSON_AddNumberToObject(o, "microbatches", pl->grad_accum);
  cJSON_AddStringToObject(o, "schedule", pf_schedule_name(pl->schedule));
  cJSON_AddNumberToObject(o, "vstages", pl->vstages);
  cJSON_AddStringToObject(o, "recompute", pf_recompute_name(pl->recompute));
  cJSON_AddBoolToObject(o, "sp", pl->sp);
  cJSON_AddBoolToObject(o, "dist_opt", pl->dist_opt);
  sharding(o, pl);
  cJSON_AddBoolToObject(o, "overlap_grad_reduce", pl->overlap_grad_reduce);
  cJSON_AddBoolToObject(o, "overlap_param_gather", pl->overlap_param_gather);
  cJSON_AddBoolToObject(o, "flash_attn", pl->flash_attn);
  cJSON_AddBoolToObject(o, "tp_comm_overlap", pl->tp_comm_overlap);
  moe_fields(o, pl);
}

void pf_plan_json_fields(cJSON *o, const pf_plan *pl, pf_plan_form form) {
  if (form == PF_PLAN_FORM_ASKED) { /* the plan as asked: what the user set */
    if (pl->tp > 0) cJSON_AddNumberToObject(o, "tp", pl->tp);
    if (pl->pp > 0) cJSON_AddNumberToObject(o, "pp", pl->pp);
    if (pl->gbs > 0) cJSON_AddNumberToObject(o, "gbs", pl->gbs);
    return;
  }
  shape(o, pl);
  if (form == PF_PLAN_FORM_FULL) full(o, pl);
  else if (form == PF_PLAN_FORM_TUNE) tune(o, pl);
}

cJSON *pf_plan_json_parallel(cJSON *parent, const pf_plan *pl, pf_plan_form form) {
  cJSON *o = cJSON_AddObjectToObject(parent, "parallel");
  if (o) pf_plan_json_fields(o, pl, form);
  return o;
}

static int num(const cJSON *o, const char *k, int *bad) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
  /* a shard is user input: a value an int cannot hold is malformed, not cast (fuzz_merge) */
  if (!cJSON_IsNumber(x) || !(x->valuedouble >= INT_MIN && x->valuedouble <= INT_MAX)) { *bad = 1; return 0; }
  return (int)x->valuedouble;
}

static bool flag(const cJSON *o, const char *k, int *bad) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, k);
  if (!cJSON_IsBool(x)) { *bad = 1; return false; }
  return cJSON_IsTrue(x);
}

/* moe_fields read back (optional: absent is the default) */
static void moe_read(const cJSON *o, pf_plan *p) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(o, "recompute_modules");
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(o, "moe_token_dispatcher_type");
  const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "moe_deepep_num_sms");
  if (cJSON_IsString(m) && pf_recompute_modules_parse(m->valuestring, &p->recompute_modules) < 0) p->recompute_modules = 0;
  if (cJSON_IsString(d) && pf_moe_dispatcher_parse(d->valuestring, &p->dispatcher) < 0) p->dispatcher = 0;
  if (cJSON_IsNumber(n) && n->valuedouble >= 1 && n->valuedouble <= 65536) p->deepep_sms = (int)n->valuedouble;
  const cJSON *b = cJSON_GetObjectItemCaseSensitive(o, "moe_flex_dispatcher_backend");
  const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "moe_hybridep_num_sms");
  if (cJSON_IsString(b) && pf_flex_backend_parse(b->valuestring, &p->flex_backend) < 0) p->flex_backend = 0;
  if (cJSON_IsNumber(h) && h->valuedouble >= 1 && h->valuedouble <= 65536) p->hybridep_sms = (int)h->valuedouble;
  p->ep_overlap = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "overlap_moe_expert_parallel_comm"));
  p->fp8_act_cache = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "fp8_activation_cache"));
}

int pf_plan_json_read(const cJSON *o, pf_plan *p) {
  int bad = 0;
  memset(p, 0, sizeof *p);
  p->tp = num(o, "tp", &bad); p->pp = num(o, "pp", &bad); p->dp = num(o, "dp", &bad);
  p->cp = num(o, "cp", &bad); p->mbs = num(o, "mbs", &bad); p->gbs = num(o, "gbs", &bad);
  const cJSON *ep = cJSON_GetObjectItemCaseSensitive(o, "ep"), *etp = cJSON_GetObjectItemCaseSensitive(o, "etp");
  p->ep = cJSON_IsNumber(ep) ? (int)ep->valuedouble : 1; /* absent: EP 1, ETP as TP */
  p->etp = cJSON_IsNumber(etp) ? (int)etp->valuedouble : 0;
  p->grad_accum = num(o, "microbatches", &bad); p->vstages = num(o, "vstages", &bad);
  p->sp = flag(o, "sp", &bad); p->dist_opt = flag(o, "dist_opt", &bad);
  p->overlap_grad_reduce = flag(o, "overlap_grad_reduce", &bad);
  p->overlap_param_gather = flag(o, "overlap_param_gather", &bad);
  p->flash_attn = flag(o, "flash_attn", &bad);
  p->tp_comm_overlap = flag(o, "tp_comm_overlap", &bad);
  /* sharding beyond ZeRO-1: optional (documents from before it have none) */
  const cJSON *z = cJSON_GetObjectItemCaseSensitive(o, "zero"), *g = cJSON_GetObjectItemCaseSensitive(o, "shard_group");
  const cJSON *f = cJSON_GetObjectItemCaseSensitive(o, "fsdp_prefetch"), *im = cJSON_GetObjectItemCaseSensitive(o, "fsdp_impl");
  p->zero = cJSON_IsNumber(z) && z->valuedouble >= 2 ? (int)z->valuedouble : 0;
  p->shard_group = cJSON_IsString(g) && strcmp(g->valuestring, "node") == 0 ? PF_SHARD_NODE : PF_SHARD_ALL;
  p->fsdp_prefetch = cJSON_IsNumber(f) ? (int)f->valuedouble : 1;
  for (int i = 0; cJSON_IsString(im) && i <= PF_FSDP_DEEPSPEED; i++)
    if (strcmp(im->valuestring, pf_fsdp_impl_name(i)) == 0) p->fsdp_impl = i;
  moe_read(o, p);
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, "schedule");
  const cJSON *r = cJSON_GetObjectItemCaseSensitive(o, "recompute");
  const cJSON *lay = cJSON_GetObjectItemCaseSensitive(o, "pp_layout"); /* optional: uneven stages */
  if (cJSON_IsString(lay)) snprintf(p->pp_layout, sizeof p->pp_layout, "%s", lay->valuestring);
  int v;
  if (!cJSON_IsString(s) || pf_schedule_parse(s->valuestring, &p->schedule, &v) < 0) bad = 1;
  if (p->schedule == PF_SCHED_INTERLEAVED && (p->vstages < 2 || p->vstages > 64)) bad = 1; /* as the option allows */
  if (!cJSON_IsString(r) || pf_recompute_parse(r->valuestring, &p->recompute) < 0) bad = 1;
  return bad ? -1 : 0;
}
