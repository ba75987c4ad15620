/* fullsim.h - `--engine full`: every GPU of the job simulated in SimGrid.
 *
 * One actor per GPU runs its stage's schedule (all DP replicas' pipelines,
 * TP folded into the stage work as in the default engine), sends activations
 * and gradients as real flows over the routes of the machine's topology
 * (SimGrid platform XML emitted by pf_topology_write_xml), then runs the
 * data-parallel collectives step by step as real flows (the same patterns
 * the default engine costs analytically), the optimizer and the parameter
 * all-gather.  For cross-checks: the activities simulated are GPUs x
 * microbatches plus one transfer per flow and step of the collectives (their
 * repetitions merged, fullcall.h), linear in GPUs for rings; a 4,096-GPU run
 * takes seconds (docs/engine.md 6).
 */
#ifndef PREFLIGHT_FULLSIM_H
#define PREFLIGHT_FULLSIM_H

#include "comm/comm.h"
#include "pipeline.h"

/* Where it stops: SimGrid's Full routing keeps a hosts x hosts table (8 B
 * each: 134 MB at 4,096 GPUs), and about 100,000 activities take a second on
 * one core of the 2-core reference machine (docs/engine.md 6). */
#define PF_FULLSIM_MAX_GPUS 4096
#define PF_FULLSIM_MAX_EVENTS 6000000

typedef struct pf_fullsim_input {
  const pf_scenario *sc;
  const pf_stage_work *work;     /* pp entries */
  const pf_topology *topo;
  const pf_pipe_net *net;        /* only recv_s is used: links come from the topology */
  const pf_coll_pattern *grad;   /* pp patterns: gradient reduce-scatter / all-reduce per stage */
  const pf_coll_pattern *emb;    /* tied-embedding all-reduce between first and last stage, or NULL */
  const pf_coll_pattern *ag;     /* pp patterns: parameter all-gather (dist-opt), or NULL */
  const pf_coll_pattern *xgrad;  /* pp patterns: a mixture of experts' routed experts over EDP after grad, or NULL */
  const pf_coll_pattern *xag;    /* pp patterns: their all-gather after ag, or NULL */
} pf_fullsim_input;

typedef struct pf_fullsim_result {
  double iteration_s;                  /* last GPU's end */
  double makespan_s;                   /* last backward end */
  double stage_end_s[PF_MAXSTAGE];     /* per stage: latest backward end over its GPUs */
  double grad_end_s[PF_MAXSTAGE];      /* per stage: latest end of gradient sync (+ embeddings) */
  double opt_start_s;                  /* all GPUs synchronised (gradient-norm all-reduce) */
  long events;                         /* execs and flows simulated */
  int stuck_actors;                    /* actors that never finished: a deadlock (sgsetup.h), an engine failure */
} pf_fullsim_result;

/* Activities (execs and transfers) the run would simulate, counted from
 * the plan and the patterns before anything is built: an upper bound on
 * pf_fullsim_result.events (the first stage receives and the last sends no
 * activations).  Callers may refuse on it before calling pf_fullsim_run. */
long pf_fullsim_events(const pf_fullsim_input *in);

/* Run the full simulation in a fork()ed child.  PF_EINVAL above
 * PF_FULLSIM_MAX_GPUS, or above PF_FULLSIM_MAX_EVENTS (pf_fullsim_events) without --force;
 * PF_ESIM / PF_EIO / PF_ENOMEM. */
int pf_fullsim_run(const pf_fullsim_input *in, pf_fullsim_result *out);

#endif
