/* collective.h - data-parallel (and other large) collectives on the machine's
 * network: algorithm choice as NCCL/RCCL make it, and cost from the routes of
 * every concurrent group with per-link contention (see collective.c).
 *
 * A collective is written as a PATTERN: a list of steps, each a set of flows
 * (src GPU, dst GPU, bytes) of all concurrent groups, repeated `reps` times
 * (the p-1 identical steps of a ring).  Its cost on a topology is
 *   T = sum over steps of reps x (lat_mult x max route latency + max_l bytes_l / B_l)
 * where bytes_l sums the step's flows crossing directed link l.  A JOB is a
 * pattern reduced to per-link byte lists; several jobs that overlap in time
 * share links (pf_coll_timeline).  The full SimGrid engine replays the same
 * patterns as real flows.
 */
#ifndef PREFLIGHT_COLLECTIVE_H
#define PREFLIGHT_COLLECTIVE_H

#include "preflight/plan.h"
#include "preflight/topology.h"

typedef enum { PF_ALLREDUCE, PF_REDUCE_SCATTER, PF_ALLGATHER } pf_coll_kind;

typedef struct pf_flow {
  int src, dst;       /* GPU ids */
  double bytes;       /* per repetition */
} pf_flow;

typedef struct pf_coll_step {
  int nflows, cap;
  pf_flow *flows;     /* owned */
  int reps;           /* identical repetitions */
  double lat_mult;    /* latency terms per repetition (1; 2 x depth for a pipelined tree) */
} pf_coll_step;

typedef struct pf_coll_pattern {
  int nsteps, cap;
  pf_coll_step *steps; /* owned */
  pf_coll_algo algo;   /* algorithm the steps implement */
} pf_coll_pattern;

typedef struct pf_coll_phase {
  int n;
  int *link;          /* links the step crosses */
  double *bytes;      /* bytes per repetition on each */
  double lat_s;       /* lat_mult x max route latency */
  int reps;
} pf_coll_phase;

typedef struct pf_coll_job {
  int nphase;
  pf_coll_phase *ph;  /* owned */
  double solo_s;      /* time when alone on the network */
} pf_coll_job;

typedef struct pf_coll_result {
  double time_s;                /* alone on the network (all groups of the call concurrent) */
  pf_coll_algo algo;            /* chosen (or forced) algorithm */
  double bus_bw_Bps;            /* bytes x algorithm factor / time, nccl-tests' busbw */
  double bottleneck_share;      /* largest number of flows on one link in one step (1 = none shared) */
} pf_coll_result;

const char *pf_coll_kind_name(pf_coll_kind k);

/* Steps of `kind` over ngroups concurrent groups of p GPUs each
 * (groups[g * p + i] = GPU of member i, members in ring order), all running in
 * lockstep; bytes = the buffer each rank holds (the full vector).  algo must
 * not be PF_COLL_AUTO.  Tree is an all-reduce algorithm: reduce-scatter and
 * all-gather asked for with tree use the ring (NCCL has no tree for them).
 * Hierarchical needs the same number of members on each node and falls back
 * to the ring otherwise.  Free with pf_coll_pattern_free(). */
int pf_coll_pattern_build(const pf_topology *t, pf_coll_kind kind, pf_coll_algo algo, double bytes, const int *groups,
                          int ngroups, int p, pf_coll_pattern *out);
void pf_coll_pattern_free(pf_coll_pattern *pat);

/* Cost of the pattern alone (formula above).  If link_bytes is not NULL it
 * receives, per link, the total bytes the pattern moves over it (reps
 * included; array of t->nlinks, added to). */
double pf_coll_pattern_time(const pf_topology *t, const pf_coll_pattern *pat, double *link_bytes);

/* Reduce a pattern to per-link byte lists.  Free with pf_coll_job_free(). */
int pf_coll_job_build(const pf_topology *t, const pf_coll_pattern *pat, pf_coll_job *job);
void pf_coll_job_free(pf_coll_job *job);

/* Jobs that start at start[i] share links while they overlap: each job runs
 * its phases in order; at any time a phase progresses at rate 1 / T with
 *   T = reps x (lat + max over its links of (sum of the bytes per repetition
 *       of every active phase on that link) / capacity),
 * re-evaluated whenever a phase starts or ends (a fluid model that equals
 * the pattern cost for jobs alone and the joint cost for jobs started
 * together).  Writes end[i]. */
int pf_coll_timeline(const pf_topology *t, pf_coll_job *const *jobs, int n, const double *start, double *end);

/* The data-parallel groups of pipeline stage `stage`: one group per TP rank,
 * members the DP x CP ranks in rank order.  *gpus is malloc'ed
 * (ngroups x size). */
int pf_dp_groups(const pf_scenario *sc, int stage, int **gpus, int *ngroups, int *size);

/* Pattern of the stage's DP collective with the algorithm forced by
 * sc->collective, or chosen as NCCL/RCCL's tuner would (the fastest of ring
 * and tree for all-reduce, ring for reduce-scatter and all-gather). */
int pf_dp_collective_pattern(const pf_scenario *sc, const pf_topology *t, pf_coll_kind kind, double bytes, int stage,
                             pf_coll_pattern *pat, pf_coll_result *info);

#endif
