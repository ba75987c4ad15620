/* test_expert_dp.c - a mixture of experts' gradients synchronised in two groups (engine/dpsync.c, comm/epa2a.c
 * pf_edp_groups; issue 29, MoE parallel folding: arXiv 2504.14960, Megatron-Core's DDP keeps the routed experts
 * in expert_parallel_buffers over intra_expt_dp_group):
 *  - the EDP groups are the ranks at one (ETP, EP) place of each EP x ETP block of the stage: EP 8 over DP 32
 *    gives 8 groups of 4 ranks r, r + 8, r + 16, r + 24;
 *  - a stage's expert parameters (w->expert_params) are the routed experts' over EP x ETP;
 *  - with the distributed optimizer at PP 1 the DP time is the two-group formula: the dense reduce-scatter and
 *    all-gather of (params - expert params) over DP x CP plus the experts' over EDP, each priced alone by the
 *    communication module; at EDP 4 over four nodes the experts' part costs more than their bytes did in one
 *    ring over DP 32 (the old model), whose inter-node hops carry a node's data once;
 *  - at EDP 1 (EP = DP) the experts' gradients are not reduced at all: the sync is the dense part alone and
 *    less than one group for everything;
 *  - the full engine replays the same collectives (its DP time within 15 % of the analytic one). */
#include "check.h"
#include "comm/comm.h"
#include "compute/compute.h"
#include "core/core.h"
#include "study/study.h"
#include "workload/workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void setup(pf_scenario *sc, int gpus, int ep) {
  pf_scenario_init(sc);
  CHECK_INT(pf_machine_load("deepseek-h800", &sc->machine), 0);
  CHECK_INT(pf_workload_builtin("deepseek-v2-lite", &sc->workload), 0);
  sc->gpus = gpus;
  sc->plan.tp = 1;
  sc->plan.ep = ep;
  sc->plan.mbs = 1;
  sc->plan.gbs = 2 * gpus;
  sc->plan.dist_opt = true;
  sc->plan.flash_attn = true;
  sc->engine = PF_ENGINE_ANALYTIC;
}

static void groups(void) {
  static pf_scenario sc;
  setup(&sc, 32, 8);
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
  int rc = expert ? pf_edp_collective_pattern(sc, &c->topo, kind, bytes, 0, &pat, &r)
                  : pf_dp_collective_pattern(sc, &c->topo, kind, bytes, 0, &pat, &r);
  CHECK_INT(rc, 0);
  pf_coll_pattern_free(&pat);
  return r.time_s;
}

static void two_groups(void) {
  static pf_scenario sc;
  static pf_prediction p;
  for (int ep = 8; ep <= 32; ep *= 4) { /* EDP 4, then EDP 1 */
    setup(&sc, 32, ep);
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
  setup(&sc, 32, 8);
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
  groups();
  two_groups();
  printf("%d passed, %d failed\n", pf_check_pass, pf_check_fail);
  return pf_check_fail != 0;
}
