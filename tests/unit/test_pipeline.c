/* test_pipeline.c - the schedules, and the SimGrid pipeline DES against the
 * textbook makespans when transfers are free:
 *   1F1B and GPipe: (M + P - 1)(t_f + t_b)
 *   interleaved with V chunks: M (t_f + t_b) + (P - 1)(t_f + t_b) / V
 * (Narayanan et al. SC21, section 2.2), and the closed-form engine; and Megatron's blocking 1F1B P2P,
 * whose exchanges stay in the steady-state cycle (test_blocking_p2p); and the closed form's stage ends (the
 * cooldown's gradient chain, where the DP collectives start) against the DES's (test_stage_ends). */
#include "check.h"

#include "engine/engine.h"

#include <stdlib.h>
#include <string.h>

static void setup(pf_scenario *sc, int P, int M, pf_schedule sched, int V, pf_stage_work *w, pf_pipe_net *net,
                  double tf, double tb) {
  pf_scenario_init(sc);
  sc->plan.pp = P;
  sc->plan.dp = 1;
  sc->plan.grad_accum = M;
  sc->plan.schedule = sched;
  sc->plan.vstages = V;
  memset(w, 0, (size_t)P * sizeof *w);
  for (int s = 0; s < P; s++) { w[s].fwd_s = tf; w[s].bwd_s = tb; w[s].p2p_bytes = 1e6; }
  memset(net, 0, sizeof *net);
  for (int s = 0; s < P; s++) { net->bw_Bps[s] = 1e18; net->lat_s[s] = 0; }
}

static void test_schedules(void) {
  pf_plan p = {0};
  p.pp = 4; p.grad_accum = 8; p.vstages = 1; p.schedule = PF_SCHED_1F1B;
  pf_sched_op ops[64];
  int n = pf_pipeline_schedule(&p, 0, ops);
  CHECK_INT(n, 16);
  CHECK(ops[0].kind == 'F' && ops[1].kind == 'F' && ops[2].kind == 'F' && ops[3].kind == 'F' && ops[4].kind == 'B');
  CHECK(ops[n - 1].kind == 'B' && ops[n - 1].mb == 7);
  n = pf_pipeline_schedule(&p, 3, ops); /* last stage: strict alternation */
  CHECK(ops[0].kind == 'F' && ops[1].kind == 'B' && ops[1].mb == 0);
  p.schedule = PF_SCHED_INTERLEAVED; p.vstages = 2;
  n = pf_pipeline_schedule(&p, 1, ops);
  CHECK_INT(n, 32);
  int f = 0, b = 0, c1 = 0;
  for (int i = 0; i < n; i++) { f += ops[i].kind == 'F'; b += ops[i].kind == 'B'; c1 += ops[i].chunk == 1; }
  CHECK_INT(f, 16);
  CHECK_INT(b, 16);
  CHECK_INT(c1, 16);
}

static void test_des(void) {
  pf_scenario sc;
  pf_stage_work w[8];
  pf_pipe_net *net = malloc(sizeof *net);
  pf_pipeline_result *r = malloc(sizeof *r);
  double tf = 0.010, tb = 0.020;
  int P = 8, M = 32;
  setup(&sc, P, M, PF_SCHED_1F1B, 1, w, net, tf, tb);
  CHECK(pf_pipeline_run(&sc, w, net, 1, r) == 0);
  CHECK_NEAR(r->makespan_s, (M + P - 1) * (tf + tb), 1e-9);
  CHECK_INT(r->ntrace, 2 * M * P + 2 * M * (P - 1)); /* F and B per stage, plus the sends */
  free(r->trace);
  CHECK_NEAR(r->stage_busy_s[3], M * (tf + tb), 1e-9);
  CHECK(r->stage_end_s[P - 1] < r->stage_end_s[0]); /* the last stage drains first */
  sc.engine = PF_ENGINE_ANALYTIC;
  CHECK(pf_pipeline_run(&sc, w, net, 0, r) == 0);
  CHECK_NEAR(r->makespan_s, (M + P - 1) * (tf + tb), 1e-9);

  setup(&sc, P, M, PF_SCHED_GPIPE, 1, w, net, tf, tb);
  CHECK(pf_pipeline_run(&sc, w, net, 0, r) == 0);
  CHECK_NEAR(r->makespan_s, (M + P - 1) * (tf + tb), 1e-9);

  setup(&sc, 4, 16, PF_SCHED_INTERLEAVED, 2, w, net, tf, tb);
  CHECK(pf_pipeline_run(&sc, w, net, 0, r) == 0);
  CHECK_NEAR(r->makespan_s, 16 * (tf + tb) + 3 * (tf + tb) / 2, 1e-9);

  /* transfers cost time: slower links never shorten the pipeline */
  setup(&sc, P, M, PF_SCHED_1F1B, 1, w, net, tf, tb);
  double last = 0;
  for (int k = 0; k < 3; k++) {
    for (int s = 0; s < P; s++) { net->bw_Bps[s] = 1e11 / (1 << (3 * k)); net->lat_s[s] = 5e-6; }
    CHECK(pf_pipeline_run(&sc, w, net, 0, r) == 0);
    CHECK(r->makespan_s > (M + P - 1) * (tf + tb));
    CHECK(r->makespan_s >= last);
    last = r->makespan_s;
  }
  free(net);
  free(r);
}

/* Megatron's non-interleaved 1F1B waits for every P2P exchange (pipeline.h pf_pipeline_blocking_p2p,
 * schedules.py / p2p_communication.py at core_v0.12.0): in the steady state a middle stage's cycle is
 * t_f + t_b + two hops (one exchange with each neighbour), so each further microbatch costs that much in
 * both engines; GPipe's eager sends hide the hops after the fill (one microbatch costs t_f + t_b), as do
 * the interleaved schedule's overlapped sends. */
static double makespan(pf_scenario *sc, pf_stage_work *w, pf_pipe_net *net, pf_pipeline_result *r, int M) {
  sc->plan.grad_accum = M;
  CHECK(pf_pipeline_run(sc, w, net, 0, r) == 0);
  return r->makespan_s;
}

static void test_blocking_p2p(void) {
  pf_scenario sc;
  pf_stage_work w[8];
  pf_pipe_net *net = malloc(sizeof *net);
  pf_pipeline_result *r = malloc(sizeof *r);
  double tf = 0.010, tb = 0.020, h = 0.001;
  int P = 8, M = 32;
  setup(&sc, P, M, PF_SCHED_1F1B, 1, w, net, tf, tb);
  for (int s = 0; s < P; s++) net->lat_s[s] = h;
  CHECK(pf_pipeline_blocking_p2p(&sc.plan));
  for (int e = 0; e < 2; e++) {
    sc.engine = e ? PF_ENGINE_ANALYTIC : PF_ENGINE_DES;
    double a = makespan(&sc, w, net, r, M), b = makespan(&sc, w, net, r, M + 8);
    CHECK_NEAR((b - a) / 8, tf + tb + 2 * h, 1e-6); /* SimGrid rounds event times to ns */
    CHECK(a >= (M + P - 1) * (tf + tb) + M * 2 * h);
  }
  sc.engine = PF_ENGINE_DES;
  setup(&sc, P, M, PF_SCHED_GPIPE, 1, w, net, tf, tb);
  for (int s = 0; s < P; s++) net->lat_s[s] = h;
  CHECK(!pf_pipeline_blocking_p2p(&sc.plan));
  CHECK_NEAR((makespan(&sc, w, net, r, M + 8) - makespan(&sc, w, net, r, M)) / 8, tf + tb, 1e-6);
  setup(&sc, 4, 16, PF_SCHED_INTERLEAVED, 2, w, net, tf, tb);
  CHECK(!pf_pipeline_blocking_p2p(&sc.plan));
  sc.plan.pp = 1;
  sc.plan.schedule = PF_SCHED_1F1B;
  CHECK(!pf_pipeline_blocking_p2p(&sc.plan)); /* one stage: nothing to exchange */
  free(net);
  free(r);
}

/* Equal stages: the closed form ends stage s one chunk-0 backward and one hop before stage s - 1, and starts
 * the last microbatch's backward (V - 1) P + 1 chunk backwards before the stage's end under the interleaved
 * schedule (Megatron's order of virtual microbatches), one backward under 1F1B: as the DES, to its ns events,
 * each counted back from the engine's own makespan (with blocking hops the closed form's fill is 3 ms longer here).
 * Were every stage to end at the makespan (the closed form before), stage P - 1 would be off by (P - 1) t_b. */
static void test_stage_ends(void) {
  pf_scenario sc;
  pf_stage_work w[8];
  pf_pipe_net *net = malloc(sizeof *net);
  pf_pipeline_result *des = malloc(sizeof *des), *cf = malloc(sizeof *cf);
  struct { pf_schedule sched; int V; double h; } k[] = {{PF_SCHED_1F1B, 1, 0.001}, {PF_SCHED_1F1B, 1, 0},
                                                       {PF_SCHED_INTERLEAVED, 2, 0}, {PF_SCHED_INTERLEAVED, 4, 0},
                                                       {PF_SCHED_INTERLEAVED, 2, 0.0005}, {PF_SCHED_INTERLEAVED, 4, 0.001}};
  int P = 8, M = 32;
  for (int i = 0; i < (int)(sizeof k / sizeof *k); i++) {
    setup(&sc, P, M, k[i].sched, k[i].V, w, net, 0.010, 0.020);
    for (int s = 0; s < P; s++) net->lat_s[s] = k[i].h;
    sc.engine = PF_ENGINE_DES;
    CHECK(pf_pipeline_run(&sc, w, net, 0, des) == 0);
    sc.engine = PF_ENGINE_ANALYTIC;
    CHECK(pf_pipeline_run(&sc, w, net, 0, cf) == 0);
    /* the interleaved fill crosses all 2 (P V - 1) virtual-stage boundaries (pipeline.c header): exact with hops
     * shorter than a chunk; blocking 1F1B's fill differs a little with hops */
    if (k[i].h == 0 || k[i].sched == PF_SCHED_INTERLEAVED) CHECK_NEAR(cf->makespan_s, des->makespan_s, 1e-6);
    if (k[i].h > 0 && k[i].sched == PF_SCHED_INTERLEAVED) {
      pf_pipe_net *free_net = calloc(1, sizeof *free_net); /* free transfers: the hops' share */
      pf_pipeline_result *fr = malloc(sizeof *fr);
      for (int s = 0; s < P; s++) free_net->bw_Bps[s] = 1e18;
      CHECK(pf_pipeline_run(&sc, w, free_net, 0, fr) == 0);
      CHECK_NEAR(des->makespan_s - fr->makespan_s, 2 * (P * k[i].V - 1) * k[i].h, 1e-5); /* SimGrid's ns events */
      free(free_net);
      free(fr);
    }
    for (int s = 0; s < P; s++) { /* from each engine's own makespan */
      CHECK_NEAR(cf->makespan_s - cf->stage_end_s[s], des->makespan_s - des->stage_end_s[s], 1e-6);
      CHECK_NEAR(cf->makespan_s - cf->stage_first_bwd_s[s], des->makespan_s - des->stage_first_bwd_s[s], 1e-6);
    }
    CHECK(des->stage_end_s[P - 1] < des->stage_end_s[0] - (P - 1) * 0.020 / k[i].V + 1e-6);
  }
  free(net);
  free(des);
  free(cf);
}

int main(void) {
  test_schedules();
  test_des();
  test_blocking_p2p();
  test_stage_ends();
  return pf_check_done();
}
