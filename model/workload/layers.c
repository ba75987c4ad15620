/* layers.c - layer-list workloads: shapes, parameters, FLOPs and the kernels
 * of a training step (see layers.h).
 *
 * Each layer expands into the kernels a framework launches for it, forward
 * and backward, priced by kernel.c on the host/GPU timeline:
 *  conv2d       implicit GEMM (NVIDIA Deep Learning Performance Guide,
 *               "Convolutional layers": M = N P Q, N = K, K = C R S):
 *               forward m = B Ho Wo, n = Cout, k = Cin k k; data gradient
 *               m = B H W, n = Cin, k = Cout k k; weight gradient m = Cin k k,
 *               n = Cout, k = B Ho Wo.
 *  conv_transpose2d  the data gradient of a convolution: forward
 *               m = B Ho Wo, n = Cout, k = Cin k k / s^2 (each output pixel
 *               sees k^2 / s^2 input taps), gradients the transposed shapes.
 *  linear       GEMM m = B tokens, n = out, k = c; gradients NT and TN.
 *  attention    HF-style eager attention: q, k, v and output projections,
 *               scores and context as batched GEMMs over B x heads, softmax
 *               and dropout over B heads T^2 elements; DeBERTa's disentangled
 *               attention (He et al. 2021, section 3.1) adds the projections
 *               of the relative-position embeddings and the content-to-position
 *               and position-to-content score GEMMs with their gathers.
 *  norm, activation, pool, upsample, concat, embedding
 *               bytes-bound: forward reads and writes the tensor (norm reads
 *               it twice: statistics, then normalisation), backward reads the
 *               input and the incoming gradient and writes the outgoing one;
 *               an embedding's weight gradient is dense (PyTorch's default),
 *               so its backward writes the whole table.
 * Backward: one data-gradient pass and one weight-gradient pass per network
 * as its pf_net says (a GAN critic runs several per step).  Each framework
 * operator costs the host one dispatch (host.c); the backward node of an
 * operator is one dispatch for its data and weight gradients together.
 *
 * fp32 math follows the frameworks' defaults on tensor-core parts:
 * TensorFlow >= 2.4 runs fp32 matmuls and convolutions in TF32
 * (tf.config.experimental.enable_tensor_float_32_execution, default on);
 * PyTorch >= 1.12 runs matmuls in fp32 (torch.backends.cuda.matmul.allow_tf32
 * default False) and convolutions in TF32 (torch.backends.cudnn.allow_tf32
 * default True), except in NVIDIA's NGC PyTorch containers, which set
 * TORCH_ALLOW_TF32_CUBLAS_OVERRIDE=1 (NGC PyTorch release notes) so that
 * matmuls run in TF32 too (pf_workload.tf32_matmul).  Parts without TF32 run
 * fp32.
 */
#include "layers.h"

#include "core/core.h"

#include <math.h>
#include <stdio.h>
#include <string.h>


const char *pf_layer_kind_name(pf_layer_kind k) {
  static const char *n[] = {"end", "conv2d", "conv_transpose2d", "linear", "attention", "norm", "pool",
                            "upsample", "concat", "activation", "embedding"};
  return k >= 0 && k < PF_LY_NKINDS ? n[k] : "?";
}

/* default eager operators per forward of each kind (attention: projections, reshapes, scores, mask, softmax,
 * dropout, context, output; +25 for DeBERTa's relative-position terms) */
static int default_ops(const pf_layer *L) {
  switch (L->kind) {
  case PF_LY_ATTENTION: return 20 + (L->rel_pos > 0 ? 25 : 0);
  case PF_LY_END: case PF_LY_NKINDS: return 0;
  default: return 1;
  }
}

static const pf_net one_net[] = {{.name = "model", .fwd = 1, .dgrad = 1, .wgrad = 1, .opt = 1}, {.name = NULL}};

const pf_net *pf_layers_nets(const pf_workload *w, int *n) {
  const pf_net *nets = w->nets ? w->nets : one_net;
  for (*n = 0; nets[*n].name && *n < PF_LAYERS_MAX_NETS; (*n)++) {}
  return nets;
}

/* ---- expansion of one layer ---- */

typedef struct {
  double B, el;              /* samples on the GPU, bytes per activation element */
  int units;                 /* SMs / CUs (split-K of weight gradients) */
  pf_precision gemm_p, conv_p;
  pf_kernel_list *fwd, *dg, *wg, *gg; /* NULL: count only; gg: the second-order pass (second_order) */
  double params, nontrainable, flops_f, flops_b, act, ops, mult;
  bool frozen, amp;
  bool nchw_copies; /* tensor-core convolutions on NCHW tensors: cuDNN's layout copies around each (layout_copies) */
  bool half_in; /* autocast: the layer's input is already fp16/bf16 (a product's output), in and out */
} expand_ctx;

static int add(pf_kernel_list *l, const pf_kernel *k, double mult) {
  if (!l) return 0;
  pf_kernel x = *k;
  x.count = (x.count > 0 ? x.count : 1.0) * mult;
  return pf_kernel_list_add(l, &x);
}

/* torch.autocast's casts (PyTorch AMP documentation, "Autocast Op Reference": linear, matmul, bmm and the
 * convolutions run in fp16/bf16 and cast their fp32 inputs, their outputs are fp16/bf16; layer_norm,
 * group_norm, softmax and the losses run in fp32; batch_norm and element-wise operators keep their input's
 * type; an embedding's output is its fp32 table's): n cast operators a forward, each reading 4 B and writing
 * 2 B an element, and backward runs their ToCopyBackward nodes (nb of them: a frozen weight has none), the
 * gradients cast back to fp32 (2 B read, 4 written).  Each cast is one dispatch and one launch. */
static int casts(expand_ctx *x, double n, double fwd_elems, double nb, double bwd_elems) {
  pf_kernel f = {.kind = PF_KERNEL_MEMORY, .name = "autocast-casts", .pass = PF_PASS_FWD,
                 .bytes = 6.0 * fwd_elems / n, .host_ops = 1, .count = n};
  pf_kernel b = f;
  b.bytes = nb > 0 ? 6.0 * bwd_elems / nb : 0, b.pass = PF_PASS_BWD, b.count = nb;
  x->ops += n * x->mult;
  int rc = n > 0 ? add(x->fwd, &f, x->mult) : 0;
  return rc == 0 && nb > 0 ? add(x->dg, &b, x->mult) : rc;
}

/* A product with a weight under autocast: its input cast unless already half (in_elems elements), and its
 * weight and bias (w_elems, w_tensors of them), whose casts autocast caches for the rest of the forward
 * (leaf tensors only; the cache lives as long as the autocast region: one forward).  cached: the weights
 * were cast already by an earlier product of the forward (DeBERTa's shared relative-position projections). */
static int weight_casts(expand_ctx *x, double in_elems, double w_elems, double w_tensors, bool cached) {
  if (!x->amp) return 0;
  double ni = x->half_in ? 0 : 1, nw = cached ? 0 : w_tensors, ein = ni * in_elems, ew = cached ? 0 : w_elems;
  return casts(x, ni + nw, ein + ew, ni + (x->frozen ? 0 : nw), ein + (x->frozen ? 0 : ew));
}

/* forward product C[m,n] = A[m,k] B[k,n] (batch of them) and its two gradients; weight: B is a parameter
 * (its gradient is a weight gradient, skipped when frozen), else both gradients are data gradients */
static int product_a(expand_ctx *x, pf_kernel_kind kind, const char *name, double m, double n, double k,
                     double batch, bool weight, double host_ops, double a_elems) {
  pf_precision p = kind == PF_KERNEL_CONV ? x->conv_p : x->gemm_p;
  double el = x->el, bb = batch > 0 ? batch : 1;
  /* HBM bytes of each of the three products: A (or dA), B (or dB) and C (or dC) once each */
  double a = a_elems > 0 ? a_elems : bb * m * k;
  pf_kernel f = {.kind = kind, .name = name, .prec = p, .layout = PF_GEMM_NN, .pass = PF_PASS_FWD, .m = m, .n = n,
                 .k = k, .batch = batch, .bytes = el * (a + bb * (k * n + m * n)), .host_ops = host_ops};
  pf_kernel d = f, g = f;
  d.layout = PF_GEMM_NT, d.pass = PF_PASS_BWD, d.n = k, d.k = n; /* dA[m,k] = dC[m,n] B^T */
  g.layout = PF_GEMM_TN, g.pass = PF_PASS_BWD, g.m = k, g.k = m, g.host_ops = 0; /* dB[k,n] = A^T dC */
  /* a weight gradient has a small output (k x n) and a long reduction (m): the libraries split the reduction
   * over the idle SMs and add the partial sums (cuBLAS/cuDNN split-K), S splits of at least 256 each */
  double tiles = ceil(k / 128) * ceil(n / 128) * bb, S = 1;
  if (x->units > 0 && tiles < x->units) S = fmax(1, fmin(floor(x->units / tiles), floor(m / 256)));
  if (S > 1) g.batch = bb * S, g.k = m / S, g.bytes += 4.0 * S * k * n * bb, g.flops = 2 * m * n * k * bb;
  double fl = 2 * m * n * k * bb * x->mult;
  x->flops_f += fl;
  x->flops_b += fl * ((weight && x->frozen) ? 1 : 2);
  int rc = add(x->fwd, &f, x->mult);
  if (rc == 0) rc = add(x->dg, &d, x->mult);
  if (rc == 0 && !(weight && x->frozen)) rc = add(weight ? x->wg : x->dg, &g, x->mult);
  /* second order: the data gradient dA = dC B^T is bilinear in dC and B, so its own gradients are a product of
   * the forward's shape (ggC = ggA B) and one of the weight gradient's (ggA^T dC) */
  pf_kernel f2 = f;
  f2.pass = PF_PASS_BWD;
  if (rc == 0) rc = add(x->gg, &f2, x->mult);
  if (rc == 0 && !(weight && x->frozen)) rc = add(x->gg, &g, x->mult);
  return rc;
}

static int product(expand_ctx *x, pf_kernel_kind kind, const char *name, double m, double n, double k, double batch,
                   bool weight, double host_ops) {
  return product_a(x, kind, name, m, n, k, batch, weight, host_ops, 0);
}

/* Second order (a gradient penalty's double backward: WGAN-GP, Gulrajani et al. 2017): the gradient of a data
 * gradient.  A normalisation's data gradient is no single kernel there: TensorFlow differentiates it as the
 * composite of python/ops/nn_grad.py (_FusedBatchNormGradGrad runs _BatchNormGrad, then tf.gradients of it):
 * _BatchNormGrad in training holds 13 operators over the whole tensor (six reductions: the means of grad_y and
 * x, the variance, the mean of grad_y x_offset, its sum for grad_scale, the sum of grad_y; seven element-wise:
 * the squared difference, grad_y - mean, x - mean, grad_y x_offset, the rescaled x_offset, their difference,
 * the final scaling), reading 15 and writing 7 tensors of E elements; the gradient of that graph is taken here
 * as two operators for each of the 13 (the gradients of a product with respect to both factors, a reduction's
 * broadcast back; 26 operators reading two tensors and writing one, 78 E): 39 kernels and 100 E moved.
 * PyTorch's batchnorm_double_backward is a composite too.  Measured on an H100 in PyTorch
 * (scripts/maelstrom-ap5-torch.py, AP5's critic): batch norm is half the gradient penalty's time, 5.7 of
 * 11.5 ms a critic update (docs/model.md, "AP5's step measured whole"). */
#define NORM_GG_OPS 39.0
#define NORM_GG_ELEMS 100.0

/* A normalisation's tensors through HBM.  Forward in training: the statistics pass reads x, the normalisation
 * reads x and writes y (3).  Backward: a batch norm's reduction (the sums of dy and dy x-hat per channel) runs
 * over the whole batch before dx can be written, so x and dy are read twice and dx written once (5: PyTorch's
 * backward_reduce and backward_elemt kernels in AP1's step on an H100, calibrate/results/
 * vm-h100-sxm-80-2026-11-26-torch-ap1-tf32-nhwc-kernels.json); a layer or group norm reduces per row and is
 * taken at 4 (not measured here). */
#define NORM_FWD_TENSORS 3.0
#define BN_BWD_TENSORS 5.0
#define NORM_BWD_TENSORS 4.0

/* A 2-D pointwise convolution (1x1, stride 1) on NCHW is a GEMM over the channels as laid out: cuDNN runs it as
 * one, with no layout copies (AP1's network in PyTorch on an H100: its 1x1 convolutions ran as GEMM kernels,
 * only its 2x2 ones had copies).  A Conv3D's (conv3d) are kept: TensorFlow's 3-D path is not measured, and
 * AP1's GPU-bound A2 rows read -4.7 % with its copies, -25.5 % without (docs/model.md, "Convolution layout
 * copies"). */
static bool pointwise_2d(const pf_layer *L, double kk, double s) {
  return kk == 1 && s == 1 && L->kind == PF_LY_CONV2D && !L->conv3d;
}

/* A memory-bound operator's forward and data-gradient kernels, and its second-order kernels: gg_n launches
 * moving gg_bytes in all (second_order), each one framework operator. */
static int memk2(expand_ctx *x, const char *name, double fwd_bytes, double bwd_bytes, double host_ops, double gg_bytes,
                 double gg_n) {
  pf_kernel f = {.kind = PF_KERNEL_MEMORY, .name = name, .pass = PF_PASS_FWD, .bytes = fwd_bytes, .host_ops = host_ops};
  pf_kernel b = f, g = f;
  b.pass = PF_PASS_BWD, b.bytes = bwd_bytes;
  g.pass = PF_PASS_BWD, g.bytes = gg_n > 0 ? gg_bytes / gg_n : 0, g.count = gg_n, g.host_ops = 1;
  int rc = add(x->fwd, &f, x->mult);
  if (rc == 0 && bwd_bytes > 0) rc = add(x->dg, &b, x->mult);
  if (rc == 0 && gg_n > 0 && gg_bytes > 0) rc = add(x->gg, &g, x->mult);
  return rc;
}

/* The operators that are linear in their input (bias add, pooling, up-sampling, concatenation, gathers):
 * their data gradient is linear in the incoming gradient, so its gradient is the forward map again.  (An
 * attention layer's softmax goes through here too: a second order through attention is priced by its products
 * and this rule only.) */
static int memk(expand_ctx *x, const char *name, double fwd_bytes, double bwd_bytes, double host_ops) {
  return memk2(x, name, fwd_bytes, bwd_bytes, host_ops, fwd_bytes, host_ops > 0 ? host_ops : 1);
}

/* cuDNN's tensor-core convolution kernels read and write NHWC; given NCHW tensors it transposes the
 * operands in and the result out with kernels of its own (cuDNN developer guide, "Tensor Transformations:
 * Conversion Between NCHW and NHWC"; the nchwToNhwcKernel / nhwcToNchwKernel launches of a profiled step).
 * Each pass moves two tensors through HBM once each way: forward the input in and the output out, the data
 * gradient dY in and dX out, the weight gradient X and dY in; E and Eo are the input's and output's elements.
 * Measured on an H100 (scripts/conv-shapes-torch.py, docs/model.md "Convolution layout copies"): the
 * difference between NCHW and channels-last TF32 convolutions of AP5's shapes is this traffic at stream rate. */
static int layout_copies(expand_ctx *x, double E, double Eo) {
  pf_kernel f = {.kind = PF_KERNEL_MEMORY, .name = "nchw-nhwc-copies", .pass = PF_PASS_FWD,
                 .bytes = x->el * (E + Eo), .count = 2};
  pf_kernel d = f, g = f;
  d.pass = g.pass = PF_PASS_BWD;
  int rc = add(x->fwd, &f, x->mult);
  if (rc == 0) rc = add(x->dg, &d, x->mult);
  if (rc == 0 && !x->frozen) rc = add(x->wg, &g, x->mult);
  if (rc == 0) rc = add(x->gg, &g, x->mult); /* the second order (product_a) takes its operands the same way */
  return rc;
}

static int shape_err(const pf_workload *w, int i, const pf_layer *L, const char *what) {
  char where[64] = "";
  if (L->line > 0) snprintf(where, sizeof where, " (line %d)", L->line);
  return pf_error_set(PF_EINVAL, "model %s: layers[%d] %s%s: %s", w->id, i, pf_layer_kind_name(L->kind), where, what);
}

/* The kernels of attention layer L over T tokens of d features (HF-style eager attention, DeBERTa's
 * disentangled attention: the file's header); *p0 its parameters. */
static int expand_attention(const pf_workload *wl, int i, const pf_layer *L, expand_ctx *x, double ops, double T,
                            double d, double *p0) {
  double B = x->B, el = x->el, a = L->heads;
  if (a <= 0 || fmod(d, a) != 0) return shape_err(wl, i, L, "heads must be positive and divide the features");
  double dh = d / a, z = B * a * T * T, P = L->rel_pos;
  *p0 = 4 * d * d + 4 * d;
  double op = ops / (P > 0 ? 14.0 : 8.0); /* operators spread over the kernels below */
  int rc = product(x, PF_KERNEL_GEMM, "q-proj", B * T, d, d, 1, true, op);
  rc = rc < 0 ? rc : product(x, PF_KERNEL_GEMM, "k-proj", B * T, d, d, 1, true, op);
  rc = rc < 0 ? rc : product(x, PF_KERNEL_GEMM, "v-proj", B * T, d, d, 1, true, op);
  for (int j = 0; j < 3 && rc == 0; j++) rc = weight_casts(x, B * T * d, d * d + d, 2, false); /* q, k, v */
  x->half_in = false; /* the relative-position embeddings: LayerNorm's fp32 output */
  rc = rc < 0 ? rc : product(x, PF_KERNEL_GEMM, "scores", T, T, dh, B * a, false, op);
  if (P > 0) { /* relative-position keys and queries (shared projections), c2p and p2c scores and gathers */
    rc = rc < 0 ? rc : product(x, PF_KERNEL_GEMM, "pos-key", P, d, d, 1, true, op);
    rc = rc < 0 ? rc : product(x, PF_KERNEL_GEMM, "pos-query", P, d, d, 1, true, op);
    for (int j = 0; j < 2 && rc == 0; j++) rc = weight_casts(x, P * d, 0, 0, true); /* key and query weights */
    rc = rc < 0 ? rc : product(x, PF_KERNEL_GEMM, "c2p", T, P, dh, B * a, false, op);
    rc = rc < 0 ? rc : product(x, PF_KERNEL_GEMM, "p2c", T, P, dh, B * a, false, op);
    rc = rc < 0 ? rc : memk(x, "c2p-gather", 3 * el * z, 3 * el * z, op);
    rc = rc < 0 ? rc : memk(x, "p2c-gather", 3 * el * z, 3 * el * z, op);
    x->act += 2 * el * z * x->mult / B;
  }
  rc = rc < 0 ? rc : memk(x, "mask-softmax", 3 * el * z, 3 * el * z, op);
  /* autocast: softmax runs in fp32 (its fp16 scores cast up) and the context product casts it back down */
  if (rc == 0 && x->amp) rc = casts(x, 2, 2 * z, 2, 2 * z);
  rc = rc < 0 ? rc : memk(x, "attention-dropout", el * z * 2 + z, el * z * 2 + z, op);
  rc = rc < 0 ? rc : product(x, PF_KERNEL_GEMM, "context", T, dh, T, B * a, false, op);
  rc = rc < 0 ? rc : memk(x, "head-reshapes", 8 * el * B * T * d, 8 * el * B * T * d, op);
  rc = rc < 0 ? rc : product(x, PF_KERNEL_GEMM, "out-proj", B * T, d, d, 1, true, op);
  x->half_in = true; /* the context product's output */
  if (rc == 0) rc = weight_casts(x, 0, d * d + d, 2, false);
  x->act += (3 * el * B * T * d + 2 * el * z + z) * x->mult / B;
  return rc;
}

/* Expand layer L on input shape *h, *w, *c (updated to its output). */
static int expand_layer(const pf_workload *wl, int i, const pf_layer *L, expand_ctx *x, double *h, double *w,
                        double *c) {
  double B = x->B, el = x->el, E = B * *h * *w * *c, hw = B * *h * *w;
  double ops = L->ops > 0 ? L->ops : default_ops(L);
  double kk = L->kernel > 0 ? L->kernel : (L->kind == PF_LY_POOL ? 2 : 3);
  double s = L->stride > 0 ? L->stride : (L->kind == PF_LY_CONVT2D || L->kind == PF_LY_UPSAMPLE ? 2 : 1);
  double p0 = 0;
  int rc = 0;
  x->ops += ops * x->mult;
  if (!L->no_saved_input) x->act += el * E * x->mult / B; /* the layer's input is kept for backward */
  switch (L->kind) {
  case PF_LY_CONV2D:
  case PF_LY_CONVT2D: {
    if (L->out <= 0) return shape_err(wl, i, L, "out (output channels) must be positive");
    double ho = L->kind == PF_LY_CONV2D ? ceil(*h / s) : *h * s, wo = L->kind == PF_LY_CONV2D ? ceil(*w / s) : *w * s;
    double k = *c * kk * kk / (L->kind == PF_LY_CONVT2D ? s * s : 1);
    p0 = kk * kk * *c * L->out + (L->no_bias ? 0 : L->out);
    /* implicit GEMM (cuDNN, MIOpen) gathers the im2col matrix A [B Ho Wo, Cin kh kw] from the input tensor
     * on the fly: HBM sees the input once (B H W Cin), not the k^2-times larger matrix */
    rc = product_a(x, PF_KERNEL_CONV, L->kind == PF_LY_CONV2D ? "conv" : "conv-transpose", B * ho * wo, L->out, k,
                   1, true, ops, E);
    if (rc == 0) rc = weight_casts(x, E, p0, L->no_bias ? 1 : 2, false);
    double Eo = B * ho * wo * L->out;
    if (rc == 0 && x->nchw_copies && !pointwise_2d(L, kk, s)) rc = layout_copies(x, E, Eo);
    x->half_in = true;
    /* the bias is its own element-wise pass after cuDNN's convolution (TensorFlow's BiasAdd, PyTorch's add after
     * cudnn_convolution), and its gradient a reduction over the output */
    if (rc == 0 && !L->no_bias) rc = memk(x, "bias-add", 2 * el * Eo, el * Eo, 1);
    *h = ho, *w = wo, *c = L->out;
    break;
  }
  case PF_LY_LINEAR:
    if (L->out <= 0) return shape_err(wl, i, L, "out (features) must be positive");
    p0 = *c * L->out + (L->no_bias ? 0 : L->out);
    rc = product(x, PF_KERNEL_GEMM, "linear", hw, L->out, *c, 1, true, ops);
    if (rc == 0) rc = weight_casts(x, E, p0, L->no_bias ? 1 : 2, false);
    x->half_in = true;
    *c = L->out;
    break;
  case PF_LY_ATTENTION:
    rc = expand_attention(wl, i, L, x, ops, *h * *w, *c, &p0);
    break;
  case PF_LY_NORM:
    p0 = L->no_bias ? 0 : 2 * *c; /* no_bias: no affine scale and centre */
    if (L->batch_stats) x->nontrainable += 2 * *c * x->mult;
    rc = memk2(x, L->batch_stats ? "batch-norm" : "norm", NORM_FWD_TENSORS * el * E,
               (L->batch_stats ? BN_BWD_TENSORS : NORM_BWD_TENSORS) * el * E, ops, NORM_GG_ELEMS * el * E, NORM_GG_OPS);
    if (!L->batch_stats) x->half_in = false; /* layer and group norm run in fp32 under autocast */
    break;
  case PF_LY_ACT: { /* each further unfused operator (Swish = sigmoid, multiply) reads two tensors, writes one */
    double fwd = el * E * (2 + 3 * (ops - 1)), bwd = 1.5 * fwd;
    rc = memk2(x, "activation", fwd, bwd, ops, 2 * bwd, 2 * ops); /* its derivative's derivative: twice the first */
    break;
  }
  case PF_LY_POOL:
    *h = ceil(*h / kk), *w = ceil(*w / kk);
    rc = memk(x, "pool", el * (E + E / (kk * kk)), el * (2 * E + E / (kk * kk)), ops);
    break;
  case PF_LY_UPSAMPLE: {
    double co = L->out > 0 ? L->out : L->subpixel ? *c / (s * s) : *c;
    if (L->subpixel && fmod(*c, s * s) != 0) return shape_err(wl, i, L, "sub-pixel upsampling needs channels divisible by factor^2");
    double Eo = B * *h * s * *w * s * co;
    rc = memk(x, L->subpixel ? "depth-to-space" : "upsample", el * (E + Eo), el * (E + Eo), ops);
    *h *= s, *w *= s, *c = co;
    break;
  }
  case PF_LY_CONCAT: {
    if (L->out <= 0) return shape_err(wl, i, L, "out (channels added by the skip connection) must be positive");
    double Eo = hw * (*c + L->out);
    rc = memk(x, "concat", 2 * el * Eo, 2 * el * Eo, ops);
    *c += L->out;
    break;
  }
  case PF_LY_EMBEDDING: {
    if (L->vocab <= 0 || L->out <= 0) return shape_err(wl, i, L, "vocab and out must be positive");
    double T = B * *h * *w;
    p0 = (double)L->vocab * L->out;
    /* forward gathers rows; backward zeroes the dense gradient and scatter-adds into it */
    rc = memk(x, "embedding", 2 * el * T * L->out, x->frozen ? 0 : el * (p0 + 3 * T * L->out), ops);
    x->half_in = false;
    *c = L->out;
    break;
  }
  case PF_LY_END:
  case PF_LY_NKINDS: return shape_err(wl, i, L, "invalid layer kind");
  }
  if (rc < 0) return (int)rc;
  x->params += p0 * x->mult;
  if (!(*h > 0 && *w > 0 && *c > 0)) return shape_err(wl, i, L, "the shape vanishes");
  return 0;
}

/* A layer's input or output within the plausible tensor (core/bounds.h): elements per sample. */
static int tensor_check(const pf_workload *w, int i, const pf_layer *L, const char *which, double h, double wd,
                        double c) {
  const pf_plaus *b = pf_plaus_get(PF_PLAUS_TENSOR);
  if (pf_plaus_ok(b, h * wd * c)) return 0;
  char why[512], what[640];
  snprintf(what, sizeof what, "its %s, %g x %g x %g: %s", which, h, wd, c,
           pf_plaus_why(b, h * wd * c, why, sizeof why));
  return shape_err(w, i, L, what);
}

double pf_net_pass_runs(const pf_net *n, int p) {
  return p == 0 ? n->fwd : p == 1 ? n->dgrad : p == 2 ? n->wgrad : n->ggrad;
}

/* Walk the list: shapes, totals, and the kernels of each network when lists is non-NULL
 * (lists[4 n + 0..3]: forward, data gradient, weight gradient, second order of network n). */
int pf_layers_walk(const pf_workload *w, double B, double el, int units, pf_precision gp, pf_precision cp, bool amp,
                   bool nchw_copies, pf_kernel_list *lists, pf_layers_totals *t, double *params_net) {
  int nn;
  const pf_net *nets = pf_layers_nets(w, &nn);
  memset(t, 0, sizeof *t);
  if (!w->ly) return pf_error_set(PF_EINVAL, "model %s: no layer list", w->id);
  double h = 0, wd = 0, c = 0;
  int prev_net = -1;
  bool half = false; /* autocast: the running activation is already fp16/bf16 */
  for (int i = 0; w->ly[i].kind != PF_LY_END; i++) {
    const pf_layer *L = &w->ly[i];
    if (L->net < 0 || L->net >= nn) return shape_err(w, i, L, "net index out of range");
    if (L->net != prev_net) h = nets[L->net].h, wd = nets[L->net].w, c = nets[L->net].c, prev_net = L->net, half = false;
    if (L->h > 0) h = L->h;
    if (L->w > 0) wd = L->w;
    if (L->c > 0) c = L->c;
    if (!(h > 0 && wd > 0 && c > 0)) return shape_err(w, i, L, "no input shape (give h, w, c or the network's input)");
    int R = L->repeat > 1 ? L->repeat : 1, S = L->span > 1 ? L->span : 1;
    double h0 = h, w0 = wd, c0 = c;
    for (int j = 0; j < S; j++) {
      const pf_layer *M = &w->ly[i + j];
      if (M->kind == PF_LY_END || (j > 0 && (M->net != L->net || M->repeat > 1)))
        return shape_err(w, i, L, "span runs past the end of its network or into another repeated block");
      expand_ctx x = {.B = B, .el = el, .units = units, .gemm_p = gp, .conv_p = cp, .mult = R, .frozen = M->frozen,
                      .amp = amp, .nchw_copies = nchw_copies, .half_in = half};
      if (lists) {
        pf_kernel_list *l = &lists[PF_LAYERS_PASSES * L->net];
        x.fwd = &l[0], x.dg = &l[1], x.wg = &l[2];
        x.gg = nets[L->net].ggrad > 0 ? &l[3] : NULL; /* no second-order kernels for a net that runs none */
      }
      int rc = tensor_check(w, i + j, M, "input", h, wd, c);
      if (rc == 0) rc = expand_layer(w, i + j, M, &x, &h, &wd, &c);
      if (rc == 0) rc = tensor_check(w, i + j, M, "output", h, wd, c);
      if (rc < 0) return rc;
      half = x.half_in;
      const pf_net *N = &nets[L->net];
      t->params += M->frozen ? 0 : x.params;
      if (params_net && !M->frozen) params_net[L->net] += x.params;
      t->nontrainable += x.nontrainable + (M->frozen ? x.params : 0);
      t->fwd_flops += x.flops_f / B;
      t->step_flops += (N->fwd * x.flops_f + N->dgrad * x.flops_f + N->wgrad * (x.flops_b - x.flops_f) +
                        N->ggrad * x.flops_b) / B;
      t->act_bytes += x.act;
      t->fwd_ops += x.ops;
      t->layers += R;
    }
    if (R > 1 && (h != h0 || wd != w0 || c != c0))
      return shape_err(w, i, L, "a repeated block must keep its shape (output differs from input)");
    i += S - 1;
  }
  return 0;
}

/* FLOPs per sample are what one more sample adds: F(2 samples) - F(1 sample), so work done once per batch
 * (DeBERTa's relative-position projections) is not counted as a sample's */
int pf_layers_summary(const pf_workload *w, pf_layers_totals *t) {
  pf_layers_totals t2;
  int rc = pf_layers_walk(w, 1.0, 4.0, 0, PF_FP32, PF_FP32, false, false, NULL, t, NULL);
  if (rc == 0) rc = pf_layers_walk(w, 2.0, 4.0, 0, PF_FP32, PF_FP32, false, false, NULL, &t2, NULL);
  if (rc < 0) return rc;
  if (2 * t2.fwd_flops - t->fwd_flops > 0) t->fwd_flops = 2 * t2.fwd_flops - t->fwd_flops;
  if (2 * t2.step_flops - t->step_flops > 0) t->step_flops = 2 * t2.step_flops - t->step_flops;
  return 0;
}

int pf_layers_check(pf_workload *w) {
  pf_layers_totals t;
  int rc = pf_layers_summary(w, &t);
  if (rc < 0) return rc;
  if (!(t.params > 0)) return pf_error_set(PF_EINVAL, "model %s: the layer list has no trainable parameters", w->id);
  const struct { pf_plaus_id id; double x; } tot[] = {
      {PF_PLAUS_PARAMS, t.params}, {PF_PLAUS_SAMPLE_FLOPS, t.step_flops}, {PF_PLAUS_SAMPLE_ACT, t.act_bytes}};
  for (size_t k = 0; k < sizeof tot / sizeof *tot; k++) { /* totals a list's shapes add up to (docs/bounds.md) */
    char why[512];
    if (!pf_plaus_ok(pf_plaus_get(tot[k].id), tot[k].x))
      return pf_error_set(PF_EINVAL, "model %s: layers: the list's %s: %s", w->id, pf_plaus_get(tot[k].id)->name,
                          pf_plaus_why(pf_plaus_get(tot[k].id), tot[k].x, why, sizeof why));
  }
  w->params = t.params;
  w->nontrainable = t.nontrainable;
  w->flops_per_sample = t.step_flops;
  w->act_bytes_per_sample = t.act_bytes;
  return 0;
}
