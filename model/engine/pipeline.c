/* pipeline.c - the representative pipeline: SimGrid DES or closed form.
 *
 * DES: one SimGrid host and one actor per pipeline stage; each actor runs its
 * schedule (GPipe, 1F1B, or Megatron's interleaved 1F1B with V model chunks
 * per stage), executing forward/backward work as timed execs and sending
 * activations (forward) and their gradients (backward) to its neighbours over
 * a SPLITDUPLEX link per stage boundary: under 1F1B as Megatron's blocking
 * exchanges (pf_pipeline_blocking_p2p: the send of one operation and the
 * receive of the next are waited for together, a rendezvous with the
 * neighbour's matching exchange), otherwise as detached, eager transfers.  The
 * boundary's bandwidth and latency come from the topology (pf_pipeline_net):
 * the routes of all TP x CP x DP sends that cross it at once, each flow
 * getting its bottleneck link's capacity divided by the flows on that link;
 * without sequence parallelism the receiver then all-gathers the TP pieces
 * (Megatron's scatter-gather P2P).  Settings follow
 * shared/research/simgrid-notes.md: CM02 network
 * model (exact alpha-beta), cross-traffic off, TCP-gamma raised, quiet logs,
 * fire-and-forget sends, one mailbox per boundary and direction.
 *
 * SimGrid has one engine per process and cannot unload a platform, so each
 * run happens in a forked worker (workers.c) which writes the result to a pipe.
 *
 * The closed forms (engine "analytic", and DualPipe in every engine) are pipeform.c's.
 */
#include "pipeline.h"

#include "core/core.h"
#include "sgsetup.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <simgrid/actor.h>
#include <simgrid/comm.h>
#include <simgrid/engine.h>
#include <simgrid/host.h>
#include <simgrid/mailbox.h>

#define HOST_SPEED 1e9 /* flop/s of a stage host: an exec of t x 1e9 flops lasts t seconds */

/* ---------- schedules ---------- */

typedef pf_sched_op op;

/* Fill ops for stage s; returns count.  ops must hold 2 M V entries. */
int pf_pipeline_schedule(const pf_plan *p, int s, pf_sched_op *ops) {
  int P = p->pp, M = p->grad_accum, n = 0;
  if (p->schedule == PF_SCHED_GPIPE) {
    for (int i = 0; i < M; i++) ops[n++] = (op){'F', i, 0};
    for (int i = 0; i < M; i++) ops[n++] = (op){'B', i, 0};
    return n;
  }
  if (p->schedule == PF_SCHED_1F1B) {
    int warm = pf_plan_warmup_passes(p, s), f = 0, b = 0;
    if (warm > M) warm = M;
    for (int i = 0; i < warm; i++) ops[n++] = (op){'F', f++, 0};
    for (int i = 0; i < M - warm; i++) { ops[n++] = (op){'F', f++, 0}; ops[n++] = (op){'B', b++, 0}; }
    for (int i = 0; i < warm; i++) ops[n++] = (op){'B', b++, 0};
    return n;
  }
  /* Megatron interleaved 1F1B (schedules.py): forward k -> chunk (k / P) % V,
   * microbatch (k / (P V)) P + k % P; backward uses chunk V - 1 - (k / P) % V. */
  int V = p->vstages, total = M * V;
  int warm = pf_plan_warmup_passes(p, s);
  if (warm > total) warm = total;
  int f = 0, b = 0;
#define FWD_OP(k) (op){'F', ((k) / (P * V)) * P + (k) % P, ((k) / P) % V}
#define BWD_OP(k) (op){'B', ((k) / (P * V)) * P + (k) % P, V - 1 - ((k) / P) % V}
  for (int i = 0; i < warm; i++) { ops[n++] = FWD_OP(f); f++; }
  for (int i = 0; i < total - warm; i++) {
    ops[n++] = FWD_OP(f); f++;
    ops[n++] = BWD_OP(b); b++;
  }
  for (int i = 0; i < warm; i++) { ops[n++] = BWD_OP(b); b++; }
#undef FWD_OP
#undef BWD_OP
  return n;
}

/* ---------- the work of a chunk ---------- */

void pf_pipeline_chunk_times(const pf_scenario *sc, const pf_stage_work *w, int s, double *tf, double *tb) {
  const pf_plan *p = &sc->plan;
  int P = p->pp, V = p->schedule == PF_SCHED_INTERLEAVED ? p->vstages : 1;
  double f = w->fwd_s + w->fwd_tp_s, b = w->bwd_s + w->bwd_tp_s;
  if (!pf_plan_uneven(p) || V == 1) {
    for (int c = 0; c < V; c++) tf[c] = f / V, tb[c] = b / V;
    return;
  }
  pf_pp_layout l;
  int n = 0, ends = s == 0 ? 0 : V - 1; /* the chunk with the embedding (stage 0) or the loss (last stage) */
  bool has_ends = s == 0 || s == P - 1;
  pf_plan_layout(sc, &l);
  for (int c = 0; c < V; c++) n += l.layers[c * P + s];
  double lf = f - (has_ends ? w->ends_fwd_s : 0), lb = b - (has_ends ? w->ends_bwd_s : 0);
  for (int c = 0; c < V; c++) {
    double share = n > 0 ? (double)l.layers[c * P + s] / n : c == ends;
    tf[c] = share * lf + (has_ends && c == ends ? w->ends_fwd_s : 0);
    tb[c] = share * lb + (has_ends && c == ends ? w->ends_bwd_s : 0);
  }
}

bool pf_pipeline_blocking_p2p(const pf_plan *p) { return p->schedule == PF_SCHED_1F1B && p->pp > 1; }

/* ---------- SimGrid DES ---------- */

typedef struct {
  const pf_scenario *sc;
  const pf_stage_work *work;
  const pf_pipe_net *net;
  sg_mailbox_t *fwd_mb, *bwd_mb; /* per virtual stage: inbox for activations / gradients */
  pf_pipeline_result *res;
  pf_pipe_event *trace;
  int ntrace, captrace;
  int events;
} des_ctx;

static des_ctx G; /* SimGrid actors are plain functions; one simulation per (forked) process */
static int dummy_payload;

static void isend(sg_mailbox_t mb, double bytes) {
  sg_comm_t c = sg_mailbox_put_init(mb, &dummy_payload, (uint64_t)(bytes > 1 ? bytes : 1));
  sg_comm_detach(c, NULL);
  G.events++;
}

static void record(int s, int chunk, int mb, char kind, double t0, double t1) {
  if (!G.trace) return;
  if (G.ntrace == G.captrace) {
    int cap = G.captrace ? 2 * G.captrace : 4096;
    pf_pipe_event *t = realloc(G.trace, (size_t)cap * sizeof *t);
    if (!t) return;
    G.trace = t;
    G.captrace = cap;
  }
  G.trace[G.ntrace++] = (pf_pipe_event){(float)t0, (float)t1, (short)s, (short)chunk, mb, kind};
}

/* Send over boundary b (stage b -> b+1, or back); the trace shows the
 * transfer as it would run alone on the boundary's links. */
static void send_p2p(sg_mailbox_t mb, int s, int b, const op *o, char kind) {
  double bytes = G.work[s].p2p_bytes, t0 = simgrid_get_clock();
  isend(mb, bytes);
  if (G.trace) record(s, o->chunk, o->mb, kind, t0, t0 + pf_pipe_net_time(G.net, b, bytes));
}

/* Send over boundary b: eager and detached, or (blocking) a rendezvous left pending in *pend. */
static void stage_send(sg_mailbox_t mb, int s, int b, const op *o, char kind, sg_comm_t *pend) {
  if (!pend) { send_p2p(mb, s, b, o, kind); return; }
  double bytes = G.work[s].p2p_bytes, t0 = simgrid_get_clock();
  *pend = sg_mailbox_put_async(mb, &dummy_payload, (uint64_t)(bytes > 1 ? bytes : 1));
  G.events++;
  if (G.trace) record(s, o->chunk, o->mb, kind, t0, t0 + pf_pipe_net_time(G.net, b, bytes));
}

/* Wait for this operation's input: an eager receive, or the blocking exchange. */
static void stage_recv(sg_mailbox_t in, double recv, sg_comm_t *pend, bool blocking) {
  if (blocking) { pf_simgrid_exchange(pend, in, recv); return; }
  if (!in) return;
  sg_mailbox_get(in);
  if (recv > 0) sg_actor_sleep_for(recv);
}

static void stage_run(int argc, char **argv) {
  (void)argc;
  int s = (int)strtol(argv[1], NULL, 10);
  const pf_plan *p = &G.sc->plan;
  const pf_stage_work *w = &G.work[s];
  int P = p->pp, V = p->schedule == PF_SCHED_INTERLEAVED ? p->vstages : 1, last = P * V - 1;
  int nops_max = 2 * p->grad_accum * V;
  op *ops = malloc((size_t)nops_max * sizeof *ops);
  int n = pf_pipeline_schedule(p, s, ops);
  double tf[64], tb[64], recv = G.net->recv_s;
  pf_pipeline_chunk_times(G.sc, w, s, tf, tb);
  double busy = 0, first_last_bwd = -1;
  bool blocking = pf_pipeline_blocking_p2p(p);
  sg_comm_t pend = NULL, *pp = blocking ? &pend : NULL;
  /* eager transfers into our inboxes (blocking exchanges are rendezvous) */
  for (int c = 0; c < V && !blocking; c++) {
    sg_mailbox_set_receiver(sg_mailbox_get_name(G.fwd_mb[c * P + s]));
    sg_mailbox_set_receiver(sg_mailbox_get_name(G.bwd_mb[c * P + s]));
  }
  for (int i = 0; i < n; i++) {
    const op *o = &ops[i];
    int k = o->chunk * P + s; /* virtual stage */
    if (o->kind == 'F') {
      stage_recv(k > 0 ? G.fwd_mb[k] : NULL, recv, pp, blocking);
      double t0 = simgrid_get_clock();
      sg_actor_execute(tf[o->chunk] * HOST_SPEED);
      double t1 = simgrid_get_clock();
      busy += t1 - t0;
      record(s, o->chunk, o->mb, 'F', t0, t1);
      G.events++;
      if (k < last) stage_send(G.fwd_mb[k + 1], s, s, o, 'S', pp);
    } else {
      stage_recv(k < last ? G.bwd_mb[k] : NULL, recv, pp, blocking);
      double t0 = simgrid_get_clock();
      if (o->mb == p->grad_accum - 1 && first_last_bwd < 0) first_last_bwd = t0;
      sg_actor_execute(tb[o->chunk] * HOST_SPEED);
      double t1 = simgrid_get_clock();
      busy += t1 - t0;
      record(s, o->chunk, o->mb, 'B', t0, t1);
      G.events++;
      if (k > 0) stage_send(G.bwd_mb[k - 1], s, (s - 1 + P) % P, o, 'R', pp);
    }
  }
  /* the stage's gradients are ready when its last backward ends (bucket readiness, dpsync.c); its last send
   * still completes before the actor ends (stage 0, the last to finish, sends nothing then) */
  G.res->stage_busy_s[s] = busy;
  G.res->stage_end_s[s] = simgrid_get_clock();
  if (blocking) pf_simgrid_exchange(&pend, NULL, 0);
  G.res->stage_first_bwd_s[s] = first_last_bwd;
  free(ops);
}

static void stage_actor(int argc, char **argv) {
  stage_run(argc, argv);
  pf_simgrid_actor_done();
}

static int write_platform(const pf_scenario *sc, const pf_pipe_net *net, char *path, size_t n) {
  FILE *f;
  int rc = pf_temp_create("preflight-pipe", path, n, &f);
  if (rc < 0) return rc;
  int P = sc->plan.pp;
  int wrap = sc->plan.schedule == PF_SCHED_INTERLEAVED && P > 2; /* P = 2: the wrap is link 0 reversed */
  fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
             "<platform version=\"4.1\">\n<zone id=\"pipe\" routing=\"Full\">\n");
  for (int s = 0; s < P; s++) fprintf(f, "<host id=\"s%d\" speed=\"1Gf\"/>\n", s);
  int nlinks = P - 1 + wrap;
  for (int s = 0; s < nlinks; s++)
    fprintf(f, "<link id=\"l%d\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" sharing_policy=\"SPLITDUPLEX\"/>\n", s,
            net->bw_Bps[s], net->lat_s[s]);
  for (int s = 0; s < nlinks; s++) {
    int t = (s + 1) % P;
    if (t == s) continue;
    fprintf(f, "<route src=\"s%d\" dst=\"s%d\" symmetrical=\"NO\"><link_ctn id=\"l%d\" direction=\"UP\"/></route>\n",
            s, t, s);
    fprintf(f, "<route src=\"s%d\" dst=\"s%d\" symmetrical=\"NO\"><link_ctn id=\"l%d\" direction=\"DOWN\"/></route>\n",
            t, s, s);
  }
  fprintf(f, "</zone>\n</platform>\n");
  if (fclose(f) != 0) { pf_temp_remove(path); return pf_error_set(PF_EIO, "writing %s failed", path); }
  return 0;
}

/* Child: run the DES and write the result to fd. */
static void des_child(const pf_scenario *sc, const pf_stage_work *w, const pf_pipe_net *net, int want_trace, int fd) {
  char plat[PF_PATH_MAX];
  pf_pipeline_result *r = calloc(1, sizeof *r);
  if (!r || write_platform(sc, net, plat, sizeof plat) < 0) _exit(3);
  pf_simgrid_start(plat, 256);
  int P = sc->plan.pp, V = sc->plan.schedule == PF_SCHED_INTERLEAVED ? sc->plan.vstages : 1;
  G = (des_ctx){.sc = sc, .work = w, .net = net, .res = r};
  G.fwd_mb = calloc((size_t)P * V, sizeof *G.fwd_mb);
  G.bwd_mb = calloc((size_t)P * V, sizeof *G.bwd_mb);
  if (want_trace) {
    G.captrace = 4096;
    G.trace = malloc((size_t)G.captrace * sizeof *G.trace);
  }
  for (int k = 0; k < P * V; k++) {
    char nm[32];
    snprintf(nm, sizeof nm, "f%d", k);
    G.fwd_mb[k] = sg_mailbox_by_name(nm);
    snprintf(nm, sizeof nm, "b%d", k);
    G.bwd_mb[k] = sg_mailbox_by_name(nm);
  }
  for (int s = 0; s < P; s++) {
    char hn[32], sn[16], an[] = "stage";
    snprintf(hn, sizeof hn, "s%d", s);
    snprintf(sn, sizeof sn, "%d", s);
    char *av[] = {an, sn, NULL};
    sg_actor_create("stage", sg_host_by_name(hn), stage_actor, 2, av);
  }
  r->stuck_actors = pf_simgrid_run("pipeline", P);
  double mk = 0;
  for (int s = 0; s < P; s++) mk = fmax(mk, r->stage_end_s[s]);
  r->makespan_s = mk;
  r->events = G.events;
  r->ntrace = G.ntrace;
  r->trace = NULL;
  /* write the fixed part, then the trace events */
  if (pf_write_all(fd, r, sizeof *r) < 0 || pf_write_all(fd, G.trace, (size_t)G.ntrace * sizeof *G.trace) < 0) _exit(4);
  close(fd);
  _exit(0);
}

/* The DES runs in a forked worker (workers.c): SimGrid's engine is global. */
typedef struct {
  const pf_scenario *sc;
  const pf_stage_work *w;
  const pf_pipe_net *net;
  int want_trace;
  pf_pipeline_result *r;
  char why[160]; /* set when the worker failed */
} des_job;

static int des_work(void *ctx, int i, int fd) {
  const des_job *j = ctx;
  (void)i;
  des_child(j->sc, j->w, j->net, j->want_trace, fd); /* exits */
  return 1;
}

static int des_collect(void *ctx, int i, int fd) {
  des_job *j = ctx;
  pf_pipeline_result *r = j->r;
  (void)i;
  int rc = pf_read_all(fd, r, sizeof *r);
  r->trace = NULL;
  if (rc == 0 && r->ntrace > 0) {
    r->trace = malloc((size_t)r->ntrace * sizeof *r->trace);
    if (!r->trace || pf_read_all(fd, r->trace, (size_t)r->ntrace * sizeof *r->trace) != 0) rc = -1;
  }
  return rc;
}

static void des_failed(void *ctx, int i, const char *why) {
  des_job *j = ctx;
  (void)i;
  snprintf(j->why, sizeof j->why, "%s", why);
}

static int run_des(const pf_scenario *sc, const pf_stage_work *w, const pf_pipe_net *net, int want_trace,
                   pf_pipeline_result *r) {
  des_job j = {sc, w, net, want_trace, r, ""};
  pf_workers_spec spec = {.n = 1, .jobs = 1, .work = des_work, .collect = des_collect, .failed = des_failed, .ctx = &j};
  int rc = pf_workers_run(&spec);
  if (rc == 0 && j.why[0]) rc = pf_error_set(PF_ESIM, "the SimGrid pipeline simulation failed (%s)", j.why);
  if (rc == 0 && r->stuck_actors > 0)
    rc = pf_error_set(PF_ESIM, "simulation engine failure: the SimGrid pipeline simulation deadlocked: %d of %d "
                      "stages never finished (each waits for a message no stage sends), so its times are not a "
                      "result", r->stuck_actors, sc->plan.pp);
  if (rc < 0) {
    free(r->trace);
    r->trace = NULL;
  }
  return rc;
}

int pf_pipeline_run(const pf_scenario *sc, const pf_stage_work *work, const pf_pipe_net *net, int want_trace,
                    pf_pipeline_result *r) {
  memset(r, 0, sizeof *r);
  if (sc->plan.pp > PF_MAXSTAGE) return pf_error_set(PF_EPLAN, "at most %d pipeline stages", PF_MAXSTAGE);
  if (sc->engine == PF_ENGINE_ANALYTIC || sc->plan.schedule == PF_SCHED_DUALPIPE) { /* DualPipe: closed form */
    pf_pipeline_closed_form(sc, work, net, r);
    return 0;
  }
  return run_des(sc, work, net, want_trace, r);
}

void pf_trace_free(pf_trace *t) {
  free(t->events);
  t->events = NULL;
  t->nevents = 0;
}
