/* plan.c - scenario defaults and parallel-plan validation (see plan.h).
 * The divisibility rules and their wording follow Megatron-LM's
 * arguments.py and num_microbatches_calculator.py. */
#include "plan.h"

#include "core/core.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

void pf_scenario_init(pf_scenario *sc) {
  memset(sc, 0, sizeof *sc);
  sc->plan.tp = sc->plan.pp = sc->plan.cp = sc->plan.ep = 1;
  sc->plan.mbs = 1;
  sc->plan.vstages = 1;
  sc->plan.fsdp_prefetch = 1; /* FSDP's default: one unit ahead (shard.c) */
  sc->plan.schedule = PF_SCHED_1F1B;
  sc->plan.recompute = PF_RECOMPUTE_NONE;
  sc->precision = PF_BF16;
  sc->engine = PF_ENGINE_DES;
  sc->collective = 0; /* --coll-algo auto (comm's PF_COLL_AUTO) */
  sc->coll_proto = PF_PROTO_AUTO;
  sc->seed = 1;
  sc->compute_eff_scale = 1.0;
  sc->comm_eff_scale = 1.0;
}

static const char *sched_names[] = {"1f1b", "interleaved", "gpipe", "dualpipe"};
static const char *recompute_names[] = {"none", "selective", "full"};
static const char *proto_names[] = {"LL", "LL128", "Simple", "auto"};
static const char *place_names[] = {"contiguous", "scattered"};
static const char *order_names[] = {"tp-cp-dp-pp", "tp-cp-pp-dp"};

const char *pf_schedule_name(pf_schedule s) { return s <= PF_SCHED_DUALPIPE ? sched_names[s] : "?"; }
const char *pf_recompute_name(pf_recompute r) { return r <= PF_RECOMPUTE_FULL ? recompute_names[r] : "?"; }
const char *pf_coll_proto_name(pf_coll_proto p) { return p <= PF_PROTO_AUTO ? proto_names[p] : "?"; }
const char *pf_placement_name(pf_placement p) { return p <= PF_PLACE_SCATTERED ? place_names[p] : "?"; }
const char *pf_rank_order_name(pf_rank_order o) { return o <= PF_ORDER_TP_CP_PP_DP ? order_names[o] : "?"; }

int pf_schedule_parse(const char *s, pf_schedule *out, int *vstages) {
  *vstages = 1;
  if (strcmp(s, "1f1b") == 0) { *out = PF_SCHED_1F1B; return 0; }
  if (strcmp(s, "gpipe") == 0) { *out = PF_SCHED_GPIPE; return 0; }
  if (strcmp(s, "dualpipe") == 0) { *out = PF_SCHED_DUALPIPE; return 0; }
  if (strncmp(s, "interleaved", 11) == 0) {
    *out = PF_SCHED_INTERLEAVED;
    if (s[11] == '\0') { *vstages = 2; return 0; }
    if (s[11] == ':') {
      char *end;
      long v = strtol(s + 12, &end, 10);
      if (*end == '\0' && end != s + 12 && v >= 2 && v <= 64) { *vstages = (int)v; return 0; }
    }
  }
  return pf_error_set(PF_EINVAL, "--schedule \"%s\": valid: 1f1b, interleaved:V (V >= 2 chunks per stage), gpipe, "
                      "dualpipe", s);
}

int pf_recompute_parse(const char *s, pf_recompute *out) {
  int i = pf_name_index(s, recompute_names, PF_RECOMPUTE_FULL + 1, false);
  if (i >= 0) { *out = (pf_recompute)i; return 0; }
  return pf_error_set(PF_EINVAL, "--recompute \"%s\": valid: none, selective, full", s);
}

int pf_coll_proto_parse(const char *s, pf_coll_proto *out) {
  int i = pf_name_index(s, proto_names, PF_PROTO_AUTO + 1, true);
  if (i >= 0) { *out = (pf_coll_proto)i; return 0; }
  return pf_error_set(PF_EINVAL, "--coll-proto \"%s\": valid: auto, LL, LL128, Simple", s);
}

int pf_placement_parse(const char *s, pf_placement *out) {
  int i = pf_name_index(s, place_names, PF_PLACE_SCATTERED + 1, false);
  if (i >= 0) { *out = (pf_placement)i; return 0; }
  return pf_error_set(PF_EINVAL, "--placement \"%s\": valid: contiguous, scattered", s);
}

int pf_rank_order_parse(const char *s, pf_rank_order *out) {
  int i = pf_name_index(s, order_names, PF_ORDER_TP_CP_PP_DP + 1, false);
  if (i >= 0) { *out = (pf_rank_order)i; return 0; }
  return pf_error_set(PF_EINVAL, "--rank-order \"%s\": valid: tp-cp-dp-pp (Megatron's default), tp-cp-pp-dp "
                      "(Megatron's --use-tp-pp-dp-mapping)", s);
}

static const char *host_names[] = {"auto", "eager", "graphs", "compiled"};
static const char *fw_names[] = {"auto", "megatron", "pytorch", "tensorflow"};

const char *pf_host_mode_name(pf_host_mode m) { return m <= PF_HOST_COMPILED ? host_names[m] : "?"; }
const char *pf_framework_name(pf_framework f) { return f <= PF_FW_TENSORFLOW ? fw_names[f] : "?"; }

int pf_host_mode_parse(const char *s, pf_host_mode *out) {
  int i = pf_name_index(s, host_names, PF_HOST_COMPILED + 1, false);
  if (i >= 0) { *out = (pf_host_mode)i; return 0; }
  return pf_error_set(PF_EINVAL, "--host-overhead \"%s\": valid: auto, eager, graphs, compiled", s);
}

int pf_framework_parse(const char *s, pf_framework *out) {
  int i = pf_name_index(s, fw_names, PF_FW_TENSORFLOW + 1, false);
  if (i >= 0) { *out = (pf_framework)i; return 0; }
  return pf_error_set(PF_EINVAL, "--framework \"%s\": valid: auto, megatron, pytorch, tensorflow", s);
}

static const char *layout_names[] = {"auto", "nchw", "nhwc"};

int pf_conv_layout_parse(const char *s, pf_conv_layout *out) {
  int i = pf_name_index(s, layout_names, PF_LAYOUT_NHWC + 1, false);
  if (i >= 0) { *out = (pf_conv_layout)i; return 0; }
  return pf_error_set(PF_EINVAL, "--conv-layout \"%s\": valid: auto (the framework's), nchw, nhwc", s);
}

int pf_plan_rank(const pf_plan *p, int tp_r, int cp_r, int dp_r, int pp_r) {
  if (p->rank_order == PF_ORDER_TP_CP_PP_DP) return tp_r + p->tp * (cp_r + p->cp * (pp_r + p->pp * dp_r));
  return tp_r + p->tp * (cp_r + p->cp * (dp_r + p->dp * pp_r));
}

void pf_plan_coords(const pf_plan *p, int rank, int *tp_r, int *cp_r, int *dp_r, int *pp_r) {
  *tp_r = rank % p->tp;
  rank /= p->tp;
  *cp_r = rank % p->cp;
  rank /= p->cp;
  if (p->rank_order == PF_ORDER_TP_CP_PP_DP) {
    *pp_r = rank % p->pp;
    *dp_r = rank / p->pp;
  } else {
    *dp_r = rank % p->dp;
    *pp_r = rank / p->dp;
  }
}

int pf_plan_layers_per_stage(const pf_scenario *sc) {
  return sc->workload.kind == PF_WL_TRANSFORMER ? sc->workload.layers / sc->plan.pp : 0;
}

/* Divisors of n as "1, 2, 4, 8" for messages. */
static void divisors(int n, char *buf, size_t len) {
  buf[0] = '\0';
  for (int d = 1; d <= n; d++)
    if (n % d == 0) {
      char one[16];
      snprintf(one, sizeof one, "%s%d", buf[0] ? ", " : "", d);
      strncat(buf, one, len - strlen(buf) - 1);
    }
}

/* The world: GPUs and nodes from what was given (checked against the machine), and the option combinations
 * Megatron-LM refuses. */
static int check_world(pf_scenario *sc) {
  pf_plan *p = &sc->plan;
  const pf_machine *m = &sc->machine;
  int gpn = m->gpus_per_node;

  if (sc->nodes < 0 || sc->gpus < 0) return pf_error_set(PF_EINVAL, "--nodes and --gpus must be positive");
  if (p->tp < 1 || p->pp < 1 || p->cp < 1 || p->mbs < 1 || p->dp < 0 || p->gbs < 0 || p->grad_accum < 0)
    return pf_error_set(PF_EINVAL, "--tp, --pp, --cp and --mbs must be at least 1");
  if (gpn < 1) return pf_error_set(PF_EINVAL, "machine %s has no devices per node", m->id);
  /* products of user-given integers are checked (checked.h): a world larger
   * than an int can hold is refused with the limit named */
  if (sc->gpus == 0 && sc->nodes == 0) {
    if (p->dp > 0) {
      if (pf_mul4_overflow(p->tp, p->pp, p->cp, p->dp, &sc->gpus))
        return pf_error_set(PF_EINVAL, "--tp %d x --pp %d x --cp %d x --dp %d GPUs exceeds the limit of %d GPUs",
                            p->tp, p->pp, p->cp, p->dp, INT_MAX);
    } else {
      return pf_error_set(PF_EINVAL, "give --nodes N or --gpus N (or --dp with --tp/--pp)");
    }
  }
  if (sc->gpus == 0 && pf_mul_overflow(sc->nodes, gpn, &sc->gpus))
    return pf_error_set(PF_EINVAL, "--nodes %d x %d GPUs per node exceeds the limit of %d GPUs", sc->nodes, gpn,
                        INT_MAX);
  if (sc->nodes == 0) sc->nodes = (int)(((long long)sc->gpus + gpn - 1) / gpn);
  if (sc->gpus > (long long)sc->nodes * gpn)
    return pf_error_set(PF_EPLAN, "%d GPUs do not fit on %d nodes of %d GPUs", sc->gpus, sc->nodes, gpn);
  if (sc->nodes > m->nodes)
    return pf_error_set(PF_EPLAN, "--nodes %d exceeds the %d nodes of %s", sc->nodes, m->nodes, m->id);
  /* Megatron-LM arguments.py: "--overlap-param-gather only supported with distributed optimizer" */
  if (p->overlap_param_gather && !p->dist_opt)
    return pf_error_set(PF_EINVAL, "--overlap-param-gather needs --dist-opt (Megatron-LM overlaps the parameter "
                        "all-gather of the distributed optimizer only)");
  if (p->ddp_bucket_size < 0) return pf_error_set(PF_EINVAL, "--ddp-bucket-size must be positive");
  /* Megatron-LM arguments.py: "Tensor parallel communication/GEMM overlap can happen only when sequence
   * parallelism is enabled" */
  if (p->tp_comm_overlap && (!p->sp || p->tp < 2))
    return pf_error_set(PF_EINVAL, "--tp-comm-overlap needs --sp and --tp > 1 (Transformer Engine overlaps the "
                        "sequence-parallel all-gather and reduce-scatter)");
  return 0;
}

/* TP x PP x CP divides the world; DP is the rest. */
static int check_model_parallel(pf_scenario *sc) {
  pf_plan *p = &sc->plan;
  char valid[512];
  int model;
  if (pf_mul4_overflow(p->tp, p->pp, p->cp, 1, &model) || model > sc->gpus) {
    divisors(sc->gpus, valid, sizeof valid);
    return pf_error_set(PF_EPLAN, "tensor x pipeline x context parallel size (%d x %d x %d) exceeds the %d GPUs; "
                        "TP x PP x CP must divide %d: one of %s", p->tp, p->pp, p->cp, sc->gpus, sc->gpus, valid);
  }
  if (sc->gpus % model != 0) {
    divisors(sc->gpus, valid, sizeof valid);
    return pf_error_set(PF_EPLAN,
                        "world size (%d GPUs) is not divisible by tensor x pipeline x context parallel size "
                        "(%d x %d x %d = %d); TP x PP x CP must divide %d: one of %s",
                        sc->gpus, p->tp, p->pp, p->cp, model, sc->gpus, valid);
  }
  int dp = sc->gpus / model;
  if (p->dp > 0 && p->dp != dp)
    return pf_error_set(PF_EPLAN, "--dp %d contradicts %d GPUs / (TP %d x PP %d x CP %d) = %d", p->dp, sc->gpus,
                        p->tp, p->pp, p->cp, dp);
  p->dp = dp;
  return 0;
}

/* TP inside a node, and what the model's shape asks of TP, PP and CP (heads, layers, sequence). */
static int check_model_shape(pf_scenario *sc) {
  pf_plan *p = &sc->plan;
  const pf_machine *m = &sc->machine;
  const pf_workload *w = &sc->workload;
  char valid[512];
  int gpn = m->gpus_per_node;

  if (!p->tp_across_nodes && p->tp > gpn) {
    divisors(gpn, valid, sizeof valid);
    return pf_error_set(PF_EPLAN, "--tp %d exceeds the %d GPUs of a %s node; TP stays inside a node (valid: %s), "
                        "or pass --tp-across-nodes", p->tp, gpn, m->id, valid);
  }
  if (!p->tp_across_nodes && gpn % p->tp != 0) {
    divisors(gpn, valid, sizeof valid);
    return pf_error_set(PF_EPLAN, "--tp %d does not divide the %d GPUs of a node, so TP groups would straddle "
                        "nodes; valid: %s", p->tp, gpn, valid);
  }
  if (w->kind == PF_WL_TRANSFORMER) {
    if (w->heads % p->tp != 0) {
      divisors(w->heads, valid, sizeof valid);
      return pf_error_set(PF_EPLAN, "number of attention heads (%d) must be divisible by --tp %d; valid TP: %s",
                          w->heads, p->tp, valid);
    }
    if (w->kv_heads % p->tp != 0 && p->tp % w->kv_heads != 0)
      return pf_error_set(PF_EPLAN, "KV heads (%d) and --tp %d: one must divide the other", w->kv_heads, p->tp);
    long long chunks = (long long)p->pp * (p->schedule == PF_SCHED_INTERLEAVED ? p->vstages : 1);
    int rc = pf_plan_check_layout(sc); /* uneven stages (pplayout.c); 1: none asked, the even split's rules */
    if (rc < 0) return rc;
    if (rc == 1 && w->layers % chunks != 0) {
      divisors(w->layers, valid, sizeof valid);
      pf_plan q = *p;
      char uneven[PF_PP_LAYOUT_MAX + 160] = "";
      if (p->pp > 1 && pf_plan_auto_layout(&q, w->layers, w->mtp_layers) == 0)
        pf_plan_layout_args(&q, uneven, sizeof uneven);
      if (p->schedule == PF_SCHED_INTERLEAVED)
        return pf_error_set(PF_EPLAN, "number of layers (%d) must be divisible by PP x V = %d x %d; divisors of %d: "
                            "%s%s%s", w->layers, p->pp, p->vstages, w->layers, valid,
                            uneven[0] ? "; or uneven stages:" : "", uneven);
      return pf_error_set(PF_EPLAN, "number of layers of the model (%d) must be divisible by pipeline model "
                          "parallel size %d; valid PP: %s%s%s", w->layers, p->pp, valid,
                          uneven[0] ? "; or uneven stages:" : "", uneven);
    }
    long long split = (long long)p->cp * (p->sp ? p->tp : 1);
    if (w->seq % split != 0)
      return pf_error_set(PF_EPLAN, "--seq %d must be divisible by CP%s (%lld)", w->seq,
                          p->sp ? " x TP (sequence parallel)" : "", split);
  } else if (p->tp > 1 || p->pp > 1 || p->cp > 1) {
    return pf_error_set(PF_EPLAN, "model %s is not a transformer: only data parallelism (--tp 1 --pp 1) is modelled", w->id);
  }
  if (p->sp && p->tp == 1) p->sp = false; /* sequence parallelism is a no-op without TP */
  if (p->schedule == PF_SCHED_INTERLEAVED && p->pp == 1)
    return pf_error_set(PF_EPLAN, "--schedule interleaved needs --pp > 1");
  return 0;
}

/* The global batch, micro-batches and gradient-accumulation steps: derived from each other and consistent. */
static int check_batch(pf_scenario *sc) {
  pf_plan *p = &sc->plan;
  long long per_step = (long long)p->mbs * p->dp;
  if (p->gbs <= 0 && p->grad_accum <= 0) p->grad_accum = 1;
  if (p->gbs <= 0) {
    long long g = per_step * p->grad_accum; /* both below 2^31: no overflow in 64 bits */
    if (g > INT_MAX)
      return pf_error_set(PF_EINVAL, "global batch = --mbs %d x DP %d x %d microbatches = %lld exceeds the limit of "
                          "%d samples", p->mbs, p->dp, p->grad_accum, g, INT_MAX);
    p->gbs = (int)g;
  }
  if (p->gbs % per_step != 0) {
    long long lo = p->gbs / per_step * per_step, hi = lo + per_step;
    if (lo == 0) /* below one step's samples: the smallest valid batch is the only neighbour */
      return pf_error_set(PF_EPLAN, "global batch size (%d) is smaller than micro batch size (%d) times data "
                          "parallel size (%d); the smallest valid is %lld", p->gbs, p->mbs, p->dp, per_step);
    return pf_error_set(PF_EPLAN, "global batch size (%d) is not divisible by micro batch size (%d) times data "
                        "parallel size (%d); nearest valid: %lld or %lld", p->gbs, p->mbs, p->dp, lo, hi);
  }
  if (p->grad_accum > 0 && p->grad_accum != p->gbs / per_step)
    return pf_error_set(PF_EPLAN, "--grad-accum %d contradicts --gbs %d / (mbs %d x DP %d) = %lld", p->grad_accum,
                        p->gbs, p->mbs, p->dp, p->gbs / per_step);
  p->grad_accum = (int)(p->gbs / per_step);
  if (p->schedule == PF_SCHED_INTERLEAVED && p->grad_accum % p->pp != 0)
    return pf_error_set(PF_EPLAN, "interleaved schedule: number of microbatches (%d) must be divisible by PP (%d)",
                        p->grad_accum, p->pp);
  if (p->pp > 512) return pf_error_set(PF_EPLAN, "--pp %d: at most 512 pipeline stages are modelled", p->pp);
  /* deepseek-ai/DualPipe dualpipe/dualpipe.py (commit bb214e82) DualPipe.step: "assert num_ranks % 2 == 0",
   * "assert num_chunks > 0 and num_chunks % 2 == 0 and num_chunks >= num_ranks * 2" */
  if (p->schedule == PF_SCHED_DUALPIPE && (p->pp < 2 || p->pp % 2 != 0))
    return pf_error_set(PF_EPLAN, "--schedule dualpipe needs an even --pp of at least 2 (each rank holds stage s "
                        "and stage PP - 1 - s), not %d", p->pp);
  if (p->schedule == PF_SCHED_DUALPIPE && (p->grad_accum % 2 != 0 || p->grad_accum < 2 * p->pp))
    return pf_error_set(PF_EPLAN, "--schedule dualpipe: the number of microbatches (%d) must be even and at least "
                        "2 x PP = %d (half enter at each end of the pipeline)", p->grad_accum, 2 * p->pp);
  return 0;
}

int pf_plan_ep(const pf_plan *p) { return p->ep > 0 ? p->ep : 1; }
int pf_plan_warmup_passes(const pf_plan *p, int s) {
  int P = p->pp;
  if (p->schedule == PF_SCHED_1F1B) return P - s - 1;
  if (p->schedule == PF_SCHED_INTERLEAVED) return (P - s - 1) * 2 + (p->vstages - 1) * P;
  return 0;
}
int pf_plan_etp(const pf_plan *p) { return p->etp > 0 ? p->etp : p->tp; }
int pf_plan_edp(const pf_plan *p) {
  long long ranks = (long long)p->tp * p->cp * p->dp, e = (long long)pf_plan_ep(p) * pf_plan_etp(p);
  return e > 0 && ranks % e == 0 ? (int)(ranks / e) : 1;
}

/* MoE parallel folding (Megatron-Core parallel_state.py initialize_model_parallel: the expert groups are cut
 * from the same TP x CP x DP ranks of a stage, EP x ETP x EDP = TP x CP x DP; arguments.py: "num_experts must
 * be divisible by expert_model_parallel_size") */
static int check_expert_parallel(const pf_scenario *sc) {
  const pf_plan *p = &sc->plan;
  const pf_workload *w = &sc->workload;
  int ep = pf_plan_ep(p), etp = pf_plan_etp(p);
  if (!pf_workload_is_moe(w) && ep == 1) return 0; /* a dense model: ETP has nothing to split */
  if (!pf_workload_is_moe(w))
    return pf_error_set(PF_EPLAN, "--ep %d / --etp %d: model %s has no experts (expert parallelism applies to MoE "
                        "models)", ep, etp, w->id);
  if (w->experts % ep != 0)
    return pf_error_set(PF_EPLAN, "--ep %d must divide the %d experts of %s", ep, w->experts, w->id);
  if (w->moe_ffn_hidden % etp != 0)
    return pf_error_set(PF_EPLAN, "--etp %d must divide the experts' hidden size %d", etp, w->moe_ffn_hidden);
  long long ranks = (long long)p->tp * p->cp * p->dp;
  if (ranks % ((long long)ep * etp) != 0)
    return pf_error_set(PF_EPLAN, "--ep %d x --etp %d = %lld must divide TP x CP x DP = %d x %d x %d = %lld (the "
                        "ranks of a pipeline stage the expert layers are folded over)", ep, etp, (long long)ep * etp,
                        p->tp, p->cp, p->dp, ranks);
  return 0;
}

double pf_plan_recompute_share(const pf_scenario *sc, int lps) {
  const pf_plan *p = &sc->plan;
  if (p->recompute != PF_RECOMPUTE_FULL) return 0.0;
  if (p->recompute_layers <= 0 || lps <= 0) return 1.0;
  int chunks = p->schedule == PF_SCHED_INTERLEAVED && p->vstages > 1 ? p->vstages : 1;
  return fmin(1.0, (double)p->recompute_layers * chunks / lps);
}

pf_framework pf_scenario_framework(const pf_scenario *sc) {
  if (sc->framework != PF_FW_AUTO) return sc->framework;
  if (sc->workload.kind == PF_WL_LAYERS) return sc->workload.framework != PF_FW_AUTO ? sc->workload.framework
                                                                                    : PF_FW_PYTORCH;
  return sc->workload.kind == PF_WL_TRANSFORMER ? PF_FW_MEGATRON : PF_FW_PYTORCH;
}

double pf_grad_bytes(const pf_scenario *sc) {
  if (pf_scenario_framework(sc) != PF_FW_MEGATRON) return 4.0; /* AMP: fp32 parameters, fp32 gradients */
  if (sc->precision == PF_FP16) return 2.0;
  return sc->plan.grad_reduce_bf16 && (sc->precision == PF_BF16 || sc->precision == PF_FP8) ? 2.0 : 4.0;
}

int pf_plan_check(pf_scenario *sc) {
  int rc;
  if (sc->plan.grad_reduce_bf16 && sc->precision != PF_BF16 && sc->precision != PF_FP8)
    return pf_error_set(PF_EINVAL, "--grad-reduce-in-bf16 needs --precision bf16 or fp8 (%s gradients are reduced "
                        "in %s)", pf_precision_name(sc->precision), sc->precision == PF_FP16 ? "fp16" : "fp32");
  int off = sc->plan.cpu_offload_layers; /* Megatron-Core transformer_config.py's rules for CPU offloading */
  if (off > 0 && (sc->workload.kind != PF_WL_TRANSFORMER || sc->plan.pp > 1 || off >= sc->workload.layers ||
                  sc->plan.recompute != PF_RECOMPUTE_NONE || sc->graph_modules))
    return pf_error_set(PF_EINVAL, "--cpu-offloading-num-layers %d: Megatron offloads activations of a transformer "
                        "at PP 1 only, for fewer layers than its %d, without recomputation or CUDA graphs", off,
                        sc->workload.layers);
  if (sc->plan.recompute_layers > 0 && sc->plan.recompute != PF_RECOMPUTE_FULL)
    return pf_error_set(PF_EINVAL, "--recompute-num-layers applies with --recompute full (Megatron's "
                        "--recompute-granularity full --recompute-method block)");
  pf_plan_settle_defaults(sc); /* a setting on by default that this plan rules out is put off (defaults.c) */
  if ((rc = check_world(sc)) < 0 || (rc = check_model_parallel(sc)) < 0 || (rc = check_model_shape(sc)) < 0 ||
      (rc = check_batch(sc)) < 0 || (rc = pf_plan_check_sharding(sc)) < 0 || (rc = check_expert_parallel(sc)) < 0 ||
      (rc = pf_plan_check_moe(sc)) < 0 || (rc = pf_plan_check_graphs(sc)) < 0)
    return rc;
  return 0;
}

static const char *fp8_names[] = {"auto", "delayed", "current", "mxfp8", "blockwise"};

const char *pf_fp8_recipe_name(pf_fp8_recipe r) { return r >= 0 && r <= PF_FP8_BLOCKWISE ? fp8_names[r] : "?"; }

/* Blackwell and later: sm_100 (B200, GB200) and up have block-scaled (MX) FP8 tensor cores (NVIDIA Blackwell
 * architecture technical brief, 2024: second-generation Transformer Engine, micro-tensor scaling) */
static bool has_block_scaled_fp8(const pf_device *d) {
  int sm;
  return sscanf(d->arch, "sm_%d", &sm) == 1 && sm >= 100;
}

int pf_fp8_recipe_of(const pf_scenario *sc, pf_fp8_recipe *out) {
  const pf_device *d = &sc->machine.dev;
  pf_fp8_recipe r = sc->plan.fp8_recipe;
  if (r == PF_FP8_AUTO) r = has_block_scaled_fp8(d) ? PF_FP8_MXFP8 : PF_FP8_DELAYED;
  if (r == PF_FP8_MXFP8 && !has_block_scaled_fp8(d))
    return pf_error_set(PF_EINVAL, "--fp8-recipe mxfp8: %s (%s, %s) has no block-scaled FP8 tensor cores (MXFP8 "
                        "needs Blackwell, sm_100 or later); use --fp8-recipe delayed or current",
                        d->id, d->name, d->arch[0] ? d->arch : "arch not given");
  *out = r;
  return 0;
}
