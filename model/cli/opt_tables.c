/* opt_tables.c - the option tables several commands share (options.h): the
 * scenario options of predict, sweep, tune, compare, plan and validate (each
 * with its type, range and place in pf_scenario, which pf_opts_scenario fills
 * in scenario_opts.c), the options of `preflight collective`, and the output
 * options of every command; with the readers of the scenario options whose
 * syntax is their own.  Each command's own options are in its cmd_*.c.
 */
#include "options.h"

#include "comm/comm.h"
#include "core/core.h"
#include "job/job.h"
#include "machine/machine.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- readers of the scenario options whose syntax is their own ---- */

/* A parse function of the job, machine or comm module (it names the option in its message) as a table callback. */
#define PF_PARSE_CALLBACK(cb, fn, T)                                                                   \
  static int cb(const pf_opt *o, const char *text, void *dest, char *why, size_t len) {                \
    (void)o, (void)why, (void)len;                                                                     \
    T x;                                                                                               \
    int rc = fn(text, &x);                                                                             \
    if (rc == 0 && dest) *(T *)dest = x;                                                               \
    return rc;                                                                                         \
  }
PF_PARSE_CALLBACK(parse_precision, pf_precision_parse, pf_precision)
PF_PARSE_CALLBACK(parse_recompute, pf_recompute_parse, pf_recompute)
PF_PARSE_CALLBACK(parse_coll_algo, pf_coll_algo_parse, pf_coll_algo)
PF_PARSE_CALLBACK(parse_coll_proto, pf_coll_proto_parse, pf_coll_proto)
PF_PARSE_CALLBACK(parse_placement, pf_placement_parse, pf_placement)
PF_PARSE_CALLBACK(parse_rank_order, pf_rank_order_parse, pf_rank_order)
PF_PARSE_CALLBACK(parse_host_mode, pf_host_mode_parse, pf_host_mode)
PF_PARSE_CALLBACK(parse_framework, pf_framework_parse, pf_framework)
PF_PARSE_CALLBACK(parse_conv_layout, pf_conv_layout_parse, pf_conv_layout)
PF_PARSE_CALLBACK(parse_recompute_modules, pf_recompute_modules_parse, unsigned)
PF_PARSE_CALLBACK(parse_graph_modules, pf_graph_modules_parse, unsigned)
PF_PARSE_CALLBACK(parse_dispatcher, pf_moe_dispatcher_parse, int)
PF_PARSE_CALLBACK(parse_flex_backend, pf_flex_backend_parse, int)

/* --schedule 1f1b|interleaved:V|gpipe|dualpipe: the schedule and V of the plan (dest: the pf_plan). */
static int parse_schedule(const pf_opt *o, const char *text, void *dest, char *why, size_t len) {
  (void)o, (void)why, (void)len;
  pf_plan p;
  int rc = pf_schedule_parse(text, &p.schedule, &p.vstages);
  if (rc == 0 && dest) {
    ((pf_plan *)dest)->schedule = p.schedule;
    ((pf_plan *)dest)->vstages = p.vstages;
  }
  return rc;
}

/* --pipeline-model-parallel-layout: Megatron's layout string into the plan (checked by pf_plan_check, which knows
 * the layers). */
static int copy_layout(const pf_opt *o, const char *text, void *dest, char *why, size_t len) {
  (void)o;
  if (!text[0] || strlen(text) >= PF_PP_LAYOUT_MAX) {
    snprintf(why, len, "a layout string such as \"Et*3|(t*4|)*14,t*2L\", at most %d characters", PF_PP_LAYOUT_MAX - 1);
    return PF_EINVAL;
  }
  if (dest) snprintf(dest, PF_PP_LAYOUT_MAX, "%s", text);
  return 0;
}

/* --zero 0|1|2|3 (dest: the pf_plan): 0 and 1 are the distributed optimizer off and on (--no-dist-opt,
 * --dist-opt), 2 and 3 shard gradients and parameters too (job/shard.c). */
static int parse_zero(const pf_opt *o, const char *text, void *dest, char *why, size_t len) {
  (void)o;
  char *end;
  long z = strtol(text, &end, 10);
  if (end == text || *end || z < 0 || z > 3) {
    snprintf(why, len, "valid: 0 (replicated), 1 (optimizer state sharded, --dist-opt), 2 (gradients too), "
             "3 (parameters too: FSDP)");
    return PF_EINVAL;
  }
  if (dest) {
    pf_plan *p = dest;
    p->zero = z >= 2 ? (int)z : 0;
    p->dist_opt = z >= 1;
  }
  return 0;
}

/* A file name into a char[PF_PATH_MAX] of the scenario (--calibration). */
_Static_assert(sizeof ((pf_scenario *)0)->calibration == PF_PATH_MAX, "--calibration's destination");
static int copy_path(const pf_opt *o, const char *text, void *dest, char *why, size_t len) {
  (void)o, (void)why, (void)len;
  if (dest) snprintf(dest, PF_PATH_MAX, "%s", text);
  return 0;
}

/* --power-cap: "500 W", "0.5 kW" or a plain number of watts, 1 W to 5 kW. */
static int parse_power_cap(const pf_opt *o, const char *text, void *dest, char *why, size_t len) {
  (void)o;
  char *end;
  double cap = strtod(text, &end);
  if ((end == text || *end) && pf_units_parse(text, PF_UNIT_POWER, &cap) < 0) {
    snprintf(why, len, "a power such as \"500 W\" or 500 (watts)");
    return PF_EINVAL;
  }
  if (!(cap >= 1 && cap <= 5000)) {
    snprintf(why, len, "between 1 W and 5 kW per device");
    return PF_EINVAL;
  }
  if (dest) *(double *)dest = cap;
  return 0;
}

_Static_assert(sizeof(pf_fp8_recipe) == sizeof(int), "--fp8-recipe is a PF_OPT_CHOICE (int)");
static const pf_opt_choice fp8_recipes[] = {{"auto", PF_FP8_AUTO, false},
                                            {"delayed", PF_FP8_DELAYED, false},
                                            {"current", PF_FP8_CURRENT, false},
                                            {"mxfp8", PF_FP8_MXFP8, false},
                                            {"blockwise", PF_FP8_BLOCKWISE, false},
                                            {NULL, 0, false}};

_Static_assert(sizeof(pf_flops_conv) == sizeof(int), "--flops-convention is a PF_OPT_CHOICE (int)");
static const pf_opt_choice flops_convs[] = {{"full", PF_FLOPS_FULL, false}, {"causal", PF_FLOPS_CAUSAL, false},
                                            {NULL, 0, false}};

_Static_assert(sizeof(pf_engine) == sizeof(int), "--engine is a PF_OPT_CHOICE (int)");
static const pf_opt_choice shard_groups[] = {{"all", PF_SHARD_ALL, false}, {"node", PF_SHARD_NODE, false},
                                             {NULL, 0, false}};
static const pf_opt_choice fsdp_impls[] = {{"auto", PF_FSDP_AUTO, false}, {"megatron", PF_FSDP_MEGATRON, false},
                                           {"torch", PF_FSDP_TORCH, false}, {"deepspeed", PF_FSDP_DEEPSPEED, false},
                                           {NULL, 0, false}};
static const pf_opt_choice engines[] = {{"simgrid", PF_ENGINE_DES, false},
                                        {"des", PF_ENGINE_DES, true},
                                        {"full", PF_ENGINE_FULL, false},
                                        {"analytic", PF_ENGINE_ANALYTIC, false},
                                        {NULL, 0, false}};

/* ---- the tables ---- */

#define SC(member) PF_AT(pf_scenario, member)

/* Ranges: far beyond any model trained so far, and small enough that their
 * products stay exact (plan.c and workload.c check the products).  Upper
 * limits of user-given sizes: a thousand times the largest models and runs
 * published (GPT-4 class ~1.8e12 parameters, ~1e26 FLOPs of training):
 * 1e15 parameters, 1e21 FLOPs per sample, 1e15 bytes.  machine, model and
 * swiglu are read by pf_opts_scenario itself (scenario_opts.c). */
const pf_opt pf_scenario_opts[] = {
    {"machine", "ID|PATH.cfg", "machine id (see `preflight machines`) or a machine file", .type = PF_OPT_TEXT},
    {"model", "ID|PATH.cfg", "built-in workload (see `preflight models`) or a layer-list model file (docs/scenario-format.md)",
     .type = PF_OPT_TEXT},
    {"layers", "N", "custom transformer: number of layers",
     .type = PF_OPT_INT, .at = SC(workload.layers), .lo = 1, .hi = 100000, .group = PF_SCG_SHAPE},
    {"hidden", "N", "custom transformer: hidden size",
     .type = PF_OPT_INT, .at = SC(workload.hidden), .lo = 1, .hi = 1 << 20, .group = PF_SCG_SHAPE},
    {"heads", "N", "custom transformer: attention heads",
     .type = PF_OPT_INT, .at = SC(workload.heads), .lo = 1, .hi = 1 << 16, .group = PF_SCG_SHAPE},
    {"ffn-hidden", "N", "custom transformer: FFN hidden size (default 4 x hidden, or SwiGLU rule)",
     .type = PF_OPT_INT, .at = SC(workload.ffn_hidden), .lo = 1, .hi = 1 << 22, .group = PF_SCG_SHAPE},
    {"kv-heads", "N", "custom transformer: key/value heads (GQA; default = heads)",
     .type = PF_OPT_INT, .at = SC(workload.kv_heads), .lo = 1, .hi = 1 << 16, .group = PF_SCG_SHAPE},
    {"seq", "N", "sequence length (overrides the model's)",
     .type = PF_OPT_INT, .at = SC(workload.seq), .lo = 1, .hi = 1 << 24, .group = PF_SCG_SHAPE},
    {"vocab", "N", "vocabulary size",
     .type = PF_OPT_INT, .at = SC(workload.vocab), .lo = 1, .hi = 1 << 24, .group = PF_SCG_SHAPE},
    {"swiglu", NULL, "custom transformer: gated MLP (Llama style)", .type = PF_OPT_FLAG},
    {"head-dim", "N", "attention head width (Megatron's --kv-channels; default hidden / heads)",
     .type = PF_OPT_INT, .at = SC(workload.head_dim), .lo = 1, .hi = 1 << 16, .group = PF_SCG_SHAPE},
    {"window-size", "W", "sliding-window attention: a query sees the W keys before it (Megatron's --window-size W,0; "
     "0: the whole prefix)", .type = PF_OPT_INT, .at = SC(workload.window), .lo = 0, .hi = 1 << 24,
     .group = PF_SCG_SHAPE},
    {"window-attn-skip-freq", "N", "sliding-window attention: every N-th layer attends the whole prefix (Megatron's; "
     "GPT-OSS 2; 0: every layer windowed)", .type = PF_OPT_INT, .at = SC(workload.window_full_every), .lo = 0,
     .hi = 1 << 16, .group = PF_SCG_SHAPE},
    {"experts", "N", "mixture of experts: routed experts per MoE layer (0: dense)",
     .type = PF_OPT_INT, .at = SC(workload.experts), .lo = 0, .hi = 1 << 16, .group = PF_SCG_SHAPE},
    {"moe-topk", "K", "mixture of experts: routed experts each token goes to",
     .type = PF_OPT_INT, .at = SC(workload.topk), .lo = 1, .hi = 1 << 16, .group = PF_SCG_SHAPE},
    {"moe-ffn-hidden", "N", "mixture of experts: FFN width of one routed expert (default --ffn-hidden)",
     .type = PF_OPT_INT, .at = SC(workload.moe_ffn_hidden), .lo = 1, .hi = 1 << 22, .group = PF_SCG_SHAPE},
    {"moe-shared-ffn-hidden", "N", "mixture of experts: FFN width of the shared experts together (0: none)",
     .type = PF_OPT_INT, .at = SC(workload.shared_ffn_hidden), .lo = 0, .hi = 1 << 22, .group = PF_SCG_SHAPE},
    {"moe-first-dense", "K", "mixture of experts: the first K layers are dense",
     .type = PF_OPT_INT, .at = SC(workload.first_dense), .lo = 0, .hi = 100000, .group = PF_SCG_SHAPE},
    {"moe-every", "N", "mixture of experts: every N-th layer is a MoE layer (default 1: all)",
     .type = PF_OPT_INT, .at = SC(workload.moe_every), .lo = 1, .hi = 100000, .group = PF_SCG_SHAPE},
    {"moe-capacity-factor", "C", "mixture of experts: tokens an expert takes over its balanced share, padded to it; "
     "the rest are dropped (default 0: dropless)",
     .type = PF_OPT_NUM, .at = SC(workload.capacity_factor), .lo = 0, .hi = 1e6, .group = PF_SCG_SHAPE},
    {"moe-imbalance", "R", "mixture of experts: tokens of the busiest expert over the balanced share (default 1: "
     "balanced, as published benchmarks run)",
     .type = PF_OPT_NUM, .at = SC(workload.expert_imbalance), .lo = 1, .hi = 1e6, .group = PF_SCG_SHAPE},
    {"moe-rank-imbalance", "L", "mixture of experts, dropless: tokens of the busiest expert-parallel rank over the "
     "balanced share, as a run measured it (default 1: balanced; in place of --moe-imbalance)",
     .type = PF_OPT_NUM, .at = SC(workload.rank_imbalance), .lo = 1, .hi = 1e6, .group = PF_SCG_SHAPE},
    {"moe-router-num-groups", "G", "mixture of experts: expert groups of grouped routing (Megatron's; equal to the "
     "EP group's nodes it is node-limited routing, DeepSeek-V3's 8; 0: none)",
     .type = PF_OPT_INT, .at = SC(workload.router_groups), .lo = 0, .hi = 1 << 16, .group = PF_SCG_SHAPE},
    {"moe-router-group-topk", "K", "mixture of experts: groups a token's experts are chosen from (DeepSeek-V3: 4 nodes)",
     .type = PF_OPT_INT, .at = SC(workload.router_group_topk), .lo = 1, .hi = 1 << 16, .group = PF_SCG_SHAPE},
    {"mtp-layers", "N", "multi-token prediction modules trained after the model (DeepSeek-V3's 1; Megatron "
     "--mtp-num-layers; 0: none, as a run without that flag)",
     .type = PF_OPT_INT, .at = SC(workload.mtp_layers), .lo = 0, .hi = 64, .group = PF_SCG_SHAPE},
    {"params", "N", "custom model: parameter count (e.g. 25.6e6)",
     .type = PF_OPT_NUM, .at = SC(workload.params), .lo = 0, .hi = 1e15, .flags = PF_OPT_LO_OPEN,
     .group = PF_SCG_CUSTOM},
    {"flops-per-sample", "F", "custom model: forward+backward FLOPs per sample",
     .type = PF_OPT_NUM, .at = SC(workload.flops_per_sample), .lo = 0, .hi = 1e21, .flags = PF_OPT_LO_OPEN,
     .group = PF_SCG_CUSTOM},
    {"act-bytes-per-sample", "B", "custom model: activation bytes per sample (optional)",
     .type = PF_OPT_NUM, .at = SC(workload.act_bytes_per_sample), .lo = 0, .hi = 1e15, .group = PF_SCG_CUSTOM},
    {"nodes", "N", "number of nodes",
     .type = PF_OPT_INT, .at = SC(nodes), .lo = 1, .hi = 1 << 20, .group = PF_SCG_PLAN},
    {"gpus", "N", "number of GPUs (logical devices: GCDs on MI250X)",
     .type = PF_OPT_INT, .at = SC(gpus), .lo = 1, .hi = 1 << 26, .group = PF_SCG_PLAN},
    {"tp", "N", "tensor-parallel size (Megatron --tensor-model-parallel-size)",
     .type = PF_OPT_INT, .at = SC(plan.tp), .lo = 1, .hi = 1 << 16, .group = PF_SCG_PLAN},
    {"pp", "N", "pipeline-parallel size",
     .type = PF_OPT_INT, .at = SC(plan.pp), .lo = 1, .hi = 1 << 16, .group = PF_SCG_PLAN},
    {"dp", "N", "data-parallel size (derived when absent)",
     .type = PF_OPT_INT, .at = SC(plan.dp), .lo = 1, .hi = 1 << 26, .group = PF_SCG_PLAN},
    {"cp", "N", "context-parallel size",
     .type = PF_OPT_INT, .at = SC(plan.cp), .lo = 1, .hi = 1 << 16, .group = PF_SCG_PLAN},
    {"ep", "N", "expert-parallel size of MoE layers, folded over TP x CP x DP (Megatron --expert-model-parallel-size)",
     .type = PF_OPT_INT, .at = SC(plan.ep), .lo = 1, .hi = 1 << 16, .group = PF_SCG_PLAN},
    {"etp", "N", "expert tensor-parallel size (Megatron --expert-tensor-parallel-size; default: as --tp)",
     .type = PF_OPT_INT, .at = SC(plan.etp), .lo = 1, .hi = 1 << 16, .group = PF_SCG_PLAN},
    {"mbs", "N", "micro-batch size",
     .type = PF_OPT_INT, .at = SC(plan.mbs), .lo = 1, .hi = 1 << 20, .group = PF_SCG_PLAN},
    {"gbs", "N", "global batch size",
     .type = PF_OPT_INT, .at = SC(plan.gbs), .lo = 1, .hi = INT_MAX, .group = PF_SCG_PLAN},
    {"grad-accum", "K", "microbatches per iteration (instead of --gbs)",
     .type = PF_OPT_INT, .at = SC(plan.grad_accum), .lo = 1, .hi = INT_MAX, .group = PF_SCG_PLAN},
    {"precision", "P", "fp32|tf32|fp16|bf16|fp8 (default bf16; --precision=help lists)",
     .type = PF_OPT_CALLBACK, .at = SC(precision), .parse = parse_precision, .group = PF_SCG_PLAN},
    {"fp8-recipe", "R",
     "with --precision fp8: auto|delayed|current|mxfp8|blockwise scaling (default auto: mxfp8 on Blackwell, else "
     "delayed)",
     .type = PF_OPT_CHOICE, .at = SC(plan.fp8_recipe), .choices = fp8_recipes, .group = PF_SCG_RUN},
    {"fp8-attention", NULL, "with --precision fp8: run the fused attention in FP8 too (default bf16, as Transformer Engine)",
     .type = PF_OPT_FLAG, .at = SC(plan.fp8_attention), .group = PF_SCG_RUN},
    /* The settings current Megatron-Core / NeMo recipes turn on (job/defaults.c, docs/defaults.md): on by
     * default for a transformer with --framework auto|megatron where the device has them, each with its --no-
     * form; layer lists and other frameworks keep them off unless given. */
    {"sp", NULL, "sequence parallelism (default on where TP > 1 for Megatron transformers)",
     .type = PF_OPT_FLAG, .at = SC(plan.sp), .group = PF_SCG_RUN},
    {"no-sp", NULL, "no sequence parallelism: TP all-reduces, replicated norms and dropout",
     .type = PF_OPT_FLAG, .at = SC(plan.sp), .flags = PF_OPT_NEGATE, .group = PF_SCG_RUN},
    {"dist-opt", NULL, "distributed optimizer (ZeRO-1; default on for Megatron transformers)",
     .type = PF_OPT_FLAG, .at = SC(plan.dist_opt), .group = PF_SCG_RUN},
    {"no-dist-opt", NULL, "optimizer state replicated on every data-parallel rank",
     .type = PF_OPT_FLAG, .at = SC(plan.dist_opt), .flags = PF_OPT_NEGATE, .group = PF_SCG_RUN},
    {"bf16-moments", NULL, "Adam's first and second moments in bf16 (Megatron --use-precision-aware-optimizer "
     "--exp-avg-dtype bf16 --exp-avg-sq-dtype bf16; DeepSeek-V3's optimizer)",
     .type = PF_OPT_FLAG, .at = SC(plan.bf16_moments), .group = PF_SCG_RUN},
    {"grad-reduce-in-bf16", NULL, "gradients accumulated and reduced in bf16, 2 B a parameter instead of fp32's 4 "
     "(Megatron-LM --grad-reduce-in-bf16; Megatron-Bridge grad_reduce_in_fp32 = False; with --precision bf16|fp8)",
     .type = PF_OPT_FLAG, .at = SC(plan.grad_reduce_bf16), .group = PF_SCG_RUN},
    {"zero", "N", "sharding level: 0 replicated, 1 optimizer state (--dist-opt), 2 gradients too (ZeRO-2, FSDP "
     "SHARD_GRAD_OP), 3 parameters too (ZeRO-3, FSDP FULL_SHARD); default 1 for Megatron transformers",
     .type = PF_OPT_CALLBACK, .at = SC(plan), .parse = parse_zero, .group = PF_SCG_RUN},
    {"fsdp-shard-group", "G", "with --zero 2|3: shard over all DP x CP ranks (all) or inside each node, replicated "
     "across nodes (node: FSDP HYBRID_SHARD)",
     .type = PF_OPT_CHOICE, .at = SC(plan.shard_group), .choices = shard_groups, .group = PF_SCG_RUN},
    {"recompute-num-layers", "N", "with --recompute full: only the first N layers of each model chunk are "
     "recomputed, the rest keep their activations (Megatron --recompute-method block --recompute-num-layers N; "
     "default: every layer)",
     .type = PF_OPT_INT, .at = SC(plan.recompute_layers), .lo = 0, .hi = 1 << 16, .group = PF_SCG_RUN},
    {"cpu-offloading-num-layers", "N", "the activations of N layers offloaded to host memory over the host link, "
     "each transfer under the next layer's compute (Megatron --cpu-offloading --cpu-offloading-num-layers N; PP 1, "
     "no recomputation)",
     .type = PF_OPT_INT, .at = SC(plan.cpu_offload_layers), .lo = 0, .hi = 1 << 16, .group = PF_SCG_RUN},
    {"fsdp-prefetch", "N", "with --zero 3: units all-gathered ahead of the one computing (default 1, FSDP's "
     "forward_prefetch / BACKWARD_PRE)",
     .type = PF_OPT_INT, .at = SC(plan.fsdp_prefetch), .lo = 0, .hi = 8, .group = PF_SCG_RUN},
    {"fsdp-impl", "L", "with --zero 2|3: auto|megatron|torch|deepspeed, whose composition rules apply (default auto: "
     "Megatron-FSDP, PyTorch FSDP2 with --framework pytorch)",
     .type = PF_OPT_CHOICE, .at = SC(plan.fsdp_impl), .choices = fsdp_impls, .group = PF_SCG_RUN},
    {"overlap-grad-reduce", NULL, "overlap the DP gradient reduction, bucket by bucket, with the last backward "
     "(Megatron; default on for Megatron transformers)",
     .type = PF_OPT_FLAG, .at = SC(plan.overlap_grad_reduce), .group = PF_SCG_RUN},
    {"no-overlap-grad-reduce", NULL, "the DP gradient reduction after the last backward",
     .type = PF_OPT_FLAG, .at = SC(plan.overlap_grad_reduce), .flags = PF_OPT_NEGATE, .group = PF_SCG_RUN},
    {"overlap-param-gather", NULL, "with --dist-opt: overlap the parameter all-gather with the next step's first "
     "forward (default on with the distributed optimizer for Megatron transformers)",
     .type = PF_OPT_FLAG, .at = SC(plan.overlap_param_gather), .group = PF_SCG_RUN},
    {"no-overlap-param-gather", NULL, "the parameter all-gather after the optimizer step",
     .type = PF_OPT_FLAG, .at = SC(plan.overlap_param_gather), .flags = PF_OPT_NEGATE, .group = PF_SCG_RUN},
    {"ddp-bucket-size", "N", "gradient bucket size in parameters (default max(40e6, 1e6 x DP), Megatron's)",
     .type = PF_OPT_NUM, .at = SC(plan.ddp_bucket_size), .lo = 1, .hi = 1e15, .group = PF_SCG_RUN},
    {"recompute", "MODE", "activation recomputation: none|selective|full",
     .type = PF_OPT_CALLBACK, .at = SC(plan.recompute), .parse = parse_recompute, .group = PF_SCG_RUN},
    {"recompute-modules", "LIST", "with --recompute selective: what is recomputed, Megatron's names: core_attn "
     "(default), layernorm, mla_up_proj, moe_act, mlp, moe, comma-separated",
     .type = PF_OPT_CALLBACK, .at = SC(plan.recompute_modules), .parse = parse_recompute_modules, .group = PF_SCG_RUN},
    {"moe-token-dispatcher-type", "D", "MoE token dispatcher: alltoall (NCCL all-to-all, default) or flex (DeepEP's "
     "kernels: one crossing per node, node-limited routing, FP8 dispatch)",
     .type = PF_OPT_CALLBACK, .at = SC(plan.dispatcher), .parse = parse_dispatcher, .group = PF_SCG_RUN},
    {"moe-deepep-num-sms", "N", "with the flex dispatcher: SMs DeepEP's kernels take (default 20, Megatron's and "
     "DeepSeek-V3's)",
     .type = PF_OPT_INT, .at = SC(plan.deepep_sms), .lo = 1, .hi = 1 << 16, .group = PF_SCG_RUN},
    {"moe-flex-dispatcher-backend", "B", "the flex dispatcher's library: deepep (default) or hybridep (NVIDIA's "
     "HybridEP, TMA copies inside the NVLink domain at its measured rates)",
     .type = PF_OPT_CALLBACK, .at = SC(plan.flex_backend), .parse = parse_flex_backend, .group = PF_SCG_RUN},
    {"moe-hybridep-num-sms", "N", "with --moe-flex-dispatcher-backend hybridep: SMs its kernels take (default 16, "
     "Megatron's)",
     .type = PF_OPT_INT, .at = SC(plan.hybridep_sms), .lo = 1, .hi = 1 << 16, .group = PF_SCG_RUN},
    {"overlap-moe-expert-parallel-comm", NULL, "hide the EP all-to-alls behind another microbatch's compute "
     "(Megatron's combined 1F1B, DualPipe-like), at the SMs the communication takes",
     .type = PF_OPT_FLAG, .at = SC(plan.ep_overlap), .group = PF_SCG_RUN},
    {"fp8-activation-cache", NULL, "with --precision fp8: keep the experts' SwiGLU input and the attention output "
     "in FP8 for backward, as DeepSeek-V3 does",
     .type = PF_OPT_FLAG, .at = SC(plan.fp8_act_cache), .group = PF_SCG_RUN},
    {"fp8-param-gather", NULL, "with --precision fp8: keep the FP8 GEMMs' weights in FP8 only, without their bf16 "
     "copy (Megatron --fp8-param-gather)",
     .type = PF_OPT_FLAG, .at = SC(plan.fp8_param_gather), .group = PF_SCG_RUN},
    {"schedule", "S", "pipeline schedule: 1f1b|interleaved:V|gpipe|dualpipe (DeepSeek-V3's, in closed form)",
     .type = PF_OPT_CALLBACK, .at = SC(plan), .parse = parse_schedule, .group = PF_SCG_RUN},
    /* uneven pipeline stages, Megatron-LM's options (job/pplayout.c, docs/model.md "Uneven pipeline stages") */
    {"pp-first", "N", "alias of --decoder-first-pipeline-num-layers",
     .type = PF_OPT_INT, .at = SC(plan.pp_first), .lo = 1, .hi = 100000, .flags = PF_OPT_ALIAS, .group = PF_SCG_RUN},
    {"decoder-first-pipeline-num-layers", "N", "uneven pipeline stages: layers of the first stage (the others share "
     "the rest)", .type = PF_OPT_INT, .at = SC(plan.pp_first), .lo = 1, .hi = 100000, .group = PF_SCG_RUN},
    {"pp-last", "N", "alias of --decoder-last-pipeline-num-layers",
     .type = PF_OPT_INT, .at = SC(plan.pp_last), .lo = 1, .hi = 100000, .flags = PF_OPT_ALIAS, .group = PF_SCG_RUN},
    {"decoder-last-pipeline-num-layers", "N", "uneven pipeline stages: layers of the last stage",
     .type = PF_OPT_INT, .at = SC(plan.pp_last), .lo = 1, .hi = 100000, .group = PF_SCG_RUN},
    {"account-for-embedding-in-pipeline-split", NULL, "count the embedding as a layer of the first stage in the "
     "pipeline split", .type = PF_OPT_FLAG, .at = SC(plan.pp_embedding), .group = PF_SCG_RUN},
    {"account-for-loss-in-pipeline-split", NULL, "count the loss as a layer of the last stage in the pipeline split",
     .type = PF_OPT_FLAG, .at = SC(plan.pp_loss), .group = PF_SCG_RUN},
    {"pp-layout", "LAYOUT", "alias of --pipeline-model-parallel-layout",
     .type = PF_OPT_CALLBACK, .at = SC(plan.pp_layout), .parse = copy_layout, .flags = PF_OPT_ALIAS,
     .group = PF_SCG_RUN},
    {"pipeline-model-parallel-layout", "LAYOUT", "uneven pipeline stages as a Megatron layout string, e.g. "
     "\"Et*3|(t*4|)*14,t*2L\" (E embedding, t layer, L loss, | between virtual stages)",
     .type = PF_OPT_CALLBACK, .at = SC(plan.pp_layout), .parse = copy_layout, .group = PF_SCG_RUN},
    {"flash-attn", NULL, "FlashAttention-style fused attention (default on for Megatron transformers on NVIDIA "
     "sm_80+ and AMD MI200/MI300 at fp16/bf16/fp8)",
     .type = PF_OPT_FLAG, .at = SC(plan.flash_attn), .group = PF_SCG_RUN},
    {"no-flash-attn", NULL, "unfused attention: the score matrix written and read back",
     .type = PF_OPT_FLAG, .at = SC(plan.flash_attn), .flags = PF_OPT_NEGATE, .group = PF_SCG_RUN},
    {"tp-across-nodes", NULL, "allow TP groups to span nodes",
     .type = PF_OPT_FLAG, .at = SC(plan.tp_across_nodes), .group = PF_SCG_RUN},
    {"calibration", "FILE.json", "overlay measured rates (preflight calibrate or validate --fit)",
     .type = PF_OPT_CALLBACK, .at = SC(calibration), .parse = copy_path, .group = PF_SCG_RUN},
    {"force-calibration", NULL, "apply --calibration even when it was measured or fitted on another machine",
     .type = PF_OPT_FLAG, .at = SC(calibration_force), .group = PF_SCG_RUN},
    {"host-overhead", "MODE", "kernel dispatch: auto|eager|graphs|compiled (default auto: the framework's usual mode)",
     .type = PF_OPT_CALLBACK, .at = SC(host_mode), .parse = parse_host_mode, .group = PF_SCG_RUN},
    {"cuda-graph-scope", "LIST", "alias of --cuda-graph-modules (Megatron's name before 2026)",
     .type = PF_OPT_CALLBACK, .at = SC(graph_modules), .parse = parse_graph_modules, .flags = PF_OPT_ALIAS,
     .group = PF_SCG_RUN},
    {"cuda-graph-modules", "LIST", "Megatron-Core's partial CUDA graphs: the modules of each layer replayed as graphs, "
     "attn,mlp,moe,moe_router,moe_preprocess (default none: eager)",
     .type = PF_OPT_CALLBACK, .at = SC(graph_modules), .parse = parse_graph_modules, .group = PF_SCG_RUN},
    {"framework", "F", "training framework: auto|megatron|pytorch|tensorflow (default auto)",
     .type = PF_OPT_CALLBACK, .at = SC(framework), .parse = parse_framework, .group = PF_SCG_RUN},
    {"conv-layout", "L", "convolutions' tensor layout: auto|nchw|nhwc (default auto: PyTorch's NCHW, TensorFlow's NCHW "
     "fp32 graph and NHWC half-precision one); on NVIDIA, NCHW tensor-core convolutions pay cuDNN's layout copies",
     .type = PF_OPT_CALLBACK, .at = SC(conv_layout), .parse = parse_conv_layout, .group = PF_SCG_RUN},
    {"input-rate", "RATE", "input pipeline: what one node's storage and loaders deliver, e.g. \"2 GB/s\" (default off)",
     .type = PF_OPT_QTY, .at = SC(input_rate_Bps), .unit = PF_UNIT_BANDWIDTH, .hi = 1e16, .group = PF_SCG_RUN},
    {"input-sample-time", "TIME", "input pipeline: one GPU's loader time per sample (decode, augment), e.g. \"2 ms\" (default off)",
     .type = PF_OPT_QTY, .at = SC(input_sample_s), .unit = PF_UNIT_TIME, .hi = 3600, .group = PF_SCG_RUN},
    {"sample-bytes", "BYTES", "input bytes per sample for --input-rate (default the model's, e.g. 3.7 MB for maelstrom-ap1-unet)",
     .type = PF_OPT_QTY, .at = SC(sample_bytes), .unit = PF_UNIT_BYTES, .hi = 1e15, .group = PF_SCG_RUN},
    {"engine", "E", "pipeline engine: simgrid (default) | full | analytic",
     .type = PF_OPT_CHOICE, .at = SC(engine), .choices = engines, .group = PF_SCG_RUN},
    {"force", NULL, "run --engine full even above its limit of events (it says the estimate; docs/engine.md)",
     .type = PF_OPT_FLAG, .at = SC(force), .group = PF_SCG_RUN},
    {"coll-algo", "A", "DP collective algorithm: auto (the library's tuner)|best|an algorithm (--coll-algo=help lists them)",
     .type = PF_OPT_CALLBACK, .at = SC(collective), .parse = parse_coll_algo, .group = PF_SCG_RUN},
    {"collective", "A", "alias of --coll-algo",
     .type = PF_OPT_CALLBACK, .at = SC(collective), .parse = parse_coll_algo, .flags = PF_OPT_ALIAS,
     .group = PF_SCG_RUN},
    {"coll-proto", "P", "collective protocol: auto|LL|LL128|Simple (default auto: the library's tuner)",
     .type = PF_OPT_CALLBACK, .at = SC(coll_proto), .parse = parse_coll_proto, .group = PF_SCG_RUN},
    {"placement", "P", "node allocation: contiguous (default) | scattered (seeded draw over the partition, --seed)",
     .type = PF_OPT_CALLBACK, .at = SC(placement), .parse = parse_placement, .group = PF_SCG_RUN},
    {"rank-order", "O", "rank order: tp-cp-dp-pp (Megatron's default) | tp-cp-pp-dp (--use-tp-pp-dp-mapping)",
     .type = PF_OPT_CALLBACK, .at = SC(plan.rank_order), .parse = parse_rank_order, .group = PF_SCG_RUN},
    {"tp-comm-overlap", NULL, "with --sp: overlap TP all-gather/reduce-scatter with GEMMs (Megatron/TE "
     "--tp-comm-overlap; default on for Megatron transformers on NVIDIA sm_90+ with SP, TP inside a node)",
     .type = PF_OPT_FLAG, .at = SC(plan.tp_comm_overlap), .group = PF_SCG_RUN},
    {"no-tp-comm-overlap", NULL, "TP all-gather/reduce-scatter between the GEMMs, exposed",
     .type = PF_OPT_FLAG, .at = SC(plan.tp_comm_overlap), .flags = PF_OPT_NEGATE, .group = PF_SCG_RUN},
    {"seed", "N", "seed for randomness (printed in JSON)",
     .type = PF_OPT_ULONG, .at = SC(seed), .lo = 0, .hi = INT_MAX, .group = PF_SCG_RUN},
    {"trace", "FILE.json", "write a Chrome/Perfetto trace of the iteration (predict; tune: its best plan)",
     .type = PF_OPT_TEXT}, /* the command's output, not the scenario's: read with pf_opts_get */
    {"flops-convention", "C", "what tflops_per_gpu and MFU count of the attention core: full (default: the whole score "
     "matrix, as PaLM and Megatron-LM to core_v0.11) or causal (half, as Megatron-LM's log from core_v0.12)",
     .type = PF_OPT_CHOICE, .at = SC(flops_conv), .choices = flops_convs, .group = PF_SCG_RUN},
    {"power-cap", "W", "power cap per device, with its package share (e.g. 500 W; default the device's): above it the clock falls",
     .type = PF_OPT_CALLBACK, .at = SC(power_cap_W), .parse = parse_power_cap, .group = PF_SCG_RUN},
    {"train-iters", "N", "iterations of the run (Megatron --train-iters): energy per run next to per iteration",
     .type = PF_OPT_NUM, .at = SC(train_iters), .lo = 0, .hi = 1e12, .flags = PF_OPT_LO_OPEN, .group = PF_SCG_RUN},
    PF_OPT_END};

/* `preflight collective` (cmd_collective.c): nccl-tests' names where it has one */
const pf_opt pf_collective_opts[] = {
    {"machine", "ID|PATH.cfg", "machine id (see `preflight machines`) or a machine file", .type = PF_OPT_TEXT},
    {"op", "OP", "all_reduce (default) | all_gather | reduce_scatter | alltoall | sendrecv", .type = PF_OPT_TEXT},
    {"nodes", "LIST", "node counts, e.g. 1 or 2,16,128 (default 1)", .type = PF_OPT_TEXT},
    {"gpus-per-node", "K", "ranks per node (default: every GPU of a node)", .type = PF_OPT_TEXT},
    {"b", "SIZE", "smallest size in bytes, nccl-tests' -b (K, M, G = 2^10, 2^20, 2^30; default 8)",
     .type = PF_OPT_TEXT},
    {"e", "SIZE", "largest size, nccl-tests' -e (default 128M)", .type = PF_OPT_TEXT},
    {"f", "F", "size factor between rows, nccl-tests' -f (default 2)", .type = PF_OPT_TEXT},
    {"datatype", "T", "float (default) | half | bfloat16 | double: element size for the count column",
     .type = PF_OPT_TEXT},
    {"coll-algo", "A", "auto (the library's tuner, default) | best | an algorithm (--coll-algo=help lists them)",
     .type = PF_OPT_TEXT},
    {"coll-proto", "P", "auto (default) | LL | LL128 | Simple", .type = PF_OPT_TEXT},
    {"placement", "P", "node allocation: contiguous (default) | scattered (seeded draw over the partition)",
     .type = PF_OPT_TEXT},
    {"seed", "N", "seed of the scattered placement (default 1)", .type = PF_OPT_TEXT},
    {"calibration", "FILE.json", "overlay measured collectives (preflight calibrate --collectives) on the links",
     .type = PF_OPT_TEXT},
    PF_OPT_END};

const pf_opt pf_output_opts[] = {
    {"format", "F", "output: table|json|csv, markdown where the usage says (default table, or -o's .json/.csv/.md); "
                    "errors as JSON on stderr with json",
     .type = PF_OPT_TEXT},
    {"o", "FILE", "write the result to FILE (checked first; replaced atomically; - is stdout)", .type = PF_OPT_TEXT},
    {"lenient", NULL, "unknown keys in machine, device and scenario files are warnings, not errors",
     .type = PF_OPT_FLAG},
    {"help", NULL, "this help", .type = PF_OPT_FLAG},
    PF_OPT_END};
