/* coll_ring.c - the ring (Patarasuk & Yuan 2009; NCCL/RCCL's ring), for
 * all-reduce, reduce-scatter and all-gather (collalgo.h; docs/communication.md
 * section 4).
 *
 * p ranks in ring order, each repetition every rank sends S/p to the next;
 * all-reduce 2(p-1) repetitions, reduce-scatter and all-gather p-1.  Channels
 * as NCCL opens them: when a group holds k > 1 members on each of q > 1
 * nodes, one channel per NIC rail the node's members reach, channel c
 * entering every node at the member on rail c and leaving from the member
 * before it, so that each channel's inter-node hop uses its own NIC (PXN
 * routes it there, topology.c); on an NVLink/Infinity Fabric mesh a second
 * channel runs the node's members in the reverse order, as NCCL's rings use
 * both link directions.  Each channel carries S/nch.  Per-rank traffic
 * 2(p-1)/p S.  A repetition counts q/p network steps and 1 - q/p fabric
 * steps of the library (NCCL's nInterSteps).
 *
 * The tuner offers it for every collective it implements; the other
 * algorithms build it where they do not apply.
 */
#include "collbuild.h"

#include <string.h>

/* Across nodes: one channel per rail, strides 1 and k-1 on a mesh (both link
 * directions).  Inside one node on a mesh: every shift 1..k-1, so that each
 * GPU pair link carries one channel, the load NCCL's set of rings puts on a
 * fully connected mesh (its rings cover every link evenly); a shift that
 * does not generate the group (k = 4, shift 2) is not one ring, but it loads
 * the links as the rings that use those pairs do. */
void pf_coll_channels(const pf_topology *t, const int *block, int k, int q, pf_coll_chan *c) {
  memset(c, 0, sizeof *c);
  int seen[PF_MAX_GPN] = {0};
  for (int i = 0; i < k && q > 1; i++) {
    int r = pf_topology_rail_of(t, block[i]);
    if (!seen[r]) { seen[r] = 1; c->entry[c->nr++] = i; }
  }
  if (c->nr == 0) c->entry[c->nr++] = 0;
  c->stride[c->nst++] = 1;
  int mesh = t->mesh && !t->sparse; /* a sparse mesh: every channel follows the one GPU order its links allow */
  if (mesh && k >= 3 && q > 1) c->stride[c->nst++] = k - 1;
  for (int sft = 2; mesh && q == 1 && sft < k; sft++) c->stride[c->nst++] = sft;
  c->nch = c->nr > c->nst ? c->nr : c->nst;
}

/* Rings over the k x q blocks of every group (kind: reps), each channel
 * carrying share of S/p per flow per repetition. */
static int ring_channels(const pf_topology *t, pf_coll_pattern *pat, int reps, double per, const int *G, int ng, int p,
                         int k, double sw_intra, double sw_net) {
  int q = p / k;
  pf_coll_chan c;
  pf_coll_channels(t, G, k, q, &c);
  pf_coll_step *st;
  STEP_OR_FAIL(st, pat, reps, 1.0, sw_intra, sw_net);
  double b = per / c.nch;
  for (int g = 0; g < ng; g++) {
    const int *M = G + (size_t)g * p;
    for (int ch = 0; ch < c.nch; ch++) {
      int e0 = c.entry[ch % c.nr], s = c.stride[ch % c.nst];
      if (q == 1) { /* one node: every member sends to the one a shift ahead */
        for (int i = 0; i < k; i++) FLOW_OR_FAIL(st, M[i], M[(i + s) % k], b);
        continue;
      }
      for (int blk = 0; blk < q; blk++) {
        const int *B = M + blk * k;
        for (int i = 0; i + 1 < k; i++) FLOW_OR_FAIL(st, B[(e0 + i * s) % k], B[(e0 + (i + 1) * s) % k], b);
        int exit = B[(e0 + (k - 1) * s) % k];
        const int *N = M + ((blk + 1) % q) * k;
        FLOW_OR_FAIL(st, exit, N[e0], b); /* q == 1: closes the node's ring */
      }
    }
  }
  return 0;
}

int pf_coll_ring_build(const pf_topology *t, pf_coll_pattern *pat, pf_coll_kind kind, double S, const int *G, int ng,
                       int p) {
  if (p < 2) return 0;
  int reps = (kind == PF_ALLREDUCE ? 2 : 1) * (p - 1);
  int k = pf_coll_members_per_node(t, G, ng, p);
  if (k >= 1) {
    int q = p / k;
    return ring_channels(t, pat, reps, S / p, G, ng, p, k, 1.0 - (double)(q > 1 ? q : 0) / p,
                         (double)(q > 1 ? q : 0) / p);
  }
  /* irregular group: one channel in member order */
  int inter = 0;
  for (int i = 0; i < p; i++)
    inter += pf_topology_node_of(t, G[i]) != pf_topology_node_of(t, G[(i + 1) % p]);
  pf_coll_step *st;
  STEP_OR_FAIL(st, pat, reps, 1.0, 1.0 - (double)inter / p, (double)inter / p);
  for (int g = 0; g < ng; g++)
    for (int i = 0; i < p; i++) FLOW_OR_FAIL(st, G[g * p + i], G[g * p + (i + 1) % p], S / p);
  return 0;
}

int pf_coll_intra_rings(const pf_topology *t, pf_coll_pattern *pat, double S, const int *G, int ng, int p, int k) {
  int q = p / k;
  pf_coll_chan c;
  pf_coll_channels(t, G, k, 1, &c);
  pf_coll_step *st;
  STEP_OR_FAIL(st, pat, k - 1, 1.0, 1.0, 0.0);
  for (int g = 0; g < ng; g++)
    for (int blk = 0; blk < q; blk++) {
      const int *B = G + (size_t)g * p + blk * k;
      for (int ch = 0; ch < c.nch; ch++)
        for (int i = 0; i < k; i++)
          FLOW_OR_FAIL(st, B[i], B[(i + c.stride[ch % c.nst]) % k], S / k / c.nch);
    }
  return 0;
}

const pf_coll_algo_desc pf_coll_algo_ring = {
    .name = "ring",
    .summary = "ring, one channel per NIC rail (NCCL/RCCL; Patarasuk & Yuan 2009)",
    .kinds = PF_COLL_KIND_BIT(PF_ALLREDUCE) | PF_COLL_KIND_BIT(PF_REDUCE_SCATTER) | PF_COLL_KIND_BIT(PF_ALLGATHER),
    .tuner = true,
    .build = pf_coll_ring_build,
    .tuner_row = PF_CCL_ROW_RING, /* the library's ring row (ccltuner.c) */
};
