/* test_moe.c - mixtures of experts (workload/moe.c, compute/moelayer.c; issue 29 items 1 and 4):
 *  - every built-in MoE model's total and active parameters match the published figures to the precision
 *    they are published with (half a unit of the last digit), each exception stated with its reason;
 *  - model FLOPs count the active experts only (the MFU bug of maxtext PR #678) and equal the FLOPs of
 *    the kernels a stage launches (router, experts, shared experts, MLA, MTP included);
 *  - a routed expert's GEMM runs below a dense GEMM of the same FLOPs;
 *  - the dropless path's host synchronisation is priced and a capacity factor removes it;
 *  - every MoE kernel is listed by `preflight kernels`' rows. */
#include "check.h"
#include "compute/compute.h"
#include "core/core.h"
#include "workload/workload.h"

#include <math.h>
#include <string.h>

/* Published counts, in billions: `total` and `active` with the precision they are written with (decimals),
 * whether the publisher counts the input embedding in the active parameters, and a tolerance in billions
 * beyond half a unit of the last digit where the publisher's figure is known to be counted otherwise. */
typedef struct pub {
  const char *id;
  double total, active;
  int decimals;
  bool active_with_embedding;
  double total_extra, active_extra;
  const char *source;
} pub;

static const pub published[] = {
    {"mixtral-8x7b", 46.7, 12.9, 1, true, 0, 0, "Mistral AI, 'Mixtral of experts' (2023-12-11): 46.7B total, 12.9B a token"},
    {"mixtral-8x22b", 141, 39, 0, true, 0, 0, "Mistral AI, 'Cheaper, Better, Faster, Stronger' (2024-04-17): 39B of 141B"},
    /* DeepSeek writes 2.4B for 2.45B (its V2 and V3 figures round): 0.01 B more */
    {"deepseek-v2-lite", 15.7, 2.4, 1, false, 0, 0.01, "DeepSeek-V2 paper arXiv 2405.04434, appendix B: 15.7B, 2.4B activated"},
    {"deepseek-v2", 236, 21, 0, false, 0, 0, "arXiv 2405.04434 abstract: 236B total, 21B activated"},
    {"deepseek-v3", 671, 37, 0, false, 0, 0, "arXiv 2412.19437 abstract: 671B total, 37B activated (MTP not counted)"},
    /* Qwen writes 3.3B for 3.35B: 0.01 B more */
    {"qwen3-30b-a3b", 30.5, 3.3, 1, true, 0, 0.01, "Qwen/Qwen3-30B-A3B model card: 30.5B in total, 3.3B activated"},
    {"qwen3-235b-a22b", 235, 22, 0, true, 0, 0, "Qwen/Qwen3-235B-A22B model card: 235B in total, 22B activated"},
    {"olmoe-1b-7b", 6.9, 1.3, 1, true, 0, 0, "Muennighoff et al. 2024, arXiv 2409.02060: 1.3B active, 6.9B total"},
    {"dbrx", 132, 36, 0, true, 0, 0, "Databricks, 'Introducing DBRX' (2024-03-27): 132B total, 36B active"},
    /* Meta's totals include the vision encoder (~0.85 B, not a text model's) and Maverick's 400B is rounded from
     * 400.7 B text: 1.5 B and 0.3 B more */
    {"llama4-scout", 109, 17, 0, true, 1.5, 0, "Llama 4 model card: 17B activated, 109B total"},
    {"llama4-maverick", 400, 17, 0, true, 0.3, 0, "Llama 4 model card: 17B activated, 400B total"},
    {"gpt-oss-120b", 116.83, 5.13, 2, false, 0, 0, "gpt-oss model card arXiv 2508.10925 Table 1: 116.83B total, 5.13B active"},
};

static void counts(void) {
  int n = 0;
  for (int i = 0; i < pf_workload_builtin_count(); i++) n += pf_workload_is_moe(pf_workload_builtin_at(i));
  CHECK_INT(n, (int)(sizeof published / sizeof published[0])); /* every built-in MoE model is in the table */
  for (size_t i = 0; i < sizeof published / sizeof published[0]; i++) {
    const pub *p = &published[i];
    pf_workload w;
    CHECK_INT(pf_workload_builtin(p->id, &w), 0);
    double half = 0.5 * pow(10.0, -p->decimals);
    double total = pf_workload_params(&w, 1) / 1e9;
    double active = (pf_workload_active_params(&w, 1) - (p->active_with_embedding ? 0 : pf_workload_embedding_params(&w, 1))) / 1e9;
    if (!(fabs(total - p->total) <= half + p->total_extra + 1e-9))
      fprintf(stderr, "%s: total %.4f B, published %g B (%s)\n", p->id, total, p->total, p->source);
    CHECK(fabs(total - p->total) <= half + p->total_extra + 1e-9);
    if (!(fabs(active - p->active) <= half + p->active_extra + 1e-9))
      fprintf(stderr, "%s: active %.4f B, published %g B (%s)\n", p->id, active, p->active, p->source);
    CHECK(fabs(active - p->active) <= half + p->active_extra + 1e-9);
  }
  /* DeepSeek-V3's MTP module: 14 B with its copies of the embedding and output head (arXiv 2412.19437, README) */
  pf_workload w;
  CHECK_INT(pf_workload_builtin("deepseek-v3", &w), 0);
  CHECK_NEAR((pf_workload_mtp_params(&w) + 2 * pf_workload_embedding_params(&w, 1)) / 1e9, 14, 0.04); /* 13.5 */
}

/* MFU's FLOPs: the active experts only.  Mixtral 8x7B by hand: 6 s per active weight plus the attention core
 * 6 s^2 h and the logits 6 s V h, each layer's active weights QKV + output 2 h^2 + 2 h kv, the router 8 h and
 * two experts of 3 h f */
static void flops(void) {
  pf_workload w;
  CHECK_INT(pf_workload_builtin("mixtral-8x7b", &w), 0);
  double s = 4096, h = 4096, kv = 1024, f = 14336, V = 32000, l = 32;
  double layer = 2 * h * h + 2 * h * kv + 8 * h + 2 * 3 * h * f;
  double F = l * (6 * s * layer + 12 * s * s * h) + 6 * s * V * h;
  CHECK_NEAR(pf_workload_model_flops_per_sample(&w, 1), F, 1e-12);
  pf_workload all = w;
  all.topk = all.experts; /* every expert: what MFU must not count */
  double Fall = F + l * 6 * s * 6 * 3 * h * f;
  CHECK_NEAR(pf_workload_model_flops_per_sample(&all, 1), Fall, 1e-12);
  CHECK(Fall > 2.5 * F);
  /* counted as Megatron-LM does from core_v0.12: half the attention core (the causal mask), the rest alike */
  CHECK_NEAR(pf_workload_model_flops_per_sample_as(&w, 1, PF_FLOPS_CAUSAL), F - l * 6 * s * s * h, 1e-12);
  CHECK_NEAR(pf_workload_model_flops_per_sample_as(&w, 1, PF_FLOPS_FULL), F, 1e-12);
  /* DeepSeek-V3 with its MTP module, by Megatron-LM's num_floating_point_operations (training.py at
   * NVIDIA/Megatron-LM 1d9edcf8, MLA branch, mtp_num_layers 1): 1.06493e15 causal, 1.19275e15 full; preflight
   * also counts the router's 6 s E h a MoE layer (0.2 %) */
  CHECK_INT(pf_workload_builtin("deepseek-v3", &w), 0);
  CHECK_NEAR(pf_workload_model_flops_per_sample_as(&w, 1, PF_FLOPS_CAUSAL), 1.06493e15, 4e-3);
  CHECK_NEAR(pf_workload_model_flops_per_sample_as(&w, 1, PF_FLOPS_FULL), 1.19275e15, 4e-3);
}

static void setup(pf_scenario *sc, const char *model, int tp) {
  pf_scenario_init(sc);
  CHECK_INT(pf_machine_load("dgx-h100-superpod", &sc->machine), 0);
  CHECK_INT(pf_workload_builtin(model, &sc->workload), 0);
  sc->gpus = tp;
  sc->plan.tp = tp;
  sc->plan.pp = 1;
  sc->plan.mbs = 1;
  sc->plan.gbs = 8;
  sc->plan.sp = tp > 1;
  sc->plan.flash_attn = true;
  sc->precision = PF_BF16;
}

/* the kernels' FLOPs (no recomputation) are the model FLOPs of the microbatch, per TP rank, with the attention
 * core as the fused kernels run it: the model count (whole score matrix) prices it at 4 + 8 = 12 s^2 x head width
 * per head and layer (the mean width dh of keys dk and values dv), FlashAttention's kernels at 2 (dk + dv) +
 * 2 (3 dk + 2 dv) (the backward computes the scores again; 4 + 10 dh where dk = dv) of the share c = (s + 128) / 2s
 * a causal mask leaves them (kernels.h) */
static void kernels_flops(const char *model, int tp) {
  static pf_scenario sc;
  setup(&sc, model, tp);
  pf_stage_work w;
  CHECK_INT(pf_plan_check(&sc), 0);
  CHECK_INT(pf_stage_work_compute(&sc, 0, &w), 0);
  const pf_workload *wl = &sc.workload;
  double dk = pf_workload_qk_dim(wl), dv = pf_workload_v_dim(wl), dh = (dk + dv) / 2.0, s = wl->seq;
  double c = (s + PF_FLASH_BLOCK_N) / (2.0 * s), fused = 2.0 * (dk + dv) + 2.0 * (3.0 * dk + 2.0 * dv);
  /* a windowed layer: the model counts twice the band's W (W + 1) / 2 + (s - W) W pairs, the kernel runs the
   * W + 128 keys of the blocks each query block's band touches */
  double nw = pf_workload_windowed_layers(wl), W = wl->window, band = W * (W + 1) / 2 + (s - W) * W;
  double per_head = (wl->layers - nw) * (fused * c - 12.0 * dh) * s * s +
                    nw * (fused * s * (W + PF_FLASH_BLOCK_N) - 24.0 * dh * band);
  double F = pf_workload_model_flops_per_sample(wl, tp) / tp + per_head * (wl->heads / (double)tp);
  /* the router runs on the sequence-parallel shard, replicated: its weights are not split by TP */
  if (!(fabs(w.fwd_flops + w.bwd_flops - F) <= 0.002 * F))
    fprintf(stderr, "%s: kernels %.6g FLOPs, model %.6g\n", model, w.fwd_flops + w.bwd_flops, F);
  CHECK_NEAR(w.fwd_flops + w.bwd_flops, F, 0.002);
}

/* a routed expert's GEMM (balanced: M topk / E rows) runs below one dense GEMM of the same total FLOPs */
static void grouped_gemm(void) {
  static pf_scenario sc;
  setup(&sc, "deepseek-v3", 1);
  pf_kernel_env env = {.dev = &sc.machine.dev, .eff_scale = 1};
  double M = 4096 * 8, E = 256, h = 7168, f = 2048;
  pf_kernel g = {.kind = PF_KERNEL_GEMM, .prec = PF_BF16, .m = M / E, .n = 2 * f, .k = h, .batch = E,
                 .grouped = true};
  pf_kernel d = {.kind = PF_KERNEL_GEMM, .prec = PF_BF16, .m = M, .n = 2 * f, .k = h, .batch = 1};
  pf_kernel_cost cg, cd;
  CHECK_INT(pf_kernel_cost_eval(&env, &g, &cg), 0);
  CHECK_INT(pf_kernel_cost_eval(&env, &d, &cd), 0);
  CHECK_NEAR(pf_kernel_flops(&g), pf_kernel_flops(&d), 1e-12);
  CHECK(cg.time_s > 1.05 * cd.time_s);
}

static bool has_row(const pf_kernel_rows *R, const char *name) {
  for (int i = 0; i < R->n; i++)
    if (strcmp(R->r[i].name, name) == 0) return true;
  return false;
}

/* the dropless path's host synchronisation, gone with a capacity factor; the MoE kernels listed */
static void sync_and_rows(void) {
  static pf_scenario sc;
  setup(&sc, "mixtral-8x7b", 8);
  CHECK_INT(pf_plan_check(&sc), 0);
  pf_stage_work w, wc;
  CHECK_INT(pf_stage_work_compute(&sc, 0, &w), 0);
  CHECK_NEAR(w.moe.host_sync, 32 * 6e-6, 1e-9); /* 32 MoE layers, one copy each, forward only */
  CHECK(w.moe.experts > w.moe.router && w.moe.permute > 0 && w.moe.unpermute > 0 && w.moe.shared == 0);
  pf_kernel_rows R;
  CHECK_INT(pf_stage_kernel_rows(&sc, 0, &R), 0);
  static const char *names[] = {"router", "router-topk", "tokens-per-expert-sync", "permute", "experts-fc1",
                                "experts-activation", "experts-fc2", "unpermute"};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) CHECK(has_row(&R, names[i]));
  pf_kernel_rows_free(&R);
  sc.workload.capacity_factor = 1.0; /* padded to exactly the balanced share: same work, no synchronisation */
  CHECK_INT(pf_stage_work_compute(&sc, 0, &wc), 0);
  CHECK_INT((int)wc.moe.host_sync, 0);
  CHECK(wc.fwd_s < w.fwd_s);
  CHECK_NEAR(wc.fwd_flops, w.fwd_flops, 1e-9);
  sc.workload.capacity_factor = 2.0; /* padding to twice the share doubles the experts' work */
  CHECK_INT(pf_stage_work_compute(&sc, 0, &wc), 0);
  CHECK(wc.moe.experts > 1.8 * w.moe.experts);
  /* DeepSeek-V3's shared expert, MLA projections and MTP head */
  setup(&sc, "deepseek-v3", 8);
  CHECK_INT(pf_plan_check(&sc), 0);
  CHECK_INT(pf_stage_kernel_rows(&sc, 0, &R), 0);
  static const char *v3[] = {"shared-fc1", "shared-fc2", "mla-q-down", "mla-q-up", "mla-kv-down", "mla-kv-up",
                             "mla-kv-rope", "mtp-proj", "fc1"};
  for (size_t i = 0; i < sizeof v3 / sizeof v3[0]; i++) CHECK(has_row(&R, v3[i]));
  pf_kernel_rows_free(&R);
}

/* GPT-OSS's model FLOPs under the causal count are Megatron-Bridge's (src/megatron/bridge/training/utils/
 * flop_utils.py, gpt_oss_flops_calculator: every other layer's attention over its 128-key band, W (W + 1) / 2 +
 * (s - W) W pairs, the rest over s (s + 1) / 2; QKV, output and the top-4 experts' products, the logits; no router),
 * within the router's 0.2 %: without the window the count is 5 % higher */
static void window_flops(void) {
  pf_workload w;
  CHECK_INT(pf_workload_builtin("gpt-oss-120b", &w), 0);
  double s = w.seq, h = w.hidden, a = w.heads, g = w.kv_heads, d = pf_workload_head_dim(&w), W = w.window;
  double bridge = 6.0 * s * h * w.vocab;
  for (int i = 0; i < w.layers; i++) {
    double pairs = i % 2 == 0 ? s * (s + 1) / 2 : W * (W + 1) / 2 + (s - W) * W;
    bridge += 6.0 * (s * h * d * (a + 2 * g) + s * h * d * a + 2.0 * a * pairs * d) +
              6.0 * s * w.topk * 3.0 * h * w.moe_ffn_hidden;
  }
  double ours = pf_workload_model_flops_per_sample_as(&w, 1, PF_FLOPS_CAUSAL);
  printf("GPT-OSS-120B causal model FLOPs %.5g, Megatron-Bridge's %.5g\n", ours, bridge);
  CHECK_INT(pf_workload_windowed_layers(&w), 18);
  CHECK(fabs(ours / bridge - 1) < 0.004);
}

/* memory counts every expert at EP 1: Mixtral 8x7B over TP 8 x PP 4 holds 8 MoE layers and the embedding
 * (first stage) or the output layer (last) per stage, split by TP, in bf16 */
static void memory(void) {
  static pf_scenario sc;
  setup(&sc, "mixtral-8x7b", 8);
  sc.gpus = 32;
  sc.plan.pp = 4;
  sc.plan.gbs = 256;
  sc.plan.dist_opt = true;
  CHECK_INT(pf_plan_check(&sc), 0);
  pf_memory m;
  pf_memory_estimate(&sc, &m);
  const pf_workload *w = &sc.workload;
  double stage = (8 * pf_workload_moe_layer_params(w) + pf_workload_embedding_params(w, 8)) / 8;
  CHECK_NEAR(m.weights_B, 2 * stage, 1e-4);
  CHECK_NEAR(m.gradients_B, 4 * stage, 1e-4);
  CHECK(pf_workload_moe_layer_params(w) > 6 * pf_workload_dense_layer_params(w)); /* 8 experts, not one FFN (6.65x) */
}

int main(void) {
  memory();
  counts();
  window_flops();
  flops();
  kernels_flops("mixtral-8x7b", 1);
  kernels_flops("deepseek-v3", 8);
  kernels_flops("gpt-oss-120b", 8);
  kernels_flops("llama4-maverick", 4);
  grouped_gemm();
  sync_and_rows();
  printf("%d passed, %d failed\n", pf_check_pass, pf_check_fail);
  return pf_check_fail != 0;
}
