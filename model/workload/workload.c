/* workload.c - built-in workloads, parameter and FLOP counts.
 *
 * Transformer FLOPs per sample are Megatron-LM's model FLOPs (training.py,
 * num_floating_point_operations, to core_v0.11: the attention core counted
 * over the whole score matrix; later versions halve that term for the causal
 * mask, pf_workload_model_flops_per_sample_as), which reduce for GPT (f = 4h, no GQA) to
 * Narayanan et al. SC21 eq. (3) without the recomputation pass:
 *   F = 72 s l h^2 (1 + s/(6h) + V/(12 l h))
 * General form used here, per sample of s tokens:
 *   F = 12 s l h^2 [ (1 + g/a + s/h) + (f/h)(3/2 if SwiGLU else 1) + V/(2 l h) ]
 * where g = KV heads (GQA), a = heads, f = FFN hidden size, V = padded vocab.
 * Parameters per layer: QKV h(h + 2 h g/a), projection h^2, MLP (2 or 3) h f,
 * biases and norms as the architecture has them.
 */
#include "spec.h"

#include "core/core.h"
#include "layers.h"

#include <stdio.h>
#include <string.h>

/* ref_gbs: the global batch of the published training run, in sequences:
 * GPT-3 (Brown et al. 2020, Table 2.1) gives tokens per batch (175B 3.2M, 13B and
 * 6.7B 2M, 1.3B 1M at 2048 tokens: Megatron's GPT-3 175B example uses 1536);
 * Llama 2 (Touvron et al. 2023, section 2.2) 4M tokens at 4096; Llama 3 (Dubey
 * et al. 2024, section 3.4.1) ends at 16M tokens at 8192. */
#define GPT(id_, name_, l, h, a, gbs, src)                                                         \
  { .id = id_, .name = name_, .kind = PF_WL_TRANSFORMER, .layers = l, .hidden = h, .heads = a,     \
    .kv_heads = a, .ffn_hidden = 4 * (h), .seq = 2048, .vocab = 50257, .learned_pos = true,        \
    .tied_embeddings = true, .ref_gbs = gbs, .source = src }
#define LLAMA(id_, name_, l, h, a, g, f, s, v, gbs, src)                                           \
  { .id = id_, .name = name_, .kind = PF_WL_TRANSFORMER, .layers = l, .hidden = h, .heads = a,     \
    .kv_heads = g, .ffn_hidden = f, .seq = s, .vocab = v, .swiglu = true, .learned_pos = false,    \
    .tied_embeddings = false, .ref_gbs = gbs, .source = src }

/* Nemotron-4 (NeMo's NemotronConfig): squared-ReLU MLP of two matrices, rotary positions, GQA with 8 query
 * groups, LayerNorm, untied embeddings, SentencePiece vocabulary 256000, sequence 4096.  Its linear layers have
 * no biases; the two-matrix count here adds GPT's (f + 3h + 2 kv a layer, 0.004 % of the total). */
#define NEMOTRON(id_, name_, l, h, a, f, gbs, src)                                                 \
  { .id = id_, .name = name_, .kind = PF_WL_TRANSFORMER, .layers = l, .hidden = h, .heads = a,     \
    .kv_heads = 8, .ffn_hidden = f, .seq = 4096, .vocab = 256000, .learned_pos = false,            \
    .tied_embeddings = false, .ref_gbs = gbs, .source = src }

static const pf_workload builtins[] = {
    GPT("gpt3-175b", "GPT-3 175B", 96, 12288, 96, 1536,
        "Brown et al. 2020, Table 2.1 (96 layers, d 12288, 96 heads, context 2048); GPT-2 BPE vocabulary 50257; "
        "EPICURE language benchmark (000_ff12095d05d26000.txt:126-132)"),
    GPT("gpt3-13b", "GPT-3 13B", 40, 5120, 40, 1024,
        "Brown et al. 2020, Table 2.1 (40 layers, 40 heads of 128; d written 5140 there, 5120 = 40 x 128 used as "
        "Megatron configs do)"),
    GPT("gpt3-6.7b", "GPT-3 6.7B", 32, 4096, 32, 1024, "Brown et al. 2020, Table 2.1 (32 layers, d 4096, 32 heads)"),
    GPT("gpt3-1.3b", "GPT-3 XL 1.3B", 24, 2048, 16, 512, "Brown et al. 2020, Table 2.1 (24 layers, d 2048, 16 heads)"),
    GPT("gpt-857m", "GPT 857M (EPICURE small model)", 25, 1600, 25, 512,
        "EPICURE states 857 million parameters only (000_ff12095d05d26000.txt:128, 600); assumed shape 25 layers x "
        "d 1600 x 25 heads, GPT-3 vocabulary and context, which gives 852 M (-0.6 %)"),
    LLAMA("llama2-7b", "Llama 2 7B", 32, 4096, 32, 32, 11008, 4096, 32000, 1024,
          "Touvron et al. 2023 (Llama 2), Table 1 and the released config.json"),
    LLAMA("llama2-13b", "Llama 2 13B", 40, 5120, 40, 40, 13824, 4096, 32000, 1024,
          "Touvron et al. 2023 (Llama 2), released config.json"),
    LLAMA("llama2-70b", "Llama 2 70B", 80, 8192, 64, 8, 28672, 4096, 32000, 1024,
          "Touvron et al. 2023 (Llama 2), GQA with 8 KV heads, released config.json"),
    LLAMA("llama3-8b", "Llama 3 8B", 32, 4096, 32, 8, 14336, 8192, 128256, 2048,
          "Llama 3 model card and config.json (8 KV heads, vocabulary 128256, context 8192)"),
    LLAMA("llama3-70b", "Llama 3 70B", 80, 8192, 64, 8, 28672, 8192, 128256, 2048,
          "Llama 3 model card and config.json (8 KV heads, vocabulary 128256, context 8192)"),
    LLAMA("llama3.1-405b", "Llama 3.1 405B", 126, 16384, 128, 8, 53248, 8192, 128256, 2048,
          "Dubey et al. 2024 (The Llama 3 Herd of Models), Table 3; Megatron-Bridge Llama31ModelProvider405B "
          "(126 layers, hidden 16384, FFN 53248, 128 heads, 8 query groups, vocabulary 128256); pre-trained at "
          "sequence 8192, batch ramped to 16M tokens (section 3.4.1)"),
    NEMOTRON("nemotron4-15b", "Nemotron-4 15B", 32, 6144, 48, 24576, 1152,
             "Parmar et al. 2024 (arXiv 2402.16819): 3.2 B embedding + 12.5 B non-embedding parameters, batch "
             "1152 for 7.6 T of its 8 T tokens (Table 2); NeMo Nemotron4Config15B (32 layers, hidden 6144, FFN "
             "24576, 48 heads, 8 query groups, sequence 4096)"),
    NEMOTRON("nemotron4-340b", "Nemotron-4 340B", 96, 18432, 96, 73728, 2304,
             "NVIDIA 2024 (arXiv 2406.11704): 9.4 B embedding + 331.6 B non-embedding parameters, global batch "
             "2304 at sequence 4096 (the model card); NeMo Nemotron4Config340B (96 layers, hidden 18432, FFN 73728, "
             "96 heads, 8 query groups)"),
    /* sample_bytes: an ImageNet training JPEG, ~110 kB (ILSVRC-2012 train: ~140 GB over 1 281 167 images) */
    {.id = "resnet50", .name = "ResNet-50 v1.5 (ImageNet, 224x224)", .kind = PF_WL_LAYERS, .ly = pf_resnet50,
     .nets = pf_resnet50_nets, .framework = PF_FW_PYTORCH, .sample_bytes = 110e3, .optimizer = PF_OPTIM_SGD,
     .source = "He et al. 2016, Table 1 (50-layer); v1.5 stride on the 3x3 convolution as torchvision and NVIDIA "
               "DeepLearningExamples build it (model/workload/resnet.c): 25557032 parameters (torchvision), 4.09 GMAC "
               "forward at 224x224; PyTorch eager, one DDP process per GPU, as EPICURE's vision benchmark (PyTorch's ImageNet example, "
               "000_ff12095d05d26000.txt:509, 586-596)"},
    /* MAELSTROM applications as layer lists (maelstrom.c); sample_bytes: the training set over its samples, times
     * the training-set samples one sample of the batch reads (AP5: 6, below) */
    {.id = "maelstrom-ap1-unet", .name = "MAELSTROM AP1 U-Net (256x256x17)", .kind = PF_WL_LAYERS,
     .ly = pf_maelstrom_ap1_unet, .nets = pf_maelstrom_ap1_nets, .framework = PF_FW_TENSORFLOW,
     .sample_bytes = 329.83e9 / 89208,
     .source = "MAELSTROM D3.7, 001_dfe9b61861599094.txt:582-593 (U-Net, 1314019 parameters, input 256x256x17, "
               "329.83 GB for 89208 samples); the application's own network, metno/maelstrom-train@c87b656 "
               "benchmark/benchmark.py (model/workload/maelstrom.c)"},
    {.id = "maelstrom-ap2-deberta-v3-small", .name = "MAELSTROM AP2 DeBERTa-v3-small classifier", .kind = PF_WL_LAYERS,
     .ly = pf_maelstrom_ap2_deberta, .nets = pf_maelstrom_ap2_nets, .framework = PF_FW_PYTORCH,
     .dp_impl = PF_DPIMPL_DATAPARALLEL, .tf32_matmul = true,
     .source = "MAELSTROM D3.7, 001_dfe9b61861599094.txt:742-760 (141896450 parameters, PyTorch, one process for "
               "several GPUs; its versions 2.1.0a0+32f93b1 and 2.2.0a0+81ea7a4 are NVIDIA NGC container builds, which run fp32 "
               "matmuls in TF32); deberta-v3-small config (He et al. 2021); 64 tokens assumed"},
    {.id = "maelstrom-ap5-wgan", .name = "MAELSTROM AP5 WGAN (U-Net generator + critic, 96x120x15)",
     .kind = PF_WL_LAYERS, .ly = pf_maelstrom_ap5_wgan, .nets = pf_maelstrom_ap5_nets, .framework = PF_FW_TENSORFLOW,
     /* a step of batch B reads (d_steps + 1) x B samples: each of the 5 critic updates and the generator update
      * takes its own slice (001:1309, the "32/192" batch size of 001:1318); the tables' data rate says the same:
      * 492.8 MB/s x 0.287 s = 141 MB a step on one A100, 412.5 MB/s x 0.351 s = 145 MB on one MI250 GCD,
      * 974.6 MB/s x 0.148 s = 144 MB on the GH200 (001:2457-2461, 2509-2513, 2535-2539): 196-201 samples
      * of 721 kB.  So one sample of the batch brings 6 samples of the training set with it. */
     .sample_bytes = 6 * 69.43e9 / 96296,
     .source = "MAELSTROM D3.7, 001_dfe9b61861599094.txt:1284-1322 (WGAN, 9332299 parameters, 5 critic updates per "
               "generator update, each on its own slice of the data, TensorFlow 2.6 + Horovod); layers: the "
               "application's own networks, mlangguth89/downscaling_benchmark@3712347a (U-Net generator of 56 channels "
               "with sub-pixel decoder, 4-block critic: 9332299 and 5280 parameters exactly; model/workload/maelstrom.c)"},
};

#define NBUILTIN ((int)(sizeof builtins / sizeof builtins[0]))

/* the dense models above, then the mixtures of experts (moemodels.c) */
int pf_workload_builtin_count(void) { return NBUILTIN + pf_moe_builtin_n; }
const pf_workload *pf_workload_builtin_at(int i) {
  if (i >= 0 && i < NBUILTIN) return &builtins[i];
  return (i >= NBUILTIN && i < NBUILTIN + pf_moe_builtin_n) ? &pf_moe_builtins[i - NBUILTIN] : NULL;
}

/* Other names of a built-in: Llama 3.1 8B and 70B have Llama 3's shapes (the same config.json but for the RoPE
 * scaling that stretches their context to 131072; Megatron-Bridge's Llama31ModelProvider8B/70B differ from
 * the Llama 3 providers in that alone), and Meta released the 405B as Llama 3.1 only. */
static const char *const aliases[][2] = {
    {"llama3.1-8b", "llama3-8b"}, {"llama3.1-70b", "llama3-70b"}, {"llama3-405b", "llama3.1-405b"}};

int pf_workload_builtin(const char *id, pf_workload *out) {
  for (size_t i = 0; id && i < sizeof aliases / sizeof aliases[0]; i++)
    if (strcmp(id, aliases[i][0]) == 0) id = aliases[i][1];
  int n = pf_workload_builtin_count();
  for (int i = 0; i < n; i++)
    if (id && strcmp(id, pf_workload_builtin_at(i)->id) == 0) {
      *out = *pf_workload_builtin_at(i);
      return pf_workload_check(out);
    }
  const char *ids[64];
  if (n > 64) n = 64;
  for (int i = 0; i < n; i++) ids[i] = pf_workload_builtin_at(i)->id;
  char near[512] = "";
  pf_suggest(id ? id : "", ids, n, near, sizeof near);
  return pf_error_set(PF_ENOENT, "unknown model id \"%s\"%s%s (run `preflight models` for the list; or give "
                      "--layers/--hidden/... or --params/--flops-per-sample)", id ? id : "", *near ? "; " : "", near);
}

int pf_workload_get(const char *id_or_path, pf_workload *out) {
  size_t n = id_or_path ? strlen(id_or_path) : 0;
  if (n > 4 && (strchr(id_or_path, '/') || strcmp(id_or_path + n - 4, ".cfg") == 0))
    return pf_layers_load(id_or_path, out);
  return pf_workload_builtin(id_or_path, out);
}

int pf_workload_check(pf_workload *w) {
  if (w->kind == PF_WL_LAYERS) return pf_layers_check(w);
  if (w->kind != PF_WL_TRANSFORMER) {
    if (!(w->params > 0)) return pf_error_set(PF_EINVAL, "model %s: --params must be positive", w->id);
    if (!(w->flops_per_sample > 0))
      return pf_error_set(PF_EINVAL, "model %s: --flops-per-sample must be positive", w->id);
    if (w->act_bytes_per_sample <= 0) w->act_bytes_per_sample = 0;
    return 0;
  }
  if (w->layers <= 0) return pf_error_set(PF_EINVAL, "model %s: --layers must be positive", w->id);
  if (w->hidden <= 0) return pf_error_set(PF_EINVAL, "model %s: --hidden must be positive", w->id);
  if (w->heads <= 0) return pf_error_set(PF_EINVAL, "model %s: --heads must be positive", w->id);
  if (w->hidden % w->heads != 0)
    return pf_error_set(PF_EINVAL, "model %s: --hidden %d is not divisible by --heads %d", w->id, w->hidden, w->heads);
  if (w->kv_heads <= 0) w->kv_heads = w->heads;
  if (w->heads % w->kv_heads != 0)
    return pf_error_set(PF_EINVAL, "model %s: --heads %d is not divisible by --kv-heads %d", w->id, w->heads,
                        w->kv_heads);
  if (w->ffn_hidden <= 0) {
    /* Llama's rule: 2/3 of 4h rounded up to a multiple of 256; GPT: 4h */
    if (w->swiglu) w->ffn_hidden = ((8 * w->hidden / 3 + 255) / 256) * 256;
    else w->ffn_hidden = 4 * w->hidden;
  }
  if (w->seq <= 0) return pf_error_set(PF_EINVAL, "model %s: --seq must be positive", w->id);
  if (w->vocab <= 0) return pf_error_set(PF_EINVAL, "model %s: --vocab must be positive", w->id);
  return pf_workload_moe_check(w);
}

int pf_workload_padded_vocab(const pf_workload *w, int tp) {
  long m = 128L * (tp > 0 ? tp : 1);
  return (int)(((long)w->vocab + m - 1) / m * m);
}

double pf_workload_layer_params(const pf_workload *w) {
  if (w->kind != PF_WL_TRANSFORMER) return 0;
  if (pf_workload_extended(w)) return pf_workload_layers_params(w, 0, w->layers) / w->layers; /* the mean */
  double h = w->hidden, f = w->ffn_hidden, kv = (double)w->hidden * w->kv_heads / w->heads;
  double attn = h * (h + 2 * kv) + h * h;
  double mlp = (w->swiglu ? 3.0 : 2.0) * h * f;
  double extra;
  if (w->swiglu) extra = 2 * h;                    /* two RMSNorm weights, no biases (Llama) */
  else extra = (h + 2 * kv) + h + f + h + 4 * h;   /* biases + two LayerNorms (weight, bias) */
  return attn + mlp + extra;
}

double pf_workload_embedding_params(const pf_workload *w, int tp) {
  if (w->kind != PF_WL_TRANSFORMER) return 0;
  double e = (double)pf_workload_padded_vocab(w, tp) * w->hidden;
  if (w->learned_pos) e += (double)w->seq * w->hidden;
  return e;
}

double pf_workload_output_params(const pf_workload *w, int tp) {
  if (w->kind != PF_WL_TRANSFORMER) return 0;
  double final_norm = w->swiglu ? w->hidden : 2.0 * w->hidden;
  return final_norm + (w->tied_embeddings ? 0.0 : (double)pf_workload_padded_vocab(w, tp) * w->hidden);
}

double pf_workload_params(const pf_workload *w, int tp) {
  if (w->kind != PF_WL_TRANSFORMER) return w->params;
  return pf_workload_layers_params(w, 0, w->layers) + pf_workload_embedding_params(w, tp) +
         pf_workload_output_params(w, tp);
}

double pf_workload_model_flops_per_sample(const pf_workload *w, int tp) {
  if (w->kind != PF_WL_TRANSFORMER) return w->flops_per_sample;
  if (pf_workload_extended(w)) return pf_workload_moe_flops_per_sample(w, tp);
  double s = w->seq, l = w->layers, h = w->hidden, f = w->ffn_hidden;
  double ga = (double)w->kv_heads / w->heads;
  double V = pf_workload_padded_vocab(w, tp);
  double attn = 1.0 + ga + s / h;
  double mlp = (f / h) * (w->swiglu ? 1.5 : 1.0);
  double logit = V / (2.0 * l * h);
  return 12.0 * s * l * h * h * (attn + mlp + logit);
}

int pf_workload_windowed_layers(const pf_workload *w) {
  if (w->kind != PF_WL_TRANSFORMER || w->window <= 0 || w->window >= w->seq) return 0;
  return w->window_full_every > 0 ? w->layers - w->layers / w->window_full_every : w->layers;
}

/* The attention core (scores and their product with the values) counted over the whole s x s matrix,
 * forward + backward: 6 s^2 a (d_qk + d_v) a layer, the MTP modules' layers included; 12 s^2 h a layer for
 * GPT/Llama heads, the s/h term above.  A layer with a sliding window of W keys counts twice the band's
 * W (W + 1) / 2 + (s - W) W query-key pairs in place of s^2, so that the causal count below is the band's
 * (Megatron-Bridge's GPT-OSS count, src/megatron/bridge/training/utils/flop_utils.py,
 * attention_flops_calculator with is_swa). */
double pf_workload_attn_core_flops_per_sample(const pf_workload *w) {
  if (w->kind != PF_WL_TRANSFORMER) return 0;
  double s = w->seq, W = w->window, nw = pf_workload_windowed_layers(w);
  double pairs = (w->layers + w->mtp_layers - nw) * s * s + nw * 2.0 * (W * (W + 1) / 2 + (s - W) * W);
  return 6.0 * pairs * w->heads * (pf_workload_qk_dim(w) + pf_workload_v_dim(w));
}

double pf_workload_model_flops_per_sample_as(const pf_workload *w, int tp, pf_flops_conv c) {
  double f = pf_workload_model_flops_per_sample(w, tp);
  return c == PF_FLOPS_CAUSAL ? f - 0.5 * pf_workload_attn_core_flops_per_sample(w) : f;
}

double pf_workload_tokens_per_sample(const pf_workload *w) {
  return w->kind == PF_WL_TRANSFORMER ? (double)w->seq : 1.0;
}
