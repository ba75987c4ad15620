/* report.c - results as JSON documents and text tables (see report.h). */
#include "report.h"

#include "core/core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GiB (1024.0 * 1024.0 * 1024.0)

/* Round to 6 significant digits so outputs stay stable and readable. */
static double r6(double x) {
  if (x == 0 || !isfinite(x)) return isfinite(x) ? x : 0;
  double mag = pow(10.0, 5 - (int)floor(log10(fabs(x))));
  return round(x * mag) / mag;
}

/* The configuration part of a prediction document: machine, model, plan. */
static cJSON *scenario_json(const pf_scenario *sc) {
  cJSON *j = pf_report_root_json();
  cJSON_AddStringToObject(j, "machine", sc->machine.id);
  cJSON_AddStringToObject(j, "device", sc->machine.dev.id);
  cJSON_AddStringToObject(j, "model", sc->workload.id);
  cJSON_AddNumberToObject(j, "nodes", sc->nodes);
  cJSON_AddNumberToObject(j, "gpus", sc->gpus);
  pf_plan_json_parallel(j, &sc->plan, PF_PLAN_FORM_FULL);
  cJSON_AddStringToObject(j, "precision", pf_precision_name(sc->precision));
  return j;
}

/* The energy fields beyond DESIGN 4.2's: scopes, powers, rates, the cap and the run (docs/energy.md). */
static void energy_json(cJSON *e, const pf_scenario *sc, const pf_prediction *p) {
  const pf_energy *en = &p->energy;
  cJSON_AddNumberToObject(e, "package_J", r6(en->package_J));
  cJSON_AddNumberToObject(e, "node_gpus_J", r6(en->node_gpus_J));
  cJSON_AddNumberToObject(e, "avg_power_per_package_W", r6(en->avg_power_per_package_W));
  cJSON_AddNumberToObject(e, "gpu_busy_W", r6(en->gpu_busy_W));
  cJSON_AddNumberToObject(e, "per_sample_J", r6(en->per_sample_J));
  cJSON_AddNumberToObject(e, "per_token_J", r6(en->per_token_J));
  cJSON_AddNumberToObject(e, "action_Js", r6(en->action_Js));
  cJSON_AddNumberToObject(e, "power_cap_W", r6(en->cap_W));
  cJSON_AddNumberToObject(e, "clock_ratio", r6(en->clock_ratio));
  /* nominal 80 % intervals (docs/energy.md "Ranges"): where the validation's energy rows gave a power interval */
  if (p->interval.n_power > 0) {
    cJSON_AddNumberToObject(e, "avg_power_per_gpu_W_low", r6(en->avg_power_per_gpu_W_low));
    cJSON_AddNumberToObject(e, "avg_power_per_gpu_W_high", r6(en->avg_power_per_gpu_W_high));
    cJSON_AddNumberToObject(e, "gpu_J_low", r6(en->gpu_J_low));
    cJSON_AddNumberToObject(e, "gpu_J_high", r6(en->gpu_J_high));
    cJSON_AddNumberToObject(e, "facility_J_low", r6(en->facility_J_low));
    cJSON_AddNumberToObject(e, "facility_J_high", r6(en->facility_J_high));
  }
  cJSON *u = cJSON_AddObjectToObject(e, "per_gpu_iteration"); /* what the power comes from (docs/energy.md) */
  cJSON_AddNumberToObject(u, "busy_s", r6(en->use.busy_s));
  cJSON_AddNumberToObject(u, "tensor_util_s", r6(en->use.tensor_util_s));
  cJSON_AddNumberToObject(u, "vector_util_s", r6(en->use.vector_util_s));
  cJSON_AddNumberToObject(u, "hbm_util_s", r6(en->use.hbm_util_s));
  cJSON_AddNumberToObject(u, "comm_exposed_s", r6(en->use.comm_s));
  /* one forward-only pass (evaluation): its own kernels' power, not training's */
  const pf_energy *ev = &p->eval_energy;
  cJSON *x = cJSON_AddObjectToObject(e, "eval_iteration");
  cJSON_AddNumberToObject(x, "gpu_J", r6(ev->gpu_J));
  cJSON_AddNumberToObject(x, "node_J", r6(ev->node_J));
  cJSON_AddNumberToObject(x, "facility_J", r6(ev->facility_J));
  cJSON_AddNumberToObject(x, "avg_power_per_gpu_W", r6(ev->avg_power_per_gpu_W));
  cJSON_AddNumberToObject(x, "avg_power_per_node_W", r6(ev->avg_power_per_node_W));
  if (sc->train_iters > 0) {
    double n = sc->train_iters, t = n * p->iteration_time_s;
    cJSON *run = cJSON_AddObjectToObject(e, "run");
    cJSON_AddNumberToObject(run, "iterations", n);
    cJSON_AddNumberToObject(run, "wall_s", r6(t));
    cJSON_AddNumberToObject(run, "gpu_J", r6(n * en->gpu_J));
    cJSON_AddNumberToObject(run, "node_J", r6(n * en->node_J));
    cJSON_AddNumberToObject(run, "facility_J", r6(n * en->facility_J));
    cJSON_AddNumberToObject(run, "action_Js", r6(n * en->facility_J * t));
  }
}

static void memory_json(cJSON *j, const pf_memory *m, const pf_plan *pl) {
  cJSON *mem = cJSON_AddObjectToObject(j, "memory_per_gpu_GiB");
  cJSON_AddNumberToObject(mem, "weights", r6(m->weights_B / GiB));
  cJSON_AddNumberToObject(mem, "gradients", r6(m->gradients_B / GiB));
  cJSON_AddNumberToObject(mem, "optimizer", r6(m->optimizer_B / GiB));
  if (m->working_B > 0) cJSON_AddNumberToObject(mem, "unsharded_units", r6(m->working_B / GiB)); /* ZeRO-2/3 */
  cJSON_AddNumberToObject(mem, "activations", r6(m->activations_B / GiB));
  cJSON_AddNumberToObject(mem, "overhead", r6(m->overhead_B / GiB));
  cJSON_AddNumberToObject(mem, "total", r6(m->total_B / GiB));
  cJSON_AddNumberToObject(mem, "capacity", r6(m->capacity_B / GiB));
  if (pf_plan_uneven(pl)) cJSON_AddNumberToObject(mem, "stage", m->worst_stage); /* the largest stage's */
}

cJSON *pf_report_nofit_json(const pf_scenario *sc, const pf_prediction *p, const char *reason) {
  cJSON *j = scenario_json(sc);
  cJSON_AddBoolToObject(j, "fits", false);
  cJSON_AddStringToObject(j, "reason", reason ? reason : "");
  memory_json(j, &p->memory, &sc->plan);
  if (sc->calibration[0]) cJSON_AddStringToObject(j, "calibration", sc->calibration);
  cJSON_AddArrayToObject(j, "warnings");
  return j;
}

cJSON *pf_report_invalid_json(const pf_scenario *sc, int nodes, const char *reason) {
  cJSON *j = pf_report_root_json();
  cJSON_AddStringToObject(j, "machine", sc->machine.id);
  cJSON_AddStringToObject(j, "model", sc->workload.id);
  cJSON_AddNumberToObject(j, "nodes", nodes);
  cJSON_AddBoolToObject(j, "valid", false);
  cJSON_AddStringToObject(j, "reason", reason ? reason : "");
  return j;
}

/* name, name_low, name_high: the value and, with an interval, its nominal 80 % range (interval.h). */
/* x / d, 0 where there is no interval (d = 0): a rate's bounds are the value over the time interval's */
static double over(double x, double d) { return d > 0 ? x / d : 0.0; }

static void ranged(cJSON *j, const char *name, double v, double lo, double hi, bool with) {
  cJSON_AddNumberToObject(j, name, r6(v));
  if (!with) return;
  char k[64];
  snprintf(k, sizeof k, "%s_low", name);
  cJSON_AddNumberToObject(j, k, r6(lo));
  snprintf(k, sizeof k, "%s_high", name);
  cJSON_AddNumberToObject(j, k, r6(hi));
}

/* The interval's provenance: the regimes its rows came from (docs/validation.md, "Prediction intervals"). */
static void interval_json(cJSON *j, const pf_pred_interval *iv) {
  cJSON *o = cJSON_AddObjectToObject(j, "interval");
  cJSON_AddNumberToObject(o, "nominal_coverage", 0.8);
  cJSON_AddBoolToObject(o, "anchored", iv->anchored);
  cJSON_AddStringToObject(o, "time_regime", iv->time_regime);
  cJSON_AddNumberToObject(o, "time_rows", iv->n_time);
  cJSON_AddNumberToObject(o, "time_factor_low", r6(iv->time_lo));
  cJSON_AddNumberToObject(o, "time_factor_high", r6(iv->time_hi));
  if (iv->n_power > 0) { /* the power interval of the energy rows (docs/energy.md "Ranges") */
    cJSON_AddStringToObject(o, "power_regime", iv->power_regime);
    cJSON_AddNumberToObject(o, "power_rows", iv->n_power);
    cJSON_AddNumberToObject(o, "power_factor_low", r6(iv->power_lo));
    cJSON_AddNumberToObject(o, "power_factor_high", r6(iv->power_hi));
  }
  if (iv->n_eff == 0) return; /* not asked for: a single prediction has no scaling efficiency */
  cJSON_AddStringToObject(o, "efficiency_regime", iv->eff_regime);
  cJSON_AddNumberToObject(o, "efficiency_rows", iv->n_eff);
  cJSON_AddNumberToObject(o, "efficiency_factor_low", r6(iv->eff_lo));
  cJSON_AddNumberToObject(o, "efficiency_factor_high", r6(iv->eff_hi));
}

/* A mixture of experts: parameters total and active, the model FLOPs MFU uses (active experts) beside the
 * all-experts count it must not use, and, inside breakdown_s, the MoE kernels' share of compute (the
 * critical stage's, at their standalone price; compute/moelayer.c). */
static void moe_json(cJSON *j, const pf_scenario *sc, const pf_prediction *p) {
  const pf_workload *w = &sc->workload;
  pf_workload all = *w;
  all.topk = all.experts;
  cJSON *o = cJSON_AddObjectToObject(j, "moe");
  cJSON_AddNumberToObject(o, "params", r6(pf_workload_params(w, sc->plan.tp)));
  cJSON_AddNumberToObject(o, "active_params", r6(pf_workload_active_params(w, sc->plan.tp)));
  cJSON_AddNumberToObject(o, "mtp_params", r6(pf_workload_mtp_params(w)));
  cJSON_AddNumberToObject(o, "model_flops_per_sample", r6(pf_workload_model_flops_per_sample(w, sc->plan.tp)));
  cJSON_AddNumberToObject(o, "all_experts_flops_per_sample", r6(pf_workload_model_flops_per_sample(&all, sc->plan.tp)));
  cJSON_AddNumberToObject(o, "expert_load", r6(pf_workload_expert_load(w)));
  cJSON_AddNumberToObject(o, "rank_load", r6(pf_workload_rank_load(w, pf_plan_ep(&sc->plan))));
  cJSON_AddBoolToObject(o, "dropless", !(w->capacity_factor > 0));
  const pf_moe_split *m = &p->compute_split_s.moe;
  cJSON *b = cJSON_GetObjectItemCaseSensitive(j, "breakdown_s");
  cJSON *x = cJSON_AddObjectToObject(b ? b : o, "compute_moe");
  cJSON_AddNumberToObject(x, "router", r6(m->router));
  cJSON_AddNumberToObject(x, "host_sync", r6(m->host_sync));
  cJSON_AddNumberToObject(x, "permute", r6(m->permute));
  cJSON_AddNumberToObject(x, "experts", r6(m->experts));
  cJSON_AddNumberToObject(x, "unpermute", r6(m->unpermute));
  cJSON_AddNumberToObject(x, "shared_experts", r6(m->shared));
  /* the EP all-to-alls (comm/epa2a.c): breakdown_s.ep_a2a is the exposed part plus the SM cost */
  const pf_plan *pl = &sc->plan;
  /* the routed experts' gradients, reduced over the expert-data-parallel group (engine/dpsync.c) */
  cJSON *g = cJSON_AddObjectToObject(o, "expert_dp");
  cJSON_AddNumberToObject(g, "edp", p->comm.edp);
  cJSON_AddNumberToObject(g, "dense_dp", pl->dp * pl->cp);
  cJSON_AddNumberToObject(g, "expert_sync_s", r6(p->comm.dp_expert_s));
  if (pf_plan_ep(pl) < 2) return;
  cJSON *a = cJSON_AddObjectToObject(o, "ep_a2a");
  cJSON_AddStringToObject(a, "dispatcher", pf_moe_dispatcher_name(pl->dispatcher));
  if (pl->dispatcher == PF_MOE_DISPATCH_FLEX) {
    cJSON_AddStringToObject(a, "flex_backend", pf_flex_backend_name(pl->flex_backend));
    cJSON_AddNumberToObject(a, "sms", pf_plan_flex_sms(pl));
  }
  cJSON_AddBoolToObject(a, "overlap", pl->ep_overlap);
  cJSON_AddNumberToObject(a, "exposed_s", r6(fmax(0.0, p->breakdown_s.ep_a2a - p->comm.ep_sm_s)));
  cJSON_AddNumberToObject(a, "hidden_s", r6(p->comm.ep_hidden_s));
  cJSON_AddNumberToObject(a, "sm_cost_s", r6(p->comm.ep_sm_s));
  /* GPU-hours per 1e12 tokens, the unit of the DeepSeek-V3 report's 180 K (arXiv 2412.19437 section 1) */
  if (p->tokens_per_s > 0) cJSON_AddNumberToObject(a, "gpu_hours_per_1e12_tokens", r6(1e12 / p->tokens_per_s * sc->gpus / 3600.0));
}

cJSON *pf_report_prediction_json(const pf_scenario *sc, const pf_prediction *p) {
  cJSON *j = scenario_json(sc);
  const pf_pred_interval *iv = &p->interval;
  bool with = iv->n_time > 0;
  ranged(j, "iteration_time_s", p->iteration_time_s, p->iteration_time_s * iv->time_lo,
         p->iteration_time_s * iv->time_hi, with);
  ranged(j, "tokens_per_s", p->tokens_per_s, over(p->tokens_per_s, iv->time_hi), over(p->tokens_per_s, iv->time_lo),
         with);
  ranged(j, "samples_per_s", p->samples_per_s, over(p->samples_per_s, iv->time_hi),
         over(p->samples_per_s, iv->time_lo), with);
  ranged(j, "tflops_per_gpu", p->tflops_per_gpu, over(p->tflops_per_gpu, iv->time_hi),
         over(p->tflops_per_gpu, iv->time_lo), with);
  if (with) interval_json(j, iv);
  if (sc->flops_conv == PF_FLOPS_CAUSAL) cJSON_AddStringToObject(j, "flops_convention", "causal");
  cJSON_AddNumberToObject(j, "mfu", r6(p->mfu));
  cJSON_AddNumberToObject(j, "hw_tflops_per_gpu", r6(p->hw_tflops_per_gpu));
  cJSON_AddNumberToObject(j, "eval_iteration_s", r6(p->eval_iteration_s));
  pf_breakdown_json(j, &p->breakdown_s, PF_BREAKDOWN_N, r6);
  if (pf_workload_is_moe(&sc->workload)) moe_json(j, sc, p);
  const pf_compute_split *xs = &p->compute_split_s;
  cJSON *x = cJSON_AddObjectToObject(j, "compute_split_s");
  cJSON_AddNumberToObject(x, "compute_bound", r6(xs->compute_bound));
  cJSON_AddNumberToObject(x, "memory_bound", r6(xs->memory_bound));
  cJSON_AddNumberToObject(x, "launch", r6(xs->launch));
  cJSON_AddNumberToObject(x, "host_bound", r6(xs->host_bound));
  cJSON_AddNumberToObject(x, "host_op_s", r6(xs->host_op_s * 1e6) / 1e6);
  cJSON_AddNumberToObject(x, "operators", r6(xs->ops));
  cJSON_AddNumberToObject(x, "host_python", r6(xs->host_python));
  char gm[PF_RECOMPUTE_MODS_MAX];
  if (sc->graph_modules) /* Megatron's partial CUDA graphs (compute/graphs.c) */
    cJSON_AddStringToObject(x, "cuda_graph_modules", pf_graph_modules_name(sc->graph_modules, gm, sizeof gm));
  if (xs->fp8_math + xs->fp8_scaling > 0) { /* fp8 only: what of the busy time runs in FP8 (compute/fp8.c) */
    cJSON_AddNumberToObject(x, "fp8_math", r6(xs->fp8_math));
    cJSON_AddNumberToObject(x, "fp8_scaling", r6(xs->fp8_scaling));
  }
  /* communication per GPU and iteration (comm.h, predict.h pf_comm_summary) */
  const pf_comm_summary *cs = &p->comm;
  cJSON *c = cJSON_AddObjectToObject(j, "communication");
  cJSON_AddNumberToObject(c, "exposed_s", r6(cs->exposed_s));
  cJSON_AddNumberToObject(c, "hidden_s", r6(cs->hidden_s));
  cJSON_AddNumberToObject(c, "tp_hidden_s", r6(cs->tp_hidden_s));
  cJSON_AddNumberToObject(c, "dp_hidden_s", r6(cs->dp_hidden_s));
  cJSON_AddNumberToObject(c, "interference_s", r6(cs->interference_s));
  cJSON_AddNumberToObject(c, "tp_kernel_s", r6(cs->tp_s));
  cJSON_AddNumberToObject(c, "pp_kernel_s", r6(cs->pp_s));
  cJSON_AddNumberToObject(c, "dp_kernel_s", r6(cs->dp_s));
  cJSON_AddNumberToObject(c, "intra_node_s", r6(cs->intra_s));
  cJSON_AddNumberToObject(c, "inter_node_s", r6(cs->inter_s));
  cJSON_AddNumberToObject(c, "fabric_bytes", r6(cs->fabric_bytes));
  cJSON_AddNumberToObject(c, "nic_bytes", r6(cs->nic_bytes));
  cJSON_AddStringToObject(c, "tp_algorithm", cs->tp_algorithm);
  cJSON_AddStringToObject(c, "dp_protocol", cs->dp_protocol);
  cJSON_AddNumberToObject(c, "dp_busbw_GBps", r6(cs->dp_busbw_Bps / 1e9));
  cJSON_AddStringToObject(c, "placement", cs->placement);
  double need = pf_input_need_Bps(sc, p->iteration_time_s - p->breakdown_s.input);
  if (need > 0) { /* the input the step consumes (input_line) */
    cJSON *in = cJSON_AddObjectToObject(j, "input");
    cJSON_AddNumberToObject(in, "sample_bytes", r6(pf_sample_bytes(sc)));
    cJSON_AddNumberToObject(in, "needed_Bps_per_node", r6(need));
    cJSON_AddBoolToObject(in, "priced", pf_input_priced(sc));
    cJSON_AddNumberToObject(in, "pipeline_s", r6(pf_input_time(sc)));
    cJSON_AddNumberToObject(in, "wait_s", r6(p->breakdown_s.input));
  }
  memory_json(j, &p->memory, &sc->plan);
  cJSON_AddBoolToObject(j, "fits", p->fits);
  cJSON *e = cJSON_AddObjectToObject(j, "energy");
  cJSON_AddNumberToObject(e, "gpu_J", r6(p->energy.gpu_J));
  cJSON_AddNumberToObject(e, "node_J", r6(p->energy.node_J));
  cJSON_AddNumberToObject(e, "network_J", r6(p->energy.network_J));
  cJSON_AddNumberToObject(e, "facility_J", r6(p->energy.facility_J));
  cJSON_AddNumberToObject(e, "avg_power_per_node_W", r6(p->energy.avg_power_per_node_W));
  cJSON_AddNumberToObject(e, "avg_power_per_gpu_W", r6(p->energy.avg_power_per_gpu_W));
  cJSON_AddNumberToObject(e, "per_iteration_J", r6(p->energy.per_iteration_J));
  energy_json(e, sc, p);
  cJSON *eng = cJSON_AddObjectToObject(j, "engine");
  cJSON_AddStringToObject(eng, "pipeline", p->engine);
  cJSON_AddNumberToObject(eng, "pipeline_s", r6(p->pipeline_s));
  cJSON_AddNumberToObject(eng, "des_events", p->des_events);
  cJSON_AddStringToObject(eng, "dp_algorithm", p->dp_algorithm);
  cJSON_AddNumberToObject(eng, "dp_comm_s", r6(p->dp_comm_s));
  cJSON_AddNumberToObject(eng, "seed", (double)sc->seed);
  if (sc->calibration[0]) cJSON_AddStringToObject(j, "calibration", sc->calibration);
  cJSON *w = cJSON_AddArrayToObject(j, "warnings");
  for (int i = 0; i < p->nwarnings; i++) cJSON_AddItemToArray(w, cJSON_CreateString(p->warnings[i]));
  return j;
}

static void human_time(double s, char *buf, size_t n) {
  if (s >= 1) snprintf(buf, n, "%.3f s", s);
  else if (s >= 1e-3) snprintf(buf, n, "%.2f ms", s * 1e3);
  else snprintf(buf, n, "%.1f us", s * 1e6);
}

/* A mixture of experts in the table: its counts and the MoE kernels within compute. */
static void moe_table(FILE *f, const pf_scenario *sc, const pf_prediction *p) {
  const pf_moe_split *m = &p->compute_split_s.moe;
  char t[6][32];
  double v[6] = {m->experts, m->router, m->permute, m->unpermute, m->shared, m->host_sync};
  for (int i = 0; i < 6; i++) human_time(v[i], t[i], sizeof t[i]);
  fprintf(f, "moe         %.4g parameters, %.4g active (MFU counts the active experts' FLOPs); within compute: "
          "experts %s, router %s, permute %s, unpermute %s, shared %s, host sync %s\n",
          pf_workload_params(&sc->workload, sc->plan.tp), pf_workload_active_params(&sc->workload, sc->plan.tp), t[0],
          t[1], t[2], t[3], t[4], t[5]);
  if (pf_plan_ep(&sc->plan) < 2) return;
  char e[3][32];
  double u[3] = {fmax(0.0, p->breakdown_s.ep_a2a - p->comm.ep_sm_s), p->comm.ep_hidden_s, p->comm.ep_sm_s};
  for (int i = 0; i < 3; i++) human_time(u[i], e[i], sizeof e[i]);
  char lib[48] = "";
  if (sc->plan.dispatcher == PF_MOE_DISPATCH_FLEX)
    snprintf(lib, sizeof lib, " (%s, %d SMs)", pf_flex_backend_name(sc->plan.flex_backend), pf_plan_flex_sms(&sc->plan));
  fprintf(f, "all-to-all  %s dispatcher%s%s: exposed %s, hidden %s, SM cost %s; %.4g GPU-hours per 1e12 tokens\n",
          pf_moe_dispatcher_name(sc->plan.dispatcher), lib, sc->plan.ep_overlap ? ", overlapped" : "", e[0], e[1], e[2],
          p->tokens_per_s > 0 ? 1e12 / p->tokens_per_s * sc->gpus / 3600.0 : 0.0);
}

static void plan_line(FILE *f, const pf_scenario *sc) {
  const pf_plan *pl = &sc->plan;
  fprintf(f, "%s on %s (%s): %d nodes, %d GPUs\n", sc->workload.id, sc->machine.id, sc->machine.dev.id, sc->nodes,
          sc->gpus);
  char prec[64];
  pf_fp8_recipe r;
  if (sc->precision == PF_FP8 && pf_fp8_recipe_of(sc, &r) == 0) /* the recipe that runs (compute/fp8.c) */
    snprintf(prec, sizeof prec, "fp8 (%s scaling%s)", pf_fp8_recipe_name(r), pl->fp8_attention ? ", fp8 attention" : "");
  else
    snprintf(prec, sizeof prec, "%s", pf_precision_name(sc->precision));
  char zero[96];
  pf_plan_sharding_text(sc, zero + 2, sizeof zero - 2);
  zero[0] = ',', zero[1] = ' ';
  char ep[64] = ""; /* the experts' folded split, shown when it is not EP 1 */
  if (pf_workload_is_moe(&sc->workload) && (pf_plan_ep(pl) > 1 || pf_plan_etp(pl) != pl->tp))
    snprintf(ep, sizeof ep, " (experts EP %d x ETP %d x EDP %d)", pf_plan_ep(pl), pf_plan_etp(pl), pf_plan_edp(pl));
  char rec[PF_RECOMPUTE_MODS_MAX + 32], mods[PF_RECOMPUTE_MODS_MAX]; /* selective's modules when given (moeplan.c) */
  snprintf(rec, sizeof rec, "%s", pf_recompute_name(pl->recompute));
  if (pl->recompute == PF_RECOMPUTE_SELECTIVE && pl->recompute_modules)
    snprintf(rec, sizeof rec, "selective (%s)", pf_recompute_modules_name(pl->recompute_modules, mods, sizeof mods));
  if (pl->recompute == PF_RECOMPUTE_FULL && pl->recompute_layers > 0)
    snprintf(rec, sizeof rec, "full (block: %d layers a model chunk)", pl->recompute_layers);
  fprintf(f, "plan        TP %d x PP %d x DP %d x CP %d%s, mbs %d, gbs %d, %d microbatches, %s%s%s%s%s%s%s, recompute %s, %s\n",
          pl->tp, pl->pp, pl->dp, pl->cp, ep, pl->mbs, pl->gbs, pl->grad_accum, pf_schedule_name(pl->schedule),
          pl->sp ? ", SP" : "", pl->dist_opt ? (pf_plan_zero(pl) >= 2 ? zero : ", dist-opt") : "",
          pl->overlap_grad_reduce ? ", overlap-grad-reduce" : "", pl->overlap_param_gather ? ", overlap-param-gather" : "",
          pl->flash_attn ? ", flash-attn" : "", pl->tp_comm_overlap ? ", tp-comm-overlap" : "", rec, prec);
  if (pl->pp_split[0]) { /* uneven pipeline stages (job/pplayout.c) */
    int lo = 1 << 30, hi = 0;
    for (int s = 0; s < pl->pp; s++) {
      int n = pf_plan_stage_layers(sc, s);
      lo = n < lo ? n : lo;
      hi = n > hi ? n : hi;
    }
    fprintf(f, "stages      %d to %d layers a stage: %s\n", lo, hi, pl->pp_split);
  }
}

static void memory_line(FILE *f, const pf_memory *m, bool fits) {
  char work[48] = "";
  if (m->working_B > 0) snprintf(work, sizeof work, ", unsharded units %.1f", m->working_B / GiB);
  fprintf(f, "memory/GPU  %.1f of %.1f GiB (weights %.1f, gradients %.1f, optimizer %.1f%s, activations %.1f, "
             "overhead %.1f)%s\n",
          m->total_B / GiB, m->capacity_B / GiB, m->weights_B / GiB, m->gradients_B / GiB, m->optimizer_B / GiB, work,
          m->activations_B / GiB, m->overhead_B / GiB, fits ? "" : "  DOES NOT FIT");
}

/* The input the step consumes (workloads with sample bytes): the rate a node's data pipeline must deliver at the
 * step's pace, and either what the priced pipeline costs or that it is not priced (study/input.c). */
static void input_line(FILE *f, const pf_scenario *sc, const pf_prediction *p) {
  double need = pf_input_need_Bps(sc, p->iteration_time_s - p->breakdown_s.input);
  if (!(need > 0)) return;
  fprintf(f, "input       %.3g MB a sample: %.3g GB/s a node keeps the step fed", pf_sample_bytes(sc) / 1e6, need / 1e9);
  if (pf_input_priced(sc)) {
    char r[32], w[32];
    human_time(pf_input_time(sc), r, sizeof r);
    human_time(p->breakdown_s.input, w, sizeof w);
    fprintf(f, "; the data pipeline takes %s an iteration, %s of it waited\n", r, w);
  } else {
    fprintf(f, "; the data pipeline is not priced (--input-rate, --input-sample-time): a slower one binds the step\n");
  }
}

void pf_report_nofit_table(FILE *f, const pf_scenario *sc, const pf_prediction *p, const char *reason) {
  plan_line(f, sc);
  fprintf(f, "fits        no: %s\n", reason ? reason : "");
  memory_line(f, &p->memory, false);
}

void pf_report_prediction_table(FILE *f, const pf_scenario *sc, const pf_prediction *p) {
  char t[32];
  plan_line(f, sc);
  human_time(p->iteration_time_s, t, sizeof t);
  fprintf(f, "iteration   %s   %.4g tokens/s   %.4g samples/s\n", t, p->tokens_per_s, p->samples_per_s);
  fprintf(f, "throughput  %.1f TFLOP/s/GPU (model%s), MFU %.1f %%\n", p->tflops_per_gpu,
          sc->flops_conv == PF_FLOPS_CAUSAL ? ", causal attention" : "", 100 * p->mfu);
  if (pf_workload_is_moe(&sc->workload)) moe_table(f, sc, p);
  fprintf(f, "breakdown  ");
  for (int i = 0; i < PF_BREAKDOWN_N; i++) {
    double v = pf_breakdown_get(&p->breakdown_s, i);
    /* ep_a2a (MoE at EP > 1), overhead, interference and input only when present */
    if (v <= 0 && (i >= PF_BREAKDOWN_PLAN_N || strcmp(pf_breakdown_name(i), "ep_a2a") == 0)) continue;
    human_time(v, t, sizeof t);
    fprintf(f, "%s %s %s (%.1f %%)", i > 0 ? "," : "", pf_breakdown_name(i), t, 100 * v / p->iteration_time_s);
  }
  fprintf(f, "\n");
  const pf_compute_split *xs = &p->compute_split_s;
  if (xs->compute_bound + xs->memory_bound + xs->launch + xs->host_bound > 0) {
    char a[32], m[32], l[32], h[32];
    human_time(xs->compute_bound, a, sizeof a);
    human_time(xs->memory_bound, m, sizeof m);
    human_time(xs->launch, l, sizeof l);
    human_time(xs->host_bound, h, sizeof h);
    char py[64] = "";
    if (xs->host_python > 0) { /* the framework's own Python per layer (compute/hostqueue.c) */
      char pt[32];
      human_time(xs->host_python, pt, sizeof pt);
      snprintf(py, sizeof py, ", framework Python %s", pt);
    }
    char gm[PF_RECOMPUTE_MODS_MAX], graphs[PF_RECOMPUTE_MODS_MAX + 32] = "";
    if (sc->graph_modules) /* Megatron's partial CUDA graphs (compute/graphs.c) */
      snprintf(graphs, sizeof graphs, "; CUDA graphs: %s", pf_graph_modules_name(sc->graph_modules, gm, sizeof gm));
    fprintf(f, "compute     compute-bound %s, memory-bound %s, launch %s, host-bound %s (%.4g operators at %.3g us%s%s)\n",
            a, m, l, h, xs->ops, xs->host_op_s * 1e6, py, graphs);
  }
  if (xs->fp8_math + xs->fp8_scaling > 0) {
    char a[32], s8[32], n[32];
    human_time(xs->fp8_math, a, sizeof a);
    human_time(xs->fp8_scaling, s8, sizeof s8);
    human_time(xs->compute_bound + xs->memory_bound + xs->launch - xs->fp8_math - xs->fp8_scaling, n, sizeof n);
    fprintf(f, "fp8         in FP8 %s (linear-layer GEMMs), FP8 scaling %s (casts, transposes, amax), not FP8 %s\n", a,
            s8, n);
  }
  const pf_comm_summary *cs = &p->comm;
  if (cs->tp_s + cs->pp_s + cs->dp_s > 0) {
    char e[32], h[32], in[32], x[32];
    human_time(cs->exposed_s, e, sizeof e);
    human_time(cs->hidden_s, h, sizeof h);
    human_time(cs->intra_s, in, sizeof in);
    human_time(cs->inter_s, x, sizeof x);
    fprintf(f, "comm/GPU    exposed %s, hidden %s; kernels %s in the node, %s across nodes; %.3g GB over the fabric, "
               "%.3g GB through the NIC\n", e, h, in, x, cs->fabric_bytes / 1e9, cs->nic_bytes / 1e9);
  }
  input_line(f, sc, p);
  memory_line(f, &p->memory, p->fits);
  const pf_energy *en = &p->energy;
  fprintf(f, "energy      %.4g kJ per iteration (facility), %.0f W per node, %.0f W per GPU\n",
          en->facility_J / 1e3, en->avg_power_per_node_W, en->avg_power_per_gpu_W);
  fprintf(f, "energy/iter GPU %.4g kJ, node %.4g kJ, facility %.4g kJ; %.3g J per sample, %.3g mJ per token; "
             "action %.4g kJ s; cap %.0f W, clock %.3g %%\n",
          en->gpu_J / 1e3, en->node_J / 1e3, en->facility_J / 1e3, en->per_sample_J, 1e3 * en->per_token_J,
          en->action_Js / 1e3, en->cap_W, 100 * en->clock_ratio);
  if (sc->train_iters > 0) {
    double n = sc->train_iters, run_s = n * p->iteration_time_s;
    fprintf(f, "energy/run  %.0f iterations in %.4g h: GPU %.4g kWh, node %.4g kWh, facility %.4g kWh; action %.4g MJ s\n",
            n, run_s / 3600, n * en->gpu_J / 3.6e6, n * en->node_J / 3.6e6, n * en->facility_J / 3.6e6,
            n * en->facility_J * run_s / 1e6);
  }
  for (int i = 0; i < p->nwarnings; i++) fprintf(f, "warning     %s\n", p->warnings[i]);
}

int pf_report_predict(pf_scenario *sc, const char *trace_path, pf_prediction *p) {
  if (!trace_path || !trace_path[0]) return pf_resolve_predict(sc, p);
  memset(p, 0, sizeof *p);
  int rc = pf_job_resolve(sc);
  if (rc < 0) return rc;
  pf_trace t;
  rc = pf_predict_traced(sc, p, &t);
  if (rc == 0) rc = pf_trace_write(sc, &t, trace_path);
  pf_trace_free(&t);
  return rc;
}
