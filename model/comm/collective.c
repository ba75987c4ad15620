/* collective.c - collective algorithms as flow patterns (see collective.h;
 * costs in collcost.c, the library's choice in ccl.c).
 *
 * Algorithms (each a list of steps of concurrent flows; formulas and sources
 * in docs/communication.md section 4):
 *  - ring (Patarasuk & Yuan 2009; NCCL/RCCL's ring): p ranks in ring order,
 *    each repetition every rank sends S/p to the next; all-reduce 2(p-1)
 *    repetitions, reduce-scatter and all-gather p-1.  Channels as NCCL opens
 *    them: when a group holds k > 1 members on each of q > 1 nodes, one
 *    channel per NIC rail the node's members reach, channel c entering every
 *    node at the member on rail c and leaving from the member before it, so
 *    that each channel's inter-node hop uses its own NIC (PXN routes it there,
 *    topology.c); on an NVLink/Infinity Fabric mesh a second channel runs the
 *    node's members in the reverse order, as NCCL's rings use both link
 *    directions.  Each channel carries S/nch.  Per-rank traffic 2(p-1)/p S.
 *  - double binary tree (Sanders, Speck & Traeff 2009; NCCL >= 2.4, all-reduce
 *    across nodes): per channel an intra-node chain from the node's leader
 *    (the member on the channel's rail) and two binary trees over the leaders
 *    as NCCL builds them (ncclGetBtree / ncclGetDtree: in-order, edges at
 *    level L joining nodes 2^L apart; the second tree mirrored or shifted),
 *    each carrying half of the channel's share, reduce up and broadcast down
 *    pipelined: every edge streams at once, with 2 x (depth + chain) latency
 *    terms.
 *  - hierarchical (Horovod / 2-D): intra-node reduce-scatter ring over the k
 *    members, an inter-node ring per local index on S/k bytes (one ring per
 *    rail), intra-node all-gather.
 *  - Rabenseifner (Thakur, Rabenseifner & Gropp 2005): recursive halving
 *    reduce-scatter and recursive doubling all-gather over the largest power
 *    of two, the remaining ranks folded in before and after.
 *  - NVLS (NVLink SHARP, NCCL >= 2.17, all-reduce inside an NVSwitch node):
 *    every GPU's shard is reduced in the switch (multimem.ld_reduce) and
 *    multicast back (multimem.st): each GPU sends S + S/k to the switch and
 *    receives S/k + S, so the bus bandwidth bound is 2(k-1)/(k+1) x its port.
 *  - CollNet (InfiniBand SHARP, all-reduce across nodes): intra-node
 *    reduce-scatter, each member's S/k up to its rail's first switch and the
 *    reduced S/k back (the switches reduce), intra-node all-gather: S up and
 *    S down per node instead of the ring's 2(q-1)/q S each way.
 *  - direct: all-to-all, every member sends S/p to every other at once;
 *    send/receive (nccl-tests' sendrecv_perf), rank i sends S to rank i+1.
 */
#include "collective.h"

#include "ccl.h"
#include "core/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *kind_names[] = {"all-reduce", "reduce-scatter", "all-gather", "all-to-all", "send/receive"};
static const char *kind_ids[] = {"all_reduce", "reduce_scatter", "all_gather", "alltoall", "sendrecv"};

const char *pf_coll_kind_name(pf_coll_kind k) { return k < PF_COLL_NKINDS ? kind_names[k] : "?"; }
const char *pf_coll_kind_id(pf_coll_kind k) { return k < PF_COLL_NKINDS ? kind_ids[k] : "?"; }

int pf_coll_kind_parse(const char *s, pf_coll_kind *out) {
  for (int i = 0; i < PF_COLL_NKINDS; i++)
    if (strcasecmp(s, kind_ids[i]) == 0) { *out = (pf_coll_kind)i; return 0; }
  if (strcasecmp(s, "all_to_all") == 0) { *out = PF_ALLTOALL; return 0; }
  return pf_error_set(PF_EINVAL, "--op \"%s\": valid: all_reduce, all_gather, reduce_scatter, alltoall, sendrecv", s);
}

double pf_coll_busbw_factor(pf_coll_kind k, int p) {
  if (p < 1) return 0;
  switch (k) {
  case PF_ALLREDUCE: return 2.0 * (p - 1) / p;
  case PF_SENDRECV: return 1.0;
  default: return (double)(p - 1) / p;
  }
}

/* ---------- pattern construction ---------- */

void pf_coll_pattern_free(pf_coll_pattern *pat) {
  for (int i = 0; i < pat->nsteps; i++) free(pat->steps[i].flows);
  free(pat->steps);
  memset(pat, 0, sizeof *pat);
}

static pf_coll_step *new_step(pf_coll_pattern *pat, int reps, double lat_mult, double sw_intra, double sw_net) {
  if (pat->nsteps == pat->cap) {
    int cap = pat->cap ? 2 * pat->cap : 8;
    pf_coll_step *s = realloc(pat->steps, (size_t)cap * sizeof *s);
    if (!s) return NULL;
    pat->steps = s;
    pat->cap = cap;
  }
  pf_coll_step *st = &pat->steps[pat->nsteps++];
  memset(st, 0, sizeof *st);
  st->reps = reps;
  st->lat_mult = lat_mult;
  st->sw_intra = sw_intra;
  st->sw_net = sw_net;
  return st;
}

static int add_flow(pf_coll_step *st, int src, int dst, double bytes) {
  if (src == dst || bytes <= 0) return 0;
  if (st->nflows == st->cap) {
    int cap = st->cap ? 2 * st->cap : 64;
    pf_flow *f = realloc(st->flows, (size_t)cap * sizeof *f);
    if (!f) return -1;
    st->flows = f;
    st->cap = cap;
  }
  st->flows[st->nflows++] = (pf_flow){src, dst, bytes};
  return 0;
}

#define STEP_OR_FAIL(st, pat, reps, lm, si, sn) \
  do { if (!((st) = new_step((pat), (reps), (lm), (si), (sn)))) return -1; } while (0)
#define FLOW_OR_FAIL(st, a, b, by) \
  do { if (add_flow((st), (a), (b), (by)) < 0) return -1; } while (0)

/* Members per node if every group is made of whole, consecutive per-node
 * blocks of the same size k on distinct nodes; 0 otherwise. */
static int members_per_node(const pf_topology *t, const int *G, int ng, int p) {
  int k = 1;
  while (k < p && pf_topology_node_of(t, G[k]) == pf_topology_node_of(t, G[0])) k++;
  if (p % k != 0) return 0;
  for (int g = 0; g < ng; g++)
    for (int c = 0; c < p / k; c++) {
      int node = pf_topology_node_of(t, G[g * p + c * k]);
      for (int i = 1; i < k; i++)
        if (pf_topology_node_of(t, G[g * p + c * k + i]) != node) return 0;
      if (c > 0 && node == pf_topology_node_of(t, G[g * p + (c - 1) * k])) return 0;
    }
  return k;
}

/* Channel layout of a block of k members (group 0's first node): entry
 * positions, one per distinct NIC rail (in block order), and the strides of
 * the intra-node order.  Across nodes: 1, and k-1 on a mesh (both link
 * directions).  Inside one node on a mesh: every shift 1..k-1, so that each
 * GPU pair link carries one channel, the load NCCL's set of rings puts on a
 * fully connected mesh (its rings cover every link evenly); a shift that
 * does not generate the group (k = 4, shift 2) is not one ring, but it loads
 * the links as the rings that use those pairs do. */
typedef struct chan {
  int nr, entry[PF_MAX_GPN];
  int nst, stride[PF_MAX_GPN];
  int nch;
} chan;

static void channels(const pf_topology *t, const int *block, int k, int q, chan *c) {
  memset(c, 0, sizeof *c);
  int seen[PF_MAX_GPN] = {0};
  for (int i = 0; i < k && q > 1; i++) {
    int r = pf_topology_rail_of(t, block[i]);
    if (!seen[r]) { seen[r] = 1; c->entry[c->nr++] = i; }
  }
  if (c->nr == 0) c->entry[c->nr++] = 0;
  c->stride[c->nst++] = 1;
  if (t->mesh && k >= 3 && q > 1) c->stride[c->nst++] = k - 1;
  for (int sft = 2; t->mesh && q == 1 && sft < k; sft++) c->stride[c->nst++] = sft;
  c->nch = c->nr > c->nst ? c->nr : c->nst;
}

/* Rings over the k x q blocks of every group (kind: reps), each channel
 * carrying share of S/p per flow per repetition. */
static int ring_channels(const pf_topology *t, pf_coll_pattern *pat, int reps, double per, const int *G, int ng, int p,
                         int k, double sw_intra, double sw_net) {
  int q = p / k;
  chan c;
  channels(t, G, k, q, &c);
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

static int build_ring(const pf_topology *t, pf_coll_pattern *pat, pf_coll_kind kind, double S, const int *G, int ng,
                      int p) {
  if (p < 2) return 0;
  int reps = (kind == PF_ALLREDUCE ? 2 : 1) * (p - 1);
  int k = members_per_node(t, G, ng, p);
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

/* Ring over each node's k members only (hierarchical and CollNet phases). */
static int intra_rings(const pf_topology *t, pf_coll_pattern *pat, double S, const int *G, int ng, int p, int k) {
  int q = p / k;
  chan c;
  channels(t, G, k, 1, &c);
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

static int build_hier(const pf_topology *t, pf_coll_pattern *pat, pf_coll_kind kind, double S, const int *G, int ng,
                      int p) {
  int k = members_per_node(t, G, ng, p);
  if (k == 0 || k == p || k == 1) { pat->algo = PF_COLL_RING; return build_ring(t, pat, kind, S, G, ng, p); }
  int q = p / k;
  if (kind != PF_ALLGATHER && intra_rings(t, pat, S, G, ng, p, k) < 0) return -1;
  pf_coll_step *st;
  STEP_OR_FAIL(st, pat, (kind == PF_ALLREDUCE ? 2 : 1) * (q - 1), 1.0, 0.0, 1.0);
  for (int g = 0; g < ng; g++)
    for (int j = 0; j < k; j++)
      for (int c = 0; c < q; c++)
        FLOW_OR_FAIL(st, G[g * p + c * k + j], G[g * p + ((c + 1) % q) * k + j], S / ((double)k * q));
  if (kind != PF_REDUCE_SCATTER && intra_rings(t, pat, S, G, ng, p, k) < 0) return -1;
  return 0;
}

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

static int build_tree(const pf_topology *t, pf_coll_pattern *pat, double S, const int *G, int ng, int p) {
  int k = members_per_node(t, G, ng, p);
  if (k == 0) k = 1;
  int q = p / k, depth = 0;
  if (q < 2) { pat->algo = PF_COLL_RING; return build_ring(t, pat, PF_ALLREDUCE, S, G, ng, p); }
  while ((2 << depth) <= q) depth++; /* floor(log2 q) */
  chan c;
  channels(t, G, k, q, &c);
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

static int build_nvls(const pf_topology *t, pf_coll_pattern *pat, double S, const int *G, int ng, int p) {
  int k = members_per_node(t, G, ng, p);
  if (!t->nvls || k != p) { pat->algo = PF_COLL_RING; return build_ring(t, pat, PF_ALLREDUCE, S, G, ng, p); }
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

static int build_collnet(const pf_topology *t, pf_coll_pattern *pat, double S, const int *G, int ng, int p) {
  int k = members_per_node(t, G, ng, p);
  if (!t->innet || k == 0 || k == p) { pat->algo = PF_COLL_RING; return build_ring(t, pat, PF_ALLREDUCE, S, G, ng, p); }
  if (k > 1 && intra_rings(t, pat, S, G, ng, p, k) < 0) return -1;
  pf_coll_step *st;
  STEP_OR_FAIL(st, pat, 1, 2.0, 0.0, 2.0);
  for (int g = 0; g < ng; g++)
    for (int i = 0; i < p; i++) {
      int gpu = G[g * p + i];
      int ep = pf_topology_net_ep(t, pf_topology_node_of(t, gpu), pf_topology_rail_of(t, gpu));
      FLOW_OR_FAIL(st, gpu, ep, S / k);
      FLOW_OR_FAIL(st, ep, gpu, S / k);
    }
  if (k > 1 && intra_rings(t, pat, S, G, ng, p, k) < 0) return -1;
  return 0;
}

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

int pf_coll_pattern_build(const pf_topology *t, pf_coll_kind kind, pf_coll_algo algo, double bytes, const int *groups,
                          int ngroups, int p, pf_coll_pattern *out) {
  memset(out, 0, sizeof *out);
  if (algo == PF_COLL_AUTO || algo == PF_COLL_BEST || algo >= PF_COLL_NALGO)
    return pf_error_set(PF_EINVAL, "pf_coll_pattern_build: the algorithm must be chosen");
  if (kind == PF_ALLTOALL || kind == PF_SENDRECV) algo = PF_COLL_DIRECT;
  else if (algo == PF_COLL_DIRECT || ((algo == PF_COLL_TREE || algo == PF_COLL_NVLS || algo == PF_COLL_COLLNET) &&
                                      kind != PF_ALLREDUCE))
    algo = PF_COLL_RING;
  if (kind == PF_ALLTOALL && (double)p * (p - 1) * ngroups > 2e7)
    return pf_error_set(PF_EINVAL, "all-to-all over %d groups of %d ranks: %.3g flows; at most 2e7 are modelled",
                        ngroups, p, (double)p * (p - 1) * ngroups);
  out->kind = kind;
  out->algo = algo;
  out->proto = PF_PROTO_SIMPLE;
  out->lib = t->lib;
  out->fabric_hw = t->fabric == PF_FABRIC_PCIE ? PF_HW_PCI : PF_HW_NVLINK;
  out->lib_factor = pf_ccl_lib_factor(t, p, bytes);
  out->bytes = bytes;
  out->p = p;
  out->ngroups = ngroups;
  int rc = 0;
  if (bytes > 0 && p > 1) switch (algo) {
    case PF_COLL_RING: rc = build_ring(t, out, kind, bytes, groups, ngroups, p); break;
    case PF_COLL_HIERARCHICAL: rc = build_hier(t, out, kind, bytes, groups, ngroups, p); break;
    case PF_COLL_TREE: rc = build_tree(t, out, bytes, groups, ngroups, p); break;
    case PF_COLL_RABENSEIFNER: rc = build_rab(t, out, kind, bytes, groups, ngroups, p); break;
    case PF_COLL_NVLS: rc = build_nvls(t, out, bytes, groups, ngroups, p); break;
    case PF_COLL_COLLNET: rc = build_collnet(t, out, bytes, groups, ngroups, p); break;
    case PF_COLL_DIRECT: rc = build_direct(t, out, kind, bytes, groups, ngroups, p); break;
    default: break;
    }
  if (rc < 0) {
    pf_coll_pattern_free(out);
    return pf_error_set(PF_ENOMEM, "out of memory building a collective pattern");
  }
  return 0;
}
