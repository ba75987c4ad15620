/* moe.c - mixture-of-experts layers, Multi-head Latent Attention and multi-token prediction: which layers
 * are MoE, parameters total and active, model FLOPs (active experts only).
 *
 * A MoE layer's FFN is a router (a linear layer h -> E, Shazeer et al. 2017; Megatron-Core's TopKRouter),
 * E routed experts of width moe_ffn_hidden of which each token uses topk, and shared experts every token
 * uses (DeepSeekMoE, arXiv 2401.06066), all SwiGLU (three matrices).  Active parameters count the router,
 * topk routed experts and the shared ones: counting all experts in the model FLOPs is the MFU bug of
 * AI-Hypercomputer/maxtext PR #678.
 *
 * MLA (DeepSeek-V2, arXiv 2405.04434 section 2.1, and deepseek-ai/DeepSeek-V3 inference/model.py class
 * MLA): queries through a low-rank h -> q_lora -> heads x (nope + rope) (directly h -> heads x (nope + rope)
 * when q_lora_rank is 0), keys and values through h -> kv_lora + rope, then kv_lora -> heads x (nope + v),
 * an RMSNorm on each latent, and the output heads x v -> h.  The attention core multiplies queries and keys
 * of nope + rope and weights values of v per head, so its FLOPs per head are 2 s^2 (qk + v) forward.
 *
 * MTP (DeepSeek-V3, arXiv 2412.19437 section 2.2): each module is two RMSNorms, a projection 2h -> h and one
 * transformer layer (a MoE layer in DeepSeek-V3), sharing the embedding and the output head with the main
 * model; its parameters are reported apart (DeepSeek-V3's 671 B exclude its 14 B), its FLOPs are counted
 * as Megatron-LM's num_floating_point_operations counts them (mtp_num_layers).
 */
#include "spec.h"

#include "core/core.h"

bool pf_workload_is_moe(const pf_workload *w) { return w->kind == PF_WL_TRANSFORMER && w->experts > 0; }
bool pf_workload_is_mla(const pf_workload *w) { return w->kind == PF_WL_TRANSFORMER && w->kv_lora_rank > 0; }

/* the general counting below, rather than workload.c's Megatron GPT/Llama form */
bool pf_workload_extended(const pf_workload *w) {
  return pf_workload_is_moe(w) || pf_workload_is_mla(w) || w->head_dim > 0 || w->qk_norm || w->attn_bias ||
         w->mtp_layers > 0 || w->window > 0;
}

bool pf_workload_moe_layer(const pf_workload *w, int i) {
  if (!pf_workload_is_moe(w) || i < w->first_dense) return false;
  int every = w->moe_every > 1 ? w->moe_every : 1;
  return (i + 1) % every == 0;
}

int pf_workload_moe_layers_in(const pf_workload *w, int first, int n) {
  int c = 0;
  for (int i = first; i < first + n; i++) c += pf_workload_moe_layer(w, i);
  return c;
}

double pf_workload_head_dim(const pf_workload *w) {
  return w->head_dim > 0 ? w->head_dim : (double)w->hidden / w->heads;
}
double pf_workload_qk_dim(const pf_workload *w) {
  return pf_workload_is_mla(w) ? (double)w->qk_nope_dim + w->qk_rope_dim : pf_workload_head_dim(w);
}
double pf_workload_v_dim(const pf_workload *w) {
  return pf_workload_is_mla(w) ? (double)w->v_head_dim : pf_workload_head_dim(w);
}

/* matrix weights of the attention block (what its GEMMs multiply by) */
static double attn_matrices(const pf_workload *w) {
  double h = w->hidden, a = w->heads, qk = pf_workload_qk_dim(w), v = pf_workload_v_dim(w);
  if (pf_workload_is_mla(w)) {
    double ql = w->q_lora_rank, kl = w->kv_lora_rank;
    double q = ql > 0 ? h * ql + ql * a * qk : h * a * qk;
    return q + h * (kl + w->qk_rope_dim) + kl * a * (w->qk_nope_dim + v) + a * v * h;
  }
  double dh = pf_workload_head_dim(w), g = w->kv_heads;
  return h * a * dh + 2.0 * h * g * dh + a * dh * h;
}

/* the attention block's vectors: the latents' norms (MLA), q/k norms, biases; and the layer's two norms */
static double attn_vectors(const pf_workload *w) {
  double h = w->hidden, dh = pf_workload_head_dim(w), x = 2.0 * h;
  if (pf_workload_is_mla(w)) x += w->kv_lora_rank + (w->q_lora_rank > 0 ? w->q_lora_rank : 0);
  if (w->qk_norm) x += 2.0 * dh;
  if (w->attn_bias) x += (w->heads + 2.0 * w->kv_heads) * dh + h;
  return x;
}

/* one SwiGLU expert of width f (with biases when the model has them) */
static double expert(const pf_workload *w, double f) {
  return 3.0 * w->hidden * f + (w->expert_bias ? 2.0 * f + w->hidden : 0.0);
}

static double router(const pf_workload *w) {
  return (double)w->experts * w->hidden + (w->expert_bias ? w->experts : 0);
}

double pf_workload_dense_layer_params(const pf_workload *w) {
  if (!pf_workload_extended(w)) return pf_workload_layer_params(w);
  return attn_matrices(w) + attn_vectors(w) + 3.0 * w->hidden * w->ffn_hidden;
}

double pf_workload_moe_layer_params(const pf_workload *w) {
  double shared = w->shared_ffn_hidden > 0 ? 3.0 * w->hidden * w->shared_ffn_hidden : 0.0;
  return attn_matrices(w) + attn_vectors(w) + router(w) + w->experts * expert(w, w->moe_ffn_hidden) + shared;
}

double pf_workload_routed_expert_params(const pf_workload *w) {
  return pf_workload_is_moe(w) ? w->experts * expert(w, w->moe_ffn_hidden) : 0.0;
}

double pf_workload_layers_params(const pf_workload *w, int first, int n) {
  if (!pf_workload_extended(w)) return n * pf_workload_layer_params(w);
  int moe = pf_workload_moe_layers_in(w, first, n);
  return moe * pf_workload_moe_layer_params(w) + (n - moe) * pf_workload_dense_layer_params(w);
}

/* the MTP module's own parameters: two norms, the 2h -> h projection, one layer (MoE when the model is) and
 * its final norm */
double pf_workload_mtp_params(const pf_workload *w) {
  if (w->mtp_layers <= 0) return 0;
  double h = w->hidden;
  double layer = pf_workload_is_moe(w) ? pf_workload_moe_layer_params(w) : pf_workload_dense_layer_params(w);
  return w->mtp_layers * (3.0 * h + 2.0 * h * h + layer);
}

/* active matrix weights of the FFN of a MoE layer (router, topk routed experts, shared experts) */
static double moe_active_matrices(const pf_workload *w) {
  double h = w->hidden;
  return (double)w->experts * h + w->topk * 3.0 * h * w->moe_ffn_hidden + 3.0 * h * w->shared_ffn_hidden;
}

double pf_workload_active_params(const pf_workload *w, int tp) {
  double all = pf_workload_params(w, tp);
  if (!pf_workload_is_moe(w)) return all;
  int moe = pf_workload_moe_layers_in(w, 0, w->layers);
  double idle = (double)(w->experts - w->topk) * expert(w, w->moe_ffn_hidden);
  return all - moe * idle;
}

double pf_workload_expert_load(const pf_workload *w) {
  double r = w->expert_imbalance >= 1 ? w->expert_imbalance : 1.0;
  if (w->capacity_factor > 0) r = w->capacity_factor; /* padded to capacity: every expert runs that many */
  return r;
}

/* The busiest expert (expert_imbalance r) takes r times its balanced share and the other E - 1 share the rest,
 * so the rank holding it runs (r + (E/EP - 1)(E - r)/(E - 1)) / (E/EP) times the balanced rows (1 at EP 1). */
double pf_workload_rank_load(const pf_workload *w, int ep) {
  if (w->capacity_factor > 0 || w->experts < 2 || ep < 2) return 1.0; /* at EP 1 one rank holds every expert */
  if (w->rank_imbalance >= 1) return w->rank_imbalance;
  double r = w->expert_imbalance, E = w->experts, El = E / ep;
  if (!(r > 1.0)) return 1.0;
  return (r + (El - 1.0) * (E - r) / (E - 1.0)) / El;
}

double pf_workload_routed_load(const pf_workload *w, int ep) {
  return w->capacity_factor > 0 ? w->capacity_factor : pf_workload_rank_load(w, ep);
}

/* forward + backward model FLOPs of one layer's products with weights for s tokens: 6 per token and active
 * weight (the attention core, 2 s^2 heads (qk + v) forward and three times that with backward over the whole
 * score matrix, is pf_workload_attn_core_flops_per_sample's: PF_FLOPS_FULL; Megatron-LM from core_v0.12 counts
 * half of it, pf_workload_model_flops_per_sample_as) */
static double layer_flops(const pf_workload *w, bool moe) {
  double s = w->seq, h = w->hidden;
  double ffn = moe ? moe_active_matrices(w) : 3.0 * h * w->ffn_hidden;
  return 6.0 * s * (attn_matrices(w) + ffn);
}

double pf_workload_moe_flops_per_sample(const pf_workload *w, int tp) {
  double s = w->seq, h = w->hidden, V = pf_workload_padded_vocab(w, tp);
  int moe = pf_workload_moe_layers_in(w, 0, w->layers);
  double f = moe * layer_flops(w, true) + (w->layers - moe) * layer_flops(w, false) + 6.0 * s * V * h +
             pf_workload_attn_core_flops_per_sample(w);
  if (w->mtp_layers > 0) /* each module: the 2h -> h projection, its layer and another output head */
    f += w->mtp_layers * (6.0 * s * 2.0 * h * h + layer_flops(w, pf_workload_is_moe(w)) + 6.0 * s * V * h);
  return f;
}

int pf_workload_moe_check(pf_workload *w) {
  if (w->head_dim < 0) return pf_error_set(PF_EINVAL, "model %s: --head-dim must be positive", w->id);
  if (w->window < 0 || w->window_full_every < 0)
    return pf_error_set(PF_EINVAL, "model %s: --window-size and --window-attn-skip-freq must not be negative", w->id);
  if (w->window == 0) w->window_full_every = 0; /* no window (--window-size 0 on GPT-OSS): every layer whole */
  if (w->experts < 0 || w->topk < 0 || w->moe_ffn_hidden < 0 || w->shared_ffn_hidden < 0 || w->first_dense < 0 ||
      w->moe_every < 0 || w->mtp_layers < 0 || w->q_lora_rank < 0 || w->kv_lora_rank < 0)
    return pf_error_set(PF_EINVAL, "model %s: MoE and MLA sizes must not be negative", w->id);
  if (w->experts > 0) {
    if (w->topk <= 0) w->topk = 1;
    if (w->topk > w->experts)
      return pf_error_set(PF_EINVAL, "model %s: --moe-topk %d is more than --experts %d", w->id, w->topk,
                          w->experts);
    if (w->moe_ffn_hidden <= 0) w->moe_ffn_hidden = w->ffn_hidden;
    if (w->router_groups > 0 && (w->experts % w->router_groups != 0 || w->router_group_topk <= 0 ||
                                 w->router_group_topk > w->router_groups))
      return pf_error_set(PF_EINVAL, "model %s: grouped routing needs --experts %d divisible by the %d groups and "
                          "1 .. groups groups a token", w->id, w->experts, w->router_groups);
    /* an expert takes each token once at most: E / topk times its balanced share */
    double most = (double)w->experts / w->topk;
    if (w->expert_imbalance != 0 && !(w->expert_imbalance >= 1 && w->expert_imbalance <= most + 1e-9))
      return pf_error_set(PF_EINVAL, "model %s: --moe-imbalance %g must be between 1 (balanced) and %g (every token "
                          "to the busiest expert: %d experts over top-%d)", w->id, w->expert_imbalance, most,
                          w->experts, w->topk);
    if (w->capacity_factor < 0 || (w->capacity_factor > 0 && w->capacity_factor * w->topk < 1e-9))
      return pf_error_set(PF_EINVAL, "model %s: --moe-capacity-factor must be positive (0: dropless)", w->id);
    if (w->rank_imbalance != 0 && w->expert_imbalance > 1)
      return pf_error_set(PF_EINVAL, "model %s: give --moe-rank-imbalance or --moe-imbalance, not both", w->id);
    if (w->rank_imbalance != 0 && w->capacity_factor > 0)
      return pf_error_set(PF_EINVAL, "model %s: --moe-rank-imbalance describes dropless routing; with "
                          "--moe-capacity-factor every expert runs its capacity", w->id);
    if (w->rank_imbalance != 0 && !(w->rank_imbalance >= 1))
      return pf_error_set(PF_EINVAL, "model %s: --moe-rank-imbalance %g must be at least 1 (balanced)", w->id,
                          w->rank_imbalance);
  }
  if (w->kv_lora_rank > 0 && (w->qk_nope_dim <= 0 || w->qk_rope_dim <= 0 || w->v_head_dim <= 0))
    return pf_error_set(PF_EINVAL, "model %s: MLA (--kv-lora-rank) needs its qk nope, qk rope and v head sizes",
                        w->id);
  return 0;
}
