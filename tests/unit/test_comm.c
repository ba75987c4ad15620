/* test_comm.c - the communication module as users see it (comm.h):
 *  - TP across nodes pays the NIC route (issue 9 acceptance: TP 8 over two 4-GPU nodes);
 *  - nccl-tests-style collectives: large messages within the physical limit of the route (line rate for
 *    rings and trees, the NVLS and in-network bounds for those), small messages latency-bound;
 *  - protocols and algorithms as the library chooses them; measured library efficiency; placement;
 *    rank order; all-to-all and send/receive traffic; overlap and its cost. */
#include "check.h"

#include "comm/comm.h"
#include "core/core.h"
#include "study/study.h"
#include "workload/workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double GiB = 1073741824.0;

static int bench(const pf_machine *m, int nodes, pf_coll_kind k, pf_coll_algo a, double bytes, pf_coll_result *r) {
  pf_coll_bench b;
  int rc = pf_coll_bench_init(m, nodes, m->gpus_per_node, PF_PLACE_CONTIGUOUS, 1, &b);
  if (rc == 0) rc = pf_coll_bench_run(&b, k, a, PF_PROTO_AUTO, bytes, r);
  pf_coll_bench_free(&b);
  return rc;
}

/* TP 8 over two 4-GPU MareNostrum 5 nodes (--tp-across-nodes): each TP all-reduce of b s h elements moves
 * at least the buffer across the node boundary per direction (the 2-node minimum: reduce-scatter and
 * all-gather halves), through 4 NICs of 200 Gb/s; inside a node the same TP 4 costs far less. */
static void test_tp_across_nodes(void) {
  pf_scenario *sc = calloc(1, sizeof *sc);
  pf_scenario_init(sc);
  CHECK_INT(pf_machine_load("mn5-acc", &sc->machine), 0);
  CHECK_INT(pf_workload_builtin("gpt3-1.3b", &sc->workload), 0);
  sc->nodes = 2;
  sc->plan.tp = 8;
  sc->plan.gbs = 8;
  sc->plan.tp_across_nodes = true;
  sc->precision = PF_BF16;
  CHECK_INT(pf_plan_check(sc), 0);
  pf_comm c;
  CHECK_INT(pf_comm_init(sc, &c), 0);
  pf_stage_work w;
  pf_stage_comm o;
  CHECK_INT(pf_stage_work_compute(sc, 0, &w), 0);
  CHECK_INT(pf_comm_stage(&c, 0, &w, &o), 0);
  double buf = sc->workload.seq * (double)sc->workload.hidden * 2; /* mbs 1, bf16 */
  int lps = sc->workload.layers;
  double nic_line = 4 * sc->machine.nic_bw_Bps;
  double bound = lps * 2 * buf / nic_line; /* 2 all-reduces per layer forward */
  fprintf(stderr, "TP 8 over 2 nodes: forward TP %.4g ms per microbatch, NIC bound %.4g ms\n", w.fwd_tp_s * 1e3,
          bound * 1e3);
  CHECK(w.fwd_tp_s >= bound);
  CHECK(o.inter);
  CHECK(o.nic_bytes > 0);
  pf_comm_free(&c);
  /* the same per-GPU work with TP 4 inside a node */
  sc->plan.tp = 4;
  sc->plan.dp = 0;
  sc->plan.grad_accum = 0;
  sc->plan.gbs = 8;
  CHECK_INT(pf_plan_check(sc), 0);
  CHECK_INT(pf_comm_init(sc, &c), 0);
  pf_stage_work w4;
  pf_stage_comm o4;
  CHECK_INT(pf_stage_work_compute(sc, 0, &w4), 0);
  CHECK_INT(pf_comm_stage(&c, 0, &w4, &o4), 0);
  CHECK(!o4.inter);
  CHECK(w4.fwd_tp_s * 2 < w.fwd_tp_s);
  pf_comm_free(&c);
  /* without --tp-across-nodes, TP 8 on 4-GPU nodes is refused */
  sc->plan.tp = 8;
  sc->plan.dp = 0;
  sc->plan.tp_across_nodes = false;
  CHECK_INT(pf_plan_check(sc), PF_EPLAN);
  free(sc);
}

/* Large messages: busbw within the route's line rate; small ones: latency-bound (flat time, tiny busbw). */
static void test_bounds(void) {
  pf_machine m;
  CHECK_INT(pf_machine_load("mn5-acc", &m), 0);
  const int nodes[] = {1, 2, 16, 128};
  for (int i = 0; i < 4; i++) {
    pf_coll_result big, small, mid;
    CHECK_INT(bench(&m, nodes[i], PF_ALLREDUCE, PF_COLL_AUTO, 8 * GiB, &big), 0);
    CHECK_INT(bench(&m, nodes[i], PF_ALLREDUCE, PF_COLL_AUTO, 8, &small), 0);
    CHECK_INT(bench(&m, nodes[i], PF_ALLREDUCE, PF_COLL_AUTO, 32768, &mid), 0);
    /* rings and trees: a GPU's fabric port inside a node; the node's NICs per GPU... across nodes the
     * nccl-tests busbw of a ring or tree is bounded by the node's NIC line rate over its GPUs' share */
    double limit = nodes[i] == 1 ? m.fabric_bw_Bps : m.nics_per_node * m.nic_bw_Bps;
    fprintf(stderr, "mn5-acc %3d nodes: 8 GiB busbw %.1f GB/s (%s, limit %.0f), 8 B %.2f us, 32 KiB %.2f us\n",
            nodes[i], big.bus_bw_Bps / 1e9, pf_coll_algo_name(big.algo), limit / 1e9, small.time_s * 1e6,
            mid.time_s * 1e6);
    CHECK(big.bus_bw_Bps <= limit);
    CHECK(big.bus_bw_Bps >= 0.7 * limit); /* and not far below it: ring over line rate x 0.8-0.9 */
    CHECK(small.time_s >= 0.9 * mid.time_s * (small.time_s > 0)); /* flat at the small end */
    CHECK(small.bus_bw_Bps < 1e-3 * big.bus_bw_Bps);
    CHECK(small.lat_s > 0.99 * small.time_s);
  }
  /* forced trees stay within the NIC line rate too (internal nodes move 2S, as rings do) */
  pf_coll_result tr;
  CHECK_INT(bench(&m, 128, PF_ALLREDUCE, PF_COLL_TREE, 8 * GiB, &tr), 0);
  CHECK_INT(tr.algo, PF_COLL_TREE);
  CHECK(tr.bus_bw_Bps <= m.nics_per_node * m.nic_bw_Bps);
  /* NVLS inside an H200 NVSwitch node: above the ring (busbw > line rate is NVLS's point) and within its
   * own bound 2(k-1)/(k+1) x port line rate x the measured NVLS share */
  pf_machine h;
  CHECK_INT(pf_machine_load("discoverer-gpu", &h), 0);
  pf_coll_result nv, ring;
  CHECK_INT(bench(&h, 1, PF_ALLREDUCE, PF_COLL_AUTO, 16 * GiB, &nv), 0);
  CHECK_INT(bench(&h, 1, PF_ALLREDUCE, PF_COLL_RING, 16 * GiB, &ring), 0);
  CHECK_INT(nv.algo, PF_COLL_NVLS);
  CHECK(nv.bus_bw_Bps > ring.bus_bw_Bps);
  CHECK(nv.bus_bw_Bps <= 14.0 / 9.0 * h.fabric_bw_Bps * h.nvls_eff * (1 + 1e-9));
  CHECK(ring.bus_bw_Bps <= h.fabric_bw_Bps);
  /* in-network reduction (CollNet): half the ring's NIC traffic, so up to twice the NIC line rate */
  pf_coll_result r16, cn;
  CHECK_INT(bench(&m, 16, PF_ALLREDUCE, PF_COLL_AUTO, 8 * GiB, &r16), 0);
  m.net.in_network_reduction = true;
  CHECK_INT(bench(&m, 16, PF_ALLREDUCE, PF_COLL_COLLNET, 8 * GiB, &cn), 0);
  CHECK_INT(cn.algo, PF_COLL_COLLNET);
  CHECK(cn.bus_bw_Bps > 1.3 * r16.bus_bw_Bps); /* phases costed one after the other: not the full 2x */
  CHECK(cn.bus_bw_Bps <= 2 * m.nics_per_node * m.nic_bw_Bps);
  CHECK_NEAR(cn.nic_bytes, 8 * GiB / 4, 1e-9); /* each rank sends its S/k shard out of the node */
}

/* Protocols as the library picks them: LL for tiny messages, Simple for huge ones; RCCL on MI250X has no
 * LL128; a forced protocol is used. */
static void test_protocols(void) {
  pf_machine m, l;
  CHECK_INT(pf_machine_load("mn5-acc", &m), 0);
  CHECK_INT(pf_machine_load("lumi-g", &l), 0);
  pf_coll_result r;
  CHECK_INT(bench(&m, 4, PF_ALLREDUCE, PF_COLL_AUTO, 64, &r), 0);
  CHECK_INT(r.proto, PF_PROTO_LL);
  CHECK_INT(bench(&m, 4, PF_ALLREDUCE, PF_COLL_AUTO, 4 * GiB, &r), 0);
  CHECK_INT(r.proto, PF_PROTO_SIMPLE);
  for (double b = 8; b <= 8 * GiB; b *= 8) {
    CHECK_INT(bench(&l, 4, PF_ALLGATHER, PF_COLL_AUTO, b, &r), 0);
    CHECK(r.proto != PF_PROTO_LL128);
  }
  pf_coll_bench b;
  CHECK_INT(pf_coll_bench_init(&m, 2, 4, PF_PLACE_CONTIGUOUS, 1, &b), 0);
  pf_coll_result ll, simple;
  CHECK_INT(pf_coll_bench_run(&b, PF_ALLREDUCE, PF_COLL_RING, PF_PROTO_LL, 1 * GiB, &ll), 0);
  CHECK_INT(pf_coll_bench_run(&b, PF_ALLREDUCE, PF_COLL_RING, PF_PROTO_SIMPLE, 1 * GiB, &simple), 0);
  CHECK_INT(ll.proto, PF_PROTO_LL);
  CHECK(ll.bw_s > 1.99 * simple.bw_s && ll.bw_s < 2.01 * simple.bw_s); /* LL carries 4 data bytes in 8 */
  pf_coll_bench_free(&b);
}

/* A measured library efficiency (machine file) scales the network part only, from its rank count on. */
static void test_library_efficiency(void) {
  pf_machine m;
  CHECK_INT(pf_machine_load("mn5-acc", &m), 0);
  pf_coll_result a1, a16, one;
  CHECK_INT(bench(&m, 1, PF_ALLREDUCE, PF_COLL_RING, GiB, &one), 0);
  CHECK_INT(bench(&m, 16, PF_ALLREDUCE, PF_COLL_RING, GiB, &a16), 0);
  CHECK_INT(bench(&m, 2, PF_ALLREDUCE, PF_COLL_RING, GiB, &a1), 0);
  m.ccl_neff = 1;
  m.ccl_eff[0] = (pf_ccl_eff){32, 0, 0.5, "test"};
  pf_coll_result b1, b16, bone;
  CHECK_INT(bench(&m, 1, PF_ALLREDUCE, PF_COLL_RING, GiB, &bone), 0);
  CHECK_INT(bench(&m, 16, PF_ALLREDUCE, PF_COLL_RING, GiB, &b16), 0);
  CHECK_INT(bench(&m, 2, PF_ALLREDUCE, PF_COLL_RING, GiB, &b1), 0);
  CHECK_NEAR(bone.time_s, one.time_s, 1e-12); /* 4 ranks: below the row */
  CHECK_NEAR(b1.time_s, a1.time_s, 1e-12);    /* 8 ranks: below the row */
  CHECK_NEAR(b16.bw_s, 2 * a16.bw_s, 1e-9);   /* 64 ranks: the NIC-bound bandwidth term doubles */
}

/* Placement: a scattered allocation crosses dragonfly groups; never faster than a contiguous one, and the
 * same seed gives the same answer. */
static void test_placement(void) {
  pf_machine m;
  CHECK_INT(pf_machine_load("lumi-g", &m), 0);
  m.net.adaptive_routing = false;
  double t[3];
  for (int i = 0; i < 3; i++) {
    pf_coll_bench b;
    CHECK_INT(pf_coll_bench_init(&m, 256, 8, i == 0 ? PF_PLACE_CONTIGUOUS : PF_PLACE_SCATTERED, 5, &b), 0);
    pf_coll_result r;
    CHECK_INT(pf_coll_bench_run(&b, PF_ALLREDUCE, PF_COLL_RING, PF_PROTO_AUTO, GiB, &r), 0);
    t[i] = r.time_s;
    pf_coll_bench_free(&b);
  }
  fprintf(stderr, "lumi-g 256 nodes ring all-reduce 1 GiB: contiguous %.4g s, scattered %.4g s\n", t[0], t[1]);
  CHECK(t[1] >= t[0] * (1 - 1e-12));
  CHECK(t[1] == t[2]);
}

/* Rank orders: coordinates round-trip; tp-cp-pp-dp puts a DP group's members PP x TP ranks apart. */
static void test_rank_order(void) {
  pf_plan p;
  memset(&p, 0, sizeof p);
  p.tp = 2; p.cp = 2; p.dp = 3; p.pp = 4;
  for (int o = 0; o < 2; o++) {
    p.rank_order = (pf_rank_order)o;
    int ok = 1;
    for (int r = 0; r < 48; r++) {
      int t, c, d, s;
      pf_plan_coords(&p, r, &t, &c, &d, &s);
      ok = ok && pf_plan_rank(&p, t, c, d, s) == r;
    }
    CHECK(ok);
  }
  p.rank_order = PF_ORDER_TP_CP_PP_DP;
  CHECK_INT(pf_plan_rank(&p, 0, 0, 1, 0) - pf_plan_rank(&p, 0, 0, 0, 0), 2 * 2 * 4);
  p.rank_order = PF_ORDER_TP_CP_DP_PP;
  CHECK_INT(pf_plan_rank(&p, 0, 0, 1, 0) - pf_plan_rank(&p, 0, 0, 0, 0), 2 * 2);
}

/* All-to-all moves (p-1)/p of a rank's data and what leaves a node is the part for other nodes;
 * send/receive between nodes is bounded by one NIC. */
static void test_alltoall_sendrecv(void) {
  pf_machine m;
  CHECK_INT(pf_machine_load("mn5-acc", &m), 0);
  pf_coll_result a, s;
  CHECK_INT(bench(&m, 4, PF_ALLTOALL, PF_COLL_AUTO, GiB, &a), 0);
  CHECK_INT(a.algo, PF_COLL_DIRECT);
  CHECK_NEAR(a.nic_bytes, GiB * 12.0 / 16, 1e-9);
  CHECK(a.bus_bw_Bps <= m.nics_per_node * m.nic_bw_Bps * 16.0 / 12);
  pf_coll_bench b;
  CHECK_INT(pf_coll_bench_init(&m, 2, 1, PF_PLACE_CONTIGUOUS, 1, &b), 0);
  CHECK_INT(pf_coll_bench_run(&b, PF_SENDRECV, PF_COLL_AUTO, PF_PROTO_AUTO, GiB, &s), 0);
  CHECK(s.bus_bw_Bps <= m.nic_bw_Bps);
  CHECK(s.bus_bw_Bps >= 0.8 * m.nic_bw_Bps);
  pf_coll_bench_free(&b);
}

/* --tp-comm-overlap hides TP collectives behind GEMMs (less exposed, some hidden) at a cost to them. */
static void test_tp_overlap(void) {
  pf_prediction p0, p1;
  for (int ov = 0; ov < 2; ov++) {
    pf_scenario *sc = calloc(1, sizeof *sc);
    pf_scenario_init(sc);
    CHECK_INT(pf_machine_load("mn5-acc", &sc->machine), 0);
    CHECK_INT(pf_workload_builtin("gpt3-13b", &sc->workload), 0);
    sc->nodes = 4;
    sc->plan.tp = 4;
    sc->plan.pp = 2;
    sc->plan.gbs = 64;
    sc->plan.sp = true;
    sc->plan.dist_opt = true;
    sc->plan.recompute = PF_RECOMPUTE_SELECTIVE;
    sc->plan.tp_comm_overlap = ov;
    CHECK_INT(pf_resolve_predict(sc, ov ? &p1 : &p0), 0);
    free(sc);
  }
  CHECK(p1.breakdown_s.tp_comm < p0.breakdown_s.tp_comm);
  CHECK(p1.comm.tp_hidden_s > 0);
  CHECK(p1.comm.interference_s > 0);
  CHECK_NEAR(p1.comm.tp_s, p0.comm.tp_s, 1e-9); /* the same collectives run, only hidden */
  CHECK(p1.iteration_time_s < p0.iteration_time_s);
  CHECK_INT(p0.comm.tp_hidden_s == 0, 1);
}

/* A collective kernel holds its 16 CTAs of the device's own compute units (pf_device.units, from the device
 * file), 108 when a device does not give them; a P2P send costs the boundary's latency plus bytes over its
 * bandwidth. */
static void test_sm_share_and_p2p(void) {
  pf_machine m;
  CHECK_INT(pf_machine_load("lumi-g", &m), 0);
  CHECK_INT(m.dev.units, 110); /* MI250X: 110 CUs per GCD */
  CHECK_NEAR(pf_comm_sm_share(&m), 16.0 / 110, 1e-15);
  CHECK_INT(pf_machine_load("mn5-acc", &m), 0);
  CHECK_NEAR(pf_comm_sm_share(&m), 16.0 / 132, 1e-15);
  m.dev.units = 0;
  CHECK_NEAR(pf_comm_sm_share(&m), 16.0 / 108, 1e-15);
  m.dev.units = 8;
  CHECK_NEAR(pf_comm_sm_share(&m), 1.0, 0);
  pf_pipe_net net;
  memset(&net, 0, sizeof net);
  net.bw_Bps[1] = 25e9;
  net.lat_s[1] = 3e-6;
  CHECK_NEAR(pf_pipe_net_time(&net, 1, 50e6), 3e-6 + 2e-3, 1e-12);
}

int main(void) {
  test_sm_share_and_p2p();
  test_tp_across_nodes();
  test_bounds();
  test_protocols();
  test_library_efficiency();
  test_placement();
  test_rank_order();
  test_alltoall_sendrecv();
  test_tp_overlap();
  return pf_check_done();
}
