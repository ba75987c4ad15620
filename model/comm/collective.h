/* collective.h - collectives as flow patterns on the topology, their cost
 * with contention, and their overlap in time (the communication module's
 * algorithm layer; comm.h is the front door that every caller uses).
 *
 * A collective is written as a PATTERN: a list of steps, each a set of flows
 * (src endpoint, dst endpoint, bytes) of all concurrent groups, repeated
 * `reps` times (the p-1 identical steps of a ring).  Each algorithm builds its
 * pattern in its own file (coll_ring.c, coll_tree.c, ...: one
 * pf_coll_algo_desc each, collalgo.h).  Its cost on a topology with protocol
 * pr of library lib is
 *   T = base(lib, algo, pr)
 *     + sum over steps of reps x ( max(lat_mult x max route latency,
 *                                      sw_intra x L_fabric(algo, pr) + sw_net x L_net(algo, pr))
 *                                + max_l bytes_l / (B_l x eff(pr) x lib_l) )
 * where bytes_l sums the step's flows crossing directed link l, eff(pr) the
 * protocol's payload share (LL 1/2, LL128 120/128, Simple 1), lib_l the
 * machine's measured library efficiency on network links (1 on the fabric),
 * and base / L the library's per-call and per-step latencies (ccl.c, with
 * each algorithm's constants in its file).  A JOB is a pattern reduced to
 * per-link byte lists; several jobs that overlap in time share links
 * (pf_coll_timeline, colljob.c).  The full SimGrid engine replays the same
 * patterns as real flows.
 */
#ifndef PREFLIGHT_COLLECTIVE_H
#define PREFLIGHT_COLLECTIVE_H

#include "job/job.h"
#include "topology.h"

typedef enum { PF_ALLREDUCE, PF_REDUCE_SCATTER, PF_ALLGATHER, PF_ALLTOALL, PF_SENDRECV, PF_COLL_NKINDS } pf_coll_kind;

/* A collective algorithm (--coll-algo): an id of the algorithm table
 * (collalgo.h), or one of the two choices: auto, the algorithm NCCL's / RCCL's
 * tuner picks (ccl.c), and best, the cheapest by preflight's own cost with
 * every concurrent group.  The built-in algorithms have the ids below, in the
 * order of the built-in table (collalgo.c); an algorithm registered at run
 * time (pf_coll_algo_register) gets the next free id.  auto is 0, the
 * default of pf_scenario_init (job/plan.h holds the id as a plain int). */
typedef int pf_coll_algo;
enum {
  PF_COLL_AUTO, PF_COLL_BEST,
  PF_COLL_RING, PF_COLL_TREE, PF_COLL_HIERARCHICAL, PF_COLL_RABENSEIFNER, PF_COLL_NVLS, PF_COLL_COLLNET,
  PF_COLL_DIRECT,
  PF_COLL_NBUILTIN
};
#define PF_COLL_FIRST PF_COLL_RING /* the first algorithm id (ids below are choices) */

typedef struct pf_flow {
  int src, dst;       /* endpoint ids (GPUs, or in-network endpoints, topology.h) */
  double bytes;       /* per repetition */
} pf_flow;

typedef struct pf_coll_step {
  int nflows, cap;
  pf_flow *flows;     /* owned */
  int reps;           /* identical repetitions */
  double lat_mult;    /* route latencies per repetition (1; 2 x depth for a pipelined tree) */
  double sw_intra;    /* library steps per repetition on the node's fabric */
  double sw_net;      /* library steps per repetition over the network */
} pf_coll_step;

typedef struct pf_coll_pattern {
  int nsteps, cap;
  pf_coll_step *steps; /* owned */
  pf_coll_kind kind;
  pf_coll_algo algo;   /* algorithm the steps implement */
  pf_coll_proto proto; /* protocol it is costed with (Simple when built) */
  pf_ccl_lib lib;      /* library whose latencies apply */
  const struct pf_ccl_tuner *tuner; /* its tables for the machine's version (ccl.h; borrowed from a static table) */
  int fabric_hw;       /* latency class of the fabric: 0 NVLink / Infinity Fabric / Xe Link, 1 PCIe */
  double lib_factor;   /* measured library efficiency on network links (1 = none) */
  double nic_share;    /* share of a GPU's bonded NICs the pattern can use (0 or 1: all): an all-to-all drives one
                        * NIC per GPU, it cannot aggregate several (NVIDIA/nccl-tests#267, NVIDIA/nccl#804) */
  const pf_ccl_table *tab; /* the library's measured ring where it applies (ring patterns; NULL: NCCL's constants) */
  double bytes;        /* the buffer each rank holds */
  int p, ngroups;
} pf_coll_pattern;

typedef struct pf_coll_phase {
  int n;
  int *link;          /* links the step crosses */
  double *bytes;      /* effective bytes per repetition on each (protocol and library efficiency applied) */
  double lat_s;       /* latency per repetition */
  int reps;
} pf_coll_phase;

typedef struct pf_coll_job {
  int nphase;
  pf_coll_phase *ph;  /* owned */
  double solo_s;      /* time when alone on the network */
} pf_coll_job;

/* What one collective call costs and moves. */
typedef struct pf_coll_result {
  double time_s;                /* alone on the network (all groups of the call concurrent) */
  double lat_s, bw_s;           /* the latency and bandwidth parts of time_s */
  pf_coll_algo algo;            /* chosen (or forced) algorithm */
  pf_coll_proto proto;          /* chosen (or forced) protocol */
  double alg_bw_Bps;            /* bytes / time (nccl-tests' algbw; bytes = the larger of input and output) */
  double bus_bw_Bps;            /* algbw x the nccl-tests factor of the collective */
  double bottleneck_share;      /* largest number of flows on one link in one step (1 = none shared) */
  double fabric_bytes, nic_bytes; /* per rank: bytes sent over the node fabric / out of the node */
  int inter;                    /* the groups span nodes */
} pf_coll_result;

const char *pf_coll_kind_name(pf_coll_kind k);     /* "all-reduce" ... */
const char *pf_coll_kind_id(pf_coll_kind k);       /* "all_reduce" ... (nccl-tests' names) */
int pf_coll_kind_parse(const char *s, pf_coll_kind *out);
/* nccl-tests' bus-bandwidth factor: all-reduce 2(p-1)/p, reduce-scatter,
 * all-gather, all-to-all (p-1)/p, send/receive 1 (PERFORMANCE.md). */
double pf_coll_busbw_factor(pf_coll_kind k, int p);
/* nccl-tests' count column for a size of `bytes` (the larger of a rank's
 * input and output) of elements of elt bytes over p ranks: the per-rank
 * count its *GetCollByteCount gives (all-gather and reduce-scatter
 * size / p, all-to-all the count per peer; all-reduce and send/receive the
 * whole buffer). */
double pf_coll_count(pf_coll_kind k, double bytes, double elt, int p);

/* Steps of `kind` over ngroups concurrent groups of p endpoints each
 * (groups[g * p + i] = GPU of member i, members in ring order), all running
 * in lockstep; bytes = the buffer each rank holds (the full vector; send/
 * receive: the message).  algo must be an algorithm, not a choice (auto,
 * best).  One that does not implement the collective (tree for
 * reduce-scatter) is replaced by the first algorithm of the table that does
 * (the ring; direct sends for all-to-all and send/receive), and one that does
 * not apply to the groups (NVLS without an NVLink-SHARP switch or across
 * nodes, CollNet without in-network reduction, hierarchical on irregular
 * groups) builds the ring instead: out->algo says which was built.  Free with
 * pf_coll_pattern_free(). */
int pf_coll_pattern_build(const pf_topology *t, pf_coll_kind kind, pf_coll_algo algo, double bytes, const int *groups,
                          int ngroups, int p, pf_coll_pattern *out);
void pf_coll_pattern_free(pf_coll_pattern *pat);
/* dst = a copy of src that owns its steps and flows (PF_ENOMEM: dst empty). */
int pf_coll_pattern_copy(pf_coll_pattern *dst, const pf_coll_pattern *src);

/* For an algorithm's builder (collalgo.h): append a step of `reps`
 * repetitions to pat (NULL when out of memory), and a flow of `bytes` per
 * repetition from endpoint src to dst to a step (nothing when src == dst or
 * bytes <= 0; -1 when out of memory). */
pf_coll_step *pf_coll_step_add(pf_coll_pattern *pat, int reps, double lat_mult, double sw_intra, double sw_net);
int pf_coll_flow_add(pf_coll_step *st, int src, int dst, double bytes);

/* Cost of the pattern alone with its protocol and library (formula above).
 * If link_bytes is not NULL it receives, per link, the total bytes the
 * pattern moves over it (reps included; array of t->nlinks, added to). */
double pf_coll_pattern_time(const pf_topology *t, const pf_coll_pattern *pat, double *link_bytes);

/* The same, split, with the per-rank traffic (res->algo/proto from pat). */
void pf_coll_pattern_cost(const pf_topology *t, const pf_coll_pattern *pat, pf_coll_result *res);

/* Latency and bandwidth parts of the pattern's time with every protocol the
 * library allows for its algorithm: lat[pr] + bw[pr] (INFINITY where not
 * allowed); one pass over the routes. */
void pf_coll_pattern_protos(const pf_topology *t, const pf_coll_pattern *pat, double lat[3], double bw[3]);

/* For a replay of the pattern as real flows (fullsim.c): the call's fixed
 * latency; the latency one repetition of step `step` adds beyond its slowest
 * route (whose latency goes to *route_lat if not NULL); the factor on a
 * flow's bytes (protocol payload share and, for flows that leave the node,
 * the library's measured efficiency). */
double pf_coll_replay_base(const pf_coll_pattern *pat);
double pf_coll_replay_extra_lat(const pf_topology *t, const pf_coll_pattern *pat, int step, double *route_lat);
double pf_coll_replay_scale(const pf_coll_pattern *pat, int inter);

/* Reduce a pattern to per-link byte lists.  Free with pf_coll_job_free(). */
int pf_coll_job_build(const pf_topology *t, const pf_coll_pattern *pat, pf_coll_job *job);
void pf_coll_job_free(pf_coll_job *job);

/* Queue src after dst: the collectives of one communicator run one after
 * another (NCCL executes the calls of a stream in order).  When dst ends
 * with src's phases (the same links and repetitions: buckets of one
 * algorithm), the two are kept as one collective of the summed bytes and
 * latency terms; otherwise src's phases are appended.  PF_ENOMEM. */
int pf_coll_job_append(pf_coll_job *dst, const pf_coll_job *src);

/* The job of a collective like `like` (its kind, algorithm, protocol) on
 * other bytes per rank over the same groups, from a cache of the sizes
 * asked last (the gradient buckets of a stage come in a few sizes).  *job is
 * borrowed from the cache: valid until the next call or
 * pf_coll_job_cache_free().  PF_ENOMEM, PF_EINVAL. */
typedef struct pf_coll_job_cache {
  int n;
  double bytes[8];
  pf_coll_job job[8];  /* owned */
} pf_coll_job_cache;
int pf_coll_job_like(const pf_topology *t, pf_coll_kind kind, const pf_coll_pattern *like, double bytes,
                     const int *groups, int ngroups, int p, pf_coll_job_cache *c, const pf_coll_job **job);
void pf_coll_job_cache_free(pf_coll_job_cache *c);

/* Jobs that start at start[i] share links while they overlap: each job runs
 * its phases in order; at any time a phase progresses at rate 1 / T with
 *   T = reps x (lat + max over its links of (sum of the bytes per repetition
 *       of every active phase on that link) / capacity),
 * re-evaluated whenever a phase starts or ends (a fluid model that equals
 * the pattern cost for jobs alone and the joint cost for jobs started
 * together).  Writes end[i]. */
int pf_coll_timeline(const pf_topology *t, pf_coll_job *const *jobs, int n, const double *start, double *end);

#endif
