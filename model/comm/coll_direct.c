/* coll_direct.c - direct sends, for all-to-all and send/receive (collalgo.h;
 * docs/communication.md section 4): all-to-all in one step, every member
 * sends S/p to every other at once (destinations rotated, as NCCL's
 * all-to-all posts them), per-rank traffic (p-1)/p S; send/receive
 * (nccl-tests' sendrecv_perf), rank i sends S to rank i+1.
 *
 * The only algorithm for these two collectives, so the tuner's.  NCCL has no
 * latency row for it: it has the ring's.
 */
#include "collbuild.h"

static int build_direct(const pf_topology *t, pf_coll_pattern *pat, pf_coll_kind kind, double S, const int *G, int ng,
                        int p) {
  if (p < 2) return 0;
  int inter = 0;
  for (int i = 1; i < p; i++) inter |= pf_topology_node_of(t, G[i]) != pf_topology_node_of(t, G[0]);
  pf_coll_step *st;
  STEP_OR_FAIL(st, pat, 1, 1.0, inter ? 0.0 : 1.0, inter ? 1.0 : 0.0);
  for (int g = 0; g < ng; g++) {
    const int *M = G + (size_t)g * p;
    if (kind == PF_SENDRECV) {
      for (int i = 0; i < p; i++) FLOW_OR_FAIL(st, M[i], M[(i + 1) % p], S);
      continue;
    }
    for (int i = 0; i < p; i++) /* destinations in a rotated order, as NCCL's all-to-all posts them */
      for (int d = 1; d < p; d++) FLOW_OR_FAIL(st, M[i], M[(i + d) % p], S / p);
  }
  return 0;
}

const pf_coll_algo_desc pf_coll_algo_direct = {
    .name = "direct",
    .summary = "direct sends: all-to-all, send/receive",
    .kinds = PF_COLL_KIND_BIT(PF_ALLTOALL) | PF_COLL_KIND_BIT(PF_SENDRECV),
    .tuner = true,
    .build = build_direct,
    .tuner_row = PF_CCL_ROW_RING, /* the library's ring row (ccltuner.c) */
};
