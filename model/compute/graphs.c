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
 *
 * Where the Python runs.  The layer's Python is issued at its start, where the GPU's lead over the host hides
 * it, except in a dropless MoE layer: Megatron-Core's MoELayer.forward cannot go past its token dispatcher
 * until the tokens per expert are on the host (the all-to-all dispatcher's input splits, the flex dispatcher's
 * received counts, the grouped GEMM's m_splits), so the Python of the dispatch, permute, the experts, unpermute
 * and the shared experts after them runs after the synchronisation, with the GPU's queue empty: the GPU waits
 * for it (pf_moe_python_after_sync).  Its share is the same rule's: the eager entries that follow the
 * synchronisation over all eager entries, 6 of 17 in a GQA MoE layer with or without the graphs above.  The
 * Megatron-Core DeepSeek-V3 GB200 write-up estimates what this costs its final recipe: removing the
 * synchronisation (and capturing the whole layer) is worth "at least a 10% additional performance gain", by a
 * proxy model (section 3.1); the model gives 7 % for that change on the write-up's recipe (6.58 s, 6.16 s
 * under whole-step graphs: checked, not fitted; docs/moe.md).
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

/* A MoE layer's routed experts, from the permutation to the MLP's bias-dropout-add, and its shared experts:
 * kernel names (compute.c layer_forward, moelayer.c; "x-" names a prefix). */
static const char *const experts[] = {"permute", "experts-", "unpermute", "bias-dropout-add2", NULL};
static const char *const shared[] = {"shared-", NULL};

/* The module a layer's forward kernel belongs to, as a PF_GRAPH_* bit, if the scenario captures it (0: eager);
 * kernel names: compute.c layer_forward, moelayer.c ("x-" names a prefix). */
static unsigned module_of(const char *name, bool moe, unsigned mods) {
  static const char *const attn[] = {"norm1", "qkv", "proj", "rotary", "bias", "bias-dropout-add1",
                                     "flash-attention", "flash-attention-swa", "scores", "context",
                                     "scale-mask-softmax", "attention-dropout", "mla-", NULL};
  static const char *const mlp[] = {"norm2", "fc1", "fc2", "activation", "bias-dropout-add2", NULL};
  static const char *const router[] = {"norm2", "router", "router-topk", NULL}; /* and the shared experts */
  if (!name) return 0;
  if (is(name, attn)) return mods & PF_GRAPH_ATTN;
  if (!moe) return is(name, mlp) ? mods & PF_GRAPH_MLP : 0;
  bool rt = is(name, router) || is(name, shared);
  if (mods & PF_GRAPH_MOE) return rt || is(name, experts) ? PF_GRAPH_MOE : 0;
  return rt ? mods & PF_GRAPH_MOE_ROUTER : 0;
}

static bool counted(const pf_kernel *k) { /* a kernel entry of the layer's own (not its Python or a sync) */
  return !(k->kind == PF_KERNEL_FIXED && k->sync) && !pf_kernel_is_layer_python(k) && !pf_kernel_is_moe_python(k);
}

/* The layer's kernel entries over which its Python is apportioned (each as its launches a layer), a dropless MoE
 * layer's dispatcher preprocessing (MoELayer.preprocess, no kernel of its own here) one of them: *all, *eager
 * those not captured under mods, and *post (with sync >= 0) the eager ones of lf after index sync that belong
 * to the part of a MoE layer that follows its synchronisation. */
static void entries(const pf_scenario *sc, bool moe, unsigned mods, const pf_kernel_list *lf,
                    const pf_kernel_list *core, int sync, double *all, double *eager, double *post) {
  *all = *eager = *post = 0;
  const pf_kernel_list *lists[2] = {lf, core};
  for (int j = 0; j < 2; j++)
    for (int i = 0; i < lists[j]->n; i++) {
      const pf_kernel *k = &lists[j]->k[i];
      if (!counted(k)) continue;
      double n = k->count > 0 ? k->count : 1.0; /* its launches a layer (the fused attention's windowed and full
                                                   * kernels share one between them: compute.c) */
      *all += n;
      if (k->graph) continue;
      *eager += n;
      *post += n * (sync >= 0 && j == 0 && i > sync && k->name && (is(k->name, experts) || is(k->name, shared)));
    }
  if (moe && sc->workload.capacity_factor <= 0) {
    *all += 1;
    *eager += (mods & PF_GRAPH_MOE_PREPROCESS) == 0;
  }
}

double pf_graph_mark(const pf_scenario *sc, bool moe, pf_kernel_list *lf, pf_kernel_list *core) {
  unsigned mods = sc->graph_modules;
  pf_host_costs hc;
  pf_host_costs_get(sc, &hc);
  if (!mods || !hc.eager) return 1.0;
  pf_kernel_list *lists[2] = {lf, core};
  for (int j = 0; j < 2; j++)
    for (int i = 0; i < lists[j]->n; i++) {
      pf_kernel *k = &lists[j]->k[i];
      k->graph = (unsigned char)module_of(k->name, moe, mods);
    }
  double all, eager, post;
  entries(sc, moe, mods, lf, core, -1, &all, &eager, &post);
  double keep = all > 0 ? eager / all : 1.0;
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

int pf_moe_python_after_sync(const pf_scenario *sc, bool moe, pf_kernel_list *lf, const pf_kernel_list *core) {
  if (!moe || sc->workload.capacity_factor > 0) return 0;
  int sync = -1, py = -1;
  for (int i = 0; i < lf->n; i++) {
    if (lf->k[i].kind == PF_KERNEL_FIXED && lf->k[i].sync) sync = i;
    if (pf_kernel_is_layer_python(&lf->k[i])) py = i;
  }
  if (sync < 0 || py < 0 || py > sync || lf->k[py].host_s <= 0) return 0;
  /* the eager entries, as pf_graph_mark counts them (its Python already scaled to them: a Python left means an
   * eager host, whose graphs pf_graph_mark applied), and those after the synchronisation */
  double all, eager, post;
  entries(sc, moe, sc->graph_modules, lf, core, sync, &all, &eager, &post);
  if (post <= 0 || eager <= 0) return 0;
  pf_kernel x = {.kind = PF_KERNEL_FIXED, .name = "moe-python", .host_s = lf->k[py].host_s * post / eager};
  lf->k[py].host_s -= x.host_s;
  int rc = pf_kernel_list_add(lf, &x); /* then moved to just after the synchronisation */
  if (rc) return rc;
  memmove(&lf->k[sync + 2], &lf->k[sync + 1], (size_t)(lf->n - 1 - (sync + 1)) * sizeof lf->k[0]);
  lf->k[sync + 1] = x;
  return 0;
}
