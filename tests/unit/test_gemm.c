/* test_gemm.c - the achieved-rate model of gemm.c and kernel.c against
 * measurements it was not fitted to.
 *
 * The H100 SXM device ships a BF16 GEMM table without every shape of the
 * hidden sizes 2304 and 5120 (machines/devices/tables/); those 153 held-out
 * rows (tests/fixtures/gemm/h100-bf16-heldout.csv, measured in the same
 * session) are predicted here as the measurement saw them: one eager call,
 * host dispatch then the kernel, i.e. a one-kernel step.  The table must come
 * within 10 % (median) and 25 % (worst) of the measured time, the fallback
 * curve alone within 20 % (median).  The FP8 table (the same shapes, the same
 * families held out) likewise, worst 45 % (its hidden-2304 family).  Then the
 * transfer rule, fp8, attention, convolution, memory-bound and launch-floor
 * terms. */
#include "check.h"
#include "core/core.h"
#include "compute/compute.h"

#include <math.h>
#include <stdlib.h>

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Time of one eager call: host dispatch (the table's host overhead) then the kernel. */
static double call_time(const pf_device *d, double host_s, const pf_gemm_sample *x) {
  pf_kernel_env env = {.dev = d, .host_op_s = host_s, .eff_scale = 1};
  pf_kernel k = {.kind = PF_KERNEL_GEMM, .name = "gemm", .prec = x->prec, .layout = x->layout,
                 .m = x->m, .n = x->n, .k = x->k, .host_ops = 1};
  pf_step st = {0};
  if (pf_step_add(&st, &env, &k) < 0) return -1;
  return pf_step_time(&st);
}

/* median and worst |predicted / measured - 1| over the samples */
static void errors(const pf_device *d, double host_s, const pf_gemm_sample *s, int n, double *med, double *worst) {
  double *e = malloc((size_t)n * sizeof *e);
  *worst = 0;
  for (int i = 0; i < n; i++) {
    e[i] = fabs(call_time(d, host_s, &s[i]) / s[i].time_s - 1.0);
    if (e[i] > *worst) *worst = e[i];
  }
  qsort(e, (size_t)n, sizeof *e, cmpd);
  *med = n % 2 ? e[n / 2] : 0.5 * (e[n / 2 - 1] + e[n / 2]);
  free(e);
}

static double kernel_s(const pf_device *d, const pf_kernel *k) {
  pf_kernel_env env = {.dev = d, .host_op_s = 0, .eff_scale = 1};
  pf_kernel_cost c;
  if (pf_kernel_cost_eval(&env, k, &c) < 0) return -1;
  return c.time_s;
}

/* The held-out families of the H100 table's class `cls` (tests/fixtures/gemm/h100-CLS-heldout.csv): none of
 * them in the table, predicted within 10 % (median) and `worst`, no worse than the curve alone, and the
 * curve within 20 % (median); the shipped rows (machines/devices/tables/h100-sxm5-CLS-gemm.csv) reproduced. */
static void heldout(const pf_device *h100, double host_s, const char *src, const char *cls, int rows,
                    double worst_max) {
  char path[1024];
  pf_gemm_sample *s = NULL;
  int n = 0, leaked = 0;
  double med, worst, med_curve, worst_curve;
  snprintf(path, sizeof path, "%s/tests/fixtures/gemm/h100-%s-heldout.csv", src ? src : ".", cls);
  CHECK_INT(pf_gemm_samples_read(path, &s, &n), 0);
  CHECK_INT(n, rows);
  for (int i = 0; i < n; i++)
    for (int j = 0; j < h100->gemm_table->n; j++) {
      const pf_gemm_row *r = &h100->gemm_table->row[j];
      if (r->m == s[i].m && r->n == s[i].n && r->k == s[i].k && r->layout == s[i].layout && r->prec == s[i].prec)
        leaked++;
    }
  CHECK_INT(leaked, 0);
  errors(h100, host_s, s, n, &med, &worst);
  pf_device curve = *h100;
  curve.gemm_table = NULL;
  errors(&curve, host_s, s, n, &med_curve, &worst_curve);
  printf("%s held-out families (hidden 2304, 5120), %d GEMMs: table median %.1f %%, worst %.1f %%; curve alone "
         "median %.1f %%, worst %.1f %%\n", cls, n, 100 * med, 100 * worst, 100 * med_curve, 100 * worst_curve);
  CHECK(med <= 0.10);
  CHECK(worst <= worst_max);
  CHECK(med <= med_curve + 0.005 && worst <= worst_curve + 0.01); /* no worse than the curve alone */
  CHECK(med_curve <= 0.20);
  free(s);
  /* the table reproduces the rows it holds (interpolation is exact up to the neighbours' 1e-4 weight) */
  snprintf(path, sizeof path, "%s/machines/devices/tables/h100-sxm5-%s-gemm.csv", src ? src : ".", cls);
  CHECK_INT(pf_gemm_samples_read(path, &s, &n), 0);
  errors(h100, host_s, s, n, &med, &worst);
  printf("shipped %s rows through the table: median %.2f %%, worst %.2f %%\n", cls, 100 * med, 100 * worst);
  CHECK(med <= 0.01);
  free(s);
}

int main(void) {
  const char *src = getenv("PF_SRC");
  pf_device h100, pcie, a100, mi;
  CHECK_INT(pf_device_load("h100-sxm-80", &h100), 0);
  CHECK_INT(pf_device_load("h100-pcie-80", &pcie), 0);
  CHECK_INT(pf_device_load("a100-sxm-40", &a100), 0);
  CHECK_INT(pf_device_load("mi250x-gcd", &mi), 0);
  CHECK(h100.gemm_table != NULL);
  if (!h100.gemm_table) return pf_check_done();
  /* the table's per-call overhead less the launch floor is the host dispatch of one eager call */
  double host = h100.gemm_table->overhead_s[PF_BF16] - h100.kernel_launch_s;
  CHECK_NEAR(host, 22.4e-6 - 2.84e-6, 1e-9);
  double host8 = h100.gemm_table->overhead_s[PF_FP8] - h100.kernel_launch_s; /* torch._scaled_mm's dispatch */
  CHECK_NEAR(host8, 25.0e-6 - 2.84e-6, 1e-9);

  /* bf16 (fitted) and fp8 (the same shapes measured in FP8 as Transformer Engine runs them on Hopper), each with
   * its own per-call dispatch; the fp8 worst is the hidden-2304 family at TP 4-8 (n or k 288-1152) that cuBLASLt
   * runs slowly in BF16 too */
  heldout(&h100, host, src, "bf16", 153, 0.25);
  heldout(&h100, host8, src, "fp8", 127, 0.45);

  /* transfer rule: same table on the PCIe part, 114 SMs and its own large-GEMM efficiency */
  double big = pf_gemm_eff(&h100, PF_BF16, PF_GEMM_NN, 16384, 16384, 16384);
  double bigp = pf_gemm_eff(&pcie, PF_BF16, PF_GEMM_NN, 16384, 16384, 16384);
  CHECK(pcie.gemm_table == h100.gemm_table);
  CHECK_NEAR(bigp / big, pcie.gemm_eff / h100.gemm_eff, 0.03); /* wave quantization differs a little */
  /* 132 tiles of 128x256 fill the SXM part in one wave; on 114 SMs the best is 528 tiles of 64x128 in 5 waves */
  double w_sxm = pf_gemm_shape(132, PF_GEMM_K_HALF, PF_BF16, 128 * 12, 256 * 11, 8192, 1);
  double w_pcie = pf_gemm_shape(114, PF_GEMM_K_HALF, PF_BF16, 128 * 12, 256 * 11, 8192, 1);
  CHECK_NEAR(w_pcie / w_sxm, 528.0 / 570.0, 1e-9);

  /* split-K: one 128x256 output tile over a long reduction (a classifier head, 8 x 8 x 46080) splits k over
   * the SMs instead of running on one of 132; the exact figure: the smallest tile (64x128), 132 slices of
   * k/132 in one wave */
  double kc = 46080.0 / 132;
  CHECK_NEAR(pf_gemm_shape(132, PF_GEMM_K_HALF, PF_BF16, 8, 8, 46080, 1),
             8.0 * 8 * 132 / (132.0 * 64 * 128) * kc / (kc + PF_GEMM_K_HALF), 1e-12);
  /* enough tiles for a wave: no split, the curve as fitted */
  CHECK_NEAR(pf_gemm_shape(132, PF_GEMM_K_HALF, PF_BF16, 128 * 12, 256 * 11, 8192, 1),
             1.0 * 8192 / (8192 + PF_GEMM_K_HALF), 1e-12);
  /* the device's k_half is the curve's: a B200 (k_half 202, twice a Hopper SM's tensor rate) against the same
   * part at the H100's 101, on a shape that fills its waves (no split-K) with a short reduction; fp8 twice it */
  pf_device b200;
  CHECK_INT(pf_device_load("b200-180", &b200), 0);
  CHECK_NEAR(b200.gemm_half_dim, 202, 0);
  double e202 = pf_gemm_eff(&b200, PF_BF16, PF_GEMM_NN, 8192, 8192, 512);
  double f202 = pf_gemm_eff(&b200, PF_FP8, PF_GEMM_NN, 8192, 8192, 512);
  pf_device b101 = b200;
  b101.gemm_half_dim = 101;
  CHECK_NEAR(e202 / pf_gemm_eff(&b101, PF_BF16, PF_GEMM_NN, 8192, 8192, 512), (512.0 / 714) / (512.0 / 613), 1e-9);
  CHECK_NEAR(f202 / pf_gemm_eff(&b101, PF_FP8, PF_GEMM_NN, 8192, 8192, 512), (512.0 / 916) / (512.0 / 714), 1e-9);

  /* fp8: its own efficiency, on the datasheet dense fp8 peak; a large GEMM 1.3-1.9x faster than bf16 */
  pf_kernel g = {.kind = PF_KERNEL_GEMM, .prec = PF_BF16, .m = 16384, .n = 16384, .k = 16384};
  double tb = kernel_s(&h100, &g);
  g.prec = PF_FP8;
  double t8 = kernel_s(&h100, &g);
  printf("16384^3 GEMM on H100: bf16 %.3f ms, fp8 %.3f ms (x%.2f)\n", 1e3 * tb, 1e3 * t8, tb / t8);
  CHECK(tb / t8 >= 1.3 && tb / t8 <= 1.9);
  CHECK(pf_gemm_eff(&h100, PF_FP8, PF_GEMM_NN, 16384, 16384, 16384) <
        pf_gemm_eff(&h100, PF_BF16, PF_GEMM_NN, 16384, 16384, 16384));
  /* no fp8 on A100 or MI250X: an error naming the device, never another precision's rate */
  CHECK(kernel_s(&a100, &g) < 0);
  CHECK(strstr(pf_error_detail(), "a100-sxm-40") != NULL);
  CHECK(kernel_s(&mi, &g) < 0);

  /* the operands' floor: an expert's product over few rows takes at least its weight's read (DeepSeek-V3 fc1,
   * 16 x 4096 x 7168 bf16: 59 MB, measured 25 us on an H100), half that in fp8; a large product stays
   * compute-bound */
  pf_kernel ex = {.kind = PF_KERNEL_GEMM, .prec = PF_BF16, .m = 16, .n = 4096, .k = 7168};
  double wread = 2.0 * (16.0 * 7168 + 7168.0 * 4096 + 16.0 * 4096) / (h100.memory_bw_Bps * h100.hbm_eff);
  CHECK(kernel_s(&h100, &ex) >= wread);
  CHECK_NEAR(kernel_s(&h100, &ex), 25.1e-6, 0.2);
  ex.prec = PF_FP8;
  CHECK(kernel_s(&h100, &ex) >= 0.5 * wread && kernel_s(&h100, &ex) < 0.6 * (wread + 4e-6));
  pf_kernel_env e1 = {.dev = &h100, .eff_scale = 1};
  pf_kernel_cost big_c;
  g.prec = PF_BF16;
  CHECK_INT(pf_kernel_cost_eval(&e1, &g, &big_c), 0);
  CHECK(big_c.limit == PF_LIMIT_COMPUTE);

  /* grouped GEMMs (a MoE layer's experts: one product per expert, rows padded to the M block, kernel.c) against
   * Transformer Engine's own H100 BF16 figures for general_grouped_gemm, the path Megatron's GroupedLinear takes
   * (NVIDIA/TransformerEngine#2045, TE 2.7 with CUDA 12.9, multi-stream cuBLAS): 8 x (4096 x 768 x 2048) at
   * 627.9 TFLOP/s, 16 x (2048 x 768 x 2048) at 553.9 (its CUTLASS kernel 650.6 and 636.9; TE 2.2 508.8 and
   * 398.8).  Neither set a constant of the model: within 15 % of the multi-stream figure. */
  static const double te[][5] = {{8, 4096, 768, 2048, 627.903e12}, {16, 2048, 768, 2048, 553.945e12}};
  for (int i = 0; i < 2; i++) {
    pf_kernel gg = {.kind = PF_KERNEL_GEMM, .prec = PF_BF16, .layout = PF_GEMM_NN, .m = te[i][1], .n = te[i][2],
                    .k = te[i][3], .batch = te[i][0], .host_ops = te[i][0], .grouped = true};
    double rate = 2.0 * te[i][0] * te[i][1] * te[i][2] * te[i][3] / kernel_s(&h100, &gg);
    printf("grouped %g x (%g x %g x %g) on H100: %.0f TFLOP/s (TE#2045: %.0f)\n", te[i][0], te[i][1], te[i][2],
           te[i][3], rate / 1e12, te[i][4] / 1e12);
    CHECK(fabs(rate / te[i][4] - 1) < 0.15);
  }

  /* attention: backward slower per FLOP and 2.5x the FLOPs; short sequences and small heads slower */
  pf_kernel fa = {.kind = PF_KERNEL_ATTENTION, .prec = PF_BF16, .pass = PF_PASS_FWD, .m = 4096, .n = 4096, .k = 128,
                  .batch = 32};
  pf_kernel fb = fa;
  fb.pass = PF_PASS_BWD;
  CHECK_NEAR(pf_kernel_flops(&fb), 2.5 * pf_kernel_flops(&fa), 1e-12);
  CHECK(pf_attention_eff(&h100, PF_BF16, PF_PASS_BWD, 4096, 4096, 128, 32) <
        pf_attention_eff(&h100, PF_BF16, PF_PASS_FWD, 4096, 4096, 128, 32));
  CHECK(pf_attention_eff(&h100, PF_BF16, PF_PASS_FWD, 512, 512, 128, 32) <
        pf_attention_eff(&h100, PF_BF16, PF_PASS_FWD, 8192, 8192, 128, 32));
  CHECK(pf_attention_eff(&h100, PF_BF16, PF_PASS_FWD, 4096, 4096, 64, 32) <
        pf_attention_eff(&h100, PF_BF16, PF_PASS_FWD, 4096, 4096, 128, 32));
  CHECK_NEAR(pf_attention_eff(&h100, PF_BF16, PF_PASS_FWD, 16384, 16384, 128, 1056), h100.attn_eff_fwd, 0.01);
  CHECK(kernel_s(&h100, &fb) > 2.5 * kernel_s(&h100, &fa));
  /* narrow heads: on cuDNN (the H100 file's attention figures are cuDNN's) head dim 64 runs at the medians
   * measured on an H200 (calibrate/results/vm-h200-141-2026-11-27-torch-attention-window.json), 0.68x the rate
   * of 128 forward and 0.78x backward; FlashAttention-2's 0.9x where the device gives no figures (A100) */
  for (int pass = 0; pass < 2; pass++) {
    pf_pass ps = pass ? PF_PASS_BWD : PF_PASS_FWD;
    double r = pf_attention_eff(&h100, PF_BF16, ps, 4096, 4096, 64, 64) /
               pf_attention_eff(&h100, PF_BF16, ps, 4096, 4096, 128, 64);
    CHECK(fabs(r - (pass ? 0.78 : 0.68)) < 0.01);
    r = pf_attention_eff(&a100, PF_BF16, ps, 4096, 4096, 64, 64) /
        pf_attention_eff(&a100, PF_BF16, ps, 4096, 4096, 128, 64);
    CHECK(fabs(r - 0.9) < 0.01);
  }
  /* heads wider than 128: MLA's (keys 192, values 128) and 256 / 256 against 128 / 128 heads of the same count,
   * time ratios measured with cuDNN on an H200 (calibrate/results/vm-h200-141-2026-11-27-torch-attention-mla.json,
   * causal bf16): 128 heads at 4k tokens, forward 1.205 / 1.000 ms, backward 4.289 / 2.980 ms; 16 heads at 16k,
   * backward 14.866 / 5.394 ms at 256.  The backward's exponent was fitted on the MLA rows (this one among them);
   * without it and the backward's exact FLOPs the MLA ratio reads 1.25, the 256 one 2.0 */
  static const struct { double s, heads, dk, dv; pf_pass pass; double measured; } wide[] = {
      {4096, 128, 192, 128, PF_PASS_FWD, 1.205 / 1.000}, {4096, 128, 192, 128, PF_PASS_BWD, 4.289 / 2.980},
      {16384, 16, 256, 256, PF_PASS_BWD, 14.866 / 5.394}};
  for (size_t i = 0; i < sizeof wide / sizeof wide[0]; i++) {
    pf_kernel base = {.kind = PF_KERNEL_ATTENTION, .prec = PF_BF16, .pass = wide[i].pass, .m = wide[i].s,
                      .n = wide[i].s, .k = 128, .batch = wide[i].heads, .causal = true};
    pf_kernel w = base;
    w.k = wide[i].dk;
    w.dv = wide[i].dv;
    double r = kernel_s(&h100, &w) / kernel_s(&h100, &base);
    printf("attention %g / %g heads, %s: %.3f x 128 / 128's time (measured %.3f)\n", wide[i].dk, wide[i].dv,
           wide[i].pass == PF_PASS_BWD ? "backward" : "forward", r, wide[i].measured);
    CHECK(fabs(r / wide[i].measured - 1) < 0.05);
  }

  /* convolution: its implicit GEMM's math at conv_eff of the GEMM rate (the GEMM of the same shape would read
   * an im2col matrix 9x the input, so only the math is compared) */
  pf_kernel cv = {.kind = PF_KERNEL_CONV, .prec = PF_BF16, .m = 32 * 56 * 56, .n = 256, .k = 64 * 9};
  pf_kernel gm = cv;
  gm.kind = PF_KERNEL_GEMM;
  pf_kernel_cost cvc, gmc;
  CHECK_INT(pf_kernel_cost_eval(&e1, &cv, &cvc), 0);
  CHECK_INT(pf_kernel_cost_eval(&e1, &gm, &gmc), 0);
  CHECK_NEAR(cvc.compute_s, gmc.compute_s / h100.conv_eff, 1e-9);
  CHECK_NEAR(kernel_s(&h100, &cv) - h100.kernel_launch_s, cvc.compute_s, 1e-9);

  /* memory-bound: a 64 KiB kernel is floor-bound far below stream bandwidth; 4 GiB runs at it */
  pf_kernel small = {.kind = PF_KERNEL_MEMORY, .bytes = 65536};
  pf_kernel large = {.kind = PF_KERNEL_MEMORY, .bytes = 4.0 * (1 << 30)};
  double bw_small = small.bytes / kernel_s(&h100, &small), bw_large = large.bytes / kernel_s(&h100, &large);
  double stream = h100.memory_bw_Bps * h100.hbm_eff;
  CHECK(bw_small < 0.01 * stream);
  CHECK(bw_large > 0.99 * stream && bw_large <= stream);
  /* launch floor: the measured H100 value */
  CHECK_NEAR(h100.kernel_launch_s, 2.84e-6, 1e-9);
  return pf_check_done();
}
