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

/* Megatron's module names, bit i of PF_GRAPH_* for the i-th */
static const char *const gmods[] = {"attn", "mlp", "moe", "moe_router", "moe_preprocess"};
#define NGMOD ((int)(sizeof gmods / sizeof gmods[0]))
_Static_assert(PF_GRAPH_MOE_PREPROCESS == 1u << (NGMOD - 1), "gmods[] in the order of the PF_GRAPH_* bits");

int pf_graph_modules_parse(const char *s, unsigned *out) {
  return pf_name_bits_parse("--cuda-graph-modules", gmods, NGMOD, "attn, mlp, moe, moe_router, moe_preprocess "
                            "(Megatron-Core's names)", "attn,moe_router", s, out);
}

const char *pf_graph_modules_name(unsigned m, char *buf, size_t len) {
  return pf_name_bits_join(m, gmods, NGMOD, buf, len);
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
