/* fullsim.h - `--engine full`: every GPU of the job simulated in SimGrid.
 *
 * One actor per GPU runs its stage's schedule (all DP replicas' pipelines,
 * TP folded into the stage work as in the default engine), sends activations
 * and gradients as real flows over the routes of the machine's topology
 * (SimGrid platform XML emitted by pf_topology_write_xml), then runs the
 * data-parallel collectives step by step as real flows (the same patterns
 * the default engine costs analytically), the optimizer and the parameter
 * all-gather.  For cross-checks at small scale: the event count grows with
 * GPUs x microbatches plus the collectives' flows.
 */
#ifndef PREFLIGHT_FULLSIM_H
#define PREFLIGHT_FULLSIM_H

#include "comm/comm.h"
#include "pipeline.h"

#define PF_FULLSIM_MAX_GPUS 4096
/* The events --engine full simulates without --force (fullest.c; docs/engines.md): the 4,096-GPU cross-check
 * of the collectives (leonardo-booster, gpt3-1.3b, TP 1, PP 4, gbs 2048) is below it. */
#define PF_FULLSIM_MAX_EVENTS 50e6

typedef struct pf_fullsim_input {
  const pf_scenario *sc;
  const pf_stage_work *work;     /* pp entries */
  const pf_topology *topo;
  const pf_pipe_net *net;        /* only recv_s is used: links come from the topology */
  const pf_coll_pattern *grad;   /* pp patterns: gradient reduce-scatter / all-reduce per stage */
  const pf_coll_pattern *emb;    /* tied-embedding all-reduce between first and last stage, or NULL */
  const pf_coll_pattern *ag;     /* pp patterns: parameter all-gather (dist-opt), or NULL */
} pf_fullsim_input;

typedef struct pf_fullsim_result {
  double iteration_s;                  /* last GPU's end */
  double makespan_s;                   /* last backward end */
  double stage_end_s[PF_MAXSTAGE];     /* per stage: latest backward end over its GPUs */
  double grad_end_s[PF_MAXSTAGE];      /* per stage: latest end of gradient sync (+ embeddings) */
  double opt_start_s;                  /* all GPUs synchronised (gradient-norm all-reduce) */
  long events;                         /* execs and flows simulated */
} pf_fullsim_result;

/* The events the run would simulate (fullest.c), and 0 or PF_EINVAL when above PF_FULLSIM_MAX_EVENTS
 * without the job's force (--force), saying the estimate. */
double pf_fullsim_estimate(const pf_fullsim_input *in);
int pf_fullsim_admit(const pf_fullsim_input *in);

/* Run the full simulation in a fork()ed child.  PF_EINVAL above
 * PF_FULLSIM_MAX_GPUS; PF_ESIM / PF_EIO / PF_ENOMEM. */
int pf_fullsim_run(const pf_fullsim_input *in, pf_fullsim_result *out);

#endif
