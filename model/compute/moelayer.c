/* moelayer.c - the kernels of a mixture-of-experts FFN and of Multi-head Latent Attention, as Megatron-Core
 * runs them (megatron/core/transformer/moe: router.py, token_dispatcher.py, experts.py TEGroupedMLP;
 * multi_latent_attention.py), on one GPU for one microbatch of M = mbs x seq / CP tokens.
 *
 * MoE FFN.  The experts run on their own split of the stage's ranks (MoE parallel folding, plan.h): E / EP
 * experts per GPU, each split over ETP (--expert-tensor-parallel-size, TP by default as in Megatron).  The
 * rows (token x chosen expert) a GPU's experts run are the stage's routed rows / (EDP x EP), i.e.
 * M topk ETP / TP with M the attention's tokens per GPU (balanced, dropless): EP makes fewer, larger
 * grouped GEMMs of the same work; the dispatch and combine all-to-alls are priced above compute (study).
 *  router       the GEMM h -> E on the GPU's tokens (M / TP under sequence parallelism), then one fused
 *               score + top-k kernel (--moe-router-fusion, as the Megatron-MoE model zoo configs run it):
 *               reads the fp32 logits, writes the scores, the top-k probabilities and indices.
 *  sync         dropless: the tokens per expert copied to the host, which waits (hostqueue.c); with a
 *               capacity factor every expert is padded to its capacity (--moe-pad-expert-input-to-capacity)
 *               so the sizes are known and there is no synchronisation.
 *  permute      each token copied once per chosen expert into expert order: read and write
 *               M ETP / TP x topk x h elements, the rows this GPU dispatches and its experts run
 *               (moe_permute; the indices are negligible): with ETP below TP each rank routes its
 *               sequence-parallel shard of M / TP tokens, gathered over ETP after the dispatch
 *               (token_dispatcher.py MoEAlltoAllTokenDispatcher: permute, all-to-all over EP, all-gather
 *               over the expert TP group); at ETP = TP (the default) M x topk as before.
 *  experts      fc1 (gate and up) and fc2 as grouped GEMMs, one product per expert priced at its own
 *               shape (tokens of that expert x 2 f / TP x h; tokens x h x f / TP) from the device's GEMM
 *               table, each expert's rows padded to the kernel's M block (kernel.c, after DeepGEMM): a
 *               small expert's GEMM runs below a dense GEMM of the same FLOPs.  The host issues one
 *               operator per local expert: Transformer Engine's GroupedLinear (Megatron-Core's
 *               TEGroupedMLP, --moe-grouped-gemm) splits the input per expert (torch.split) and runs
 *               te_general_grouped_gemm, which on Hopper launches one cuBLAS GEMM per expert over its
 *               compute streams unless NVTE_USE_CUTLASS_GROUPED_GEMM is set
 *               (transformer_engine/common/gemm/cublaslt_gemm.cu multi_stream_cublas_gemm, NVIDIA/
 *               TransformerEngine d0067d0d: a descriptor set-up, heuristic query and launch per GEMM); TE's
 *               maintainers put the gap between those GEMMs and the module's time on the CPU overhead of
 *               such per-GEMM PyTorch calls (TransformerEngine#1499, torch.split and 2 x num_gemms
 *               torch.empty), and the Megatron-Core DeepSeek-V3 GB200 write-up runs MXFP8 grouped GEMMs the
 *               same way ("multi-stream + cuBLAS") and finds the routed experts the part still host-bound
 *               under CUDA graphs.  So E / EP operators per launch at the eager per-operator cost
 *               (hostqueue.c), and the backward's data and weight gradients likewise; TE's grouped-tensor
 *               path of 2026 (one launch, no host split) is not what the validated runs used.  Balanced and
 *               dropless by default (what published benchmarks force: the model zoo's configs,
 *               DeepSeek-V3's auxiliary-loss-free balancing), so each expert gets M topk / E tokens;
 *               --moe-imbalance r gives the busiest expert r times that and the others share the rest;
 *               --moe-rank-imbalance L gives each expert of the busiest rank L times it (a measured run's
 *               rank load, spread over the rank's experts);
 *               with a capacity factor c every expert runs c times the balanced share (padded).
 *  activation   SwiGLU over the experts' intermediate (read 2, write 1).
 *  unpermute    the expert outputs read back, weighted by their probabilities and summed per token:
 *               read M ETP / TP x topk x h, write M ETP / TP x h elements.
 *  shared       the shared experts as one dense SwiGLU MLP of width shared_ffn_hidden over all M tokens.
 * MLA (DeepSeek-V2, arXiv 2405.04434 eqs. 9-14): q_a h -> q_lora (or q directly h -> heads x qk), its
 * RMSNorm, q_b q_lora -> heads x (nope + rope) / TP, kv_a h -> kv_lora + rope, its RMSNorm, kv_b kv_lora
 * -> heads x (nope + v) / TP, the output heads x v / TP -> h.  The down projections' weights are duplicated
 * over TP (Megatron-Core's multi_latent_attention.py builds them with parallel_mode "duplicated") and run on
 * the sequence-parallel shard of the tokens, whose latents are then gathered (without SP: every token).
 * The rotary embedding as Megatron-Core applies it with its rope fusion (the default, apply_rope_fusion;
 * megatron/core/fusions/fused_mla_yarn_rope_apply.py, since MCore 0.13): the queries' rope part in place
 * (compute.c's rotary), and one kernel that splits kv_b's output into keys and values and writes each head's
 * key with the one rope head appended (mla-kv-rope): read heads x (nope + v) / TP and rope, write heads x
 * (nope + rope + v) / TP elements a token; its backward moves the same bytes the other way.  Unfused, a
 * torch.cat, these copies run at a fifth of HBM speed (0.7-0.9 TB/s on an H200:
 * calibrate/results/vm-h200-141-2026-11-27-torch-attention-mla.json).
 */
#include "moelayer.h"

#include "compute.h"

#include <string.h>

/* tokens an expert-parallel group member routes: the microbatch's tokens on this GPU */
static double tokens(const pf_scenario *sc) {
  return sc->plan.mbs * (double)sc->workload.seq / sc->plan.cp;
}

/* routed rows (token x chosen expert) per expert, balanced, as one GPU's experts see them: the stage's
 * TP x CP x DP ranks route DP x CP x M x topk rows (TP ranks share theirs) over E experts, and each expert's
 * rows are shared by its EDP = TP CP DP / (EP ETP) replicas: M topk EP ETP / (E TP); at EP 1 and ETP = TP
 * this is M topk / E, and a GPU's E / EP experts run M topk ETP / TP rows whatever EP */
static double expert_rows(const pf_scenario *sc) {
  const pf_plan *p = &sc->plan;
  return tokens(sc) * sc->workload.topk / sc->workload.experts * pf_plan_ep(p) * pf_plan_etp(p) / p->tp;
}

/* one grouped GEMM launch of `batch` experts of m rows each (kernel.c pads each to the M block) */
static int grouped(pf_kernel_list *f, const pf_scenario *sc, const char *name, double m, double n, double k,
                   double batch, double host_ops) {
  pf_kernel x = {.kind = PF_KERNEL_GEMM, .name = name, .prec = sc->precision, .layout = PF_GEMM_NN, .m = m,
                 .n = n, .k = k, .batch = batch, .host_ops = host_ops, .grouped = true};
  return pf_kernel_list_add(f, &x);
}

/* the experts' fc1 or fc2 over E products at the balanced, imbalanced or padded token counts (the busiest
 * expert's product and the others' priced apart, one host operator each) */
static int experts_gemm(pf_kernel_list *f, const pf_scenario *sc, const char *name, double n, double k) {
  const pf_workload *w = &sc->workload;
  double E = w->experts, El = E / pf_plan_ep(&sc->plan), mean = expert_rows(sc), r = pf_workload_expert_load(w);
  /* one host operator per local expert (header); a measured rank load spreads over the rank's experts */
  if (w->capacity_factor > 0 || !(r > 1.0)) {
    double load = pf_workload_routed_load(w, pf_plan_ep(&sc->plan));
    return grouped(f, sc, name, load * mean, n, k, El, El);
  }
  /* the busiest rank holds the busiest expert, its others share what the busiest leaves */
  double rest = (E * mean - r * mean) / (E - 1.0);
  if (El < 2) return grouped(f, sc, name, r * mean, n, k, 1, 1);
  return grouped(f, sc, name, r * mean, n, k, 1, 1) | grouped(f, sc, name, rest, n, k, El - 1.0, El - 1.0);
}

int pf_moe_ffn_forward(const pf_scenario *sc, pf_kernel_list *f) {
  const pf_workload *w = &sc->workload;
  const pf_plan *p = &sc->plan;
  double M = tokens(sc), t = p->tp, h = w->hidden, E = w->experts, K = w->topk, fm = w->moe_ffn_hidden;
  double el = pf_precision_bytes(sc->precision), Mr = M / (p->sp ? t : 1.0), et = pf_plan_etp(p);
  double local = expert_rows(sc) * E / pf_plan_ep(p); /* rows through this GPU's experts */
  double routed = local * pf_workload_routed_load(w, pf_plan_ep(p));
  int rc = pf_layer_gemm(f, sc, "router", Mr, E, h, 1);
  /* fp32 logits read, scores written, top-k probabilities and indices written; grouped routing reads the
   * scores once more for the group maxima */
  rc |= pf_layer_mem(f, "router-topk", Mr * E * (4.0 + 4.0 + (w->router_groups > 0 ? 4.0 : 0.0)) + Mr * K * 12.0);
  if (w->capacity_factor <= 0) {
    pf_kernel s = {.kind = PF_KERNEL_FIXED, .name = "tokens-per-expert-sync", .fixed_s = pf_host_sync_s(sc),
                   .host_ops = 1, .sync = true};
    rc |= pf_kernel_list_add(f, &s);
  }
  double Mt = M * et / t; /* tokens whose copies this GPU permutes and its experts run (header) */
  rc |= pf_layer_mem(f, "permute", 2.0 * Mt * K * h * el);
  rc |= experts_gemm(f, sc, "experts-fc1", 2.0 * fm / et, h);
  rc |= pf_layer_mem(f, "experts-activation", 3.0 * el * routed * fm / et);
  rc |= experts_gemm(f, sc, "experts-fc2", h, fm / et);
  rc |= pf_layer_mem(f, "unpermute", (Mt * K + Mt) * h * el);
  if (w->shared_ffn_hidden > 0) {
    double fs = w->shared_ffn_hidden;
    rc |= pf_layer_gemm(f, sc, "shared-fc1", M, 2.0 * fs / t, h, 1);
    rc |= pf_layer_mem(f, "shared-activation", 3.0 * el * M * fs / t);
    rc |= pf_layer_gemm(f, sc, "shared-fc2", M, h, fs / t, 1);
  }
  return rc;
}

int pf_mla_forward(const pf_scenario *sc, pf_kernel_list *f) {
  const pf_workload *w = &sc->workload;
  double M = tokens(sc), t = sc->plan.tp, h = w->hidden, a = w->heads, el = pf_precision_bytes(sc->precision);
  double qk = pf_workload_qk_dim(w), v = w->v_head_dim, ql = w->q_lora_rank, kl = w->kv_lora_rank;
  double Md = M / (sc->plan.sp ? t : 1.0); /* the down projections: duplicated over TP, on SP's shard */
  int rc = 0;
  if (ql > 0) {
    rc |= pf_layer_gemm(f, sc, "mla-q-down", Md, ql, h, 1);
    rc |= pf_layer_mem(f, "mla-q-norm", 2.0 * el * Md * ql);
    rc |= pf_layer_gemm(f, sc, "mla-q-up", M, a * qk / t, ql, 1);
  } else {
    rc |= pf_layer_gemm(f, sc, "mla-q", M, a * qk / t, h, 1);
  }
  rc |= pf_layer_gemm(f, sc, "mla-kv-down", Md, kl + w->qk_rope_dim, h, 1);
  rc |= pf_layer_mem(f, "mla-kv-norm", 2.0 * el * Md * kl);
  rc |= pf_layer_gemm(f, sc, "mla-kv-up", M, a * (w->qk_nope_dim + v) / t, kl, 1);
  rc |= pf_layer_mem(f, "mla-kv-rope", el * M * (a / t * (2.0 * w->qk_nope_dim + w->qk_rope_dim + 2.0 * v) +
                                                  w->qk_rope_dim));
  rc |= pf_layer_gemm(f, sc, "proj", M, h, a * v / t, 1);
  return rc;
}

/* which part of the split a MoE kernel belongs to (NULL: not one of them) */
static double *part(pf_moe_split *s, const char *name) {
  if (!name) return NULL;
  if (strncmp(name, "router", 6) == 0) return &s->router;
  if (strcmp(name, "tokens-per-expert-sync") == 0) return &s->host_sync;
  if (strcmp(name, "permute") == 0) return &s->permute;
  if (strncmp(name, "experts-", 8) == 0) return &s->experts;
  if (strcmp(name, "unpermute") == 0) return &s->unpermute;
  if (strncmp(name, "shared-", 7) == 0) return &s->shared;
  return NULL;
}

int pf_moe_split_add(const pf_kernel_env *env, const pf_kernel_list *l, double times, pf_moe_split *s) {
  for (int i = 0; i < l->n && times > 0; i++) {
    double *x = part(s, l->k[i].name);
    if (!x) continue;
    pf_kernel_cost c;
    int rc = pf_kernel_cost_eval(env, &l->k[i], &c);
    if (rc < 0) return rc;
    *x += times * (l->k[i].count > 0 ? l->k[i].count : 1.0) * c.time_s;
  }
  return 0;
}
