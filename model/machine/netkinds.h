/* netkinds.h - internal: the built-in network kinds (one file each, net_*.c)
 * for the table in network.c, and what the dragonfly and the dragonfly+ share
 * (net_dragonfly.c).  A kind from outside the module needs none of this: it
 * registers itself (network.h). */
#ifndef PREFLIGHT_NETKINDS_H
#define PREFLIGHT_NETKINDS_H

#include "cfgread.h"
#include "network.h"

extern const pf_net_kind pf_net_fat_tree, pf_net_dragonfly, pf_net_dragonfly_plus, pf_net_torus, pf_net_single;

static inline int pf_net_cdiv(long a, long b) { return (int)((a + b - 1) / b); }

/* network.routing: "minimal" (default) or "adaptive", into n->adaptive_routing. */
int pf_net_read_routing(const reader *r, pf_network *n);
/* The group-pair block (ngroups x ngroups links): each pair's direct share of
 * the group's global bandwidth gtot, or with adaptive routing up to half of
 * it over Valiant detours (net_dragonfly.c). */
void pf_net_group_pairs(const pf_net_layout *net, int first, int ngroups, int groups_total, double gtot, double sw,
                        int adaptive);

#endif
