/* kernel.c - price of one kernel launch and the host/GPU step timeline (see kernel.h).
 *
 * Rates (docs/model.md, "Compute rates"; constants below carry their sources):
 *  GEMM       the device's measured table or fallback curve (gemm.c).
 *  CONV       its implicit GEMM (m = N Ho Wo, n = Cout, k = Cin kh kw) at the
 *             GEMM rate of that shape x conv_eff (device file, sourced there).
 *  ATTENTION  fused flash kernel: top(pass) x S(key length) x D(head dim) x
 *             wave utilisation of its batch x heads x ceil(m/128) query blocks.
 *             top: the device's attention_fwd / attention_bwd, else
 *             FLASH_FWD_OF_GEMM x large-GEMM efficiency and FLASH_BWD_OF_FWD x
 *             that: Dao (2023, FlashAttention-2) reaches up to 73 % of A100
 *             peak forward and 63 % backward, against 86.9 % for large GEMMs
 *             on the same part (MAMF, research notes 2.5): 0.84 and 0.86.
 *             FLOPs: forward 4 m n k per head (two products), backward 2.5x
 *             that (five products, the scores recomputed; Dao 2023).
 *  MEMORY     bytes / (HBM x hbm_eff) + MEM_RAMP_S: a kernel moving B bytes
 *             waits one memory latency before its stream runs at full rate
 *             (Little's law: ~2 MB must be in flight to fill an H100's HBM),
 *             so small kernels do not reach stream bandwidth.
 *  floor      the device's kernel_launch_s: minimum GPU time of a launch
 *             (H100: 2.84 us measured back to back, data/h100-calibrate).
 * An fp8 kernel on a device without fp8 tensor cores is an error naming the
 * device (it is not run at another precision's rate).
 */
#include "kernel.h"

#include "core/core.h"
#include "gemm.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define FLASH_FWD_OF_GEMM 0.84 /* 0.73 / 0.869, FlashAttention-2 on A100 vs MAMF A100 */
#define FLASH_BWD_OF_FWD 0.86  /* 0.63 / 0.73, FlashAttention-2 backward vs forward */
/* Throughput rises with key length and saturates beyond a few thousand tokens: S(n) = [n / (n + half)] /
 * [16k / (16k + half)], normalised at 16k.  half fitted to the H100 curves of FlashAttention-3's paper (Shah et
 * al. 2024, Figs. 5-6: cuDNN at head dim 64, 128 and 256, FlashAttention-3 at 128, 512 to 16k tokens; the
 * log-least-squares half of each curve, rms 0.5-4 %): forward 80-345, median 150; backward 310-390, median
 * 340 (the backward's five products and its dQ reduction need longer rows to fill the GPU).  Before, an
 * assumed 512 for both, from FlashAttention-2's A100 figures. */
#define FLASH_S_HALF_FWD 150.0
#define FLASH_S_HALF_BWD 340.0
#define FLASH_S_REF 16384.0
/* head dim: d/(d+16) normalised at 128 (assumed from FlashAttention-2's figures: 64 runs ~10 % below 128), and
 * not above 1 beyond 128: FlashAttention-3 runs head dim 256 at 642 TFLOP/s against 648 at 128, cuDNN at 509
 * against 595 (Shah et al. 2024, Fig. 5, 16k tokens; the tiles shrink to fit shared memory).  The backward,
 * which holds dQ, dK and dV accumulators as wide as the heads, loses more beyond 128: (128 / d)^0.41 of the
 * rate, d the mean of the keys' and values' widths.  Fitted on cuDNN (PyTorch 2.11, cuDNN 9.19) on an H200,
 * calibrate/results/vm-h200-141-2026-11-27-torch-attention-mla.json: MLA's 192 / 128 heads run their backward at
 * 0.89-0.93x (median 0.91) the FLOP rate of 128 / 128 heads of the same count at 4k-8k tokens (16-128 heads),
 * the exponent of that median at d = 160.  Checked, not fitted: 256 / 256 at 16k tokens reads 0.73x (0.75
 * here); DeepSeek's own FlashAttention-3 MLA kernels on an H800 (deepseek-ai/profile-data train.json) take a
 * backward 1.13x what this gave without the factor and the exact FLOPs (4.25 against 3.77 ms a layer); the
 * forward stays within 0.99-1.07x of 128 / 128's rate there.  192 / 192 heads, a width no model here has, run
 * cuDNN's generic backward at 0.65x. */
#define FLASH_D_HALF 16.0
#define FLASH_D_REF 128.0
#define FLASH_D_BWD_EXP 0.41
/* Below 128 on the parts whose attention_fwd / attention_bwd are cuDNN's figures (Hopper: the device files
 * cite cuDNN's fused attention, which Transformer Engine runs there and which alone takes GPT-OSS's learnable
 * softmax offset) narrow heads lose more: cuDNN 9.19 on an H200 (calibrate/results/
 * vm-h200-141-2026-11-27-torch-attention-window*.json, two runs, causal bf16, 16-64 heads at 4k-8k tokens) runs
 * head dim 64 at 0.61-0.72x (median 0.68) the FLOP rate of 128 forward and 0.58-0.87x (median 0.78)
 * backward, the halves of d / (d + half) those medians give; checked at 16k tokens
 * (vm-h200-141-2026-11-27-torch-attention-mla.json): 0.73x and 0.86x measured, 0.68x and 0.78x here.
 * FlashAttention-2 (PyTorch's flash back-end, the same files) runs 64 at 0.86-0.89x, the FLASH_D_HALF curve's
 * 0.9. */
#define CUDNN_D_HALF_FWD 114.0
#define CUDNN_D_HALF_BWD 50.0
#define FLASH_BLOCK_M 128.0
/* FP32 operations a fused attention kernel does on the CUDA cores per score element, besides the two products on
 * the tensor cores: forward, the online softmax's scaling (one FFMA), running maximum, running sum and the
 * conversion of the probabilities to 16 bits (Dao 2023, FlashAttention-2, Algorithm 1), the exponential itself
 * on the special-function units; backward, the scaled exponential recomputed, dP - D and its product with P,
 * and two conversions.  At head dim 128 that is one element per 512 (forward) or 1280 (backward) tensor FLOPs:
 * FlashAttention-3 (Shah et al. 2024, section 3) notes the matmuls outnumber the exponentials 512 to 1 and that
 * the special functions can take half the matmul's cycles.  It is power, not time: the power model's vector
 * term (power/pm_util.c) */
#define SOFTMAX_OPS 4.0
/* assumed: HBM load-to-use latency of A100/H100/MI250X-class parts is several
 * hundred ns in pointer-chase tests (gpu-benches latency, research notes 2.2);
 * 0.6 us of ramp per memory-bound kernel */
#define MEM_RAMP_S 0.6e-6
/* A grouped GEMM (a MoE layer's experts in one launch) pads each expert's rows to the kernel's M block: 128
 * rows (DeepGEMM's contiguous layout, deep_gemm/jit_kernels/utils.py get_m_alignment_for_contiguous_layout,
 * 327ec92f; CUTLASS's grouped kernels tile M the same way).  The experts' token counts vary from step to step,
 * so a segment wastes half a block on average: each product's rate x m / (m + 64).  Against DeepGEMM's
 * README tables (H800, FP8, 327ec92f): 8 groups of 4096 rows run at 1346 TFLOP/s vs 1410 for one dense
 * 4096 x 4096 x 7168 (0.95; 4096 / 4160 = 0.98 here), 4 groups of 256 rows (masked layout) at 932 (0.66;
 * 0.80 here with the table's own shape loss added below that). */
#define GROUPED_PAD_ROWS 64.0

const char *pf_limit_name(pf_limit l) {
  static const char *names[] = {"compute", "memory", "launch", "fixed"};
  return l >= 0 && l < PF_LIMIT_N ? names[l] : "?";
}

double pf_kernel_peak(const pf_device *d, pf_precision p) {
  double pk = pf_device_peak(d, p);
  if (pk <= 0 && p != PF_FP8) pk = d->peak_flops[PF_FP16] > 0 ? d->peak_flops[PF_FP16] : d->vector_flops[PF_FP32];
  return pk;
}

int pf_device_precision_check(const pf_device *d, pf_precision p) {
  if (p == PF_FP8 && !(d->peak_flops[PF_FP8] > 0))
    return pf_error_set(PF_EINVAL,
                        "--precision fp8: %s (%s) has no FP8 tensor cores (its device file has no peak.fp8); "
                        "use --precision bf16 or fp16 on this machine",
                        d->id, d->name);
  return 0;
}

double pf_mem_time(const pf_device *d, double bytes) {
  return bytes > 0 ? bytes / (d->memory_bw_Bps * d->hbm_eff) + MEM_RAMP_S : 0.0;
}


double pf_attention_eff(const pf_device *d, pf_precision p, pf_pass pass, double m, double n, double dh,
                        double batch) {
  double fwd = d->attn_eff_fwd > 0 ? d->attn_eff_fwd : FLASH_FWD_OF_GEMM * pf_gemm_top(d, p);
  double top = pass == PF_PASS_BWD ? (d->attn_eff_bwd > 0 ? d->attn_eff_bwd : FLASH_BWD_OF_FWD * fwd) : fwd;
  if (p == PF_FP8 && d->attn_eff_fwd > 0 && d->gemm_eff_fp8 > 0) top *= d->gemm_eff_fp8 / d->gemm_eff;
  double half = pass == PF_PASS_BWD ? FLASH_S_HALF_BWD : FLASH_S_HALF_FWD;
  double S = (n / (n + half)) / (FLASH_S_REF / (FLASH_S_REF + half));
  double dhalf = d->attn_eff_fwd > 0 ? (pass == PF_PASS_BWD ? CUDNN_D_HALF_BWD : CUDNN_D_HALF_FWD) : FLASH_D_HALF;
  double D = fmin(1.0, (dh / (dh + dhalf)) / (FLASH_D_REF / (FLASH_D_REF + dhalf)));
  if (pass == PF_PASS_BWD && dh > FLASH_D_REF) D *= pow(FLASH_D_REF / dh, FLASH_D_BWD_EXP);
  double blocks = ceil(m / FLASH_BLOCK_M) * (batch > 0 ? batch : 1.0);
  double util = d->units > 0 ? blocks / (ceil(blocks / d->units) * d->units) : 1.0;
  double eff = top * fmin(S, 1.0) * D * util;
  double cap = d->gemm_ceiling[pf_gemm_class(p)] > 0 ? d->gemm_ceiling[pf_gemm_class(p)] : 1.0; /* calapply.c */
  return eff < cap ? eff : cap;
}

/* HBM bytes a product must move at least when its list gives none: each operand read once and the result
 * written once, per product of the batch (A m x k and B k x n in the math's type, C m x n in bf16 after an fp8
 * product, else in the math's type).  A product whose weight is large and whose rows are few (an expert's
 * 16-256 tokens, a small micro-batch) takes at least that long: measured on an H100 (docs/model.md, "The
 * operands' floor"), DeepSeek-V3's expert fc1 (4096 x 7168, bf16) takes 25-28 us from 16 to 128 rows, the 59 MB weight
 * read at HBM speed, where its FLOPs alone are 1-11 us.  Only the time takes this floor: a GEMM's own
 * traffic is inside the power model's tensor coefficient, fitted on library GEMMs (power/pm_util.c). */
static double gemm_floor_bytes(const pf_kernel *k, double batch) {
  if (k->kind != PF_KERNEL_GEMM || k->bytes > 0 || k->flops > 0) return 0.0;
  double out = pf_precision_bytes(k->prec), in = k->prec == PF_FP8 ? 1.0 : out; /* fp8: bf16 out */
  return batch * ((k->m * k->k + k->k * k->n) * in + k->m * k->n * out);
}

int pf_kernel_cost_eval(const pf_kernel_env *env, const pf_kernel *k, pf_kernel_cost *c) {
  const pf_device *d = env->dev;
  double scale = env->eff_scale > 0 ? env->eff_scale : 1.0;
  double batch = k->batch > 0 ? k->batch : 1.0;
  memset(c, 0, sizeof *c);
  c->floor_s = d->kernel_launch_s;
  switch (k->kind) {
  case PF_KERNEL_GEMM:
  case PF_KERNEL_CONV:
  case PF_KERNEL_ATTENTION: {
    double flops = pf_kernel_flops(k);
    double peak = pf_kernel_peak(d, k->prec);
    if (!(peak > 0))
      return pf_error_set(PF_EINVAL, "%s (%s) has no %s tensor cores: kernel %s cannot run in %s", d->id, d->name,
                          pf_precision_name(k->prec), k->name ? k->name : "(unnamed)", pf_precision_name(k->prec));
    double eff = k->kind == PF_KERNEL_ATTENTION
                     ? pf_attention_eff(d, k->prec, k->pass, k->m, pf_kernel_keys(k), (k->k + pf_kernel_dv(k)) / 2.0,
                                        batch)
                     : pf_gemm_eff_batched(d, k->prec, k->layout, k->m, k->n, k->k, batch);
    if (k->kind == PF_KERNEL_CONV) eff *= d->conv_eff > 0 ? d->conv_eff : 1.0;
    if (k->grouped && k->m > 0) eff *= k->m / (k->m + GROUPED_PAD_ROWS);
    if (k->rate_scale > 0) eff *= k->rate_scale; /* a recipe's products (compute/fp8.c) */
    if (!(eff > 0))
      return pf_error_set(PF_EINVAL, "device %s has no rate for %s kernel %s", d->id, pf_precision_name(k->prec),
                          k->name ? k->name : "(unnamed)");
    c->rate_flops = peak * eff * scale * (env->clock_ratio > 0 ? env->clock_ratio : 1.0);
    c->compute_s = flops / c->rate_flops;
    c->u_tensor = fmin(1.0, c->rate_flops / peak);
    if (k->kind == PF_KERNEL_ATTENTION && k->k > 0 && d->vector_flops[PF_FP32] > 0) { /* the softmax's FP32 work */
      double scores = flops / pf_attention_pair_flops(k);
      c->u_vector = fmin(1.0, SOFTMAX_OPS * scores / c->compute_s / d->vector_flops[PF_FP32]);
    }
    break;
  }
  case PF_KERNEL_MEMORY:
  case PF_KERNEL_OPTIMIZER:
    break;
  case PF_KERNEL_FIXED:
    c->time_s = k->fixed_s;
    c->floor_s = 0;
    c->limit = PF_LIMIT_FIXED;
    return 0;
  case PF_KERNEL_NKINDS:
    return pf_error_set(PF_EINVAL, "invalid kernel kind");
  }
  if (k->bytes > 0) c->memory_s = pf_mem_time(d, k->bytes) / scale;
  else if (k->kind == PF_KERNEL_GEMM) c->memory_s = pf_mem_time(d, gemm_floor_bytes(k, batch)) / scale;
  double body = fmax(c->compute_s, c->memory_s);
  c->time_s = body + c->floor_s;
  c->limit = body <= 0 ? PF_LIMIT_FLOOR : c->compute_s >= c->memory_s ? PF_LIMIT_COMPUTE : PF_LIMIT_MEMORY;
  if (c->time_s > 0) {
    /* utilisation over the whole launch: the floor draws no tensor or HBM work */
    c->u_tensor *= c->compute_s / c->time_s;
    c->u_vector *= c->compute_s / c->time_s;
    if (k->vec_flops > 0 && d->vector_flops[PF_FP32] > 0) /* an optimizer's arithmetic (stepkernels.c) */
      c->u_vector = fmin(1.0, c->u_vector + k->vec_flops / c->time_s / d->vector_flops[PF_FP32]);
    if (k->bytes > 0 && d->memory_bw_Bps > 0) c->u_hbm = fmin(1.0, k->bytes / c->time_s / d->memory_bw_Bps);
  }
  return 0;
}

/* ---- lists ---- */



/* ---- the step timeline ---- */

static pf_kernel_observer observer;
static void *observer_ctx;

void pf_kernel_observe(pf_kernel_observer fn, void *ctx) {
  observer = fn;
  observer_ctx = ctx;
}

int pf_step_add(pf_step *s, const pf_kernel_env *env, const pf_kernel *k) {
  if (observer) observer(observer_ctx, k);
  pf_kernel_cost c;
  int rc = pf_kernel_cost_eval(env, k, &c);
  if (rc < 0) return rc;
  double n = k->count > 0 ? k->count : 1.0;
  double h = k->host_ops * env->host_op_s + k->host_s, t = c.time_s;
  /* a grouped GEMM the host issues one product at a time (moelayer.c: one operator per local expert) runs as
   * host_ops launches of an equal share, each starting once issued */
  double split = k->grouped && k->host_ops > 1 ? k->host_ops : 1.0, ns = n * split, hs = h / split, ts = t / split;
  /* ns identical launches: G_n = max(G_0 + n t, H_0 + max over j of (j h + (n - j + 1) t)),
   * the max at j = n when h >= t (host-bound) and at j = 1 otherwise */
  double gpu_chain = s->end_s + ns * ts;
  double host_chain = hs >= ts ? s->host_s + ns * hs + ts : s->host_s + hs + ns * ts;
  s->end_s = fmax(gpu_chain, host_chain);
  s->host_s += n * h;
  if (k->sync && s->host_s < s->end_s) s->host_s = s->end_s; /* the host blocks until the GPU gets here */
  s->busy_s += n * t;
  if (k->comm) s->comm_s += n * t;
  s->dispatch_s += n * h;
  if (c.limit != PF_LIMIT_FLOOR) s->limit_s[c.limit] += n * (t - c.floor_s);
  s->limit_s[PF_LIMIT_FLOOR] += n * c.floor_s;
  s->flops += n * pf_kernel_flops(k);
  s->bytes += n * k->bytes;
  if (k->prec == PF_FP8) { /* the math of an fp8 product, or an fp8 scaling pass (a memory kernel tagged fp8) */
    if (k->kind == PF_KERNEL_MEMORY)
      s->fp8_scaling_s += n * t;
    else if (k->kind != PF_KERNEL_FIXED && k->kind != PF_KERNEL_OPTIMIZER)
      s->fp8_math_s += n * t;
  }
  s->tensor_util_s += n * t * c.u_tensor;
  s->vector_util_s += n * t * c.u_vector;
  s->hbm_util_s += n * t * c.u_hbm;
  s->kernels += n;
  s->ops += n * k->host_ops;
  s->python_s += n * k->host_s;
  return 0;
}

static int run_once(pf_step *s, const pf_kernel_env *env, const pf_kernel_list *l) {
  for (int i = 0; i < l->n; i++) {
    int rc = pf_step_add(s, env, &l->k[i]);
    if (rc < 0) return rc;
  }
  return 0;
}

/* a += f x (b - c), field by field */
static void step_axpy(pf_step *a, double f, const pf_step *b, const pf_step *c) {
  a->host_s += f * (b->host_s - c->host_s);
  a->end_s += f * (b->end_s - c->end_s);
  a->busy_s += f * (b->busy_s - c->busy_s);
  a->dispatch_s += f * (b->dispatch_s - c->dispatch_s);
  for (int i = 0; i < PF_LIMIT_N; i++) a->limit_s[i] += f * (b->limit_s[i] - c->limit_s[i]);
  a->flops += f * (b->flops - c->flops);
  a->bytes += f * (b->bytes - c->bytes);
  a->fp8_math_s += f * (b->fp8_math_s - c->fp8_math_s);
  a->fp8_scaling_s += f * (b->fp8_scaling_s - c->fp8_scaling_s);
  a->tensor_util_s += f * (b->tensor_util_s - c->tensor_util_s);
  a->vector_util_s += f * (b->vector_util_s - c->vector_util_s);
  a->hbm_util_s += f * (b->hbm_util_s - c->hbm_util_s);
  a->kernels += f * (b->kernels - c->kernels);
  a->ops += f * (b->ops - c->ops);
  a->python_s += f * (b->python_s - c->python_s);
  a->comm_s += f * (b->comm_s - c->comm_s);
}

int pf_step_run(pf_step *s, const pf_kernel_env *env, const pf_kernel_list *l, int repeat) {
  if (repeat <= 0 || l->n == 0) return 0;
  /* step the first periods exactly; the max-plus recurrence is periodic after
   * one period (its cycle time is max(sum t, sum h)), so the remaining
   * repetitions each add the last period's increment */
  int exact = repeat < 3 ? repeat : 3, rc = 0;
  for (int r = 0; r < exact - 1 && rc == 0; r++) rc = run_once(s, env, l);
  pf_step prev = *s;
  if (rc == 0) rc = run_once(s, env, l);
  if (rc < 0 || repeat == exact) return rc;
  pf_step last = *s;
  step_axpy(s, repeat - exact, &last, &prev);
  return 0;
}

void pf_step_append(pf_step *a, const pf_step *b) {
  a->host_s = a->end_s + b->host_s;
  a->end_s += b->end_s;
  a->busy_s += b->busy_s;
  a->dispatch_s += b->dispatch_s;
  for (int i = 0; i < PF_LIMIT_N; i++) a->limit_s[i] += b->limit_s[i];
  a->flops += b->flops;
  a->bytes += b->bytes;
  a->fp8_math_s += b->fp8_math_s;
  a->fp8_scaling_s += b->fp8_scaling_s;
  a->tensor_util_s += b->tensor_util_s;
  a->vector_util_s += b->vector_util_s;
  a->hbm_util_s += b->hbm_util_s;
  a->kernels += b->kernels;
  a->ops += b->ops;
  a->python_s += b->python_s;
  a->comm_s += b->comm_s;
}

void pf_step_scale(pf_step *s, double f) {
  s->host_s *= f;
  s->end_s *= f;
  s->busy_s *= f;
  s->dispatch_s *= f;
  for (int i = 0; i < PF_LIMIT_N; i++) s->limit_s[i] *= f;
  s->flops *= f;
  s->bytes *= f;
  s->fp8_math_s *= f;
  s->fp8_scaling_s *= f;
  s->tensor_util_s *= f;
  s->vector_util_s *= f;
  s->hbm_util_s *= f;
  s->kernels *= f;
  s->ops *= f;
  s->python_s *= f;
  s->comm_s *= f;
}
