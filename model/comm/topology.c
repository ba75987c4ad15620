/* topology.c - links, capacities and routes of the job's part of the machine
 * (the communication module's network layer, see comm.h).
 *
 * What it models (formulas and sources in docs/communication.md section 2):
 *
 * Capacities are the achievable share of the datasheet rate of each link
 * (pf_fabric_efficiency and NET_EFF below: the one table of link
 * efficiencies in the code; a `calibrate --collectives` file overlaid with
 * --calibration replaces them by measured ones, cclcal.c):
 *   network links (NIC, switch-switch, global): 0.90 of line rate (large
 *     GPUDirect RDMA transfers reach 85-95 % of InfiniBand/Slingshot line rate
 *     in OSU and nccl-tests; research notes energy-and-calibration.md 4.1 #11);
 *   NVLink 0.80: NCCL ring all-reduce bus bandwidth over line rate, 235 of 300
 *     GB/s on 8 A100 and 367 of 450 GB/s on 8 H200 (stas00 ml-engineering,
 *     energy-and-calibration.md 2.3); Infinity Fabric / Xe Link 0.75 (xGMI
 *     48 of 64 GB/s per link, ROCm/rccl#1210); PCIe 0.80 (PCIe5 88 %,
 *     Gen4-class lower, energy-and-calibration.md 2.5; rounded down).
 * Latency: a route costs the NIC latency (end point, both halves) plus one
 * switch latency per switch it crosses; intra-node routes cost the fabric
 * latency.  Each link carries its share so that a route's latency is the sum
 * over its links (which is what SimGrid adds up for the emitted XML).
 *
 * Intra-node: a mesh (NVLink between 4 H100/A100, Infinity Fabric between 8
 * MI250X GCDs, Xe Link) is a port per GPU (fabric bandwidth = all its links)
 * plus a link per ordered GPU pair (pair bandwidth); the two GCDs of one
 * MI250X package are joined by twice the pair bandwidth (4 of the GCD's 7
 * Infinity Fabric links, 200 GB/s per direction, per the LUMI node diagram
 * cited in machines/lumi-g.cfg).  An NVSwitch or PCIe switch is a port up and
 * a port down per GPU; PCIe cards joined by NVLink bridges talk over the
 * bridge inside their group and over PCIe otherwise.
 *
 * The network between the NICs is the machine's network kind's (one file each
 * in machine/: net_fat_tree.c, net_dragonfly.c, net_dragonfly_plus.c,
 * net_torus.c, net_single.c, behind the table of machine/network.h): this
 * file gives it the job's span of the partition, the NIC ports per node, the
 * link rate and efficiency, lets it lay out its link blocks after the NICs',
 * and has it set their capacities.
 */
#include "topology.h"

#include "ccl.h"

#include "core/core.h"

#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NET_EFF 0.90
#define EFF_NVLINK 0.80
#define EFF_XGMI 0.75
#define EFF_PCIE 0.80

double pf_fabric_efficiency(pf_fabric_kind k) {
  switch (k) {
  case PF_FABRIC_NVLINK_SWITCH: case PF_FABRIC_NVLINK_MESH: return EFF_NVLINK;
  case PF_FABRIC_INFINITY_FABRIC: case PF_FABRIC_XE_LINK: return EFF_XGMI;
  case PF_FABRIC_PCIE: case PF_FABRIC_NONE: return EFF_PCIE;
  }
  return EFF_PCIE;
}

static void set_range(pf_topology *t, int base, int n, double bw, double lat, int kind) {
  for (int i = 0; i < n; i++) t->links[base + i] = (pf_link){bw, lat, kind};
}

void pf_topology_free(pf_topology *t) {
  free(t->links);
  free(t->slot);
  free(t->scratch_acc);
  free(t->scratch_cnt);
  free(t->scratch_touched);
  free(t->scratch_sort);
  free(t->net.own);
  t->net.own = NULL;
  t->links = NULL;
  t->slot = NULL;
  t->scratch_acc = NULL;
  t->scratch_cnt = t->scratch_touched = t->scratch_sort = NULL;
  t->nlinks = 0;
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Partition slots of the job's nodes: 0..nodes-1, or a seeded draw of
 * distinct nodes over the partition (partial Fisher-Yates, GSL's MT19937),
 * ascending. */
static int place(pf_topology *t, const pf_machine *m, pf_placement pl, unsigned long seed) {
  int nodes = t->nodes, total = m->nodes > nodes ? m->nodes : nodes;
  t->slot = malloc((size_t)nodes * sizeof *t->slot);
  if (!t->slot) return pf_error_set(PF_ENOMEM, "out of memory");
  if (pl == PF_PLACE_CONTIGUOUS || nodes == total) {
    for (int j = 0; j < nodes; j++) t->slot[j] = j;
  } else {
    int *all = malloc((size_t)total * sizeof *all);
    gsl_rng *g = gsl_rng_alloc(gsl_rng_mt19937);
    if (!all || !g) { free(all); if (g) gsl_rng_free(g); return pf_error_set(PF_ENOMEM, "out of memory"); }
    gsl_rng_set(g, seed);
    for (int i = 0; i < total; i++) all[i] = i;
    for (int i = 0; i < nodes; i++) {
      int k = i + (int)gsl_rng_uniform_int(g, (unsigned long)(total - i));
      int x = all[i]; all[i] = all[k]; all[k] = x;
      t->slot[i] = all[i];
    }
    gsl_rng_free(g);
    free(all);
    qsort(t->slot, (size_t)nodes, sizeof *t->slot, cmp_int);
  }
  t->span = t->slot[nodes - 1] + 1;
  return 0;
}

static void set_fabric(pf_topology *t, const pf_machine *m, double bw_scale) {
  int gpn = t->gpn, G = t->gpus;
  double fe = (m->fabric_eff_cal > 0 ? m->fabric_eff_cal : pf_fabric_efficiency(m->fabric)) * bw_scale;
  set_range(t, t->b_pu, G, m->fabric_bw_Bps * fe, m->fabric_latency_s, PF_LINK_PORT_UP);
  set_range(t, t->b_pd, G, m->fabric_bw_Bps * fe, 0, PF_LINK_PORT_DOWN);
  if (t->mesh) {
    double pair = m->fabric_pair_bw_Bps > 0 ? m->fabric_pair_bw_Bps : m->fabric_bw_Bps / (gpn - 1);
    int dpp = m->dev.dies_per_package > 1 ? m->dev.dies_per_package : 1;
    for (int nd = 0; nd < t->nodes; nd++)
      for (int a = 0; a < gpn; a++)
        for (int b = 0; b < gpn; b++) {
          if (a == b) continue;
          double bw = pair;
          if (dpp == 2 && a / 2 == b / 2) bw = fmin(2 * pair, m->fabric_bw_Bps); /* same package */
          t->links[t->b_pair + (nd * gpn + a) * gpn + b] = (pf_link){bw * fe, 0, PF_LINK_PAIR};
        }
  }
  if (t->bridge > 0) /* one link from each GPU to each other member of its bridged group */
    set_range(t, t->b_br, G * (t->bridge - 1), m->fabric_bridge_bw_Bps * EFF_NVLINK * bw_scale, m->fabric_latency_s,
              PF_LINK_PAIR);
}

/* The collective library's view of the machine: PXN, NVLS, in-network reduction, LL128, measured
 * efficiencies. */
static void set_library(pf_topology *t, const pf_machine *m, int has_fabric) {
  int nvlink = m->fabric == PF_FABRIC_NVLINK_SWITCH || m->fabric == PF_FABRIC_NVLINK_MESH;
  t->pxn = m->ccl_pxn >= 0 ? m->ccl_pxn : (m->ccl == PF_CCL_NCCL && has_fabric && nvlink);
  t->nvls = m->nvls && has_fabric && m->ccl == PF_CCL_NCCL;
  t->nvls_scale = m->nvls_eff > 0 ? fmin(1.0, m->nvls_eff / EFF_NVLINK) : 1.0;
  t->innet = m->net.in_network_reduction;
  t->lib = m->ccl;
  t->tuner = pf_ccl_tuner_find(m->ccl, m->ccl_version, NULL);
  /* LL128 needs NVLink-class ordering guarantees: NCCL enables it on NVIDIA GPUs from Volta on; RCCL only on
   * gfx942 (MI300) and later by default, not on gfx90a (MI250X); oneCCL has no such protocol [recall: NCCL
   * src/graph/tuning.cc, RCCL's RCCL_LL128_FORCE_ENABLE; docs/communication.md] */
  t->ll128 = m->ccl == PF_CCL_NCCL || (m->ccl == PF_CCL_RCCL && strncmp(m->dev.arch, "gfx94", 5) == 0);
  t->neff = m->ccl_neff;
  memcpy(t->eff, m->ccl_eff, sizeof t->eff);
  t->tab = m->ccl_table;
  t->sparse = m->fabric_sparse;
}

/* The network kind lays out its links after the nl links so far; returns the total or PF_E*. */
static long layout_network(pf_topology *t, const pf_machine *m, long nl, double link_bw, double ne) {
  pf_net_layout *net = &t->net;
  net->kind = m->net.kind;
  net->span = t->span;
  net->phys_nics = t->phys_nics;
  net->link_bw_Bps = link_bw;
  net->eff = ne;
  net->nlinks = nl;
  if (!net->kind) return pf_error_set(PF_EINVAL, "topology: machine %s has no network kind", m->id);
  int rc = net->kind->layout ? net->kind->layout(m, net) : 0;
  if (rc < 0) return rc;
  if (net->nblocks > PF_NET_MAX_BLOCKS)
    return pf_error_set(PF_EINVAL, "network kind %s: more than %d link blocks", net->kind->name, PF_NET_MAX_BLOCKS);
  return net->nlinks;
}

int pf_topology_build_placed(const pf_machine *m, int nodes, pf_placement pl, unsigned long seed, double bw_scale,
                             pf_topology *t) {
  memset(t, 0, sizeof *t);
  if (nodes < 1 || m->gpus_per_node < 1 || m->gpus_per_node > PF_MAX_GPN)
    return pf_error_set(PF_EINVAL, "topology: %d nodes of %d GPUs", nodes, m->gpus_per_node);
  if (!(bw_scale > 0)) bw_scale = 1.0;
  const pf_network *n = &m->net;
  t->fabric = m->fabric;
  t->nodes = nodes;
  t->gpn = m->gpus_per_node;
  t->gpus = nodes * t->gpn;
  t->phys_nics = m->nics_per_node > 0 ? m->nics_per_node : 1;
  t->nics = t->phys_nics > t->gpn ? t->gpn : t->phys_nics;
  for (int l = 0; l < t->gpn; l++) t->affinity[l] = t->phys_nics > t->gpn ? l : m->nic_affinity[l];
  for (int k = 0; k < PF_MAX_GPN; k++) t->rail_gpu[k] = -1;
  for (int l = t->gpn - 1; l >= 0; l--) t->rail_gpu[t->affinity[l]] = l;
  int rc = place(t, m, pl, seed);
  if (rc < 0) return rc;
  double nic_bw = (m->nic_bw_Bps > 0 ? m->nic_bw_Bps : n->link_bw_Bps) * t->phys_nics / t->nics;
  double link_bw = n->link_bw_Bps > 0 ? n->link_bw_Bps : nic_bw;
  double ne = (m->net_eff_cal > 0 ? m->net_eff_cal : NET_EFF) * bw_scale;
  int gpn = t->gpn, G = t->gpus;
  int has_fabric = gpn > 1 && m->fabric != PF_FABRIC_NONE && m->fabric_bw_Bps > 0;
  t->mesh = has_fabric && (m->fabric == PF_FABRIC_NVLINK_MESH || m->fabric == PF_FABRIC_INFINITY_FABRIC ||
                           m->fabric == PF_FABRIC_XE_LINK);
  t->bridge = has_fabric && m->fabric_bridge_bw_Bps > 0 ? m->fabric_bridge_group : 0;
  set_library(t, m, has_fabric);
  long nl = 0;
  t->b_pu = (int)nl; nl += has_fabric ? G : 0;
  t->b_pd = (int)nl; nl += has_fabric ? G : 0;
  t->b_pair = (int)nl; nl += t->mesh ? (long)nodes * gpn * gpn : 0;
  t->b_br = (int)nl; nl += t->bridge > 0 ? (long)G * (t->bridge - 1) : 0;
  int ports = nodes * t->nics;
  t->b_nu = (int)nl; nl += ports;
  t->b_nd = (int)nl; nl += ports;
  nl = layout_network(t, m, nl, link_bw, ne);
  if (nl < 0) { pf_topology_free(t); return (int)nl; }
  if (nl > 200000000L) { pf_topology_free(t); return pf_error_set(PF_EINVAL, "topology too large (%ld links)", nl); }
  t->nlinks = (int)nl;
  t->links = calloc((size_t)(nl > 0 ? nl : 1), sizeof *t->links);
  if (!t->links) { pf_topology_free(t); return pf_error_set(PF_ENOMEM, "out of memory for %ld links", nl); }
  t->net.links = t->links;
  if (has_fabric) set_fabric(t, m, bw_scale);
  /* NICs: up carries the sender's NIC half and the first switch; down the receiver's half */
  set_range(t, t->b_nu, ports, nic_bw * ne, n->nic_latency_s / 2 + n->switch_latency_s, PF_LINK_NIC_UP);
  set_range(t, t->b_nd, ports, nic_bw * ne, n->nic_latency_s / 2, PF_LINK_NIC_DOWN);
  if (t->net.kind->build) t->net.kind->build(m, &t->net);
  return 0;
}

int pf_topology_build(const pf_machine *m, int nodes, double bw_scale, pf_topology *t) {
  return pf_topology_build_placed(m, nodes, PF_PLACE_CONTIGUOUS, 1, bw_scale, t);
}
