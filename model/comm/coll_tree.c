/* coll_tree.c - the double binary tree (Sanders, Speck & Traeff 2009; NCCL
 * >= 2.4), all-reduce across nodes (collalgo.h; docs/communication.md
 * section 4).
 *
 * Per channel an intra-node chain from the node's leader (the member on the
 * channel's rail) and two binary trees over the leaders as NCCL builds them
 * (ncclGetBtree / ncclGetDtree: in-order, edges at level L joining nodes 2^L
 * apart; the second tree mirrored or shifted), each carrying half of the
 * channel's share, reduce up and broadcast down pipelined: every edge streams
 * at once, with 2 x (depth + chain) latency terms; a repetition counts
 * 2 depth network and 2 (k-1) fabric steps of the library.  An internal node
 * moves 2S per direction, as the ring; at 2 nodes S.
 *
 * The tuner offers it across nodes for more than 2 ranks and costs it as
 * NCCL's model does: its own latency, the ring's bandwidth / 0.92
 * (tuning.cc: "busBw * .92" for the tree; the tree's algorithm bandwidth is
 * half its bus bandwidth, as the ring's is for large groups; NVIDIA/nccl
 * src/graph/tuning.cc at v2.23.4-1, "busBw*.92" for NCCL_ALGO_TREE).
 */
#include "collbuild.h"

#include <math.h>

/* NCCL's binary tree over n node leaders (graph/trees.cc ncclGetBtree): node r's parent is r with its lowest
 * set bit cleared and the next one set (or just cleared past the end); -1 for the root 0.  Edges at level L
 * join nodes 2^L apart, so most of them are between neighbouring nodes. */
static int btree_parent(int n, int r) {
  if (r == 0) return -1;
  int bit = 1;
  while (bit < n && !(bit & r)) bit <<= 1;
  int up = (r ^ bit) | (bit << 1);
  return up >= n ? (r ^ bit) : up;
}

/* The second tree of the double binary tree (ncclGetDtree): the mirror image for an even number of nodes,
 * the first tree shifted by one for an odd number. */
static int dtree_parent(int n, int r) {
  if (n % 2 == 0) {
    int u = btree_parent(n, n - 1 - r);
    return u < 0 ? -1 : n - 1 - u;
  }
  int u = btree_parent(n, (r - 1 + n) % n);
  return u < 0 ? -1 : (u + 1) % n;
}

static int build_tree(const pf_topology *t, pf_coll_pattern *pat, pf_coll_kind kind, double S, const int *G, int ng,
                      int p) {
  (void)kind; /* all-reduce only */
  int k = pf_coll_members_per_node(t, G, ng, p);
  if (k == 0) k = 1;
  int q = p / k, depth = 0;
  if (q < 2) { pat->algo = PF_COLL_RING; return pf_coll_ring_build(t, pat, PF_ALLREDUCE, S, G, ng, p); }
  while ((2 << depth) <= q) depth++; /* floor(log2 q) */
  pf_coll_chan c;
  pf_coll_channels(t, G, k, q, &c);
  int nch = c.nr;
  pf_coll_step *st;
  STEP_OR_FAIL(st, pat, 1, fmax(1.0, 2.0 * (depth + k - 1)), 2.0 * (k - 1), 2.0 * depth);
  double b = S / nch;
  for (int g = 0; g < ng; g++) {
    const int *M = G + (size_t)g * p;
    for (int ch = 0; ch < nch; ch++) {
      int e = c.entry[ch];
#define MEMBER(node, i) M[(node) * k + ((e) + (i)) % k]
      for (int n = 0; n < q; n++) /* chain from the node's leader: reduce up, broadcast down */
        for (int i = 0; i + 1 < k; i++) {
          FLOW_OR_FAIL(st, MEMBER(n, i + 1), MEMBER(n, i), b);
          FLOW_OR_FAIL(st, MEMBER(n, i), MEMBER(n, i + 1), b);
        }
      for (int n = 0; n < q; n++) { /* the two trees, half of the channel's share each, both directions */
        int u1 = btree_parent(q, n), u2 = dtree_parent(q, n);
        if (u1 >= 0) {
          FLOW_OR_FAIL(st, MEMBER(n, 0), MEMBER(u1, 0), b / 2);
          FLOW_OR_FAIL(st, MEMBER(u1, 0), MEMBER(n, 0), b / 2);
        }
        if (u2 >= 0) {
          FLOW_OR_FAIL(st, MEMBER(n, 0), MEMBER(u2, 0), b / 2);
          FLOW_OR_FAIL(st, MEMBER(u2, 0), MEMBER(n, 0), b / 2);
        }
      }
#undef MEMBER
    }
  }
  return 0;
}

static bool tree_applies(const pf_topology *t, pf_coll_kind kind, const pf_coll_shape *s) {
  (void)t;
  (void)kind;
  return s->q > 1 && s->p > 2;
}

const pf_coll_algo_desc pf_coll_algo_tree = {
    .name = "tree",
    .summary = "double binary tree, all-reduce across nodes (NCCL >= 2.4; Sanders, Speck & Traeff 2009)",
    .kinds = PF_COLL_KIND_BIT(PF_ALLREDUCE),
    .tuner = true,
    .applies = tree_applies,
    .build = build_tree,
    .tuner_row = PF_CCL_ROW_TREE, /* NCCL's Tree row of the machine's version (ccltuner.c) */
    .tuner_ring_busbw = 0.92,
};
