/* spec.h - what is trained: a GPT/Llama-style transformer, a model given
 * by its list of layers (CNNs, U-Nets, GANs, ...), or any model given by
 * parameters and FLOPs per sample.
 *
 * Parameter and FLOP counts follow Narayanan et al., "Efficient Large-Scale
 * Language Model Training on GPU Clusters Using Megatron-LM" (SC21), eq. (3),
 * generalised for GQA and SwiGLU the way Megatron-LM's
 * training.py:num_floating_point_operations() does.
 */
#ifndef PREFLIGHT_WORKLOAD_SPEC_H
#define PREFLIGHT_WORKLOAD_SPEC_H

#include <stdbool.h>

/* PF_WL_LAYERS: a model given by its list of layers (layers.h), built in or read from a model file. */
typedef enum { PF_WL_TRANSFORMER, PF_WL_GENERIC, PF_WL_LAYERS } pf_workload_kind;

/* The training framework the run uses (auto: Megatron-LM for built-in
 * transformers, the model's own for layer lists, PyTorch otherwise). */
typedef enum { PF_FW_AUTO, PF_FW_MEGATRON, PF_FW_PYTORCH, PF_FW_TENSORFLOW } pf_framework;
/* How data parallelism is run: one process per GPU (DDP, Horovod, Megatron)
 * or PyTorch's single-process DataParallel (one host thread per GPU, all
 * dispatching under one interpreter lock). */
typedef enum { PF_DPIMPL_PROCESS, PF_DPIMPL_DATAPARALLEL } pf_dp_impl;
/* The optimizer a PyTorch run steps with (compute/stepkernels.c): AdamW (Hugging Face's and most language
 * models' default) or SGD with momentum (torchvision's ImageNet recipes). */
typedef enum { PF_OPTIM_ADAMW, PF_OPTIM_SGD } pf_optimizer;
/* The router's score function (Megatron-Core's --moe-router-score-function): softmax over the experts (Mixtral,
 * Qwen3, DeepSeek-V2) or a sigmoid per expert (DeepSeek-V3). */
typedef enum { PF_ROUTER_SOFTMAX, PF_ROUTER_SIGMOID } pf_router;

struct pf_layer;
struct pf_net;

typedef struct pf_workload {
  char id[64];
  char name[160];
  pf_workload_kind kind;
  /* transformer shape */
  int layers, hidden, heads, kv_heads, ffn_hidden, seq, vocab;
  bool swiglu;              /* gated MLP with three matrices (Llama) */
  bool learned_pos;         /* learned absolute position embeddings (GPT) vs rotary (Llama) */
  bool tied_embeddings;     /* output layer shares the input embedding */
  int head_dim;             /* attention head width (Megatron's --kv-channels); 0: hidden / heads */
  bool qk_norm;             /* RMSNorm on each head's query and key (Qwen3, OLMoE) */
  bool attn_bias;           /* biases on the QKV and output projections (GPT-OSS) */
  /* sliding-window attention (Megatron-Core's --window-size W,0 and --window-attn-skip-freq N): a query sees the
   * W keys before it and itself; with N, layer l (from 1) with l % N == 0 attends the whole prefix */
  int window;               /* W (0: every layer attends the whole prefix) */
  int window_full_every;    /* N (0: every layer windowed) */
  /* mixture of experts (moe.c; experts 0: dense).  Layer i (from 0) is a MoE layer when i >= first_dense and
   * (i + 1) % moe_every == 0 (Hugging Face's interleave_moe_layer_step; Megatron's --moe-layer-freq). */
  int experts;              /* routed experts of a MoE layer */
  int topk;                 /* routed experts each token goes to */
  int moe_ffn_hidden;       /* FFN width of one routed expert (--moe-ffn-hidden-size) */
  int shared_ffn_hidden;    /* FFN width of the shared experts together (0: none;
                               --moe-shared-expert-intermediate-size) */
  int first_dense;          /* the first k layers are dense (DeepSeek's first_k_dense_replace) */
  int moe_every;            /* every n-th layer is MoE (0 or 1: all after first_dense) */
  pf_router router;
  int router_groups, router_group_topk; /* grouped (device-limited) routing: 0 none */
  bool expert_bias;         /* biases on the experts' and the router's linear layers (GPT-OSS) */
  double capacity_factor;   /* tokens an expert takes at most, over the balanced share; 0: dropless */
  double expert_imbalance;  /* tokens of the busiest expert over the balanced share (>= 1; 1: balanced) */
  double rank_imbalance;    /* tokens of the busiest expert-parallel rank over the balanced share (0: unset) */
  /* Multi-head Latent Attention (DeepSeek-V2, arXiv 2405.04434 section 2.1; kv_lora_rank 0: not MLA) */
  int q_lora_rank;          /* 0: queries projected directly from the hidden state */
  int kv_lora_rank, qk_nope_dim, qk_rope_dim, v_head_dim;
  int mtp_layers;           /* multi-token prediction modules (DeepSeek-V3 section 2.2), after the model */
  /* CNN / generic: per-sample costs */
  double params;            /* parameter count (CNN/generic); transformers compute it */
  double flops_per_sample;  /* forward+backward FLOPs per sample (CNN/generic) */
  double act_bytes_per_sample; /* activation memory per sample kept for backward */
  double sample_bytes;      /* input bytes the loader reads per sample of the batch */
  int ref_gbs;              /* global batch the model was trained with (sequences or samples; 0 unknown) */
  const char *source;       /* where the shape comes from; static */
  /* layer lists (PF_WL_LAYERS): borrowed, static for built-ins, process-lifetime for files (layers.c) */
  const struct pf_layer *ly; /* ended by a PF_LY_END entry */
  const struct pf_net *nets; /* ended by an entry with name NULL; NULL: one network, one pass each */
  pf_framework framework;   /* the framework the model's runs use (auto: PyTorch) */
  pf_dp_impl dp_impl;       /* how its data parallelism runs */
  pf_optimizer optimizer;   /* what a PyTorch run steps with (AdamW unless the model says) */
  double nontrainable;      /* non-trainable parameters (batch-norm running statistics) */
  bool tf32_matmul;         /* fp32 matmuls run in TF32 where the part has it (NGC PyTorch containers) */
} pf_workload;

/* Built-in workloads by id; PF_ENOENT lists the valid ids. */
int pf_workload_builtin(const char *id, pf_workload *out);
/* A built-in id, or a layer-list model file (a path: holds '/' or ends in .cfg; layers.h). */
int pf_workload_get(const char *id_or_path, pf_workload *out);
/* Number of built-in workloads and the i-th one (borrowed, static). */
int pf_workload_builtin_count(void);
const pf_workload *pf_workload_builtin_at(int i);

/* Fill derived defaults (kv_heads = heads, ffn = 4h or the SwiGLU size) and
 * check the shape; PF_EINVAL names the offending field. */
int pf_workload_check(pf_workload *w);

/* Megatron padded vocabulary: vocab rounded up to a multiple of 128 x tp. */
int pf_workload_padded_vocab(const pf_workload *w, int tp);

/* Parameters of one transformer layer, of the embeddings (input + position),
 * and of the output layer (0 when tied). */
double pf_workload_layer_params(const pf_workload *w);
double pf_workload_embedding_params(const pf_workload *w, int tp);
double pf_workload_output_params(const pf_workload *w, int tp);
/* Total parameter count (with the vocabulary padded for tp), without MTP modules. */
double pf_workload_params(const pf_workload *w, int tp);

/* ---- mixture of experts, MLA, MTP (moe.c) ---- */
/* true when the model has routed experts / uses MLA / needs the general counting of moe.c (MoE, MLA, a
 * head width other than hidden / heads, q/k norms, attention biases or MTP) */
bool pf_workload_extended(const pf_workload *w);
bool pf_workload_is_moe(const pf_workload *w);
bool pf_workload_is_mla(const pf_workload *w);
/* true when layer i (from 0) of the model is a MoE layer */
bool pf_workload_moe_layer(const pf_workload *w, int i);
/* MoE layers among layers first .. first + n - 1 */
int pf_workload_moe_layers_in(const pf_workload *w, int first, int n);
/* Parameters of a dense and of a MoE layer (all experts), of the layers first .. first + n - 1, and of the
 * MTP modules (their shared embedding and output head not counted again). */
double pf_workload_dense_layer_params(const pf_workload *w);
double pf_workload_moe_layer_params(const pf_workload *w);
double pf_workload_layers_params(const pf_workload *w, int first, int n);
/* The routed experts' parameters of one MoE layer (0 for a dense model): what expert parallelism shards. */
double pf_workload_routed_expert_params(const pf_workload *w);
double pf_workload_mtp_params(const pf_workload *w);
/* Parameters one token uses (the top-k routed experts, the shared ones, the router; embedding and output
 * layer included, MTP not).  Publishers differ on the input embedding (Mixtral, Qwen3, OLMoE, DBRX and
 * Llama 4 count it; DeepSeek and GPT-OSS do not: pf_workload_embedding_params subtracts it). */
double pf_workload_active_params(const pf_workload *w, int tp);
/* Width of the attention heads (head_dim, else hidden / heads) and of the query/key and value heads (MLA:
 * qk_nope + qk_rope and v_head_dim). */
double pf_workload_head_dim(const pf_workload *w);
double pf_workload_qk_dim(const pf_workload *w);
double pf_workload_v_dim(const pf_workload *w);
/* Tokens the busiest routed expert takes, over the balanced share (expert_imbalance, capped by the
 * capacity factor when tokens are dropped). */
double pf_workload_expert_load(const pf_workload *w);
/* Rows the busiest of `ep` expert-parallel ranks receives and runs, over the balanced share: rank_imbalance
 * when given, else what expert_imbalance's busiest expert makes of its rank; 1 when tokens are dropped or
 * routing is balanced.  Every rank of the group waits for it (moelayer.c, epa2a.c, memory.c). */
double pf_workload_rank_load(const pf_workload *w, int ep);
/* Rows the busiest rank's experts run, over the balanced share: the capacity factor when tokens are dropped
 * (every expert padded to it), else pf_workload_rank_load. */
double pf_workload_routed_load(const pf_workload *w, int ep);
/* Model FLOPs per sample of a MoE, MLA or head_dim model (active experts only; MTP included, as Megatron's
 * num_floating_point_operations counts it) */
double pf_workload_moe_flops_per_sample(const pf_workload *w, int tp);
/* Check the MoE / MLA fields; PF_EINVAL names the field. */
int pf_workload_moe_check(pf_workload *w);
/* Built-in MoE models (moemodels.c) */
extern const pf_workload pf_moe_builtins[];
extern const int pf_moe_builtin_n;

/* Model FLOPs for one sample, forward + backward, no recomputation: what
 * Megatron's throughput (TFLOP/s/GPU) counts.  Transformers:
 *   12 s l h^2 [ (1 + g/a + s/h) + (f/h)(3/2 if swiglu) + V/(2 l h) ] x ... (see workload.c) */
double pf_workload_model_flops_per_sample(const pf_workload *w, int tp);
/* How a source counts the attention core's FLOPs.  FULL: the whole s x s score matrix, as preflight's
 * tflops_per_gpu and MFU do (PaLM, Chowdhery et al. 2022, appendix B: 6N + 12 L H Q T; Megatron-LM to
 * core_v0.11).  CAUSAL: half of it, the part a causal mask leaves (Megatron-LM from core_v0.12:
 * num_floating_point_operations, commit 8873b55 of 2025-03-06 for GPT/GQA attention, d4f9a6f of 2025-04-03
 * for MLA).  Only the attention core differs; parameters' FLOPs and the logits are counted alike. */
typedef enum { PF_FLOPS_FULL, PF_FLOPS_CAUSAL } pf_flops_conv;
/* The attention core's FLOPs per sample, forward + backward, counted FULL (0 for non-transformers); a windowed
 * layer counts its band twice. */
double pf_workload_attn_core_flops_per_sample(const pf_workload *w);
/* Layers of the model (not the MTP modules) that attend through a sliding window (window, window_full_every). */
int pf_workload_windowed_layers(const pf_workload *w);
/* Model FLOPs per sample as convention c counts them. */
double pf_workload_model_flops_per_sample_as(const pf_workload *w, int tp, pf_flops_conv c);
/* Tokens per sample (seq for transformers, 1 for others). */
double pf_workload_tokens_per_sample(const pf_workload *w);

#endif
