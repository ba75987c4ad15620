/* test_layers.c - layer-list workloads (issue 10 item 4) and host dispatch
 * (item 1):
 *  - the MAELSTROM built-ins reproduce the report's parameter counts, ResNet-50
 *    v1.5 torchvision's (25 557 032) and its 4 089 184 256 MAC forward;
 *  - a convolution expands to its implicit-GEMM forward, data- and
 *    weight-gradient shapes (m = N Ho Wo, n = Cout, k = Cin k k, ...);
 *  - a model file is read and its errors name file, line and key;
 *  - host dispatch: per-framework costs, none with CUDA graphs, x dp for
 *    single-process DataParallel, and a host-bound step is the host's chain;
 *  - PyTorch autocast (fp16/bf16): the casts of each product with a weight,
 *    20 a DeBERTa layer, none at fp32 or in TensorFlow. */
#include "check.h"
#include "compute/compute.h"
#include "core/core.h"
#include "workload/workload.h"
#include "study/study.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double seen[4][4];
static int nseen;
static void observe(void *ctx, const pf_kernel *k) {
  (void)ctx;
  if (k->kind != PF_KERNEL_CONV) return;
  if (nseen < 4)
    seen[nseen][0] = k->m, seen[nseen][1] = k->n, seen[nseen][2] = k->k, seen[nseen][3] = k->batch > 0 ? k->batch : 1;
  nseen++;
}

static const pf_net net1[] = {{.name = "x", .h = 32, .w = 32, .c = 16, .fwd = 1, .dgrad = 1, .wgrad = 1, .opt = 1},
                              {.name = NULL}};
static const pf_layer conv1[] = {{.kind = PF_LY_CONV2D, .out = 64, .kernel = 3, .stride = 2}, {.kind = PF_LY_END}};

/* forward autocast-casts launches of the AP2 DeBERTa on one A100 in precision p and framework fw, and the
 * forward list's host operators into *ops */
static double casts_of(pf_precision p, pf_framework fw, double *ops) {
  static pf_scenario sc;
  pf_scenario_init(&sc);
  if (pf_machine_load("jureca-dc-a100", &sc.machine) != 0 ||
      pf_workload_builtin("maelstrom-ap2-deberta-v3-small", &sc.workload) != 0)
    return -1;
  sc.precision = p, sc.framework = fw, sc.plan.mbs = 32, sc.plan.dp = 1;
  pf_kernel_list lists[PF_LAYERS_PASSES * PF_LAYERS_MAX_NETS];
  double times[PF_LAYERS_PASSES * PF_LAYERS_MAX_NETS];
  int n = 0;
  if (pf_layers_kernel_lists(&sc, lists, times, &n) != 0) return -1;
  double c = 0;
  *ops = 0;
  for (int i = 0; i < lists[0].n; i++) {
    const pf_kernel *k = &lists[0].k[i];
    double cnt = k->count > 0 ? k->count : 1;
    *ops += cnt * k->host_ops;
    if (!strcmp(k->name, "autocast-casts")) c += cnt;
  }
  for (int i = 0; i < n; i++) pf_kernel_list_free(&lists[i]);
  return c;
}

static void test_autocast(void) {
  double o16, o32, obf, otf;
  /* a layer: q, k, v (input, weight, bias) 9, the shared relative-position projections' inputs 2, softmax
   * up and down 2, out-proj 2 (its input is the context product's fp16), FFN1 3, FFN2 2 (GELU's fp16) = 20;
   * the head: pooler 3 (LayerNorm's fp32 in), classifier 2 (tanh of the pooler's fp16 out) */
  CHECK_NEAR(casts_of(PF_FP16, PF_FW_PYTORCH, &o16), 6 * 20 + 3 + 2, 0);
  CHECK_NEAR(casts_of(PF_BF16, PF_FW_PYTORCH, &obf), 6 * 20 + 3 + 2, 0);
  CHECK_NEAR(casts_of(PF_FP32, PF_FW_PYTORCH, &o32), 0, 0);
  CHECK_NEAR(casts_of(PF_FP16, PF_FW_TENSORFLOW, &otf), 0, 0);
  CHECK_NEAR(o16 - o32, 125, 1e-9); /* one dispatch a cast */
  CHECK_NEAR(otf, o32, 1e-9);
}

int main(void) {
  test_autocast();
  pf_workload w;
  /* parameter counts: AP2 (its configuration) and AP5 (the application's own networks) exactly, trainable and
   * batch-norm statistics; AP1 the application's own network, both counts exact too (maelstrom.c) */
  CHECK_INT(pf_workload_builtin("maelstrom-ap2-deberta-v3-small", &w), 0);
  CHECK_NEAR(w.params, 141896450.0, 1e-12);
  CHECK_INT(w.kind, PF_WL_LAYERS);
  CHECK_INT(pf_workload_builtin("maelstrom-ap5-wgan", &w), 0);
  CHECK_NEAR(w.params, 9332299.0, 1e-12);
  CHECK_NEAR(w.nontrainable, 5280.0, 1e-12);
  CHECK_INT(pf_workload_builtin("maelstrom-ap1-unet", &w), 0);
  CHECK_NEAR(w.params, 1314019.0, 1e-12);
  CHECK_NEAR(w.nontrainable, 6016.0, 1e-12);
  /* ResNet-50 v1.5: torchvision's parameter count exactly; 53 batch norms over 26 560 channels; forward MACs of
   * the convolutions and fc counted independently (sum over layers of Ho Wo Cout Cin k^2, + 2048 x 1000) */
  CHECK_INT(pf_workload_builtin("resnet50", &w), 0);
  CHECK_INT(w.kind, PF_WL_LAYERS);
  CHECK_INT(w.framework, PF_FW_PYTORCH);
  CHECK_INT(w.dp_impl, PF_DPIMPL_PROCESS);
  CHECK_NEAR(w.params, 25557032.0, 1e-12);
  CHECK_NEAR(w.nontrainable, 2.0 * 26560, 1e-12);
  pf_layers_totals tot;
  CHECK_INT(pf_layers_summary(&w, &tot), 0);
  CHECK_NEAR(tot.fwd_flops, 2.0 * 4089184256.0, 1e-12);
  CHECK_NEAR(w.flops_per_sample, 3 * tot.fwd_flops, 1e-4);
  /* kept activations: each convolution's and batch norm's input, the pools', fc's and the loss's; the in-place
   * ReLUs, residual adds and projection shortcuts keep nothing of their own (84 307 872 B, fp32) */
  CHECK_NEAR(w.act_bytes_per_sample, 84307872.0, 1e-12);

  /* one 3x3 stride-2 convolution 16 -> 64 on 32 x 32, batch 4: params 9 x 16 x 64 + 64 */
  memset(&w, 0, sizeof w);
  snprintf(w.id, sizeof w.id, "conv");
  w.kind = PF_WL_LAYERS, w.ly = conv1, w.nets = net1;
  CHECK_INT(pf_workload_check(&w), 0);
  CHECK_NEAR(w.params, 9.0 * 16 * 64 + 64, 1e-12);
  /* training FLOPs per sample: 3 x 2 x (16 x 16 output pixels) x 64 x 144 */
  CHECK_NEAR(w.flops_per_sample, 3.0 * 2 * 256 * 64 * 144, 1e-12);
  static pf_scenario sc;
  pf_scenario_init(&sc);
  CHECK_INT(pf_machine_load("jureca-dc-a100", &sc.machine), 0);
  sc.workload = w;
  sc.plan.mbs = 4;
  sc.plan.dp = 1;
  pf_stage_work out;
  pf_kernel_observe(observe, NULL);
  CHECK_INT(pf_stage_work_compute(&sc, 0, &out), 0);
  pf_kernel_observe(NULL, NULL);
  CHECK_INT(nseen, 4); /* forward, data gradient, weight gradient, then the evaluation's forward */
  CHECK_NEAR(seen[0][0], 4.0 * 16 * 16, 1e-12); /* forward: m = N Ho Wo */
  CHECK_NEAR(seen[0][1], 64, 1e-12);            /*          n = Cout */
  CHECK_NEAR(seen[0][2], 144, 1e-12);           /*          k = Cin k k */
  CHECK_NEAR(seen[1][0], 4.0 * 16 * 16, 1e-12); /* data gradient: dX = dY W^T, (m, k) = (N Ho Wo, Cin k k) */
  CHECK_NEAR(seen[1][1], 144, 1e-12);
  CHECK_NEAR(seen[1][2], 64, 1e-12);
  CHECK_NEAR(seen[2][0], 144, 1e-12);           /* weight gradient: m = Cin k k, n = Cout, k = N Ho Wo */
  CHECK_NEAR(seen[2][1], 64, 1e-12);
  CHECK_NEAR(seen[2][2] * seen[2][3], 4.0 * 16 * 16, 1e-12); /* split-K: 2 tiles on 108 SMs, 4 splits of 256 */
  CHECK_NEAR(seen[2][3], 4, 1e-12);
  for (int i = 0; i < 3; i++) CHECK_NEAR(seen[3][i], seen[0][i], 0); /* evaluation: the same forward product */
  /* the forward starts with the batch's copy from the host (4 x 32 x 32 x 16 fp32 over the host link); beside
   * it, the backward's GPU work (two products) exceeds the forward's (one) */
  double copy = 4.0 * 4 * 32 * 32 * 16 / sc.machine.host_link_bw_Bps;
  CHECK(copy > 0 && out.fwd.busy_s > copy);
  CHECK(out.fwd_s > 0 && out.bwd.busy_s > out.fwd.busy_s - copy);
  CHECK_NEAR(pf_step_time(&out.eval), out.fwd_s, 1e-12 * out.fwd_s);

  /* host dispatch: eager PyTorch > TensorFlow graph > compiled > graphs (none) */
  sc.framework = PF_FW_PYTORCH;
  double eager = pf_host_op_s(&sc);
  sc.host_mode = PF_HOST_GRAPHS;
  CHECK(pf_host_op_s(&sc) == 0);
  sc.host_mode = PF_HOST_COMPILED;
  double compiled = pf_host_op_s(&sc);
  sc.host_mode = PF_HOST_AUTO;
  sc.framework = PF_FW_TENSORFLOW;
  double tf = pf_host_op_s(&sc);
  CHECK(eager > tf && tf > compiled && compiled > 0);
  /* single-process DataParallel: one interpreter dispatches every replica */
  sc.framework = PF_FW_PYTORCH;
  sc.workload.dp_impl = PF_DPIMPL_DATAPARALLEL;
  sc.plan.dp = 4;
  CHECK_NEAR(pf_host_op_s(&sc), 4 * eager, 1e-12);
  /* ... and replicates the module before every forward, evaluation's too (Hugging Face's Trainer wraps the model
   * in DataParallel for evaluation_loop as for training): the evaluation pass is the forward, then the flatten
   * copies and the NCCL broadcast, communication on every GPU, as long as the step's broadcast (half the tail's
   * two transfers) */
  pf_stage_work dpw;
  CHECK_INT(pf_stage_work_compute(&sc, 0, &dpw), 0);
  CHECK(dpw.fwd.comm_s == 0 && dpw.opt.comm_s > 0);
  CHECK_NEAR(dpw.eval.comm_s, dpw.opt.comm_s / 2, 1e-12);
  CHECK(pf_step_time(&dpw.eval) >= dpw.fwd_s + dpw.eval.comm_s);
  sc.workload.dp_impl = PF_DPIMPL_PROCESS; /* DDP: one process a GPU, nothing replicated */
  CHECK_INT(pf_stage_work_compute(&sc, 0, &dpw), 0);
  CHECK(dpw.eval.comm_s == 0);
  CHECK_NEAR(pf_step_time(&dpw.eval), dpw.fwd_s, 1e-12 * dpw.fwd_s);
  sc.workload.dp_impl = PF_DPIMPL_DATAPARALLEL;

  /* a host-bound step: 1000 tiny kernels cost the host's chain, not the GPU's */
  pf_kernel tiny = {.kind = PF_KERNEL_MEMORY, .bytes = 64, .count = 1000, .host_ops = 1};
  pf_kernel_env env = {.dev = &sc.machine.dev, .host_op_s = 12e-6, .eff_scale = 1};
  pf_step st;
  memset(&st, 0, sizeof st);
  CHECK_INT(pf_step_add(&st, &env, &tiny), 0);
  CHECK(pf_step_time(&st) >= 1000 * 12e-6);
  CHECK(pf_step_host_bound_s(&st) > 0);

  /* input pipeline: off by default; a node reading 4 GPUs' samples at a rate, or a loader per GPU */
  static pf_scenario in;
  pf_scenario_init(&in);
  CHECK_INT(pf_machine_load("jureca-dc-a100", &in.machine), 0);
  CHECK_INT(pf_workload_builtin("maelstrom-ap1-unet", &in.workload), 0);
  in.gpus = 4, in.plan.gbs = 32, in.plan.dp = 4, in.plan.cp = 1;
  CHECK(pf_input_time(&in) == 0);
  in.input_rate_Bps = 1e9;
  CHECK_NEAR(pf_input_time(&in), 32 * 329.83e9 / 89208 / 1e9, 1e-12);
  in.input_sample_s = 0.1; /* 8 samples per GPU x 0.1 s beats the read */
  CHECK_NEAR(pf_input_time(&in), 0.8, 1e-12);
  /* the WGAN reads a slice per critic update and one for the generator: at the data rate MAELSTROM's table
   * reports for one A100 (492.8 MB/s, 001:2457) the read of one batch-32 step takes its measured 0.287 s
   * (001:2461); counting the batch once would give 0.048 s */
  CHECK_INT(pf_workload_builtin("maelstrom-ap5-wgan", &in.workload), 0);
  in.gpus = 1, in.plan.gbs = 32, in.plan.dp = 1, in.input_sample_s = 0, in.input_rate_Bps = 492.772e6;
  CHECK(fabs(pf_input_time(&in) / 0.287 - 1) < 0.03);

  /* a model file, and its errors naming file, line and key */
  const char *src = getenv("PF_SRC");
  char path[1024];
  snprintf(path, sizeof path, "%s/scenarios/models/unet-small.cfg", src ? src : ".");
  CHECK_INT(pf_workload_get(path, &w), 0);
  CHECK_INT(w.kind, PF_WL_LAYERS);
  CHECK_NEAR(w.nontrainable, 2.0 * (32 + 32 + 64 + 32), 1e-12);
  FILE *f = fopen("test_layers_bad.cfg", "w");
  CHECK(f != NULL);
  if (f) {
    fputs("model = {\n  input = [8, 8, 3];\n  layers = (\n    { type = \"conv2d\"; out = 4; },\n"
          "    { type = \"pool\"; kernal = 2; }\n  );\n};\n", f);
    fclose(f);
    CHECK(pf_workload_get("test_layers_bad.cfg", &w) == PF_EPARSE);
    CHECK(strstr(pf_error_detail(), "test_layers_bad.cfg:5: model.layers[1].kernal") != NULL);
    remove("test_layers_bad.cfg");
  }
  /* a batch norm with bias = false has no affine scale and centre: its statistics only (Keras scale=False,
   * center=False, as AP1's U-Net) */
  f = fopen("test_layers_noaffine.cfg", "w");
  CHECK(f != NULL);
  if (f) {
    fputs("model = {\n  input = [8, 8, 3];\n  layers = (\n    { type = \"conv2d\"; out = 4; kernel = 1; },\n"
          "    { type = \"norm\"; kind = \"batch\"; bias = false; },\n    { type = \"norm\"; kind = \"batch\"; }\n"
          "  );\n};\n", f);
    fclose(f);
    CHECK_INT(pf_workload_get("test_layers_noaffine.cfg", &w), 0);
    CHECK_NEAR(w.params, 3 * 4 + 4 + 2 * 4, 1e-12);
    CHECK_NEAR(w.nontrainable, 2 * 4 + 2 * 4, 1e-12);
    remove("test_layers_noaffine.cfg");
  }
  return pf_check_done();
}
