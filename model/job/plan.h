/* plan.h - a scenario (machine + workload + parallel plan + options) and its
 * validation, with Megatron-LM's rules and wording:
 *   world = TP x PP x DP x CP;  num_microbatches = GBS / (MBS x DP)
 *   layers % PP == 0 (or % (PP x V) for the interleaved schedule), unless uneven stages are given (pplayout.c)
 * Ranks are placed as Megatron orders them (tp fastest, then cp, dp, pp):
 *   rank = tp_r + TP (cp_r + CP (dp_r + DP pp_r)),  node = rank / GPUs per node,
 * or with --rank-order tp-cp-pp-dp (Megatron's --use-tp-pp-dp-mapping)
 *   rank = tp_r + TP (cp_r + CP (pp_r + PP dp_r)).
 */
#ifndef PREFLIGHT_PLAN_H
#define PREFLIGHT_PLAN_H

#include "machine/machine.h"
#include "workload/workload.h"
#include <stdbool.h>
#include <stddef.h>

/* PF_SCHED_DUALPIPE: DeepSeek-V3's bidirectional schedule (arXiv 2412.19437 section 3.2.1; deepseek-ai/DualPipe):
 * each pipeline rank holds stage s and stage PP - 1 - s, half the microbatches enter at each end; priced in
 * closed form (engine/pipeline.c), not as an event schedule. */
typedef enum { PF_SCHED_1F1B, PF_SCHED_INTERLEAVED, PF_SCHED_GPIPE, PF_SCHED_DUALPIPE } pf_schedule;
typedef enum { PF_RECOMPUTE_NONE, PF_RECOMPUTE_SELECTIVE, PF_RECOMPUTE_FULL } pf_recompute;
typedef enum { PF_ENGINE_DES, PF_ENGINE_FULL, PF_ENGINE_ANALYTIC } pf_engine;
/* NCCL/RCCL protocol (--coll-proto): LL (8-byte lines, 4 of data), LL128
 * (128-byte lines, 120 of data), Simple; auto as the tuner picks. */
typedef enum { PF_PROTO_LL, PF_PROTO_LL128, PF_PROTO_SIMPLE, PF_PROTO_AUTO } pf_coll_proto;
/* Node allocation (--placement): contiguous nodes in network order, or a
 * seeded draw over the whole partition. */
typedef enum { PF_PLACE_CONTIGUOUS, PF_PLACE_SCATTERED } pf_placement;
/* Rank order (--rank-order): Megatron's default tp-cp-dp-pp, or tp-cp-pp-dp
 * (--use-tp-pp-dp-mapping). */
typedef enum { PF_ORDER_TP_CP_DP_PP, PF_ORDER_TP_CP_PP_DP } pf_rank_order;
/* Who dispatches the kernels and how (kernel.h: host cost per framework operator).
 * auto: the framework's usual mode (eager PyTorch for Megatron-LM and PyTorch,
 * graph mode for TensorFlow); graphs: CUDA/HIP graphs replay a captured step;
 * compiled: torch.compile / XLA fuse element-wise kernels and launch fewer. */
typedef enum { PF_HOST_AUTO, PF_HOST_EAGER, PF_HOST_GRAPHS, PF_HOST_COMPILED } pf_host_mode;
/* --conv-layout: the tensor layout convolutions run on (auto: the framework's, layerwork.c nchw_copies) */
typedef enum { PF_LAYOUT_AUTO, PF_LAYOUT_NCHW, PF_LAYOUT_NHWC } pf_conv_layout;

/* FP8 scaling recipe (Transformer Engine, --fp8-recipe; compute/fp8.c prices each):
 * delayed: per-tensor scales from an amax history, the amax taken inside the cast (TE DelayedScaling, the
 *          Hopper default); current: per-tensor scale from the tensor's own amax, an extra pass before each
 *          cast (TE Float8CurrentScaling); mxfp8: one e8m0 scale per 32 elements, computed in the cast, with
 *          row- and column-wise copies (TE MXFP8BlockScaling, Blackwell only); blockwise: DeepSeek-V3's fine-grained
 *          scaling, one fp32 scale per 1 x 128 tile of activations and gradients and per 128 x 128 block of weights
 *          (arXiv 2412.19437 section 3.3.2; TE Float8BlockScaling, Megatron --fp8-recipe blockwise); auto: mxfp8 on
 *          Blackwell (sm_100 and later), else delayed. */
typedef enum { PF_FP8_AUTO, PF_FP8_DELAYED, PF_FP8_CURRENT, PF_FP8_MXFP8, PF_FP8_BLOCKWISE } pf_fp8_recipe;

#define PF_PP_LAYOUT_MAX 512 /* characters of a pipeline layout string */
#define PF_MAXCHUNK 4096     /* virtual pipeline stages (PP x V) a layout may hold */

typedef struct pf_plan {
  int tp, pp, dp, cp;
  /* MoE parallel folding (Megatron-Core MoE README, arXiv 2504.14960): the expert layers get their own split
   * of the same TP x CP x DP ranks of a pipeline stage, EP x ETP x EDP = TP x CP x DP, so EP may exceed DP.
   * ep: expert-parallel size (--expert-model-parallel-size, default 1); etp: expert tensor-parallel size
   * (--expert-tensor-parallel-size; 0: as TP, Megatron-LM arguments.py's default).  pf_plan_etp, _edp. */
  int ep, etp;
  int mbs, gbs, grad_accum;     /* grad_accum = microbatches per iteration per pipeline */
  pf_schedule schedule;
  int vstages;                  /* V for interleaved (1 otherwise) */
  bool sp, dist_opt;
  /* Megatron-LM's --overlap-grad-reduce / --overlap-param-gather (default off, as there) and
   * --ddp-bucket-size in parameters (0: Megatron's default max(40e6, 1e6 x DP x CP)) */
  bool overlap_grad_reduce, overlap_param_gather;
  double ddp_bucket_size;
  pf_recompute recompute;
  bool flash_attn;
  bool tp_across_nodes;         /* allow TP groups larger than a node */
  bool tp_comm_overlap;         /* Megatron/TE --tp-comm-overlap: TP all-gather / reduce-scatter behind GEMMs */
  pf_rank_order rank_order;
  pf_fp8_recipe fp8_recipe;     /* --fp8-recipe (with --precision fp8) */
  bool fp8_attention;           /* --fp8-attention: the fused attention in FP8 too (TE/cuDNN FP8 attention) */
  /* The settings current Megatron-Core / NeMo recipes turn on (defaults.c, docs/defaults.md), as PF_SET_* bits:
   * practice, those the recipes turn on for this job (model family, framework, hardware); given, those the
   * user set either way (--X or --no-X, a row's column).  A setting on by default and not given is dropped
   * without a word where the plan rules it out (SP at TP 1, the TP-comm overlap without SP, ...); one the
   * user gave is checked and refused as before. */
  unsigned practice, given;
  /* Uneven pipeline stages as Megatron-LM takes them (pplayout.c): --decoder-first/last-pipeline-num-layers
   * (0: not given), --account-for-embedding/loss-in-pipeline-split, --pipeline-model-parallel-layout ("": none);
   * pp_split is derived by pf_plan_check: the layout that runs in Megatron's syntax ("" for the even split). */
  int pp_first, pp_last;
  bool pp_embedding, pp_loss;
  char pp_layout[PF_PP_LAYOUT_MAX];
  char pp_split[PF_PP_LAYOUT_MAX];
  /* Sharding beyond ZeRO-1 (job/shard.c, docs/model.md "Sharded data parallelism"): zero is 2 (gradients and
   * optimizer state sharded, ZeRO-2 / FSDP SHARD_GRAD_OP) or 3 (parameters too, ZeRO-3 / FSDP FULL_SHARD), 0 for
   * the level dist_opt gives (1 with it, 0 without: pf_plan_zero); shard_group says over which ranks
   * (PF_SHARD_ALL: the DP x CP group; PF_SHARD_NODE: its ranks inside one node, replicated across nodes, FSDP's
   * HYBRID_SHARD); fsdp_prefetch the units gathered ahead of the one computing (FSDP's forward_prefetch /
   * BACKWARD_PRE, default 1); fsdp_impl the library whose rules apply (pf_fsdp_impl). */
  int zero;
  int shard_group;
  int fsdp_prefetch;
  int fsdp_impl;
  /* Mixture-of-experts execution (moeplan.c, docs/moe.md): ep_overlap hides the EP all-to-alls behind the
   * compute of another microbatch (Megatron-Core's --overlap-moe-expert-parallel-comm, its combined-1F1B
   * schedule; DeepSeek-V3's DualPipe pairs chunks the same way); dispatcher the token dispatcher
   * (--moe-token-dispatcher-type: PF_MOE_DISPATCH_ALLTOALL, NCCL's all-to-all, or _FLEX, DeepEP's kernels);
   * deepep_sms the SMs DeepEP's kernels hold (--moe-deepep-num-sms, 0: Megatron's default 20); flex_backend the
   * flex dispatcher's library (--moe-flex-dispatcher-backend: PF_FLEX_DEEPEP or PF_FLEX_HYBRIDEP, NVIDIA's
   * HybridEP) and hybridep_sms the SMs HybridEP's kernels hold (--moe-hybridep-num-sms, 0: Megatron's default 16);
   * recompute_modules the PF_RECOMPUTE_MOD_* bits of --recompute-modules (0: core_attn, Megatron's default)
   * with --recompute selective; fp8_act_cache DeepSeek-V3's FP8 activation caching (SwiGLU input, attention
   * output: arXiv 2412.19437 section 3.3.3; no Megatron flag). */
  bool ep_overlap;
  int dispatcher;
  int deepep_sms;
  int flex_backend;
  int hybridep_sms;
  unsigned recompute_modules;
  /* --recompute-num-layers N with --recompute full: Megatron's --recompute-method block --recompute-num-layers N,
   * the first N layers of each model chunk (a stage, or a virtual stage) recomputed, the rest keeping their
   * activations (megatron/core/transformer/transformer_block.py, _checkpointed_forward); 0: every layer, one
   * checkpoint each (--recompute-method uniform --recompute-num-layers 1) */
  int recompute_layers;
  /* --cpu-offloading-num-layers N: the activations of N layers go to host memory in the forward and come back for
   * the backward, over the host link, each transfer under the next layer's compute (Megatron-Core
   * cpu_offloading_num_layers with cpu_offloading_activations; Transformer Engine's double-buffered offload
   * handler); Megatron allows it only at PP 1, without recomputation, for fewer layers than the model has */
  int cpu_offload_layers;
  bool fp8_act_cache;
  /* Memory of the weights and the optimizer (memory.c): fp8_param_gather keeps the FP8-cast weights of the FP8
   * GEMMs only, without their bf16 copy (Megatron --fp8-param-gather); bf16_moments Adam's m and v in bf16
   * (Megatron --use-precision-aware-optimizer --exp-avg-dtype bf16 --exp-avg-sq-dtype bf16; DeepSeek-V3 arXiv
   * 2412.19437 section 3.3.4); grad_reduce_bf16 the gradient buffer, its accumulation over the microbatches
   * and the data-parallel reduction in bf16 instead of fp32 (Megatron-LM --grad-reduce-in-bf16; Megatron-Bridge's
   * grad_reduce_in_fp32 = False, which its performance recipes set): pf_grad_bytes. */
  bool fp8_param_gather;
  bool bf16_moments;
  bool grad_reduce_bf16;
} pf_plan;

typedef enum { PF_MOE_DISPATCH_ALLTOALL, PF_MOE_DISPATCH_FLEX } pf_moe_dispatcher;
typedef enum { PF_FLEX_DEEPEP, PF_FLEX_HYBRIDEP } pf_flex_backend;
#define PF_DEEPEP_SMS_DEFAULT 20   /* Megatron-Core transformer_config.py moe_deepep_num_sms; DeepSeek-V3's 20 SMs */
#define PF_HYBRIDEP_SMS_DEFAULT 16 /* Megatron-Core's moe_hybridep_num_sms ("default 16", its MoE performance guide) */
/* --recompute-modules (Megatron-Core's names, megatron/core/transformer/moe/README.md "Checkpointing") */
enum {
  PF_RECOMPUTE_MOD_CORE_ATTN = 1 << 0,   /* core_attn: the attention core (checkpointed) */
  PF_RECOMPUTE_MOD_LAYERNORM = 1 << 1,   /* layernorm: input_layernorm and pre_mlp_layernorm outputs discarded */
  PF_RECOMPUTE_MOD_MLA_UP_PROJ = 1 << 2, /* mla_up_proj: MLA's latent norms, up projections and rotary */
  PF_RECOMPUTE_MOD_MOE_ACT = 1 << 3,     /* moe_act: the grouped experts' activation function */
  PF_RECOMPUTE_MOD_MLP = 1 << 4,         /* mlp: a dense layer's MLP (checkpointed: its input kept) */
  PF_RECOMPUTE_MOD_MOE = 1 << 5,         /* moe: a MoE layer's MLP, all-to-alls included (checkpointed) */
};
#define PF_RECOMPUTE_MODS_MAX 128 /* characters of a --recompute-modules list */
int pf_recompute_modules_parse(const char *s, unsigned *out);
/* the list as Megatron spells it ("core_attn,layernorm"); buf of at least PF_RECOMPUTE_MODS_MAX */
const char *pf_recompute_modules_name(unsigned m, char *buf, size_t len);
/* The modules recomputed (0 unless --recompute selective; core_attn when none were given). */
unsigned pf_plan_recompute_modules(const pf_plan *p);
const char *pf_moe_dispatcher_name(int d);
int pf_moe_dispatcher_parse(const char *s, int *out);

typedef enum { PF_SHARD_ALL, PF_SHARD_NODE } pf_shard_group;
/* auto: Megatron-FSDP for --framework megatron (and auto transformers), PyTorch FSDP2 for pytorch. */
typedef enum { PF_FSDP_AUTO, PF_FSDP_MEGATRON, PF_FSDP_TORCH, PF_FSDP_DEEPSPEED } pf_fsdp_impl;

/* The settings that follow current practice (pf_plan.practice, .given). */
enum {
  PF_SET_FLASH_ATTN = 1 << 0,
  PF_SET_SP = 1 << 1,
  PF_SET_DIST_OPT = 1 << 2,
  PF_SET_OVERLAP_GRAD = 1 << 3,
  PF_SET_OVERLAP_PARAM = 1 << 4,
  PF_SET_TP_COMM_OVERLAP = 1 << 5,
};
#define PF_SET_COUNT 6

typedef struct pf_scenario {
  pf_machine machine;
  pf_workload workload;
  pf_plan plan;
  pf_precision precision;
  int nodes, gpus;              /* gpus = nodes x gpus_per_node unless --gpus was given */
  pf_engine engine;
  bool force;                   /* --force: run --engine full above its event limit (pf_fullsim_events, engine/fullsim.c) */
  int collective;               /* --coll-algo: an id of the communication module's algorithm table
                                   (comm/collalgo.h, pf_coll_algo); 0 = auto, the library's tuner */
  pf_coll_proto coll_proto;     /* --coll-proto: auto or forced */
  pf_placement placement;       /* --placement (the scattered draw uses seed) */
  pf_host_mode host_mode;       /* --host-overhead */
  pf_framework framework;       /* --framework */
  pf_conv_layout conv_layout;   /* --conv-layout: NCHW tensor-core convolutions pay cuDNN's NCHW <-> NHWC copies */
  unsigned long seed;
  char calibration[PF_PATH_MAX];/* overlay file, "" if none (applied by pf_scenario_apply_calibration) */
  bool calibration_force;       /* apply it even to another machine or device */
  char calibration_note[512];   /* what applying it said (a mismatch applied with --force-calibration), "" if
                                   nothing: every prediction of the scenario repeats it as a warning */
  /* efficiency overrides from a fit overlay (1, 1, 0 = none) */
  double compute_eff_scale, comm_eff_scale, step_overhead_s;
  /* host CPU time per eager forward operator and per autograd backward node measured on the node
   * (calibration results.host, `calibrate --host`; 0 = the defaults of compute/hostqueue.c) */
  double host_fwd_op_s, host_bwd_op_s;
  bool fit_anchored;            /* the overlay holds a fit (validate --fit): predictions are anchored on runs */
  double fit_rel_sigma;         /* that fit's relative residual spread (RMS log residual; 0: not known) */
  double fit_max_nodes;         /* the largest node count it was fitted on (0: not given, taken as 1) */
  double train_iters;           /* --train-iters: iterations of the run (per-run energy; 0 = not given) */
  double power_cap_W;           /* --power-cap: per device (with its package share); 0 = the device's cap */
  /* input pipeline (predict.c; 0 = off): what one node's storage and loaders deliver, the loader time per
   * sample of one GPU's loader, and the bytes of one sample (0: the workload's sample_bytes) */
  double input_rate_Bps, input_sample_s, sample_bytes;
  pf_flops_conv flops_conv;     /* --flops-convention: how tflops_per_gpu and MFU count the attention core */
  unsigned graph_modules;       /* --cuda-graph-modules: PF_GRAPH_* bits of each layer's modules replayed as
                                   CUDA graphs (Megatron-Core's partial graphs; graphmods.c); 0: none */
  bool ran;                     /* a measured run's plan (validate): it did fit, so a total above capacity by no
                                   more than the assumed framework allowance is predicted, not refused (memory.c) */
} pf_scenario;

/* Megatron-Core's --cuda-graph-modules (graphmods.c): the parts of a layer captured as CUDA graphs. */
enum {
  PF_GRAPH_ATTN = 1 << 0,           /* attn: input norm, attention, its bias-dropout-add */
  PF_GRAPH_MLP = 1 << 1,            /* mlp: a dense layer's pre-MLP norm, MLP and bias-dropout-add */
  PF_GRAPH_MOE = 1 << 2,            /* moe: a drop-and-pad MoE layer's whole MLP */
  PF_GRAPH_MOE_ROUTER = 1 << 3,     /* moe_router: pre-MLP norm, router, shared experts */
  PF_GRAPH_MOE_PREPROCESS = 1 << 4, /* moe_preprocess: the dispatcher's preprocessing (with moe_router) */
};
int pf_graph_modules_parse(const char *s, unsigned *out);
/* the list as Megatron spells it ("attn,moe_router"); buf of at least PF_RECOMPUTE_MODS_MAX */
const char *pf_graph_modules_name(unsigned m, char *buf, size_t len);
/* Megatron's rules: a Megatron transformer; moe_preprocess with moe_router; moe and the router's modules need
 * experts; moe needs drop-and-pad.  0 or PF_EINVAL. */
int pf_plan_check_graphs(const pf_scenario *sc);

/* The share of a stage's lps layers whose forward --recompute full runs again before their backward: 1, or
 * with --recompute-num-layers N the block method's N of each of the stage's model chunks; 0 without full
 * recomputation. */
double pf_plan_recompute_share(const pf_scenario *sc, int lps);
/* The framework the run uses: --framework, else the model's own (layer lists), Megatron-LM for transformers,
 * PyTorch otherwise. */
pf_framework pf_scenario_framework(const pf_scenario *sc);
/* Bytes per parameter of the gradient buffer, the gradients' accumulation and their data-parallel reduction.
 * Megatron: fp16 in fp16 and bf16 in fp32 (Megatron-LM arguments.py: bf16 turns
 * --accumulate-allreduce-grads-in-fp32 on, fp16 leaves it off), bf16 and fp8 in bf16 with --grad-reduce-in-bf16,
 * fp32 and tf32 in fp32.  Other frameworks train fp16/bf16 under automatic mixed precision, whose parameters and
 * so gradients stay fp32 (torch.autocast; Keras mixed_float16 keeps float32 variables). */
double pf_grad_bytes(const pf_scenario *sc);

/* Defaults: tp=pp=cp=1, mbs=1, schedule 1f1b, precision bf16, seed 1. */
void pf_scenario_init(pf_scenario *sc);

/* The settings of current practice (defaults.c): for a transformer trained with Megatron (framework auto or
 * megatron), each PF_SET_* setting that the recipes turn on for the device is put on unless `given` holds
 * its bit (the user set it either way); layer lists, custom models and other frameworks keep every setting
 * as given.  Call once the machine, the workload, the precision and --framework are known. */
void pf_scenario_practice_defaults(pf_scenario *sc, unsigned given);
/* The PF_SET_* settings current practice turns on for sc (what pf_scenario_practice_defaults applies). */
unsigned pf_practice_settings(const pf_scenario *sc);
/* A setting's option name ("flash-attn", "sp", ...) and its recipe source (docs/defaults.md). */
const char *pf_setting_name(unsigned bit);
const char *pf_setting_source(unsigned bit);
/* A setting on by default (practice and not given) that the plan rules out is put off (pf_plan_check calls
 * it first; so does the engine check for what --engine full does not model). */
void pf_plan_settle_defaults(pf_scenario *sc);

/* Complete and check the plan against machine and workload: derive gpus,
 * dp, grad_accum/gbs; check divisibility and placement.  PF_EPLAN with a
 * message that names the constraint and what would be valid. */
int pf_plan_check(pf_scenario *sc);

/* The recipe that runs: auto resolved by the device's architecture; PF_EINVAL naming the device for mxfp8
 * on a part before Blackwell (its tensor cores have no block-scaled FP8).  Only meaningful at fp8. */
int pf_fp8_recipe_of(const pf_scenario *sc, pf_fp8_recipe *out);
const char *pf_fp8_recipe_name(pf_fp8_recipe r);

const char *pf_schedule_name(pf_schedule s);
const char *pf_recompute_name(pf_recompute r);
const char *pf_coll_proto_name(pf_coll_proto p);
const char *pf_placement_name(pf_placement p);
const char *pf_rank_order_name(pf_rank_order o);
int pf_schedule_parse(const char *s, pf_schedule *out, int *vstages);
int pf_recompute_parse(const char *s, pf_recompute *out);
int pf_coll_proto_parse(const char *s, pf_coll_proto *out);
int pf_placement_parse(const char *s, pf_placement *out);
int pf_rank_order_parse(const char *s, pf_rank_order *out);
const char *pf_host_mode_name(pf_host_mode m);
const char *pf_framework_name(pf_framework f);
int pf_host_mode_parse(const char *s, pf_host_mode *out);
int pf_framework_parse(const char *s, pf_framework *out);
int pf_conv_layout_parse(const char *s, pf_conv_layout *out);

/* Global rank of (tp, cp, dp, pp) coordinates (in the plan's rank order) and
 * the node that holds it; pf_plan_coords is the inverse. */
int pf_plan_rank(const pf_plan *p, int tp_r, int cp_r, int dp_r, int pp_r);
/* the expert split of a checked plan: ETP (TP when not given) and EDP = TP x CP x DP / (EP x ETP) */
int pf_plan_ep(const pf_plan *p);
int pf_plan_etp(const pf_plan *p);
int pf_plan_edp(const pf_plan *p);
void pf_plan_coords(const pf_plan *p, int rank, int *tp_r, int *cp_r, int *dp_r, int *pp_r);
/* Megatron's warm-up of pipeline stage s (schedules.py): the forwards it runs before its first backward, in
 * chunk passes, uncapped by the microbatches: 1F1B P - s - 1; interleaved 2 (P - s - 1) + (V - 1) P (the
 * microbatch group per virtual stage at its default, P); 0 for GPipe and other schedules. */
int pf_plan_warmup_passes(const pf_plan *p, int s);
static inline int pf_plan_node_of(const pf_scenario *sc, int rank) { return rank / sc->machine.gpus_per_node; }

/* Sharding (shard.c).  The ZeRO level of the plan: zero if 2 or 3, else 1 with dist_opt, else 0. */
int pf_plan_zero(const pf_plan *p);
/* Ranks the sharded state of one GPU is spread over: DP x CP, or with PF_SHARD_NODE those of a DP x CP group
 * that share a node (1 at level 0). */
int pf_plan_shard_size(const pf_scenario *sc);
/* The library whose rules and collectives apply (auto resolved by the framework). */
pf_fsdp_impl pf_plan_fsdp_impl(const pf_scenario *sc);
/* What pf_plan_check asks of the sharding: levels, the shard group, and what each library composes with
 * (PF_EINVAL / PF_EPLAN naming the option and the library's rule).  Fills dist_opt from zero. */
int pf_plan_check_sharding(pf_scenario *sc);
/* SMs DeepEP's kernels hold while they run beside compute (--moe-deepep-num-sms, default Megatron's 20); comm
 * turns them into a share of the device's units as it does NCCL's channels (pf_comm_sm_share_of). */
int pf_plan_deepep_sms(const pf_plan *p);
/* The SMs the flex dispatcher's library holds: DeepEP's (above) or HybridEP's (--moe-hybridep-num-sms, default
 * Megatron's 16). */
int pf_plan_flex_sms(const pf_plan *p);
const char *pf_flex_backend_name(int b);
int pf_flex_backend_parse(const char *s, int *out);
/* the MoE options against the model and the plan (pf_plan_check) */
int pf_plan_check_moe(const pf_scenario *sc);
const char *pf_shard_group_name(int g);
const char *pf_fsdp_impl_name(int i);
/* "ZeRO-3 (FSDP FULL_SHARD over 32 ranks)" and the like, for reports. */
void pf_plan_sharding_text(const pf_scenario *sc, char *buf, size_t n);

/* Layers held by pipeline stage s (uniform: layers / pp). */
int pf_plan_layers_per_stage(const pf_scenario *sc);

/* Uneven pipeline stages (pplayout.c, Megatron-LM's options; docs/model.md "Uneven pipeline stages").
 * layers[c * pp + s] are the decoder layers of virtual stage (chunk) c of pipeline stage s; the embedding is on
 * chunk 0 of stage 0 and the loss on chunk v - 1 of stage pp - 1. */
typedef struct pf_pp_layout {
  int pp, v;
  int mtp;                      /* the model's MTP modules, on the last virtual stage before the loss */
  bool uneven;                  /* one of the options given (else the even split) */
  short layers[PF_MAXCHUNK];
} pf_pp_layout;
bool pf_plan_uneven(const pf_plan *p);
/* The layout of a checked plan; PF_EINVAL naming the option where it does not hold. */
int pf_plan_layout(const pf_scenario *sc, pf_pp_layout *l);
/* Decoder layers of pipeline stage s, all its chunks (pf_plan_layers_per_stage for the even split). */
int pf_plan_stage_layers(const pf_scenario *sc, int stage);
/* Index of the first decoder layer of stage s, counting the layers of the stages before it (the MoE layer
 * count of a stage: which layers are dense or MoE; interleaved chunks are taken as one contiguous block). */
int pf_plan_stage_first_layer(const pf_scenario *sc, int stage);
/* The layout in Megatron's --pipeline-model-parallel-layout syntax ("Et*3|(t*4|)*14,t*2L"). */
void pf_plan_layout_string(const pf_pp_layout *l, char *buf, size_t n);
/* The options that give the plan's layout, each with a leading space ("" for the even split). */
void pf_plan_layout_args(const pf_plan *p, char *buf, size_t n);
/* Put options on p that split L layers over its PP x V stages when they do not divide (tune's choice); the even
 * split needs none. */
int pf_plan_auto_layout(pf_plan *p, int L, int mtp);
/* pf_plan_check's part: 1 when no option is given (the even split's rules apply), 0 when the layout holds
 * (pp_split filled, the schedule made interleaved:V where the layout string has V chunks a stage), or < 0. */
int pf_plan_check_layout(pf_scenario *sc);

#endif
