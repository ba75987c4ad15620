/* test_sharding.c - ZeRO-2 / ZeRO-3 (FSDP) and HYBRID_SHARD (job/shard.c, job/memory.c, comm/fsdp.c):
 * the memory terms fall as 1/DP, the per-unit all-gathers and reduce-scatters reach the breakdown and the
 * timeline, hybrid sharding keeps them inside an 8-GPU node, and the libraries' refusals. */
#include "check.h"
#include "comm/comm.h"
#include "core/core.h"
#include "job/job.h"
#include "study/study.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void setup(pf_scenario *sc, const char *machine, const char *model, int nodes, int zero) {
  pf_scenario_init(sc);
  if (pf_machine_load(machine, &sc->machine) != 0) fprintf(stderr, "%s\n", pf_error_detail());
  if (pf_workload_builtin(model, &sc->workload) != 0) fprintf(stderr, "%s\n", pf_error_detail());
  sc->nodes = nodes;
  sc->plan.gbs = 64 * nodes;
  sc->plan.zero = zero;
  sc->plan.dist_opt = zero >= 1;
  sc->plan.flash_attn = true;
  sc->plan.recompute = PF_RECOMPUTE_FULL;
}

/* ZeRO-3 per GPU: weights, gradients and optimizer state x DP constant over DP = 8, 16, 32, 64 (the ZeRO
 * paper's (2 + 4 + 12) P / N with this model's bytes), plus the largest unit's working set: its gradient
 * (4 B) and 1 + prefetch gathered copies (2 B each), the same at every DP. */
static void memory_falls_as_1_over_dp(void) {
  static pf_scenario sc;
  double w0 = 0, g0 = 0, o0 = 0, work0 = 0;
  for (int nodes = 1; nodes <= 8; nodes *= 2) {
    setup(&sc, "dgx-h100-superpod", "llama2-13b", nodes, 3);
    CHECK_INT(pf_plan_check(&sc), 0);
    CHECK_INT(sc.plan.dp, 8 * nodes);
    CHECK_INT(pf_plan_shard_size(&sc), 8 * nodes);
    pf_memory m;
    pf_memory_estimate(&sc, &m);
    double dp = sc.plan.dp;
    if (nodes == 1) { w0 = m.weights_B * dp, g0 = m.gradients_B * dp, o0 = m.optimizer_B * dp, work0 = m.working_B; }
    CHECK_NEAR(m.weights_B * dp, w0, 1e-9 * w0);
    CHECK_NEAR(m.gradients_B * dp, g0, 1e-9 * g0);
    CHECK_NEAR(m.optimizer_B * dp, o0, 1e-9 * o0);
    CHECK_NEAR(m.working_B, work0, 1e-9 * work0);
    /* bytes per parameter: 2 (bf16), 4 (fp32 main gradient), 12 (Adam); the unit a layer of 13B */
    CHECK_NEAR(g0 / w0, 2.0, 1e-9);
    CHECK_NEAR(o0 / w0, 6.0, 1e-9);
    double layer = pf_workload_layer_params(&sc.workload);
    CHECK_NEAR(m.working_B, layer * (4.0 + 2 * 2.0), 1e-6 * m.working_B);
  }
  /* ZeRO-2 keeps whole weights; ZeRO-1 whole gradients; each level below holds more */
  double tot[4];
  for (int z = 0; z <= 3; z++) {
    setup(&sc, "dgx-h100-superpod", "llama2-13b", 4, z);
    CHECK_INT(pf_plan_check(&sc), 0);
    CHECK_INT(pf_plan_zero(&sc.plan), z);
    pf_memory m;
    pf_memory_estimate(&sc, &m);
    tot[z] = m.total_B;
    if (z == 2) CHECK_NEAR(m.weights_B, w0, 1e-9 * w0);
    if (z == 1) CHECK_NEAR(m.gradients_B, g0, 1e-9 * g0);
  }
  CHECK(tot[0] > tot[1] && tot[1] > tot[2] && tot[2] > tot[3]);
}

/* The per-unit collectives in the breakdown and the timeline; none at ZeRO-1. */
static void breakdown_and_timeline(void) {
  static pf_scenario sc;
  static pf_prediction p;
  static pf_trace t;
  for (int z = 1; z <= 3; z++) {
    setup(&sc, "dgx-h100-superpod", "llama2-7b", 2, z);
    CHECK_INT(pf_job_resolve(&sc), 0);
    CHECK_INT(pf_predict_traced(&sc, &p, &t), 0);
    const pf_breakdown *b = &p.breakdown_s;
    if (z == 1) CHECK(b->fsdp_allgather == 0 && b->fsdp_reduce_scatter == 0 && t.tl.fsdp_level == 0);
    if (z == 2) CHECK(b->fsdp_allgather == 0 && b->fsdp_reduce_scatter > 0 && t.tl.fsdp_level == 2);
    if (z == 3) {
      CHECK(b->fsdp_allgather > 0 && b->fsdp_reduce_scatter > 0);
      CHECK_INT(t.tl.fsdp_level, 3);
      CHECK_INT(t.tl.fsdp_units[0], 32 + 2); /* the layers, the embedding and the output layer */
      CHECK(t.tl.fsdp_ag_s[0] > 0 && t.tl.fsdp_rs_s[0] > 0);
      CHECK_STR(pf_breakdown_name(PF_BREAKDOWN_N - 3), "fsdp_allgather");
    }
    double sum = 0;
    for (int i = 0; i < PF_BREAKDOWN_N; i++) sum += pf_breakdown_get(b, i);
    CHECK_NEAR(sum, p.iteration_time_s, 1e-6 * p.iteration_time_s); /* the terms still add up */
    pf_trace_free(&t);
  }
}

/* HYBRID_SHARD on 4 nodes of 8 GPUs: every shard group lies in one node, the unit's all-gather and
 * reduce-scatter stay on the node's fabric (no NIC bytes, faster than the same over 32 ranks), and only the
 * replicas' all-reduce leaves the node. */
static void hybrid_inside_node(void) {
  static pf_scenario sc;
  pf_fsdp_cost all, node;
  double params = 0;
  for (int g = PF_SHARD_ALL; g <= PF_SHARD_NODE; g++) {
    setup(&sc, "dgx-h100-superpod", "llama2-13b", 4, 3);
    sc.plan.shard_group = g;
    CHECK_INT(pf_job_resolve(&sc), 0);
    CHECK_INT(pf_plan_shard_size(&sc), g == PF_SHARD_NODE ? 8 : 32);
    pf_comm c;
    CHECK_INT(pf_comm_init(&sc, &c), 0);
    int *G, ng, k;
    CHECK_INT(pf_shard_groups(&sc, 0, &G, &ng, &k), 0);
    int same = 1;
    for (int i = 0; i < ng; i++)
      for (int j = 1; j < k; j++) same &= pf_plan_node_of(&sc, G[i * k + j]) == pf_plan_node_of(&sc, G[i * k]);
    CHECK_INT(same, g == PF_SHARD_NODE);
    free(G);
    pf_stage_work w;
    CHECK_INT(pf_stage_work_at(&sc, 1.0, 0, &w), 0);
    params = w.params;
    CHECK_INT(pf_comm_fsdp(&c, 0, &w, g == PF_SHARD_NODE ? &node : &all), 0);
    pf_comm_free(&c);
  }
  CHECK_INT(node.inter, 0);
  CHECK_INT(all.inter, 1);
  CHECK(node.ag_s < all.ag_s && node.rs_s < all.rs_s);
  CHECK(node.ar_s > 0 && all.ar_s == 0);
  /* a GPU receives 7/8 of a unit (bf16): no faster than its NVLink rate, faster than its NIC could */
  double recv_B = 2.0 * params / node.units * 7.0 / 8.0;
  CHECK(node.ag_s >= recv_B / sc.machine.fabric_bw_Bps);
  CHECK(node.ag_s < recv_B / sc.machine.nic_bw_Bps);
}

/* What the libraries refuse, with their reasons; what they allow. */
static void refusals(void) {
  static pf_scenario sc;
  setup(&sc, "dgx-h100-superpod", "llama2-13b", 4, 3);
  sc.plan.pp = 2, sc.plan.fsdp_impl = PF_FSDP_DEEPSPEED;
  CHECK_INT(pf_plan_check(&sc), PF_EPLAN);
  CHECK(strstr(pf_error_detail(), "incompatible with pipeline parallelism") != NULL);
  setup(&sc, "dgx-h100-superpod", "llama2-13b", 4, 2);
  sc.plan.pp = 2, sc.plan.fsdp_impl = PF_FSDP_TORCH;
  CHECK_INT(pf_plan_check(&sc), PF_EPLAN);
  CHECK(strstr(pf_error_detail(), "use-torch-fsdp2 is not supported with pipeline") != NULL);
  setup(&sc, "dgx-h100-superpod", "llama2-13b", 4, 3); /* Megatron-FSDP composes with TP, CP and PP */
  sc.plan.pp = 2, sc.plan.tp = 2, sc.plan.cp = 2;
  CHECK_INT(pf_plan_check(&sc), 0);
  setup(&sc, "dgx-h100-superpod", "llama2-13b", 4, 3); /* torchtitan: FSDP2 with PP under --framework pytorch */
  sc.plan.pp = 2, sc.plan.fsdp_impl = PF_FSDP_TORCH, sc.framework = PF_FW_PYTORCH;
  CHECK_INT(pf_plan_check(&sc), 0);
  setup(&sc, "dgx-h100-superpod", "llama2-13b", 4, 3);
  sc.plan.dist_opt = false, sc.plan.given = PF_SET_DIST_OPT;
  CHECK_INT(pf_plan_check(&sc), PF_EINVAL);
  CHECK(strstr(pf_error_detail(), "--no-dist-opt") != NULL);
  setup(&sc, "dgx-h100-superpod", "llama2-13b", 4, 1);
  sc.plan.shard_group = PF_SHARD_NODE;
  CHECK_INT(pf_plan_check(&sc), PF_EINVAL);
  CHECK(strstr(pf_error_detail(), "HYBRID_SHARD") != NULL);
}

int main(void) {
  memory_falls_as_1_over_dp();
  breakdown_and_timeline();
  hybrid_inside_node();
  refusals();
  return pf_check_done();
}
