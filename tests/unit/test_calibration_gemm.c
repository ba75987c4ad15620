/* test_calibration_gemm.c - a calibration's library GEMM table (results.gemm,
 * what `calibrate --gemm` writes) overlays the device: predict uses it.
 * The synthetic fixture runs every bf16 kernel at 50 % and every fp8 kernel
 * at 40 % of the dense peak after a 3 us per-call overhead. */
#include "check.h"
#include "machine/machine.h"
#include "compute/compute.h"
#include "core/core.h"
#include "study/study.h"

#include <stdlib.h>
#include <unistd.h>

static double kernel_s(const pf_device *d, pf_precision p, double m, double n, double k) {
  pf_kernel_env env = {.dev = d, .host_op_s = 0, .eff_scale = 1};
  pf_kernel g = {.kind = PF_KERNEL_GEMM, .prec = p, .m = m, .n = n, .k = k};
  pf_kernel_cost c;
  return pf_kernel_cost_eval(&env, &g, &c) < 0 ? -1 : c.time_s;
}

int main(void) {
  const char *src = getenv("PF_SRC");
  char mach[1024], cal[1024];
  snprintf(mach, sizeof mach, "%s/tests/fixtures/machines/hgx-h100.cfg", src ? src : ".");
  snprintf(cal, sizeof cal, "%s/tests/fixtures/calibration/h100-gemm-table.json", src ? src : ".");
  pf_machine m;
  CHECK_INT(pf_machine_load(mach, &m), 0);
  const pf_gemm_table *shipped = m.dev.gemm_table;
  pf_calibration c;
  int rc = pf_calibration_load(cal, &c);
  if (rc) fprintf(stderr, "%s\n", pf_error_detail());
  CHECK_INT(rc, 0);
  CHECK_INT(c.gemm_n, 54);
  CHECK_INT(c.units, 132);
  CHECK_STR(c.gemm_library, "cublasLt (synthetic)");
  CHECK_NEAR(c.gemm_overhead_s, 3e-6, 1e-12);
  CHECK_INT(pf_calibration_apply(&c, &m), 0);
  CHECK(m.dev.gemm_table != NULL && m.dev.gemm_table != shipped);
  /* over the shipped bf16 and fp8 tables the rows correct them like for like (the large-GEMM references stay
   * the tables') */
  CHECK_NEAR(m.dev.gemm_eff, 0.803, 0);
  CHECK_NEAR(m.dev.gemm_eff_fp8, 0.709, 0);
  /* on a part without a table the rows become its table: each class's best measured row its large-GEMM rate */
  pf_machine bare;
  CHECK_INT(pf_machine_load(mach, &bare), 0);
  bare.dev.gemm_table = NULL;
  CHECK_INT(pf_calibration_apply(&c, &bare), 0);
  CHECK_NEAR(bare.dev.gemm_eff_fp8, 0.4, 1e-6);
  /* on a table point the kernel costs what was measured, less the per-call overhead, plus the launch floor */
  double t = kernel_s(&m.dev, PF_BF16, 4096, 4096, 4096);
  CHECK_NEAR(t, 2.0 * 4096 * 4096 * 4096 / (989.4e12 * 0.5) + m.dev.kernel_launch_s, 2e-3);
  t = kernel_s(&m.dev, PF_FP8, 16384, 1024, 4096);
  CHECK_NEAR(t, 2.0 * 16384 * 1024 * 4096 / (1978.9e12 * 0.4) + m.dev.kernel_launch_s, 2e-3);
  /* between table points the efficiency stays at the measured 50 % (the shape curve's residuals cancel) */
  CHECK_NEAR(pf_gemm_eff(&m.dev, PF_BF16, PF_GEMM_NN, 8192, 8192, 8192), 0.5, 0.03);
  /* fp16 uses the bf16 rows (same tensor rate) */
  CHECK_NEAR(pf_gemm_eff(&m.dev, PF_FP16, PF_GEMM_NN, 4096, 4096, 4096), 0.5, 2e-3);

  /* end to end: predict --calibration with the table is slower than the shipped H100 table by about 0.72 / 0.5 on GEMMs */
  static pf_scenario a, b;
  static pf_prediction pa, pb;
  pf_scenario_init(&a);
  CHECK_INT(pf_machine_load(mach, &a.machine), 0);
  CHECK_INT(pf_workload_builtin("gpt3-1.3b", &a.workload), 0);
  a.gpus = 1;
  a.plan.gbs = 8;
  a.precision = PF_BF16;
  a.host_mode = PF_HOST_GRAPHS; /* the GEMMs' time alone: eager, Megatron's Python per layer hides part of it */
  a.plan.flash_attn = true;      /* the linear layers' GEMMs: unfused attention products are bound by their bytes */
  b = a;
  snprintf(b.calibration, sizeof b.calibration, "%s", cal);
  CHECK_INT(pf_scenario_apply_calibration(&b), 0);
  CHECK_INT(pf_resolve_predict(&a, &pa), 0);
  CHECK_INT(pf_resolve_predict(&b, &pb), 0);
  CHECK(b.machine.dev.gemm_table != a.machine.dev.gemm_table);
  double r = pb.iteration_time_s / pa.iteration_time_s;
  printf("gpt3-1.3b on one H100: shipped table %.3f s, synthetic 50 %% table %.3f s (x%.2f)\n", pa.iteration_time_s,
         pb.iteration_time_s, r);
  CHECK(r > 1.15 && r < 0.75 / 0.5);
  /* calibrate --for: the distinct GEMMs of a scenario's step (GPT-3 1.3B, TP 2, mbs 2: M = 2 x 2048 tokens) */
  static pf_scenario f;
  pf_scenario_init(&f);
  CHECK_INT(pf_machine_load("jureca-dc-h100", &f.machine), 0);
  CHECK_INT(pf_workload_builtin("gpt3-1.3b", &f.workload), 0);
  f.gpus = 2;
  f.plan.tp = 2;
  f.plan.mbs = 2;
  f.plan.gbs = 16;
  f.precision = PF_BF16;
  pf_gemm_sample *sh = NULL;
  int ns = 0;
  rc = pf_scenario_gemm_shapes(&f, &sh, &ns);
  if (rc) fprintf(stderr, "%s\n", pf_error_detail());
  CHECK_INT(rc, 0);
  double h = f.workload.hidden, T = 2.0 * f.workload.seq;
  const double want[][3] = {{T, 3 * h / 2, h}, {T, h, h / 2}, {T, f.workload.ffn_hidden / 2, h}, {T, h, f.workload.ffn_hidden / 2}};
  for (int w = 0; w < 4; w++) {
    int found = 0;
    for (int i = 0; i < ns; i++)
      if (sh[i].m == want[w][0] && sh[i].n == want[w][1] && sh[i].k == want[w][2] && sh[i].prec == PF_BF16) found++;
    CHECK_INT(found, 1);
  }
  for (int i = 0; i < ns; i++) CHECK(sh[i].m >= 1 && sh[i].n >= 1 && sh[i].k >= 1);
  CHECK(ns >= 5 && ns <= 12); /* the four layer GEMMs, the logits; no duplicates */
  free(sh);

  /* a broken table names the row and field */
  char bad[] = "/tmp/pf_gemm_bad_XXXXXX";
  int fd = mkstemp(bad);
  const char *doc = "{\"schema_version\": 1, \"backend\": \"cuda\", \"results\": {\"gemm\": {\"rows\": ["
                    "{\"m\": 64, \"n\": 64, \"k\": 64, \"layout\": \"NN\", \"dtype\": \"bf16\", \"time_s\": 1e-5},"
                    "{\"m\": 64, \"n\": 64, \"k\": 64, \"layout\": \"XY\", \"dtype\": \"bf16\", \"time_s\": 1e-5}]}}}";
  CHECK(fd >= 0 && write(fd, doc, strlen(doc)) == (ssize_t)strlen(doc));
  close(fd);
  CHECK_INT(pf_calibration_load(bad, &c), PF_EPARSE);
  CHECK(strstr(pf_error_detail(), "results.gemm.rows[1].layout") != NULL);
  unlink(bad);
  return pf_check_done();
}
