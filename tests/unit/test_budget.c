/* test_budget.c - the allocation arithmetic of budget.c checked by hand:
 * checkpoint size and write time, Young's interval, failures, jobs under the
 * wall-time limit, partial-node billing. */
#include "check.h"
#include "study/study.h"
#include "core/core.h"

int main(void) {
  static pf_scenario sc;
  static pf_prediction p;
  pf_scenario_init(&sc);
  if (pf_machine_load("lumi-g", &sc.machine) < 0 || pf_workload_builtin("gpt3-1.3b", &sc.workload) < 0) {
    fprintf(stderr, "%s\n", pf_error_detail());
    return 1;
  }
  sc.nodes = 4;
  sc.gpus = 32;
  sc.plan.tp = sc.plan.pp = sc.plan.cp = 1;
  sc.plan.dp = 32;
  sc.plan.gbs = 512;
  p.iteration_time_s = 2.0;
  p.energy.facility_J = 1e6;

  pf_budget_opts o;
  pf_budget_opts_init(&o);
  o.tokens = 512.0 * 2048 * 1000; /* 1000 iterations */
  o.fs_bw_Bps = 10e9;
  o.gpu_mtbf_s = 0; /* no failures */
  o.startup_s = 0;
  o.walltime_s = 3600; /* 1 h jobs */
  pf_budget b;
  CHECK_INT(pf_budget_compute(&sc, &p, &o, &b), 0);
  CHECK_NEAR(b.iterations, 1000, 0);
  CHECK_NEAR(b.compute_s, 2000, 1e-12);
  double params = pf_workload_params(&sc.workload, 1);
  CHECK_NEAR(b.checkpoint_B, 14 * params, 1e-12);
  CHECK_NEAR(b.checkpoint_s, 14 * params / 10e9, 1e-12);
  /* without failures the interval is the job: one checkpoint per job */
  CHECK_NEAR(b.interval_s, 3600, 1e-12);
  CHECK_NEAR(b.wall_s, 2000 * (1 + b.checkpoint_s / 3600), 1e-12);
  CHECK_NEAR(b.jobs, 1, 0);
  CHECK_NEAR(b.node_h, 4 * b.wall_s / 3600, 1e-12);
  CHECK_NEAR(b.units, 4 * b.node_h, 1e-12); /* LUMI: 4 GPU-hours per node-hour */

  /* failures: Young's interval sqrt(2 d M) with M = GPU MTBF / GPUs, and the lost work */
  o.gpu_mtbf_s = 32 * 1e6; /* system MTBF 1e6 s */
  o.restart_s = 100;
  o.walltime_s = 1e9;
  o.tokens *= 1000; /* long enough for several failures */
  CHECK_INT(pf_budget_compute(&sc, &p, &o, &b), 0);
  double d = b.checkpoint_s, M = 1e6, tau = sqrt(2 * d * M);
  CHECK_NEAR(b.mtbf_s, M, 1e-12);
  CHECK_NEAR(b.interval_s, tau, 1e-12);
  double T = b.compute_s * (1 + d / tau) / (1 - (tau / 2 + 100) / M);
  CHECK_NEAR(b.wall_s, T, 1e-9);
  CHECK_NEAR(b.failures, T / M, 1e-9);
  CHECK(!b.failures_dominate);

  /* jobs under a limit, each with its start-up */
  o.gpu_mtbf_s = 0;
  o.walltime_s = 24 * 3600;
  o.startup_s = 600;
  CHECK_INT(pf_budget_compute(&sc, &p, &o, &b), 0);
  double work = b.compute_s * (1 + b.checkpoint_s / (24 * 3600 - 600));
  CHECK_NEAR(b.jobs, ceil(work / (24 * 3600 - 600)), 0);
  CHECK_NEAR(b.wall_s, work + b.jobs * 600, 1e-9);

  /* a partial node: billed whole on LUMI (standard-g), per device where the site says so */
  sc.nodes = 1;
  sc.gpus = 4;
  CHECK_INT(pf_budget_compute(&sc, &p, &o, &b), 0);
  CHECK_NEAR(b.billed_node_h, b.wall_s / 3600, 1e-12);
  sc.machine.billing_per_device = true;
  CHECK_INT(pf_budget_compute(&sc, &p, &o, &b), 0);
  CHECK_NEAR(b.billed_node_h, 0.5 * b.wall_s / 3600, 1e-12);

  /* no run length is an error */
  o.tokens = 0;
  CHECK(pf_budget_compute(&sc, &p, &o, &b) < 0);
  printf("%d passed, %d failed\n", pf_check_pass, pf_check_fail);
  return pf_check_fail != 0;
}
