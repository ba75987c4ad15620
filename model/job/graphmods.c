/* graphmods.c - Megatron-Core's partial CUDA graphs (--cuda-graph-modules; plan.h): which modules of each layer
 * are captured and replayed as graphs, and Megatron's rules for them.  compute/graphs.c prices what the host
 * is spared.
 *
 * Source: Megatron-LM docs/user-guide/features/cuda_graph.md and megatron/core/transformer/transformer_layer.py
 * (NVIDIA/Megatron-LM d98e8a64): --cuda-graph-impl local|transformer_engine with --cuda-graph-modules (called
 * --cuda-graph-scope before) attn, mlp, moe, moe_router, moe_preprocess:
 *   attn            TransformerLayer._forward_attention(): input_layernorm, self_attention, its bias-dropout-add
 *   mlp             _forward_mlp() of dense layers: pre_mlp_layernorm, the MLP, its bias-dropout-add
 *   moe             _forward_mlp() of MoE layers, "drop-and-pad only" (no dynamic shapes)
 *   moe_router      pre_mlp_layernorm, the router, and the shared experts unless they overlap
 *   moe_preprocess  MoELayer.preprocess(), "must be paired with moe_router"
 * The Megatron-Core DeepSeek-V3 GB200 write-up (docs/discussions/deepseek-v3-gb200-optimization) runs
 * "--cuda-graph-impl transformer_engine --cuda-graph-scope attn moe_router moe_preprocess": the routed experts
 * stay eager, since dropless routing gives them dynamic shapes.  An empty list is the default here (no
 * capture); Megatron's whole-layer capture of an empty list with an impl set is --host-overhead graphs.
 */
#include "job.h"

#include "core/core.h"

#include <stdio.h>
#include <string.h>

static const struct {
  const char *name;
  unsigned bit;
} gmods[] = {
    {"attn", PF_GRAPH_ATTN},
    {"mlp", PF_GRAPH_MLP},
    {"moe", PF_GRAPH_MOE},
    {"moe_router", PF_GRAPH_MOE_ROUTER},
    {"moe_preprocess", PF_GRAPH_MOE_PREPROCESS},
};
#define NGMOD ((int)(sizeof gmods / sizeof gmods[0]))

int pf_graph_modules_parse(const char *s, unsigned *out) {
  char buf[PF_RECOMPUTE_MODS_MAX];
  if (strlen(s) >= sizeof buf)
    return pf_error_set(PF_EINVAL, "--cuda-graph-modules: at most %d characters", PF_RECOMPUTE_MODS_MAX - 1);
  snprintf(buf, sizeof buf, "%s", s);
  unsigned m = 0;
  for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
    int i = 0;
    while (i < NGMOD && strcmp(t, gmods[i].name) != 0) i++;
    if (i == NGMOD)
      return pf_error_set(PF_EINVAL, "--cuda-graph-modules: \"%s\" is not a module; valid: attn, mlp, moe, "
                          "moe_router, moe_preprocess (Megatron-Core's names)", t);
    m |= gmods[i].bit;
  }
  if (!m) return pf_error_set(PF_EINVAL, "--cuda-graph-modules: give at least one module, e.g. attn,moe_router");
  *out = m;
  return 0;
}

const char *pf_graph_modules_name(unsigned m, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (int i = 0; i < NGMOD; i++)
    if (m & gmods[i].bit) n += (size_t)snprintf(buf + n, n < len ? len - n : 0, "%s%s", n ? "," : "", gmods[i].name);
  return buf;
}

int pf_plan_check_graphs(const pf_scenario *sc) {
  unsigned m = sc->graph_modules;
  const pf_workload *w = &sc->workload;
  if (!m) return 0;
  if (w->kind != PF_WL_TRANSFORMER || (sc->framework != PF_FW_AUTO && sc->framework != PF_FW_MEGATRON))
    return pf_error_set(PF_EINVAL, "--cuda-graph-modules: Megatron-Core's partial CUDA graphs apply to a "
                        "transformer trained with Megatron (model %s)", w->id);
  if ((m & PF_GRAPH_MOE_PREPROCESS) && !(m & PF_GRAPH_MOE_ROUTER))
    return pf_error_set(PF_EINVAL, "--cuda-graph-modules moe_preprocess must be paired with moe_router, as "
                        "Megatron-Core requires");
  if ((m & (PF_GRAPH_MOE | PF_GRAPH_MOE_ROUTER | PF_GRAPH_MOE_PREPROCESS)) && !pf_workload_is_moe(w))
    return pf_error_set(PF_EINVAL, "--cuda-graph-modules moe, moe_router, moe_preprocess: model %s has no experts",
                        w->id);
  if ((m & PF_GRAPH_MOE) && !(w->capacity_factor > 0))
    return pf_error_set(PF_EINVAL, "--cuda-graph-modules moe captures drop-and-pad MoE layers only "
                        "(--moe-capacity-factor): dropless experts have dynamic shapes; capture attn,moe_router,"
                        "moe_preprocess instead");
  return 0;
}
