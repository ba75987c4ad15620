/* collective.c - cost of DP collectives (alpha-beta per algorithm).
 *
 * Ring (Patarasuk & Yuan 2009): all-reduce 2(p-1) steps of S/p bytes;
 * reduce-scatter and all-gather (p-1) steps.  Hierarchical (NCCL's
 * inter-node ring over rails): intra-node reduce-scatter over the node's
 * members of the group, inter-node ring on 1/k of the data per member, intra-node
 * all-gather.  Double binary tree (Sanders et al. 2009, NCCL 2.4): bandwidth as
 * the ring, latency 2 log2(p) hops.  Rabenseifner: reduce-scatter by recursive
 * halving + all-gather by recursive doubling, 2 log2(p) steps, ring volume.
 *
 * The per-rank bandwidth on the network is the GPU's share of its node's NICs
 * at NIC_EFF of line rate, reduced by the taper of a fat tree or by the global
 * links of a dragonfly when the group leaves a switch or a group.
 */
#include "preflight/collective.h"

#include "preflight/compute.h"
#include "preflight/error.h"

#include <math.h>
#include <string.h>

#define NIC_EFF 0.90

const char *pf_coll_kind_name(pf_coll_kind k) {
  return k == PF_ALLREDUCE ? "all-reduce" : k == PF_REDUCE_SCATTER ? "reduce-scatter" : "all-gather";
}

/* Steps and volume factor of a ring of p ranks for the collective kind. */
static double ring_steps(pf_coll_kind k, int p) { return (k == PF_ALLREDUCE ? 2.0 : 1.0) * (p - 1); }

int pf_dp_collective(const pf_scenario *sc, pf_coll_kind kind, double bytes, int stage, int concurrent_stages,
                     pf_coll_result *out) {
  const pf_plan *p = &sc->plan;
  const pf_machine *m = &sc->machine;
  memset(out, 0, sizeof *out);
  int dp = p->dp;
  out->bottleneck_share = 1;
  if (dp <= 1 || bytes <= 0) { out->algo = PF_COLL_RING; return 0; }
  int gpn = m->gpus_per_node;
  /* members of one DP group that share a node: ranks differ by TP*CP in the dp index */
  int stride = p->tp * p->cp;
  int per_node = stride >= gpn ? 1 : gpn / stride;
  if (per_node > dp) per_node = dp;
  int nodes_in_group = (dp + per_node - 1) / per_node;
  (void)stage;

  double factor = kind == PF_ALLREDUCE ? 2.0 * (dp - 1) / dp : (double)(dp - 1) / dp;
  if (nodes_in_group <= 1) { /* all inside one node */
    out->time_s = pf_fabric_collective_time(m, kind == PF_ALLREDUCE ? 0 : kind == PF_REDUCE_SCATTER ? 1 : 2, dp,
                                            bytes) / sc->comm_eff_scale;
    out->algo = PF_COLL_RING;
    out->bus_bw_Bps = factor * bytes / out->time_s;
    return 0;
  }
  /* network share per GPU: all GPUs of the node run their own group concurrently */
  double nic_per_gpu = m->nic_bw_Bps * (m->nics_per_node > 0 ? m->nics_per_node : 1) / gpn;
  double bw = nic_per_gpu * NIC_EFF * sc->comm_eff_scale;
  const pf_network *n = &m->net;
  int span_nodes = sc->nodes;
  if (n->kind == PF_TOPO_FAT_TREE && n->taper < 1.0) {
    int nodes_per_leaf = n->endpoints_per_leaf / (m->nics_per_node > 0 ? m->nics_per_node : 1);
    if (nodes_per_leaf < 1) nodes_per_leaf = 1;
    if (span_nodes > nodes_per_leaf) bw *= n->taper;
  } else if ((n->kind == PF_TOPO_DRAGONFLY || n->kind == PF_TOPO_DRAGONFLY_PLUS) && n->groups > 0) {
    int ep_per_group = (n->kind == PF_TOPO_DRAGONFLY ? n->switches_per_group : n->leaves_per_group) *
                       n->endpoints_per_switch;
    int nodes_per_group = ep_per_group / (m->nics_per_node > 0 ? m->nics_per_node : 1);
    if (nodes_per_group < 1) nodes_per_group = 1;
    if (span_nodes > nodes_per_group) {
      /* a ring crossing groups: the traffic leaving a group is its nodes' ring
       * neighbours in other groups; with contiguous placement one of every
       * nodes_per_group ring hops leaves the group, but all groups' DP rings
       * (one per GPU) share the global links of the group */
      double group_injection = (double)nodes_per_group * gpn * bw * concurrent_stages / p->pp;
      double leaving = group_injection / nodes_per_group; /* one ring hop per group per ring */
      double global = n->global_bw_per_group_Bps * NIC_EFF;
      if (leaving > global && global > 0) {
        out->bottleneck_share = leaving / global;
        bw /= out->bottleneck_share;
      }
    }
  }
  double lat = n->nic_latency_s + 3 * n->switch_latency_s;
  pf_coll_algo algo = sc->collective;
  if (algo == PF_COLL_AUTO) {
    /* NCCL's tuner picks trees for latency-bound sizes at scale, rings for bandwidth */
    double ring_t = ring_steps(kind, nodes_in_group) * lat;
    double tree_t = 2 * log2((double)nodes_in_group) * lat;
    algo = (kind == PF_ALLREDUCE && bytes / per_node < 4e6 && tree_t < ring_t) ? PF_COLL_TREE : PF_COLL_HIERARCHICAL;
  }
  double t;
  int k = kind == PF_ALLREDUCE ? 0 : kind == PF_REDUCE_SCATTER ? 1 : 2;
  double inter_bytes = bytes / per_node;
  double intra = per_node > 1 ? pf_fabric_collective_time(m, k == 0 ? 1 : k, per_node, bytes) : 0;
  switch (algo) {
  case PF_COLL_RING:
    t = ring_steps(kind, dp) * (lat + bytes / dp / bw);
    break;
  case PF_COLL_TREE:
    t = 2 * log2((double)nodes_in_group) * lat + (k == 0 ? 2.0 : 1.0) * inter_bytes / bw + 2 * intra;
    break;
  case PF_COLL_RABENSEIFNER:
    t = (k == 0 ? 2.0 : 1.0) * log2((double)dp) * lat + factor * bytes / bw;
    break;
  case PF_COLL_HIERARCHICAL:
  case PF_COLL_AUTO:
  default: {
    int q = nodes_in_group;
    double inter = ring_steps(kind, q) * (lat + inter_bytes / q / bw);
    t = inter + (k == 0 ? 2 * intra : intra);
    break;
  }
  }
  out->time_s = t;
  out->algo = algo;
  out->bus_bw_Bps = factor * bytes / t;
  return 0;
}
