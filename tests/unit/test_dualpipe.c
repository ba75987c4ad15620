/* test_dualpipe.c - DeepSeek-V3's DualPipe schedule (--schedule dualpipe; engine/pipeline.c, job/memory.c,
 * job/plan.c; arXiv 2412.19437 section 3.2.1 and Table 2; deepseek-ai/DualPipe):
 *  - it parses and prints as "dualpipe"; an odd PP, an odd number of microbatches or fewer than 2 x PP are
 *    refused naming --schedule dualpipe (dualpipe.py's asserts);
 *  - the closed form: M microbatches at the slowest rank's time, each rank holding stage s and stage P - 1 - s
 *    (its time per microbatch the mean of the two), plus (P/2 - 1)(F&B + B - 3W), F&B = F + B,
 *    W = min(GEMM time / 3, B / 2); against 1F1B's (P - 1)(F + B) it is smaller; in every engine;
 *  - memory: a rank holds its two stages' weights and gradients (the report's "Parameter 2x"), the
 *    optimizer state of one stage's worth (sharded over the copies), (PP + 1) / 2 microbatches' activations
 *    of each stage;
 *  - --engine full refuses it naming the schedule. */
#include "check.h"

#include "engine/engine.h"
#include "study/study.h"
#include "workload/workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void parse_and_checks(void) {
  pf_schedule s;
  int v;
  CHECK_INT(pf_schedule_parse("dualpipe", &s, &v), 0);
  CHECK(s == PF_SCHED_DUALPIPE && v == 1);
  CHECK(strcmp(pf_schedule_name(PF_SCHED_DUALPIPE), "dualpipe") == 0);
  CHECK(pf_schedule_parse("dual", &s, &v) == PF_EINVAL && strstr(pf_error_detail(), "dualpipe") != NULL);
  static pf_scenario sc;
  const int pps[] = {3, 4, 4}, gbs[] = {24, 6, 8}; /* odd PP; 6 microbatches < 2 x 4; then 8: fits the rules */
  for (int i = 0; i < 3; i++) {
    pf_scenario_init(&sc);
    CHECK_INT(pf_machine_load("deepseek-h800", &sc.machine), 0);
    CHECK_INT(pf_workload_builtin("gpt3-1.3b", &sc.workload), 0);
    sc.gpus = pps[i] == 3 ? 24 : 8;
    sc.plan.pp = pps[i];
    sc.plan.mbs = 1;
    sc.plan.gbs = gbs[i] * (pps[i] == 3 ? 8 : 2);
    sc.plan.schedule = PF_SCHED_DUALPIPE;
    int rc = pf_job_resolve(&sc);
    if (i < 2) {
      CHECK(rc < 0);
      CHECK(strstr(pf_error_detail(), "--schedule dualpipe") != NULL);
    } else {
      CHECK_INT(rc, 0);
      sc.engine = PF_ENGINE_FULL;
      CHECK(pf_job_resolve(&sc) == PF_EINVAL && strstr(pf_error_detail(), "dualpipe") != NULL);
    }
  }
}

static void closed_form(void) {
  static pf_scenario sc;
  pf_stage_work w[4];
  pf_pipe_net net;
  pf_pipeline_result r;
  const int P = 4, M = 8;
  for (int eng = 0; eng < 2; eng++) {
    pf_scenario_init(&sc);
    sc.plan.pp = P;
    sc.plan.dp = 1;
    sc.plan.grad_accum = M;
    sc.engine = eng ? PF_ENGINE_DES : PF_ENGINE_ANALYTIC; /* the closed form in both */
    memset(w, 0, sizeof w);
    for (int s = 0; s < P; s++) w[s].fwd_s = 1, w[s].bwd_s = 2, w[s].gemm_s = 3;
    pf_pipeline_net_free(P, &net);
    sc.plan.schedule = PF_SCHED_1F1B;
    CHECK_INT(pf_pipeline_run(&sc, w, &net, 0, &r), 0);
    double one = r.makespan_s;
    if (!eng) CHECK_NEAR(one, M * 3.0 + (P - 1) * 3.0, 1e-9);
    sc.plan.schedule = PF_SCHED_DUALPIPE;
    CHECK_INT(pf_pipeline_run(&sc, w, &net, 0, &r), 0);
    /* F 1, B 2, W = min(3 / 3, 2 / 2) = 1: (P/2 - 1)(F + B + B - 3 W) = 1 x (3 + 2 - 3) = 2 */
    CHECK_NEAR(r.makespan_s, M * 3.0 + 2.0, 1e-9);
    CHECK(r.makespan_s < one);
    CHECK_NEAR(r.stage_end_s[0], r.makespan_s, 1e-12);
    /* a heavy last stage is paired with the first: rank 0 runs (1 + 2 + 5 + 4) / 2 = 6 a microbatch */
    w[P - 1].fwd_s = 2, w[P - 1].bwd_s = 4, w[P - 1].gemm_s = 6, w[0].fwd_s = 1, w[0].bwd_s = 2, w[0].gemm_s = 3;
    CHECK_INT(pf_pipeline_run(&sc, w, &net, 0, &r), 0);
    double F = 1.5, B = 3, W = fmin(4.5 / 3, B / 2);
    CHECK_NEAR(r.makespan_s, M * 4.5 + (F + B + B - 3 * W), 1e-9);
    CHECK_NEAR(r.stage_busy_s[0], M * 4.5, 1e-9);
    sc.plan.schedule = PF_SCHED_1F1B;
    CHECK_INT(pf_pipeline_run(&sc, w, &net, 0, &r), 0);
    if (!eng) CHECK_NEAR(r.makespan_s, M * 6.0 + 3 * 3.0, 1e-9); /* the heavy stage sets 1F1B's pace */
  }
}

static void memory(void) {
  static pf_scenario sc;
  pf_memory a, b;
  for (int k = 0; k < 2; k++) {
    pf_scenario_init(&sc);
    CHECK_INT(pf_machine_load("deepseek-h800", &sc.machine), 0);
    CHECK_INT(pf_workload_builtin("gpt3-1.3b", &sc.workload), 0);
    sc.gpus = 16;
    sc.plan.pp = 4;
    sc.plan.mbs = 1;
    sc.plan.gbs = 32;
    sc.plan.dist_opt = true;
    sc.plan.schedule = k ? PF_SCHED_DUALPIPE : PF_SCHED_1F1B;
    CHECK_INT(pf_job_resolve(&sc), 0);
    pf_memory_estimate(&sc, k ? &b : &a);
  }
  /* 1F1B's worst is stage 0 (embedding, P microbatches); DualPipe's the rank of stages 0 and 3, which hold the
   * same parameters (GPT-3's tied output layer keeps an embedding copy on the last stage) */
  CHECK_NEAR(b.weights_B, 2 * a.weights_B, 1e-6 * a.weights_B);
  CHECK_NEAR(b.gradients_B, 2 * a.gradients_B, 1e-6 * a.gradients_B);
  CHECK_NEAR(b.optimizer_B, a.optimizer_B, 1e-6 * a.optimizer_B); /* one stage's worth, sharded over the copies */
  CHECK_NEAR(b.inflight_microbatches, 5.0, 1e-12); /* PP + 1 chunks a rank */
}

int main(void) {
  parse_and_checks();
  closed_form();
  memory();
  printf("%d passed, %d failed\n", pf_check_pass, pf_check_fail);
  return pf_check_fail != 0;
}
