/* graphs.c - what Megatron-Core's partial CUDA graphs (--cuda-graph-modules; job/graphmods.c) spare the host.
 *
 * A captured module's kernels are replayed by one graph launch: the host no longer dispatches them one by one
 * (kernel.c's per-operator cost) and no longer runs the module's Python.  So each captured module of a layer
 * pass keeps one operator, its replay, on its first kernel and none on the others (pf_graph_launches); the
 * layer's own Python (hostqueue.c, measured for whole layers) loses the captured modules' share
 * (pf_graph_mark).  What stays eager stays as it was: in a dropless MoE layer the tokens-per-expert
 * synchronisation, the dispatch, permute, the routed experts' grouped GEMMs (one operator per local expert)
 * and unpermute, as the Megatron-Core DeepSeek-V3 GB200 write-up finds them ("only the routed experts part
 * still has some CPU overhead" under --cuda-graph-scope attn moe_router moe_preprocess).
 *
 * The Python share.  The measured per-layer Python (hostqueue.c: 1.69 / 1.14 ms a dense layer pass forward /
 * backward, 3.13 / 1.61 ms a MoE one) was not split by module; it is apportioned by the layer's kernels, each
 * module's share being its share of the layer's kernel entries (a grouped GEMM one entry; the dispatcher's
 * preprocessing, which has no kernel of its own here, one), on the reading that a module's Python grows
 * with the operators it issues.  For a GQA MoE layer under attn,moe_router,moe_preprocess that keeps 6 of 17
 * entries, 35 % of the Python; the same measurement counted in launches (51 a dense layer, 97 a MoE layer
 * without experts, of which the attention's ~30 at most) keeps between 30 % and 40 %.
 */
#include "compute.h"

#include <string.h>

static bool is(const char *name, const char *const *set) {
  for (int i = 0; set[i]; i++) {
    size_t n = strlen(set[i]);
    if (set[i][n - 1] == '-' ? strncmp(name, set[i], n) == 0 : strcmp(name, set[i]) == 0) return true;
  }
  return false;
}

/* The module a layer's forward kernel belongs to, as a PF_GRAPH_* bit, if the scenario captures it (0: eager);
 * kernel names: compute.c layer_forward, moelayer.c ("x-" names a prefix). */
static unsigned module_of(const char *name, bool moe, unsigned mods) {
  static const char *const attn[] = {"norm1", "qkv", "proj", "rotary", "bias", "bias-dropout-add1",
                                     "flash-attention", "scores", "context", "scale-mask-softmax",
                                     "attention-dropout", "mla-", NULL};
  static const char *const mlp[] = {"norm2", "fc1", "fc2", "activation", "bias-dropout-add2", NULL};
  static const char *const router[] = {"norm2", "router", "router-topk", "shared-", NULL};
  static const char *const experts[] = {"permute", "experts-", "unpermute", "bias-dropout-add2", NULL};
  if (!name) return 0;
  if (is(name, attn)) return mods & PF_GRAPH_ATTN;
  if (!moe) return is(name, mlp) ? mods & PF_GRAPH_MLP : 0;
  if (mods & PF_GRAPH_MOE) return is(name, router) || is(name, experts) ? PF_GRAPH_MOE : 0;
  return is(name, router) ? mods & PF_GRAPH_MOE_ROUTER : 0;
}

static bool counted(const pf_kernel *k) { /* a kernel entry of the layer's own (not its Python or a sync) */
  return !(k->kind == PF_KERNEL_FIXED && k->sync) && !pf_kernel_is_layer_python(k);
}

double pf_graph_mark(const pf_scenario *sc, bool moe, pf_kernel_list *lf, pf_kernel_list *core) {
  unsigned mods = sc->graph_modules;
  pf_host_costs hc;
  pf_host_costs_get(sc, &hc);
  if (!mods || !hc.eager) return 1.0;
  double all = 0, captured = 0;
  pf_kernel_list *lists[2] = {lf, core};
  for (int j = 0; j < 2; j++)
    for (int i = 0; i < lists[j]->n; i++) {
      pf_kernel *k = &lists[j]->k[i];
      k->graph = (unsigned char)module_of(k->name, moe, mods);
      if (!counted(k)) continue;
      all += 1;
      captured += k->graph != 0;
    }
  if (moe && sc->workload.capacity_factor <= 0) { /* the dispatcher's preprocessing (MoELayer.preprocess) */
    all += 1;
    captured += (mods & PF_GRAPH_MOE_PREPROCESS) != 0;
  }
  double keep = all > 0 ? 1.0 - captured / all : 1.0;
  for (int i = 0; i < lf->n; i++)
    if (pf_kernel_is_layer_python(&lf->k[i])) lf->k[i].host_s *= keep;
  return keep;
}

void pf_graph_launches(pf_kernel_list *l) {
  unsigned seen = 0;
  for (int i = 0; i < l->n; i++) {
    pf_kernel *k = &l->k[i];
    if (!k->graph) continue;
    k->host_ops = (seen & k->graph) ? 0.0 : 1.0; /* the module's replay, on its first kernel */
    seen |= k->graph;
  }
}
