/* memory.c - memory per GPU (see memory.h for the model and its sources).
 *
 * Activation bytes per layer per microbatch, b = mbs, s = seq, h = hidden,
 * a = heads, t = TP, kv = KV width (h g/a), f = FFN width, 2-byte activations:
 *   attention   7 sbh + 4 sb kv  + 5 a s^2 b   (QKV input, Q, K, V, proj input,
 *               dropout mask; softmax output, its dropout mask and output)
 *   MLP         3 sbh + 4 sbf    (GPT: fc1 input, GeLU in/out, dropout mask)
 *               3 sbh + 6 sbf    (SwiGLU: the two fc1 halves and their product)
 *   norms       4 sbh
 * which for GPT (kv = h, f = 4h) is Korthikanti's sbh (34 + 5 a s / h).
 * Tensor parallelism divides everything except 10 sbh (norm inputs, the
 * inputs of QKV and fc1, dropout masks) unless sequence parallelism is on.
 * Selective recomputation drops the 5 a s^2 b term (as does FlashAttention);
 * full recomputation keeps only each layer's input, 2 sbh (/t with SP).
 *
 * FP8 (Transformer Engine): the Linear, LayerNormLinear and LayerNormMLP
 * modules keep the FP8-cast input of each GEMM (1 byte per element) for the
 * weight-gradient GEMM instead of the bf16 tensor, so the inputs of QKV and
 * fc1 (2 sbh, replicated unless SP) and of proj and fc2 (sbh + sbf, split by
 * TP) are halved; the attention core (Q, K, V, softmax) and the activation
 * function's input stay bf16 (TE runs them in bf16), as does the full
 * recomputation checkpoint.  The FP8 copies of the layers' weights (and their
 * transposes or column-wise copies) add 2 B per parameter (2 + 2/32 with
 * MXFP8), counted under weights.
 *
 * Sharding (job/shard.c).  With N the ranks the state is sharded over (DP x CP, or the ranks of that group
 * inside a node for HYBRID_SHARD: pf_plan_shard_size) the ZeRO paper's model-state terms per GPU
 * (Rajbhandari et al., arXiv 1910.02054, section 5.1 and Figure 1) are
 *   ZeRO-1 (P_os)      weights + gradients + optimizer / N
 *   ZeRO-2 (P_os+g)    weights + (gradients + optimizer) / N
 *   ZeRO-3 (P_os+g+p)  (weights + gradients + optimizer) / N
 * with this file's bytes per parameter (2 B weights, 4 B fp32 main gradients, 12 B Adam state).  From ZeRO-2
 * on, each FSDP unit's gradient is produced unsharded before its reduce-scatter: one unit's gradient buffer
 * is kept (the largest unit); ZeRO-3 also holds the gathered parameters of the unit computing and of the
 * prefetched ones (1 + --fsdp-prefetch units), the "unsharded working set" of the PyTorch FSDP paper (Zhao et
 * al., VLDB 2023, arXiv 2304.11277, section 3.2: peak = sharded state + the largest unsharded units).  The
 * unit is a transformer layer (FSDP's transformer_auto_wrap_policy, FSDP2's fully_shard per block,
 * Megatron-FSDP's per-module buckets), or the embedding / output layer where those are larger.  Layer lists
 * are one unit.
 */
#include "memory.h"

#include "core/core.h"

#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#define GiB (1024.0 * 1024.0 * 1024.0)

/* Framework overhead per GPU: CUDA/HIP context, NCCL/RCCL buffers, allocator
 * fragmentation.  Measured contexts take 0.5-1 GiB; NCCL reserves a few
 * hundred MiB per communicator; PyTorch's caching allocator typically leaves
 * 5-10 % unused.  We charge 2 GiB + 5 % of the rest (assumption, documented
 * in docs/model.md). */
static double overhead_bytes(double rest) { return 2.0 * GiB + 0.05 * rest; }

/* Multi-head Latent Attention's activations beyond the dense formula's (bytes per token, 2-byte elements, before
 * the element factor): the formula counts the projections' input 2h, a dropout mask h and the output
 * projection's input 2h (h at FP8); MLA also keeps its latents (q_a and kv_a outputs, the kv one with its rope
 * part) and their RMSNorm outputs, the queries, keys and values flash attention saves (heads x (2 qk + v)), and
 * its output is heads x v wide, not h: the attention keeps it in bf16 and, at FP8, the output projection an
 * FP8 copy; DeepSeek-V3 keeps one E5M6 copy (1.5 B) for both (--fp8-activation-cache, arXiv 2412.19437 section
 * 3.3.3).  mla_up_proj (Megatron-Core multi_latent_attention.py, recompute_up_proj) drops the up projections'
 * outputs and the latents' norm outputs: recomputed from the latents before the backward. */
static double mla_extra(const pf_scenario *sc, unsigned mods) {
  const pf_workload *w = &sc->workload;
  double h = w->hidden, a = w->heads, qk = pf_workload_qk_dim(w), v = w->v_head_dim;
  double ql = w->q_lora_rank, kl = w->kv_lora_rank, r = w->qk_rope_dim;
  bool up = mods & PF_RECOMPUTE_MOD_MLA_UP_PROJ;
  double lat = 2.0 * (ql + (kl + r)) + (up ? 0.0 : 2.0 * (ql + kl));
  double qkv = up ? 0.0 : 2.0 * a * (2.0 * qk + v);
  double o = sc->precision != PF_FP8 ? 2.0 * (a * v - h)
             : sc->plan.fp8_act_cache ? 1.5 * a * v - h : 2.0 * a * v + (a * v - h);
  return lat + qkv + o;
}

double pf_memory_act_per_layer(const pf_scenario *sc) {
  const pf_workload *w = &sc->workload;
  const pf_plan *p = &sc->plan;
  double b = p->mbs, s = (double)w->seq / p->cp, h = w->hidden, a = w->heads, t = p->tp;
  double kv = h * w->kv_heads / w->heads, f = w->ffn_hidden;
  double el = pf_precision_bytes(sc->precision) / 2.0; /* formulas count 2-byte activations */
  if (p->recompute == PF_RECOMPUTE_FULL) return el * 2.0 * s * b * h / (p->sp ? t : 1.0);
  unsigned mods = pf_plan_recompute_modules(p);
  double sbh = s * b * h;
  double attn_lin = pf_workload_is_mla(w) ? 5 * sbh + s * b * mla_extra(sc, mods) : 7 * sbh + 4 * s * b * kv;
  double mlp = 3 * sbh + (w->swiglu ? 6.0 : 4.0) * s * b * f;
  double norms = 4 * sbh;
  double scores = 5.0 * a * s * s * b;
  if ((mods & PF_RECOMPUTE_MOD_CORE_ATTN) || p->flash_attn) scores = 0;
  double replicated = p->sp ? 0.0 : 10.0 * sbh;
  double split = attn_lin + mlp + norms - replicated;
  if (sc->precision == PF_FP8) { /* GEMM inputs kept in FP8: half of their 2-byte count */
    double rep_in = 2.0 * sbh, split_in = sbh + s * b * f;
    if (p->sp) split -= rep_in + split_in;
    else replicated -= rep_in, split -= split_in;
  }
  /* layernorm (Megatron-Core: output-discarding checkpoints of input_layernorm and pre_mlp_layernorm, with FP8
   * since MCore v0.14): the norms' outputs, the inputs of QKV (MLA's down projections) and fc1, are not kept */
  if (mods & PF_RECOMPUTE_MOD_LAYERNORM) {
    double in = (sc->precision == PF_FP8 ? 1.0 : 2.0) * 2.0 * sbh;
    if (p->sp) split -= in;
    else replicated -= in;
  }
  return el * (replicated + (split + scores) / t);
}

/* What a checkpointed MLP (mlp, moe) adds back of its input, in units of h a token: the checkpoint keeps the
 * pre-MLP norm's output in bf16, where the layer formula counts fc1's FP8 copy at FP8 (half) and nothing when
 * layernorm discards the norm's output. */
static double checkpoint_input(const pf_scenario *sc, unsigned mods) {
  bool fp8 = sc->precision == PF_FP8;
  return (fp8 ? 1.0 : 0.0) + ((mods & PF_RECOMPUTE_MOD_LAYERNORM) ? (fp8 ? 1.0 : 2.0) : 0.0);
}

/* What a MoE layer keeps beyond a dense one's MLP (bytes per token, 2-byte elements): the dense layer's MLP
 * after its input (a dropout mask h, fc1's output 4 f and the activation's 2 f, the latter 1 f at FP8) becomes
 * the mask, the router's fp32 scores (4 E), the dispatched tokens (the experts' fc1 input, 2 topk h; 1 topk h at
 * FP8, Transformer Engine's GroupedLinear keeps its FP8 copy), fc1's output (the SwiGLU input, 4 topk f; 2 topk
 * f with DeepSeek-V3's FP8 caching, --fp8-activation-cache) and the activation's output (fc2's input, 2 topk
 * f, 1 at FP8, none with --recompute-modules moe_act), the shared experts' fc1 output and activation (4 fs +
 * 2 fs, the latter 1 fs at FP8), and at FP8 the router's bf16 input (h, beside fc1's FP8 copy the dense
 * formula counts) unless layernorm is recomputed.  Megatron-Core v0.13 applies the routing probabilities in
 * the activation (moe/README "Memory efficient token permutation"), so the experts' output is not kept.  Rows
 * padded to capacity with a capacity factor; dropless, the busiest rank's share of them (pf_workload_rank_load:
 * the GPU that runs out of memory first).  Split over TP like the dense MLP.  Under --recompute-modules moe
 * (Megatron-Core checkpoints the MoE layer) the layer keeps only the mask and its input (checkpoint_input). */
static double moe_act_delta(const pf_scenario *sc) {
  const pf_workload *w = &sc->workload;
  const pf_plan *p = &sc->plan;
  double sb = (double)w->seq / p->cp * p->mbs, h = w->hidden, K = w->topk, fm = w->moe_ffn_hidden;
  double rows = K * pf_workload_routed_load(w, pf_plan_ep(p));
  double el = pf_precision_bytes(sc->precision) / 2.0;
  if (p->recompute == PF_RECOMPUTE_FULL) return 0.0; /* only the layer's input is kept */
  unsigned mods = pf_plan_recompute_modules(p);
  bool fp8 = sc->precision == PF_FP8;
  double a8 = fp8 ? 1.0 : 2.0; /* an FP8-cast GEMM input, in 2-byte units of 2 */
  double dense = h + (w->swiglu ? 4.0 + a8 : 2.0 + a8 / 2.0) * w->ffn_hidden;
  double moe = h + 4.0 * w->experts + a8 * rows * h + (fp8 && p->fp8_act_cache ? 2.0 : 4.0) * rows * fm +
               ((mods & PF_RECOMPUTE_MOD_MOE_ACT) ? 0.0 : a8 * rows * fm);
  if (w->shared_ffn_hidden > 0) moe += (4.0 + a8) * w->shared_ffn_hidden;
  if (fp8 && !(mods & PF_RECOMPUTE_MOD_LAYERNORM)) moe += h;
  if (mods & PF_RECOMPUTE_MOD_MOE) moe = h + checkpoint_input(sc, mods); /* the mask, and the layer's input */
  return el * sb * (moe - dense) / p->tp;
}

/* A dense layer under --recompute-modules mlp (Megatron-Core checkpoints the MLP, tensor_parallel.checkpoint or
 * TE's te_checkpoint: the input kept, every activation inside recomputed): the MLP keeps its input and the
 * dropout mask; what the layer formula counted beyond them (fc1's output and the activation's, the FP8 copy of
 * fc2's input) goes.  Bytes per layer and microbatch, negative. */
static double mlp_recompute_delta(const pf_scenario *sc) {
  const pf_workload *w = &sc->workload;
  const pf_plan *p = &sc->plan;
  unsigned mods = pf_plan_recompute_modules(p);
  if (p->recompute != PF_RECOMPUTE_SELECTIVE || !(mods & PF_RECOMPUTE_MOD_MLP)) return 0.0;
  double sb = (double)w->seq / p->cp * p->mbs, h = w->hidden, f = w->ffn_hidden, t = p->tp;
  double el = pf_precision_bytes(sc->precision) / 2.0;
  double fterms = (w->swiglu ? 6.0 : 4.0) - (sc->precision == PF_FP8 ? 1.0 : 0.0); /* as counted, FP8 halving in */
  return el * sb * (checkpoint_input(sc, mods) * h / (p->sp ? t : 1.0) - fterms * f / t);
}

/* FP8 weight copies per parameter of the transformer layers, kept across the microbatches of a step besides
 * the bf16 weights (TE caches them when Megatron passes is_first_microbatch): delayed and current scaling
 * keep the FP8 weight and its transpose (Hopper's FP8 GEMM takes both operands K-major: the data gradient
 * reads W^T), 2 B; MXFP8 keeps row- and column-wise copies with one e8m0 scale per 32 elements, 2 + 2/32 B
 * (compute/fp8.c).  0 at other precisions. */
static double fp8_weight_copy_bytes(const pf_scenario *sc) {
  pf_fp8_recipe r;
  if (sc->precision != PF_FP8) return 0.0;
  if (pf_fp8_recipe_of(sc, &r) < 0) r = PF_FP8_DELAYED; /* the prediction reports the error */
  return r == PF_FP8_MXFP8 ? 2.0 + 2.0 / 32.0 : 2.0;
}

/* Microbatches whose activations a middle stage s keeps at the peak (uneven stages, where a middle stage may
 * hold more layers than the first): 1F1B warms up with P - s forwards (Narayanan et al. 2021, sec. 2.2);
 * interleaved with (P - s - 1) x 2 + (V - 1) x P + 1 chunk forwards (Megatron-LM schedules.py's warm-up),
 * V chunks to a microbatch; GPipe all M. */
static double inflight_stage(const pf_plan *p, int s) {
  double m = p->grad_accum, x = p->schedule == PF_SCHED_GPIPE ? m : p->pp - s;
  if (p->schedule == PF_SCHED_INTERLEAVED)
    x = (pf_plan_warmup_passes(p, s) + 1.0) / p->vstages;
  return x < m ? x : m;
}

/* Layers x microbatches of activations stage s holds at its peak under the interleaved schedule when its model
 * chunks hold different numbers of layers (uneven stages: --account-for-embedding-in-pipeline-split leaves the
 * first chunk only the embedding): Megatron-Core's schedule (schedules.py, microbatch group P) runs forward k on
 * chunk (k mod PV) / P and backward k on chunk V - 1 - (k mod PV) / P; W warm-up forwards (pf_plan_warmup_passes),
 * then a forward and a backward a step, each backward freeing its own forward's activations.  The forwards in
 * flight are counted chunk by chunk, each with its chunk's layers, over a period of steady state.  -1 where the
 * chunks are even (inflight_stage x the stage's layers is exact there). */
static double chunk_layers_inflight(const pf_scenario *sc, int s) {
  const pf_plan *p = &sc->plan;
  pf_pp_layout l;
  if (p->schedule != PF_SCHED_INTERLEAVED || !pf_plan_uneven(p) || pf_plan_layout(sc, &l) < 0) return -1;
  int P = p->pp, V = p->vstages;
  long period = (long)P * V, total = (long)p->grad_accum * V, W = pf_plan_warmup_passes(p, s);
  if (W + 1 > total) W = total - 1;
  double held = 0, peak = 0;
  for (long k = 0; k <= W; k++) held += l.layers[(k % period) / P * P + s];
  peak = held;
  for (long i = 0; W + 1 + i < total && i < 2 * period; i++) {
    held -= l.layers[(V - 1 - (i % period) / P) * P + s]; /* backward i, then the next forward */
    held += l.layers[(W + 1 + i) % period / P * P + s];
    peak = fmax(peak, held);
  }
  return peak;
}

/* Ranks the optimizer state (level 1 on), the gradients (2 on) and the parameters (3) are divided by. */
typedef struct shard_div { double opt, grad, param; } shard_div;

static shard_div shard_divs(const pf_scenario *sc) {
  const pf_plan *p = &sc->plan;
  int z = pf_plan_zero(p);
  double n = z >= 2 ? pf_plan_shard_size(sc) : (double)p->dp * (sc->workload.kind == PF_WL_TRANSFORMER ? p->cp : 1);
  return (shard_div){z >= 1 ? n : 1.0, z >= 2 ? n : 1.0, z >= 3 ? n : 1.0};
}

/* The unsharded working set of the largest unit (unit parameters per GPU): its gradient buffer from ZeRO-2 on,
 * and at ZeRO-3 the gathered parameters of 1 + prefetch units. */
static double working_set(const pf_plan *p, double unit, double wbytes, double grad_bytes) {
  int z = pf_plan_zero(p);
  if (z < 2) return 0;
  return unit * grad_bytes + (z >= 3 ? (1.0 + p->fsdp_prefetch) * unit * wbytes : 0.0);
}

/* A GPU's share of Pe routed-expert parameters: E / EP experts, each split over ETP (MoE parallel folding,
 * plan.h; Megatron-Core keeps expert and non-expert parameters in separate buffers, the experts' gradients
 * reduced and, with the distributed optimizer, their optimizer state sharded over the expert-data-parallel
 * group EDP = TP CP DP / (EP ETP): megatron/core/distributed/distributed_data_parallel.py
 * expert_parallel_buffers).  The dispatch and combine buffers of the all-to-all dispatcher are the permuted
 * tokens already counted in moe_act_delta. */
static double expert_params(const pf_scenario *sc, double Pe) {
  return Pe / ((double)pf_plan_ep(&sc->plan) * pf_plan_etp(&sc->plan));
}

/* The divisors of the routed experts' state: the expert-data-parallel ranks EDP = TP CP DP / (EP ETP) hold the
 * same experts, so sharding spreads an expert's optimizer state (ZeRO-1), gradients (ZeRO-2) and weights
 * (ZeRO-3) over at most EDP ranks, never over the whole DP x CP group the dense part is sharded over
 * (Megatron-Core: expert_parallel_buffers reduced and sharded over the expert-data-parallel group,
 * distributed_data_parallel.py; Megatron-FSDP and PyTorch FSDP2 shard experts over the expert-data-parallel
 * mesh, torchtitan's "dp_shard_mod_ep").  The shard group inside a node (HYBRID_SHARD) is taken as min(its
 * size, EDP).  At EP = 1 and ETP = TP, EDP = DP x CP: the dense divisors.  (Until 2026-11 the experts'
 * gradients and weights were divided by the whole DP x CP shard group at ZeRO-2/3, EP times too few bytes.) */
static shard_div expert_shard(const pf_scenario *sc) {
  const pf_plan *p = &sc->plan;
  int z = pf_plan_zero(p);
  double e = pf_plan_edp(p);
  if (z >= 2 && p->shard_group == PF_SHARD_NODE) e = fmin(e, pf_plan_shard_size(sc));
  return (shard_div){z >= 1 ? e : 1.0, z >= 2 ? e : 1.0, z >= 3 ? e : 1.0};
}

static double inflight(const pf_plan *p) {
  double m = p->grad_accum;
  switch (p->schedule) {
  case PF_SCHED_GPIPE: return m;
  case PF_SCHED_INTERLEAVED: {
    double x = p->pp * (1.0 + (p->pp - 1.0) / (p->pp * (double)p->vstages));
    return x < m ? x : m;
  }
  case PF_SCHED_1F1B: break;
  case PF_SCHED_DUALPIPE: break; /* per rank, its two stages (stage_mem) */
  }
  return p->pp < m ? p->pp : m;
}

/* Bytes per parameter of the weights, the optimizer state and the gradients. */
static void state_bytes(const pf_scenario *sc, double *wbytes, double *opt_bytes, double *grad_bytes) {
  *wbytes = pf_precision_bytes(sc->precision);
  if (sc->precision == PF_FP8) *wbytes = 2.0; /* FP8 training keeps bf16 weights (Transformer Engine) */
  /* fp32 master weights + Adam m and v (4 + 4 B, or 2 + 2 B with --bf16-moments) */
  double moments = sc->plan.bf16_moments ? 4.0 : 8.0;
  *opt_bytes = 4.0 + moments;
  if (sc->precision == PF_FP32 || sc->precision == PF_TF32) *opt_bytes = moments; /* no separate master copy */
  *grad_bytes = pf_grad_bytes(sc); /* the main-grad buffer: fp32, or fp16 / bf16 (plan.h) */
}

/* The activations one microbatch leaves on a stage's lps layers (moe of them MoE, mtp MTP modules' layers), at
 * apl a layer (pf_memory_act_per_layer) and the MLP's and the experts' terms. */
static double layer_acts(const pf_scenario *sc, double apl, int lps, int moe, int mtp) {
  double act = apl * lps + (lps - moe) * mlp_recompute_delta(sc);
  if (pf_workload_is_moe(&sc->workload)) act += (moe + mtp) * moe_act_delta(sc) + mtp * apl;
  return act;
}

/* One pipeline stage's weights, gradients, optimizer state, activations (mb_inflight microbatches) and
 * unsharded working set on one GPU (m's other fields left zero). */
static void stage_mem(const pf_scenario *sc, int stage, double mb_inflight, pf_memory *m) {
  const pf_workload *w = &sc->workload;
  const pf_plan *p = &sc->plan;
  memset(m, 0, sizeof *m);
  double wbytes, opt_bytes, grad_bytes;
  state_bytes(sc, &wbytes, &opt_bytes, &grad_bytes);
  shard_div sd = shard_divs(sc);
  int tp = p->tp, pp = p->pp;
  double layer = pf_workload_layer_params(w) / tp;
  double emb = pf_workload_embedding_params(w, tp) / tp;
  double out = pf_workload_output_params(w, tp) / tp;
  double apl = pf_memory_act_per_layer(sc);
  double fp8_copy = fp8_weight_copy_bytes(sc);
  int lps = pf_plan_stage_layers(sc, stage), first = pf_plan_stage_first_layer(sc, stage);
  int moe_layers = pf_workload_moe_layers_in(w, first, lps); /* the stage's own; nmoe adds MTP's */
  int nmoe = moe_layers + (stage == pp - 1 ? w->mtp_layers : 0);
  /* MoE: the routed experts over EP x ETP, the rest over TP (expert_params); MTP on the last stage */
  double Pe = nmoe * pf_workload_routed_expert_params(w);
  double Pl = pf_workload_extended(w)
                  ? (pf_workload_layers_params(w, first, lps) + (stage == pp - 1 ? pf_workload_mtp_params(w) : 0.0) -
                     Pe) / tp + expert_params(sc, Pe)
                  : lps * layer;
  double P = Pl + (stage == 0 ? emb : 0) + (stage == pp - 1 ? out : 0);
  if (pp > 1 && stage == pp - 1 && w->tied_embeddings) P += emb; /* Megatron keeps a copy for the tied output */
  double chunked = lps > 0 ? chunk_layers_inflight(sc, stage) : -1; /* uneven interleaved chunks */
  double mb_layers = chunked >= 0 ? chunked / lps : mb_inflight;
  if (p->cpu_offload_layers > 0 && lps > 0) /* offloaded layers' activations wait in host memory (plan.h) */
    mb_layers *= fmax(0.0, (double)(lps - p->cpu_offload_layers) / lps);
  double act = layer_acts(sc, apl, lps, moe_layers, stage == pp - 1 ? w->mtp_layers : 0) * mb_layers;
  double rf = pf_plan_recompute_share(sc, lps);
  if (rf > 0 && rf < 1) { /* block recomputation: the layers it leaves keep what they keep without recomputation */
    static _Thread_local pf_scenario nr; /* 13 kB: not on the stack */
    nr = *sc;
    nr.plan.recompute = PF_RECOMPUTE_NONE;
    double none = layer_acts(&nr, pf_memory_act_per_layer(&nr), lps, moe_layers, stage == pp - 1 ? w->mtp_layers : 0);
    act = rf * act + (1 - rf) * none * mb_layers;
  }
  /* stage 0 also keeps the embedding output; the last stage the logits in fp32 (4 s b V / t) */
  double sbh = (double)w->seq / p->cp * p->mbs * w->hidden;
  if (stage == 0) act += mb_inflight * 2.0 * sbh / (p->sp ? tp : 1);
  if (stage == pp - 1) act += 4.0 * w->seq / p->cp * p->mbs * (double)pf_workload_padded_vocab(w, tp) / tp;
  /* the experts' state is sharded over EDP only (expert_params), the rest over the shard group: the optimizer
   * state from ZeRO-1, the gradients from ZeRO-2 and the weights at ZeRO-3 (expert_shard) */
  double Pex = expert_params(sc, Pe);
  shard_div se = expert_shard(sc);
  m->optimizer_B = (P - Pex) * opt_bytes / sd.opt + Pex * opt_bytes / se.opt;
  double unit = fmax(layer, fmax(stage == 0 ? emb : 0, stage == pp - 1 ? out : 0));
  m->working_B = working_set(p, unit, wbytes, grad_bytes);
  /* --fp8-param-gather: the layers' weights in FP8 only (their bf16 copy dropped; the norms and the router,
   * a small share, counted with them), the embedding and output layer bf16 */
  bool fp8_only = sc->plan.fp8_param_gather && fp8_copy > 0;
  double dense_bf16 = fp8_only ? P - Pl : P - Pex, expert_bf16 = fp8_only ? 0.0 : Pex;
  m->weights_B = (dense_bf16 * wbytes + (Pl - Pex) * fp8_copy) / sd.param +
                 (expert_bf16 * wbytes + Pex * fp8_copy) / se.param;
  m->gradients_B = (P - Pex) * grad_bytes / sd.grad + Pex * grad_bytes / se.grad;
  m->activations_B = act;
  m->act_per_layer_B = apl;
  m->inflight_microbatches = mb_inflight;
  m->worst_stage = stage;
}

void pf_memory_estimate(const pf_scenario *sc, pf_memory *m) {
  const pf_workload *w = &sc->workload;
  const pf_plan *p = &sc->plan;
  memset(m, 0, sizeof *m);
  m->capacity_B = sc->machine.dev.memory_B;
  double wbytes, opt_bytes, grad_bytes;
  state_bytes(sc, &wbytes, &opt_bytes, &grad_bytes);
  shard_div sd = shard_divs(sc);

  if (w->kind != PF_WL_TRANSFORMER) {
    double P = w->params;
    m->weights_B = P * wbytes / sd.param;
    m->gradients_B = P * grad_bytes / sd.grad;
    m->optimizer_B = P * opt_bytes / sd.opt;
    m->working_B = working_set(p, P, wbytes, grad_bytes);
    double act = w->act_bytes_per_sample * p->mbs;
    if (sc->precision != PF_FP32 && sc->precision != PF_TF32) act *= 0.55; /* AMP: fp16 activations, fp32 master copies of some */
    m->act_per_layer_B = act;
    m->activations_B = act;
    m->inflight_microbatches = 1;
  } else {
    /* worst stage: the one with the largest parameters + activations. Stage 0 holds the
     * embedding and the most in-flight microbatches; the last stage holds the output layer.
     * The first and the last stage; every stage when they differ: uneven stages, each with its own layers
     * (pplayout.c), or a MoE model's stages, which differ by their MoE layers (first dense, every n-th). */
    int pp = p->pp;
    double infl = inflight(p), best = -1;
    bool all = pf_workload_is_moe(w) || pf_plan_uneven(p);
    if (p->schedule == PF_SCHED_DUALPIPE) { /* rank d holds stage d and stage P - 1 - d (pipeline.c) */
      /* DeepSeek-V3 Table 2: "Parameter 2x", "Activation PP + 1" chunks a rank, (PP + 1) / 2 of each stage */
      for (int d = 0; d < pp / 2; d++) {
        pf_memory a, b;
        stage_mem(sc, d, (pp + 1) / 2.0, &a);
        stage_mem(sc, pp - 1 - d, (pp + 1) / 2.0, &b);
        /* the optimizer state of a stage's parameters sharded over the 2 x DP ranks that hold a copy: the
         * copies' gradients are summed across the mirror ranks (deepseek-ai/DualPipe
         * examples/example_dualpipe.py), one update per parameter; the report does not say (an assumption) */
        a.weights_B += b.weights_B, a.gradients_B += b.gradients_B;
        a.optimizer_B = 0.5 * (a.optimizer_B + b.optimizer_B);
        a.activations_B += b.activations_B, a.working_B = fmax(a.working_B, b.working_B);
        a.inflight_microbatches = pp + 1;
        double t = a.weights_B + a.gradients_B + a.optimizer_B + a.activations_B + a.working_B;
        if (t > best) best = t, *m = a;
      }
    }
    for (int s = 0; s < (all ? pp : pp > 1 ? 2 : 1) && p->schedule != PF_SCHED_DUALPIPE; s++) {
      int stage = all || s == 0 ? s : pp - 1;
      double mb_inflight = stage == 0 ? infl : inflight_stage(p, stage); /* the last: 1 under 1F1B */
      pf_memory a;
      stage_mem(sc, stage, mb_inflight, &a);
      double t = a.weights_B + a.gradients_B + a.optimizer_B + a.activations_B + a.working_B;
      if (t > best) best = t, *m = a;
    }
    m->capacity_B = sc->machine.dev.memory_B;
  }
  double rest = m->weights_B + m->gradients_B + m->optimizer_B + m->activations_B + m->working_B;
  m->overhead_B = overhead_bytes(rest);
  m->total_B = rest + m->overhead_B;
}

int pf_memory_check(const pf_scenario *sc, const pf_memory *m) {
  if (m->total_B <= m->capacity_B) return 0;
  /* a run that was measured fitted: where only the framework allowance (an assumption) takes it over, the
   * allowance was too large for it, and its time is still a prediction to check (pf_predict warns) */
  if (sc->ran && m->total_B - m->overhead_B <= m->capacity_B) return 0;
  const pf_plan *p = &sc->plan;
  /* what would save memory, leaving out what is already set */
  char hint[256] = "";
  if (sc->workload.kind == PF_WL_TRANSFORMER) {
    const char *tries[7];
    int n = 0;
    if (!p->dist_opt && p->dp * p->cp > 1) tries[n++] = "--dist-opt";
    else if (pf_plan_zero(p) < 3 && p->dp * p->cp > 1) tries[n++] = "--zero 3";
    if (p->recompute == PF_RECOMPUTE_NONE) tries[n++] = "--recompute selective or full";
    else if (p->recompute == PF_RECOMPUTE_SELECTIVE) tries[n++] = "--recompute full";
    if (!p->sp && p->tp > 1) tries[n++] = "--sp";
    if (!p->flash_attn) tries[n++] = "--flash-attn";
    if (p->mbs > 1) tries[n++] = "a smaller --mbs";
    tries[n++] = "more --pp/--tp or more GPUs";
    snprintf(hint, sizeof hint, "; try ");
    for (int i = 0; i < n; i++) {
      size_t l = strlen(hint);
      snprintf(hint + l, sizeof hint - l, "%s%s", i ? (i == n - 1 ? " or " : ", ") : "", tries[i]);
    }
  } else if (p->mbs > 1) {
    snprintf(hint, sizeof hint, "; try a smaller --mbs");
  } else {
    snprintf(hint, sizeof hint, "; more memory per GPU is needed");
  }
  char work[64] = "";
  if (m->working_B > 0) snprintf(work, sizeof work, "unsharded units %.1f, ", m->working_B / GiB);
  return pf_error_set(PF_ENOFIT,
                      "does not fit: needs %.1f GiB per GPU (weights %.1f, gradients %.1f, optimizer %.1f, "
                      "activations %.1f, %soverhead %.1f) but %s has %.1f GiB%s",
                      m->total_B / GiB, m->weights_B / GiB, m->gradients_B / GiB, m->optimizer_B / GiB,
                      m->activations_B / GiB, work, m->overhead_B / GiB, sc->machine.dev.id, m->capacity_B / GiB, hint);
}
