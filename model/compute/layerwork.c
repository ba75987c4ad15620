/* layerwork.c - a layer-list workload's training step on one GPU: the
 * kernels workload/layers.c expands each network into, in the precisions its
 * framework runs them at, priced on the host/GPU timeline (kernel.c).
 *
 * Math precision at fp32 follows the frameworks' defaults, with their sources
 * in workload/layers.c's header comment. */
#include "compute.h"
#include "fusion.h"

#include "core/core.h"

#include <string.h>

/* fp32 math precision of products and convolutions by framework (header comment) */
static void math_precisions(const pf_scenario *sc, pf_precision *gemm_p, pf_precision *conv_p) {
  *gemm_p = *conv_p = sc->precision;
  if (sc->precision != PF_FP32 || !(sc->machine.dev.peak_flops[PF_TF32] > 0)) return;
  pf_framework fw = sc->framework != PF_FW_AUTO ? sc->framework : sc->workload.framework;
  *conv_p = PF_TF32;
  if (fw == PF_FW_TENSORFLOW || sc->workload.tf32_matmul) *gemm_p = PF_TF32;
}

/* --conv-layout: whether the convolutions run on NVIDIA tensor cores over NCHW tensors and so pay cuDNN's layout
 * copies (layers.c layout_copies; measured on an H100: docs/model.md, "Convolution layout copies").  Tensor
 * cores: TF32, FP16 or BF16 convolutions on an NVIDIA device; not on AMD or Intel devices, where no measurement
 * of MIOpen's or oneDNN's layout handling is behind the model.  Who runs NCHW (auto): PyTorch by default
 * (torch.contiguous_format; channels_last is opt-in, PyTorch's "Channels Last Memory Format" tutorial; Megatron
 * is PyTorch), and TensorFlow's fp32 training graph, which grappler's layout optimizer rewrites to NCHW on a GPU
 * unless half of its convolutions are fp16 or bf16, when it keeps NHWC (tensorflow/core/grappler/optimizers/
 * generic_layout_optimizer.cc, GetSrcAndDstDataFormats). */
static bool nchw_copies(const pf_scenario *sc, pf_precision conv_p) {
  if (strcmp(sc->machine.dev.vendor, "nvidia") != 0) return false;
  if (conv_p != PF_TF32 && conv_p != PF_FP16 && conv_p != PF_BF16) return false;
  if (sc->conv_layout != PF_LAYOUT_AUTO) return sc->conv_layout == PF_LAYOUT_NCHW;
  return pf_scenario_framework(sc) != PF_FW_TENSORFLOW || conv_p == PF_TF32;
}

/* fp16 and bf16 in PyTorch are automatic mixed precision (torch.autocast, the Hugging Face Trainer's
 * fp16/bf16, torchvision's --amp): fp32 parameters cast per forward (layers.c) */
static bool autocast(const pf_scenario *sc) {
  return pf_scenario_framework(sc) == PF_FW_PYTORCH && (sc->precision == PF_FP16 || sc->precision == PF_BF16);
}

/* Run list l `times` over (each kernel's launches multiplied) after what *acc holds. */
static int run(pf_step *acc, const pf_kernel_env *env, const pf_kernel_list *l, double times) {
  if (!(times > 0) || l->n == 0) return 0;
  pf_kernel_list tmp = {0};
  int rc = 0;
  for (int i = 0; i < l->n && rc == 0; i++) {
    pf_kernel k = l->k[i];
    k.count = (k.count > 0 ? k.count : 1.0) * times;
    rc = pf_kernel_list_add(&tmp, &k);
  }
  pf_step st;
  memset(&st, 0, sizeof st);
  if (rc == 0) rc = pf_step_run(&st, env, &tmp, 1);
  pf_kernel_list_free(&tmp);
  if (rc == 0) pf_step_append(acc, &st);
  return rc;
}

int pf_layers_kernel_lists(const pf_scenario *sc, pf_kernel_list *lists, double *times, int *n) {
  const pf_workload *w = &sc->workload;
  int nn;
  const pf_net *nets = pf_layers_nets(w, &nn);
  pf_precision gp, cp;
  math_precisions(sc, &gp, &cp);
  memset(lists, 0, PF_LAYERS_PASSES * PF_LAYERS_MAX_NETS * sizeof *lists);
  pf_layers_totals t;
  int rc = pf_layers_walk(w, sc->plan.mbs, pf_precision_bytes(sc->precision), sc->machine.dev.units, gp, cp,
                          autocast(sc), nchw_copies(sc, cp), lists, &t, NULL);
  for (int i = 0; i < nn; i++)
    for (int p = 0; p < PF_LAYERS_PASSES; p++) times[PF_LAYERS_PASSES * i + p] = pf_net_pass_runs(&nets[i], p);
  *n = PF_LAYERS_PASSES * nn;
  if (rc < 0)
    for (int i = 0; i < PF_LAYERS_PASSES * PF_LAYERS_MAX_NETS; i++) pf_kernel_list_free(&lists[i]);
  return rc < 0 ? rc : 0;
}

int pf_layers_work(const pf_scenario *sc, const pf_kernel_env *env, pf_stage_work *out) {
  const pf_workload *w = &sc->workload;
  int nn;
  const pf_net *nets = pf_layers_nets(w, &nn);
  pf_precision gp, cp;
  math_precisions(sc, &gp, &cp);
  pf_kernel_list lists[PF_LAYERS_PASSES * PF_LAYERS_MAX_NETS];
  memset(lists, 0, sizeof lists);
  pf_layers_totals t;
  double pn[PF_LAYERS_MAX_NETS] = {0};
  int rc = pf_layers_walk(w, sc->plan.mbs, pf_precision_bytes(sc->precision), sc->machine.dev.units, gp, cp,
                          autocast(sc), nchw_copies(sc, cp), lists, &t, pn);
  for (int i = 0; i < PF_LAYERS_PASSES * nn && rc == 0 && sc->host_mode == PF_HOST_COMPILED; i++) /* compile fuses */
    rc = pf_fuse_elementwise(&lists[i]);
  pf_step fs, bs, es;
  memset(&fs, 0, sizeof fs);
  memset(&bs, 0, sizeof bs);
  memset(&es, 0, sizeof es);
  pf_kernel_env benv = *env; /* backward nodes cost the host the autograd engine's time */
  benv.host_op_s = env->host_bwd_op_s;
  pf_kernel_list in = {0}; /* the batch from the host before the first network's forward (training, evaluation) */
  if (rc == 0) rc = pf_step_input_kernels(sc, &in);
  if (rc == 0) rc = run(&fs, env, &in, nn > 0 ? nets[0].fwd : 0);
  if (rc == 0) rc = run(&es, env, &in, nn > 0 && nets[0].fwd > 0 ? 1 : 0);
  pf_kernel_list_free(&in);
  for (int n = 0; n < nn && rc == 0; n++) { /* forward passes, then data and weight gradients, second order */
    for (int p = 0; p < PF_LAYERS_PASSES && rc == 0; p++)
      rc = run(p ? &bs : &fs, p ? &benv : env, &lists[PF_LAYERS_PASSES * n + p], pf_net_pass_runs(&nets[n], p));
    out->opt_params += pn[n] * nets[n].opt;
  }
  for (int n = 0; n < nn && rc == 0; n++) /* evaluation: each network forward once */
    rc = run(&es, env, &lists[PF_LAYERS_PASSES * n], nets[n].fwd > 0 ? 1 : 0);
  for (int i = 0; i < PF_LAYERS_PASSES * PF_LAYERS_MAX_NETS; i++) pf_kernel_list_free(&lists[i]);
  if (rc < 0) return rc;
  out->fwd_s = pf_step_time(&fs);
  out->bwd_s = pf_step_time(&bs);
  out->gemm_s = fs.limit_s[PF_LIMIT_COMPUTE] + bs.limit_s[PF_LIMIT_COMPUTE];
  out->mem_s = fs.limit_s[PF_LIMIT_MEMORY] + bs.limit_s[PF_LIMIT_MEMORY];
  out->launch_s = fs.limit_s[PF_LIMIT_FLOOR] + bs.limit_s[PF_LIMIT_FLOOR];
  out->fwd_flops = fs.flops;
  out->bwd_flops = bs.flops;
  out->fwd = fs;
  out->bwd = bs;
  out->eval = es;
  out->params = t.params;
  out->layers = t.layers;
  return 0;
}
