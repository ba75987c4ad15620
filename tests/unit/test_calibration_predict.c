/* test_calibration_predict.c - a calibration that measured GEMMs at 70 % of peak
 * slows predict by exactly what the roofline says: on one GPU (no pipeline, no
 * DP), iteration = M (gemm + memory-bound + launch) + optimizer, and only the
 * GEMM part scales, by datasheet gemm_eff / 0.70. */
#include "check.h"
#include "compute/compute.h"
#include "core/core.h"
#include "study/study.h"

#include <stdlib.h>

int main(void) {
  const char *src = getenv("PF_SRC");
  char mach[1024], cal[1024];
  snprintf(mach, sizeof mach, "%s/tests/fixtures/machines/hgx-h100.cfg", src ? src : ".");
  snprintf(cal, sizeof cal, "%s/tests/fixtures/calibration/h100-sxm-80-gemm70.json", src ? src : ".");
  static pf_scenario a, b;
  static pf_prediction pa, pb;
  pf_scenario_init(&a);
  if (pf_machine_load(mach, &a.machine) < 0) fprintf(stderr, "%s\n", pf_error_detail());
  CHECK_INT(pf_workload_builtin("gpt3-1.3b", &a.workload), 0);
  a.gpus = 1;
  a.plan.gbs = 8;
  a.precision = PF_BF16;
  b = a;
  snprintf(b.calibration, sizeof b.calibration, "%s", cal);
  CHECK_INT(pf_scenario_apply_calibration(&b), 0);
  CHECK_INT(pf_resolve_predict(&a, &pa), 0);
  CHECK_INT(pf_resolve_predict(&b, &pb), 0);
  CHECK(b.machine.dev.calibrated);
  CHECK_NEAR(b.machine.dev.gemm_eff, 0.70, 1e-6);
  double k = a.machine.dev.gemm_eff / 0.70; /* 0.803 / 0.70 */

  pf_stage_work w;
  CHECK_INT(pf_stage_work_compute(&a, 0, &w), 0);
  int M = a.plan.grad_accum;
  double expected = (M * (w.gemm_s * k + w.mem_s + w.launch_s) + w.optimizer_s) /
                    (M * (w.gemm_s + w.mem_s + w.launch_s) + w.optimizer_s);
  CHECK(pb.iteration_time_s > pa.iteration_time_s);
  CHECK_NEAR(pb.iteration_time_s / pa.iteration_time_s, expected, 1e-4);
  /* and the slowdown is substantial: GEMMs are at least 30 % of a 1.3B layer's time */
  CHECK(pb.iteration_time_s / pa.iteration_time_s > 1.0 + 0.3 * (k - 1));
  CHECK(pb.iteration_time_s / pa.iteration_time_s < k);
  /* MFU stays against the datasheet peak */
  CHECK_NEAR(pb.mfu / pa.mfu, pa.iteration_time_s / pb.iteration_time_s, 1e-6);
  return pf_check_done();
}
