/* topology.c - links, capacities and routes of the job's part of the machine.
 *
 * What it models (formulas and sources in docs/engine.md, "Topology"):
 *
 * Capacities are the achievable share of the datasheet rate of each link:
 *   network links (NIC, switch-switch, global): 0.90 of line rate (large
 *     GPUDirect RDMA transfers reach 85-95 % of InfiniBand/Slingshot line rate
 *     in OSU and nccl-tests; research notes energy-and-calibration.md 4.1 #11);
 *   NVLink 0.80, Infinity Fabric / Xe Link 0.75, PCIe 0.80 (NCCL/RCCL bus
 *     bandwidth over link rate, energy-and-calibration.md 2.5; the same factors
 *     as compute.c uses for TP collectives).
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
 * a port down per GPU.
 *
 * Fat tree: leaves of E = endpoints_per_leaf NIC ports, each with U uplinks
 * whose capacity totals E x NIC rate x taper; 2 levels: U spines; 3 levels:
 * pods of E leaves, U aggregation switches per pod, each with E uplinks to
 * the core.  Static destination-mod-k routing as InfiniBand's ftree/D-mod-k
 * engines: up-port j = dst_port mod U, core port c = (dst_port / U) mod E.
 * Rail-optimised: NIC k of every node lands on the leaves of rail k.
 *
 * Dragonfly (HPE Slingshot): groups of S switches connected all-to-all, eps
 * endpoints per switch, global links between groups.  The local all-to-all
 * of a group is modelled per switch as one egress and one ingress link of
 * (S-1) x link rate: under minimal routing that is exact for uniform traffic,
 * and under Slingshot's adaptive routing it is what a hot switch pair can get
 * by spreading over the 2-hop detours.  Global: each switch's share of the
 * group's global bandwidth (global_bandwidth / S, out and in) and a group
 * pair's direct links (global_bandwidth / (groups - 1), minimal routing
 * between groups).  Latency: 2 switches inside a group, 4 between groups.
 *
 * Dragonfly+ (InfiniBand, JUWELS/JURECA/Leonardo/JUPITER): groups of leaves
 * and spines (a 2-level fat tree, leaf-spine bundles of eps x NIC rate x taper
 * / K), global links at the spines: spine j of a group owns global_bandwidth /
 * K, a group pair global_bandwidth / (groups - 1).  D-mod-k picks the spine.
 *
 * Torus: dims x, y, z routers, one per node, dimension-order routing along
 * the shorter direction (ties go +).
 */
#include "preflight/topology.h"

#include "preflight/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define NET_EFF 0.90
#define EFF_NVLINK 0.80
#define EFF_XGMI 0.75
#define EFF_PCIE 0.80

static const char *kind_names[] = {"port_up", "port_down", "pair", "nic_up", "nic_down", "up",
                                   "down", "local", "global", "torus"};

const char *pf_link_kind_name(int kind) { return kind >= 0 && kind < PF_LINK_NKINDS ? kind_names[kind] : "?"; }

static double fabric_eff(pf_fabric_kind k) {
  switch (k) {
  case PF_FABRIC_NVLINK_SWITCH: case PF_FABRIC_NVLINK_MESH: return EFF_NVLINK;
  case PF_FABRIC_INFINITY_FABRIC: case PF_FABRIC_XE_LINK: return EFF_XGMI;
  case PF_FABRIC_PCIE: case PF_FABRIC_NONE: return EFF_PCIE;
  }
  return EFF_PCIE;
}

static int cdiv(long a, long b) { return (int)((a + b - 1) / b); }

static void set_range(pf_topology *t, int base, int n, double bw, double lat, int kind) {
  for (int i = 0; i < n; i++) t->links[base + i] = (pf_link){bw, lat, kind};
}

void pf_topology_free(pf_topology *t) {
  free(t->links);
  t->links = NULL;
  t->nlinks = 0;
}

int pf_topology_build(const pf_machine *m, int nodes, double bw_scale, pf_topology *t) {
  memset(t, 0, sizeof *t);
  if (nodes < 1 || m->gpus_per_node < 1) return pf_error_set(PF_EINVAL, "topology: %d nodes of %d GPUs", nodes, m->gpus_per_node);
  if (!(bw_scale > 0)) bw_scale = 1.0;
  const pf_network *n = &m->net;
  t->kind = n->kind;
  t->fabric = m->fabric;
  t->nodes = nodes;
  t->gpn = m->gpus_per_node;
  t->gpus = nodes * t->gpn;
  t->phys_nics = m->nics_per_node > 0 ? m->nics_per_node : 1;
  t->nics = t->phys_nics > t->gpn ? t->gpn : t->phys_nics;
  double nic_bw = (m->nic_bw_Bps > 0 ? m->nic_bw_Bps : n->link_bw_Bps) * t->phys_nics / t->nics;
  double link_bw = n->link_bw_Bps > 0 ? n->link_bw_Bps : nic_bw;
  double sw = n->switch_latency_s, nic_lat = n->nic_latency_s;
  double ne = NET_EFF * bw_scale;

  /* intra-node */
  int gpn = t->gpn, G = t->gpus;
  int has_fabric = gpn > 1 && m->fabric != PF_FABRIC_NONE && m->fabric_bw_Bps > 0;
  t->mesh = has_fabric && (m->fabric == PF_FABRIC_NVLINK_MESH || m->fabric == PF_FABRIC_INFINITY_FABRIC ||
                           m->fabric == PF_FABRIC_XE_LINK);
  long nl = 0;
  t->b_pu = (int)nl; nl += has_fabric ? G : 0;
  t->b_pd = (int)nl; nl += has_fabric ? G : 0;
  t->b_pair = (int)nl; nl += t->mesh ? (long)nodes * gpn * gpn : 0;
  int ports = nodes * t->nics;
  t->b_nu = (int)nl; nl += ports;
  t->b_nd = (int)nl; nl += ports;
  t->b_net = (int)nl;

  /* network layout */
  int physports = nodes * t->phys_nics;
  switch (n->kind) {
  case PF_TOPO_FAT_TREE: {
    t->E = n->endpoints_per_leaf > 0 ? n->endpoints_per_leaf : 32;
    double up_total = t->E * (m->nic_bw_Bps > 0 ? m->nic_bw_Bps : link_bw) * (n->taper > 0 ? n->taper : 1.0);
    t->U = (int)ceil(up_total / link_bw - 1e-9);
    if (t->U < 1) t->U = 1;
    if (n->rail_optimized && t->phys_nics > 1) {
      t->lpr = cdiv(nodes, t->E);
      t->leaves = t->phys_nics * t->lpr;
    } else {
      t->leaves = cdiv(physports, t->E);
    }
    t->lpp = n->levels >= 3 ? t->E : t->leaves;
    t->pods = cdiv(t->leaves, t->lpp);
    t->C = n->levels >= 3 ? t->E : 0;
    t->b_lu = (int)nl; nl += (long)t->leaves * t->U;
    t->b_ld = (int)nl; nl += (long)t->leaves * t->U;
    t->b_au = (int)nl; nl += (long)t->pods * t->U * t->C;
    t->b_ad = (int)nl; nl += (long)t->pods * t->U * t->C;
    break;
  }
  case PF_TOPO_DRAGONFLY:
    t->S = n->switches_per_group;
    t->eps = n->endpoints_per_switch;
    t->groups_total = n->groups;
    t->nsw = cdiv(physports, t->eps);
    t->ngroups = cdiv(t->nsw, t->S);
    t->b_lo = (int)nl; nl += t->nsw;
    t->b_li = (int)nl; nl += t->nsw;
    t->b_go = (int)nl; nl += t->nsw;
    t->b_gi = (int)nl; nl += t->nsw;
    t->b_gp = (int)nl; nl += (long)t->ngroups * t->ngroups;
    break;
  case PF_TOPO_DRAGONFLY_PLUS:
    t->S = n->leaves_per_group;
    t->K = n->spines_per_group;
    t->eps = n->endpoints_per_switch;
    t->groups_total = n->groups;
    t->nsw = cdiv(physports, t->eps); /* leaves */
    t->ngroups = cdiv(t->nsw, t->S);
    t->b_lu = (int)nl; nl += (long)t->nsw * t->K;
    t->b_ld = (int)nl; nl += (long)t->nsw * t->K;
    t->b_go = (int)nl; nl += (long)t->ngroups * t->K;
    t->b_gi = (int)nl; nl += (long)t->ngroups * t->K;
    t->b_gp = (int)nl; nl += (long)t->ngroups * t->ngroups;
    break;
  case PF_TOPO_TORUS: {
    long cap = 1;
    for (int d = 0; d < 3; d++) {
      t->dims[d] = n->dims[d] > 0 ? n->dims[d] : 1;
      cap *= t->dims[d];
    }
    if (cap < nodes) return pf_error_set(PF_EINVAL, "torus %dx%dx%d holds fewer than %d nodes", t->dims[0], t->dims[1],
                                         t->dims[2], nodes);
    t->b_lu = (int)nl; nl += (long)nodes * 6;
    break;
  }
  case PF_TOPO_SINGLE:
    break;
  }
  if (nl > 200000000L) return pf_error_set(PF_EINVAL, "topology too large (%ld links)", nl);
  t->nlinks = (int)nl;
  t->links = calloc((size_t)(nl > 0 ? nl : 1), sizeof *t->links);
  if (!t->links) return pf_error_set(PF_ENOMEM, "out of memory for %ld links", nl);

  /* intra-node links */
  if (has_fabric) {
    double fe = fabric_eff(m->fabric) * bw_scale;
    set_range(t, t->b_pu, G, m->fabric_bw_Bps * fe, m->fabric_latency_s, PF_LINK_PORT_UP);
    set_range(t, t->b_pd, G, m->fabric_bw_Bps * fe, 0, PF_LINK_PORT_DOWN);
    if (t->mesh) {
      double pair = m->fabric_pair_bw_Bps > 0 ? m->fabric_pair_bw_Bps : m->fabric_bw_Bps / (gpn - 1);
      int dpp = m->dev.dies_per_package > 1 ? m->dev.dies_per_package : 1;
      for (int nd = 0; nd < nodes; nd++)
        for (int a = 0; a < gpn; a++)
          for (int b = 0; b < gpn; b++) {
            if (a == b) continue;
            double bw = pair;
            if (dpp == 2 && a / 2 == b / 2) bw = fmin(2 * pair, m->fabric_bw_Bps); /* same package */
            t->links[t->b_pair + (nd * gpn + a) * gpn + b] = (pf_link){bw * fe, 0, PF_LINK_PAIR};
          }
    }
  }
  /* NICs: up carries the sender's NIC half and the first switch; down the receiver's half */
  set_range(t, t->b_nu, ports, nic_bw * ne, nic_lat / 2 + sw, PF_LINK_NIC_UP);
  set_range(t, t->b_nd, ports, nic_bw * ne, nic_lat / 2, PF_LINK_NIC_DOWN);

  switch (n->kind) {
  case PF_TOPO_FAT_TREE: {
    double up_total = t->E * (m->nic_bw_Bps > 0 ? m->nic_bw_Bps : link_bw) * (n->taper > 0 ? n->taper : 1.0);
    double ubw = up_total / t->U * ne;
    set_range(t, t->b_lu, t->leaves * t->U, ubw, sw, PF_LINK_UP);
    set_range(t, t->b_ld, t->leaves * t->U, ubw, sw, PF_LINK_DOWN);
    if (t->C > 0) { /* aggregation -> core: as much as the aggregation switch receives from its leaves */
      double abw = ubw * t->lpp / t->C;
      set_range(t, t->b_au, t->pods * t->U * t->C, abw, sw, PF_LINK_UP);
      set_range(t, t->b_ad, t->pods * t->U * t->C, abw, sw, PF_LINK_DOWN);
    }
    break;
  }
  case PF_TOPO_DRAGONFLY: {
    double gtot = n->global_bw_per_group_Bps;
    set_range(t, t->b_lo, t->nsw, (t->S - 1) * link_bw * ne, 0, PF_LINK_LOCAL);
    set_range(t, t->b_li, t->nsw, (t->S - 1) * link_bw * ne, sw, PF_LINK_LOCAL);
    set_range(t, t->b_go, t->nsw, gtot / t->S * ne, sw, PF_LINK_GLOBAL);
    set_range(t, t->b_gi, t->nsw, gtot / t->S * ne, sw, PF_LINK_GLOBAL);
    double pair = gtot / (t->groups_total > 1 ? t->groups_total - 1 : 1) * ne;
    for (int a = 0; a < t->ngroups; a++)
      for (int b = 0; b < t->ngroups; b++)
        if (a != b) t->links[t->b_gp + a * t->ngroups + b] = (pf_link){pair, sw, PF_LINK_GLOBAL};
    break;
  }
  case PF_TOPO_DRAGONFLY_PLUS: {
    double gtot = n->global_bw_per_group_Bps;
    double bundle = t->eps * (m->nic_bw_Bps > 0 ? m->nic_bw_Bps : link_bw) * (n->taper > 0 ? n->taper : 1.0) / t->K * ne;
    set_range(t, t->b_lu, t->nsw * t->K, bundle, sw, PF_LINK_UP);
    set_range(t, t->b_ld, t->nsw * t->K, bundle, sw, PF_LINK_DOWN);
    set_range(t, t->b_go, t->ngroups * t->K, gtot / t->K * ne, 0, PF_LINK_GLOBAL);
    set_range(t, t->b_gi, t->ngroups * t->K, gtot / t->K * ne, 0, PF_LINK_GLOBAL);
    double pair = gtot / (t->groups_total > 1 ? t->groups_total - 1 : 1) * ne;
    for (int a = 0; a < t->ngroups; a++)
      for (int b = 0; b < t->ngroups; b++)
        if (a != b) t->links[t->b_gp + a * t->ngroups + b] = (pf_link){pair, sw, PF_LINK_GLOBAL};
    break;
  }
  case PF_TOPO_TORUS:
    for (int nd = 0; nd < nodes; nd++)
      for (int d = 0; d < 6; d++)
        if (t->dims[d / 2] > 1) t->links[t->b_lu + nd * 6 + d] = (pf_link){link_bw * ne, sw, PF_LINK_TORUS};
    break;
  case PF_TOPO_SINGLE:
    break;
  }
  return 0;
}

static inline void push(const pf_topology *t, pf_route *r, int l) {
  if (r->n < PF_ROUTE_MAX) {
    r->link[r->n++] = l;
    r->lat_s += t->links[l].lat_s;
  }
}

/* NIC (routed index 0..nics-1) of local GPU l, and its physical port number. */
static inline int rail_of(const pf_topology *t, int local) { return local * t->nics / t->gpn; }
static inline int phys_port(const pf_topology *t, int node, int rail) {
  return node * t->phys_nics + rail * (t->phys_nics / t->nics);
}

static int ft_leaf(const pf_topology *t, int node, int rail) {
  if (t->lpr > 0) return (rail * (t->phys_nics / t->nics)) * t->lpr + node / t->E;
  return phys_port(t, node, rail) / t->E;
}

static void route_net(const pf_topology *t, int na, int ra, int nb, int rb, pf_route *r) {
  int pa = phys_port(t, na, ra), pb = phys_port(t, nb, rb);
  push(t, r, t->b_nu + na * t->nics + ra);
  switch (t->kind) {
  case PF_TOPO_FAT_TREE: {
    int la = ft_leaf(t, na, ra), lb = ft_leaf(t, nb, rb);
    if (la != lb) {
      int j = pb % t->U;
      int pa_pod = la / t->lpp, pb_pod = lb / t->lpp;
      push(t, r, t->b_lu + la * t->U + j);
      if (pa_pod != pb_pod && t->C > 0) {
        int c = (pb / t->U) % t->C;
        push(t, r, t->b_au + (pa_pod * t->U + j) * t->C + c);
        push(t, r, t->b_ad + (pb_pod * t->U + j) * t->C + c);
      }
      push(t, r, t->b_ld + lb * t->U + j);
    }
    break;
  }
  case PF_TOPO_DRAGONFLY: {
    int sa = pa / t->eps, sb = pb / t->eps;
    if (sa != sb) {
      int ga = sa / t->S, gb = sb / t->S;
      if (ga == gb) {
        push(t, r, t->b_lo + sa);
        push(t, r, t->b_li + sb);
      } else {
        push(t, r, t->b_go + sa);
        push(t, r, t->b_gp + ga * t->ngroups + gb);
        push(t, r, t->b_gi + sb);
      }
    }
    break;
  }
  case PF_TOPO_DRAGONFLY_PLUS: {
    int la = pa / t->eps, lb = pb / t->eps;
    if (la != lb) {
      int ga = la / t->S, gb = lb / t->S, j = pb % t->K;
      push(t, r, t->b_lu + la * t->K + j);
      if (ga != gb) {
        push(t, r, t->b_go + ga * t->K + j);
        push(t, r, t->b_gp + ga * t->ngroups + gb);
        push(t, r, t->b_gi + gb * t->K + j);
      }
      push(t, r, t->b_ld + lb * t->K + j);
    }
    break;
  }
  case PF_TOPO_TORUS: {
    int c[3], d[3], cur = na;
    c[0] = na % t->dims[0]; c[1] = (na / t->dims[0]) % t->dims[1]; c[2] = na / (t->dims[0] * t->dims[1]);
    d[0] = nb % t->dims[0]; d[1] = (nb / t->dims[0]) % t->dims[1]; d[2] = nb / (t->dims[0] * t->dims[1]);
    int stride[3] = {1, t->dims[0], t->dims[0] * t->dims[1]};
    for (int k = 0; k < 3; k++) {
      int L = t->dims[k], fwd = ((d[k] - c[k]) % L + L) % L;
      int dir = fwd <= L - fwd ? 0 : 1, steps = dir == 0 ? fwd : L - fwd;
      for (int s = 0; s < steps; s++) {
        push(t, r, t->b_lu + cur * 6 + 2 * k + dir);
        c[k] = dir == 0 ? (c[k] + 1) % L : (c[k] - 1 + L) % L;
        cur = c[0] * stride[0] + c[1] * stride[1] + c[2] * stride[2];
      }
    }
    break;
  }
  case PF_TOPO_SINGLE:
    break;
  }
  push(t, r, t->b_nd + nb * t->nics + rb);
}

void pf_topology_route(const pf_topology *t, int a, int b, pf_route *r) {
  r->n = 0;
  r->lat_s = 0;
  if (a == b) return;
  int na = a / t->gpn, nb = b / t->gpn, la = a % t->gpn, lb = b % t->gpn;
  if (na == nb && t->b_pd > t->b_pu) { /* intra-node fabric */
    push(t, r, t->b_pu + a);
    if (t->mesh) push(t, r, t->b_pair + (na * t->gpn + la) * t->gpn + lb);
    push(t, r, t->b_pd + b);
    return;
  }
  route_net(t, na, rail_of(t, la), nb, rail_of(t, lb), r);
}

double pf_route_bw(const pf_topology *t, const pf_route *r) {
  double bw = INFINITY;
  for (int i = 0; i < r->n; i++) bw = fmin(bw, t->links[r->link[i]].bw_Bps);
  return bw;
}

int pf_topology_write_xml(const pf_topology *t, FILE *f, const int *pairs, long npairs, double host_flops) {
  unsigned char *used = calloc((size_t)(t->nlinks > 0 ? t->nlinks : 1), 1);
  if (!used) return pf_error_set(PF_ENOMEM, "out of memory");
  long np = pairs ? npairs : (long)t->gpus * t->gpus;
  pf_route r;
  for (long k = 0; k < np; k++) {
    int a = pairs ? pairs[2 * k] : (int)(k / t->gpus), b = pairs ? pairs[2 * k + 1] : (int)(k % t->gpus);
    pf_topology_route(t, a, b, &r);
    for (int i = 0; i < r.n; i++) used[r.link[i]] = 1;
  }
  fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
             "<platform version=\"4.1\">\n<zone id=\"job\" routing=\"Full\">\n");
  for (int g = 0; g < t->gpus; g++) fprintf(f, "<host id=\"g%d\" speed=\"%.17gf\"/>\n", g, host_flops);
  for (int l = 0; l < t->nlinks; l++)
    if (used[l])
      fprintf(f, "<link id=\"l%d\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" sharing_policy=\"SHARED\"/>\n", l,
              t->links[l].bw_Bps, t->links[l].lat_s);
  for (long k = 0; k < np; k++) {
    int a = pairs ? pairs[2 * k] : (int)(k / t->gpus), b = pairs ? pairs[2 * k + 1] : (int)(k % t->gpus);
    if (a == b) continue;
    pf_topology_route(t, a, b, &r);
    fprintf(f, "<route src=\"g%d\" dst=\"g%d\" symmetrical=\"NO\">", a, b);
    for (int i = 0; i < r.n; i++) fprintf(f, "<link_ctn id=\"l%d\"/>", r.link[i]);
    fprintf(f, "</route>\n");
  }
  fprintf(f, "</zone>\n</platform>\n");
  free(used);
  return ferror(f) ? pf_error_set(PF_EIO, "writing the SimGrid platform failed") : 0;
}
