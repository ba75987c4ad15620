/* coll_hier.c - the hierarchical (Horovod / 2-D) scheme, for all-reduce,
 * reduce-scatter and all-gather (collalgo.h; docs/communication.md section
 * 4): an intra-node reduce-scatter ring over the k members, an inter-node
 * ring per local index on S/k bytes (one ring per rail), an intra-node
 * all-gather.  Per node the NICs carry 2(q-1)/q S.  The phases are costed one
 * after the other (NCCL would pipeline chunks across them): pessimistic by up
 * to the shorter phases' time.
 *
 * Not an NCCL algorithm: costed when named or under --coll-algo best, on
 * groups of k > 1 members on each of q > 1 nodes; NCCL has no latency row for
 * it, so it has the ring's.
 */
#include "collbuild.h"

static int build_hier(const pf_topology *t, pf_coll_pattern *pat, pf_coll_kind kind, double S, const int *G, int ng,
                      int p) {
  int k = pf_coll_members_per_node(t, G, ng, p);
  if (k == 0 || k == p || k == 1) { pat->algo = PF_COLL_RING; return pf_coll_ring_build(t, pat, kind, S, G, ng, p); }
  int q = p / k;
  if (kind != PF_ALLGATHER && pf_coll_intra_rings(t, pat, S, G, ng, p, k) < 0) return -1;
  pf_coll_step *st;
  STEP_OR_FAIL(st, pat, (kind == PF_ALLREDUCE ? 2 : 1) * (q - 1), 1.0, 0.0, 1.0);
  for (int g = 0; g < ng; g++)
    for (int j = 0; j < k; j++)
      for (int c = 0; c < q; c++)
        FLOW_OR_FAIL(st, G[g * p + c * k + j], G[g * p + ((c + 1) % q) * k + j], S / ((double)k * q));
  if (kind != PF_REDUCE_SCATTER && pf_coll_intra_rings(t, pat, S, G, ng, p, k) < 0) return -1;
  return 0;
}

static bool hier_applies(const pf_topology *t, pf_coll_kind kind, const pf_coll_shape *s) {
  (void)t;
  (void)kind;
  return s->k > 1 && s->q > 1;
}

const pf_coll_algo_desc pf_coll_algo_hier = {
    .name = "hierarchical",
    .summary = "intra-node reduce-scatter, inter-node ring per local rank, intra-node all-gather (Horovod / 2-D)",
    .kinds = PF_COLL_KIND_BIT(PF_ALLREDUCE) | PF_COLL_KIND_BIT(PF_REDUCE_SCATTER) | PF_COLL_KIND_BIT(PF_ALLGATHER),
    .applies = hier_applies,
    .build = build_hier,
    .tuner_row = PF_CCL_ROW_RING, /* the library's ring row (ccltuner.c) */
};
