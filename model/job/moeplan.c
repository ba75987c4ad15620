/* moeplan.c - how a mixture of experts is run (plan.h; docs/moe.md): the token dispatcher, the overlap of the
 * EP all-to-alls with compute, the SMs the communication kernels take, the modules selective recomputation
 * reruns, and their checks with Megatron-Core's rules.
 *
 * Sources.  Megatron-Core megatron/core/transformer/moe/README.md: --moe-token-dispatcher-type alltoall|flex,
 * "--moe-token-dispatcher-type=flex and --moe-enable-deepep" for DeepEP (MCore v0.12), "Batch-level overlapping
 * to hide EP-A2A communication (--overlap-moe-expert-parallel-comm --delay-wgrad-compute)" (MCore v0.14),
 * "--recompute-granularity selective --recompute-modules" with moe_act, layernorm, mla_up_proj, core_attn (MCore
 * v0.13).  megatron/core/transformer/transformer_config.py: moe_deepep_num_sms = 20 ("Number of SMs to use for
 * DeepEP"), recompute_modules default ["core_attn"].  DeepSeek-V3 (arXiv 2412.19437 section 3.2.2) partitions 20
 * of the H800's 132 SMs into 10 communication channels (warp specialization), enough for IB and NVLink.
 */
#include "job.h"

#include "core/core.h"

#include <stdio.h>
#include <string.h>

/* Megatron's module names, bit i of PF_RECOMPUTE_MOD_* for the i-th */
static const char *const modules[] = {"core_attn", "layernorm", "mla_up_proj", "moe_act", "mlp", "moe"};
#define NMOD ((int)(sizeof modules / sizeof modules[0]))
_Static_assert(PF_RECOMPUTE_MOD_MOE == 1u << (NMOD - 1), "modules[] in the order of the PF_RECOMPUTE_MOD_* bits");

int pf_recompute_modules_parse(const char *s, unsigned *out) {
  return pf_name_bits_parse("--recompute-modules", modules, NMOD, "core_attn, layernorm, mla_up_proj, moe_act, mlp, "
                            "moe (Megatron-Core's names)", "layernorm,mla_up_proj", s, out);
}

const char *pf_recompute_modules_name(unsigned m, char *buf, size_t len) {
  return pf_name_bits_join(m, modules, NMOD, buf, len);
}

unsigned pf_plan_recompute_modules(const pf_plan *p) {
  if (p->recompute != PF_RECOMPUTE_SELECTIVE) return 0;
  return p->recompute_modules ? p->recompute_modules : PF_RECOMPUTE_MOD_CORE_ATTN;
}

static const char *dispatcher_names[] = {[PF_MOE_DISPATCH_ALLTOALL] = "alltoall", [PF_MOE_DISPATCH_FLEX] = "flex"};

const char *pf_moe_dispatcher_name(int d) { return dispatcher_names[d == PF_MOE_DISPATCH_FLEX]; }

int pf_moe_dispatcher_parse(const char *s, int *out) {
  int i = pf_name_index(s, dispatcher_names, 2, false);
  if (i >= 0) { *out = i; return 0; }
  return pf_error_set(PF_EINVAL, "--moe-token-dispatcher-type \"%s\": valid: alltoall (NCCL all-to-all), flex "
                      "(DeepEP's kernels, Megatron's --moe-enable-deepep)", s);
}

int pf_plan_deepep_sms(const pf_plan *p) { return p->deepep_sms > 0 ? p->deepep_sms : PF_DEEPEP_SMS_DEFAULT; }

int pf_plan_flex_sms(const pf_plan *p) {
  if (p->flex_backend != PF_FLEX_HYBRIDEP) return pf_plan_deepep_sms(p);
  return p->hybridep_sms > 0 ? p->hybridep_sms : PF_HYBRIDEP_SMS_DEFAULT;
}

static const char *backend_names[] = {[PF_FLEX_DEEPEP] = "deepep", [PF_FLEX_HYBRIDEP] = "hybridep"};

const char *pf_flex_backend_name(int b) { return backend_names[b == PF_FLEX_HYBRIDEP]; }

int pf_flex_backend_parse(const char *s, int *out) {
  int i = pf_name_index(s, backend_names, 2, false);
  if (i >= 0) { *out = i; return 0; }
  return pf_error_set(PF_EINVAL, "--moe-flex-dispatcher-backend \"%s\": valid: deepep (DeepEP's normal kernels), "
                      "hybridep (NVIDIA's HybridEP)", s);
}

int pf_plan_check_moe(const pf_scenario *sc) {
  const pf_plan *p = &sc->plan;
  const pf_workload *w = &sc->workload;
  bool moe = pf_workload_is_moe(w);
  int units = sc->machine.dev.units;
  /* Megatron-LM arguments.py: the EP overlap asserts expert_model_parallel_size > 1 */
  if (p->ep_overlap && (!moe || pf_plan_ep(p) < 2))
    return pf_error_set(PF_EINVAL, "--overlap-moe-expert-parallel-comm needs a MoE model and --ep > 1 (it hides the "
                        "EP all-to-alls)");
  /* Megatron-Core's schedule (combined 1F1B) asserts, megatron/core/transformer/transformer_config.py
   * __post_init__ at NVIDIA/Megatron-LM d98e8a64: "If enabling EP A2A overlap,
   * virtual_pipeline_model_parallel_size must be specified when pipeline_model_parallel_size > 1" and
   * "disable full recomputation when enabling overlap_moe_expert_parallel_comm", "disable moe in recompute_modules
   * when enabling overlap_moe_expert_parallel_comm" and "MTP supports at most one layer when enabling
   * overlap_moe_expert_parallel_comm".  DeepSeek-V3's DualPipe
   * (--schedule dualpipe) pairs a forward and a backward chunk without virtual stages: not Megatron's check. */
  bool megatron_overlap = p->ep_overlap && p->schedule != PF_SCHED_DUALPIPE;
  if (megatron_overlap && p->pp > 1 && p->schedule != PF_SCHED_INTERLEAVED)
    return pf_error_set(PF_EINVAL, "--overlap-moe-expert-parallel-comm at --pp %d needs virtual pipeline stages "
                        "(--schedule interleaved:V), as Megatron-Core asserts; or --schedule dualpipe, DeepSeek-V3's "
                        "schedule, which pairs forward and backward chunks without them", p->pp);
  if (megatron_overlap && p->recompute == PF_RECOMPUTE_FULL)
    return pf_error_set(PF_EINVAL, "--overlap-moe-expert-parallel-comm with --recompute full: Megatron-Core asserts "
                        "\"disable full recomputation when enabling overlap_moe_expert_parallel_comm\"; use "
                        "--recompute selective");
  if (megatron_overlap && (p->recompute_modules & PF_RECOMPUTE_MOD_MOE))
    return pf_error_set(PF_EINVAL, "--overlap-moe-expert-parallel-comm with --recompute-modules moe: Megatron-Core "
                        "asserts \"disable moe in recompute_modules when enabling overlap_moe_expert_parallel_comm\"; "
                        "recompute moe_act instead");
  if (megatron_overlap && w->mtp_layers > 1)
    return pf_error_set(PF_EINVAL, "--overlap-moe-expert-parallel-comm with --mtp-layers %d: Megatron-Core asserts "
                        "\"MTP supports at most one layer when enabling overlap_moe_expert_parallel_comm\"",
                        w->mtp_layers);
  if (p->dispatcher == PF_MOE_DISPATCH_FLEX && !moe)
    return pf_error_set(PF_EINVAL, "--moe-token-dispatcher-type flex: model %s has no experts", w->id);
  if (p->deepep_sms > 0 && units > 0 && p->deepep_sms >= units)
    return pf_error_set(PF_EINVAL, "--moe-deepep-num-sms %d: the device (%s) has %d SMs; leave some for compute",
                        p->deepep_sms, sc->machine.dev.id, units);
  if (p->hybridep_sms > 0 && units > 0 && p->hybridep_sms >= units)
    return pf_error_set(PF_EINVAL, "--moe-hybridep-num-sms %d: the device (%s) has %d SMs; leave some for compute",
                        p->hybridep_sms, sc->machine.dev.id, units);
  if (p->flex_backend == PF_FLEX_HYBRIDEP && p->dispatcher != PF_MOE_DISPATCH_FLEX)
    return pf_error_set(PF_EINVAL, "--moe-flex-dispatcher-backend hybridep applies to --moe-token-dispatcher-type flex");
  if (p->recompute_modules && p->recompute != PF_RECOMPUTE_SELECTIVE)
    return pf_error_set(PF_EINVAL, "--recompute-modules applies with --recompute selective (Megatron's "
                        "--recompute-granularity selective)");
  if ((p->recompute_modules & PF_RECOMPUTE_MOD_MLA_UP_PROJ) && !pf_workload_is_mla(w))
    return pf_error_set(PF_EINVAL, "--recompute-modules mla_up_proj: model %s has no Multi-head Latent Attention",
                        w->id);
  if ((p->recompute_modules & (PF_RECOMPUTE_MOD_MOE_ACT | PF_RECOMPUTE_MOD_MOE)) && !moe)
    return pf_error_set(PF_EINVAL, "--recompute-modules %s: model %s has no experts",
                        p->recompute_modules & PF_RECOMPUTE_MOD_MOE ? "moe" : "moe_act", w->id);
  /* Megatron-Core's "mlp" checkpoints dense MLPs only (transformer_layer.py: `if not self.is_moe_layer`) */
  if ((p->recompute_modules & PF_RECOMPUTE_MOD_MLP) && w->kind == PF_WL_TRANSFORMER &&
      pf_workload_moe_layers_in(w, 0, w->layers) == w->layers)
    return pf_error_set(PF_EINVAL, "--recompute-modules mlp: model %s has no dense MLP layer (every layer is a MoE "
                        "layer: recompute them with moe)", w->id);
  if (p->fp8_act_cache && sc->precision != PF_FP8)
    return pf_error_set(PF_EINVAL, "--fp8-activation-cache needs --precision fp8");
  /* a rank receives at most min(topk, E / EP) copies of a token, against topk / EP balanced */
  if (moe && w->rank_imbalance > 1 && pf_plan_ep(p) > 1) { /* at EP 1 there is no busiest rank */
    int ep = pf_plan_ep(p), el = w->experts / ep, most = el < w->topk ? el : w->topk;
    double top = (double)most * ep / w->topk;
    if (w->rank_imbalance > top + 1e-9)
      return pf_error_set(PF_EINVAL, "--moe-rank-imbalance %g: at --ep %d a rank holds %d of the %d experts and "
                          "takes at most %d of a token's %d copies, %g times its balanced share", w->rank_imbalance,
                          ep, el, w->experts, most, w->topk, top);
  }
  return 0;
}
