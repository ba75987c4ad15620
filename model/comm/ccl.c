/* ccl.c - the collective library's part of a collective's cost: protocols,
 * software latencies, measured efficiencies, and the tuner's choice.
 *
 * Latencies.  NCCL's tuning model (src/graph/tuning.cc) costs a call as
 *   baseLat[algo][proto] + steps x hwLat[hw][algo][proto] + bytes / busBw
 * with hw the NVLink, PCIe or network class of each step.  The constants
 * change with the library's version: ccltuner.c holds them per range of
 * versions, read from NCCL's and RCCL's sources at named tags, and the
 * machine file's ccl.version picks the range (the topology keeps it); an
 * algorithm without a row there keeps its descriptor's (collalgo.h).
 * RCCL has its own tables (ccltuner.c); oneCCL has no published table and
 * uses the Simple column.  A pattern step's latency is the larger
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
 * not NCCL algorithms: they are costed when named or under `best`.  Which
 * algorithm the tuner offers, where, and how NCCL's model costs it are in
 * each algorithm's descriptor (collalgo.h); this file reads them.
 */
#include "ccl.h"

#include "collbuild.h"
#include "core/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The algorithm's row: of the version's tables (ccltuner.c) where its descriptor names one, else its own
 * constants, else the version's ring row. */
static const pf_ccl_lat *lat_of(const pf_ccl_tuner *tn, pf_coll_algo a) {
  if (!tn) tn = pf_ccl_tuner_find(PF_CCL_NCCL, "", NULL);
  const pf_coll_algo_desc *d = pf_coll_algo_get(a);
  if (d && d->tuner_row > PF_CCL_ROW_NONE && d->tuner_row < PF_CCL_NROWS) return &tn->row[d->tuner_row];
  return d && d->lat ? d->lat : &tn->row[PF_CCL_ROW_RING];
}

double pf_ccl_base_lat(const pf_ccl_tuner *tn, pf_ccl_lib lib, pf_coll_algo a, pf_coll_proto p) {
  if (p > PF_PROTO_SIMPLE) p = PF_PROTO_SIMPLE;
  if (lib == PF_CCL_ONECCL) p = PF_PROTO_SIMPLE;
  return lat_of(tn, a)->base_us[p] * 1e-6;
}

double pf_ccl_step_lat(const pf_ccl_tuner *tn, pf_ccl_lib lib, int hw, pf_coll_algo a, pf_coll_proto p) {
  if (p > PF_PROTO_SIMPLE) p = PF_PROTO_SIMPLE;
  if (lib == PF_CCL_ONECCL) p = PF_PROTO_SIMPLE;
  if (hw < 0 || hw > PF_HW_NET) hw = PF_HW_NET;
  return lat_of(tn, a)->hw_us[hw][p] * 1e-6;
}

double pf_ccl_table_step(const pf_ccl_table *tab, int net, pf_coll_proto p, double def) {
  if (p > PF_PROTO_SIMPLE) p = PF_PROTO_SIMPLE;
  /* inside the node the table's step is Simple's (measured from 1 MiB on); LL keeps NCCL's constant */
  double v = net ? tab->net_step_s[p] : p == PF_PROTO_LL ? -1 : tab->fabric_step_s;
  if (net && v < 0 && p == PF_PROTO_LL128) v = tab->net_step_s[PF_PROTO_SIMPLE]; /* LL128 unmeasured: Simple's */
  return v >= 0 ? v : def;
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
  const pf_coll_algo_desc *d = pf_coll_algo_get(a);
  if (d && d->simple_only) return 0; /* NVLS, CollNet: Simple only in NCCL */
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

/* auto considers the algorithms the library's tuner offers, best every one; each where it implements the
 * collective and applies to the groups (its descriptor). */
static int applies(const pf_topology *t, pf_coll_kind kind, const pf_coll_algo_desc *d, const pf_coll_shape *s,
                   int best) {
  if (!d->tuner && !best) return 0;
  if (!(d->kinds & PF_COLL_KIND_BIT(kind))) return 0;
  return !d->applies || d->applies(t, kind, s);
}

/* Build algo over ng groups with its cheapest (or the forced) protocol; *tt the cost.  With ring_bw (the
 * ring's bandwidth part per protocol, tuner mode) an algorithm whose descriptor says so (the tree) is
 * costed as NCCL's model costs it: its own latency and the ring's bandwidth over its tuner_ring_busbw. */
static int candidate(const pf_topology *t, const pf_coll_req *rq, pf_coll_algo a, int ng, const double *ring_bw,
                     pf_coll_pattern *pat, double *tt, double *bw_out) {
  int rc = pf_coll_pattern_build(t, rq->kind, a, rq->bytes, rq->groups, ng, rq->p, pat);
  if (rc < 0) return rc;
  double lat[3], bw[3], tp[3];
  const pf_coll_algo_desc *built = pf_coll_algo_get(pat->algo);
  pf_coll_pattern_protos(t, pat, lat, bw);
  for (int pr = 0; pr < 3; pr++) {
    if (ring_bw && built->tuner_ring_busbw > 0 && isfinite(bw[pr])) bw[pr] = ring_bw[pr] / built->tuner_ring_busbw;
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
  int rc;
  pf_coll_shape sh = {0, 0, rq->p};
  shape(t, rq->groups, rq->p, &sh.k, &sh.q);
  pf_coll_algo chosen = rq->algo;
  if (rq->algo == PF_COLL_AUTO || rq->algo == PF_COLL_BEST) {
    int best = rq->algo == PF_COLL_BEST, ng = best ? rq->ngroups : 1;
    double tmin = INFINITY;
    chosen = pf_coll_algo_default(rq->kind);
    pf_coll_proto pr = PF_PROTO_SIMPLE;
    double ring_bw[3] = {INFINITY, INFINITY, INFINITY};
    for (int a = PF_COLL_FIRST; a < pf_coll_algo_end() && rq->p > 1; a++) {
      if (!applies(t, rq->kind, pf_coll_algo_get(a), &sh, best)) continue;
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
