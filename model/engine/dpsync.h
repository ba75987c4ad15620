/* dpsync.h - the data-parallel synchronisation of one iteration in time
 * (part of the communication module, comm.h): per stage the gradient
 * reduce-scatter (distributed optimizer) or all-reduce over its DP x CP
 * groups (a mixture of experts' routed experts over their expert-data-parallel
 * groups), started when the pipeline DES says the gradients are ready (whole
 * stage, or bucket by bucket with --overlap-grad-reduce), all stages' and
 * buckets' collectives sharing links while they overlap in time; the
 * tied-embedding all-reduce; the global sync; the optimizer; and the
 * parameter all-gather (hidden behind the next forward with
 * --overlap-param-gather).  Formulas: docs/engine.md 5.
 */
#ifndef PREFLIGHT_DPSYNC_H
#define PREFLIGHT_DPSYNC_H

#include "comm/comm.h"
#include "pipeline.h"

typedef struct pf_dpsync {
  /* patterns, for the full engine (owned) */
  pf_coll_pattern *grad, *ag, emb;  /* pp entries each; ag only with the distributed optimizer */
  pf_coll_pattern *xgrad, *xag;     /* pp entries each: the routed experts' over the EDP groups (has_x) */
  int has_ag, has_emb;
  int split, has_x;                 /* a mixture of experts: the routed experts' gradients are not in grad's bytes;
                                       has_x: they are reduced over EDP > 1 ranks (xgrad, xag) */
  int edp;                          /* the expert-data-parallel size (0: no routed experts apart) */
  double expert_s;                  /* longest per-stage time of the experts' collectives alone (in dp_max_s,
                                       ag_max_s) */
  pf_coll_kind kind;                /* of the gradient collective */
  pf_coll_result info;              /* stage 0's gradient collective (algorithm, protocol, bus bandwidth) */
  /* the iteration after the pipeline */
  double sync_s;                    /* every gradient synchronised: the optimizer starts */
  double core_end_s;                /* last parameter all-gather (exposed part) ends */
  double opt_max_s;                 /* longest optimizer step */
  double dp_max_s, ag_max_s;        /* longest per-stage time in gradient (+ embedding) / parameter collectives */
  double grad_hidden_s;             /* gradient collective time before the stage's last backward ends (critical stage) */
  double ag_hidden_s;               /* parameter all-gather hidden behind the next forward (critical stage) */
  double interference_s;            /* compute slowed by the hidden DP collectives: the longest stage's slowdown of
                                       its last backward plus of its first forward (not in core_end_s) */
  double fabric_bytes, nic_bytes;   /* per GPU per iteration, averaged over stages */
} pf_dpsync;

/* Run the synchronisation after the pipeline result r (stage ends, first
 * last-microbatch backwards) on c's topology; fills tl (grad/opt/ag times).
 * Free with pf_dpsync_free().  PF_ENOMEM, PF_EINVAL. */
int pf_dpsync_run(const pf_comm *c, const pf_stage_work *w, const pf_pipeline_result *r, pf_iter_timeline *tl,
                  pf_dpsync *out);
void pf_dpsync_free(pf_dpsync *d, int pp);

#endif
