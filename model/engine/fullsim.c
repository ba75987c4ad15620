/* fullsim.c - every GPU of the job in SimGrid (`--engine full`, see fullsim.h).
 *
 * Platform: pf_topology_write_xml() with one host per GPU and explicit routes
 * for exactly the pairs that communicate (pipeline neighbours, collective
 * peers), so the flows share the same directed links, capacities and
 * latencies the default engine counts.  Settings as the pipeline DES
 * (shared/research/simgrid-notes.md): CM02, cross-traffic off, TCP-gamma
 * raised, quiet logs.  CM02 shares a bottleneck in proportion to 1/route
 * latency, which differs from the default engine's equal shares only where
 * flows of different route lengths meet.
 *
 * Each GPU actor: (1) the stage's schedule, receiving from the previous
 * stage's GPU with the same (tp, cp, dp) coordinates and sending its
 * p2p_bytes to the next, as Megatron's blocking exchanges under 1F1B
 * (pf_pipeline_blocking_p2p, the pipeline DES's rule), otherwise as eager,
 * detached transfers; (2) its stage's
 * gradient collective, step by step: in each repetition of a step post all
 * sends, receive from all sources, wait for the sends (rendezvous, one
 * mailbox per ordered pair); a tree step adds its extra latency terms as a
 * sleep; (3) the tied-embedding all-reduce on the first and last stage;
 * (4) a barrier of all GPUs (Megatron's gradient-norm / inf check); (5) the
 * optimizer; (6) the parameter all-gather with the distributed optimizer.
 * Collective flows carry the bytes the default engine charges (protocol
 * payload share, measured library efficiency on flows that leave the node,
 * pf_coll_replay_scale) and each repetition sleeps the library latency the
 * default engine adds beyond the route's (pf_coll_replay_extra_lat), so the
 * two engines differ only in how SimGrid shares links.  In-network
 * reduction endpoints (NVSwitch, switch SHARP) are actors that only run the
 * collective steps, one per endpoint and stage (the stages' collectives are
 * independent; one actor would serialise them), on the endpoint's host.
 */
#include "fullsim.h"

#include "core/core.h"
#include "fullcall.h"
#include "sgsetup.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <simgrid/actor.h>
#include <simgrid/barrier.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>

#define HOST_SPEED 1e9

enum { CALL_GRAD = PF_CALL_GRAD, CALL_EMB = PF_CALL_EMB, CALL_AG = PF_CALL_AG, NCALL = PF_NCALL };

typedef struct fs_ctx {
  const pf_fullsim_input *in;
  int gpus, P, V;
  pf_fullcalls fc;               /* the collectives' per-actor programs (fullcall.h) */
  sg_bar_t *sync;                /* fc.nsync barriers: the actors of one collective step */
  sg_mailbox_t *fwd_mb, *bwd_mb; /* per GPU x chunk */
  sg_bar_t barrier;
  double *stage_end, *grad_end, *end, opt_start;
  long events;
} fs_ctx;

static fs_ctx F;
static int payload;

/* ---------- actors ---------- */

static sg_mailbox_t pair_mb(int src, int dst) {
  char nm[48];
  snprintf(nm, sizeof nm, "c%d_%d", src, dst);
  return sg_mailbox_by_name(nm);
}

static void run_call(const pf_fullcall *gc, int g) {
  int most = 1;
  for (int k = 0; k < gc->n; k++)
    if (gc->steps[k].nin + gc->steps[k].nout > most) most = gc->steps[k].nin + gc->steps[k].nout;
  sg_comm_t *comms = malloc((size_t)most * sizeof *comms);
  void **data = malloc((size_t)most * sizeof *data);
  if (!comms || !data) _exit(5);
  for (int k = 0; k < gc->n; k++) {
    const pf_fullstep *st = &gc->steps[k];
    if (st->base_s > 0) sg_actor_sleep_for(st->base_s);
    {
      int nc = 0;
      for (int i = 0; i < st->nin; i++) comms[nc++] = sg_mailbox_get_async(pair_mb(st->in_src[i], g), &data[i]);
      for (int i = 0; i < st->nout; i++) {
        comms[nc++] = sg_mailbox_put_async(pair_mb(g, st->out_dst[i]), &payload,
                                           (uint64_t)(st->out_bytes[i] > 1 ? st->out_bytes[i] : 1));
        F.events++;
      }
      if (nc > 0) sg_comm_wait_all(comms, (size_t)nc);
      if (st->sync >= 0) sg_barrier_wait(F.sync[st->sync]);
      if (st->sleep_s > 0) sg_actor_sleep_for(st->sleep_s);
    }
  }
  free(comms);
  free(data);
}

static void gpu_run(int argc, char **argv) {
  (void)argc;
  int g = (int)strtol(argv[1], NULL, 10);
  const pf_scenario *sc = F.in->sc;
  const pf_plan *p = &sc->plan;
  if (g >= F.gpus) { /* an in-network reduction endpoint: the collective steps only */
    run_call(&F.fc.calls[g * NCALL + CALL_GRAD], g);
    run_call(&F.fc.calls[g * NCALL + CALL_EMB], g);
    sg_barrier_wait(F.barrier);
    run_call(&F.fc.calls[g * NCALL + CALL_AG], g);
    return;
  }
  int P = F.P, V = F.V, last = P * V - 1;
  int ct, cc, cd, s;
  pf_plan_coords(p, g, &ct, &cc, &cd, &s);
  const pf_stage_work *w = &F.in->work[s];
  double tf[64], tb[64], recv = F.in->net->recv_s;
  pf_pipeline_chunk_times(sc, w, s, tf, tb);
  /* GPU of virtual stage k with our (tp, cp, dp) coordinates */
#define GPU_OF_STAGE(st) pf_plan_rank(p, ct, cc, cd, (st))
  bool blocking = pf_pipeline_blocking_p2p(p); /* Megatron's 1F1B exchanges (pipeline.h) */
  sg_comm_t pend = NULL;
  for (int c = 0; c < V && !blocking; c++) {
    sg_mailbox_set_receiver(sg_mailbox_get_name(F.fwd_mb[g * V + c]));
    sg_mailbox_set_receiver(sg_mailbox_get_name(F.bwd_mb[g * V + c]));
  }
  pf_sched_op *ops = malloc((size_t)(2 * p->grad_accum * V) * sizeof *ops);
  int n = ops ? pf_pipeline_schedule(p, s, ops) : 0;
  uint64_t bytes = (uint64_t)(w->p2p_bytes > 1 ? w->p2p_bytes : 1);
  for (int i = 0; i < n; i++) {
    const pf_sched_op *o = &ops[i];
    int k = o->chunk * P + s, fwd = o->kind == 'F';
    bool has_in = fwd ? k > 0 : k < last, has_out = fwd ? k < last : k > 0;
    sg_mailbox_t in = has_in ? (fwd ? F.fwd_mb : F.bwd_mb)[g * V + o->chunk] : NULL;
    if (blocking) {
      pf_simgrid_exchange(&pend, in, recv);
    } else if (in) {
      sg_mailbox_get(in);
      if (recv > 0) sg_actor_sleep_for(recv);
    }
    sg_actor_execute((fwd ? tf : tb)[o->chunk] * HOST_SPEED);
    F.events++;
    if (has_out) {
      int nk = fwd ? k + 1 : k - 1, dst = GPU_OF_STAGE(nk % P);
      sg_mailbox_t out = (fwd ? F.fwd_mb : F.bwd_mb)[dst * V + nk / P];
      if (blocking) pend = sg_mailbox_put_async(out, &payload, bytes);
      else sg_comm_detach(sg_mailbox_put_init(out, &payload, bytes), NULL);
      F.events++;
    }
  }
  if (blocking) pf_simgrid_exchange(&pend, NULL, 0);
#undef GPU_OF_STAGE
  free(ops);
  F.stage_end[g] = simgrid_get_clock();
  run_call(&F.fc.calls[g * NCALL + CALL_GRAD], g);
  run_call(&F.fc.calls[g * NCALL + CALL_EMB], g);
  F.grad_end[g] = simgrid_get_clock();
  sg_barrier_wait(F.barrier);
  if (g == 0) F.opt_start = simgrid_get_clock();
  if (w->optimizer_s > 0) sg_actor_execute(w->optimizer_s * HOST_SPEED);
  F.events++;
  run_call(&F.fc.calls[g * NCALL + CALL_AG], g);
  F.end[g] = simgrid_get_clock();
}

static void gpu_actor(int argc, char **argv) {
  gpu_run(argc, argv);
  pf_simgrid_actor_done();
}

/* ---------- driver ---------- */

static int cmp_pair(const void *a, const void *b) {
  const int *x = a, *y = b;
  if (x[0] != y[0]) return (x[0] > y[0]) - (x[0] < y[0]);
  return (x[1] > y[1]) - (x[1] < y[1]);
}

typedef struct { int *v; long n, cap; } pairvec;

static int pv_add(pairvec *pv, int a, int b) {
  if (a == b) return 0;
  if (pv->n == pv->cap) {
    long cap = pv->cap ? 2 * pv->cap : 1024;
    int *v = realloc(pv->v, (size_t)cap * 2 * sizeof *v);
    if (!v) return -1;
    pv->v = v;
    pv->cap = cap;
  }
  pv->v[2 * pv->n] = a;
  pv->v[2 * pv->n + 1] = b;
  pv->n++;
  return 0;
}

static int pv_add_pattern(pairvec *pv, const pf_coll_pattern *pat) {
  if (!pat) return 0;
  for (int k = 0; k < pat->nsteps; k++)
    for (int i = 0; i < pat->steps[k].nflows; i++)
      if (pv_add(pv, pat->steps[k].flows[i].src, pat->steps[k].flows[i].dst) < 0) return -1;
  return 0;
}

static void child(const pf_fullsim_input *in, const char *plat, int fd) {
  const pf_scenario *sc = in->sc;
  int G = sc->gpus; /* actors; the topology may hold a partly used last node */
  pf_simgrid_start(plat, 128);
  F.fwd_mb = calloc((size_t)G * F.V, sizeof *F.fwd_mb);
  F.bwd_mb = calloc((size_t)G * F.V, sizeof *F.bwd_mb);
  F.stage_end = calloc((size_t)G, sizeof(double));
  F.grad_end = calloc((size_t)G, sizeof(double));
  F.end = calloc((size_t)G, sizeof(double));
  if (!F.fwd_mb || !F.bwd_mb || !F.stage_end || !F.grad_end || !F.end) _exit(5);
  for (int g = 0; g < G; g++)
    for (int c = 0; c < F.V; c++) {
      char nm[48];
      snprintf(nm, sizeof nm, "f%d.%d", g, c);
      F.fwd_mb[g * F.V + c] = sg_mailbox_by_name(nm);
      snprintf(nm, sizeof nm, "b%d.%d", g, c);
      F.bwd_mb[g * F.V + c] = sg_mailbox_by_name(nm);
    }
  /* GPU actors, then the in-network endpoints some collective uses */
  int nact = G;
  for (int g = F.fc.nep; g < F.fc.nids; g++)
    if (F.fc.calls[g * NCALL + CALL_GRAD].n + F.fc.calls[g * NCALL + CALL_EMB].n + F.fc.calls[g * NCALL + CALL_AG].n > 0) nact++;
  F.barrier = sg_barrier_init((unsigned)nact);
  F.sync = malloc((size_t)(F.fc.nsync + 1) * sizeof *F.sync);
  if (!F.sync) _exit(5);
  for (int i = 0; i < F.fc.nsync; i++) F.sync[i] = sg_barrier_init((unsigned)F.fc.sync_size[i]);
  int created = 0;
  for (int g = 0; g < F.fc.nids; g++) {
    if (g >= G && g < F.fc.nep) continue;
    if (g >= G && F.fc.calls[g * NCALL + CALL_GRAD].n + F.fc.calls[g * NCALL + CALL_EMB].n + F.fc.calls[g * NCALL + CALL_AG].n == 0)
      continue;
    char hn[32], gn[16], an[] = "gpu";
    snprintf(hn, sizeof hn, "g%d", pf_fullcalls_host(&F.fc, g));
    snprintf(gn, sizeof gn, "%d", g);
    char *av[] = {an, gn, NULL};
    sg_actor_create("gpu", sg_host_by_name(hn), gpu_actor, 2, av);
    created++;
  }
  int stuck = pf_simgrid_run("full", created);
  pf_fullsim_result *r = calloc(1, sizeof *r);
  if (!r) _exit(5);
  r->stuck_actors = stuck;
  for (int g = 0; g < G; g++) {
    int ct, cc, cd, s;
    pf_plan_coords(&sc->plan, g, &ct, &cc, &cd, &s);
    r->stage_end_s[s] = fmax(r->stage_end_s[s], F.stage_end[g]);
    r->grad_end_s[s] = fmax(r->grad_end_s[s], F.grad_end[g]);
    r->makespan_s = fmax(r->makespan_s, F.stage_end[g]);
    r->iteration_s = fmax(r->iteration_s, F.end[g]);
  }
  r->opt_start_s = F.opt_start;
  r->events = F.events;
  if (pf_write_all(fd, r, sizeof *r) < 0) _exit(4);
  close(fd);
  _exit(0);
}

typedef struct {
  const pf_fullsim_input *in;
  const char *plat;
  pf_fullsim_result *out;
  char why[160]; /* set when the worker failed */
} full_job;

static int full_work(void *ctx, int i, int fd) {
  const full_job *j = ctx;
  (void)i;
  child(j->in, j->plat, fd); /* exits */
  return 1;
}

static int full_collect(void *ctx, int i, int fd) {
  full_job *j = ctx;
  (void)i;
  return pf_read_all(fd, j->out, sizeof *j->out);
}

static void full_failed(void *ctx, int i, const char *why) {
  full_job *j = ctx;
  (void)i;
  snprintf(j->why, sizeof j->why, "%s", why);
}

long pf_fullsim_events(const pf_fullsim_input *in) {
  const pf_plan *p = &in->sc->plan;
  int V = p->schedule == PF_SCHED_INTERLEAVED ? p->vstages : 1;
  long n = (long)in->sc->gpus * (4L * p->grad_accum * V + 1); /* each F and B: an exec and a send; the optimizer */
  for (int s = 0; s < p->pp; s++)
    n += pf_fullcall_pattern_events(&in->grad[s]) + (in->ag ? pf_fullcall_pattern_events(&in->ag[s]) : 0) +
         (in->xgrad ? pf_fullcall_pattern_events(&in->xgrad[s]) : 0) +
         (in->xag ? pf_fullcall_pattern_events(&in->xag[s]) : 0);
  return n + pf_fullcall_pattern_events(in->emb);
}

int pf_fullsim_run(const pf_fullsim_input *in, pf_fullsim_result *out) {
  memset(out, 0, sizeof *out);
  const pf_scenario *sc = in->sc;
  const pf_plan *p = &sc->plan;
  const pf_topology *t = in->topo;
  int G = t->gpus, P = p->pp, V = p->schedule == PF_SCHED_INTERLEAVED ? p->vstages : 1;
  if (p->tp * p->cp * p->dp * P != sc->gpus || sc->gpus > G)
    return pf_error_set(PF_EINVAL, "full engine: the plan does not cover the job's GPUs");
  if (sc->gpus > PF_FULLSIM_MAX_GPUS)
    return pf_error_set(PF_EINVAL, "--engine full simulates every GPU and stops at %d GPUs (%d asked): SimGrid's "
                        "routing table for them grows as hosts squared (134 MB at 4,096); use the default engine",
                        PF_FULLSIM_MAX_GPUS, sc->gpus);
  long events = pf_fullsim_events(in); /* its cost known first: refused above the limit without --force */
  if (events > PF_FULLSIM_MAX_EVENTS && !sc->force)
    return pf_error_set(PF_EINVAL, "--engine full would simulate about %ld activities (%d GPUs x %d microbatches and "
                        "the collectives' flows), more than its limit of %d (about a minute on 2 cores, "
                        "docs/engine.md 6): use the default engine, or --force to run it anyway",
                        events, sc->gpus, p->grad_accum, PF_FULLSIM_MAX_EVENTS);
  memset(&F, 0, sizeof F);
  F.in = in;
  F.gpus = sc->gpus;
  F.P = P;
  F.V = V;
  if (pf_fullcalls_init(&F.fc, t, P) < 0) return pf_error_set(PF_ENOMEM, "out of memory");
  int rc = 0;
  for (int s = 0; s < P && rc == 0; s++) {
    if (pf_fullcalls_add(&F.fc, t, &in->grad[s], CALL_GRAD, s) < 0) rc = -1;
    if (in->ag && pf_fullcalls_add(&F.fc, t, &in->ag[s], CALL_AG, s) < 0) rc = -1;
    /* the routed experts' over their EDP groups, after the dense ones (dpsync.c) */
    if (in->xgrad && pf_fullcalls_add(&F.fc, t, &in->xgrad[s], CALL_GRAD, s) < 0) rc = -1;
    if (in->xag && pf_fullcalls_add(&F.fc, t, &in->xag[s], CALL_AG, s) < 0) rc = -1;
  }
  if (rc == 0 && pf_fullcalls_add(&F.fc, t, in->emb, CALL_EMB, P) < 0) rc = -1;
  /* the pairs that communicate, for the platform's routes */
  pairvec pv = {0};
  for (int g = 0; g < sc->gpus && rc == 0; g++) {
    int ct, cc, cd, s;
    pf_plan_coords(p, g, &ct, &cc, &cd, &s);
    int wrap = V > 1;
    if (s + 1 < P || (wrap && P > 1)) {
      int nx = pf_plan_rank(p, ct, cc, cd, (s + 1) % P);
      if (pv_add(&pv, g, nx) < 0 || pv_add(&pv, nx, g) < 0) rc = -1;
    }
  }
  for (int s = 0; s < P && rc == 0; s++)
    if (pv_add_pattern(&pv, &in->grad[s]) < 0 || (in->ag && pv_add_pattern(&pv, &in->ag[s]) < 0) ||
        (in->xgrad && pv_add_pattern(&pv, &in->xgrad[s]) < 0) || (in->xag && pv_add_pattern(&pv, &in->xag[s]) < 0))
      rc = -1;
  if (rc == 0 && pv_add_pattern(&pv, in->emb) < 0) rc = -1;
  if (rc < 0) {
    free(pv.v);
    pf_fullcalls_free(&F.fc);
    return pf_error_set(PF_ENOMEM, "out of memory preparing the full simulation");
  }
  qsort(pv.v, (size_t)pv.n, 2 * sizeof *pv.v, cmp_pair);
  long u = 0;
  for (long i = 0; i < pv.n; i++)
    if (u == 0 || pv.v[2 * i] != pv.v[2 * (u - 1)] || pv.v[2 * i + 1] != pv.v[2 * (u - 1) + 1]) {
      pv.v[2 * u] = pv.v[2 * i];
      pv.v[2 * u + 1] = pv.v[2 * i + 1];
      u++;
    }
  pv.n = u;

  char plat[PF_PATH_MAX];
  FILE *f;
  if ((rc = pf_temp_create("preflight-full", plat, sizeof plat, &f)) < 0) {
    free(pv.v);
    pf_fullcalls_free(&F.fc);
    return rc;
  }
  rc = pf_topology_write_xml(t, f, pv.v, pv.n, HOST_SPEED);
  if (fclose(f) != 0 && rc == 0) rc = pf_error_set(PF_EIO, "writing %s failed", plat);
  free(pv.v);
  if (rc < 0) { pf_temp_remove(plat); pf_fullcalls_free(&F.fc); return rc; }

  /* the simulation runs in a forked worker (workers.c): SimGrid's engine is global */
  full_job j = {in, plat, out, ""};
  pf_workers_spec spec = {.n = 1, .jobs = 1, .work = full_work, .collect = full_collect, .failed = full_failed,
                          .ctx = &j};
  rc = pf_workers_run(&spec);
  pf_temp_remove(plat);
  pf_fullcalls_free(&F.fc);
  memset(&F, 0, sizeof F);
  if (rc == 0 && j.why[0]) rc = pf_error_set(PF_ESIM, "the full SimGrid simulation failed (%s)", j.why);
  if (rc == 0 && out->stuck_actors > 0)
    rc = pf_error_set(PF_ESIM, "simulation engine failure: the full SimGrid simulation deadlocked: %d actors (GPUs, "
                      "in-network endpoints) never finished (each waits for a message, barrier or flow no actor "
                      "completes), so its times are not a result", out->stuck_actors);
  return rc;
}
