/* test_topology.c - routes, capacities and latencies of the C topology, and
 * the SimGrid platform it emits: SimGrid's own route latency and bandwidth
 * for every GPU pair must equal ours. */
#include "check.h"

#include "preflight/machine.h"
#include "preflight/topology.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <xbt/config.h>
#include <xbt/log.h>

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
  CHECK_INT(t.E, 64);
  CHECK_INT(t.U, 32);        /* 64 x 25 GB/s down = 32 x 50 GB/s up (taper 1) */
  CHECK_INT(t.pods, 2);      /* 3 levels: pods of 64 leaves */
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
  /* D-mod-k: every source reaches destination d through up-port d mod U */
  int d = 4 * 700 + 2, port = 700 * 4 + 2, up = -1, same = 1;
  for (int a = 0; a < 4 * 600; a += 37) {
    pf_topology_route(&t, a, d, &r);
    if (r.n < 4) continue;
    int j = (r.link[1] - t.b_lu) % t.U;
    if (up < 0) up = j;
    same = same && j == up;
  }
  CHECK(same);
  CHECK_INT(up, port % t.U);
  check_routes(&t, 5);
  pf_topology_free(&t);

  /* taper halves the leaf uplinks; rail-optimised puts NIC k on rail k's leaves */
  m.net.taper = 0.5;
  m.net.rail_optimized = true;
  CHECK(pf_topology_build(&m, 64, 1.0, &t) == 0);
  CHECK_INT(t.U, 16);
  CHECK_INT(t.lpr, 1);
  pf_topology_route(&t, 1, 4 * 63 + 1, &r); /* same rail: same leaf */
  CHECK_INT(r.n, 2);
  pf_topology_route(&t, 1, 4 * 63 + 2, &r); /* other rail: through a spine */
  CHECK_INT(r.n, 4);
  check_routes(&t, 7);
  pf_topology_free(&t);
}

static void test_dragonfly(void) {
  pf_machine m;
  if (load("lumi-g", &m)) return;
  pf_topology t;
  CHECK(pf_topology_build(&m, 512, 1.0, &t) == 0);
  CHECK_INT(t.nics, 4);
  CHECK_INT(t.ngroups, 4);   /* 128 nodes (512 NIC ports) per group */
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
  CHECK_INT(t.ngroups, 25);
  pf_route r;
  pf_topology_route(&t, 0, 4 * 8, &r); /* 8 nodes per leaf (32 ports): next leaf */
  CHECK_INT(r.n, 4);
  CHECK_NEAR(t.links[r.link[1]].bw_Bps, 32 * 25e9 / 16 * 0.9, 1e-6); /* leaf-spine bundle */
  pf_topology_route(&t, 0, t.gpus - 1, &r); /* another group */
  CHECK_INT(r.n, 7);
  CHECK_NEAR(r.lat_s, m.net.nic_latency_s + 4 * m.net.switch_latency_s, 1e-12);
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
  m.net.kind = PF_TOPO_TORUS;
  m.net.dims[0] = 4; m.net.dims[1] = 3; m.net.dims[2] = 2;
  CHECK(pf_topology_build(&m, 24, 1.0, &t) == 0);
  /* node 0 (0,0,0) -> node 23 (3,2,1): x one step back (wrap), y one back, z one: 3 hops */
  pf_topology_route(&t, 0, 23 * 4, &r);
  CHECK_INT(r.n, 2 + 3);
  check_routes(&t, 9);
  pf_topology_free(&t);
  CHECK(pf_topology_build(&m, 25, 1.0, &t) < 0); /* does not fit in 4x3x2 */
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

int main(void) {
  test_fat_tree();
  test_dragonfly();
  test_dragonfly_plus();
  test_torus_and_single();
  test_xml();
  return pf_check_done();
}
