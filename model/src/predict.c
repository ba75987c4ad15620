/* predict.c - one prediction (see predict.h).
 *
 * iteration = pipeline (SimGrid DES of one representative pipeline, P2P
 *             links from the topology's routes with all replicas' flows)
 *           + data-parallel gradient sync: per stage a reduce-scatter (dist-opt)
 *             or all-reduce over its DP x CP groups, started when the DES says
 *             the stage's last backward ends (Megatron's finalize_model_grads
 *             without --overlap-grad-reduce), all stages' collectives sharing
 *             links while they overlap in time (pf_coll_timeline), then the
 *             tied-embedding all-reduce between first and last stage
 *           + a global sync (gradient norm / inf check), the optimizer step
 *             of each stage, and with the distributed optimizer the parameter
 *             all-gather of each stage (again sharing links in time)
 *           + the fitted per-step overhead.
 * With --overlap-grad-reduce (Megatron-LM's DDP buckets, see stage_buckets)
 * the gradient collectives are per bucket, each launched when the last
 * microbatch's backward has produced its gradients, and run while the rest of
 * the backward computes; with --overlap-param-gather the parameter all-gather
 * hides behind the next step's first forward of each stage.
 * Breakdown (per GPU on the critical stage): compute and tp_comm are the
 * stage's busy time; pp_comm is the DES makespan minus the same DES with free
 * P2P transfers; pp_bubble is the rest of the pipeline makespan;
 * dp_comm_exposed is everything between the pipeline's end and the end of
 * the iteration except the optimizer.
 *
 * Long pipelines are periodic once the schedule reaches steady state, so the
 * DES simulates two shorter runs (M1 and M1 + P microbatches) and extends the
 * makespan linearly to M; this is exact for a periodic steady state and keeps
 * GBS 1536 runs in milliseconds.  A trace simulates every microbatch.
 * `--engine full` replaces the pipeline and the collectives by one SimGrid
 * run of every GPU (fullsim.c) on the same topology and patterns.
 */
#include "preflight/predict.h"

#include "preflight/calibration.h"
#include "preflight/collective.h"
#include "preflight/compute.h"
#include "preflight/energy.h"
#include "preflight/error.h"
#include "preflight/fullsim.h"
#include "preflight/pipeline.h"
#include "preflight/topology.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void pf_prediction_warn(pf_prediction *p, const char *fmt, ...) {
  if (p->nwarnings >= PF_MAX_WARNINGS) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(p->warnings[p->nwarnings++], sizeof p->warnings[0], fmt, ap);
  va_end(ap);
}

/* Run the pipeline engine, extrapolating long steady-state runs. */
static int run_pipeline(pf_scenario *sc, const pf_stage_work *w, const pf_pipe_net *net, int want_trace,
                        pf_pipeline_result *r) {
  pf_plan *p = &sc->plan;
  int M = p->grad_accum, P = p->pp;
  int M1 = p->schedule == PF_SCHED_INTERLEAVED ? 3 * P : 2 * P + 2, M2 = M1 + P;
  if (P == 1 && !want_trace && sc->engine == PF_ENGINE_DES) {
    /* one stage has no pipeline to simulate: M (forward + backward) is exact */
    sc->engine = PF_ENGINE_ANALYTIC;
    int rc = pf_pipeline_run(sc, w, net, 0, r);
    sc->engine = PF_ENGINE_DES;
    return rc;
  }
  if (want_trace || sc->engine == PF_ENGINE_ANALYTIC || M <= M2 + P || P == 1)
    return pf_pipeline_run(sc, w, net, want_trace, r);
  pf_pipeline_result *r2 = malloc(sizeof *r2);
  if (!r2) return pf_error_set(PF_ENOMEM, "out of memory");
  p->grad_accum = M1;
  int rc = pf_pipeline_run(sc, w, net, 0, r);
  p->grad_accum = M2;
  if (rc == 0) rc = pf_pipeline_run(sc, w, net, 0, r2);
  p->grad_accum = M;
  if (rc == 0) {
    double k = (double)(M - M1) / (M2 - M1);
    r->makespan_s += k * (r2->makespan_s - r->makespan_s);
    for (int s = 0; s < P; s++) {
      r->stage_end_s[s] += k * (r2->stage_end_s[s] - r->stage_end_s[s]);
      r->stage_busy_s[s] += k * (r2->stage_busy_s[s] - r->stage_busy_s[s]);
      r->stage_first_bwd_s[s] += k * (r2->stage_first_bwd_s[s] - r->stage_first_bwd_s[s]);
    }
    r->events += r2->events;
  }
  free(r2);
  return rc;
}

/* ---------- --overlap-grad-reduce: Megatron-LM's gradient buckets ---------- */

typedef struct grad_bucket {
  double params;  /* parameters of one GPU in this bucket */
  double ready_s; /* when its reduction can start */
} grad_bucket;

/* Parameters per bucket.  Megatron-LM (training.py get_model /
 * core/distributed/distributed_data_parallel.py): --ddp-bucket-size, else
 * max(40e6, 1e6 x data-parallel size) "to ensure that chunks used in NCCL
 * ring-reduce implementations are large enough to remain bandwidth-bound";
 * we take the group the gradients are reduced over, DP x CP. */
static double bucket_size(const pf_plan *p) {
  return p->ddp_bucket_size > 0 ? p->ddp_bucket_size : fmax(40e6, 1e6 * p->dp * p->cp);
}

/* The gradient buckets of stage s in launch order.  Megatron-LM's DDP
 * (distributed_data_parallel.py, param_and_grad_buffer.py):
 *  - parameters are assigned to buckets in reverse definition order, i.e. the
 *    order the backward produces them; a bucket closes at bucket_size()
 *    parameters (modelled as exactly that many, the last one smaller);
 *  - "Turn off bucketing if we are on a pipeline stage that is not the first
 *    ... or ... for model chunks after the first in the interleaved
 *    schedule": only chunk 0 of stage 0 is split, every other chunk is one
 *    bucket, launched when that chunk's last backward ends;
 *  - a bucket's reduction starts when all its gradients are ready, during the
 *    LAST microbatch's backward (no_sync on the others).
 * Readiness inside a chunk's last backward [b0, b1]: transformer-layer
 * parameters become ready in proportion to the backward time elapsed (uniform
 * layers); the untied output layer on the last stage at b0 (first in the
 * backward), the input embedding on stage 0 at b1 (last).  The DES gives the
 * start of the stage's first last-microbatch backward (stage_first_bwd_s) and
 * the stage's end; with V interleaved chunks the V chunk backwards of the last
 * microbatch are spread evenly over that interval (the cool-down runs them
 * one per P backward slots), the last one ending at the stage's end. */
static int stage_buckets(const pf_scenario *sc, const pf_stage_work *w, const pf_pipeline_result *r, int s,
                         grad_bucket **out) {
  const pf_plan *p = &sc->plan;
  const pf_workload *wl = &sc->workload;
  int P = p->pp, V = p->schedule == PF_SCHED_INTERLEAVED ? p->vstages : 1;
  double B = bucket_size(p);
  double t_end = r->stage_end_s[s];
  double t0 = fmin(fmax(r->stage_first_bwd_s[s], 0.0), t_end);
  double tbc = (w[s].bwd_s + w[s].bwd_tp_s) / V; /* one chunk's backward of one microbatch */
  int tr = wl->kind == PF_WL_TRANSFORMER;
  double emb = tr && s == 0 ? pf_workload_embedding_params(wl, p->tp) / p->tp : 0;
  double outp = tr && s == P - 1 ? pf_workload_output_params(wl, p->tp) / p->tp : 0;
  double lay = fmax(0.0, w[s].params - emb - outp) / V;
  /* upper bound on the count: V chunks plus the split of chunk 0 of stage 0 */
  double split = s == 0 ? ceil((lay + emb + outp) / B) : 0;
  if (split > 10000)
    return pf_error_set(PF_EINVAL, "--ddp-bucket-size %.6g gives %.0f gradient buckets on stage 0; at most 10000 are "
                        "modelled", B, split);
  int cap = V + (int)split;
  grad_bucket *b = malloc((size_t)cap * sizeof *b);
  if (!b) return pf_error_set(PF_ENOMEM, "out of memory");
  int n = 0;
  for (int j = 0; j < V; j++) { /* backward order: chunk V-1 first */
    int c = V - 1 - j;
    double c0 = V > 1 ? t0 + j * fmax(0.0, t_end - tbc - t0) / (V - 1) : t0;
    double c1 = j == V - 1 ? t_end : fmin(c0 + tbc, t_end);
    double first = c == V - 1 ? outp : 0, last = c == 0 ? emb : 0, cp = first + lay + last;
    if (cp <= 0) continue;
    if (s != 0 || c != 0 || cp <= B) { b[n++] = (grad_bucket){cp, c1}; continue; }
    int nb = (int)ceil(cp / B * (1 - 1e-12));
    for (int k = 0; k < nb && n < cap; k++) {
      double cum = fmin(cp, (k + 1) * B);
      double f = lay > 0 ? fmin(1.0, fmax(0.0, (cum - first) / lay)) : 1.0;
      b[n++] = (grad_bucket){fmin(B, cp - k * B), k == nb - 1 ? c1 : c0 + f * (c1 - c0)};
    }
  }
  *out = b;
  return n;
}

/* Queue src after dst: the collectives of one stage run one after another on
 * its communicator (NCCL executes the calls of a stream in order).  Buckets
 * of one algorithm have the same phases (links, repetitions) with bytes in
 * proportion to their size; then the queue is kept as one collective of the
 * summed bytes and summed latency terms (alone it costs the sum of the
 * buckets' costs, exactly), so that under contention it shares links as the
 * whole-stage collective does: pf_coll_timeline advances all active phases in
 * lockstep, which would hold a small bucket back to the pace of a large
 * collective it meets on one link.  Other phases are appended (and later
 * buckets like them merged into them). */
static int same_tail(const pf_coll_job *a, const pf_coll_job *b) { /* a's last phases are b's */
  int off = a->nphase - b->nphase;
  if (off < 0 || b->nphase == 0) return 0;
  for (int i = 0; i < b->nphase; i++) {
    const pf_coll_phase *x = &a->ph[off + i], *y = &b->ph[i];
    if (x->reps != y->reps || x->n != y->n || memcmp(x->link, y->link, (size_t)x->n * sizeof *x->link) != 0)
      return 0;
  }
  return 1;
}

static int job_append(pf_coll_job *dst, const pf_coll_job *src) {
  if (same_tail(dst, src)) {
    int off = dst->nphase - src->nphase;
    for (int i = 0; i < src->nphase; i++) {
      pf_coll_phase *d = &dst->ph[off + i];
      d->lat_s += src->ph[i].lat_s;
      for (int k = 0; k < src->ph[i].n; k++) d->bytes[k] += src->ph[i].bytes[k];
    }
    dst->solo_s += src->solo_s;
    return 0;
  }
  pf_coll_phase *ph = realloc(dst->ph, (size_t)(dst->nphase + src->nphase + 1) * sizeof *ph);
  if (!ph) return pf_error_set(PF_ENOMEM, "out of memory");
  dst->ph = ph;
  for (int i = 0; i < src->nphase; i++) {
    const pf_coll_phase *a = &src->ph[i];
    pf_coll_phase *d = &dst->ph[dst->nphase];
    size_t n = (size_t)(a->n > 0 ? a->n : 1);
    *d = *a;
    d->link = malloc(n * sizeof *d->link);
    d->bytes = malloc(n * sizeof *d->bytes);
    if (!d->link || !d->bytes) {
      free(d->link);
      free(d->bytes);
      return pf_error_set(PF_ENOMEM, "out of memory");
    }
    memcpy(d->link, a->link, (size_t)a->n * sizeof *d->link);
    memcpy(d->bytes, a->bytes, (size_t)a->n * sizeof *d->bytes);
    dst->nphase++;
  }
  dst->solo_s += src->solo_s;
  return 0;
}

/* The collective job of one bucket (bytes per GPU) over the DP groups of a
 * stage, built once per distinct size.  All buckets of a stage use the
 * algorithm chosen for its whole gradient (as without overlap): NCCL's tuner
 * picks per call, but ring and tree are close at bucket sizes, and
 * pf_coll_timeline's lockstep sharing assumes collectives of one shape (it
 * adds the bytes per repetition of a 1-step tree to every one of a ring's
 * 2(p-1) repetitions). */
typedef struct job_cache {
  int n;
  double bytes[8];
  pf_coll_job job[8];
} job_cache;

static void job_cache_free(job_cache *c) {
  for (int i = 0; i < c->n; i++) pf_coll_job_free(&c->job[i]);
  c->n = 0;
}

static int bucket_job(const pf_topology *topo, pf_coll_kind kind, pf_coll_algo algo, double bytes, const int *groups,
                      int ngroups, int size, job_cache *c, const pf_coll_job **job) {
  for (int i = 0; i < c->n; i++)
    if (c->bytes[i] == bytes) { *job = &c->job[i]; return 0; }
  if (c->n == 8) job_cache_free(c); /* at most 4 sizes per stage in practice */
  pf_coll_pattern pat;
  int k = c->n, rc = pf_coll_pattern_build(topo, kind, algo, bytes, groups, ngroups, size, &pat);
  if (rc == 0) rc = pf_coll_job_build(topo, &pat, &c->job[k]);
  pf_coll_pattern_free(&pat);
  if (rc < 0) return rc;
  c->bytes[k] = bytes;
  c->n++;
  *job = &c->job[k];
  return 0;
}

/* Everything one prediction allocates, freed in one place. */
typedef struct work_set work_set;
static int overlapped_grad_sync(const pf_scenario *sc, const pf_topology *topo, const pf_stage_work *w,
                                const pf_pipeline_result *r, work_set *ws, pf_coll_kind kind, double grad_bytes,
                                double param_bytes, int has_ag);

typedef struct work_set {
  pf_stage_work *w, *w0;
  pf_pipeline_result *r, *r0;
  pf_pipe_net *net, *net0;
  pf_scenario *free_sc;
  pf_topology topo;
  pf_coll_pattern *grad, *ag, emb;
  pf_coll_job *gjob, *ajob, ejob;
  pf_coll_job **jp;
  double *t0, *t1;
  pf_iter_timeline *tl;
  pf_fullsim_result *full;
  int P;
  /* --overlap-grad-reduce: per stage its buckets, and the jobs of all stages' bucket groups */
  grad_bucket **bk;
  int *nbk;
  pf_coll_job *bjob;
  pf_coll_job **bjp;
  int nbjob;
  double *bt0, *bt1, *gbusy;
  int *bstage;
} work_set;

static void ws_free(work_set *ws) {
  if (ws->r) free(ws->r->trace);
  for (int s = 0; s < ws->P; s++) {
    if (ws->grad) pf_coll_pattern_free(&ws->grad[s]);
    if (ws->ag) pf_coll_pattern_free(&ws->ag[s]);
    if (ws->gjob) pf_coll_job_free(&ws->gjob[s]);
    if (ws->ajob) pf_coll_job_free(&ws->ajob[s]);
  }
  pf_coll_pattern_free(&ws->emb);
  pf_coll_job_free(&ws->ejob);
  free(ws->grad); free(ws->ag); free(ws->gjob); free(ws->ajob); free(ws->jp);
  free(ws->t0); free(ws->t1); free(ws->tl); free(ws->full);
  for (int s = 0; ws->bk && s < ws->P; s++) free(ws->bk[s]);
  for (int i = 0; i < ws->nbjob; i++) pf_coll_job_free(&ws->bjob[i]);
  free(ws->bk); free(ws->nbk); free(ws->bjob); free(ws->bjp); free(ws->bt0); free(ws->bt1); free(ws->bstage);
  free(ws->gbusy);
  free(ws->w); free(ws->w0); free(ws->r); free(ws->r0); free(ws->net); free(ws->net0); free(ws->free_sc);
  pf_topology_free(&ws->topo);
}

/* --overlap-grad-reduce: the buckets of each stage (stage_buckets) in runs
 * that execute back to back on the stage's communicator: a bucket ready
 * before the run so far would end (costed alone) joins it and starts when the
 * previous bucket ends; a bucket ready later starts a new run at its ready
 * time.  Each run is one job of pf_coll_timeline, so the runs of all stages
 * share links while they overlap in time (if contention makes a run end after
 * the next one's ready time, the two share the links for that tail instead of
 * queueing: the same bytes, one latency term fewer).  Fills ws->t0/t1 with each
 * stage's first start and last end and ws->gbusy with its time in collectives;
 * with the distributed optimizer the parameter all-gather becomes one
 * all-gather per bucket, back to back (Megatron's start_param_sync). */
static int overlapped_grad_sync(const pf_scenario *sc, const pf_topology *topo, const pf_stage_work *w,
                                const pf_pipeline_result *r, work_set *ws, pf_coll_kind kind, double grad_bytes,
                                double param_bytes, int has_ag) {
  int P = sc->plan.pp, total = 0, rc = 0;
  ws->bk = calloc((size_t)P, sizeof *ws->bk);
  ws->nbk = calloc((size_t)P, sizeof *ws->nbk);
  ws->gbusy = calloc((size_t)P, sizeof *ws->gbusy);
  if (!ws->bk || !ws->nbk || !ws->gbusy) return pf_error_set(PF_ENOMEM, "out of memory");
  for (int s = 0; s < P; s++) {
    int n = stage_buckets(sc, w, r, s, &ws->bk[s]);
    if (n < 0) return n;
    ws->nbk[s] = n;
    total += n;
  }
  size_t nt = (size_t)(total > 0 ? total : 1);
  ws->bjob = calloc(nt, sizeof *ws->bjob);
  ws->bjp = calloc(nt, sizeof *ws->bjp);
  ws->bt0 = calloc(nt, sizeof *ws->bt0);
  ws->bt1 = calloc(nt, sizeof *ws->bt1);
  ws->bstage = calloc(nt, sizeof *ws->bstage);
  if (!ws->bjob || !ws->bjp || !ws->bt0 || !ws->bt1 || !ws->bstage) return pf_error_set(PF_ENOMEM, "out of memory");
  job_cache cache;
  memset(&cache, 0, sizeof cache);
  for (int s = 0; s < P && rc == 0; s++) {
    int *G, ng, gp;
    if ((rc = pf_dp_groups(sc, s, &G, &ng, &gp)) < 0) break;
    double est_end = -INFINITY;
    for (int k = 0; k < ws->nbk[s] && rc == 0; k++) {
      const grad_bucket *b = &ws->bk[s][k];
      const pf_coll_job *j;
      if ((rc = bucket_job(topo, kind, ws->grad[s].algo, b->params * grad_bytes, G, ng, gp, &cache, &j)) < 0) break;
      if (b->ready_s > est_end) { /* a new run */
        int g = ws->nbjob++;
        ws->bstage[g] = s;
        ws->bt0[g] = est_end = b->ready_s;
      }
      rc = job_append(&ws->bjob[ws->nbjob - 1], j);
      est_end += j->solo_s;
    }
    job_cache_free(&cache);
    if (rc == 0 && has_ag) {
      pf_coll_job_free(&ws->ajob[s]);
      for (int k = 0; k < ws->nbk[s] && rc == 0; k++) {
        const pf_coll_job *j;
        rc = bucket_job(topo, PF_ALLGATHER, ws->ag[s].algo, ws->bk[s][k].params * param_bytes, G, ng, gp, &cache, &j);
        if (rc == 0) rc = job_append(&ws->ajob[s], j);
      }
      job_cache_free(&cache);
    }
    free(G);
  }
  if (rc < 0) return rc;
  for (int g = 0; g < ws->nbjob; g++) ws->bjp[g] = &ws->bjob[g];
  if ((rc = pf_coll_timeline(topo, ws->bjp, ws->nbjob, ws->bt0, ws->bt1)) < 0) return rc;
  for (int s = 0; s < P; s++) ws->t0[s] = ws->t1[s] = r->stage_end_s[s];
  for (int g = 0; g < ws->nbjob; g++) {
    int s = ws->bstage[g];
    ws->t0[s] = fmin(ws->t0[s], ws->bt0[g]);
    ws->t1[s] = fmax(ws->t1[s], ws->bt1[g]);
    ws->gbusy[s] += ws->bt1[g] - ws->bt0[g];
  }
  return 0;
}

int pf_predict(pf_scenario *sc, pf_prediction *out) {
  memset(out, 0, sizeof *out);
  int rc;
  if (sc->calibration[0]) {
    pf_calibration cal;
    if ((rc = pf_calibration_load(sc->calibration, &cal)) < 0) return rc;
    char why[1024];
    if (!pf_calibration_matches(&cal, &sc->machine, why, sizeof why)) {
      if (!sc->calibration_force)
        return pf_error_set(PF_EINVAL, "%s; --force-calibration applies it anyway", why);
      pf_prediction_warn(out, "%s (applied with --force-calibration)", why);
    }
    if ((rc = pf_calibration_apply(&cal, &sc->machine)) < 0) return rc;
    if (cal.has_fit) {
      if (cal.fit_compute_eff > 0) sc->compute_eff_scale = cal.fit_compute_eff;
      if (cal.fit_comm_eff > 0) sc->comm_eff_scale = cal.fit_comm_eff;
      sc->step_overhead_s = cal.fit_step_overhead_s;
    }
  }
  if ((rc = pf_plan_check(sc)) < 0) return rc;
  const pf_plan *p = &sc->plan;
  if (sc->engine == PF_ENGINE_FULL && (p->overlap_grad_reduce || p->overlap_param_gather))
    return pf_error_set(PF_EINVAL, "--engine full does not model --overlap-grad-reduce or --overlap-param-gather; "
                        "use the default engine (simgrid)");
  const pf_workload *wl = &sc->workload;
  const pf_machine *m = &sc->machine;

  pf_memory_estimate(sc, &out->memory);
  out->fits = out->memory.total_B <= out->memory.capacity_B;
  if ((rc = pf_memory_check(sc, &out->memory)) < 0) return rc;

  int P = p->pp, M = p->grad_accum, ngpu_dp = p->dp * p->cp;
  work_set ws;
  memset(&ws, 0, sizeof ws);
  ws.P = P;
  ws.w = calloc((size_t)P, sizeof *ws.w);
  ws.w0 = calloc((size_t)P, sizeof *ws.w0);
  ws.r = calloc(1, sizeof *ws.r);
  ws.r0 = calloc(1, sizeof *ws.r0);
  ws.net = calloc(1, sizeof *ws.net);
  ws.net0 = calloc(1, sizeof *ws.net0);
  ws.free_sc = malloc(sizeof *ws.free_sc);
  ws.grad = calloc((size_t)P, sizeof *ws.grad);
  ws.ag = calloc((size_t)P, sizeof *ws.ag);
  ws.gjob = calloc((size_t)P, sizeof *ws.gjob);
  ws.ajob = calloc((size_t)P, sizeof *ws.ajob);
  ws.jp = calloc((size_t)P, sizeof *ws.jp);
  ws.t0 = calloc((size_t)P, sizeof *ws.t0);
  ws.t1 = calloc((size_t)P, sizeof *ws.t1);
  ws.tl = calloc(1, sizeof *ws.tl);
  if (!ws.w || !ws.w0 || !ws.r || !ws.r0 || !ws.net || !ws.net0 || !ws.free_sc || !ws.grad || !ws.ag || !ws.gjob ||
      !ws.ajob || !ws.jp || !ws.t0 || !ws.t1 || !ws.tl) {
    ws_free(&ws);
    return pf_error_set(PF_ENOMEM, "out of memory");
  }
  pf_stage_work *w = ws.w;
  pf_pipeline_result *r = ws.r, *r0 = ws.r0;
  for (int s = 0; s < P; s++) {
    if (s > 1 && s < P - 1) { w[s] = w[1]; continue; } /* middle stages are identical */
    if ((rc = pf_stage_work_compute(sc, s, &w[s])) < 0) { ws_free(&ws); return rc; }
  }
  if ((rc = pf_topology_build(m, sc->nodes, sc->comm_eff_scale, &ws.topo)) < 0) { ws_free(&ws); return rc; }
  const pf_topology *topo = &ws.topo;

  /* the pipeline, and the same pipeline with free transfers (bubble vs P2P) */
  *ws.free_sc = *sc;
  ws.free_sc->trace[0] = '\0';
  ws.free_sc->free_p2p = true;
  if (ws.free_sc->engine == PF_ENGINE_FULL) ws.free_sc->engine = PF_ENGINE_DES;
  memcpy(ws.w0, w, (size_t)P * sizeof *w);
  for (int s = 0; s < P; s++) ws.w0[s].p2p_bytes = 0;
  pf_scenario *des_sc = sc;
  pf_engine eng = sc->engine;
  if (eng == PF_ENGINE_FULL) sc->engine = PF_ENGINE_DES; /* the representative pipeline is still needed */
  rc = pf_pipeline_net(sc, topo, ws.net);
  if (rc == 0) rc = pf_pipeline_net(ws.free_sc, topo, ws.net0);
  if (rc == 0) rc = run_pipeline(des_sc, w, ws.net, sc->trace[0] != '\0', r);
  if (rc == 0) rc = run_pipeline(ws.free_sc, ws.w0, ws.net0, 0, r0);
  sc->engine = eng;
  if (rc < 0) { ws_free(&ws); return rc; }

  /* collective patterns: gradients per stage, parameters per stage, tied embeddings */
  double grad_bytes_per_param = (sc->precision == PF_FP16) ? 2.0 : 4.0; /* bf16: fp32 grad reduction */
  double param_bytes = (sc->precision == PF_FP32 || sc->precision == PF_TF32) ? 4.0 : 2.0;
  pf_coll_kind kind = p->dist_opt ? PF_REDUCE_SCATTER : PF_ALLREDUCE;
  pf_coll_result info = {0};
  int has_ag = p->dist_opt && ngpu_dp > 1;
  for (int s = 0; s < P && rc == 0 && ngpu_dp > 1; s++) {
    pf_coll_result gi, ai;
    rc = pf_dp_collective_pattern(sc, topo, kind, w[s].params * grad_bytes_per_param, s, &ws.grad[s], &gi);
    if (s == 0) info = gi;
    if (rc == 0 && has_ag) rc = pf_dp_collective_pattern(sc, topo, PF_ALLGATHER, w[s].params * param_bytes, s, &ws.ag[s], &ai);
  }
  int has_emb = P > 1 && wl->kind == PF_WL_TRANSFORMER && wl->tied_embeddings;
  if (rc == 0 && has_emb) {
    int npairs = p->tp * p->cp * p->dp;
    int *pairs = malloc((size_t)2 * npairs * sizeof *pairs);
    if (!pairs) rc = pf_error_set(PF_ENOMEM, "out of memory");
    else {
      int k = 0;
      for (int d = 0; d < p->dp; d++)
        for (int c = 0; c < p->cp; c++)
          for (int t = 0; t < p->tp; t++, k++) {
            pairs[2 * k] = pf_plan_rank(p, t, c, d, 0);
            pairs[2 * k + 1] = pf_plan_rank(p, t, c, d, P - 1);
          }
      double bytes = pf_workload_embedding_params(wl, p->tp) / p->tp * grad_bytes_per_param;
      rc = pf_coll_pattern_build(topo, PF_ALLREDUCE, PF_COLL_RING, bytes, pairs, npairs, 2, &ws.emb);
      free(pairs);
    }
  }
  for (int s = 0; s < P && rc == 0; s++) {
    rc = pf_coll_job_build(topo, &ws.grad[s], &ws.gjob[s]);
    if (rc == 0) rc = pf_coll_job_build(topo, &ws.ag[s], &ws.ajob[s]);
  }
  if (rc == 0) rc = pf_coll_job_build(topo, &ws.emb, &ws.ejob);
  if (rc < 0) { ws_free(&ws); return rc; }

  /* gradient sync: each stage's collective starts when its backward ends (with --overlap-grad-reduce:
   * per bucket, when its gradients are ready), all share links in time */
  pf_iter_timeline *tl = ws.tl;
  tl->pp = P;
  int ovl = p->overlap_grad_reduce && ngpu_dp > 1;
  if (ovl) {
    rc = overlapped_grad_sync(sc, topo, w, r, &ws, kind, grad_bytes_per_param, param_bytes, has_ag);
  } else {
    for (int s = 0; s < P; s++) { ws.jp[s] = &ws.gjob[s]; ws.t0[s] = r->stage_end_s[s]; }
    rc = pf_coll_timeline(topo, ws.jp, P, ws.t0, ws.t1);
  }
  if (rc < 0) { ws_free(&ws); return rc; }
  double sync = 0, dp_max = 0, opt_max = 0;
  for (int s = 0; s < P; s++) {
    tl->grad_start_s[s] = ws.t0[s];
    tl->grad_end_s[s] = ws.t1[s];
    dp_max = fmax(dp_max, (ovl ? ws.gbusy[s] : ws.t1[s] - ws.t0[s]) +
                              (has_emb && (s == 0 || s == P - 1) ? ws.ejob.solo_s : 0));
  }
  if (has_emb) { /* after both ends' own gradient sync */
    tl->emb_start_s = fmax(tl->grad_end_s[0], tl->grad_end_s[P - 1]);
    tl->emb_end_s = tl->emb_start_s + ws.ejob.solo_s;
    sync = tl->emb_end_s;
  }
  for (int s = 0; s < P; s++) {
    sync = fmax(sync, tl->grad_end_s[s]);
    opt_max = fmax(opt_max, w[s].optimizer_s);
  }
  /* optimizer after the global gradient-norm sync, then the parameter all-gather */
  for (int s = 0; s < P; s++) {
    tl->opt_start_s[s] = sync;
    tl->opt_end_s[s] = sync + w[s].optimizer_s;
    ws.jp[s] = &ws.ajob[s];
    ws.t0[s] = tl->opt_end_s[s];
  }
  if ((rc = pf_coll_timeline(topo, ws.jp, P, ws.t0, ws.t1)) < 0) { ws_free(&ws); return rc; }
  double core_end = sync, ag_max = 0;
  int V = p->schedule == PF_SCHED_INTERLEAVED ? p->vstages : 1;
  for (int s = 0; s < P; s++) {
    tl->ag_start_s[s] = ws.t0[s];
    tl->ag_end_s[s] = ws.t1[s];
    if (p->overlap_param_gather) {
      /* Megatron-LM launches the all-gather in the next step's zero_grad and waits for it in the
       * forward pre-hooks; modelled as hidden behind the stage's first forward (chunk 0 of
       * microbatch 0): exposed = max(0, all-gather - that forward).  The exposed part stays at
       * the end of this step; the hidden part is drawn at the start of the trace. */
      double d = ws.t1[s] - ws.t0[s], hid = fmin(d, (w[s].fwd_s + w[s].fwd_tp_s) / V);
      tl->ag_hidden_s[s] = hid;
      tl->ag_end_s[s] = ws.t0[s] + (d - hid);
    }
    core_end = fmax(core_end, tl->ag_end_s[s]);
    ag_max = fmax(ag_max, ws.t1[s] - ws.t0[s]);
  }
  snprintf(tl->grad_name, sizeof tl->grad_name, "gradient %s (%s)%s", pf_coll_kind_name(kind),
           pf_coll_algo_name(info.algo), ovl ? ", overlapped" : "");
  snprintf(tl->ag_name, sizeof tl->ag_name, "parameter all-gather%s",
           p->overlap_param_gather ? ", exposed part" : "");

  /* critical stage: the one with the largest busy time */
  int crit = 0;
  for (int s = 1; s < P; s++)
    if (w[s].fwd_s + w[s].bwd_s + w[s].fwd_tp_s + w[s].bwd_tp_s >
        w[crit].fwd_s + w[crit].bwd_s + w[crit].fwd_tp_s + w[crit].bwd_tp_s) crit = s;
  double compute = M * (w[crit].fwd_s + w[crit].bwd_s);
  double tp = M * (w[crit].fwd_tp_s + w[crit].bwd_tp_s);
  double pp_comm = fmax(0.0, r->makespan_s - r0->makespan_s);
  double makespan = r->makespan_s;
  out->des_events = r->events + r0->events;
  snprintf(out->engine, sizeof out->engine, "%s",
           sc->engine == PF_ENGINE_ANALYTIC ? "analytic" : P == 1 && !sc->trace[0] ? "single-stage" : "simgrid");

  if (sc->engine == PF_ENGINE_FULL) {
    ws.full = calloc(1, sizeof *ws.full);
    if (!ws.full) { ws_free(&ws); return pf_error_set(PF_ENOMEM, "out of memory"); }
    pf_fullsim_input in = {sc, w, topo, ws.net, ws.grad, has_emb ? &ws.emb : NULL, has_ag ? ws.ag : NULL};
    if ((rc = pf_fullsim_run(&in, ws.full)) < 0) { ws_free(&ws); return rc; }
    makespan = ws.full->makespan_s;
    sync = ws.full->opt_start_s;
    core_end = ws.full->iteration_s;
    out->des_events = (int)fmin(ws.full->events, 2e9);
    snprintf(out->engine, sizeof out->engine, "full");
  }
  double bubble = fmax(0.0, makespan - pp_comm - compute - tp);
  double dp_exposed = fmax(0.0, sync - makespan) + fmax(0.0, core_end - sync - opt_max);

  out->iteration_time_s = core_end + sc->step_overhead_s;
  out->breakdown_s = (pf_breakdown){compute, tp, bubble, pp_comm, dp_exposed, opt_max, sc->step_overhead_s};
  out->pipeline_s = makespan;
  out->dp_comm_s = dp_max + ag_max;
  snprintf(out->dp_algorithm, sizeof out->dp_algorithm, "%s", ngpu_dp > 1 ? pf_coll_algo_name(info.algo) : "none");

  double t = out->iteration_time_s;
  out->samples_per_s = p->gbs / t;
  out->tokens_per_s = out->samples_per_s * pf_workload_tokens_per_sample(wl);
  out->model_flops_per_iter = p->gbs * pf_workload_model_flops_per_sample(wl, p->tp);
  out->tflops_per_gpu = out->model_flops_per_iter / (t * sc->gpus) / 1e12;
  double peak = pf_device_peak(&m->dev, sc->precision);
  /* fp32 convolutions run on TF32 tensor cores (cuDNN's default, as compute.c models): MFU against that */
  if (sc->precision == PF_FP32 && wl->kind != PF_WL_TRANSFORMER && m->dev.peak_flops[PF_TF32] > 0)
    peak = m->dev.peak_flops[PF_TF32];
  out->mfu = peak > 0 ? out->tflops_per_gpu * 1e12 / peak : 0;
  double hw = 0;
  for (int s = 0; s < P; s++) hw += M * (w[s].fwd_flops + w[s].bwd_flops);
  out->hw_tflops_per_gpu = hw / P / t / 1e12; /* per GPU: stages hold the same number of GPUs */

  /* energy: average GPU timeline over all stages */
  pf_gpu_timeline gt = {0};
  for (int s = 0; s < P; s++) {
    gt.gemm_s += M * w[s].gemm_s / P;
    gt.mem_s += M * (w[s].mem_s + w[s].launch_s) / P + w[s].optimizer_s / P;
    gt.comm_s += M * (w[s].fwd_tp_s + w[s].bwd_tp_s) / P;
  }
  gt.comm_s += dp_max + ag_max + pp_comm;
  pf_energy_compute(sc, &gt, t, &out->energy);

  rc = 0;
  if (sc->trace[0]) rc = pf_trace_write_timeline(sc, t, r, tl, sc->trace);
  if (p->grad_accum < P && P > 1)
    pf_prediction_warn(out, "only %d microbatches for %d pipeline stages: the bubble dominates", p->grad_accum, P);
  if (out->memory.total_B > 0.92 * out->memory.capacity_B)
    pf_prediction_warn(out, "memory per GPU is within 8 %% of capacity; fragmentation may cause OOM");
  ws_free(&ws);
  return rc;
}
