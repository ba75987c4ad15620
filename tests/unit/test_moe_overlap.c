/* test_moe_overlap.c - how a mixture of experts is run (job/moeplan.c, comm/epa2a.c, job/memory.c,
 * compute/compute.c; docs/moe.md; issue 29 item 3 and the DeepSeek-V3 acceptance line):
 *  - --overlap-moe-expert-parallel-comm hides the stage's all-to-alls behind the MoE layers' compute: what is
 *    left is A - h exposed plus h s of slower compute, s the SMs the communication holds (NCCL's 16 channels,
 *    DeepEP's --moe-deepep-num-sms of the device's 132), never more than without the overlap, and only in the
 *    steady state (1 - 1/M of it without PP, none at one microbatch);
 *  - --moe-token-dispatcher-type flex (DeepEP) under FP8 dispatches FP8 and crosses once per node, and
 *    --moe-router-num-groups / --moe-router-group-topk (node-limited routing to 4 of 8 nodes) lower it further;
 *  - --recompute full re-runs the dispatch and combine in the backward;
 *  - --recompute-modules: each module lowers the activations and adds its forward kernels to the backward
 *    (mlp a dense layer's MLP, moe a MoE layer's, which also dispatches and combines again in the backward);
 *    --fp8-activation-cache lowers them again; bad lists and combinations are refused naming the option. */
#include "check.h"
#include "comm/comm.h"
#include "compute/compute.h"
#include "core/core.h"
#include "study/study.h"
#include "workload/workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void setup(pf_scenario *sc, const char *model, int gpus, int ep) {
  pf_scenario_init(sc);
  CHECK_INT(pf_machine_load("deepseek-h800", &sc->machine), 0);
  CHECK_INT(pf_workload_builtin(model, &sc->workload), 0);
  sc->gpus = gpus;
  sc->plan.tp = 1;
  sc->plan.ep = ep;
  sc->plan.mbs = 1;
  sc->plan.gbs = 2 * gpus;
  sc->plan.dist_opt = true;
  sc->plan.flash_attn = true;
}

/* stage 0's work with its communication (fwd_ep_s, bwd_ep_s, ep_hidden_s, ep_sm_s) */
static void stage(pf_scenario *sc, pf_stage_work *w) {
  CHECK_INT(pf_plan_check(sc), 0);
  pf_comm c;
  pf_stage_comm o;
  CHECK_INT(pf_comm_init(sc, &c), 0);
  CHECK_INT(pf_stage_work_compute(sc, 0, w), 0);
  CHECK_INT(pf_comm_stage(&c, 0, w, &o), 0);
  CHECK_NEAR(o.ep_hidden_s, w->ep_hidden_s, 1e-12);
  pf_comm_free(&c);
}

static void overlap(void) {
  static pf_scenario sc;
  pf_stage_work a, b;
  for (int flex = 0; flex < 2; flex++) {
    setup(&sc, "deepseek-v2-lite", 16, 16);
    sc.plan.dispatcher = flex ? PF_MOE_DISPATCH_FLEX : PF_MOE_DISPATCH_ALLTOALL;
    stage(&sc, &a);
    CHECK(a.fwd_ep_s > 0 && a.ep_hidden_s == 0 && a.ep_sm_s == 0);
    sc.plan.ep_overlap = true;
    stage(&sc, &b);
    double A = a.fwd_ep_s + a.bwd_ep_s, h = b.ep_hidden_s, s = (flex ? 20.0 : 16.0) / 132.0;
    CHECK(h > 0 && h <= A * (1 + 1e-12));
    CHECK_NEAR(b.ep_sm_s, h * s, 1e-9);
    CHECK_NEAR(b.fwd_ep_s + b.bwd_ep_s, A - h + h * s, 1e-9);
    CHECK(b.fwd_ep_s + b.bwd_ep_s < A);
    CHECK_NEAR(b.fwd_s, a.fwd_s, 1e-12); /* the compute's slowdown is charged to the all-to-all term */
  }
  /* only the steady state pairs: without PP the first forward and the last backward of M microbatches run alone,
   * so a share 1 - 1/M is hidden, and nothing at M = 1 (Megatron's EP-overlap guide; docs/moe.md) */
  double hm[3];
  const int M[3] = {1, 2, 8};
  for (int i = 0; i < 3; i++) {
    setup(&sc, "deepseek-v2-lite", 16, 16);
    sc.plan.dispatcher = PF_MOE_DISPATCH_FLEX;
    sc.plan.ep_overlap = true;
    sc.plan.gbs = 16 * M[i];
    stage(&sc, &b);
    hm[i] = b.ep_hidden_s;
  }
  CHECK(hm[0] == 0 && hm[1] > 0);
  CHECK_NEAR(hm[2] / hm[1], (1 - 1 / 8.0) / (1 - 1 / 2.0), 1e-9);
  setup(&sc, "deepseek-v2-lite", 16, 16);
  sc.plan.dispatcher = PF_MOE_DISPATCH_FLEX;
  sc.plan.ep_overlap = true;
  sc.plan.deepep_sms = 40; /* more SMs for DeepEP: the hidden part costs more */
  stage(&sc, &b);
  CHECK_NEAR(b.ep_sm_s, b.ep_hidden_s * 40.0 / 132.0, 1e-9);
  setup(&sc, "deepseek-v2-lite", 16, 1);
  sc.plan.ep_overlap = true;
  CHECK_INT(pf_plan_check(&sc), PF_EINVAL);
  CHECK(strstr(pf_error_detail(), "--overlap-moe-expert-parallel-comm") != NULL);
  setup(&sc, "deepseek-v2-lite", 16, 16);
  sc.plan.deepep_sms = 132;
  CHECK_INT(pf_plan_check(&sc), PF_EINVAL);
  CHECK(strstr(pf_error_detail(), "--moe-deepep-num-sms 132") != NULL);
}

/* DeepSeek-V3's EP 64 over 8 nodes: flex under FP8 below NCCL's bf16, node-limited routing lower still */
static void dispatcher(void) {
  static pf_scenario sc;
  pf_stage_work nccl, flex, limited, full;
  setup(&sc, "deepseek-v3", 64, 64);
  sc.precision = PF_FP8;
  sc.workload.router_groups = 0;
  stage(&sc, &nccl);
  sc.plan.dispatcher = PF_MOE_DISPATCH_FLEX;
  stage(&sc, &flex);
  sc.workload.router_groups = 8; /* the built-in's: 8 groups, 4 a token, one group a node */
  sc.workload.router_group_topk = 4;
  stage(&sc, &limited);
  CHECK(flex.fwd_ep_s < 0.6 * nccl.fwd_ep_s);
  CHECK(limited.fwd_ep_s < 0.85 * flex.fwd_ep_s);
  /* full recompute: the backward dispatches and combines again, the forward as before */
  sc.plan.recompute = PF_RECOMPUTE_FULL;
  stage(&sc, &full);
  CHECK_NEAR(full.fwd_ep_s, limited.fwd_ep_s, 1e-12);
  CHECK_NEAR(full.bwd_ep_s, limited.bwd_ep_s + limited.fwd_ep_s, 1e-9);
}

static double act(pf_scenario *sc) {
  CHECK_INT(pf_plan_check(sc), 0);
  pf_memory m;
  pf_memory_estimate(sc, &m);
  return m.activations_B;
}

static double bwd(pf_scenario *sc) {
  pf_stage_work w;
  CHECK_INT(pf_plan_check(sc), 0);
  CHECK_INT(pf_stage_work_compute(sc, 0, &w), 0);
  return w.bwd_s;
}

static void recompute(void) {
  static pf_scenario sc;
  setup(&sc, "deepseek-v2-lite", 16, 16);
  sc.precision = PF_FP8;
  sc.plan.recompute = PF_RECOMPUTE_SELECTIVE;
  double a0 = act(&sc), b0 = bwd(&sc);
  unsigned steps[] = {PF_RECOMPUTE_MOD_LAYERNORM, PF_RECOMPUTE_MOD_MLA_UP_PROJ, PF_RECOMPUTE_MOD_MOE_ACT,
                      PF_RECOMPUTE_MOD_MLP, PF_RECOMPUTE_MOD_MOE}; /* V2-Lite's first layer is dense */
  unsigned mods = PF_RECOMPUTE_MOD_CORE_ATTN;
  pf_stage_work w0, w1;
  for (int i = 0; i < 5; i++) {
    if (steps[i] == PF_RECOMPUTE_MOD_MOE) stage(&sc, &w0);
    mods |= steps[i];
    sc.plan.recompute_modules = mods;
    double a1 = act(&sc), b1 = bwd(&sc);
    CHECK(a1 < a0);
    CHECK(b1 > b0);
    a0 = a1, b0 = b1;
  }
  /* the recomputed MoE layers dispatch and combine again, as under --recompute full */
  stage(&sc, &w1);
  CHECK_NEAR(w1.fwd_ep_s, w0.fwd_ep_s, 1e-12);
  CHECK(w0.fwd_ep_s > 0);
  CHECK_NEAR(w1.bwd_ep_s, w0.bwd_ep_s + w0.fwd_ep_s, 1e-9);
  sc.plan.fp8_act_cache = true;
  CHECK(act(&sc) < a0);
  CHECK_NEAR(bwd(&sc), b0, 1e-12);
  /* refusals */
  unsigned m;
  CHECK_INT(pf_recompute_modules_parse("layernorm,mlps", &m), PF_EINVAL);
  CHECK(strstr(pf_error_detail(), "\"mlps\"") != NULL);
  CHECK_INT(pf_recompute_modules_parse("layernorm moe", &m), 0);
  CHECK_INT(m, PF_RECOMPUTE_MOD_LAYERNORM | PF_RECOMPUTE_MOD_MOE);
  CHECK_INT(pf_recompute_modules_parse("mla_up_proj, moe_act", &m), 0);
  CHECK_INT(m, PF_RECOMPUTE_MOD_MLA_UP_PROJ | PF_RECOMPUTE_MOD_MOE_ACT);
  char buf[PF_RECOMPUTE_MODS_MAX];
  CHECK_STR(pf_recompute_modules_name(m, buf, sizeof buf), "mla_up_proj,moe_act");
  setup(&sc, "mixtral-8x7b", 16, 8);
  sc.plan.recompute = PF_RECOMPUTE_SELECTIVE;
  sc.plan.recompute_modules = PF_RECOMPUTE_MOD_MLA_UP_PROJ;
  CHECK_INT(pf_plan_check(&sc), PF_EINVAL);
  CHECK(strstr(pf_error_detail(), "mla_up_proj") != NULL);
  sc.plan.recompute_modules = PF_RECOMPUTE_MOD_MLP; /* Mixtral: every layer a MoE layer, no dense MLP */
  CHECK_INT(pf_plan_check(&sc), PF_EINVAL);
  CHECK(strstr(pf_error_detail(), "no dense MLP layer") != NULL);
  sc.plan.recompute = PF_RECOMPUTE_FULL;
  sc.plan.recompute_modules = PF_RECOMPUTE_MOD_LAYERNORM;
  CHECK_INT(pf_plan_check(&sc), PF_EINVAL);
  CHECK(strstr(pf_error_detail(), "--recompute selective") != NULL);
  setup(&sc, "mixtral-8x7b", 16, 8);
  sc.plan.fp8_act_cache = true;
  CHECK_INT(pf_plan_check(&sc), PF_EINVAL);
  CHECK(strstr(pf_error_detail(), "--fp8-activation-cache needs --precision fp8") != NULL);
}

/* Megatron-Core's asserts on the EP overlap (transformer_config.py at d98e8a64): virtual pipeline stages at
 * PP > 1, no full recomputation, no moe in the recomputed modules (moe_act is allowed), at most one MTP layer;
 * DualPipe is DeepSeek's schedule, not Megatron's: none applies */
static void megatron_rules(void) {
  static pf_scenario sc;
  const pf_schedule sched[] = {PF_SCHED_1F1B, PF_SCHED_INTERLEAVED, PF_SCHED_1F1B, PF_SCHED_DUALPIPE,
                               PF_SCHED_1F1B, PF_SCHED_1F1B, PF_SCHED_1F1B};
  const int pp[] = {3, 3, 1, 2, 1, 1, 1}, want[] = {PF_EINVAL, 0, PF_EINVAL, 0, PF_EINVAL, 0, PF_EINVAL};
  const char *why[] = {"--overlap-moe-expert-parallel-comm at --pp 3 needs virtual pipeline stages", NULL,
                       "--overlap-moe-expert-parallel-comm with --recompute full", NULL,
                       "--overlap-moe-expert-parallel-comm with --recompute-modules moe", NULL,
                       "--overlap-moe-expert-parallel-comm with --mtp-layers 2"};
  for (int i = 0; i < 7; i++) {
    setup(&sc, "deepseek-v2-lite", 48, 16);
    sc.plan.pp = pp[i];
    sc.plan.gbs = 96;
    sc.plan.schedule = sched[i];
    sc.plan.vstages = sched[i] == PF_SCHED_INTERLEAVED ? 3 : 1; /* 27 layers: PP 3 x V 3 */
    if (sched[i] == PF_SCHED_DUALPIPE) /* 13 + 14 layers, DP 32, 4 microbatches */
      sc.gpus = 64, sc.plan.gbs = 128, sc.plan.pp_first = 13, sc.plan.recompute = PF_RECOMPUTE_FULL;
    if (i == 2) sc.plan.recompute = PF_RECOMPUTE_FULL;
    if (i == 4 || i == 5) { /* the MoE layer recomputed whole, then its activation alone */
      sc.plan.recompute = PF_RECOMPUTE_SELECTIVE;
      sc.plan.recompute_modules = i == 4 ? PF_RECOMPUTE_MOD_MOE : PF_RECOMPUTE_MOD_MOE_ACT;
    }
    if (i == 6) sc.workload.mtp_layers = 2;
    sc.plan.ep_overlap = true;
    int rc = pf_job_resolve(&sc);
    if (rc != want[i]) fprintf(stderr, "case %d: %s\n", i, pf_error_detail());
    CHECK_INT(rc, want[i]);
    if (why[i]) CHECK(strstr(pf_error_detail(), why[i]) != NULL);
  }
}

int main(void) {
  overlap();
  megatron_rules();
  dispatcher();
  recompute();
  printf("%d passed, %d failed\n", pf_check_pass, pf_check_fail);
  return pf_check_fail != 0;
}
