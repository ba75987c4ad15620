/* net_dragonfly_plus.c - the dragonfly+ network kind ("dragonfly_plus",
 * network.h): InfiniBand leaf-spine groups joined at the spines (JUWELS
 * Booster, JURECA-DC, Leonardo, JUPITER, MeluXina, Vega).
 *
 * Keys (docs/machine-format.md): groups, leaves_per_group, spines_per_group,
 * endpoints_per_switch (per leaf), global_bandwidth (all global links of one
 * group together, per direction), all required; taper (leaf-spine bundles,
 * default 1) and routing = "minimal" (default) or "adaptive", as the
 * dragonfly's (net_dragonfly.c).  The leaves must hold the machine's NIC
 * ports.
 *
 * Links (formulas and sources in docs/communication.md section 2): groups of
 * leaves and spines (a 2-level fat tree, leaf-spine bundles of eps x NIC rate x
 * taper / K), global links at the spines: spine j of a group owns
 * global_bandwidth / K, a group pair global_bandwidth / (groups - 1)
 * (adaptive: as dragonfly).  D-mod-k picks the spine.
 */
#include "netkinds.h"

#include <stdio.h>
#include <stdlib.h>

static int dfp_read(const reader *r, pf_network *n) {
  n->taper = 1.0;
  TRY(get_num(r, "network.taper", &n->taper, 0));
  TRY(get_int(r, "network.groups", &n->groups, 0, 1));
  TRY(get_int(r, "network.endpoints_per_switch", &n->endpoints_per_switch, 0, 1));
  TRY(get_int(r, "network.leaves_per_group", &n->leaves_per_group, 0, 1));
  TRY(get_int(r, "network.spines_per_group", &n->spines_per_group, 0, 1));
  TRY(get_qty(r, "network.global_bandwidth", PF_UNIT_BANDWIDTH, &n->global_bw_per_group_Bps, 0));
  return pf_net_read_routing(r, n);
}

static int dfp_check(const reader *r, const pf_machine *m) {
  const pf_network *n = &m->net;
  int ports = m->nodes * (m->nics_per_node > 0 ? m->nics_per_node : 1); /* at most 1e6 x PF_MAX_GPN */
  if (n->groups <= 0) return missing(r, "network.groups");
  if (n->leaves_per_group <= 0) return missing(r, "network.leaves_per_group");
  if (n->spines_per_group <= 0) return missing(r, "network.spines_per_group");
  if (n->endpoints_per_switch <= 0) return missing(r, "network.endpoints_per_switch");
  if ((long)n->groups * n->leaves_per_group * n->endpoints_per_switch < ports)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.network: %d groups x %d leaves x %d endpoints < %d NIC ports",
                        r->file, line_of(lookup(r, "network")), n->groups, n->leaves_per_group,
                        n->endpoints_per_switch, ports);
  if (n->global_bw_per_group_Bps <= 0) return missing(r, "network.global_bandwidth");
  return 0;
}

static void dfp_describe(const pf_network *n, char *buf, size_t len) {
  snprintf(buf, len, "%d groups x (%d leaves + %d spines) x %d endpoints, %.1f Tb/s global per group", n->groups,
           n->leaves_per_group, n->spines_per_group, n->endpoints_per_switch, n->global_bw_per_group_Bps * 8 / 1e12);
}

/* The layout: S leaves and K spines per group, eps endpoints per leaf, the machine's groups, the job's
 * leaves and groups, and the link blocks. */
typedef struct {
  int S, K, eps, groups_total, nsw, ngroups;
  int b_lu, b_ld, b_go, b_gi, b_gp;
} dragonfly_plus;

static int dfp_layout(const pf_machine *m, pf_net_layout *net) {
  const pf_network *n = &m->net;
  dragonfly_plus *t = calloc(1, sizeof *t);
  if (!t) return pf_error_set(PF_ENOMEM, "out of memory");
  net->own = t;
  t->S = n->leaves_per_group;
  t->K = n->spines_per_group;
  t->eps = n->endpoints_per_switch;
  t->groups_total = n->groups;
  t->nsw = pf_net_cdiv((long)net->span * net->phys_nics, t->eps); /* leaves */
  t->ngroups = pf_net_cdiv(t->nsw, t->S);
  t->b_lu = pf_net_block_add(net, "leaf_up", t->nsw, t->K);
  t->b_ld = pf_net_block_add(net, "leaf_down", t->nsw, t->K);
  t->b_go = pf_net_block_add(net, "global_out", t->ngroups, t->K);
  t->b_gi = pf_net_block_add(net, "global_in", t->ngroups, t->K);
  t->b_gp = pf_net_block_add(net, "group_pair", t->ngroups, t->ngroups);
  return 0;
}

static void dfp_build(const pf_machine *m, const pf_net_layout *net) {
  const pf_network *n = &m->net;
  const dragonfly_plus *t = net->own;
  double ne = net->eff, sw = n->switch_latency_s, nicbw = m->nic_bw_Bps > 0 ? m->nic_bw_Bps : net->link_bw_Bps;
  double gtot = n->global_bw_per_group_Bps;
  double bundle = t->eps * nicbw * (n->taper > 0 ? n->taper : 1.0) / t->K * ne;
  pf_net_set_links(net, t->b_lu, (long)t->nsw * t->K, bundle, sw, PF_LINK_UP);
  pf_net_set_links(net, t->b_ld, (long)t->nsw * t->K, bundle, sw, PF_LINK_DOWN);
  pf_net_set_links(net, t->b_go, (long)t->ngroups * t->K, gtot / t->K * ne, 0, PF_LINK_GLOBAL);
  pf_net_set_links(net, t->b_gi, (long)t->ngroups * t->K, gtot / t->K * ne, 0, PF_LINK_GLOBAL);
  pf_net_group_pairs(net, t->b_gp, t->ngroups, t->groups_total, gtot, sw, n->adaptive_routing);
}

static void dfp_route(const pf_net_layout *net, int sa, int ka, int sb, int kb, pf_route *r) {
  const dragonfly_plus *t = net->own;
  int pa = sa * net->phys_nics + ka, pb = sb * net->phys_nics + kb;
  int la = pa / t->eps, lb = pb / t->eps;
  if (la == lb) return;
  int ga = la / t->S, gb = lb / t->S, j = pb % t->K;
  pf_route_push(r, net->links, t->b_lu + la * t->K + j);
  if (ga != gb) {
    pf_route_push(r, net->links, t->b_go + ga * t->K + j);
    pf_route_push(r, net->links, t->b_gp + ga * t->ngroups + gb);
    pf_route_push(r, net->links, t->b_gi + gb * t->K + j);
  }
  pf_route_push(r, net->links, t->b_ld + lb * t->K + j);
}

const pf_net_kind pf_net_dragonfly_plus = {
    .name = "dragonfly_plus",
    .describe = dfp_describe,
    .read = dfp_read,
    .check = dfp_check,
    .layout = dfp_layout,
    .build = dfp_build,
    .route = dfp_route,
};
