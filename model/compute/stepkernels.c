/* stepkernels.c - the kernels of a training step outside the layers: what
 * runs once per step after the last backward (gradient norm and clipping,
 * loss-scale unscaling and the inf check, the optimizer, the copies of the
 * master weights, gradient bucket copies, zeroing the gradients) and the
 * copies single-process DataParallel adds, each priced from its bytes like the
 * layers' memory-bound kernels (kernel.c: HBM at the device's measured or
 * datasheet efficiency).  The list follows the framework (pf_scenario_framework):
 *
 * Megatron-LM (megatron/core/optimizer: DistributedOptimizer / Float16Optimizer,
 *   clip_grads.py; core v0.x): the gradient buffer zeroed before the step
 *   (zero_grad_buffer, pf_grad_bytes a parameter of the stage: 4 B fp32, 2 B
 *   fp16 or --grad-reduce-in-bf16); from a 2-byte buffer the optimizer
 *   shard's fp32 main grads are copied (2 + 4 B); fp16 only: unscaled with
 *   the inf check (multi_tensor_scale, 8 B); the gradient norm (multi_tensor_l2norm, 4 B;
 *   the scaling pass runs only when the norm exceeds clip_grad, on the host's
 *   .item() of it, so it is not priced); fused Adam (apex / TE FusedAdam: grad
 *   4, fp32 master r/w 8, m r/w 8, v r/w 8 = 28 B) on the optimizer shard;
 *   bf16/fp16: the updated master copied to the model weights (4 + 2 B).
 * PyTorch eager (torch.optim, >= 2.0): zero_grad(set_to_none=True) is the
 *   default, so no kernel; AMP fp16: GradScaler's unscale and inf check
 *   (_amp_foreach_non_finite_check_and_unscale_, 8 B); clip_grad_norm_ (the
 *   Hugging Face Trainer's default max_grad_norm 1.0): foreach norms (4 B) and
 *   a foreach multiply by the clamped coefficient, which runs whether or not it
 *   clips (8 B); AdamW's default on CUDA, the multi-tensor (foreach, unfused)
 *   implementation (torch/optim/adamw.py _multi_tensor_adamw): weight decay
 *   mul_ 8, lerp_ of m 12, mul_ and addcmul_ of v 8 + 12, sqrt 8, div_ 8,
 *   add_ eps 8, addcdiv_ into the parameter 16 = 80 B a parameter in 8 foreach
 *   launches per chunk of tensors; parameters and master are fp32 under AMP.
 *   DDP (one process per GPU) copies each gradient into its all-reduce bucket
 *   and back (gradient_as_bucket_view=False, the default; DDP documentation):
 *   16 B.  DataParallel (one process, several GPUs; torch/nn/parallel/
 *   data_parallel.py): every forward replicates the module from the first GPU
 *   (broadcast_coalesced: parameters flattened into buckets, sent, unflattened
 *   on each GPU) and backward sums the replicas' gradients onto it
 *   (reduce_add_coalesced): the first GPU flattens 8 B, unflattens and adds
 *   8 B a parameter, and sends and receives 4 B a parameter each way over the
 *   fabric (datasheet pair bandwidth: NCCL's ring broadcast and reduce move
 *   the whole buffer over each link; a bridged pair uses its bridge); these replace
 *   the all-reduce of one process per GPU (engine/dpsync.c skips it), and the
 *   optimizer runs on the first GPU only.
 * TensorFlow / Keras: Adam is one fused ResourceApplyAdam per variable (28 B:
 *   gradient, variable, m, v), no clipping by default; Horovod copies the
 *   gradients into its fusion buffer and back (Horovod documentation, "Tensor
 *   Fusion"): 16 B.
 * Multi-tensor kernels launch once per chunk of tensors: PyTorch's
 *   MultiTensorApply takes at most 48-110 tensors a launch (depth_to_max_tensors,
 *   ATen/native/cuda/MultiTensorApply.cuh); 48 is used. */
#include "compute.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

#define MT_CHUNK 48.0 /* tensors per multi-tensor launch (depth 3) */
/* Host time per parameter tensor of a PyTorch step outside its kernels' dispatch, counted in the code of
 * PyTorch 2.1-2.2 (torch/optim/adamw.py, sgd.py, optimizer.py, nn/utils/clip_grad.py) at the eager
 * per-operator costs above: non-capturable foreach AdamW reads each tensor's step count twice with .item()
 * (the bias corrections' list comprehensions: two dispatches of ~3 us, pytorch#32194's operator
 * micro-benchmarks) and increments it (a CPU add inside _foreach_add_, ~1 us), and _init_group,
 * clip_grad_norm_ and zero_grad(set_to_none) walk the parameter lists in Python (~2 us): 9 us a tensor;
 * foreach SGD has no step count: the list walks, 2 us.  Scaled by the node's measured eager cost. */
#define PY_ADAMW_TENSOR_S 9e-6
#define PY_SGD_TENSOR_S 2e-6

typedef struct tail_ctx {
  pf_kernel_list *l;
  double launches; /* multi-tensor launches of one foreach operator */
  int rc;
} tail_ctx;

/* FP32 operations per parameter of the update rules, counted from their algorithms (an FMA as 2): Adam(W) the
 * two moments (3 + 4), their bias corrections (2), the square root, epsilon and division (4), the learning rate,
 * weight decay and the update (3), 16; SGD with momentum 4; a gradient norm's square and sum 2.  Power, not time
 * (the kernels stream their bytes: 16 operations against 28 B is far below an H100's 20 FP32 FLOP per HBM byte). */
#define ADAM_OPS 16.0
#define SGD_OPS 4.0
#define NORM_OPS 2.0

static void add_ops(tail_ctx *c, const char *name, double bytes, double count, double ops) {
  if (!(bytes > 0)) return;
  pf_kernel k = {.kind = PF_KERNEL_OPTIMIZER, .name = name, .pass = PF_PASS_OPT, .bytes = bytes / count,
                 .count = count, .host_ops = 1, .vec_flops = ops / count};
  if (c->rc == 0) c->rc = pf_kernel_list_add(c->l, &k);
}

static void add(tail_ctx *c, const char *name, double bytes, double count) { add_ops(c, name, bytes, count, 0); }

static void megatron_tail(tail_ctx *c, const pf_scenario *sc, double P, double S) {
  bool fp16 = sc->precision == PF_FP16, low = pf_precision_bytes(sc->precision) < 4;
  double g = pf_grad_bytes(sc);
  add(c, "zero-grad-buffer", g * P, 1);
  if (g < 4.0) add(c, "main-grads-copy", (g + 4.0) * S, c->launches);
  if (fp16) add(c, "unscale-inf-check", 8.0 * S, c->launches);
  add_ops(c, "grad-norm", 4.0 * S, c->launches, NORM_OPS * S);
  add_ops(c, "adam (fused)", 28.0 * S, c->launches, ADAM_OPS * S);
  if (low) add(c, "master-to-model-params", 6.0 * S, c->launches);
}

static void pytorch_tail(tail_ctx *c, const pf_scenario *sc, double P, double S, double tensors) {
  int dp = sc->plan.dp * sc->plan.cp;
  bool sgd = sc->workload.optimizer == PF_OPTIM_SGD;
  /* the step's Python per parameter tensor, on the host only (a kernel of no GPU time), before its kernels */
  pf_host_costs hc;
  pf_host_costs_get(sc, &hc);
  pf_kernel py = {.kind = PF_KERNEL_FIXED, .name = "optimizer-python", .pass = PF_PASS_OPT,
                  .host_s = tensors * (sgd ? PY_SGD_TENSOR_S : PY_ADAMW_TENSOR_S) * hc.cpu_scale};
  if (c->rc == 0 && py.host_s > 0) c->rc = pf_kernel_list_add(c->l, &py);
  if (dp > 1 && sc->workload.dp_impl == PF_DPIMPL_PROCESS) add(c, "ddp-bucket-copies", 16.0 * P, 2 * c->launches);
  if (sc->precision == PF_FP16) add(c, "unscale-inf-check", 8.0 * P, c->launches);
  if (!sgd) { /* clipping: the Hugging Face Trainer's default; torchvision's ImageNet recipe has none */
    add_ops(c, "grad-norm", 4.0 * P, c->launches, NORM_OPS * P);
    add(c, "clip-grads", 8.0 * P, c->launches);
  }
  if (sgd) add_ops(c, "sgd-momentum (foreach)", 36.0 * S, 3 * c->launches, SGD_OPS * S);
  else add_ops(c, "adamw (foreach)", 80.0 * S, 8 * c->launches, ADAM_OPS * S);
}

static void tensorflow_tail(tail_ctx *c, const pf_scenario *sc, double P, double S, double tensors) {
  if (sc->plan.dp * sc->plan.cp > 1) add(c, "fusion-buffer-copies", 16.0 * P, 2);
  add_ops(c, "adam (per variable)", 28.0 * S, tensors, ADAM_OPS * S);
}

/* DataParallel's transfers run at the fabric's pair bandwidth (per direction), a bridged pair's at its bridge;
 * 0 where DataParallel does not apply (one GPU, DDP, no fabric figure) */
static double dp_bw(const pf_scenario *sc) {
  const pf_machine *m = &sc->machine;
  int n = sc->plan.dp;
  double bw = m->fabric_pair_bw_Bps > 0 ? m->fabric_pair_bw_Bps : m->fabric_bw_Bps;
  if (m->fabric_bridge_bw_Bps > 0 && n <= m->fabric_bridge_group) bw = m->fabric_bridge_bw_Bps; /* one bridged group */
  return sc->workload.dp_impl == PF_DPIMPL_DATAPARALLEL && n > 1 && bw > 0 ? bw : 0.0;
}

/* One DataParallel transfer of 4 B a parameter.  Both are NCCL collectives where NCCL is built in (PyTorch's
 * torch/csrc/cuda/comm.cpp, _broadcast_out_impl: nccl::broadcast; torch/nn/parallel/comm.py, reduce_add:
 * nccl.reduce; RCCL on ROCm), so they are communication kernels on every GPU (.comm) */
static void dp_transfer(tail_ctx *c, const pf_scenario *sc, const char *name, double P, double bw) {
  pf_kernel k = {.kind = PF_KERNEL_FIXED, .name = name, .pass = PF_PASS_OPT,
                 .fixed_s = 4.0 * P / bw + sc->machine.fabric_latency_s, .host_ops = 1, .comm = true};
  if (c->rc == 0) c->rc = pf_kernel_list_add(c->l, &k);
}

/* DataParallel's replicate, before every forward of the wrapped module, training's and evaluation's: the
 * flatten copies, then the broadcast */
static void replicate(tail_ctx *c, const pf_scenario *sc, double P, double bw) {
  add(c, "dp-replicate-flatten", 8.0 * P, c->launches);
  dp_transfer(c, sc, "dp-replicate-broadcast", P, bw);
}

/* DataParallel's replicate and gradient reduction (in its backward), on the first GPU: the copies, and the
 * transfers */
static void dataparallel(tail_ctx *c, const pf_scenario *sc, double P) {
  double bw = dp_bw(sc);
  if (!(bw > 0)) return;
  replicate(c, sc, P, bw);
  add(c, "dp-reduce-unflatten-add", 8.0 * P, c->launches);
  dp_transfer(c, sc, "dp-grad-reduce", P, bw);
}

/* Multi-tensor launches of one foreach operator over the stage's parameter tensors: a transformer layer's 12
 * (QKV, projection, FC1, FC2 weights and biases, two norms' scales and shifts), about two per layer of a layer
 * list (weight and bias), torchvision ResNet-50's 161 for a FLOP-count model */
static double param_tensors(const pf_scenario *sc, const pf_stage_work *w) {
  return sc->workload.kind == PF_WL_TRANSFORMER ? 12.0 * w->layers + 4
         : sc->workload.kind == PF_WL_LAYERS   ? 2.0 * w->layers
                                               : 161;
}

int pf_step_eval_kernels(const pf_scenario *sc, const pf_stage_work *w, pf_kernel_list *l) {
  double bw = dp_bw(sc);
  if (!(bw > 0)) return 0;
  tail_ctx c = {.l = l, .launches = fmax(1.0, ceil(param_tensors(sc, w) / MT_CHUNK))};
  replicate(&c, sc, w->params, bw);
  return c.rc;
}

int pf_step_tail_kernels(const pf_scenario *sc, const pf_stage_work *w, pf_kernel_list *l) {
  const pf_plan *p = &sc->plan;
  /* a GAN updates its critic several times per step (opt_params) */
  double params = w->params, upd = w->opt_params > 0 ? w->opt_params : w->params, tensors = param_tensors(sc, w);
  /* each rank updates its shard: DP x CP ranks (ZeRO-1), the shard group from ZeRO-2 on (job/shard.c) */
  double shard = upd / (pf_plan_zero(p) >= 2 ? (double)pf_plan_shard_size(sc) : p->dist_opt ? (double)p->dp * p->cp : 1.0);
  tail_ctx c = {.l = l, .launches = fmax(1.0, ceil(tensors / MT_CHUNK))};
  switch (pf_scenario_framework(sc)) {
  case PF_FW_MEGATRON: megatron_tail(&c, sc, params, shard); break;
  case PF_FW_TENSORFLOW: tensorflow_tail(&c, sc, params, shard, fmax(1.0, tensors)); break;
  default: pytorch_tail(&c, sc, params, shard, tensors); break;
  }
  dataparallel(&c, sc, params);
  return c.rc;
}

/* The microbatch's inputs copied from the host before its forward: token ids and labels (int64, 16 B a
 * token) of a transformer's first stage, the fp32 input tensor of a layer list's first network (DataLoader
 * output); on the GPU's stream at the node's host link (datasheet PCIe / C2C rate), so the forward waits for
 * it (PyTorch's ImageNet example copies with .cuda(non_blocking=True) just before the forward). */
int pf_step_input_kernels(const pf_scenario *sc, pf_kernel_list *l) {
  const pf_workload *w = &sc->workload;
  double bw = sc->machine.host_link_bw_Bps, bytes = 0;
  if (w->kind == PF_WL_TRANSFORMER) bytes = 16.0 * sc->plan.mbs * w->seq / sc->plan.cp;
  else if (w->kind == PF_WL_LAYERS && w->nets) bytes = 4.0 * sc->plan.mbs * w->nets[0].h * w->nets[0].w * w->nets[0].c;
  if (!(bytes > 0) || !(bw > 0)) return 0;
  pf_kernel k = {.kind = PF_KERNEL_FIXED, .name = "h2d-batch", .fixed_s = bytes / bw, .bytes = bytes, .host_ops = 1};
  return pf_kernel_list_add(l, &k);
}

static const struct {
  const char *name, *source;
} sources[] = {
    {"h2d-batch", "the microbatch's inputs over the host link (datasheet rate) before its forward"},
    {"zero-grad-buffer", "Megatron zero_grad_buffer: memset of the gradient buffer, 4 B/param (2 B fp16, bf16 grads)"},
    {"main-grads-copy", "Megatron fp16 or bf16 grads: fp32 main grads from the 2-byte buffer, 2 + 4 B/param"},
    {"unscale-inf-check", "loss-scale unscale + inf check (multi_tensor_scale / GradScaler), 8 B/param"},
    {"grad-norm", "multi-tensor L2 norm of the gradients, 4 B/param"},
    {"clip-grads", "clip_grad_norm_: foreach multiply by the clamped coefficient, 8 B/param"},
    {"adam (fused)", "fused Adam (apex/TE FusedAdam): grad 4 + master, m, v read and written 24 = 28 B/param"},
    {"master-to-model-params", "fp32 master copied to the bf16/fp16 weights, 4 + 2 B/param"},
    {"layer-python", "host only: Megatron-Core's Python per layer pass besides its operators (measured; hostqueue.c)"},
    {"moe-python", "host only: a MoE layer's dispatch and experts' Python after the tokens-per-expert sync (graphs.c)"},
    {"optimizer-python", "host only: the step's Python per parameter tensor (AdamW 9 us, SGD 2 us; stepkernels.c)"},
    {"sgd-momentum (foreach)", "torch.optim.SGD foreach with momentum and weight decay: 3 foreach ops, 36 B/param"},
    {"adamw (foreach)", "torch.optim.AdamW foreach (default on CUDA): 8 foreach ops, 80 B/param"},
    {"ddp-bucket-copies", "DDP: gradients into the all-reduce buckets and back, 16 B/param"},
    {"fusion-buffer-copies", "Horovod Tensor Fusion: gradients into the fusion buffer and back, 16 B/param"},
    {"adam (per variable)", "Keras Adam: ResourceApplyAdam per variable, 28 B/param"},
    {"dp-replicate-flatten", "DataParallel replicate: broadcast_coalesced flattens and unflattens, 8 B/param"},
    {"dp-reduce-unflatten-add", "DataParallel backward: reduce_add_coalesced unflattens and adds, 8 B/param"},
    {"dp-replicate-broadcast", "DataParallel replicate: NCCL broadcast, 4 B/param from GPU 0 at the fabric pair rate"},
    {"dp-grad-reduce", "DataParallel backward: NCCL reduce, 4 B/param onto GPU 0 at the fabric pair rate"},
};

const char *pf_step_kernel_source(const char *name) {
  for (size_t i = 0; name && i < sizeof sources / sizeof sources[0]; i++)
    if (!strcmp(sources[i].name, name)) return sources[i].source;
  return NULL;
}
