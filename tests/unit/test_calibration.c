/* test_calibration.c - the calibration file contract and the harness pieces
 * that need no device: pf_calibration_load / pf_calibration_apply on the
 * fixtures in tests/fixtures/calibration, the statistics and alpha-beta fit of
 * the protocol, the datasheet table, option parsing and atomic output. */
#include "check.h"

#include "pfcal.h"
#include "machine/machine.h"
#include "core/core.h"

#include <dirent.h>
#include <fcntl.h>
#include <stdlib.h>
#include <unistd.h>

static char fixture_dir[PF_PATH_MAX];

static const char *fixture(const char *name) {
  static char buf[PF_PATH_MAX + 64];
  snprintf(buf, sizeof buf, "%s/%s", fixture_dir, name);
  return buf;
}

static pf_machine h100_machine(void) {
  pf_machine m;
  memset(&m, 0, sizeof m);
  snprintf(m.id, sizeof m.id, "test-h100");
  int rc = pf_device_load("h100-sxm-80", &m.dev);
  if (rc) fprintf(stderr, "pf_device_load(h100-sxm-80): %s\n", pf_error_detail());
  CHECK_INT(rc, 0);
  return m;
}

/* Run apply with stderr captured into buf. */
static int apply_capture(const pf_calibration *c, pf_machine *m, char *buf, size_t len) {
  char path[] = "/tmp/pf_cal_stderr_XXXXXX";
  int fd = mkstemp(path);
  fflush(stderr);
  int saved = dup(2);
  dup2(fd, 2);
  int rc = pf_calibration_apply(c, m);
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  lseek(fd, 0, SEEK_SET);
  ssize_t n = read(fd, buf, len - 1);
  buf[n > 0 ? n : 0] = '\0';
  close(fd);
  unlink(path);
  return rc;
}

static void test_fixture_gemm70(void) {
  pf_calibration c;
  int rc = pf_calibration_load(fixture("h100-sxm-80-gemm70.json"), &c);
  if (rc) fprintf(stderr, "%s\n", pf_error_detail());
  CHECK_INT(rc, 0);
  CHECK_INT(c.schema_version, 1);
  CHECK_STR(c.backend, "cuda");
  CHECK_STR(c.device_name, "NVIDIA H100 80GB HBM3");
  CHECK_NEAR(c.tensor_flops[PF_BF16], 692.58e12, 1e-12);
  CHECK_NEAR(c.tensor_flops[PF_FP16], 692.58e12, 1e-12);
  CHECK(c.tensor_flops[PF_FP8] == 0);
  CHECK(c.hbm_triad_Bps == 0 && c.launch_s == 0 && !c.has_fit);

  pf_machine m = h100_machine();
  pf_device before = m.dev;
  char err[4096];
  CHECK_INT(apply_capture(&c, &m, err, sizeof err), 0);
  CHECK_STR(err, ""); /* same device: no warning */
  /* an instruction loop is not a library GEMM: the GEMM efficiency stays the device's, and on sm_90 (mma.sync
   * at ~2/3 of the wgmma rate) the tensor rate is no ceiling either */
  CHECK_NEAR(m.dev.gemm_eff, before.gemm_eff, 0);
  CHECK(m.dev.gemm_ceiling[PF_BF16] == 0);
  CHECK_NEAR(pf_gemm_eff_batched(&m.dev, PF_BF16, PF_GEMM_NN, 8192, 8192, 8192, 1),
             pf_gemm_eff_batched(&before, PF_BF16, PF_GEMM_NN, 8192, 8192, 8192, 1), 0);
  CHECK_NEAR(m.dev.peak_flops[PF_BF16], before.peak_flops[PF_BF16], 0); /* MFU stays against datasheet */
  CHECK_NEAR(m.dev.hbm_eff, before.hbm_eff, 0);
  CHECK_NEAR(m.dev.kernel_launch_s, before.kernel_launch_s, 0);
  CHECK_NEAR(m.dev.tdp_W, before.tdp_W, 0);
  CHECK(m.dev.calibrated);
  CHECK(strstr(m.dev.calibration_source, "h100-sxm-80-gemm70.json") != NULL);

  /* where the instruction kernel is the full-rate path (sm_80: mma.sync), its rate caps every product of
   * its class, the large ones at 70 %, while small ones below the cap keep their rate */
  snprintf(c.arch, sizeof c.arch, "sm_80");
  m = h100_machine();
  CHECK_INT(apply_capture(&c, &m, err, sizeof err), 0);
  CHECK_NEAR(m.dev.gemm_ceiling[PF_BF16], 0.70, 1e-9);
  CHECK_NEAR(m.dev.gemm_eff, before.gemm_eff, 0);
  CHECK_NEAR(pf_gemm_eff_batched(&m.dev, PF_BF16, PF_GEMM_NN, 16384, 16384, 16384, 1), 0.70, 1e-9);
  double small = pf_gemm_eff_batched(&before, PF_BF16, PF_GEMM_NN, 256, 256, 256, 1);
  CHECK(small < 0.70);
  CHECK_NEAR(pf_gemm_eff_batched(&m.dev, PF_BF16, PF_GEMM_NN, 256, 256, 256, 1), small, 0);
}

static void test_full(void) {
  pf_calibration c;
  int rc = pf_calibration_load(fixture("full-h100.json"), &c);
  if (rc) fprintf(stderr, "%s\n", pf_error_detail());
  CHECK_INT(rc, 0);
  CHECK_NEAR(c.vector_flops[PF_FP64], 31e12, 1e-12);
  CHECK_NEAR(c.vector_flops[PF_FP32], 60e12, 1e-12); /* a bare number is accepted */
  CHECK_NEAR(c.hbm_read_Bps, 3.05e12, 1e-12);
  CHECK(c.hbm_write_Bps == 0);
  CHECK_NEAR(c.d2d_Bps, 372e9, 1e-12);
  CHECK_NEAR(c.link_alpha_s, 9e-6, 1e-12);
  CHECK_NEAR(c.link_beta_Bps, 385e9, 1e-12);
  CHECK_NEAR(c.h2d_Bps, 55e9, 1e-12);
  CHECK(c.has_fit);
  CHECK_NEAR(c.fit_compute_eff, 0.95, 1e-12);
  CHECK_NEAR(c.fit_comm_eff, 1.0, 0); /* default */

  pf_machine m = h100_machine();
  char err[4096];
  CHECK_INT(apply_capture(&c, &m, err, sizeof err), 0);
  CHECK_NEAR(m.dev.gemm_eff, 0.803, 0);            /* the device's: a tensor loop is not a library GEMM */
  CHECK_NEAR(m.dev.hbm_eff, 0.9, 1e-9);             /* triad / 3.35 TB/s */
  CHECK_NEAR(m.dev.kernel_launch_s, 3.1e-6, 1e-12);
  CHECK_NEAR(m.dev.idle_W, 72, 0);
  CHECK_NEAR(m.dev.context_W, 115, 0);
  CHECK_NEAR(m.dev.tdp_W, 650, 0); /* the cap the driver reported, not the highest power drawn (max_W) */
  CHECK(c.has_power_coef);
  CHECK_NEAR(c.power_tensor_W, 700, 0);
  CHECK_NEAR(c.power_hbm_W, 140, 0);
  CHECK_NEAR(c.power_vector_W, 180, 0);
  CHECK_NEAR(m.dev.tensor_W, 700, 0);
  CHECK_NEAR(m.dev.hbm_W, 140, 0);
  CHECK_NEAR(m.dev.vector_W, 180, 0);

  /* the same file on an A100 machine: not a match (pf_predict refuses it unless forced) */
  pf_machine a;
  memset(&a, 0, sizeof a);
  snprintf(a.id, sizeof a.id, "test-a100");
  CHECK_INT(pf_device_load("a100-sxm-40", &a.dev), 0);
  char why[512] = "";
  CHECK(!pf_calibration_matches(&c, &a, why, sizeof why));
  CHECK(strstr(why, "is not test-a100's device") != NULL);
  CHECK(pf_calibration_matches(&c, &m, why, sizeof why));
  /* forced onto the A100 (312 TFLOP/s bf16), the measured 792 TFLOP/s would be above the peak: refused */
  CHECK_INT(apply_capture(&c, &a, err, sizeof err), PF_EINVAL);
  CHECK(strstr(pf_error_detail(), "above the peak") != NULL);
  CHECK(!a.dev.calibrated);
  /* forced onto an H200 (same rates class): applied */
  memset(&a, 0, sizeof a);
  snprintf(a.id, sizeof a.id, "test-h200");
  CHECK_INT(pf_device_load("h200-141", &a.dev), 0);
  CHECK_INT(apply_capture(&c, &a, err, sizeof err), 0);
  CHECK(a.dev.calibrated);
}

static void test_fit_only(void) {
  pf_calibration c;
  CHECK_INT(pf_calibration_load(fixture("fit-only.json"), &c), 0);
  CHECK(c.has_fit);
  CHECK_NEAR(c.fit_compute_eff, 0.92, 1e-12);
  CHECK_NEAR(c.fit_comm_eff, 0.8, 1e-12);
  CHECK_NEAR(c.fit_step_overhead_s, 0.15, 1e-12);
  CHECK_NEAR(c.fit_rel_sigma, 0.06, 1e-12);
  CHECK_NEAR(c.fit_input_rate_Bps, 2.5e9, 1e-12);
  pf_machine m = h100_machine();
  double g = m.dev.gemm_eff;
  CHECK_INT(pf_calibration_apply(&c, &m), 0);
  CHECK_NEAR(m.dev.gemm_eff, g, 0); /* fit parameters are the predictor's to apply */
}

static void expect_error(const char *name, int code, const char *in_detail) {
  pf_calibration c;
  int rc = pf_calibration_load(fixture(name), &c);
  CHECK_INT(rc, code);
  const char *d = pf_error_detail();
  if (!strstr(d, name) || (in_detail && !strstr(d, in_detail))) {
    fprintf(stderr, "  %s: detail \"%s\" should name the file and \"%s\"\n", name, d, in_detail ? in_detail : "");
    CHECK(0);
  } else {
    CHECK(1);
  }
  CHECK_INT(pf_error_exit_code(rc), 2);
}

static void test_errors(void) {
  expect_error("malformed.json", PF_EPARSE, "malformed JSON");
  expect_error("malformed.json", PF_EPARSE, ":5:"); /* the line of the stray comma */
  expect_error("bad-schema.json", PF_EINVAL, "schema_version");
  expect_error("bad-field.json", PF_EPARSE, "results.memory_bw.triad.median");
  expect_error("no-such-file.json", PF_ENOENT, "cannot open");

  char dir[] = "/tmp/pf_cal_test_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[256];
  struct {
    const char *text;
    int code;
    const char *field;
  } cases[] = {
      {"", PF_EPARSE, "empty"},
      {"[1,2]", PF_EPARSE, "top level"},
      {"{\"backend\":\"cuda\",\"results\":{}}", PF_EPARSE, "schema_version"},
      {"{\"schema_version\":\"1\",\"results\":{}}", PF_EPARSE, "schema_version"},
      {"{\"schema_version\":1}", PF_EPARSE, "nothing to apply"},
      {"{\"schema_version\":1,\"backend\":\"tpu\",\"results\":{}}", PF_EPARSE, "backend"},
      {"{\"schema_version\":1,\"results\":{\"tensor_flops\":{\"bf16\":{\"median\":-5}}}}", PF_EPARSE,
       "results.tensor_flops.bf16.median"},
      {"{\"schema_version\":1,\"results\":{\"tensor_flops\":{\"bf16\":{\"best\":5}}}}", PF_EPARSE,
       "results.tensor_flops.bf16.median"},
      {"{\"schema_version\":1,\"results\":{\"tensor_flops\":[1]}}", PF_EPARSE, "results.tensor_flops"},
      {"{\"schema_version\":1,\"results\":{\"launch_latency_s\":true}}", PF_EPARSE, "results.launch_latency_s"},
      {"{\"schema_version\":1,\"results\":{\"d2d\":[{\"alpha_s\":1e-6}]}}", PF_EPARSE, "results.d2d[0].beta_Bps"},
      {"{\"schema_version\":1,\"results\":{\"h2d_Bps\":1e999}}", PF_EPARSE, "results.h2d_Bps"},
      {"{\"schema_version\":1,\"power_model\":{\"max_W\":\"700 W\"}}", PF_EPARSE, "power_model.max_W"},
      {"{\"schema_version\":1,\"power_model\":{\"coefficients\":{\"tensor_W\":-5,\"hbm_W\":1,\"vector_W\":1}}}",
       PF_EPARSE, "power_model.coefficients.tensor_W"},
      {"{\"schema_version\":1,\"power_model\":{\"coefficients\":{\"tensor_W\":500}}}", PF_EPARSE,
       "power_model.coefficients.hbm_W"},
      {"{\"schema_version\":1,\"device\":{\"power_cap_W\":9000},\"power_model\":{}}", PF_EPARSE,
       "device.power_cap_W"},
      {"{\"schema_version\":1,\"fit\":{\"compute_eff\":0}}", PF_EPARSE, "fit.compute_eff"},
      {"{\"schema_version\":1,\"fit\":{\"input_rate_Bps\":0}}", PF_EPARSE, "fit.input_rate_Bps"},
      {"{\"schema_version\":1,\"fit\":{\"input_rate_Bps\":-2e9}}", PF_EPARSE, "fit.input_rate_Bps"},
      {"{\"schema_version\":1,\"fit\":{\"input_rate_Bps\":\"2 GB/s\"}}", PF_EPARSE, "fit.input_rate_Bps"},
      {"{\"schema_version\":1,\"fit\":{\"input_rate_Bps\":1e999}}", PF_EPARSE, "fit.input_rate_Bps"},
      {"{\"schema_version\":1,\"device\":{\"name\":7},\"results\":{}}", PF_EPARSE, "device.name"},
      {"{\"schema_version\":1,\"results\":{\"tensor_flops\":{\"bf16\":{\"median\":7e14}}}", PF_EPARSE, "malformed"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    snprintf(path, sizeof path, "%s/case%zu.json", dir, i);
    FILE *f = fopen(path, "w");
    fputs(cases[i].text, f);
    fclose(f);
    pf_calibration c;
    int rc = pf_calibration_load(path, &c);
    if (rc != cases[i].code || !strstr(pf_error_detail(), cases[i].field) || !strstr(pf_error_detail(), path)) {
      fprintf(stderr, "case %zu (%s): rc %d, detail \"%s\"; wanted %d naming %s\n", i, cases[i].text, rc,
              pf_error_detail(), cases[i].code, cases[i].field);
      CHECK(0);
    } else {
      CHECK(1);
    }
    unlink(path);
  }
  /* binary data */
  snprintf(path, sizeof path, "%s/bin.json", dir);
  FILE *f = fopen(path, "wb");
  fwrite("{\0\1\2", 1, 4, f);
  fclose(f);
  pf_calibration c;
  CHECK_INT(pf_calibration_load(path, &c), PF_EPARSE);
  unlink(path);
  rmdir(dir);

  /* a cpu calibration is refused by apply: it measured the host, not the GPU */
  snprintf(path, sizeof path, "%s", "/tmp/pf_cal_cpu_XXXXXX");
  int fd = mkstemp(path);
  const char *cpu = "{\"schema_version\":1,\"backend\":\"cpu\",\"device\":{\"name\":\"AMD EPYC\"},"
                    "\"results\":{\"memory_bw\":{\"triad\":{\"median\":3e10}}}}";
  CHECK(write(fd, cpu, strlen(cpu)) == (ssize_t)strlen(cpu));
  close(fd);
  CHECK_INT(pf_calibration_load(path, &c), 0);
  pf_machine m = h100_machine();
  CHECK_INT(pf_calibration_apply(&c, &m), PF_EINVAL);
  CHECK(strstr(pf_error_detail(), "--backend cuda") != NULL);
  CHECK(!m.dev.calibrated);
  unlink(path);
}

/* The power model overlay (issue 11): the driver's cap replaces the cap, the coefficients the utilisation
 * terms; max_W (a register-only kernel's 412 W on an H100) does not become the cap. */
static void test_power(void) {
  pf_calibration c;
  CHECK_INT(pf_calibration_load(fixture("power-h100.json"), &c), 0);
  CHECK(c.has_power_coef);
  CHECK_NEAR(c.power_cap_W, 600, 0);
  pf_machine m = h100_machine();
  char err[4096];
  CHECK_INT(apply_capture(&c, &m, err, sizeof err), 0);
  CHECK_NEAR(m.dev.idle_W, 66, 0);
  CHECK_NEAR(m.dev.context_W, 120, 0);
  CHECK_NEAR(m.dev.tdp_W, 600, 0);
  CHECK_NEAR(m.dev.cap_W, 600, 0);
  CHECK_NEAR(m.dev.tensor_W, 520, 0);
  CHECK_NEAR(m.dev.hbm_W, 200, 0);
  CHECK_NEAR(m.dev.vector_W, 450, 0);
  /* a coefficient out of range names its field */
  char path[] = "/tmp/pf_cal_power_XXXXXX";
  int fd = mkstemp(path);
  const char *bad = "{\"schema_version\":1,\"power_model\":{\"coefficients\":{\"tensor_W\":9000,\"hbm_W\":1}}}";
  CHECK(write(fd, bad, strlen(bad)) == (ssize_t)strlen(bad));
  close(fd);
  CHECK_INT(pf_calibration_load(path, &c), PF_EPARSE);
  CHECK(strstr(pf_error_detail(), "power_model.coefficients.tensor_W") != NULL);
  unlink(path);
}

static void test_stats(void) {
  pfcal_stat st;
  memset(&st, 0, sizeof st);
  st.unit = "FLOP/s";
  double v[] = {1, 2, 3, 4, 100};
  memcpy(st.samples, v, sizeof v);
  st.n = 5;
  pfcal_stat_finish(&st, 0.05);
  CHECK_NEAR(st.median, 3, 0);
  CHECK_NEAR(st.best, 100, 0);
  CHECK_NEAR(st.mean, 22, 1e-12);
  CHECK(st.cv > 1.0);
  CHECK_STR(st.flag, "high_cv");
  st.datasheet = 10;
  pfcal_stat_finish(&st, 0.05);
  CHECK_STR(st.flag, "below_band"); /* 3 / 10 < 0.5 */
  st.datasheet = 2.8;
  pfcal_stat_finish(&st, 0.05);
  CHECK_STR(st.flag, "above_band"); /* 3 / 2.8 > 1.05 */
  st.datasheet = 3.5;
  pfcal_stat_finish(&st, 10.0);
  CHECK_STR(st.flag, "ok");
  st.lower_is_better = true;
  pfcal_stat_finish(&st, 10.0);
  CHECK_NEAR(st.best, 1, 0);
  double even[] = {4, 1, 3, 2};
  CHECK_NEAR(pfcal_median(even, 4), 2.5, 0);
  CHECK_NEAR(even[0], 4, 0); /* not modified */
  CHECK_NEAR(pfcal_median(even, 0), 0, 0);
  st.n = 0;
  pfcal_stat_finish(&st, 0.05);
  CHECK(!st.measured);
  CHECK_STR(st.flag, "unsupported");
}

static int constant_sample(void *ctx, double *v) {
  int *calls = ctx;
  (*calls)++;
  *v = 5.0;
  return 0;
}

static int unsupported_sample(void *ctx, double *v) {
  (void)ctx;
  *v = 0;
  return pf_error_set(PF_EINVAL, "not on this device");
}

static int zero_sample(void *ctx, double *v) {
  (void)ctx;
  *v = 0;
  return 0;
}

static void test_measure(void) {
  pfcal_protocol pr = pfcal_protocol_for(true);
  pfcal_stat st;
  memset(&st, 0, sizeof st);
  st.unit = "s";
  int calls = 0;
  CHECK_INT(pfcal_measure(&pr, constant_sample, &calls, &st), 0);
  CHECK_INT(st.n, pr.min_samples); /* cv 0 stops at the minimum */
  CHECK_INT(calls, pr.warmup + pr.min_samples);
  CHECK_NEAR(st.median, 5, 0);
  CHECK_STR(st.flag, "ok");
  CHECK_INT(pfcal_measure(&pr, unsupported_sample, NULL, &st), PF_EINVAL);
  CHECK(!st.measured);
  CHECK_INT(pfcal_measure(&pr, zero_sample, NULL, &st), PF_EIO);
  pfcal_protocol full = pfcal_protocol_for(false);
  CHECK(full.min_samples > pr.min_samples && full.target_cv < pr.target_cv);
}

static void test_fit(void) {
  double b[] = {1e3, 1e4, 1e5, 1e6, 1e7, 1e8}, t[6];
  for (int i = 0; i < 6; i++)
    t[i] = 5e-6 + b[i] / 2e10;
  double alpha, beta;
  CHECK_INT(pfcal_fit_alpha_beta(b, t, 6, &alpha, &beta), 0);
  CHECK_NEAR(alpha, 5e-6, 1e-9);
  CHECK_NEAR(beta, 2e10, 1e-9);
  /* pure bandwidth: alpha 0 */
  for (int i = 0; i < 6; i++)
    t[i] = b[i] / 1e11;
  CHECK_INT(pfcal_fit_alpha_beta(b, t, 6, &alpha, &beta), 0);
  CHECK(alpha < 1e-15);
  CHECK_NEAR(beta, 1e11, 1e-9);
  double one[] = {1e6, 1e6};
  CHECK_INT(pfcal_fit_alpha_beta(one, t, 2, &alpha, &beta), PF_EINVAL);
  double down[] = {2e-3, 1e-3};
  double sizes[] = {1e3, 1e6};
  CHECK_INT(pfcal_fit_alpha_beta(sizes, down, 2, &alpha, &beta), PF_EINVAL); /* bigger is faster: not physical */
}

static void test_datasheet(void) {
  const pfcal_datasheet *d = pfcal_datasheet_find("NVIDIA H100 80GB HBM3", 85e9, 0);
  CHECK(d && d->memory_bw_Bps == 3.35e12 && d->tensor_flops[PF_BF16] == 989.4e12);
  d = pfcal_datasheet_find("NVIDIA H100 PCIe", 85e9, 0);
  CHECK(d && d->memory_bw_Bps == 2.0e12);
  d = pfcal_datasheet_find("NVIDIA A100-SXM4-40GB", 42e9, 0);
  CHECK(d && d->memory_bw_Bps == 1.555e12);
  d = pfcal_datasheet_find("NVIDIA A100-SXM4-80GB", 85e9, 0);
  CHECK(d && d->memory_bw_Bps == 2.039e12);
  d = pfcal_datasheet_find("NVIDIA GH200 480GB", 102e9, 0);
  CHECK(d && d->memory_bw_Bps == 4.0e12);
  d = pfcal_datasheet_find("AMD Instinct MI250X", 68e9, 0);
  CHECK(d && d->tensor_flops[PF_FP16] == 191.5e12 && d->tensor_flops[PF_TF32] == 0 && d->dies == 2);
  /* ROCm's one marketing name for both CDNA2 OAMs: the GCD's CU count picks the part */
  d = pfcal_datasheet_find("AMD Instinct MI250X/MI250", 68e9, 104);
  CHECK(d && d->tensor_flops[PF_FP16] == 181.0e12 && d->dies == 2);
  d = pfcal_datasheet_find("AMD Instinct MI250X/MI250", 68e9, 110);
  CHECK(d && d->tensor_flops[PF_FP16] == 191.5e12);
  d = pfcal_datasheet_find("AMD Instinct MI210", 68e9, 104);
  CHECK(d && d->dies == 0 && d->tensor_flops[PF_FP16] == 181.0e12);
  d = pfcal_datasheet_find("NVIDIA H100 80GB HBM3", 85e9, 132);
  CHECK(d && d->dies == 0);
  CHECK(pfcal_datasheet_find("AMD EPYC", 0, 0) == NULL);
  CHECK(pfcal_datasheet_find(NULL, 0, 0) == NULL);
  CHECK_STR(pfcal_prec_name(PF_BF16), "bf16");
  CHECK_STR(pfcal_stream_name(PFCAL_TRIAD), "triad");
}

static void test_args(void) {
  pfcal_args a;
  char *ok[] = {"--backend", "cpu", "--quick", "-o", "x.json", "--seed=7", "--threads", "2", "--quiet"};
  CHECK_INT(pfcal_parse_args(9, ok, 0, true, &a), 0);
  CHECK_STR(a.backend, "cpu");
  CHECK(a.o.quick && !a.o.progress && a.o.seed == 7 && a.o.threads == 2);
  CHECK_STR(a.out, "x.json");
  char *full[] = {"--backend=hip", "--full", "--device", "1"};
  CHECK_INT(pfcal_parse_args(4, full, 0, true, &a), 0);
  CHECK(!a.o.quick && a.o.device == 1);
  char *bad1[] = {"--backend", "tpu"};
  CHECK_INT(pfcal_parse_args(2, bad1, 0, true, &a), PF_EINVAL);
  CHECK(strstr(pf_error_detail(), "tpu") != NULL);
  char *bad2[] = {"--backend", "cpu", "--quick", "--full"};
  CHECK_INT(pfcal_parse_args(4, bad2, 0, true, &a), PF_EINVAL);
  CHECK(strstr(pf_error_detail(), "--quick") && strstr(pf_error_detail(), "--full"));
  char *bad3[] = {"--backend", "cpu", "--seed", "12abc"};
  CHECK_INT(pfcal_parse_args(4, bad3, 0, true, &a), PF_EINVAL);
  char *bad4[] = {"--quick"};
  CHECK_INT(pfcal_parse_args(1, bad4, 0, true, &a), PF_EINVAL); /* --backend is required */
  char *bad5[] = {"--backend", "cpu", "-o"};
  CHECK_INT(pfcal_parse_args(3, bad5, 0, true, &a), PF_EINVAL);
  char *bad6[] = {"prog", "--backend", "cuda"};
  CHECK_INT(pfcal_parse_args(3, bad6, 1, false, &a), PF_EINVAL); /* the executables have no --backend */
  char *bad7[] = {"--backend", "cpu", "--threads", "-3"};
  CHECK_INT(pfcal_parse_args(4, bad7, 0, true, &a), PF_EINVAL);
  char *help[] = {"--help"};
  CHECK_INT(pfcal_parse_args(1, help, 0, true, &a), 0);
  CHECK(a.help);
}

static int count_entries(const char *dir) {
  DIR *d = opendir(dir);
  int n = 0;
  struct dirent *e;
  while ((e = readdir(d)))
    if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
  closedir(d);
  return n;
}

static void test_output(void) {
  char dir[] = "/tmp/pf_cal_out_XXXXXX";
  CHECK(mkdtemp(dir) != NULL);
  char path[256], bad[256];
  snprintf(path, sizeof path, "%s/cal.json", dir);
  FILE *f = fopen(path, "w");
  fputs("old\n", f);
  fclose(f);
  pf_output o;
  CHECK_INT(pfcal_output_check(path, &o), 0);
  CHECK_INT(pfcal_output_write(&o, "{\"new\":1}\n"), 0);
  char buf[64] = "";
  f = fopen(path, "r");
  CHECK(fgets(buf, sizeof buf, f) != NULL);
  fclose(f);
  CHECK_STR(buf, "{\"new\":1}\n");
  CHECK_INT(count_entries(dir), 1); /* no temporary file left */
  snprintf(bad, sizeof bad, "%s/missing/cal.json", dir);
  CHECK_INT(pfcal_output_check(bad, &o), PF_EIO);
  CHECK(strstr(pf_error_detail(), "does not exist") != NULL);
  CHECK_INT(pfcal_output_check(dir, &o), PF_EIO); /* a directory */
  CHECK_INT(pfcal_output_check("-", &o), 0);
  CHECK_INT(pfcal_output_check(NULL, &o), 0);
  unlink(path);
  rmdir(dir);

  char date[64];
  setenv("PF_FAKE_DATE", "2000-01-01T00:00:00Z", 1);
  pfcal_date(date, sizeof date);
  CHECK_STR(date, "2000-01-01T00:00:00Z");
  unsetenv("PF_FAKE_DATE");
  pfcal_date(date, sizeof date);
  CHECK(strlen(date) == 20 && date[10] == 'T' && date[19] == 'Z');
}

int main(void) {
  const char *src = getenv("PF_SRC");
  snprintf(fixture_dir, sizeof fixture_dir, "%s/tests/fixtures/calibration", src ? src : ".");
  test_fixture_gemm70();
  test_full();
  test_fit_only();
  test_errors();
  test_power();
  test_stats();
  test_measure();
  test_fit();
  test_datasheet();
  test_args();
  test_output();
  return pf_check_done();
}
