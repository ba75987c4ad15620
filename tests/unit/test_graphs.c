/* test_graphs.c - Megatron-Core's partial CUDA graphs (--cuda-graph-modules; job/graphmods.c, compute/graphs.c):
 *  - a captured module keeps one host operator, its replay, on its first kernel; its other kernels none; what
 *    stays eager (the dropless experts, one operator per local expert; permute; the tokens-per-expert
 *    synchronisation) keeps its operators;
 *  - the layer's own Python keeps the eager modules' share of the layer's kernel entries: 6 of 17 for a GQA MoE
 *    layer under attn,moe_router,moe_preprocess (graphs.c), all of it with nothing captured, none for a dense
 *    layer under attn,mlp; a dropless MoE layer's experts' share of it runs just after the tokens-per-expert
 *    synchronisation (6 of 17 either way), the rest at the layer's start;
 *  - the GPU's work is the same; the host waits less (Qwen3-30B-A3B at micro-batch 1: host-bound);
 *  - the FP8 casts of a captured GEMM are captured with it;
 *  - Megatron's rules: moe_preprocess with moe_router, the router's modules need experts, moe needs
 *    drop-and-pad, a Megatron transformer; under --host-overhead graphs the modules change nothing. */
#include "check.h"
#include "compute/compute.h"
#include "core/core.h"
#include "workload/workload.h"

#include <string.h>

static void setup(pf_scenario *sc, const char *model, unsigned mods) {
  pf_scenario_init(sc);
  CHECK_INT(pf_machine_load("dgx-h100-superpod", &sc->machine), 0);
  CHECK_INT(pf_workload_builtin(model, &sc->workload), 0);
  sc->gpus = 8;
  sc->plan.ep = pf_workload_is_moe(&sc->workload) ? 8 : 1;
  sc->plan.mbs = 1;
  sc->plan.gbs = 16;
  sc->plan.dist_opt = true;
  sc->plan.flash_attn = true;
  sc->graph_modules = mods;
}

static const pf_kernel *find(const pf_kernel_list *l, const char *name) {
  for (int i = 0; i < l->n; i++)
    if (l->k[i].name && !strcmp(l->k[i].name, name)) return &l->k[i];
  return NULL;
}

static double ops_of(const pf_kernel_list *l, unsigned graph) {
  double n = 0;
  for (int i = 0; i < l->n; i++)
    if (l->k[i].graph == graph) n += l->k[i].host_ops * (l->k[i].count > 0 ? l->k[i].count : 1.0);
  return n;
}

static void moe_layer(void) {
  static pf_scenario sc;
  const unsigned mods = PF_GRAPH_ATTN | PF_GRAPH_MOE_ROUTER | PF_GRAPH_MOE_PREPROCESS;
  setup(&sc, "qwen3-30b-a3b", mods);
  CHECK_INT(pf_plan_check(&sc), 0);
  pf_stage_lists L;
  CHECK_INT(pf_transformer_lists(&sc, 0, &L), 0);
  const pf_kernel *qkv = find(&L.moe_fwd, "qkv"), *fa = find(&L.moe_fwd, "flash-attention");
  const pf_kernel *rt = find(&L.moe_fwd, "router"), *topk = find(&L.moe_fwd, "router-topk");
  const pf_kernel *fc1 = find(&L.moe_fwd, "experts-fc1"), *perm = find(&L.moe_fwd, "permute");
  const pf_kernel *sync = find(&L.moe_fwd, "tokens-per-expert-sync"), *py = find(&L.moe_fwd, "layer-python");
  CHECK(qkv && fa && rt && topk && fc1 && perm && sync && py);
  if (!(qkv && fa && rt && topk && fc1 && perm && sync && py)) return;
  CHECK(qkv->graph == PF_GRAPH_ATTN && fa->graph == PF_GRAPH_ATTN && rt->graph == PF_GRAPH_MOE_ROUTER);
  CHECK(fc1->graph == 0 && perm->graph == 0 && sync->graph == 0 && sync->sync);
  /* one replay a module and pass: the first kernel of each carries it */
  CHECK_NEAR(qkv->host_ops + fa->host_ops, 1.0, 0);
  CHECK_NEAR(rt->host_ops + topk->host_ops, 1.0, 0);
  CHECK_NEAR(ops_of(&L.moe_fwd, PF_GRAPH_ATTN), 1.0, 0);
  CHECK_NEAR(ops_of(&L.moe_fwd, PF_GRAPH_MOE_ROUTER), 1.0, 0);
  CHECK_NEAR(ops_of(&L.moe_bwd, PF_GRAPH_ATTN), 2.0, 0); /* the backward list's first captured kernel, twice */
  /* the experts stay eager: one operator per local expert (128 / EP 8) */
  CHECK_NEAR(fc1->host_ops, sc.workload.experts / 8.0, 0);
  CHECK_NEAR(perm->host_ops, 1.0, 0);
  /* the layer's Python: 6 of its 17 kernel entries (the preprocessing one of them) stay eager, the routed
   * experts' (permute to bias-dropout-add2), which all follow the synchronisation: that is where it runs */
  const pf_kernel *mpy = find(&L.moe_fwd, "moe-python");
  CHECK(mpy && mpy == sync + 1);
  if (mpy) CHECK_NEAR(mpy->host_s, 6.0 / 17.0 * pf_host_layer_python_s(&sc, true, false), 1e-12);
  CHECK_NEAR(py->host_s, 0, 1e-15);
  CHECK(find(&L.moe_bwd, "moe-python") == NULL); /* the backward's Python is its own layer-python */
  pf_stage_lists_free(&L);

  /* nothing captured: the same 6 of 17 after the synchronisation, the other 11 at the layer's start */
  sc.graph_modules = 0;
  CHECK_INT(pf_transformer_lists(&sc, 0, &L), 0);
  py = find(&L.moe_fwd, "layer-python"), mpy = find(&L.moe_fwd, "moe-python");
  sync = find(&L.moe_fwd, "tokens-per-expert-sync");
  CHECK(py && mpy && sync && mpy == sync + 1);
  if (py && mpy) {
    CHECK_NEAR(py->host_s, 11.0 / 17.0 * pf_host_layer_python_s(&sc, true, false), 1e-12);
    CHECK_NEAR(mpy->host_s, 6.0 / 17.0 * pf_host_layer_python_s(&sc, true, false), 1e-12);
  }
  pf_stage_lists_free(&L);
  sc.graph_modules = mods;

  /* the same GPU work, less waiting on the host */
  pf_stage_work g, e;
  CHECK_INT(pf_stage_work_compute(&sc, 0, &g), 0);
  sc.graph_modules = 0;
  CHECK_INT(pf_stage_work_compute(&sc, 0, &e), 0);
  CHECK_NEAR(g.fwd.busy_s, e.fwd.busy_s, 1e-12);
  CHECK_NEAR(g.bwd.busy_s, e.bwd.busy_s, 1e-12);
  CHECK(pf_step_host_bound_s(&e.fwd) > 0);
  CHECK(pf_step_host_bound_s(&g.fwd) < 0.5 * pf_step_host_bound_s(&e.fwd));
  CHECK(g.fwd_s < e.fwd_s && g.bwd_s <= e.bwd_s);
  CHECK(g.fwd.ops < e.fwd.ops && g.fwd.python_s < e.fwd.python_s);

  /* nothing changes under whole-step graphs: the host is already out of the way */
  pf_stage_work a, b;
  sc.host_mode = PF_HOST_GRAPHS;
  CHECK_INT(pf_stage_work_compute(&sc, 0, &a), 0);
  sc.graph_modules = mods;
  CHECK_INT(pf_stage_work_compute(&sc, 0, &b), 0);
  CHECK_NEAR(a.fwd_s + a.bwd_s, b.fwd_s + b.bwd_s, 1e-12);
}

static void dense_layer(void) {
  static pf_scenario sc;
  setup(&sc, "llama3-8b", PF_GRAPH_ATTN | PF_GRAPH_MLP);
  sc.precision = PF_FP8;
  CHECK_INT(pf_plan_check(&sc), 0);
  pf_stage_lists L;
  CHECK_INT(pf_transformer_lists(&sc, 0, &L), 0);
  const pf_kernel *py = find(&L.fwd, "layer-python");
  CHECK(py && py->host_s == 0); /* every module captured: none of the layer's Python is left */
  /* two replays a forward pass (attention, MLP); every kernel captured, FP8's casts with their GEMMs */
  double ops = 0, eager = 0;
  for (int i = 0; i < L.fwd.n; i++) {
    const pf_kernel *k = &L.fwd.k[i];
    ops += k->host_ops * (k->count > 0 ? k->count : 1.0);
    if (!k->graph && k->host_ops > 0 && strcmp(k->name, "fp8-amax-scale-update")) eager += 1;
  }
  CHECK_NEAR(ops - ops_of(&L.fwd, 0), 2.0, 0);
  CHECK_NEAR(eager, 0, 0);
  const pf_kernel *q = find(&L.fwd, "fp8-cast-transpose");
  CHECK(q && q->graph != 0);
  pf_stage_lists_free(&L);
}

static void rules(void) {
  static pf_scenario sc;
  setup(&sc, "qwen3-30b-a3b", PF_GRAPH_ATTN | PF_GRAPH_MOE_PREPROCESS);
  CHECK(pf_plan_check(&sc) == PF_EINVAL && strstr(pf_error_detail(), "moe_router"));
  setup(&sc, "qwen3-30b-a3b", PF_GRAPH_MOE); /* dropless: dynamic shapes */
  CHECK(pf_plan_check(&sc) == PF_EINVAL && strstr(pf_error_detail(), "drop-and-pad"));
  sc.workload.capacity_factor = 1.0;
  CHECK_INT(pf_plan_check(&sc), 0);
  setup(&sc, "llama3-8b", PF_GRAPH_MOE_ROUTER);
  CHECK(pf_plan_check(&sc) == PF_EINVAL && strstr(pf_error_detail(), "no experts"));
  setup(&sc, "llama3-8b", PF_GRAPH_ATTN);
  sc.framework = PF_FW_PYTORCH;
  CHECK(pf_plan_check(&sc) == PF_EINVAL && strstr(pf_error_detail(), "Megatron"));
  unsigned m = 0;
  CHECK_INT(pf_graph_modules_parse("attn, moe_router,moe_preprocess", &m), 0);
  CHECK(m == (PF_GRAPH_ATTN | PF_GRAPH_MOE_ROUTER | PF_GRAPH_MOE_PREPROCESS));
  char buf[PF_RECOMPUTE_MODS_MAX];
  CHECK(!strcmp(pf_graph_modules_name(m, buf, sizeof buf), "attn,moe_router,moe_preprocess"));
  CHECK(pf_graph_modules_parse("attention", &m) == PF_EINVAL && strstr(pf_error_detail(), "attention"));
  CHECK(pf_graph_modules_parse(",", &m) == PF_EINVAL);
}

int main(void) {
  moe_layer();
  dense_layer();
  rules();
  printf("%d passed, %d failed\n", pf_check_pass, pf_check_fail);
  return pf_check_fail != 0;
}
