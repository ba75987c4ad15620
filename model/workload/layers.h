/* layers.h - workloads described by their layers (DESIGN 5.1-5.2): a list of
 * convolutions, transposed convolutions, linear layers, attention blocks,
 * normalisations, pooling, upsampling, concatenations, activations and
 * embeddings with their shapes, from which parameters, FLOPs, activation
 * memory and the kernels of a training step follow (layers.c).
 *
 * Shapes are per sample: an image layer sees h x w x c, a token layer h
 * tokens of c features (w = 1).  A layer that gives no input shape takes the
 * previous layer's output; the first layer of each network starts from the
 * network's input.  A model may hold several networks (a GAN's generator and
 * critic), each with the number of forward, data-gradient, weight-gradient
 * passes and optimizer steps one training step runs (pf_net).
 *
 * The file format (`--model PATH.cfg`, or a `model = { ... }` group in a
 * scenario) is documented in docs/scenario-format.md, "Layer lists".
 */
#ifndef PREFLIGHT_LAYERS_H
#define PREFLIGHT_LAYERS_H

#include "kernels.h"
#include "spec.h"

#include <stdbool.h>

typedef enum {
  PF_LY_END,        /* ends a list */
  PF_LY_CONV2D,     /* out channels, kernel k x k, stride; "same" padding: h/stride x w/stride */
  PF_LY_CONVT2D,    /* transposed convolution: h x stride, w x stride, out channels */
  PF_LY_LINEAR,     /* c -> out features on every token / pixel */
  PF_LY_ATTENTION,  /* self-attention block: QKV, scores, softmax, context, output projection; heads;
                       rel_pos > 0: DeBERTa disentangled attention over rel_pos relative positions */
  PF_LY_NORM,       /* batch / layer / group norm: bytes-bound, affine 2c parameters (+ 2c statistics for batch) */
  PF_LY_POOL,       /* k x k pooling, stride k */
  PF_LY_UPSAMPLE,   /* x factor (nearest / bilinear), or sub-pixel (depth to space: c / factor^2 channels) */
  PF_LY_CONCAT,     /* + channels from a skip connection */
  PF_LY_ACT,        /* element-wise activation / dropout / residual add / loss */
  PF_LY_EMBEDDING,  /* lookup of vocab x out rows for h tokens */
  PF_LY_NKINDS
} pf_layer_kind;

typedef struct pf_layer {
  pf_layer_kind kind;
  int net;            /* index of the network (0 when the model has one) */
  int h, w, c;        /* input shape per sample; 0 = the previous layer's output */
  int out;            /* conv/linear/embedding: output channels or features; concat: channels added;
                         upsample: output channels (0 = c, or c / factor^2 for sub-pixel) */
  int kernel;         /* conv, conv_transpose, pool: k (0: 3 for convolutions, 2 for pooling) */
  int stride;         /* conv, conv_transpose: stride (0 = 1; conv_transpose 0 = 2); upsample: factor (0 = 2) */
  int heads;          /* attention */
  int rel_pos;        /* attention: relative positions (DeBERTa: 2 x position buckets), 0 = none */
  int vocab;          /* embedding rows */
  bool no_bias;       /* conv / linear without bias; norm without its affine scale and centre */
  bool batch_stats;   /* norm: batch norm (running mean and variance, non-trainable) */
  bool subpixel;      /* upsample: depth to space */
  bool conv3d;        /* conv: a Conv3D over a depth-1 volume (Keras, MAELSTROM AP1): the same products, run by
                         cuDNN's 3-D path, whose pointwise convolutions on NCHW take the layout copies too */
  bool frozen;        /* no weight gradient (and no optimizer) for this layer's parameters */
  bool no_saved_input; /* backward keeps no tensor of its own for this layer: an in-place activation (the
                          output it keeps is the next layer's kept input), a residual add, a shortcut that
                          re-reads a tensor already kept */
  int repeat, span;   /* the span layers from this one run repeat times (0 = 1) */
  int ops;            /* framework operators per forward (0 = the kind's default) */
  int line;           /* source line in the model file (0 for built-ins) */
} pf_layer;

/* One network of the model and what one training step runs of it. */
typedef struct pf_net {
  const char *name;
  int h, w, c;        /* input per sample */
  double fwd, dgrad, wgrad, opt; /* forward passes, data-gradient passes, weight-gradient passes, optimizer steps */
  double ggrad;       /* second-order passes: a gradient penalty's double backward through the net (layers.c) */
} pf_net;

/* Kernel lists per network: forward, data gradient, weight gradient, second order. */
#define PF_LAYERS_PASSES 4

/* How often a step runs network n's kernel list of pass p (0 .. PF_LAYERS_PASSES - 1: fwd, dgrad, wgrad,
 * ggrad). */
double pf_net_pass_runs(const pf_net *n, int p);

/* Totals of a layer list for one sample (pf_layers_summary). */
typedef struct pf_layers_totals {
  double params, nontrainable;
  double fwd_flops;   /* one forward of every network */
  double step_flops;  /* one training step, per sample: each network's passes as pf_net says */
  double act_bytes;   /* activations kept for backward, per sample, in fp32 */
  double fwd_ops;     /* framework operators of one forward of every network */
  int layers;         /* layers after repeats */
} pf_layers_totals;

/* Shapes, parameters and FLOPs of w's list (w->kind == PF_WL_LAYERS).
 * Returns 0 or PF_EINVAL naming the layer (and its file line) whose shape is
 * impossible. */
int pf_layers_summary(const pf_workload *w, pf_layers_totals *t);

/* Fill params, flops_per_sample, act_bytes_per_sample and nontrainable of a
 * layer-list workload from its list. */
int pf_layers_check(pf_workload *w);

/* Read a model file (libconfig, `model = { ... }`) into *w; the list lives
 * until the process exits.  Errors name file, line and field. */
int pf_layers_load(const char *path, pf_workload *w);

/* Networks of w's list (at most PF_LAYERS_MAX_NETS; *n set); static. */
#define PF_LAYERS_MAX_NETS 4
const pf_net *pf_layers_nets(const pf_workload *w, int *n);

/* Walk w's list at B samples per GPU and el bytes per activation element:
 * shapes, totals (*t), trainable parameters per network (params_net, may be
 * NULL) and, when lists is non-NULL, the kernels of each network (lists[4 n +
 * 0..3]: forward, data gradient, weight gradient, second order of network n; units are the
 * device's SMs/CUs for split-K, gp and cp the math precisions of products and
 * convolutions; amp: PyTorch autocast, whose casts each product with a weight
 * adds: layers.c; nchw_copies: convolutions pay cuDNN's NCHW <-> NHWC copies, layers.c layout_copies).
 * Returns 0 or PF_EINVAL naming the layer. */
int pf_layers_walk(const pf_workload *w, double B, double el, int units, pf_precision gp, pf_precision cp, bool amp,
                   bool nchw_copies, pf_kernel_list *lists, pf_layers_totals *t, double *params_net);

/* Built-in MAELSTROM layer lists (maelstrom.c); static. */
extern const pf_layer pf_maelstrom_ap1_unet[];
extern const pf_layer pf_maelstrom_ap2_deberta[];
extern const pf_layer pf_maelstrom_ap5_wgan[];
extern const pf_net pf_maelstrom_ap1_nets[];
extern const pf_net pf_maelstrom_ap2_nets[];
extern const pf_net pf_maelstrom_ap5_nets[];
/* Built-in ResNet-50 v1.5 (resnet.c); static. */
extern const pf_layer pf_resnet50[];
extern const pf_net pf_resnet50_nets[];

const char *pf_layer_kind_name(pf_layer_kind k);

#endif
