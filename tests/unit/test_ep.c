/* test_ep.c - expert parallelism as Megatron-Core folds it (job/plan.c, compute/moelayer.c, job/memory.c;
 * issue 29 item 2):
 *  - EP x ETP is folded over TP x CP x DP, so EP may exceed DP; EP not dividing the experts, EP x ETP not
 *    dividing TP x CP x DP, and EP on a dense model are refused naming the option;
 *  - balanced, a GPU's experts run the same rows whatever EP (fewer, larger grouped GEMMs): the experts'
 *    FLOPs per GPU do not change with EP, their time does not grow;
 *  - with --moe-imbalance the busiest rank's experts take more than the balanced share; --moe-rank-imbalance L
 *    gives that rank L times the balanced rows: its all-to-alls and its experts' GEMMs take about L times as
 *    long and it keeps more activations; L above what a rank can receive (min(topk, E / EP) copies of a
 *    token against topk / EP) is refused naming both;
 *  - the routed experts' weights and gradients per GPU fall as 1 / EP, the rest stays;
 *  - on deepseek-h800 (8 GPUs a node), EP 8 inside a node and EP 16 across two: the EP groups are the
 *    consecutive ranks Megatron folds them from, and the stage's all-to-all time is the MoE layers' dispatch
 *    and combine as pf_comm_alltoall prices them over those groups, larger across nodes;
 *  - tune searches EP (powers of two dividing the experts) and, at TP 1 PP 1 on 16 H800s, where EP 1 does
 *    not fit, picks an EP > 1; with --ep 1 fixed nothing fits (PF_ENOFIT);
 *  - the gradients in two groups (engine/dpsync.c, comm/epa2a.c pf_edp_groups; Megatron-Core's DDP keeps the
 *    routed experts in expert_parallel_buffers over intra_expt_dp_group): the EDP groups are the ranks at one
 *    (ETP, EP) place of each EP x ETP block (EP 8 over DP 32: r, r + 8, r + 16, r + 24); a stage's
 *    expert_params are the routed experts' over EP x ETP; with the distributed optimizer at PP 1 the DP time is
 *    the dense reduce-scatter and all-gather over DP x CP plus the experts' over EDP, each priced alone; at
 *    EDP 4 over four nodes the experts' part costs more than their bytes did in one ring over DP 32 (whose
 *    inter-node hops carry a node's data once); at EDP 1 the experts' gradients are not reduced; the full engine
 *    replays the same collectives (within 15 %). */
#include "check.h"
#include "comm/comm.h"
#include "compute/compute.h"
#include "core/core.h"
#include "study/study.h"
#include "workload/workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void setup(pf_scenario *sc, const char *model, int gpus, int tp, int ep) {
  pf_scenario_init(sc);
  CHECK_INT(pf_machine_load("deepseek-h800", &sc->machine), 0);
  CHECK_INT(pf_workload_builtin(model, &sc->workload), 0);
  sc->gpus = gpus;
  sc->plan.tp = tp;
  sc->plan.ep = ep;
  sc->plan.mbs = 1;
  sc->plan.gbs = 2 * gpus / tp;
  sc->plan.sp = tp > 1;
  sc->plan.dist_opt = true;
  sc->plan.flash_attn = true;
}

static void refusals(void) {
  static pf_scenario sc;
  setup(&sc, "deepseek-v2-lite", 16, 2, 16); /* EP 16 x ETP 2 > TP 2 x DP 8 */
  CHECK_INT(pf_plan_check(&sc), PF_EPLAN);
  CHECK(strstr(pf_error_detail(), "--ep 16 x --etp 2") != NULL);
  setup(&sc, "deepseek-v2-lite", 16, 2, 16);
  sc.plan.etp = 1; /* EP 16 x ETP 1 over TP 2 x DP 8: EP exceeds DP, folded */
  CHECK_INT(pf_plan_check(&sc), 0);
  CHECK_INT(pf_plan_edp(&sc.plan), 1);
  setup(&sc, "mixtral-8x7b", 16, 1, 16); /* 8 experts */
  CHECK_INT(pf_plan_check(&sc), PF_EPLAN);
  CHECK(strstr(pf_error_detail(), "--ep 16 must divide the 8 experts") != NULL);
  setup(&sc, "llama2-7b", 16, 1, 2);
  CHECK_INT(pf_plan_check(&sc), PF_EPLAN);
  CHECK(strstr(pf_error_detail(), "no experts") != NULL);
}

static void compute(void) {
  static pf_scenario sc;
  pf_stage_work w1, w8;
  setup(&sc, "deepseek-v2-lite", 16, 1, 1);
  CHECK_INT(pf_plan_check(&sc), 0);
  CHECK_INT(pf_stage_work_compute(&sc, 0, &w1), 0);
  setup(&sc, "deepseek-v2-lite", 16, 1, 8);
  CHECK_INT(pf_plan_check(&sc), 0);
  CHECK_INT(pf_stage_work_compute(&sc, 0, &w8), 0);
  CHECK_NEAR(w8.fwd_flops, w1.fwd_flops, 1e-9);
  /* the parameters a GPU holds (its gradients reduced, its optimizer step): the experts' 7/8 gone */
  const pf_workload *wl = &sc.workload;
  double Pe = pf_workload_moe_layers_in(wl, 0, wl->layers) * pf_workload_routed_expert_params(wl);
  CHECK_NEAR(w1.params - w8.params, Pe * 7.0 / 8.0, 1e-9);
  CHECK(w8.moe.experts <= w1.moe.experts && w8.moe.experts > 0.5 * w1.moe.experts);
  sc.workload.expert_imbalance = 2.0; /* the busiest expert takes twice its share: that rank sets the pace */
  pf_stage_work wi;
  CHECK_INT(pf_stage_work_compute(&sc, 0, &wi), 0);
  CHECK(wi.moe.experts > 1.05 * w8.moe.experts);
}

static void memory(void) {
  static pf_scenario sc;
  pf_memory m1, m8;
  setup(&sc, "deepseek-v2-lite", 16, 1, 1);
  CHECK_INT(pf_plan_check(&sc), 0);
  pf_memory_estimate(&sc, &m1);
  setup(&sc, "deepseek-v2-lite", 16, 1, 8);
  CHECK_INT(pf_plan_check(&sc), 0);
  pf_memory_estimate(&sc, &m8);
  const pf_workload *w = &sc.workload;
  double Pe = pf_workload_moe_layers_in(w, 0, w->layers) * pf_workload_routed_expert_params(w);
  CHECK(Pe > 0.5 * pf_workload_params(w, 1));
  /* bf16 weights and fp32 gradients: the experts' 7/8 gone at EP 8 */
  CHECK_NEAR(m1.weights_B - m8.weights_B, 2.0 * Pe * 7.0 / 8.0, 1e-9);
  CHECK_NEAR(m1.gradients_B - m8.gradients_B, 4.0 * Pe * 7.0 / 8.0, 1e-9);
  /* the distributed optimizer: experts over EDP 2, the rest over DP 16, i.e. every parameter over 16 */
  CHECK_NEAR(m8.optimizer_B, m1.optimizer_B, 1e-9);
}

/* stage 0's work with its all-to-alls, and the memory of a GPU */
static void stage0(pf_scenario *sc, pf_stage_work *w, pf_memory *m) {
  pf_stage_comm o;
  pf_comm c;
  CHECK_INT(pf_plan_check(sc), 0);
  CHECK_INT(pf_comm_init(sc, &c), 0);
  CHECK_INT(pf_stage_work_compute(sc, 0, w), 0);
  CHECK_INT(pf_comm_stage(&c, 0, w, &o), 0);
  pf_comm_free(&c);
  pf_memory_estimate(sc, m);
}

static void rank_load(void) {
  static pf_scenario sc;
  setup(&sc, "deepseek-v2-lite", 16, 1, 8); /* 64 experts, top-6: 8 a rank */
  pf_workload *wl = &sc.workload;
  CHECK_NEAR(pf_workload_rank_load(wl, 8), 1.0, 1e-12);
  wl->expert_imbalance = 2.0; /* the busiest expert twice its share, its 7 rank-mates share the rest */
  CHECK_NEAR(pf_workload_rank_load(wl, 8), (2.0 + 7.0 * 62.0 / 63.0) / 8.0, 1e-12);
  wl->expert_imbalance = 0;
  wl->rank_imbalance = 1.5;
  CHECK_NEAR(pf_workload_rank_load(wl, 8), 1.5, 1e-12);
  CHECK_NEAR(pf_workload_rank_load(wl, 1), 1.0, 1e-12); /* at EP 1 one rank holds every expert */
  wl->capacity_factor = 1.0; /* padded to capacity: no busiest rank */
  CHECK_NEAR(pf_workload_rank_load(wl, 8), 1.0, 1e-12);
  wl->capacity_factor = 0;
  pf_stage_work w1, wl5;
  pf_memory m1, m5;
  wl->rank_imbalance = 0;
  stage0(&sc, &w1, &m1);
  wl->rank_imbalance = 1.5;
  stage0(&sc, &wl5, &m5);
  /* the whole group waits for the busiest rank: its bytes 1.5 x, its time a little less (fixed latencies) */
  CHECK(wl5.fwd_ep_s > 1.3 * w1.fwd_ep_s && wl5.fwd_ep_s <= 1.5 * w1.fwd_ep_s * (1 + 1e-9));
  /* its experts' GEMMs run 1.5 x the rows, a little faster a row when larger */
  CHECK(wl5.moe.experts > 1.3 * w1.moe.experts && wl5.moe.experts <= 1.5 * w1.moe.experts * (1 + 1e-9));
  CHECK(m5.activations_B > m1.activations_B);
  CHECK_NEAR(m5.weights_B, m1.weights_B, 1e-9);
  wl->rank_imbalance = 8.0; /* all 6 copies of every token of the group: 6 x 8 / 6 */
  CHECK_INT(pf_plan_check(&sc), 0);
  wl->rank_imbalance = 8.5;
  CHECK_INT(pf_plan_check(&sc), PF_EINVAL);
  CHECK(strstr(pf_error_detail(), "--moe-rank-imbalance 8.5: at --ep 8 a rank holds 8 of the 64 experts and takes "
                                  "at most 6 of a token's 6 copies, 8 times") != NULL);
}

/* the a2a of one stage of EP ep on 16 GPUs (TP 1, DP 16) against pf_comm_alltoall on the same groups */
static double a2a(int ep) {
  static pf_scenario sc;
  setup(&sc, "deepseek-v2-lite", 16, 1, ep);
  CHECK_INT(pf_plan_check(&sc), 0);
  pf_comm c;
  CHECK_INT(pf_comm_init(&sc, &c), 0);
  pf_stage_work w;
  pf_stage_comm o;
  CHECK_INT(pf_stage_work_compute(&sc, 0, &w), 0);
  CHECK_INT(pf_comm_stage(&c, 0, &w, &o), 0);
  int *g, ng;
  CHECK_INT(pf_comm_ep_groups(&sc, 0, &g, &ng), 0);
  CHECK_INT(ng, 16 / ep);
  for (int i = 0; i < 16; i++) CHECK_INT(g[i], i); /* consecutive ranks: group 0 is 0..ep-1 */
  const pf_workload *wl = &sc.workload;
  double bytes = 4096.0 * wl->topk * wl->hidden * 2; /* mbs 1 x seq 4096 tokens, top-k copies, bf16 */
  pf_a2a_req rq = {.groups = g, .ngroups = ng, .p = ep, .bytes = bytes, .topk = wl->topk, .lib = PF_A2A_NCCL};
  pf_a2a_result r;
  CHECK_INT(pf_comm_alltoall(&c, &rq, &r), 0);
  CHECK_INT(r.nodes, ep / 8);
  int nmoe = pf_workload_moe_layers_in(wl, 0, wl->layers);
  CHECK_NEAR(w.fwd_ep_s, nmoe * 2 * r.time_s, 1e-9); /* dispatch + combine, both bf16 */
  CHECK_NEAR(w.bwd_ep_s, nmoe * 2 * r.time_s, 1e-9);
  CHECK(w.fwd_tp_s >= w.fwd_ep_s); /* on the critical path with the TP collectives */
  free(g);
  pf_comm_free(&c);
  return w.fwd_ep_s;
}

static void tune(void) {
  static pf_scenario sc;
  setup(&sc, "deepseek-v2-lite", 16, 1, 1);
  sc.plan.gbs = 64;
  pf_tune_config o = {.fixed = PF_FIX_TP | PF_FIX_PP | PF_FIX_CP, .objective = PF_OBJ_TIME, .top = 3, .shard = 1,
                      .nshards = 1, .jobs = 1};
  pf_tune_result r;
  CHECK_INT(pf_tune(&sc, &o, &r), 0);
  CHECK(r.nfinal > 0 && r.final[0].plan.ep > 1 && r.final[0].breakdown_s.ep_a2a > 0);
  pf_tune_result_free(&r);
  o.fixed |= PF_FIX_EP | PF_FIX_DIST_OPT; /* EP 1 at ZeRO-1: ZeRO-3 (tune's sharded plans) would fit it */
  CHECK_INT(pf_tune(&sc, &o, &r), PF_ENOFIT);
  pf_tune_result_free(&r);
}

/* The expert-data-parallel synchronisation (engine/dpsync.c): DeepSeek-V2-Lite on 32 H800s, analytic. */
static void setup_dp(pf_scenario *sc, int gpus, int ep) {
  setup(sc, "deepseek-v2-lite", gpus, 1, ep);
  sc->engine = PF_ENGINE_ANALYTIC;
}

static void edp_groups(void) {
  static pf_scenario sc;
  setup_dp(&sc, 32, 8);
  CHECK_INT(pf_job_resolve(&sc), 0);
  CHECK_INT(pf_plan_edp(&sc.plan), 4);
  int *G, ng, size;
  CHECK_INT(pf_edp_groups(&sc, 0, &G, &ng, &size), 0);
  CHECK_INT(ng, 8);
  CHECK_INT(size, 4);
  for (int g = 0; g < ng; g++)
    for (int k = 0; k < size; k++) CHECK_INT(G[g * size + k], g + 8 * k);
  free(G);
}

/* one collective over the DP (expert 0) or EDP (expert 1) groups of stage 0, alone */
static double alone(const pf_scenario *sc, const pf_comm *c, int expert, pf_coll_kind kind, double bytes) {
  pf_coll_pattern pat;
  pf_coll_result r;
  int rc = expert ? pf_edp_collective_pattern(c, kind, bytes, 0, &pat, &r)
                  : pf_dp_collective_pattern(c, kind, bytes, 0, &pat, &r);
  CHECK_INT(rc, 0);
  pf_coll_pattern_free(&pat);
  return r.time_s;
}

static void two_groups(void) {
  static pf_scenario sc;
  static pf_prediction p;
  for (int ep = 8; ep <= 32; ep *= 4) { /* EDP 4, then EDP 1 */
    setup_dp(&sc, 32, ep);
    CHECK_INT(pf_job_resolve(&sc), 0);
    pf_stage_work w;
    CHECK_INT(pf_stage_work_compute(&sc, 0, &w), 0);
    const pf_workload *wl = &sc.workload;
    double routed = pf_workload_moe_layers_in(wl, 0, wl->layers) * pf_workload_routed_expert_params(wl);
    CHECK(routed > 0);
    CHECK_NEAR(w.expert_params, routed / ep, 1e-6 * w.expert_params);
    CHECK(w.expert_params < w.params);
    CHECK_INT(pf_predict(&sc, &p), 0);
    pf_comm c;
    CHECK_INT(pf_comm_init(&sc, &c), 0);
    double dense = w.params - w.expert_params, x = w.expert_params;
    /* bf16 training: fp32 gradients reduce-scattered, bf16 parameters all-gathered */
    double want = alone(&sc, &c, 0, PF_REDUCE_SCATTER, 4 * dense) + alone(&sc, &c, 0, PF_ALLGATHER, 2 * dense);
    double xs = ep == 8 ? alone(&sc, &c, 1, PF_REDUCE_SCATTER, 4 * x) + alone(&sc, &c, 1, PF_ALLGATHER, 2 * x) : 0;
    double one = alone(&sc, &c, 0, PF_REDUCE_SCATTER, 4 * w.params) + alone(&sc, &c, 0, PF_ALLGATHER, 2 * w.params);
    pf_comm_free(&c);
    CHECK_NEAR(p.dp_comm_s, want + xs, 0.01 * (want + xs));
    CHECK_NEAR(p.comm.dp_expert_s, xs, 0.01 * xs + 1e-12);
    CHECK_INT(p.comm.edp, 32 / ep);
    if (ep == 32) CHECK(p.dp_comm_s < one); /* EDP 1: the experts' gradients are not reduced */
    /* EDP 4 (ranks r, r + 8, r + 16, r + 24: four nodes, each rank's NIC): the experts' bytes cost more than
     * their share of one ring over the 32 ranks, whose inter-node hops carry a node's data once (8 GPUs of
     * a node hold different experts: there is nothing to combine inside the node) */
    if (ep == 8) CHECK(xs > 1.5 * one * x / w.params);
  }
  /* the full engine replays the EDP collectives after the dense ones */
  static pf_prediction f;
  setup_dp(&sc, 32, 8);
  CHECK_INT(pf_job_resolve(&sc), 0);
  CHECK_INT(pf_predict(&sc, &p), 0);
  sc.engine = PF_ENGINE_FULL;
  CHECK_INT(pf_job_resolve(&sc), 0);
  CHECK_INT(pf_predict(&sc, &f), 0);
  double a = p.breakdown_s.dp_comm_exposed, b = f.breakdown_s.dp_comm_exposed;
  CHECK(a > 0 && b > 0);
  CHECK_NEAR(b, a, 0.15 * a);
}

int main(void) {
  tune();
  edp_groups();
  two_groups();
  double t8 = a2a(8), t16 = a2a(16);
  CHECK(t16 > 1.3 * t8); /* half of each rank's copies leave the node through one 400 Gb/s NIC */
  refusals();
  compute();
  memory();
  rank_load();
  printf("%d passed, %d failed\n", pf_check_pass, pf_check_fail);
  return pf_check_fail != 0;
}
