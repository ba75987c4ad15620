/* coll_toy.c - a toy collective algorithm from outside model/, registered
 * through the same call as the built-in ones (pf_coll_algo_register,
 * comm/collalgo.h): docs/architecture.md's recipe "Adding a collective
 * algorithm", followed by a test.
 *
 * "toy" is the naive star all-reduce: every member sends its whole buffer S to
 * the group's first member, which reduces and sends S back to every member.
 * Two steps of one repetition; the root's port carries (p-1) S each way, so
 * it is never faster than the ring on large buffers.  It is not the
 * library's (the tuner does not offer it), so `--coll-algo auto` never picks
 * it; it runs where named.
 *
 * Built into test_plugin_coll (which registers it in main) and into
 * preflight-toycoll, the preflight command with this file linked in, where
 * TOY_AUTOREGISTER registers it before main runs. */
#include "coll_toy.h"

static int build_star(const pf_topology *t, pf_coll_pattern *pat, pf_coll_kind kind, double bytes, const int *groups,
                      int ngroups, int p) {
  (void)kind; /* all-reduce only */
  for (int dir = 0; dir < 2; dir++) { /* reduce to the root, then broadcast from it */
    int inter = 0;
    for (int i = 1; i < p; i++) inter |= pf_topology_node_of(t, groups[i]) != pf_topology_node_of(t, groups[0]);
    pf_coll_step *st = pf_coll_step_add(pat, 1, 1.0, inter ? 0.0 : 1.0, inter ? 1.0 : 0.0);
    if (!st) return -1;
    for (int g = 0; g < ngroups; g++) {
      const int *M = groups + (size_t)g * p;
      for (int i = 1; i < p; i++)
        if (pf_coll_flow_add(st, dir == 0 ? M[i] : M[0], dir == 0 ? M[0] : M[i], bytes) < 0) return -1;
    }
  }
  return 0;
}

const pf_coll_algo_desc pf_coll_algo_toy = {
    .name = "toy",
    .summary = "toy star all-reduce through the first rank (tests/plugin_coll)",
    .kinds = PF_COLL_KIND_BIT(PF_ALLREDUCE),
    .tuner = false,
    .build = build_star,
};

#ifdef TOY_AUTOREGISTER
#include <stdio.h>
#include <stdlib.h>

__attribute__((constructor)) static void register_toy(void) {
  if (pf_coll_algo_register(&pf_coll_algo_toy) < 0) {
    fprintf(stderr, "preflight-toycoll: registering \"toy\" failed\n");
    exit(1);
  }
}
#endif
