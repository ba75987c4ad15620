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
/* Total parameter count (with the vocabulary padded for tp). */
double pf_workload_params(const pf_workload *w, int tp);

/* Model FLOPs for one sample, forward + backward, no recomputation: what
 * Megatron's throughput (TFLOP/s/GPU) counts.  Transformers:
 *   12 s l h^2 [ (1 + g/a + s/h) + (f/h)(3/2 if swiglu) + V/(2 l h) ] x ... (see workload.c) */
double pf_workload_model_flops_per_sample(const pf_workload *w, int tp);
/* Tokens per sample (seq for transformers, 1 for others). */
double pf_workload_tokens_per_sample(const pf_workload *w);

#endif
