/* coll_collnet.c - CollNet (InfiniBand SHARP), all-reduce across nodes
 * (collalgo.h; docs/communication.md section 4): intra-node reduce-scatter,
 * each member's S/k up to its rail's first switch and the reduced S/k back
 * (the switches reduce), intra-node all-gather: S up and S down per node
 * instead of the ring's 2(q-1)/q S each way.  The phases are costed one after
 * the other (NCCL would pipeline chunks across them): pessimistic by up to
 * the shorter phases' time.
 *
 * The tuner offers it for all-reduce across nodes where the machine says the
 * switches reduce (network.in_network_reduction); NCCL runs it with the
 * Simple protocol only.
 */
#include "collbuild.h"

/* NCCL's CollNetChain row is not modelled (ccltuner.c holds the CollNetDirect row per version). */
static int build_collnet(const pf_topology *t, pf_coll_pattern *pat, pf_coll_kind kind, double S, const int *G,
                         int ng, int p) {
  (void)kind; /* all-reduce only */
  int k = pf_coll_members_per_node(t, G, ng, p);
  if (!t->innet || k == 0 || k == p) {
    pat->algo = PF_COLL_RING;
    return pf_coll_ring_build(t, pat, PF_ALLREDUCE, S, G, ng, p);
  }
  if (k > 1 && pf_coll_intra_rings(t, pat, S, G, ng, p, k) < 0) return -1;
  pf_coll_step *st;
  STEP_OR_FAIL(st, pat, 1, 2.0, 0.0, 2.0);
  for (int g = 0; g < ng; g++)
    for (int i = 0; i < p; i++) {
      int gpu = G[g * p + i];
      int ep = pf_topology_net_ep(t, pf_topology_node_of(t, gpu), pf_topology_rail_of(t, gpu));
      FLOW_OR_FAIL(st, gpu, ep, S / k);
      FLOW_OR_FAIL(st, ep, gpu, S / k);
    }
  if (k > 1 && pf_coll_intra_rings(t, pat, S, G, ng, p, k) < 0) return -1;
  return 0;
}

static bool collnet_applies(const pf_topology *t, pf_coll_kind kind, const pf_coll_shape *s) {
  (void)kind;
  return t->innet && s->q > 1;
}

const pf_coll_algo_desc pf_coll_algo_collnet = {
    .name = "collnet",
    .summary = "InfiniBand SHARP: all-reduce in the first switch, across nodes",
    .kinds = PF_COLL_KIND_BIT(PF_ALLREDUCE),
    .tuner = true,
    .applies = collnet_applies,
    .build = build_collnet,
    .tuner_row = PF_CCL_ROW_COLLNET, /* NCCL's CollNetDirect row of the machine's version (ccltuner.c) */
    .simple_only = true,
};
