/* test_job.c - the model reads a resolved job and never writes it
 * (study/resolve.c, study/predict.c): pf_predict() leaves the caller's
 * scenario byte for byte as it was, also when a power cap makes it price the
 * iteration twice; it refuses a scenario pf_job_resolve() has not resolved;
 * resolving twice changes nothing; a calibration overlay is read where the
 * scenario is built, and a mismatch applied with --force-calibration reaches
 * every prediction as its first warning. */
#include "check.h"

#include "core/core.h"
#include "machine/machine.h"
#include "study/study.h"

#include <stdlib.h>
#include <string.h>

static int build(pf_scenario *sc, const char *machine) {
  pf_scenario_init(sc);
  if (pf_machine_load(machine, &sc->machine) < 0 || pf_workload_builtin("gpt3-1.3b", &sc->workload) < 0) {
    fprintf(stderr, "%s\n", pf_error_detail());
    return -1;
  }
  sc->nodes = 1;
  sc->plan.tp = 2;
  sc->plan.pp = 2;
  sc->plan.gbs = 16;
  sc->host_mode = PF_HOST_GRAPHS; /* the GPU's time alone: the cap below must bind (Megatron's Python per layer
                                     would leave this small TP 2 job host-bound, under it) */
  return 0;
}

int main(void) {
  const char *src = getenv("PF_SRC");
  char mach[1024], cal[1024];
  snprintf(mach, sizeof mach, "%s/tests/fixtures/machines/hgx-h100.cfg", src ? src : ".");
  snprintf(cal, sizeof cal, "%s/tests/fixtures/calibration/h100-sxm-80-gemm70.json", src ? src : ".");
  static pf_scenario sc, before, again;
  static pf_prediction p, q;
  if (build(&sc, mach) < 0) return 1;

  /* not resolved: the plan's free fields (dp, grad_accum, gpus) are not derived */
  CHECK(pf_predict(&sc, &p) == PF_EINVAL);
  CHECK(strstr(pf_error_detail(), "pf_job_resolve") != NULL);

  CHECK_INT(pf_job_resolve(&sc), 0);
  CHECK(sc.plan.dp > 0 && sc.plan.grad_accum > 0 && sc.gpus > 0);
  again = sc;
  CHECK_INT(pf_job_resolve(&again), 0);
  CHECK(memcmp(&again, &sc, sizeof sc) == 0); /* idempotent */

  /* read-only, at full clock and under a cap low enough to make it price the iteration twice */
  before = sc;
  CHECK_INT(pf_predict(&sc, &p), 0);
  CHECK(memcmp(&before, &sc, sizeof sc) == 0);
  CHECK_NEAR(p.energy.clock_ratio, 1.0, 0);
  sc.power_cap_W = 0.5 * sc.machine.dev.cap_W;
  CHECK_INT(pf_job_resolve(&sc), 0);
  before = sc;
  CHECK_INT(pf_predict(&sc, &q), 0);
  CHECK(memcmp(&before, &sc, sizeof sc) == 0);
  CHECK(q.energy.clock_ratio < 1.0);
  CHECK(q.iteration_time_s > p.iteration_time_s);
  /* the same job twice: the same answer */
  CHECK_INT(pf_predict(&sc, &p), 0);
  CHECK(memcmp(&p, &q, sizeof p) == 0);

  /* the overlay, read once where the scenario is built */
  if (build(&sc, mach) < 0) return 1;
  snprintf(sc.calibration, sizeof sc.calibration, "%s", cal);
  CHECK_INT(pf_scenario_apply_calibration(&sc), 0);
  CHECK(sc.machine.dev.calibrated);
  CHECK_STR(sc.calibration_note, "");
  CHECK_INT(pf_resolve_predict(&sc, &p), 0);
  /* the H100 file on Discoverer+ (H200, the same rates class): refused, or applied with a note every prediction repeats */
  snprintf(mach, sizeof mach, "%s/machines/discoverer-gpu.cfg", src ? src : ".");
  if (build(&sc, mach) < 0) return 1;
  sc.plan.tp = 1;
  snprintf(sc.calibration, sizeof sc.calibration, "%s", cal);
  CHECK(pf_scenario_apply_calibration(&sc) == PF_EINVAL);
  CHECK(strstr(pf_error_detail(), "--force-calibration") != NULL);
  if (build(&sc, mach) < 0) return 1;
  sc.plan.tp = 1;
  snprintf(sc.calibration, sizeof sc.calibration, "%s", cal);
  sc.calibration_force = true;
  CHECK_INT(pf_scenario_apply_calibration(&sc), 0);
  CHECK(strstr(sc.calibration_note, "applied with --force-calibration") != NULL);
  CHECK_INT(pf_resolve_predict(&sc, &p), 0);
  CHECK(p.nwarnings >= 1);
  CHECK_STR(p.warnings[0], sc.calibration_note);
  return pf_check_done();
}
