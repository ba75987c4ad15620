/* fp8.c - FP8 training as Transformer Engine runs it (docs/model.md, "FP8").
 *
 * What runs in FP8: only the GEMMs of the linear layers (TE Linear,
 * LayerNormLinear, LayerNormMLP: QKV, projection, FC1, FC2), forward, data
 * gradient and weight gradient (E4M3 activations and weights, E5M2
 * gradients under the HYBRID format Megatron uses).  The fused attention
 * (unless --fp8-attention: cuDNN FP8 attention), softmax, norms, activation,
 * dropout and residual kernels, the output layer (Megatron-core builds it
 * from tensor_parallel.ColumnParallelLinear, not a TE module), the loss and
 * the optimizer run as in BF16 (NVIDIA Transformer Engine documentation,
 * "Using FP8 with Transformer Engine"; Micikevicius et al. 2022, "FP8
 * formats for deep learning").
 *
 * The scaling work, per FP8 GEMM of m tokens x n outputs x k inputs
 * (X = m k input elements, G = m n gradient elements, W = k n weights), HBM
 * bytes per element (2 = bf16 read, 1 = fp8 write):
 *   delayed  forward: input cast + transpose (cast_transpose: read 2, write
 *            1 + 1 for the weight gradient's X^T, since Hopper's FP8 GEMM
 *            takes both operands K-major) as its own kernel for the
 *            projection; fused into the producer for QKV and FC1 (TE's
 *            layernorm writes FP8) and FC2 (the GeLU writes FP8), whose
 *            transpose runs in backward (read 1, write 1).  Backward: the
 *            gradient's cast_transpose (read 2, write 1 + 1).  Amax inside
 *            the casts; the amax history and scales updated by one
 *            multi-tensor kernel per forward and per backward of the stage
 *            (history 1024, TE's default: 3 tensors x 4 GEMMs x 1024 x 4 B
 *            read and written per layer).
 *   current  the scale comes from the tensor's own amax, so each cast
 *            needs an amax pass first (read 2) and cannot fuse into its
 *            producer: every input and gradient: amax + cast_transpose,
 *            two kernels; no history.
 *   mxfp8    one e8m0 scale per 32 elements (OCP MX v1.0), computed inside
 *            the quantize kernel: no amax pass, no history; row- and
 *            column-wise copies (a block's scale is along the reduction
 *            dimension, so the weight gradient's operand is quantized
 *            separately, not transposed): read 2, write 1 + 1 + 2/32.
 *            Assumed unfused with its producer.
 *   blockwise one fp32 scale per 1 x 128 tile of an activation or gradient and per 128 x 128 block of a weight,
 *            computed in the cast (DeepSeek-V3, arXiv 2412.19437 section 3.3.2; TE Float8BlockScaling): a
 *            tile's scale runs along one GEMM's reduction dimension, so the weight gradient, which reduces
 *            over the tokens, reads its own column-wise copy: read 2, write 1 + 1 + 2 x 4/128, unfused;
 *            weights 128 x 128 blocks, 4 + 2 x 4/16384 B each per step.  The products: the 1 x 128 scales
 *            are applied as the tensor cores' partial sums are promoted to FP32 every 128 of K (section
 *            3.3.2), and the weight gradient reduces over the tokens into the FP32 main gradient.  Measured in
 *            DeepSeek's own training trace (deepseek-ai/profile-data train.json: DeepSeek-V3, H800, EP 64, TP 1,
 *            4096 tokens, a forward and a backward chunk of 4 MoE layers; its GEMM kernels run 112 CTAs, the
 *            other 20 SMs DeepEP's, so times x 112/132 for the whole device): the forward and data-gradient
 *            products of a layer take 1.06 x what the per-tensor table gives the same shapes (3.84 against
 *            3.62 ms for one of each: MLA's four projections and the output projection forward, the experts'
 *            grouped fc1 and fc2 as the mean of their forward and data-gradient launches), the
 *            weight gradients 1.64 x (the output projection's, 7168 x 16384 over 4096 tokens: 1.50 ms, x 112/132
 *            = 1.27 against 0.78 ms, alike with and without DeepEP beside it; the experts' alike): rate
 *            scales BLOCKWISE_FD_RATE and BLOCKWISE_WGRAD_RATE.  The same trace's cast kernels take about 2.6 x
 *            the bytes' time (4.0 ms a layer against 1.5): kernels of DeepSeek's, not priced here.
 *   weights  cast (and transposed or column-wise copy) once per step: TE
 *            caches FP8 weights across the microbatches of a step
 *            (Megatron passes is_first_microbatch): 4 B per weight (6 with
 *            current scaling's amax pass, 4 + 2/32 for mxfp8), count
 *            1 / grad_accum per microbatch.
 * The amax all-reduce across the TP x DP x CP group (delayed, once per
 * forward and backward of each model chunk) is communication: comm.c
 * fp8_amax, breakdown_s.fp8_amax.
 */
#include "fp8.h"

#include "compute.h"
#include "core/core.h"

#include <string.h>

#define MX_SCALE_B (1.0 / 32.0) /* one e8m0 byte per 32-element block (OCP Microscaling Formats v1.0) */
#define AMAX_HISTORY 1024.0     /* TE DelayedScaling amax_history_len default */
#define BLOCK_SCALE_B (4.0 / 128.0)  /* one fp32 scale per 1 x 128 tile (blockwise) */
#define WEIGHT_SCALE_B (4.0 / 16384.0) /* one fp32 scale per 128 x 128 weight block (blockwise) */
#define BLOCKWISE_FD_RATE (3.62 / 3.84)  /* forward and data-gradient products under blockwise scaling (header) */
#define BLOCKWISE_WGRAD_RATE (0.78 / 1.27) /* weight-gradient products under blockwise scaling (header) */

/* TE modules whose producer writes the GEMM input in FP8 (delayed scaling only) */
static bool input_fused(const char *name) {
  static const char *fused[] = {"qkv", "fc1", "fc2"}; /* LayerNormLinear (norm), LayerNormMLP (norm, GeLU) */
  for (size_t i = 0; name && i < sizeof fused / sizeof fused[0]; i++)
    if (strcmp(name, fused[i]) == 0) return true;
  return false;
}

/* the CUDA graph module of the GEMM a cast serves (compute/graphs.c), taken by the casts added after it */
typedef struct { pf_kernel_list *l; unsigned char graph; } casts;

static int add(casts c, const char *name, double bytes, double count) {
  /* tagged fp8: what the pass exists for (its price is its bytes; kernel.c counts it as FP8 scaling) */
  pf_kernel x = {.kind = PF_KERNEL_MEMORY, .name = name, .prec = PF_FP8, .bytes = bytes, .count = count,
                 .host_ops = 1, .graph = c.graph};
  return pf_kernel_list_add(c.l, &x);
}

/* Quantize a tensor of e elements that the next GEMM reads (row-wise) and a later GEMM reads transposed: an
 * activation or gradient per microbatch, or (weight) a layer's weights once per step (count already per step;
 * header, "weights"), whose passes carry their own names and, blockwise, 128 x 128 scale blocks. */
static int quantize(casts l, pf_fp8_recipe r, double e, double count, bool weight) {
  switch (r) {
  case PF_FP8_CURRENT:
    return add(l, weight ? "fp8-weight-amax" : "fp8-amax", 2 * e, count) |
           add(l, weight ? "fp8-weight-cast-transpose" : "fp8-cast-transpose", 4 * e, count);
  case PF_FP8_MXFP8:
    return add(l, weight ? "mxfp8-weight-quantize" : "mxfp8-quantize", (4 + 2 * MX_SCALE_B) * e, count);
  case PF_FP8_BLOCKWISE:
    return add(l, weight ? "fp8-blockwise-weight-quantize" : "fp8-blockwise-quantize",
               (4 + 2 * (weight ? WEIGHT_SCALE_B : BLOCK_SCALE_B)) * e, count);
  default:
    return add(l, weight ? "fp8-weight-cast-transpose" : "fp8-cast-transpose", 4 * e, count);
  }
}

int pf_fp8_layer(const pf_scenario *sc, int layers, pf_kernel_list *lf, pf_kernel_list *core, pf_kernel_list *ends,
                 pf_kernel_list *fwd_q, pf_kernel_list *bwd_q) {
  if (sc->precision != PF_FP8) return 0;
  pf_fp8_recipe r;
  int rc = pf_fp8_recipe_of(sc, &r);
  if (rc < 0) return rc;
  double per_step = 1.0 / (sc->plan.grad_accum > 0 ? sc->plan.grad_accum : 1);
  int gemms = 0;
  for (int i = 0; i < lf->n && rc == 0; i++) {
    pf_kernel *k = &lf->k[i];
    if (k->kind != PF_KERNEL_GEMM || (k->batch > 1 && !k->grouped)) continue;
    if (k->name && strcmp(k->name, "router") == 0) continue; /* a plain linear layer, not a TE module */
    /* a MoE layer's grouped GEMM (TE GroupedLinear): every expert's input, output gradient and weight */
    double e = k->grouped && k->batch > 0 ? k->batch : 1.0;
    double c = k->count > 0 ? k->count : 1.0, X = e * k->m * k->k, G = e * k->m * k->n, W = e * k->k * k->n;
    casts fwd = {fwd_q, k->graph}, bwd = {bwd_q, k->graph};
    gemms++;
    if (r == PF_FP8_DELAYED && input_fused(k->name))
      rc |= add(bwd, "fp8-transpose", 2 * X, c); /* the producer wrote X in FP8; X^T for the weight gradient */
    else
      rc |= quantize(fwd, r, X, c, false);
    rc |= quantize(bwd, r, G, c, false); /* the output gradient, for the data and the weight gradient */
    rc |= quantize(fwd, r, W, c * per_step, true);
    if (r == PF_FP8_BLOCKWISE) { /* the products' own rates (header), their backward copies alike */
      k->rate_scale = BLOCKWISE_FD_RATE;
      k->wgrad_scale = BLOCKWISE_WGRAD_RATE;
    }
  }
  if (r == PF_FP8_DELAYED && gemms > 0 && layers > 0) { /* one multi-tensor update per pass of the stage */
    double bytes = layers * 3.0 * gemms * AMAX_HISTORY * 4.0 * 2.0;
    rc |= add((casts){fwd_q, 0}, "fp8-amax-scale-update", bytes, 1.0 / layers);
    rc |= add((casts){bwd_q, 0}, "fp8-amax-scale-update", bytes, 1.0 / layers);
  }
  /* the attention core in bf16 unless FP8 attention was asked (fused only: cuDNN FP8 attention) */
  for (int i = 0; i < core->n; i++) {
    pf_kernel *k = &core->k[i];
    if (k->kind == PF_KERNEL_GEMM || k->kind == PF_KERNEL_ATTENTION)
      k->prec = sc->plan.fp8_attention && k->kind == PF_KERNEL_ATTENTION ? PF_FP8 : PF_BF16;
  }
  for (int i = 0; i < lf->n; i++) /* products in the layer that are not linear layers (none in GPT) */
    if ((lf->k[i].kind == PF_KERNEL_GEMM && lf->k[i].batch > 1 && !lf->k[i].grouped) ||
        lf->k[i].kind == PF_KERNEL_ATTENTION || (lf->k[i].name && strcmp(lf->k[i].name, "router") == 0))
      lf->k[i].prec = PF_BF16;
  for (int i = 0; i < ends->n; i++) /* output layer and loss: not TE modules */
    if (ends->k[i].kind == PF_KERNEL_GEMM || ends->k[i].kind == PF_KERNEL_ATTENTION) ends->k[i].prec = PF_BF16;
  return rc < 0 ? rc : 0;
}
