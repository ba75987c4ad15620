/* test_topology.c - routes, capacities and latencies of the C topology, and
 * the SimGrid platform it emits: SimGrid's own route latency and bandwidth
 * for every GPU pair must equal ours.  The routing tests count the flows of a
 * full-machine ring on every uplink and assert an even spread (issue 9). */
#include "check.h"

#include "comm/comm.h"
#include "machine/machine.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <xbt/config.h>
#include <xbt/log.h>

#define PF_FIXTURE(f) (getenv("PF_SRC") ? fixture(f) : "tests/fixtures/machines/" f)
static const char *fixture(const char *f) {
  static char buf[1024];
  snprintf(buf, sizeof buf, "%s/tests/fixtures/machines/%s", getenv("PF_SRC"), f);
  return buf;
}

/* A link block of the network kind's layout (machine/network.h): switches x per links from first. */
static pf_net_block blk(const pf_topology *t, const char *name) {
  const pf_net_block *b = pf_net_block_find(&t->net, name);
  CHECK(b != NULL);
  return b ? *b : (pf_net_block){name, 0, 0, 0};
}

static int load(const char *id, pf_machine *m) {
  int rc = pf_machine_load(id, m);
  CHECK(rc == 0);
  return rc;
}

/* every link of every route from a to all b exists (capacity > 0), latencies add up */
static void check_routes(const pf_topology *t, int a) {
  pf_route r;
  for (int b = 0; b < t->gpus; b++) {
    pf_topology_route(t, a, b, &r);
    if (a == b) { CHECK_INT(r.n, 0); continue; }
    double lat = 0;
    int ok = r.n > 0 && r.n < PF_ROUTE_MAX;
    for (int i = 0; i < r.n; i++) {
      ok = ok && r.link[i] >= 0 && r.link[i] < t->nlinks && t->links[r.link[i]].bw_Bps > 0;
      lat += t->links[r.link[i]].lat_s;
    }
    CHECK(ok);
    CHECK_NEAR(r.lat_s, lat, 1e-12);
  }
}

static void test_fat_tree(void) {
  pf_machine m;
  if (load("mn5-acc", &m)) return;
  pf_topology t;
  CHECK(pf_topology_build(&m, 1120, 1.0, &t) == 0);
  CHECK_INT(t.gpus, 4480);
  pf_net_block lu = blk(&t, "leaf_up"), au = blk(&t, "aggr_up");
  CHECK_INT(lu.switches, 70); /* 4480 NIC ports, 64 endpoints per leaf */
  CHECK_INT(lu.per, 32);      /* 64 x 25 GB/s down = 32 x 50 GB/s up (taper 1) */
  CHECK_INT(au.per, 64);      /* 3 levels: 64 core links per aggregation switch */
  CHECK_INT(au.switches, 2 * 32); /* pods of 64 leaves: 2 pods of 32 aggregation switches */
  pf_route r;
  double sw = m.net.switch_latency_s, nic = m.net.nic_latency_s;
  /* same node: NVLink mesh port + pair + port */
  pf_topology_route(&t, 0, 1, &r);
  CHECK_INT(r.n, 3);
  CHECK_INT(t.links[r.link[1]].kind, PF_LINK_PAIR);
  CHECK_NEAR(pf_route_bw(&t, &r), 150e9 * 0.80, 1e-9); /* pair 150 GB/s at 0.80 */
  /* same leaf (16 nodes of 4 NICs): NIC up, NIC down, one switch */
  pf_topology_route(&t, 0, 4, &r);
  CHECK_INT(r.n, 2);
  CHECK_NEAR(r.lat_s, nic + sw, 1e-12);
  CHECK_NEAR(pf_route_bw(&t, &r), 25e9 * 0.90, 1e-9);
  /* another leaf, same pod: 3 switches; another pod: 5 */
  pf_topology_route(&t, 0, 4 * 16, &r);
  CHECK_INT(r.n, 4);
  CHECK_NEAR(r.lat_s, nic + 3 * sw, 1e-12);
  pf_topology_route(&t, 0, 4 * 1100, &r);
  CHECK_INT(r.n, 6);
  CHECK_NEAR(r.lat_s, nic + 5 * sw, 1e-12);
  /* D-mod-k: every source reaches destination d through up-port d mod U (after the PXN hop, if any) */
  int d = 4 * 700 + 2, port = 700 * 4 + 2, up = -1, same = 1;
  for (int a = 0; a < 4 * 600; a += 37) {
    pf_topology_route(&t, a, d, &r);
    int k = 0;
    while (k < r.n && t.links[r.link[k]].kind != PF_LINK_UP) k++;
    if (k == r.n) continue;
    int j = (r.link[k] - lu.first) % lu.per;
    if (up < 0) up = j;
    same = same && j == up;
  }
  CHECK(same);
  CHECK_INT(up, port % lu.per);
  check_routes(&t, 5);
  pf_topology_free(&t);

  /* taper halves the leaf uplinks; rail-optimised puts NIC k on rail k's leaves */
  m.net.taper = 0.5;
  m.net.rail_optimized = true;
  CHECK(pf_topology_build(&m, 64, 1.0, &t) == 0);
  CHECK_INT(blk(&t, "leaf_up").per, 16);
  CHECK_INT(blk(&t, "leaf_up").switches, 4); /* one leaf per rail */
  pf_topology_route(&t, 1, 4 * 63 + 1, &r); /* same rail: same leaf */
  CHECK_INT(r.n, 2);
  pf_topology_route(&t, 1, 4 * 63 + 2, &r); /* other rail: PXN hops to GPU 2 over NVLink, then rail 2's leaf */
  CHECK_INT(r.n, 3 + 2);
  CHECK_INT(t.links[r.link[1]].kind, PF_LINK_PAIR);
  t.pxn = 0; /* without PXN: the sender's rail, through a spine */
  pf_topology_route(&t, 1, 4 * 63 + 2, &r);
  CHECK_INT(r.n, 4);
  t.pxn = 1;
  check_routes(&t, 7);
  pf_topology_free(&t);
}

static void test_dragonfly(void) {
  pf_machine m;
  if (load("lumi-g", &m)) return;
  pf_topology t;
  m.net.adaptive_routing = false; /* minimal routing between groups (test_adaptive covers the default) */
  CHECK(pf_topology_build(&m, 512, 1.0, &t) == 0);
  CHECK_INT(t.nics, 4);
  CHECK_INT(blk(&t, "group_pair").switches, 4); /* 128 nodes (512 NIC ports) per group */
  double sw = m.net.switch_latency_s, nic = m.net.nic_latency_s;
  pf_route r;
  /* GCDs 0,1 share a package: twice the pair bandwidth over Infinity Fabric */
  pf_topology_route(&t, 0, 1, &r);
  CHECK_NEAR(pf_route_bw(&t, &r), 200e9 * 0.75, 1e-9);
  pf_topology_route(&t, 0, 2, &r);
  CHECK_NEAR(pf_route_bw(&t, &r), 100e9 * 0.75, 1e-9);
  /* GCD 2k and 2k+1 use NIC k: GCD 0 -> node 1 GCD 0 is on the same switch (4 nodes per switch) */
  pf_topology_route(&t, 0, 8, &r);
  CHECK_INT(r.n, 2);
  CHECK_NEAR(r.lat_s, nic + sw, 1e-12);
  pf_topology_route(&t, 0, 8 * 4, &r); /* next switch, same group */
  CHECK_INT(r.n, 4);
  CHECK_INT(t.links[r.link[1]].kind, PF_LINK_LOCAL);
  CHECK_NEAR(r.lat_s, nic + 2 * sw, 1e-12);
  CHECK_NEAR(t.links[r.link[1]].bw_Bps, 31 * 25e9 * 0.9, 1e-9);
  pf_topology_route(&t, 0, 8 * 200, &r); /* another group: 4 switches */
  CHECK_INT(r.n, 5);
  CHECK_NEAR(r.lat_s, nic + 4 * sw, 1e-12);
  CHECK_NEAR(t.links[r.link[2]].bw_Bps, 108.8e12 / 8 / 23 * 0.9, 1e-6); /* group pair: global / (groups - 1) */
  check_routes(&t, 3);
  pf_topology_free(&t);
}

static void test_dragonfly_plus(void) {
  pf_machine m;
  if (load("jupiter-booster", &m)) return;
  pf_topology t;
  CHECK(pf_topology_build(&m, m.nodes, 1.0, &t) == 0);
  CHECK_INT(t.gpus, 4 * m.nodes);
  CHECK_INT(blk(&t, "group_pair").switches, 25);
  pf_route r;
  pf_topology_route(&t, 0, 4 * 8, &r); /* 8 nodes per leaf (32 ports): next leaf */
  CHECK_INT(r.n, 4);
  CHECK_NEAR(t.links[r.link[1]].bw_Bps, 32 * 25e9 / 16 * 0.9, 1e-6); /* leaf-spine bundle */
  pf_topology_route(&t, 3, t.gpus - 1, &r); /* another group, GPU 3 to GPU 3: its own rail */
  CHECK_INT(r.n, 7);
  CHECK_NEAR(r.lat_s, m.net.nic_latency_s + 4 * m.net.switch_latency_s, 1e-12);
  pf_topology_route(&t, 0, t.gpus - 1, &r); /* GPU 0 to a GPU 3: PXN, the fabric hop first */
  CHECK_INT(r.n, 3 + 7);
  CHECK_NEAR(r.lat_s, m.fabric_latency_s + m.net.nic_latency_s + 4 * m.net.switch_latency_s, 1e-12);
  check_routes(&t, 1234);
  pf_topology_free(&t);
}

static void test_torus_and_single(void) {
  pf_machine m;
  if (load("jureca-dc-h100", &m)) return; /* single switch */
  pf_topology t;
  CHECK(pf_topology_build(&m, 3, 1.0, &t) == 0);
  pf_route r;
  pf_topology_route(&t, 0, 5, &r);
  CHECK_INT(r.n, 2);
  check_routes(&t, 0);
  pf_topology_free(&t);
  m.net.kind = pf_net_kind_find("torus");
  m.net.dims[0] = 4; m.net.dims[1] = 3; m.net.dims[2] = 2;
  CHECK(pf_topology_build(&m, 24, 1.0, &t) == 0);
  /* node 0 (0,0,0) -> node 23 (3,2,1): x one step back (wrap), y one back, z one: 3 hops */
  pf_topology_route(&t, 0, 23 * 4, &r);
  CHECK_INT(r.n, 2 + 3);
  check_routes(&t, 9);
  pf_topology_free(&t);
  CHECK(pf_topology_build(&m, 25, 1.0, &t) < 0); /* does not fit in 4x3x2 */
  /* 7 nodes of the 4x3x2 torus: node 4 (0,1,0) -> node 3 (3,0,0) goes x one back (wrap) to router 7 (3,1,0),
   * beyond the job's last node, then y one back: every route's links exist (they once ran past the array) */
  CHECK(pf_topology_build(&m, 7, 1.0, &t) == 0);
  pf_topology_route(&t, 4 * 4, 3 * 4, &r);
  CHECK_INT(r.n, 2 + 2);
  for (int a = 0; a < t.gpus; a++) check_routes(&t, a);
  pf_topology_free(&t);
}

/* The emitted platform, loaded by SimGrid, has our routes' latency and bandwidth. */
static void test_xml(void) {
  pf_machine m;
  if (load("lumi-g", &m)) return;
  pf_topology t;
  CHECK(pf_topology_build(&m, 6, 1.0, &t) == 0);
  char path[] = "/tmp/pf-test-topo-XXXXXX";
  int fd = mkstemp(path);
  CHECK(fd >= 0);
  if (fd < 0) return;
  FILE *f = fdopen(fd, "w");
  CHECK(pf_topology_write_xml(&t, f, NULL, 0, 1e9) == 0);
  fclose(f);
  int argc = 1;
  char a0[] = "test";
  char *argv[] = {a0, NULL};
  xbt_log_control_set("root.thres:critical");
  simgrid_init(&argc, argv);
  sg_cfg_set_string("network/model", "CM02");
  simgrid_load_platform(path);
  unlink(path);
  int bad_lat = 0, bad_bw = 0;
  pf_route r;
  for (int a = 0; a < t.gpus; a++)
    for (int b = 0; b < t.gpus; b++) {
      if (a == b) continue;
      char ha[16], hb[16];
      snprintf(ha, sizeof ha, "g%d", a);
      snprintf(hb, sizeof hb, "g%d", b);
      sg_host_t x = sg_host_by_name(ha), y = sg_host_by_name(hb);
      pf_topology_route(&t, a, b, &r);
      if (fabs(sg_host_get_route_latency(x, y) - r.lat_s) > 1e-12) bad_lat++;
      if (fabs(sg_host_get_route_bandwidth(x, y) / pf_route_bw(&t, &r) - 1) > 1e-9) bad_bw++;
    }
  CHECK_INT(bad_lat, 0);
  CHECK_INT(bad_bw, 0);
  pf_topology_free(&t);
}

/* Flows of one collective step per link; then, per switch, the flows its uplinks (downlinks) carry must
 * be spread evenly: no link above ceil(flows of the switch / links of the switch). */
static int *count_flows(const pf_topology *t, const pf_coll_step *st) {
  int *cnt = calloc((size_t)t->nlinks, sizeof *cnt);
  pf_route r;
  for (int i = 0; i < st->nflows; i++) {
    pf_topology_route(t, st->flows[i].src, st->flows[i].dst, &r);
    for (int k = 0; k < r.n; k++) cnt[r.link[k]]++;
  }
  return cnt;
}

static int unfair_groups(const int *cnt, int base, int nsw, int per, int *worst, int *fair) {
  int bad = 0;
  for (int sw = 0; sw < nsw; sw++) {
    int tot = 0, mx = 0;
    for (int j = 0; j < per; j++) {
      tot += cnt[base + sw * per + j];
      if (cnt[base + sw * per + j] > mx) mx = cnt[base + sw * per + j];
    }
    int f = (tot + per - 1) / per;
    if (mx > f) { bad++; if (mx - f > *worst - *fair) { *worst = mx; *fair = f; } }
  }
  return bad;
}

static void check_even(const pf_topology *t, const pf_coll_pattern *pat, const char *what) {
  int *cnt = count_flows(t, &pat->steps[0]);
  int worst = 0, fair = 0, crossing = 0;
  pf_net_block lu = blk(t, "leaf_up"), ld = blk(t, "leaf_down"), au = blk(t, "aggr_up"), ad = blk(t, "aggr_down");
  int bad = unfair_groups(cnt, lu.first, lu.switches, lu.per, &worst, &fair) +
            unfair_groups(cnt, ld.first, ld.switches, ld.per, &worst, &fair) +
            unfair_groups(cnt, au.first, au.switches, au.per, &worst, &fair) +
            unfair_groups(cnt, ad.first, ad.switches, ad.per, &worst, &fair);
  for (int l = au.first; l < au.first + au.switches * au.per; l++) crossing += cnt[l];
  if (bad) fprintf(stderr, "%s: %d switches spread unevenly (a link with %d flows, fair share %d)\n", what, bad, worst, fair);
  CHECK_INT(bad, 0);
  CHECK(crossing > 0); /* the ring does leave the pods */
  free(cnt);
}

/* Issue 9: a DP ring on a 1,024-node rail-optimised three-level fat tree puts no more than its fair share
 * of flows on any uplink (the old port-index-modulo routing sent a rail's traffic through 1 / NICs of the
 * uplinks, and pod-leaving flows onto the same core ports). */
static void test_fair_share(void) {
  pf_machine m;
  if (load(PF_FIXTURE("railft3.cfg"), &m)) return;
  pf_topology t;
  CHECK(pf_topology_build(&m, 1024, 1.0, &t) == 0);
  CHECK_INT(blk(&t, "leaf_up").per, 16);
  CHECK_INT(blk(&t, "aggr_up").switches, 16 * 16); /* 16 pods of 16 aggregation switches */
  int p = t.gpus;
  int *G = malloc((size_t)p * sizeof *G);
  for (int i = 0; i < p; i++) G[i] = i;
  pf_coll_pattern pat;
  /* pure data parallelism: one ring over all 4,096 GPUs, one channel per rail */
  CHECK(pf_coll_pattern_build(&t, PF_ALLREDUCE, PF_COLL_RING, 1e9, G, 1, p, &pat) == 0);
  check_even(&t, &pat, "DP ring over 4096 GPUs");
  pf_coll_pattern_free(&pat);
  /* TP 4 inside the node: four DP rings of 1,024 GPUs, one per local GPU (rail), all at once */
  for (int l = 0; l < 4; l++)
    for (int n = 0; n < 1024; n++) G[l * 1024 + n] = 4 * n + l;
  CHECK(pf_coll_pattern_build(&t, PF_REDUCE_SCATTER, PF_COLL_RING, 1e9, G, 4, 1024, &pat) == 0);
  check_even(&t, &pat, "4 DP rings of 1024 GPUs");
  pf_coll_pattern_free(&pat);
  /* the same plan with tp-cp-pp-dp-like strides: DP members 4 nodes apart */
  for (int l = 0; l < 4; l++)
    for (int n = 0; n < 256; n++) G[l * 256 + n] = 4 * (4 * n) + l;
  CHECK(pf_coll_pattern_build(&t, PF_ALLREDUCE, PF_COLL_RING, 1e9, G, 4, 256, &pat) == 0);
  check_even(&t, &pat, "4 DP rings, members 4 nodes apart");
  pf_coll_pattern_free(&pat);
  free(G);
  pf_topology_free(&t);
}

/* The same even spread on plain (not rail-optimised) 2- and 3-level fat trees, with leaf and core taper
 * (oversubscription), and on the leaf-spine links of a dragonfly+: a full-machine pure-DP ring. */
static void ring_all(const pf_topology *t, pf_coll_pattern *pat) {
  int *G = malloc((size_t)t->gpus * sizeof *G);
  for (int i = 0; i < t->gpus; i++) G[i] = i;
  CHECK(pf_coll_pattern_build(t, PF_ALLREDUCE, PF_COLL_RING, 1e9, G, 1, t->gpus, pat) == 0);
  free(G);
}

static void test_fair_share_more(void) {
  pf_machine m;
  pf_topology t;
  pf_coll_pattern pat;
  if (load("mn5-acc", &m)) return; /* 3 levels, plain, the whole machine: 1,120 nodes in 2 pods */
  CHECK(pf_topology_build(&m, m.nodes, 1.0, &t) == 0);
  ring_all(&t, &pat);
  check_even(&t, &pat, "mn5-acc full-machine ring");
  pf_coll_pattern_free(&pat);
  pf_topology_free(&t);
  m.net.levels = 2; /* 2 levels, plain, half taper */
  m.net.taper = 0.5;
  CHECK(pf_topology_build(&m, 256, 1.0, &t) == 0);
  pf_net_block lu = blk(&t, "leaf_up"), ld = blk(&t, "leaf_down");
  CHECK_INT(blk(&t, "aggr_up").per, 0); /* no core */
  ring_all(&t, &pat);
  int *cnt = count_flows(&t, &pat.steps[0]), worst = 0, fair = 0;
  CHECK_INT(unfair_groups(cnt, lu.first, lu.switches, lu.per, &worst, &fair) +
                unfair_groups(cnt, ld.first, ld.switches, ld.per, &worst, &fair), 0);
  free(cnt);
  pf_coll_pattern_free(&pat);
  pf_topology_free(&t);
  if (load(PF_FIXTURE("railft3.cfg"), &m)) return; /* rail-optimised 3 levels, leaf and core taper 0.5 */
  m.net.taper = 0.5;
  m.net.core_taper = 0.5;
  CHECK(pf_topology_build(&m, 1024, 1.0, &t) == 0);
  CHECK_INT(blk(&t, "leaf_up").per, 8);
  ring_all(&t, &pat);
  check_even(&t, &pat, "tapered rail-optimised 3-level ring");
  pf_coll_pattern_free(&pat);
  pf_topology_free(&t);
  if (load("jupiter-booster", &m)) return; /* dragonfly+: leaf-spine bundles of each leaf */
  CHECK(pf_topology_build(&m, m.nodes, 1.0, &t) == 0);
  ring_all(&t, &pat);
  cnt = count_flows(&t, &pat.steps[0]);
  worst = fair = 0;
  lu = blk(&t, "leaf_up");
  ld = blk(&t, "leaf_down");
  int bad = unfair_groups(cnt, lu.first, lu.switches, lu.per, &worst, &fair) +
            unfair_groups(cnt, ld.first, ld.switches, ld.per, &worst, &fair);
  if (bad) fprintf(stderr, "jupiter-booster ring: %d leaves uneven (%d flows where %d is fair)\n", bad, worst, fair);
  CHECK_INT(bad, 0);
  free(cnt);
  pf_coll_pattern_free(&pat);
  pf_topology_free(&t);
}

/* Every NIC of a node carries a share of a pure-DP ring (one channel per rail), not just one. */
static void test_rails_used(void) {
  pf_machine m;
  if (load("mn5-acc", &m)) return;
  pf_topology t;
  CHECK(pf_topology_build(&m, 16, 1.0, &t) == 0);
  int G[64];
  for (int i = 0; i < 64; i++) G[i] = i;
  pf_coll_pattern pat;
  CHECK(pf_coll_pattern_build(&t, PF_ALLREDUCE, PF_COLL_RING, 1e9, G, 1, 64, &pat) == 0);
  double *lb = calloc((size_t)t.nlinks, sizeof *lb);
  pf_coll_pattern_time(&t, &pat, lb);
  for (int k = 0; k < t.nics; k++) CHECK_NEAR(lb[t.b_nu + k], 2.0 * 63 / 64 * 1e9 / 4, 1e-9); /* node 0's 4 NICs */
  free(lb);
  pf_coll_pattern_free(&pat);
  pf_topology_free(&t);
}

/* Placement: scattered is a seeded draw of distinct nodes in ascending order, the same for the same seed. */
static void test_placement(void) {
  pf_machine m;
  if (load("lumi-g", &m)) return;
  pf_topology a, b, c;
  CHECK(pf_topology_build_placed(&m, 64, PF_PLACE_SCATTERED, 7, 1.0, &a) == 0);
  CHECK(pf_topology_build_placed(&m, 64, PF_PLACE_SCATTERED, 7, 1.0, &b) == 0);
  CHECK(pf_topology_build_placed(&m, 64, PF_PLACE_SCATTERED, 8, 1.0, &c) == 0);
  int asc = 1, same = 1, differ = 0, groups = 1;
  for (int j = 0; j < 64; j++) {
    asc = asc && (j == 0 || a.slot[j] > a.slot[j - 1]) && a.slot[j] < m.nodes;
    same = same && a.slot[j] == b.slot[j];
    differ |= a.slot[j] != c.slot[j];
    if (j > 0 && a.slot[j] / 128 != a.slot[j - 1] / 128) groups++;
  }
  CHECK(asc);
  CHECK(same);
  CHECK(differ);
  CHECK(groups > 4); /* contiguous: 64 nodes stay in one 128-node dragonfly group */
  check_routes(&a, 17);
  pf_topology_free(&a);
  pf_topology_free(&b);
  pf_topology_free(&c);
}

/* Adaptive routing lets a hot dragonfly group pair use Valiant detours: up to half the group's global
 * bandwidth instead of 1/(groups-1) of it. */
static void test_adaptive(void) {
  pf_machine m;
  if (load("lumi-g", &m)) return;
  pf_topology t;
  m.net.adaptive_routing = false;
  CHECK(pf_topology_build(&m, 512, 1.0, &t) == 0);
  pf_route r;
  pf_topology_route(&t, 0, 8 * 200, &r);
  CHECK_NEAR(t.links[r.link[2]].bw_Bps, 108.8e12 / 8 / 23 * 0.9, 1e-6);
  pf_topology_free(&t);
  m.net.adaptive_routing = true;
  CHECK(pf_topology_build(&m, 512, 1.0, &t) == 0);
  pf_topology_route(&t, 0, 8 * 200, &r);
  CHECK_NEAR(t.links[r.link[2]].bw_Bps, 108.8e12 / 8 / 2 * 0.9, 1e-6);
  pf_topology_free(&t);
}

/* JURECA-DC H100: PCIe cards, GPUs 0-1 and 2-3 joined by NVLink bridges. */
static void test_bridges(void) {
  pf_machine m;
  if (load("jureca-dc-h100", &m)) return;
  pf_topology t;
  CHECK(pf_topology_build(&m, 1, 1.0, &t) == 0);
  pf_route r;
  pf_topology_route(&t, 0, 1, &r);
  CHECK_INT(r.n, 1);
  CHECK_NEAR(pf_route_bw(&t, &r), m.fabric_bridge_bw_Bps * 0.80, 1e-9);
  pf_topology_route(&t, 1, 2, &r); /* across the pairs: PCIe */
  CHECK_INT(r.n, 2);
  CHECK_NEAR(pf_route_bw(&t, &r), m.fabric_bw_Bps * 0.80, 1e-9);
  check_routes(&t, 3);
  pf_topology_free(&t);
}

/* In-network endpoints: a GPU to its NVSwitch is its port; to its rail's switch, its NIC. */
static void test_endpoints(void) {
  pf_machine m;
  if (load("discoverer-gpu", &m)) return;
  pf_topology t;
  CHECK(pf_topology_build(&m, 2, 1.0, &t) == 0);
  CHECK(t.nvls);
  pf_route r;
  pf_topology_route(&t, 3, pf_topology_switch_ep(&t, 0), &r);
  CHECK_INT(r.n, 1);
  CHECK_INT(t.links[r.link[0]].kind, PF_LINK_PORT_UP);
  pf_topology_route(&t, pf_topology_switch_ep(&t, 1), 9, &r);
  CHECK_INT(r.n, 1);
  CHECK_INT(t.links[r.link[0]].kind, PF_LINK_PORT_DOWN);
  pf_topology_route(&t, 9, pf_topology_net_ep(&t, 1, 1), &r);
  CHECK_INT(r.n, 1);
  CHECK_INT(t.links[r.link[0]].kind, PF_LINK_NIC_UP);
  CHECK(r.inter);
  pf_topology_free(&t);
}

int main(void) {
  test_fat_tree();
  test_dragonfly();
  test_dragonfly_plus();
  test_torus_and_single();
  test_xml();
  test_fair_share();
  test_fair_share_more();
  test_rails_used();
  test_placement();
  test_adaptive();
  test_bridges();
  test_endpoints();
  return pf_check_done();
}
