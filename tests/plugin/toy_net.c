/* toy_net.c - a network kind from outside model/: "toy_ring", one router per
 * node on a one-way ring (every message travels clockwise, one neighbour link
 * per hop, each of network.lanes parallel links at the link rate).  A toy for
 * the recipe "Adding a network kind" (docs/architecture.md): one file, one
 * registration through pf_net_kind_register(), the call the built-in kinds
 * go through too; model/ is not edited.  It is linked into the preflight-toy
 * command only (tests/CMakeLists.txt), with the same sources as preflight,
 * and registers itself before main() runs (a constructor).
 * tests/plugin/net_kind.sh runs it on tests/plugin/toy.cfg. */
#include "core/core.h"
#include "machine/machine.h"

#include <stdio.h>
#include <stdlib.h>

/* network.lanes (1 to 64, default 1), kept in the network's ext[0]. */
static int toy_read(const pf_cfg_reader *r, pf_network *n) {
  int lanes = 1;
  int rc = pf_cfg_int_in(r, "network.lanes", &lanes, 0, 1, 64);
  if (rc < 0) return rc;
  n->ext[0] = lanes;
  return 0;
}

/* A route crosses up to nodes - 1 ring links: keep it within a route's PF_ROUTE_MAX links. */
static int toy_check(const pf_cfg_reader *r, const pf_machine *m) {
  return pf_cfg_range(r, "nodes", m->nodes, 1, false, 32, "a toy ring of at most 32 routers");
}

static void toy_describe(const pf_network *n, char *buf, size_t len) {
  snprintf(buf, len, "one-way ring, %.0f lane%s per hop", n->ext[0], n->ext[0] == 1 ? "" : "s");
}

/* The layout: routers on the ring (the partition's nodes) and the first ring link (router s -> s + 1). */
typedef struct {
  int routers, first;
} toy_ring;

static int toy_layout(const pf_machine *m, pf_net_layout *net) {
  toy_ring *g = calloc(1, sizeof *g);
  if (!g) return pf_error_set(PF_ENOMEM, "out of memory");
  net->own = g;
  g->routers = m->nodes > net->span ? m->nodes : net->span;
  g->first = pf_net_block_add(net, "ring", g->routers, 1);
  return 0;
}

static void toy_build(const pf_machine *m, const pf_net_layout *net) {
  const toy_ring *g = net->own;
  pf_net_set_links(net, g->first, g->routers, net->link_bw_Bps * m->net.ext[0] * net->eff, m->net.switch_latency_s,
                   PF_LINK_TORUS);
}

static void toy_route(const pf_net_layout *net, int slot_a, int nic_a, int slot_b, int nic_b, pf_route *r) {
  const toy_ring *g = net->own;
  (void)nic_a;
  (void)nic_b;
  for (int s = slot_a; s != slot_b; s = (s + 1) % g->routers) pf_route_push(r, net->links, g->first + s);
}

static const pf_net_kind toy_ring_kind = {
    .name = "toy_ring",
    .describe = toy_describe,
    .read = toy_read,
    .check = toy_check,
    .layout = toy_layout,
    .build = toy_build,
    .route = toy_route,
};

__attribute__((constructor)) static void toy_register(void) {
  if (pf_net_kind_register(&toy_ring_kind) < 0) {
    fprintf(stderr, "toy_net.c: %s\n", pf_error_detail());
    exit(70);
  }
}
