/* fullcall.h - private to the full engine: a collective pattern
 * (comm/collective.h) turned into per-actor programs for SimGrid.
 *
 * Each step of a pattern becomes, for every actor it touches, ONE transfer
 * per peer carrying all the step's repetitions (reps x bytes), a sleep for
 * the repetitions' remaining latency, and a barrier with the actors that the
 * step's flows connect (a ring's ranks finish a step together: each
 * repetition forwards what the previous one received).  Replaying every
 * repetition as its own flows made a ring over p ranks 2p(p-1) activities,
 * O(p^2) (issue 26 item 4; docs/engine.md 6).  pf_fullcall_events() counts
 * the activities a run will simulate before anything is built.
 */
#ifndef PF_FULLCALL_H
#define PF_FULLCALL_H

#include "comm/comm.h"

typedef struct pf_fullstep {
  double sleep_s;                /* after the transfers: reps - 1 route latencies and reps library latencies */
  double base_s;                 /* once, before the transfers (the call's fixed latency) */
  int nout, nin;
  int *out_dst;                  /* actor ids */
  double *out_bytes;             /* all repetitions' bytes */
  int *in_src;
  int sync;                      /* index into pf_fullcalls.sync_size, or -1: no other actor to wait for */
} pf_fullstep;

typedef struct pf_fullcall {
  int n;
  pf_fullstep *steps;
} pf_fullcall;

enum { PF_CALL_GRAD, PF_CALL_EMB, PF_CALL_AG, PF_NCALL };

typedef struct pf_fullcalls {
  int nep, tgpus, nids;          /* the topology's endpoints and GPUs; actor ids: endpoints, then (P + 1) x virtual */
  pf_fullcall *calls;            /* nids x PF_NCALL */
  int nsync, capsync;
  int *sync_size;                /* actors meeting at each step's barrier */
} pf_fullcalls;

/* Empty programs for a topology and P stages (in-network endpoints get one
 * actor per stage and one for the tied embeddings).  -1 out of memory. */
int pf_fullcalls_init(pf_fullcalls *fc, const pf_topology *t, int P);
void pf_fullcalls_free(pf_fullcalls *fc);

/* Actor of endpoint ep for the collectives of stage `stage` (P: the tied
 * embeddings), and the endpoint (host) an actor runs on. */
int pf_fullcalls_actor(const pf_fullcalls *fc, int ep, int stage);
int pf_fullcalls_host(const pf_fullcalls *fc, int id);

/* Append pattern pat (NULL: nothing) as call c of stage `stage`.  -1 out of memory. */
int pf_fullcalls_add(pf_fullcalls *fc, const pf_topology *t, const pf_coll_pattern *pat, int c, int stage);

/* Activities the full engine simulates for a pattern: one transfer per flow
 * and step (its repetitions merged). */
long pf_fullcall_pattern_events(const pf_coll_pattern *pat);

#endif
