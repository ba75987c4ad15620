/* collbench.c - one collective alone on a set of nodes, as nccl-tests and
 * rccl-tests run it (one rank per GPU, all ranks in one communicator, node
 * by node): the model `preflight collective` prints and `validate` holds
 * against measured busbw (comm.h).  The algorithm and protocol are the
 * library's choice (ccl.c) unless named. */
#include "comm.h"

#include "core/core.h"

#include <stdlib.h>
#include <string.h>

int pf_coll_bench_init(const pf_machine *m, int nodes, int gpn, pf_placement pl, unsigned long seed,
                       pf_coll_bench *b) {
  memset(b, 0, sizeof *b);
  /* more than the machine has: the job cannot run as asked (exit 1, as predict's --nodes; docs/exit-codes.md) */
  if (nodes < 1) return pf_error_set(PF_EINVAL, "--nodes %d: at least 1", nodes);
  if (nodes > m->nodes) return pf_error_set(PF_EPLAN, "--nodes %d exceeds the %d nodes of %s", nodes, m->nodes, m->id);
  if (gpn < 1) return pf_error_set(PF_EINVAL, "--gpus-per-node %d: at least 1", gpn);
  if (gpn > m->gpus_per_node)
    return pf_error_set(PF_EPLAN, "--gpus-per-node %d exceeds the %d GPUs of a %s node", gpn, m->gpus_per_node, m->id);
  int rc = pf_topology_build_placed(m, nodes, pl, seed, 1.0, &b->topo);
  if (rc < 0) return rc;
  b->nodes = nodes;
  b->gpn = gpn;
  b->ranks = nodes * gpn;
  b->group = malloc((size_t)b->ranks * sizeof *b->group);
  if (!b->group) { pf_topology_free(&b->topo); return pf_error_set(PF_ENOMEM, "out of memory"); }
  for (int j = 0; j < nodes; j++)
    for (int l = 0; l < gpn; l++) b->group[j * gpn + l] = j * m->gpus_per_node + l;
  return 0;
}

int pf_coll_bench_run(const pf_coll_bench *b, pf_coll_kind kind, pf_coll_algo algo, pf_coll_proto proto, double bytes,
                      pf_coll_result *res) {
  pf_coll_req rq = {kind, bytes, b->group, 1, b->ranks, algo, proto};
  pf_coll_pattern pat;
  int rc = pf_coll_choose(&b->topo, &rq, &pat, res);
  pf_coll_pattern_free(&pat);
  return rc;
}

void pf_coll_bench_free(pf_coll_bench *b) {
  pf_topology_free(&b->topo);
  free(b->group);
  memset(b, 0, sizeof *b);
}
