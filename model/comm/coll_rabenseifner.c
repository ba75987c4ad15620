/* coll_rabenseifner.c - Rabenseifner's algorithm (Thakur, Rabenseifner &
 * Gropp 2005), for all-reduce, reduce-scatter and all-gather (collalgo.h;
 * docs/communication.md section 4): recursive halving reduce-scatter and
 * recursive doubling all-gather over the largest power of two p' <= p, the
 * remaining ranks folded in before and after.  Per-rank traffic
 * 2(p'-1)/p' S; each step is one library step, on the fabric or over the
 * network as its partners lie.
 *
 * Not an NCCL algorithm: costed when named or under --coll-algo best, for
 * more than 2 ranks; NCCL has no latency row for it, so it has the ring's.
 */
#include "collbuild.h"

static int build_rab(const pf_topology *t, pf_coll_pattern *pat, pf_coll_kind kind, double S, const int *G, int ng,
                     int p) {
  if (p < 2) return 0;
  int p2 = 1;
  while (2 * p2 <= p) p2 *= 2;
  int r = p - p2;
  pf_coll_step *st;
#define NET(a, b) (pf_topology_node_of(t, (a)) != pf_topology_node_of(t, (b)))
#define RSTEP(a, b) STEP_OR_FAIL(st, pat, 1, 1.0, NET(a, b) ? 0.0 : 1.0, NET(a, b) ? 1.0 : 0.0)
  if (r > 0 && kind != PF_ALLGATHER) {
    RSTEP(G[p2], G[0]);
    for (int g = 0; g < ng; g++)
      for (int i = 0; i < r; i++) FLOW_OR_FAIL(st, G[g * p + p2 + i], G[g * p + i], S);
  }
  if (kind != PF_ALLGATHER)
    for (int d = p2 / 2; d >= 1; d /= 2) {
      RSTEP(G[0], G[d]);
      for (int g = 0; g < ng; g++)
        for (int i = 0; i < p2; i++) FLOW_OR_FAIL(st, G[g * p + i], G[g * p + (i ^ d)], S * d / p2);
    }
  if (kind != PF_REDUCE_SCATTER)
    for (int d = 1; d < p2; d *= 2) {
      RSTEP(G[0], G[d]);
      for (int g = 0; g < ng; g++)
        for (int i = 0; i < p2; i++) FLOW_OR_FAIL(st, G[g * p + i], G[g * p + (i ^ d)], S * d / p2);
    }
  if (r > 0 && kind != PF_REDUCE_SCATTER) {
    RSTEP(G[0], G[p2]);
    for (int g = 0; g < ng; g++)
      for (int i = 0; i < r; i++) FLOW_OR_FAIL(st, G[g * p + i], G[g * p + p2 + i], S);
  }
#undef RSTEP
#undef NET
  return 0;
}

static bool rab_applies(const pf_topology *t, pf_coll_kind kind, const pf_coll_shape *s) {
  (void)t;
  (void)kind;
  return s->p > 2;
}

const pf_coll_algo_desc pf_coll_algo_rabenseifner = {
    .name = "rabenseifner",
    .summary = "recursive halving reduce-scatter, recursive doubling all-gather (Thakur, Rabenseifner & Gropp 2005)",
    .kinds = PF_COLL_KIND_BIT(PF_ALLREDUCE) | PF_COLL_KIND_BIT(PF_REDUCE_SCATTER) | PF_COLL_KIND_BIT(PF_ALLGATHER),
    .applies = rab_applies,
    .build = build_rab,
    .tuner_row = PF_CCL_ROW_RING, /* the library's ring row (ccltuner.c) */
};
