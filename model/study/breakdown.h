/* breakdown.h - the iteration split into what it is spent on, the order its
 * terms are printed in, and its JSON object "breakdown_s" (written for
 * prediction documents and tune's finalists, read back from tune's shards).
 */
#ifndef PREFLIGHT_BREAKDOWN_H
#define PREFLIGHT_BREAKDOWN_H

#include <cjson/cJSON.h>

/* The iteration, split (sums to iteration_time_s): tp_comm is the exposed TP/SP/CP time on the critical
 * stage (with what overlapped TP collectives cost the GEMMs they hide behind); dp_interference what the DP
 * collectives hidden behind backward / forward cost that compute. */
typedef struct pf_breakdown {
  double compute, tp_comm, pp_bubble, pp_comm, dp_comm_exposed, optimizer, overhead, dp_interference;
  double input;                  /* the step waits for the input pipeline (prefetching hides the rest) */
  /* ZeRO-2/3 (comm/fsdp.c): the per-unit parameter all-gathers and gradient reduce-scatters (with HYBRID_SHARD's
   * cross-node all-reduce) left exposed on the critical stage, incl. what their hidden part costs the compute */
  double fsdp_allgather, fsdp_reduce_scatter;
  double fp8_amax;               /* FP8 delayed scaling's amax all-reduces, forward and backward (comm.c) */
  double ep_a2a;                 /* the MoE dispatch/combine all-to-alls on the critical stage (not in tp_comm) */
} pf_breakdown;

/* The breakdown's terms in the order every report prints them (prediction JSON and table, tune's why-not):
 * name ("compute", "tp_comm", ...; static) and value of term i < PF_BREAKDOWN_N. */
enum { PF_BREAKDOWN_N = 13 };
const char *pf_breakdown_name(int i);
double pf_breakdown_get(const pf_breakdown *b, int i);
/* The first terms, compute ... optimizer (ep_a2a among them): the ones a plan choice moves (tune's why-not and its shards). */
enum { PF_BREAKDOWN_PLAN_N = 7 };

/* Add the object "breakdown_s" to parent with the first nterms terms as "name": value in order, each value
 * passed through round when round is not NULL (prediction documents round to 6 significant digits); returns
 * it (owned by parent), NULL when out of memory. */
cJSON *pf_breakdown_json(cJSON *parent, const pf_breakdown *b, int nterms, double (*round)(double));
/* Read the first nterms terms of parent's "breakdown_s" into *b (the other terms left as they are): 0, or -1
 * when the object or one of them is missing or not a number. */
int pf_breakdown_json_read(const cJSON *parent, int nterms, pf_breakdown *b);

#endif
