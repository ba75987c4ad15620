/* coll_nvls.c - NVLS (NVLink SHARP, NCCL >= 2.17), all-reduce inside an
 * NVSwitch node (collalgo.h; docs/communication.md section 4): every GPU's
 * shard is reduced in the switch (multimem.ld_reduce) and multicast back
 * (multimem.st): each GPU sends S + S/k to the switch and receives S/k + S,
 * so the bus bandwidth bound is 2(k-1)/(k+1) x its port, times the machine's
 * measured NVLS share (node.fabric.nvls_efficiency).
 *
 * The tuner offers it for all-reduce on one node whose switch reduces; NCCL
 * runs it with the Simple protocol only.
 */
#include "collbuild.h"

/* NCCL's NVLSTree row is not modelled (ccltuner.c holds the NVLS row per version). */
static int build_nvls(const pf_topology *t, pf_coll_pattern *pat, pf_coll_kind kind, double S, const int *G, int ng,
                      int p) {
  (void)kind; /* all-reduce only */
  int k = pf_coll_members_per_node(t, G, ng, p);
  if (!t->nvls || k != p) { pat->algo = PF_COLL_RING; return pf_coll_ring_build(t, pat, PF_ALLREDUCE, S, G, ng, p); }
  pf_coll_step *st;
  STEP_OR_FAIL(st, pat, 1, 2.0, 1.0, 0.0);
  /* the switch's reduction and multicast reach nvls_scale of what plain NVLink traffic reaches on the port
   * (machine file, measured): charged as that many more bytes */
  double b = S * (1.0 + 1.0 / k) / (t->nvls_scale > 0 ? t->nvls_scale : 1.0);
  for (int g = 0; g < ng; g++)
    for (int i = 0; i < p; i++) {
      int gpu = G[g * p + i], sw = pf_topology_switch_ep(t, pf_topology_node_of(t, gpu));
      FLOW_OR_FAIL(st, gpu, sw, b);
      FLOW_OR_FAIL(st, sw, gpu, b);
    }
  return 0;
}

static bool nvls_applies(const pf_topology *t, pf_coll_kind kind, const pf_coll_shape *s) {
  (void)kind;
  return t->nvls && s->q == 1 && s->p > 1;
}

const pf_coll_algo_desc pf_coll_algo_nvls = {
    .name = "nvls",
    .summary = "NVLink SHARP: all-reduce in the NVSwitch of one node (NCCL >= 2.17)",
    .kinds = PF_COLL_KIND_BIT(PF_ALLREDUCE),
    .tuner = true,
    .applies = nvls_applies,
    .build = build_nvls,
    .tuner_row = PF_CCL_ROW_NVLS, /* NCCL's NVLS row of the machine's version (ccltuner.c) */
    .simple_only = true,
};
