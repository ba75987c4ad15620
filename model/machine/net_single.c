/* net_single.c - the single-switch network kind ("single", network.h): every
 * NIC port of the machine on one switch (the small partitions of machines/,
 * e.g. jureca-dc-h100.cfg, e4-a2.cfg).  No keys of its own and no links
 * beyond the NICs': a route between nodes is NIC up (with the one switch's
 * latency) and NIC down, built by the topology (comm/topology.c).
 */
#include "netkinds.h"

#include <stdio.h>

static void single_describe(const pf_network *n, char *buf, size_t len) {
  (void)n;
  snprintf(buf, len, "single switch");
}

const pf_net_kind pf_net_single = {
    .name = "single",
    .describe = single_describe,
};
