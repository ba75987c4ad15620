/* test_collective.c - collectives move the bytes they must (checked from the
 * per-link byte counts), cost what the formula says, share links when groups
 * overlap in space and in time, and the default choice follows NCCL. */
#include "check.h"

#include "comm/comm.h"
#include "core/core.h"
#include "machine/machine.h"
#include "workload/workload.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static double sum_kind(const pf_topology *t, const double *lb, int kind) {
  double s = 0;
  for (int l = 0; l < t->nlinks; l++)
    if (t->links[l].kind == kind) s += lb[l];
  return s;
}

/* A second "ring": registration must refuse the name. */
static int build_nothing(const pf_topology *t, pf_coll_pattern *pat, pf_coll_kind kind, double bytes,
                         const int *groups, int ngroups, int p) {
  (void)t, (void)pat, (void)kind, (void)bytes, (void)groups, (void)ngroups, (void)p;
  return 0;
}
static const pf_coll_algo_desc ring_again = {
    .name = "ring", .kinds = PF_COLL_KIND_BIT(PF_ALLREDUCE), .build = build_nothing};

/* One GPU per node on a single switch: every rank's NIC carries its traffic. */
static void test_bytes_one_gpu_per_node(void) {
  pf_machine m;
  CHECK(pf_machine_load("e4-gh200", &m) == 0);
  pf_topology t;
  int p = 8;
  CHECK(pf_topology_build(&m, p, 1.0, &t) == 0);
  int G[8];
  for (int i = 0; i < p; i++) G[i] = i;
  double S = 1e9;
  struct { pf_coll_kind kind; pf_coll_algo algo; double per_rank; } cases[] = {
      {PF_ALLREDUCE, PF_COLL_RING, 2.0 * (p - 1) / p * S},
      {PF_REDUCE_SCATTER, PF_COLL_RING, (double)(p - 1) / p * S},
      {PF_ALLGATHER, PF_COLL_RING, (double)(p - 1) / p * S},
      {PF_ALLREDUCE, PF_COLL_RABENSEIFNER, 2.0 * (p - 1) / p * S},
      {PF_REDUCE_SCATTER, PF_COLL_RABENSEIFNER, (double)(p - 1) / p * S},
      {PF_ALLREDUCE, PF_COLL_HIERARCHICAL, 2.0 * (p - 1) / p * S},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    pf_coll_pattern pat;
    CHECK(pf_coll_pattern_build(&t, cases[c].kind, cases[c].algo, S, G, 1, p, &pat) == 0);
    double *lb = calloc((size_t)t.nlinks, sizeof *lb);
    pf_coll_pattern_time(&t, &pat, lb);
    for (int r = 0; r < p; r++) { /* each rank sends and receives exactly its share */
      CHECK_NEAR(lb[t.b_nu + r * t.nics], cases[c].per_rank, 1e-9);
      CHECK_NEAR(lb[t.b_nd + r * t.nics], cases[c].per_rank, 1e-9);
    }
    free(lb);
    pf_coll_pattern_free(&pat);
  }
  /* double binary tree: 2 trees x (p-1) edges x 2 directions x S/2 = 2 (p-1) S in all, like the ring */
  pf_coll_pattern pat;
  CHECK(pf_coll_pattern_build(&t, PF_ALLREDUCE, PF_COLL_TREE, S, G, 1, p, &pat) == 0);
  double *lb = calloc((size_t)t.nlinks, sizeof *lb);
  pf_coll_pattern_time(&t, &pat, lb);
  CHECK_NEAR(sum_kind(&t, lb, PF_LINK_NIC_UP), 2.0 * (p - 1) * S, 1e-9);
  free(lb);
  pf_coll_pattern_free(&pat);

  /* cost: ring all-reduce alone on a switch = base + 2(p-1) (max(alpha, library step) + S/p / B), Simple */
  CHECK(pf_coll_pattern_build(&t, PF_ALLREDUCE, PF_COLL_RING, S, G, 1, p, &pat) == 0);
  CHECK_INT(pat.proto, PF_PROTO_SIMPLE);
  pf_route r;
  pf_topology_route(&t, 0, 1, &r);
  double step = fmax(r.lat_s, pf_ccl_step_lat(t.tuner, t.lib, PF_HW_NET, PF_COLL_RING, PF_PROTO_SIMPLE));
  double want = pf_ccl_base_lat(t.tuner, t.lib, PF_COLL_RING, PF_PROTO_SIMPLE) +
                2.0 * (p - 1) * (step + S / p / pf_route_bw(&t, &r));
  CHECK_NEAR(pf_coll_pattern_time(&t, &pat, NULL), want, 1e-12);
  pf_coll_job job;
  CHECK(pf_coll_job_build(&t, &pat, &job) == 0);
  CHECK_NEAR(job.solo_s, want, 1e-12);
  pf_coll_job_free(&job);
  pf_coll_pattern_free(&pat);
  pf_topology_free(&t);
}

/* Four GPUs per node: the hierarchical scheme moves 2(q-1)/q S per node through
 * the NICs and (k-1)/k S per GPU twice through the fabric. */
static void test_bytes_hierarchical(void) {
  pf_machine m;
  CHECK(pf_machine_load("mn5-acc", &m) == 0);
  pf_topology t;
  int nodes = 4, k = 4, p = nodes * k;
  CHECK(pf_topology_build(&m, nodes, 1.0, &t) == 0);
  int G[16];
  for (int i = 0; i < p; i++) G[i] = i;
  double S = 1e9;
  pf_coll_pattern pat;
  CHECK(pf_coll_pattern_build(&t, PF_ALLREDUCE, PF_COLL_HIERARCHICAL, S, G, 1, p, &pat) == 0);
  CHECK_INT(pat.nsteps, 3);
  double *lb = calloc((size_t)t.nlinks, sizeof *lb);
  pf_coll_pattern_time(&t, &pat, lb);
  double nic_node = 0;
  for (int i = 0; i < t.nics; i++) nic_node += lb[t.b_nu + i];
  CHECK_NEAR(nic_node, 2.0 * (nodes - 1) / nodes * S, 1e-9);
  CHECK_NEAR(lb[t.b_pu + 0], 2.0 * (k - 1) / k * S, 1e-9);
  free(lb);
  pf_coll_pattern_free(&pat);
  /* flat ring over the same 16 ranks: one ring crossing per node, 2(p-1)/p S on it */
  CHECK(pf_coll_pattern_build(&t, PF_ALLREDUCE, PF_COLL_RING, S, G, 1, p, &pat) == 0);
  lb = calloc((size_t)t.nlinks, sizeof *lb);
  pf_coll_pattern_time(&t, &pat, lb);
  nic_node = 0;
  for (int i = 0; i < t.nics; i++) nic_node += lb[t.b_nu + i];
  CHECK_NEAR(nic_node, 2.0 * (p - 1) / p * S, 1e-9);
  free(lb);
  pf_coll_pattern_free(&pat);
  pf_topology_free(&t);
}

/* Two groups that share every NIC take twice as long as one; jobs that do
 * not overlap in time take their solo time; jobs started together take the
 * joint time. */
static void test_contention(void) {
  pf_machine m;
  CHECK(pf_machine_load("lumi-g", &m) == 0);
  pf_topology t;
  CHECK(pf_topology_build(&m, 8, 1.0, &t) == 0);
  /* GCDs 0 and 1 of each node share NIC 0: group A = GCD 0 of every node, B = GCD 1 */
  int G[16];
  for (int n = 0; n < 8; n++) { G[n] = 8 * n; G[8 + n] = 8 * n + 1; }
  double S = 4e8;
  pf_coll_pattern one, two;
  CHECK(pf_coll_pattern_build(&t, PF_REDUCE_SCATTER, PF_COLL_RING, S, G, 1, 8, &one) == 0);
  CHECK(pf_coll_pattern_build(&t, PF_REDUCE_SCATTER, PF_COLL_RING, S, G, 2, 8, &two) == 0);
  double t1 = pf_coll_pattern_time(&t, &one, NULL), t2 = pf_coll_pattern_time(&t, &two, NULL);
  pf_route r;
  pf_topology_route(&t, 0, 8, &r);
  double f = m.ccl_neff > 0 ? m.ccl_eff[0].factor : 1.0; /* the machine's measured RCCL efficiency (ccl.efficiency) */
  double bw_term = 7 * (S / 8) / (25e9 * 0.9 * f);
  CHECK_NEAR(t2 - t1, bw_term, 1e-9); /* the shared NIC doubles the bandwidth term only */

  pf_coll_pattern a, b;
  CHECK(pf_coll_pattern_build(&t, PF_REDUCE_SCATTER, PF_COLL_RING, S, G, 1, 8, &a) == 0);
  CHECK(pf_coll_pattern_build(&t, PF_REDUCE_SCATTER, PF_COLL_RING, S, G + 8, 1, 8, &b) == 0);
  pf_coll_job ja, jb;
  CHECK(pf_coll_job_build(&t, &a, &ja) == 0);
  CHECK(pf_coll_job_build(&t, &b, &jb) == 0);
  pf_coll_job *jobs[2] = {&ja, &jb};
  double start[2] = {1.0, 1.0}, end[2];
  CHECK(pf_coll_timeline(&t, jobs, 2, start, end) == 0);
  CHECK_NEAR(end[0] - 1.0, t2, 1e-9);
  CHECK_NEAR(end[1] - 1.0, t2, 1e-9);
  start[1] = 1.0 + 2 * t1; /* far apart: alone */
  CHECK(pf_coll_timeline(&t, jobs, 2, start, end) == 0);
  CHECK_NEAR(end[0] - start[0], t1, 1e-9);
  CHECK_NEAR(end[1] - start[1], t1, 1e-9);
  start[1] = 1.0 + t1 / 2; /* half overlap: between alone and together, first one slowed */
  CHECK(pf_coll_timeline(&t, jobs, 2, start, end) == 0);
  CHECK(end[0] - start[0] > t1 && end[0] - start[0] < t2);
  CHECK(end[1] > end[0]);
  pf_coll_job_free(&ja);
  pf_coll_job_free(&jb);
  pf_coll_pattern_free(&a);
  pf_coll_pattern_free(&b);
  pf_coll_pattern_free(&one);
  pf_coll_pattern_free(&two);
  pf_topology_free(&t);
}

/* The default choice: ring for reduce-scatter and all-gather; for all-reduce
 * the faster of ring and tree; --collective forces one. */
static void test_choice(void) {
  pf_scenario sc;
  pf_scenario_init(&sc);
  CHECK(pf_machine_load("leonardo-booster", &sc.machine) == 0);
  CHECK(pf_workload_builtin("gpt3-1.3b", &sc.workload) == 0);
  sc.nodes = 64;
  sc.plan.tp = 4;
  sc.plan.gbs = 512;
  CHECK(pf_plan_check(&sc) == 0);
  pf_comm c = {.sc = &sc}; /* topo_key 0: no memo, every call priced (collmemo.c) */
  CHECK(pf_topology_build(&sc.machine, sc.nodes, 1.0, &c.topo) == 0);
  pf_coll_pattern pat;
  pf_coll_result info;
  CHECK(pf_dp_collective_pattern(&c, PF_REDUCE_SCATTER, 1e9, 0, &pat, &info) == 0);
  CHECK_INT(info.algo, PF_COLL_RING);
  pf_coll_pattern_free(&pat);
  /* small all-reduce over 64 nodes: latency-bound, the tree wins */
  CHECK(pf_dp_collective_pattern(&c, PF_ALLREDUCE, 1e5, 0, &pat, &info) == 0);
  CHECK_INT(info.algo, PF_COLL_TREE);
  double tree_t = info.time_s;
  pf_coll_pattern_free(&pat);
  sc.collective = PF_COLL_RING;
  CHECK(pf_dp_collective_pattern(&c, PF_ALLREDUCE, 1e5, 0, &pat, &info) == 0);
  CHECK_INT(info.algo, PF_COLL_RING);
  CHECK(info.time_s > tree_t);
  pf_coll_pattern_free(&pat);
  sc.collective = PF_COLL_TREE; /* no tree reduce-scatter in NCCL: ring */
  CHECK(pf_dp_collective_pattern(&c, PF_REDUCE_SCATTER, 1e9, 0, &pat, &info) == 0);
  CHECK_INT(info.algo, PF_COLL_RING);
  pf_coll_pattern_free(&pat);
  /* DP groups: one per TP rank, members in rank order */
  int *G, ng, p;
  CHECK(pf_dp_groups(&sc, 0, &G, &ng, &p) == 0);
  CHECK_INT(ng, 4);
  CHECK_INT(p, 64);
  CHECK_INT(G[1 * p + 2], 1 + 4 * 2);
  free(G);
  pf_topology_free(&c.topo);
}

/* The algorithm table: every built-in has its id and a name that parses back to it; auto and best are
 * choices, not algorithms; the parse error names every algorithm; registration refuses a taken name and a
 * descriptor without a builder; an algorithm that does not implement a collective falls back to the first
 * one of the table that does. */
static const pf_coll_algo_desc no_builder = {.name = "nobuilder", .kinds = PF_COLL_KIND_BIT(PF_ALLREDUCE)};

static void test_table(void) {
  const char *want[] = {"ring", "tree", "hierarchical", "rabenseifner", "nvls", "collnet", "direct"};
  CHECK(pf_coll_algo_end() >= PF_COLL_NBUILTIN);
  for (int a = PF_COLL_FIRST; a < PF_COLL_NBUILTIN; a++) {
    CHECK_STR(pf_coll_algo_name(a), want[a - PF_COLL_FIRST]);
    pf_coll_algo back = PF_COLL_AUTO;
    CHECK(pf_coll_algo_parse(pf_coll_algo_name(a), &back) == 0);
    CHECK_INT(back, a);
    CHECK(pf_coll_algo_get(a) != NULL && pf_coll_algo_get(a)->build != NULL);
  }
  pf_coll_algo x = PF_COLL_RING;
  CHECK(pf_coll_algo_parse("auto", &x) == 0);
  CHECK_INT(x, PF_COLL_AUTO);
  CHECK(pf_coll_algo_parse("best", &x) == 0);
  CHECK_INT(x, PF_COLL_BEST);
  CHECK(pf_coll_algo_get(PF_COLL_AUTO) == NULL && pf_coll_algo_get(PF_COLL_BEST) == NULL);
  CHECK_STR(pf_coll_algo_name(pf_coll_algo_end()), "?");
  CHECK(pf_coll_algo_parse("binomial", &x) < 0);
  CHECK(strstr(pf_error_detail(), "ring, tree, hierarchical, rabenseifner, nvls, collnet, direct") != NULL);
  CHECK(pf_coll_algo_register(&ring_again) < 0); /* the name "ring" is taken */
  CHECK(pf_coll_algo_register(&no_builder) < 0);
  CHECK_INT(pf_coll_algo_end(), PF_COLL_NBUILTIN); /* nothing was added */
  CHECK_INT(pf_coll_algo_default(PF_ALLREDUCE), PF_COLL_RING);
  CHECK_INT(pf_coll_algo_default(PF_REDUCE_SCATTER), PF_COLL_RING);
  CHECK_INT(pf_coll_algo_default(PF_ALLTOALL), PF_COLL_DIRECT);
  CHECK_INT(pf_coll_algo_default(PF_SENDRECV), PF_COLL_DIRECT);

  pf_machine m;
  CHECK(pf_machine_load("leonardo-booster", &m) == 0);
  pf_topology t;
  CHECK(pf_topology_build(&m, 2, 1.0, &t) == 0);
  int G[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  pf_coll_pattern pat;
  CHECK(pf_coll_pattern_build(&t, PF_REDUCE_SCATTER, PF_COLL_TREE, 1e6, G, 1, 8, &pat) == 0);
  CHECK_INT(pat.algo, PF_COLL_RING); /* no tree reduce-scatter */
  pf_coll_pattern_free(&pat);
  CHECK(pf_coll_pattern_build(&t, PF_ALLTOALL, PF_COLL_RING, 1e6, G, 1, 8, &pat) == 0);
  CHECK_INT(pat.algo, PF_COLL_DIRECT);
  pf_coll_pattern_free(&pat);
  CHECK(pf_coll_pattern_build(&t, PF_ALLREDUCE, PF_COLL_NVLS, 1e6, G, 1, 8, &pat) == 0);
  CHECK_INT(pat.algo, PF_COLL_RING); /* no NVLink SHARP across nodes */
  pf_coll_pattern_free(&pat);
  CHECK(pf_coll_pattern_build(&t, PF_ALLREDUCE, PF_COLL_AUTO, 1e6, G, 1, 8, &pat) < 0); /* a choice, not built */
  /* the latencies are each algorithm's row of the library's tables for its version (ccltuner.c; NULL: the newest
   * NCCL's, 2.23-2.28); direct sends have the ring's */
  CHECK_NEAR(pf_ccl_base_lat(NULL, PF_CCL_NCCL, PF_COLL_TREE, PF_PROTO_SIMPLE), 8.4e-6, 1e-12);
  const pf_ccl_tuner *v218 = pf_ccl_tuner_find(PF_CCL_NCCL, "2.18.3", NULL);
  const pf_ccl_tuner *v221 = pf_ccl_tuner_find(PF_CCL_NCCL, "2.21.5", NULL);
  CHECK_NEAR(pf_ccl_base_lat(v218, PF_CCL_NCCL, PF_COLL_TREE, PF_PROTO_SIMPLE), 0.0, 1e-15);
  CHECK_NEAR(pf_ccl_step_lat(v221, PF_CCL_NCCL, PF_HW_NET, PF_COLL_TREE, PF_PROTO_SIMPLE), 28e-6, 1e-12);
  CHECK_NEAR(pf_ccl_base_lat(v218, PF_CCL_NCCL, PF_COLL_NVLS, PF_PROTO_SIMPLE), 23e-6, 1e-12);
  CHECK_NEAR(pf_ccl_step_lat(v221, PF_CCL_NCCL, PF_HW_NVLINK, PF_COLL_NVLS, PF_PROTO_SIMPLE), 25e-6, 1e-12);
  CHECK_NEAR(pf_ccl_step_lat(pf_ccl_tuner_find(PF_CCL_NCCL, "2.20.5", NULL), PF_CCL_NCCL, PF_HW_NVLINK, PF_COLL_NVLS,
                             PF_PROTO_SIMPLE), 23e-6, 1e-12);
  int how;
  CHECK(strcmp(pf_ccl_tuner_find(PF_CCL_NCCL, "2.27.7", &how)->name, "NCCL 2.23-2.28") == 0 && how == PF_CCL_TUNER_NAMED);
  CHECK(strcmp(pf_ccl_tuner_find(PF_CCL_NCCL, "2.12.12", &how)->name, "NCCL 2.18") == 0 && how == PF_CCL_TUNER_NEAREST);
  CHECK(strcmp(pf_ccl_tuner_find(PF_CCL_NCCL, "", &how)->name, "NCCL 2.23-2.28") == 0 && how == PF_CCL_TUNER_ASSUMED);
  /* RCCL's own tables, not NCCL's (rocm-6.2.0 baseLat 17 us Simple, tuning model 3 ring network step 19.8 us) */
  const pf_ccl_tuner *rc = pf_ccl_tuner_find(PF_CCL_RCCL, "2.20.5", &how);
  CHECK(how == PF_CCL_TUNER_NAMED);
  CHECK_NEAR(pf_ccl_base_lat(rc, PF_CCL_RCCL, PF_COLL_RING, PF_PROTO_SIMPLE), 17e-6, 1e-12);
  CHECK_NEAR(pf_ccl_step_lat(rc, PF_CCL_RCCL, PF_HW_NET, PF_COLL_DIRECT, PF_PROTO_SIMPLE), 19.8e-6, 1e-12);
  char note[512];
  pf_ccl_tuner_note(PF_CCL_NCCL, "", note, sizeof note);
  CHECK(strstr(note, "names no ccl.version") != NULL);
  CHECK_NEAR(pf_ccl_base_lat(NULL, PF_CCL_NCCL, PF_COLL_RING, PF_PROTO_SIMPLE), 8.4e-6, 1e-12);
  CHECK_NEAR(pf_ccl_step_lat(NULL, PF_CCL_NCCL, PF_HW_NET, PF_COLL_COLLNET, PF_PROTO_SIMPLE), 31e-6, 1e-12);
  CHECK_NEAR(pf_ccl_step_lat(NULL, PF_CCL_NCCL, PF_HW_NET, PF_COLL_DIRECT, PF_PROTO_LL),
             pf_ccl_step_lat(NULL, PF_CCL_NCCL, PF_HW_NET, PF_COLL_RING, PF_PROTO_LL), 1e-15);
  CHECK(!pf_ccl_proto_ok(&t, PF_COLL_NVLS, PF_PROTO_LL) && pf_ccl_proto_ok(&t, PF_COLL_TREE, PF_PROTO_LL));
  pf_topology_free(&t);
}

int main(void) {
  test_table();
  test_bytes_one_gpu_per_node();
  test_bytes_hierarchical();
  test_contention();
  test_choice();
  return pf_check_done();
}
