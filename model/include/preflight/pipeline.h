/* pipeline.h - the pipeline engine: one representative pipeline of PP stages
 * x M microbatches under 1F1B, interleaved (V chunks) or GPipe, simulated as a
 * SimGrid discrete-event run (one actor per stage, P2P sends over the links the
 * placement implies), or evaluated in closed form for cross-checks.
 *
 * SimGrid keeps one engine per process and cannot unload a platform, so each
 * simulation runs in a fork()ed child that writes its results to a pipe.
 */
#ifndef PREFLIGHT_PIPELINE_H
#define PREFLIGHT_PIPELINE_H

#include "preflight/compute.h"
#include "preflight/plan.h"

typedef struct pf_pipe_event {  /* one compute or send interval, for traces */
  float start_s, end_s;
  short stage, chunk;
  int microbatch;
  char kind;                    /* 'F' forward, 'B' backward, 'S' send fwd, 'R' send bwd */
} pf_pipe_event;

typedef struct pf_pipeline_result {
  double makespan_s;            /* first forward start to last backward end */
  double stage_busy_s[1024];    /* compute time per stage (incl. TP) */
  double stage_end_s[1024];     /* last backward end per stage */
  double stage_first_bwd_s[1024];/* when each stage's last microbatch backward starts (bucket readiness) */
  double p2p_exposed_s;         /* makespan - ideal with free P2P */
  int events;                   /* DES activities */
  pf_pipe_event *trace;         /* NULL unless asked; caller frees */
  int ntrace;
} pf_pipeline_result;

/* P2P link between stage s and s+1: bandwidth and latency for the placement. */
void pf_pipeline_link(const pf_scenario *sc, int s, double *bw_Bps, double *lat_s);

/* Simulate.  work[] has pp entries.  want_trace asks for per-interval events.
 * Engine PF_ENGINE_ANALYTIC uses the closed form (no SimGrid). */
int pf_pipeline_run(const pf_scenario *sc, const pf_stage_work *work, int want_trace, pf_pipeline_result *r);

#endif
