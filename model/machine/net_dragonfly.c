/* net_dragonfly.c - the dragonfly network kind ("dragonfly", network.h): HPE
 * Slingshot (LUMI, Frontier, Alps, Aurora); and the group-pair links and the
 * routing key it shares with the dragonfly+ (net_dragonfly_plus.c).
 *
 * Keys (docs/machine-format.md): groups, switches_per_group,
 * endpoints_per_switch, global_bandwidth (all global links of one group
 * together, per direction), all required; routing = "minimal" (default) or
 * "adaptive".  The groups must hold the machine's NIC ports.
 *
 * Links (formulas and sources in docs/communication.md section 2): groups of
 * S switches connected all-to-all, eps endpoints per switch, global links
 * between groups.  The local all-to-all of a group is modelled per switch as
 * one egress and one ingress link of (S-1) x link rate: under minimal routing
 * that is exact for uniform traffic, and under Slingshot's adaptive routing it
 * is what a hot switch pair can get by spreading over the 2-hop detours.
 * Global: each switch's share of the group's global bandwidth
 * (global_bandwidth / S, out and in) and a group pair's direct links
 * (global_bandwidth / (groups - 1)).  Adaptive routing (network.routing =
 * "adaptive": UGAL, Kim et al. ISCA 2008) lets a hot group pair spread over
 * Valiant detours through the other groups, each detour crossing two global
 * links: the pair gets max(direct, global / 2).  Latency: 2 switches inside a
 * group, 4 between groups.
 */
#include "netkinds.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int pf_net_read_routing(const reader *r, pf_network *n) {
  static const char *routing_names[] = {"minimal", "adaptive"};
  int routing = 0;
  TRY(get_enum(r, "network.routing", routing_names, 2, &routing, 0));
  n->adaptive_routing = routing == 1;
  return 0;
}

void pf_net_group_pairs(const pf_net_layout *net, int first, int ngroups, int groups_total, double gtot, double sw,
                        int adaptive) {
  double pair = gtot / (groups_total > 1 ? groups_total - 1 : 1);
  if (adaptive) pair = fmax(pair, gtot / 2);
  for (int a = 0; a < ngroups; a++)
    for (int b = 0; b < ngroups; b++)
      if (a != b) net->links[first + a * ngroups + b] = (pf_link){pair * net->eff, sw, PF_LINK_GLOBAL};
}

static int df_read(const reader *r, pf_network *n) {
  TRY(get_int(r, "network.groups", &n->groups, 0, 1));
  TRY(get_int(r, "network.switches_per_group", &n->switches_per_group, 0, 1));
  TRY(get_int(r, "network.endpoints_per_switch", &n->endpoints_per_switch, 0, 1));
  TRY(get_qty(r, "network.global_bandwidth", PF_UNIT_BANDWIDTH, &n->global_bw_per_group_Bps, 0));
  return pf_net_read_routing(r, n);
}

static int df_check(const reader *r, const pf_machine *m) {
  const pf_network *n = &m->net;
  int ports = m->nodes * (m->nics_per_node > 0 ? m->nics_per_node : 1); /* at most 1e6 x PF_MAX_GPN */
  if (n->groups <= 0) return missing(r, "network.groups");
  if (n->switches_per_group <= 0) return missing(r, "network.switches_per_group");
  if (n->endpoints_per_switch <= 0) return missing(r, "network.endpoints_per_switch");
  if ((long)n->groups * n->switches_per_group * n->endpoints_per_switch < ports)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.network: %d groups x %d switches x %d endpoints < %d NIC ports",
                        r->file, line_of(lookup(r, "network")), n->groups, n->switches_per_group,
                        n->endpoints_per_switch, ports);
  if (n->global_bw_per_group_Bps <= 0) return missing(r, "network.global_bandwidth");
  return 0;
}

static void df_describe(const pf_network *n, char *buf, size_t len) {
  snprintf(buf, len, "%d groups x %d switches x %d endpoints, %.1f Tb/s global per group", n->groups,
           n->switches_per_group, n->endpoints_per_switch, n->global_bw_per_group_Bps * 8 / 1e12);
}

/* The layout: S switches per group, eps endpoints per switch, the machine's groups, the job's switches and
 * groups, and the link blocks. */
typedef struct {
  int S, eps, groups_total, nsw, ngroups;
  int b_lo, b_li, b_go, b_gi, b_gp;
} dragonfly;

static int df_layout(const pf_machine *m, pf_net_layout *net) {
  const pf_network *n = &m->net;
  dragonfly *t = calloc(1, sizeof *t);
  if (!t) return pf_error_set(PF_ENOMEM, "out of memory");
  net->own = t;
  t->S = n->switches_per_group;
  t->eps = n->endpoints_per_switch;
  t->groups_total = n->groups;
  t->nsw = pf_net_cdiv((long)net->span * net->phys_nics, t->eps);
  t->ngroups = pf_net_cdiv(t->nsw, t->S);
  t->b_lo = pf_net_block_add(net, "local_out", t->nsw, 1);
  t->b_li = pf_net_block_add(net, "local_in", t->nsw, 1);
  t->b_go = pf_net_block_add(net, "global_out", t->nsw, 1);
  t->b_gi = pf_net_block_add(net, "global_in", t->nsw, 1);
  t->b_gp = pf_net_block_add(net, "group_pair", t->ngroups, t->ngroups);
  return 0;
}

static void df_build(const pf_machine *m, const pf_net_layout *net) {
  const pf_network *n = &m->net;
  const dragonfly *t = net->own;
  double ne = net->eff, sw = n->switch_latency_s, link_bw = net->link_bw_Bps;
  double gtot = n->global_bw_per_group_Bps;
  pf_net_set_links(net, t->b_lo, t->nsw, (t->S - 1) * link_bw * ne, 0, PF_LINK_LOCAL);
  pf_net_set_links(net, t->b_li, t->nsw, (t->S - 1) * link_bw * ne, sw, PF_LINK_LOCAL);
  pf_net_set_links(net, t->b_go, t->nsw, gtot / t->S * ne, sw, PF_LINK_GLOBAL);
  pf_net_set_links(net, t->b_gi, t->nsw, gtot / t->S * ne, sw, PF_LINK_GLOBAL);
  pf_net_group_pairs(net, t->b_gp, t->ngroups, t->groups_total, gtot, sw, n->adaptive_routing);
}

static void df_route(const pf_net_layout *net, int sa, int ka, int sb, int kb, pf_route *r) {
  const dragonfly *t = net->own;
  int pa = sa * net->phys_nics + ka, pb = sb * net->phys_nics + kb;
  int wa = pa / t->eps, wb = pb / t->eps; /* switches */
  if (wa == wb) return;
  int ga = wa / t->S, gb = wb / t->S;
  if (ga == gb) {
    pf_route_push(r, net->links, t->b_lo + wa);
    pf_route_push(r, net->links, t->b_li + wb);
  } else {
    pf_route_push(r, net->links, t->b_go + wa);
    pf_route_push(r, net->links, t->b_gp + ga * t->ngroups + gb);
    pf_route_push(r, net->links, t->b_gi + wb);
  }
}

const pf_net_kind pf_net_dragonfly = {
    .name = "dragonfly",
    .describe = df_describe,
    .read = df_read,
    .check = df_check,
    .layout = df_layout,
    .build = df_build,
    .route = df_route,
};
