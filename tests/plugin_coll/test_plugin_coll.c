/* test_plugin_coll.c - a collective algorithm from outside model/ (coll_toy.c)
 * registers through pf_coll_algo_register, as the built-ins do, and is then
 * parsed, named, built, costed and chosen where named like them; the
 * library's tuner (auto) still ignores it. */
#include "check.h"
#include "coll_toy.h"

#include "core/core.h"
#include "machine/machine.h"

#include <math.h>
#include <stdlib.h>

int main(void) {
  int end = pf_coll_algo_end();
  int id = pf_coll_algo_register(&pf_coll_algo_toy);
  CHECK_INT(id, end);
  CHECK(id >= PF_COLL_NBUILTIN);
  CHECK_INT(pf_coll_algo_end(), end + 1);
  CHECK(pf_coll_algo_register(&pf_coll_algo_toy) < 0); /* once */
  CHECK_STR(pf_coll_algo_name(id), "toy");
  pf_coll_algo a = PF_COLL_AUTO;
  CHECK_INT(pf_coll_algo_parse("toy", &a), 0);
  CHECK_INT(a, id);
  CHECK(pf_coll_algo_parse("toys", &a) < 0);
  CHECK(strstr(pf_error_detail(), ", direct, toy") != NULL); /* the valid names include it */

  pf_machine m;
  CHECK_INT(pf_machine_load("mn5-acc", &m), 0);
  pf_coll_bench b;
  CHECK_INT(pf_coll_bench_init(&m, 2, 4, PF_PLACE_CONTIGUOUS, 1, &b), 0);
  double S = 1 << 30;
  pf_coll_result toy, ring, tuned, rs;
  CHECK_INT(pf_coll_bench_run(&b, PF_ALLREDUCE, id, PF_PROTO_AUTO, S, &toy), 0);
  CHECK_INT(toy.algo, id);
  CHECK_INT(pf_coll_bench_run(&b, PF_ALLREDUCE, PF_COLL_RING, PF_PROTO_AUTO, S, &ring), 0);
  CHECK(toy.time_s > ring.time_s); /* the root's port carries (p-1) S each way */
  CHECK_NEAR(toy.bus_bw_Bps, S / toy.time_s * 2 * 7 / 8, 1e-12);
  CHECK_INT(pf_coll_bench_run(&b, PF_ALLREDUCE, PF_COLL_AUTO, PF_PROTO_AUTO, S, &tuned), 0);
  CHECK(tuned.algo != id);
  /* a collective it does not implement falls back as a built-in's does: the ring */
  CHECK_INT(pf_coll_bench_run(&b, PF_REDUCE_SCATTER, id, PF_PROTO_AUTO, S, &rs), 0);
  CHECK_INT(rs.algo, PF_COLL_RING);
  /* its pattern: 2 steps of 7 flows of S, the latencies the ring's (no row of its own) */
  pf_coll_pattern pat;
  CHECK_INT(pf_coll_pattern_build(&b.topo, PF_ALLREDUCE, id, S, b.group, 1, b.ranks, &pat), 0);
  CHECK_INT(pat.nsteps, 2);
  CHECK_INT(pat.steps[0].nflows, 7);
  CHECK_INT(pat.steps[1].nflows, 7);
  CHECK_INT(pat.steps[1].flows[0].src, b.group[0]);
  CHECK_NEAR(pat.steps[0].flows[3].bytes, S, 0);
  CHECK_NEAR(pf_ccl_base_lat(NULL, PF_CCL_NCCL, id, PF_PROTO_SIMPLE),
             pf_ccl_base_lat(NULL, PF_CCL_NCCL, PF_COLL_RING, PF_PROTO_SIMPLE), 0);
  pf_coll_pattern_free(&pat);
  pf_coll_bench_free(&b);
  return pf_check_done();
}
