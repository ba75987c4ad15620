/* collective.h - data-parallel (and other large) collectives on the machine's
 * network: algorithm choice as NCCL/RCCL make it, and cost from the routes of
 * every concurrent group with per-link contention (see collective.c).
 */
#ifndef PREFLIGHT_COLLECTIVE_H
#define PREFLIGHT_COLLECTIVE_H

#include "preflight/plan.h"

typedef enum { PF_ALLREDUCE, PF_REDUCE_SCATTER, PF_ALLGATHER } pf_coll_kind;

typedef struct pf_coll_result {
  double time_s;
  pf_coll_algo algo;            /* chosen (or forced) algorithm */
  double bus_bw_Bps;            /* bytes x algorithm factor / time, nccl-tests' busbw */
  double bottleneck_share;      /* flows sharing the most loaded link (1 = none) */
} pf_coll_result;

/* Time of one collective of `bytes` (the full buffer each rank holds) over
 * the DP groups of pipeline stage `stage`, with all TP/CP ranks' groups of
 * that stage running concurrently, and `concurrent_stages` stages' groups
 * sharing the network at the same time. */
int pf_dp_collective(const pf_scenario *sc, pf_coll_kind kind, double bytes, int stage, int concurrent_stages,
                     pf_coll_result *out);

const char *pf_coll_kind_name(pf_coll_kind k);

#endif
