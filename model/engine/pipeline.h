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

#include "compute/compute.h"
#include "job/job.h"
#include "comm/comm.h"
#include "core/core.h"

#include <stdbool.h>
#include <stddef.h>


typedef struct pf_pipe_event {  /* one compute or send interval, for traces */
  float start_s, end_s;
  short stage, chunk;
  int microbatch;
  char kind;                    /* 'F' forward, 'B' backward, 'S' send fwd, 'R' send bwd */
} pf_pipe_event;

typedef struct pf_pipeline_result {
  double makespan_s;            /* first forward start to last backward end */
  double stage_busy_s[PF_MAXSTAGE];    /* compute time per stage (incl. TP) */
  double stage_end_s[PF_MAXSTAGE];     /* last backward end per stage */
  double stage_first_bwd_s[PF_MAXSTAGE];/* when each stage's last microbatch backward starts (bucket readiness) */
  int events;                   /* DES activities */
  int stuck_actors;             /* stages that never finished: a deadlock (sgsetup.h), an engine failure */
  pf_pipe_event *trace;         /* NULL unless asked; caller frees */
  int ntrace;
} pf_pipeline_result;


/* One schedule operation of a stage. */
typedef struct pf_sched_op {
  char kind;  /* 'F' or 'B' */
  int mb;     /* microbatch */
  int chunk;  /* model chunk (interleaved) */
} pf_sched_op;

/* The operations stage s runs, in order (Megatron's 1F1B, interleaved 1F1B
 * or GPipe); ops must hold 2 x microbatches x V entries.  Returns the count. */
int pf_pipeline_schedule(const pf_plan *p, int s, pf_sched_op *ops);

/* The closed forms (pipeform.c): the pipeline of --engine analytic and tune's screening (1F1B and GPipe in closed
 * form, the interleaved schedule as a list schedule), and DualPipe in every engine; fills r as the DES does. */
void pf_pipeline_closed_form(const pf_scenario *sc, const pf_stage_work *w, const pf_pipe_net *net,
                             pf_pipeline_result *r);

/* Whether the schedule's P2P is blocking.  Megatron-Core's non-interleaved 1F1B
 * (schedules.py forward_backward_pipelining_without_interleaving at core_v0.12.0) sends and receives through
 * p2p_communication._communicate with wait_on_reqs=True: after a forward, send_forward_recv_backward posts the
 * activation's send and the gradient's receive as one batch_isend_irecv and waits for both (then
 * torch.cuda.synchronize, batch_p2p_sync = True); after a backward, send_backward_recv_forward does the same
 * with the previous stage.  Megatron-LM's arguments.py sets overlap_p2p_comm = False (batch_p2p_comm = True)
 * whenever the schedule is not interleaved, so each exchange sits between two computations of the stage:
 * a middle stage waits for two transfers a microbatch, the first and last stages for one.  The interleaved
 * schedule overlaps its P2P by default (--no-overlap-p2p-communication is the opt-out) and GPipe is not a
 * Megatron schedule: their sends stay eager and detached.  True for 1F1B with more than one stage. */
bool pf_pipeline_blocking_p2p(const pf_plan *p);

/* Forward and backward time of one microbatch on each of the V chunks of stage s (tf[V], tb[V], V <= 64, TP/CP
 * collectives included).  The even split gives every chunk 1/V of the stage; uneven stages (job/pplayout.c)
 * give each chunk its own layers' share of the layer work, and the embedding and the logits and loss to the
 * chunk that holds them (chunk 0 of stage 0, chunk V - 1 of the last stage). */
void pf_pipeline_chunk_times(const pf_scenario *sc, const pf_stage_work *w, int s, double *tf, double *tb);

/* Simulate.  work[] has pp entries, net the P2P links (pf_pipeline_net).
 * want_trace asks for per-interval events.  Engine PF_ENGINE_ANALYTIC uses
 * the closed form (no SimGrid). */
int pf_pipeline_run(const pf_scenario *sc, const pf_stage_work *work, const pf_pipe_net *net, int want_trace,
                    pf_pipeline_result *r);


/* Where the DP collectives, the optimizer and the parameter all-gather of
 * each stage fall in the iteration (filled by pf_predict for traces). */
typedef struct pf_iter_timeline {
  int pp;
  double grad_start_s[PF_MAXSTAGE], grad_end_s[PF_MAXSTAGE];   /* gradient RS / AR (+ tied embeddings) */
  double opt_start_s[PF_MAXSTAGE], opt_end_s[PF_MAXSTAGE];     /* optimizer step */
  double ag_start_s[PF_MAXSTAGE], ag_end_s[PF_MAXSTAGE];       /* parameter all-gather (dist-opt) */
  double ag_hidden_s[PF_MAXSTAGE]; /* --overlap-param-gather: part hidden behind the next step's first forward */
  double emb_start_s, emb_end_s;   /* tied-embedding all-reduce, first and last stage (equal if none) */
  double slow_start_s, slow_end_s; /* compute slowed by DP collectives hidden under it, drawn at the end (dpsync.h) */
  char grad_name[96], ag_name[64];
  /* ZeRO-2/3 (comm/fsdp.c): level, and per stage the units of a microbatch, one unit's parameter all-gather
   * and its gradient reduce-scatter (+ HYBRID_SHARD all-reduce), laid out inside each F / B by the trace */
  int fsdp_level;
  int fsdp_units[PF_MAXSTAGE];
  double fsdp_ag_s[PF_MAXSTAGE], fsdp_rs_s[PF_MAXSTAGE];
  /* expert parallelism (comm/epa2a.c): per stage its MoE layers and one microbatch's all-to-all time in the
   * forward (dispatch + combine per layer) and the backward (their mirror images), laid out inside each F / B
   * by the trace; 0 layers without EP */
  int ep_layers[PF_MAXSTAGE];
  double ep_fwd_s[PF_MAXSTAGE], ep_bwd_s[PF_MAXSTAGE];
} pf_iter_timeline;

/* One simulated iteration as a timeline (pf_predict_traced fills it): the
 * pipeline's compute and send intervals and, per stage, when its DP
 * collectives and optimizer ran. */
typedef struct pf_trace {
  double iteration_s;
  pf_pipe_event *events; /* owned */
  int nevents;
  pf_iter_timeline tl;
} pf_trace;
void pf_trace_free(pf_trace *t);

#endif
