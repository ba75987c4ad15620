/* ccl.c - the collective library's part of a collective's cost: protocols,
 * software latencies, measured efficiencies, and the tuner's choice.
 *
 * Latencies.  NCCL's tuning model (src/graph/tuning.cc) costs a call as
 *   baseLat[algo][proto] + steps x hwLat[hw][algo][proto] + bytes / busBw
 * with hw the NVLink, PCIe or network class of each step.  The tables below
 * are NCCL 2.18-2.21's constants in microseconds [recall: quoted from the
 * source as remembered, not re-verified here; docs/communication.md 3.1].
 * RCCL inherits NCCL's tuning code and tables; oneCCL has no published
 * table and uses the Simple column.  A pattern step's latency is the larger
 * of the library's steps and the wire latency of the slowest route (the
 * constants are end-to-end measurements on short routes; many switch hops
 * or slow NICs exceed them).
 *
 * Protocols.  LL sends 8-byte lines of 4 data bytes and a flag (payload 1/2),
 * LL128 128-byte lines with 120 data bytes (15/16), Simple plain data with
 * fences between chunks (NCCL documentation, "NCCL protocols").  LL128 runs
 * where the hardware keeps 128-byte stores ordered: NCCL on NVIDIA GPUs; RCCL
 * enables it by default only on gfx942 and later (topology.c).
 *
 * Measured efficiencies.  A machine file may state, with its source, that the
 * library reaches only a share of the network's bandwidth from some rank
 * count and message size on (a missing network plugin, a library that
 * degrades at hundreds of nodes); the last matching row's factor scales the
 * capacity of the network links for that collective.  No row is assumed.
 *
 * Choice.  NCCL's tuner evaluates its model for every (algorithm, protocol)
 * it supports and takes the cheapest; pf_coll_choose does the same with
 * preflight's route-based cost of one group alone (the library does not know
 * the other groups' traffic): ring and, across nodes, the double binary tree
 * for all-reduce; NVLS for all-reduce inside an NVLink-SHARP node; CollNet
 * where the switches reduce; ring for reduce-scatter and all-gather; direct
 * sends for all-to-all and send/receive.  Hierarchical and Rabenseifner are
 * not NCCL algorithms: they are costed when named or under `best`.
 */
#include "ccl.h"

#include "core/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* NCCL's algorithm rows: Tree, Ring, CollNetDirect, CollNetChain, NVLS, NVLSTree */
enum { A_TREE, A_RING, A_COLLNET, A_COLLNET_CHAIN, A_NVLS, A_NVLS_TREE, A_N };

/* [recall] NCCL src/graph/tuning.cc, microseconds; columns LL, LL128, Simple */
static const double base_lat[A_N][3] = {
    {6.8, 14.0, 0}, {6.6, 14.0, 8.4}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}, {0, 0, 0}};
static const double hw_lat[3][A_N][3] = {
    /* NVLink */ {{.6, 1.25, 4}, {.6, 1.9, 3.4}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 25}, {0, 0, 25}},
    /* PCIe */ {{1.0, 1.9, 6}, {1.0, 2.5, 5.7}, {0, 0, 3.7}, {0, 0, 2.8}, {0, 0, 0}, {0, 0, 0}},
    /* network */ {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 31}, {0, 0, 30}, {0, 0, 18}, {0, 0, 14}}};

static int row_of(pf_coll_algo a) {
  switch (a) {
  case PF_COLL_TREE: return A_TREE;
  case PF_COLL_NVLS: return A_NVLS;
  case PF_COLL_COLLNET: return A_COLLNET;
  default: return A_RING; /* ring-like: ring, hierarchical, Rabenseifner, direct sends */
  }
}

double pf_ccl_base_lat(pf_ccl_lib lib, pf_coll_algo a, pf_coll_proto p) {
  if (p > PF_PROTO_SIMPLE) p = PF_PROTO_SIMPLE;
  if (lib == PF_CCL_ONECCL) p = PF_PROTO_SIMPLE;
  return base_lat[row_of(a)][p] * 1e-6;
}

double pf_ccl_step_lat(pf_ccl_lib lib, int hw, pf_coll_algo a, pf_coll_proto p) {
  if (p > PF_PROTO_SIMPLE) p = PF_PROTO_SIMPLE;
  if (lib == PF_CCL_ONECCL) p = PF_PROTO_SIMPLE;
  if (hw < 0 || hw > PF_HW_NET) hw = PF_HW_NET;
  return hw_lat[hw][row_of(a)][p] * 1e-6;
}

double pf_ccl_proto_eff(pf_coll_proto p) {
  switch (p) {
  case PF_PROTO_LL: return 0.5;
  case PF_PROTO_LL128: return 120.0 / 128.0;
  default: return 1.0;
  }
}

int pf_ccl_proto_ok(const pf_topology *t, pf_coll_algo a, pf_coll_proto p) {
  if (p == PF_PROTO_SIMPLE) return 1;
  if (t->lib == PF_CCL_ONECCL) return 0;
  if (a == PF_COLL_NVLS || a == PF_COLL_COLLNET) return 0; /* Simple only in NCCL */
  if (p == PF_PROTO_LL128) return t->ll128;
  return 1;
}

double pf_ccl_lib_factor(const pf_topology *t, int ranks, double bytes) {
  double f = 1.0;
  for (int i = 0; i < t->neff; i++)
    if (ranks >= t->eff[i].min_ranks && bytes >= t->eff[i].min_bytes) f = t->eff[i].factor;
  return f;
}

/* ---------- choice ---------- */

/* Members per node of group 0 if every node holds the same number, else 0;
 * and the number of nodes. */
static void shape(const pf_topology *t, const int *G, int p, int *k, int *q) {
  int first = pf_topology_node_of(t, G[0]), n = 1;
  while (n < p && pf_topology_node_of(t, G[n]) == first) n++;
  *k = n;
  *q = p % n == 0 ? p / n : 0;
  int nodes = 1;
  for (int i = 1; i < p; i++)
    if (pf_topology_node_of(t, G[i]) != pf_topology_node_of(t, G[i - 1])) nodes++;
  if (*q == 0 || nodes != *q) { *k = 0; *q = nodes; }
}

static int applies(const pf_topology *t, pf_coll_kind kind, pf_coll_algo a, int k, int q, int p, int best) {
  switch (a) {
  case PF_COLL_RING: return kind != PF_ALLTOALL && kind != PF_SENDRECV;
  case PF_COLL_TREE: return kind == PF_ALLREDUCE && q > 1 && p > 2;
  case PF_COLL_NVLS: return kind == PF_ALLREDUCE && t->nvls && q == 1 && p > 1;
  case PF_COLL_COLLNET: return kind == PF_ALLREDUCE && t->innet && q > 1;
  case PF_COLL_DIRECT: return kind == PF_ALLTOALL || kind == PF_SENDRECV;
  case PF_COLL_HIERARCHICAL: return best && k > 1 && q > 1 && kind != PF_ALLTOALL && kind != PF_SENDRECV;
  case PF_COLL_RABENSEIFNER: return best && p > 2 && kind != PF_ALLTOALL && kind != PF_SENDRECV;
  default: return 0;
  }
}

/* Build algo over ng groups with its cheapest (or the forced) protocol; *tt the cost.  With ring_bw (the
 * ring's bandwidth part per protocol, tuner mode) a tree is costed as NCCL's model costs it: its own
 * latency and the ring's bandwidth over 0.92 (tuning.cc: "busBw * .92" for the tree; the tree's
 * algorithm bandwidth is half its bus bandwidth, as the ring's is for large groups) [recall]. */
static int candidate(const pf_topology *t, const pf_coll_req *rq, pf_coll_algo a, int ng, const double *ring_bw,
                     pf_coll_pattern *pat, double *tt, double *bw_out) {
  int rc = pf_coll_pattern_build(t, rq->kind, a, rq->bytes, rq->groups, ng, rq->p, pat);
  if (rc < 0) return rc;
  double lat[3], bw[3], tp[3];
  pf_coll_pattern_protos(t, pat, lat, bw);
  for (int pr = 0; pr < 3; pr++) {
    if (ring_bw && pat->algo == PF_COLL_TREE && isfinite(bw[pr])) bw[pr] = ring_bw[pr] / 0.92;
    tp[pr] = lat[pr] + bw[pr];
    if (bw_out) bw_out[pr] = bw[pr];
  }
  pf_coll_proto best = PF_PROTO_SIMPLE;
  if (rq->proto != PF_PROTO_AUTO && isfinite(tp[rq->proto])) best = rq->proto;
  else if (rq->proto == PF_PROTO_AUTO)
    for (int pr = 0; pr < 3; pr++)
      if (tp[pr] < tp[best]) best = (pf_coll_proto)pr;
  pat->proto = best;
  *tt = tp[best];
  return 0;
}

int pf_coll_choose(const pf_topology *t, const pf_coll_req *rq, pf_coll_pattern *out, pf_coll_result *res) {
  memset(out, 0, sizeof *out);
  memset(res, 0, sizeof *res);
  if (rq->p < 1 || rq->ngroups < 1) return pf_error_set(PF_EINVAL, "collective: %d groups of %d ranks", rq->ngroups, rq->p);
  int k, q, rc;
  shape(t, rq->groups, rq->p, &k, &q);
  pf_coll_algo chosen = rq->algo;
  if (rq->algo == PF_COLL_AUTO || rq->algo == PF_COLL_BEST) {
    int best = rq->algo == PF_COLL_BEST, ng = best ? rq->ngroups : 1;
    double tmin = INFINITY;
    chosen = rq->kind == PF_ALLTOALL || rq->kind == PF_SENDRECV ? PF_COLL_DIRECT : PF_COLL_RING;
    pf_coll_proto pr = PF_PROTO_SIMPLE;
    double ring_bw[3] = {INFINITY, INFINITY, INFINITY};
    for (int a = PF_COLL_RING; a <= PF_COLL_DIRECT && rq->p > 1; a++) {
      if (!applies(t, rq->kind, (pf_coll_algo)a, k, q, rq->p, best)) continue;
      pf_coll_pattern c;
      double tc;
      if ((rc = candidate(t, rq, (pf_coll_algo)a, ng, best ? NULL : ring_bw, &c, &tc,
                          a == PF_COLL_RING ? ring_bw : NULL)) < 0)
        return rc;
      if (c.algo == (pf_coll_algo)a && tc < tmin * (1 - 1e-12)) { tmin = tc; chosen = (pf_coll_algo)a; pr = c.proto; }
      pf_coll_pattern_free(&c);
    }
    pf_coll_req fixed = *rq;
    fixed.proto = rq->proto == PF_PROTO_AUTO ? pr : rq->proto;
    double tt;
    if ((rc = candidate(t, &fixed, chosen, rq->ngroups, NULL, out, &tt, NULL)) < 0) return rc;
  } else {
    double tt;
    if ((rc = candidate(t, rq, chosen, rq->ngroups, NULL, out, &tt, NULL)) < 0) return rc;
  }
  pf_coll_pattern_cost(t, out, res);
  return 0;
}
