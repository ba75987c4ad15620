/* test_moe_tp_host.c - what a MoE layer costs beside its kernels' time (comm/comm.c tp_mlp_layers,
 * compute/moelayer.c; docs/moe.md "Tensor parallelism and the host around the experts"; issue 29):
 *  - with sequence parallelism, a MoE layer whose routed experts run at ETP 1 has no TP collective in its
 *    MLP half (Megatron-Core's MoE layer takes the sequence-parallel shard as it is and its dispatchers
 *    gather over the expert-TP group only): Qwen3-30B-A3B (48 MoE layers, no shared experts) at TP 2 pays
 *    per layer the attention's all-gather and reduce-scatter each way, half of what it pays at ETP 2, the
 *    stage's ends (embedding, output layer) left over, and hides less under --tp-comm-overlap; DeepSeek-V2-Lite (shared
 *    experts, a TP-parallel MLP) keeps both halves whatever ETP;
 *  - the experts' grouped GEMMs cost the host one operator per local expert (Transformer Engine's
 *    GroupedLinear launches one cuBLAS GEMM per expert): EP 1 to EP 8 removes 2 x (E - E / 8) forward and
 *    twice that backward operators per MoE layer, the imbalanced path keeps E / EP, and at EP 1 (128 small
 *    GEMMs a launch) the stage's forward waits longer on the host than at EP 8;
 *  - the host issues those products one at a time and each starts once issued: after a synchronisation a
 *    grouped launch of 16 products of 30 us (12 us of host each) waits one operator, not sixteen;
 *  - with --moe-imbalance r the rank holding the busiest expert receives (r + (E/EP - 1)(E - r)/(E - 1)) / (E/EP)
 *    times the balanced rows, and the group's all-to-alls wait for it: DeepSeek-V2-Lite at EP 16 (4 experts a
 *    GPU), r = 2: the stage's all-to-all time grows by up to that factor (1.24), not at all without it. */
#include "check.h"
#include "comm/comm.h"
#include "compute/compute.h"
#include "core/core.h"
#include "workload/workload.h"

#include <math.h>
#include <string.h>

static void setup(pf_scenario *sc, const char *model, int tp, int ep, int etp) {
  pf_scenario_init(sc);
  CHECK_INT(pf_machine_load("deepseek-h800", &sc->machine), 0);
  CHECK_INT(pf_workload_builtin(model, &sc->workload), 0);
  sc->gpus = 16;
  sc->plan.tp = tp;
  sc->plan.ep = ep;
  sc->plan.etp = etp;
  sc->plan.mbs = 1;
  sc->plan.gbs = 32;
  sc->plan.sp = tp > 1;
  sc->plan.dist_opt = true;
  sc->plan.flash_attn = true;
  CHECK_INT(pf_plan_check(sc), 0);
}

/* stage 0's TP/SP collectives (EP's all-to-alls are not in o->tp_fwd_s) */
static void tp_stage(pf_scenario *sc, pf_stage_comm *o) {
  pf_comm c;
  pf_stage_work w;
  CHECK_INT(pf_comm_init(sc, &c), 0);
  CHECK_INT(pf_stage_work_compute(sc, 0, &w), 0);
  CHECK_INT(pf_comm_stage(&c, 0, &w, o), 0);
  pf_comm_free(&c);
}

/* stage 0's TP collectives of `model` at TP 2, EP 8 with ETP 1 (o1) and ETP 2 (o2) */
static void etp_pair(const char *model, bool overlap, pf_stage_comm *o1, pf_stage_comm *o2) {
  static pf_scenario sc;
  for (int etp = 1; etp <= 2; etp++) {
    setup(&sc, model, 2, 8, etp);
    sc.plan.tp_comm_overlap = overlap;
    tp_stage(&sc, etp == 1 ? o1 : o2);
  }
}

static void tp_collectives(void) {
  pf_stage_comm o1, o2;
  pf_workload w;
  CHECK_INT(pf_workload_builtin("qwen3-30b-a3b", &w), 0);
  etp_pair("qwen3-30b-a3b", false, &o1, &o2);
  double L = w.layers;
  for (int d = 0; d < 2; d++) {
    double t1 = d ? o1.tp_bwd_s : o1.tp_fwd_s, t2 = d ? o2.tp_bwd_s : o2.tp_fwd_s;
    double x = t2 - t1, ends = t1 - x; /* t1 = L a + ends, t2 = 2 L a + ends */
    CHECK(x > 0);
    CHECK(ends >= -1e-12 && ends < 4.0 * x / L); /* what is left is the stage's ends: a few collectives */
  }
  /* with --tp-comm-overlap too: fewer collectives to hide, less hidden */
  etp_pair("qwen3-30b-a3b", true, &o1, &o2);
  CHECK(o1.tp_hidden_s > 0 && o1.tp_hidden_s < 0.6 * o2.tp_hidden_s);
  /* shared experts: a TP-parallel MLP in every MoE layer, so ETP does not change the TP collectives */
  etp_pair("deepseek-v2-lite", false, &o1, &o2);
  CHECK_NEAR(o1.tp_fwd_s, o2.tp_fwd_s, 1e-12);
  CHECK_NEAR(o1.tp_bwd_s, o2.tp_bwd_s, 1e-12);
}

static void host_ops(void) {
  static pf_scenario sc;
  pf_stage_work w1, w8, wi;
  setup(&sc, "qwen3-30b-a3b", 1, 1, 1);
  CHECK_INT(pf_stage_work_compute(&sc, 0, &w1), 0);
  setup(&sc, "qwen3-30b-a3b", 1, 8, 1);
  CHECK_INT(pf_stage_work_compute(&sc, 0, &w8), 0);
  const pf_workload *wl = &sc.workload;
  double E = wl->experts, nmoe = pf_workload_moe_layers_in(wl, 0, wl->layers);
  CHECK(nmoe == wl->layers && E == 128);
  double fwd = nmoe * 2 * (E - E / 8); /* fc1 and fc2, one operator per local expert */
  CHECK_NEAR(w1.fwd.ops - w8.fwd.ops, fwd, 1e-6);
  CHECK_NEAR(w1.bwd.ops - w8.bwd.ops, 2 * fwd, 1e-6); /* data and weight gradients */
  /* the imbalanced path prices the busiest expert apart: still one operator per local expert */
  sc.workload.expert_imbalance = 2.0;
  CHECK_INT(pf_stage_work_compute(&sc, 0, &wi), 0);
  CHECK_NEAR(wi.fwd.ops, w8.fwd.ops, 1e-6);
  /* 128 GEMMs of 256 rows a launch at EP 1: the host falls behind the GPU more than at EP 8 */
  CHECK(pf_step_host_bound_s(&w1.fwd) > pf_step_host_bound_s(&w8.fwd));
}

static void pipelined(void) {
  static pf_scenario sc;
  setup(&sc, "qwen3-30b-a3b", 1, 8, 1);
  pf_kernel_env env = {.dev = &sc.machine.dev, .eff_scale = 1, .host_op_s = 12e-6};
  pf_kernel sync = {.kind = PF_KERNEL_FIXED, .fixed_s = 6e-6, .host_ops = 1, .sync = true};
  pf_kernel g = {.kind = PF_KERNEL_FIXED, .fixed_s = 16 * 30e-6, .host_ops = 16, .grouped = true};
  pf_step st;
  memset(&st, 0, sizeof st);
  CHECK_INT(pf_step_add(&st, &env, &sync), 0);
  double t0 = st.end_s;
  pf_kernel_cost c;
  CHECK_INT(pf_kernel_cost_eval(&env, &g, &c), 0);
  CHECK_INT(pf_step_add(&st, &env, &g), 0);
  CHECK_NEAR(st.end_s - t0, 12e-6 + c.time_s, 1e-12); /* one operator's wait, then the GPU's 16 x 30 us */
  CHECK_NEAR(st.ops, 17, 1e-12);
  g.fixed_s = 16 * 5e-6; /* products shorter than their host operator: the host sets the pace */
  memset(&st, 0, sizeof st);
  CHECK_INT(pf_kernel_cost_eval(&env, &g, &c), 0);
  CHECK_INT(pf_step_add(&st, &env, &g), 0);
  CHECK_NEAR(st.end_s, 16 * 12e-6 + c.time_s / 16, 1e-12);
}

static void imbalanced_a2a(void) {
  static pf_scenario sc;
  pf_stage_work a, b;
  pf_stage_comm o;
  pf_comm c;
  for (int i = 0; i < 2; i++) {
    setup(&sc, "deepseek-v2-lite", 1, 16, 1);
    sc.workload.expert_imbalance = i ? 2.0 : 1.0;
    CHECK_INT(pf_comm_init(&sc, &c), 0);
    CHECK_INT(pf_stage_work_compute(&sc, 0, i ? &b : &a), 0);
    CHECK_INT(pf_comm_stage_ep(&c, 0, i ? &b : &a, &o), 0);
    pf_comm_free(&c);
  }
  double E = sc.workload.experts, El = E / 16, L = (2 + (El - 1) * (E - 2) / (E - 1)) / El;
  CHECK(a.fwd_ep_s > 0 && b.bwd_ep_s > 0);
  CHECK(b.fwd_ep_s > 1.15 * a.fwd_ep_s && b.fwd_ep_s <= L * a.fwd_ep_s * (1 + 1e-9));
  CHECK(b.bwd_ep_s > 1.15 * a.bwd_ep_s && b.bwd_ep_s <= L * a.bwd_ep_s * (1 + 1e-9));
}

int main(void) {
  imbalanced_a2a();
  pipelined();
  tp_collectives();
  host_ops();
  printf("%d passed, %d failed\n", pf_check_pass, pf_check_fail);
  return pf_check_fail != 0;
}
