/* collective.c - the collectives (all-reduce, reduce-scatter, all-gather,
 * all-to-all, send/receive: names and nccl-tests' bus-bandwidth factors) and
 * the pattern they are built as (see collective.h).  Each algorithm builds
 * its steps in its own file (collalgo.h: ring, tree, hierarchical,
 * Rabenseifner, NVLS, CollNet, direct sends; formulas and sources in
 * docs/communication.md section 4); pf_coll_pattern_build picks the builder
 * from the algorithm table, costs are in collcost.c, the library's choice in
 * ccl.c.
 */
#include "collective.h"

#include "ccl.h"
#include "collbuild.h"
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

double pf_coll_count(pf_coll_kind k, double bytes, double elt, int p) {
  double n = elt > 0 ? floor(bytes / elt) : 0;
  if (p > 1 && (k == PF_ALLGATHER || k == PF_REDUCE_SCATTER || k == PF_ALLTOALL)) n = floor(n / p);
  return n;
}

/* ---------- pattern construction ---------- */

void pf_coll_pattern_free(pf_coll_pattern *pat) {
  for (int i = 0; i < pat->nsteps; i++) free(pat->steps[i].flows);
  free(pat->steps);
  memset(pat, 0, sizeof *pat);
}

int pf_coll_pattern_copy(pf_coll_pattern *dst, const pf_coll_pattern *src) {
  *dst = *src;
  dst->steps = NULL, dst->nsteps = dst->cap = 0;
  if (src->nsteps == 0) return 0;
  if (!(dst->steps = calloc((size_t)src->nsteps, sizeof *dst->steps))) return pf_error_set(PF_ENOMEM, "out of memory");
  dst->cap = src->nsteps;
  for (int i = 0; i < src->nsteps; i++, dst->nsteps++) {
    const pf_coll_step *a = &src->steps[i];
    pf_coll_step *b = &dst->steps[i];
    *b = *a;
    b->cap = a->nflows;
    b->flows = malloc((size_t)(a->nflows ? a->nflows : 1) * sizeof *b->flows);
    if (!b->flows) {
      pf_coll_pattern_free(dst);
      return pf_error_set(PF_ENOMEM, "out of memory");
    }
    memcpy(b->flows, a->flows, (size_t)a->nflows * sizeof *b->flows);
  }
  return 0;
}

pf_coll_step *pf_coll_step_add(pf_coll_pattern *pat, int reps, double lat_mult, double sw_intra, double sw_net) {
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

int pf_coll_flow_add(pf_coll_step *st, int src, int dst, double bytes) {
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

int pf_coll_members_per_node(const pf_topology *t, const int *G, int ng, int p) {
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

int pf_coll_pattern_build(const pf_topology *t, pf_coll_kind kind, pf_coll_algo algo, double bytes, const int *groups,
                          int ngroups, int p, pf_coll_pattern *out) {
  memset(out, 0, sizeof *out);
  const pf_coll_algo_desc *d = pf_coll_algo_get(algo);
  if (!d || kind >= PF_COLL_NKINDS) return pf_error_set(PF_EINVAL, "pf_coll_pattern_build: the algorithm must be chosen");
  if (!(d->kinds & PF_COLL_KIND_BIT(kind))) { /* e.g. a tree reduce-scatter: the ring; all-to-all: direct sends */
    algo = pf_coll_algo_default(kind);
    d = pf_coll_algo_get(algo);
    if (!d) return pf_error_set(PF_EINVAL, "no collective algorithm implements %s", pf_coll_kind_name(kind));
  }
  if (kind == PF_ALLTOALL && (double)p * (p - 1) * ngroups > 2e7)
    return pf_error_set(PF_EINVAL, "all-to-all over %d groups of %d ranks: %.3g flows; at most 2e7 are modelled",
                        ngroups, p, (double)p * (p - 1) * ngroups);
  out->kind = kind;
  out->algo = algo;
  out->proto = PF_PROTO_SIMPLE;
  out->lib = t->lib;
  out->tuner = t->tuner;
  out->fabric_hw = t->fabric == PF_FABRIC_PCIE ? PF_HW_PCI : PF_HW_NVLINK;
  out->lib_factor = pf_ccl_lib_factor(t, p, bytes);
  /* one NIC per GPU for all-to-all where the node bonds several per GPU (collective.h) */
  out->nic_share = kind == PF_ALLTOALL && t->phys_nics > t->nics ? (double)t->nics / t->phys_nics : 1.0;
  out->bytes = bytes;
  out->p = p;
  out->ngroups = ngroups;
  if (bytes > 0 && p > 1 && d->build(t, out, kind, bytes, groups, ngroups, p) < 0) {
    pf_coll_pattern_free(out);
    return pf_error_set(PF_ENOMEM, "out of memory building a collective pattern");
  }
  out->tab = t->tab.present && out->algo == PF_COLL_RING ? &t->tab : NULL; /* measured on rings only */
  return 0;
}
