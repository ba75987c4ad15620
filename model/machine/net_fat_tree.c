/* net_fat_tree.c - the fat tree network kind ("fat_tree", network.h):
 * InfiniBand fat trees of 2 or 3 levels, with leaf and core taper and
 * rail-optimised leaves (MareNostrum 5, Karolina, Deucalion, JEDI).
 *
 * Keys (docs/machine-format.md): levels (default 2, at most 5),
 * endpoints_per_leaf (required), taper (leaf uplink/downlink bandwidth, in
 * (0, 1], default 1), rail_optimized, core_taper (3 levels: aggregation
 * uplink/downlink, in (0, 1], default 1).
 *
 * Capacity check: a fat tree of L levels whose leaves have E down-ports and as
 * many up (radix 2E at taper 1, the usual split of a switch) holds
 * E x (2E)^(L-1) endpoints: 2 levels of radix-k switches k^2/2, 3 levels
 * k^3/4 (Al-Fares et al., SIGCOMM 2008, for k-ary fat trees).
 *
 * Links (formulas and sources in docs/communication.md section 2): leaves of
 * E = endpoints_per_leaf NIC ports, each with U uplinks whose capacity totals
 * E x NIC rate x taper; 2 levels: U spines; 3 levels: pods of E leaves, U
 * aggregation switches per pod, each with E links to the core carrying what it
 * receives from its leaves x core_taper.  Endpoints are numbered leaf by leaf
 * (ep = leaf x E + port), as InfiniBand's subnet manager assigns LIDs, and
 * routed by static D-mod-k as its ftree engine: up-port j = ep_dst mod U, core
 * port c = (ep_dst / U) mod E.  Rail-optimised: NIC k of every node lands on
 * the leaves of rail k, so consecutive nodes of one rail are consecutive ports
 * of one leaf (numbering by node x NICs + k instead sends a rail's traffic
 * through U / NICs of the U uplinks).
 */
#include "netkinds.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static int ft_read(const reader *r, pf_network *n) {
  n->levels = 2;
  n->taper = 1.0;
  n->core_taper = 1.0;
  TRY(get_int_in(r, "network.levels", &n->levels, 0, 1, 5));
  TRY(get_int(r, "network.endpoints_per_leaf", &n->endpoints_per_leaf, 0, 1));
  TRY(get_num(r, "network.taper", &n->taper, 0));
  TRY(get_bool(r, "network.rail_optimized", &n->rail_optimized));
  TRY(get_num(r, "network.core_taper", &n->core_taper, 0));
  if (n->core_taper <= 0 || n->core_taper > 1.0)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.network.core_taper: must be in (0, 1]", r->file,
                        line_of(lookup(r, "network.core_taper")));
  return 0;
}

static int ft_check(const reader *r, const pf_machine *m) {
  const pf_network *n = &m->net;
  int ports = m->nodes * (m->nics_per_node > 0 ? m->nics_per_node : 1); /* at most 1e6 x PF_MAX_GPN */
  if (n->endpoints_per_leaf <= 0) return missing(r, "network.endpoints_per_leaf");
  if (n->taper <= 0 || n->taper > 1.0)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.network.taper: must be in (0, 1]", r->file,
                        line_of(lookup(r, "network")));
  double cap = n->endpoints_per_leaf;
  for (int l = 1; l < n->levels; l++) cap *= 2.0 * n->endpoints_per_leaf;
  if (cap >= ports) return 0;
  return pf_error_set(PF_EPARSE, "%s:%d: machine.network: a %d-level fat tree with %d endpoints per leaf holds %.0f "
                      "NIC ports, fewer than the machine's %d; add a level (network.levels)", r->file,
                      line_of(lookup(r, "network.levels")), n->levels, n->endpoints_per_leaf, cap, ports);
}

static void ft_describe(const pf_network *n, char *buf, size_t len) {
  snprintf(buf, len, "%d levels, %d endpoints/leaf, taper %.2f%s", n->levels, n->endpoints_per_leaf, n->taper,
           n->rail_optimized ? ", rail-optimised" : "");
}

/* The layout: E ports per leaf, U uplinks per leaf, C core links per aggregation switch (0: 2 levels),
 * leaves per pod, pods, leaves per rail (rail-optimised, else 0), and the link blocks. */
typedef struct {
  int E, U, C, leaves, lpp, pods, lpr;
  int b_lu, b_ld, b_au, b_ad;
} fat_tree;

static int ft_layout(const pf_machine *m, pf_net_layout *net) {
  const pf_network *n = &m->net;
  fat_tree *t = calloc(1, sizeof *t);
  if (!t) return pf_error_set(PF_ENOMEM, "out of memory");
  net->own = t;
  double link_bw = net->link_bw_Bps;
  int physports = net->span * net->phys_nics;
  t->E = n->endpoints_per_leaf > 0 ? n->endpoints_per_leaf : 32;
  double up_total = t->E * (m->nic_bw_Bps > 0 ? m->nic_bw_Bps : link_bw) * (n->taper > 0 ? n->taper : 1.0);
  t->U = (int)ceil(up_total / link_bw - 1e-9);
  if (t->U < 1) t->U = 1;
  if (n->rail_optimized && net->phys_nics > 1) {
    t->lpr = pf_net_cdiv(net->span, t->E);
    t->leaves = net->phys_nics * t->lpr;
  } else {
    t->leaves = pf_net_cdiv(physports, t->E);
  }
  t->lpp = n->levels >= 3 ? t->E : t->leaves;
  t->pods = pf_net_cdiv(t->leaves, t->lpp);
  t->C = n->levels >= 3 ? t->E : 0;
  t->b_lu = pf_net_block_add(net, "leaf_up", t->leaves, t->U);
  t->b_ld = pf_net_block_add(net, "leaf_down", t->leaves, t->U);
  t->b_au = pf_net_block_add(net, "aggr_up", (long)t->pods * t->U, t->C);
  t->b_ad = pf_net_block_add(net, "aggr_down", (long)t->pods * t->U, t->C);
  return 0;
}

static void ft_build(const pf_machine *m, const pf_net_layout *net) {
  const pf_network *n = &m->net;
  const fat_tree *t = net->own;
  double ne = net->eff, sw = n->switch_latency_s, nicbw = m->nic_bw_Bps > 0 ? m->nic_bw_Bps : net->link_bw_Bps;
  double up_total = t->E * nicbw * (n->taper > 0 ? n->taper : 1.0);
  double ubw = up_total / t->U * ne;
  pf_net_set_links(net, t->b_lu, (long)t->leaves * t->U, ubw, sw, PF_LINK_UP);
  pf_net_set_links(net, t->b_ld, (long)t->leaves * t->U, ubw, sw, PF_LINK_DOWN);
  if (t->C > 0) { /* aggregation -> core: what the aggregation switch receives from its leaves, x core taper */
    double abw = ubw * t->lpp / t->C * (n->core_taper > 0 ? n->core_taper : 1.0);
    pf_net_set_links(net, t->b_au, (long)t->pods * t->U * t->C, abw, sw, PF_LINK_UP);
    pf_net_set_links(net, t->b_ad, (long)t->pods * t->U * t->C, abw, sw, PF_LINK_DOWN);
  }
}

/* Leaf and leaf-ordered endpoint number of NIC port nic of partition node slot. */
static void ft_place(const fat_tree *t, int phys_nics, int slot, int nic, int *leaf, int *ep) {
  if (t->lpr > 0) {
    *leaf = nic * t->lpr + slot / t->E;
    *ep = *leaf * t->E + slot % t->E;
  } else {
    *ep = slot * phys_nics + nic;
    *leaf = *ep / t->E;
  }
}

static void ft_route(const pf_net_layout *net, int sa, int ka, int sb, int kb, pf_route *r) {
  const fat_tree *t = net->own;
  int la, lb, ea, eb;
  ft_place(t, net->phys_nics, sa, ka, &la, &ea);
  ft_place(t, net->phys_nics, sb, kb, &lb, &eb);
  (void)ea;
  if (la == lb) return;
  int j = eb % t->U;
  int pod_a = la / t->lpp, pod_b = lb / t->lpp;
  pf_route_push(r, net->links, t->b_lu + la * t->U + j);
  if (pod_a != pod_b && t->C > 0) {
    int c = (eb / t->U) % t->C;
    pf_route_push(r, net->links, t->b_au + (pod_a * t->U + j) * t->C + c);
    pf_route_push(r, net->links, t->b_ad + (pod_b * t->U + j) * t->C + c);
  }
  pf_route_push(r, net->links, t->b_ld + lb * t->U + j);
}

const pf_net_kind pf_net_fat_tree = {
    .name = "fat_tree",
    .describe = ft_describe,
    .read = ft_read,
    .check = ft_check,
    .layout = ft_layout,
    .build = ft_build,
    .route = ft_route,
};
