/* collbuild.h - what the built-in algorithms' builders share (private to the
 * communication module): the shape of a call's groups, NCCL's channels, and
 * the ring, which the other algorithms build where they do not apply and use
 * as a phase (hierarchical, CollNet).  Algorithms: collalgo.h.
 */
#ifndef PREFLIGHT_COLLBUILD_H
#define PREFLIGHT_COLLBUILD_H

#include "collalgo.h"

/* In a builder: append a step / a flow, or return -1 when out of memory. */
#define STEP_OR_FAIL(st, pat, reps, lm, si, sn) \
  do { if (!((st) = pf_coll_step_add((pat), (reps), (lm), (si), (sn)))) return -1; } while (0)
#define FLOW_OR_FAIL(st, a, b, by) \
  do { if (pf_coll_flow_add((st), (a), (b), (by)) < 0) return -1; } while (0)

/* Members per node if every group is made of whole, consecutive per-node
 * blocks of the same size k on distinct nodes; 0 otherwise (collective.c). */
int pf_coll_members_per_node(const pf_topology *t, const int *G, int ng, int p);

/* Channel layout of a block of k members (group 0's first node) on q nodes:
 * entry positions, one per distinct NIC rail (in block order), and the
 * strides of the intra-node order (coll_ring.c). */
typedef struct pf_coll_chan {
  int nr, entry[PF_MAX_GPN];
  int nst, stride[PF_MAX_GPN];
  int nch;
} pf_coll_chan;
void pf_coll_channels(const pf_topology *t, const int *block, int k, int q, pf_coll_chan *c);

/* The ring of `kind` over the groups (coll_ring.c), and a ring over each
 * node's k members only, k-1 repetitions of S/k (a phase of hierarchical and
 * CollNet).  0 or -1 (out of memory). */
int pf_coll_ring_build(const pf_topology *t, pf_coll_pattern *pat, pf_coll_kind kind, double S, const int *G, int ng,
                       int p);
int pf_coll_intra_rings(const pf_topology *t, pf_coll_pattern *pat, double S, const int *G, int ng, int p, int k);


#endif
