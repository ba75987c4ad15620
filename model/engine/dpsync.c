/* dpsync.c - the data-parallel synchronisation of an iteration in time (see
 * dpsync.h; formulas in docs/engine.md section 5).
 *
 * Without --overlap-grad-reduce each stage's gradient collective starts when
 * the DES says the stage's last backward ends (Megatron's
 * finalize_model_grads), all stages' collectives sharing links while they
 * overlap in time (pf_coll_timeline), then the tied-embedding all-reduce
 * between first and last stage; the gradient-norm / inf-check all-reduce
 * synchronises every GPU; each stage's optimizer step follows, and with the
 * distributed optimizer its parameter all-gather (again sharing links).
 * With --overlap-grad-reduce (Megatron-LM's DDP buckets, see stage_buckets)
 * the gradient collectives are per bucket, each launched when the last
 * microbatch's backward has produced its gradients, and run while the rest of
 * the backward computes; with --overlap-param-gather the parameter all-gather
 * hides behind the next step's first forward of each stage.  A collective
 * that runs under compute holds some of the GPU's compute units (comm.h
 * pf_comm_sm_share): the hidden time costs the compute it hides behind that
 * share (docs/communication.md 6).
 * At ZeRO-2 and ZeRO-3 the gradients were reduce-scattered unit by unit inside every backward (comm/fsdp.c,
 * priced with the stage's work): no gradient collective is left here; ZeRO-2 still all-gathers the updated
 * parameters after the step, over the shard groups (one node's ranks under HYBRID_SHARD); ZeRO-3 keeps them
 * sharded (the next forward gathers them unit by unit).
 * A mixture of experts keeps two gradient buffers (Megatron-Core's MoE parallel folding, arXiv 2504.14960;
 * megatron/core/distributed/distributed_data_parallel.py at NVIDIA/Megatron-LM d98e8a64: `buffers` over
 * intra_dp_cp_group, `expert_parallel_buffers` over intra_expt_dp_group): the dense parameters (attention, shared
 * experts, router, norms, embeddings) are reduced over DP x CP as above, the routed experts' (w->expert_params,
 * already sharded over EP x ETP) over the expert-data-parallel group, EDP = TP x CP x DP / (EP x ETP) ranks laid
 * as comm/epa2a.c lays them, each with its reduce-scatter and all-gather under the distributed optimizer.  Without
 * --overlap-grad-reduce the expert buffers follow the dense ones on the stage (finish_grad_sync walks
 * `bucket_groups + expert_parallel_bucket_groups` with synchronous calls); with it each buffer's buckets run on
 * their own communicator, the two at once, sharing links (pf_coll_timeline).
 */
#include "dpsync.h"

#include "core/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

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
/* Both buffers of a mixture of experts use this size (the DDP's one ddp_config.bucket_size, set from dp_group). */
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
/* part 0: the dense buffer (the stage's parameters less xp, the experts' when they are synchronised apart);
 * part 1: the routed experts' buffer (no embedding or output layer in it). */
static int stage_buckets(const pf_scenario *sc, const pf_stage_work *w, const pf_pipeline_result *r, int s,
                         int part, double xp, grad_bucket **out) {
  const pf_plan *p = &sc->plan;
  const pf_workload *wl = &sc->workload;
  int P = p->pp, V = p->schedule == PF_SCHED_INTERLEAVED ? p->vstages : 1;
  double B = bucket_size(p);
  double t_end = r->stage_end_s[s];
  double t0 = fmin(fmax(r->stage_first_bwd_s[s], 0.0), t_end);
  double tbc = (w[s].bwd_s + w[s].bwd_tp_s) / V; /* one chunk's backward of one microbatch */
  int tr = wl->kind == PF_WL_TRANSFORMER;
  double emb = tr && s == 0 && !part ? pf_workload_embedding_params(wl, p->tp) / p->tp : 0;
  double outp = tr && s == P - 1 && !part ? pf_workload_output_params(wl, p->tp) / p->tp : 0;
  double lay = (part ? w[s].expert_params : fmax(0.0, w[s].params - xp - emb - outp)) / V;
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

/* The collective job of one bucket (bytes per GPU) over the DP groups of a
 * stage comes from the communication module (pf_coll_job_like), built once
 * per distinct size, and the buckets of a stage queue on its communicator
 * (pf_coll_job_append).  All buckets of a stage use the algorithm chosen for
 * its whole gradient (as without overlap): NCCL's tuner picks per call, but
 * ring and tree are close at bucket sizes, and pf_coll_timeline's lockstep
 * sharing assumes collectives of one shape (it adds the bytes per repetition
 * of a 1-step tree to every one of a ring's 2(p-1) repetitions); the protocol
 * is the whole gradient's too. */

/* Working storage of one synchronisation, freed in one place. */
typedef struct dp_ws {
  int P, parts;                   /* parts: 2 with the experts' buffer (has_x), else 1 */
  pf_coll_job *gjob, *ajob, ejob;
  pf_coll_job **jp;
  double *t0, *t1;
  /* --overlap-grad-reduce: per stage and part (index s + P part) its buckets, and the jobs of all bucket runs */
  grad_bucket **bk;
  int *nbk;
  pf_coll_job *bjob;
  pf_coll_job **bjp;
  int nbjob;
  double *bt0, *bt1, *gbusy;
  int *bstage;
} dp_ws;

static void ws_free(dp_ws *ws) {
  for (int s = 0; s < ws->P; s++) {
    if (ws->gjob) pf_coll_job_free(&ws->gjob[s]);
    if (ws->ajob) pf_coll_job_free(&ws->ajob[s]);
  }
  pf_coll_job_free(&ws->ejob);
  for (int s = 0; ws->bk && s < ws->P * ws->parts; s++) free(ws->bk[s]);
  for (int i = 0; i < ws->nbjob; i++) pf_coll_job_free(&ws->bjob[i]);
  free(ws->gjob); free(ws->ajob); free(ws->jp); free(ws->t0); free(ws->t1);
  free(ws->bk); free(ws->nbk); free(ws->bjob); free(ws->bjp); free(ws->bt0); free(ws->bt1); free(ws->bstage);
  free(ws->gbusy);
}

void pf_dpsync_free(pf_dpsync *d, int pp) {
  for (int s = 0; s < pp; s++) {
    if (d->grad) pf_coll_pattern_free(&d->grad[s]);
    if (d->ag) pf_coll_pattern_free(&d->ag[s]);
    if (d->xgrad) pf_coll_pattern_free(&d->xgrad[s]);
    if (d->xag) pf_coll_pattern_free(&d->xag[s]);
  }
  pf_coll_pattern_free(&d->emb);
  free(d->grad);
  free(d->ag);
  free(d->xgrad);
  free(d->xag);
  d->grad = d->ag = d->xgrad = d->xag = NULL;
}

/* The bucket runs of one buffer (part) of stage s on its communicator (overlapped_grad_sync), and with the
 * distributed optimizer its per-bucket all-gathers appended to the stage's all-gather job. */
static int part_runs(const pf_scenario *sc, const pf_topology *topo, dp_ws *ws, const pf_dpsync *d, int s, int part,
                     double grad_bytes, double param_bytes) {
  int P = sc->plan.pp, *G, ng, gp, rc;
  const grad_bucket *bk = ws->bk[s + P * part];
  int nb = ws->nbk[s + P * part];
  const pf_coll_pattern *gl = part ? &d->xgrad[s] : &d->grad[s], *al = part ? &d->xag[s] : &d->ag[s];
  if ((rc = part ? pf_edp_groups(sc, s, &G, &ng, &gp) : pf_dp_groups(sc, s, &G, &ng, &gp)) < 0) return rc;
  pf_coll_job_cache cache;
  memset(&cache, 0, sizeof cache);
  double est_end = -INFINITY;
  for (int k = 0; k < nb && rc == 0; k++) {
    const pf_coll_job *j;
    if ((rc = pf_coll_job_like(topo, d->kind, gl, bk[k].params * grad_bytes, G, ng, gp, &cache, &j)) < 0) break;
    if (bk[k].ready_s > est_end) { /* a new run */
      int g = ws->nbjob++;
      ws->bstage[g] = s;
      ws->bt0[g] = est_end = bk[k].ready_s;
    }
    rc = pf_coll_job_append(&ws->bjob[ws->nbjob - 1], j);
    est_end += j->solo_s;
  }
  pf_coll_job_cache_free(&cache);
  if (rc == 0 && d->has_ag) {
    if (!part) pf_coll_job_free(&ws->ajob[s]);
    for (int k = 0; k < nb && rc == 0; k++) {
      const pf_coll_job *j;
      rc = pf_coll_job_like(topo, PF_ALLGATHER, al, bk[k].params * param_bytes, G, ng, gp, &cache, &j);
      if (rc == 0) rc = pf_coll_job_append(&ws->ajob[s], j);
    }
    pf_coll_job_cache_free(&cache);
  }
  free(G);
  return rc;
}

/* --overlap-grad-reduce: the buckets of each stage (stage_buckets) in runs
 * that execute back to back on the stage's communicator: a bucket ready
 * before the run so far would end (costed alone) joins it and starts when the
 * previous bucket ends; a bucket ready later starts a new run at its ready
 * time.  Each run is one job of pf_coll_timeline, so the runs of all stages
 * (and of a mixture of experts' two buffers, on their own communicators)
 * share links while they overlap in time (if contention makes a run end after
 * the next one's ready time, the two share the links for that tail instead of
 * queueing: the same bytes, one latency term fewer).  Fills ws->t0/t1 with each
 * stage's first start and last end and ws->gbusy with its time in collectives;
 * with the distributed optimizer the parameter all-gather becomes one
 * all-gather per bucket, back to back (Megatron's start_param_sync). */
static int overlapped_grad_sync(const pf_scenario *sc, const pf_topology *topo, const pf_stage_work *w,
                                const pf_pipeline_result *r, dp_ws *ws, const pf_dpsync *d, double grad_bytes,
                                double param_bytes) {
  int P = sc->plan.pp, NB = P * ws->parts, total = 0, rc = 0;
  ws->bk = calloc((size_t)NB, sizeof *ws->bk);
  ws->nbk = calloc((size_t)NB, sizeof *ws->nbk);
  ws->gbusy = calloc((size_t)P, sizeof *ws->gbusy);
  if (!ws->bk || !ws->nbk || !ws->gbusy) return pf_error_set(PF_ENOMEM, "out of memory");
  for (int i = 0; i < NB; i++) {
    int s = i % P, part = i / P;
    int n = stage_buckets(sc, w, r, s, part, d->split ? w[s].expert_params : 0, &ws->bk[i]);
    if (n < 0) return n;
    ws->nbk[i] = n;
    total += n;
  }
  size_t nt = (size_t)(total > 0 ? total : 1);
  ws->bjob = calloc(nt, sizeof *ws->bjob);
  ws->bjp = calloc(nt, sizeof *ws->bjp);
  ws->bt0 = calloc(nt, sizeof *ws->bt0);
  ws->bt1 = calloc(nt, sizeof *ws->bt1);
  ws->bstage = calloc(nt, sizeof *ws->bstage);
  if (!ws->bjob || !ws->bjp || !ws->bt0 || !ws->bt1 || !ws->bstage) return pf_error_set(PF_ENOMEM, "out of memory");
  for (int s = 0; s < P && rc == 0; s++)
    for (int part = 0; part < ws->parts && rc == 0; part++)
      rc = part_runs(sc, topo, ws, d, s, part, grad_bytes, param_bytes);
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

/* The routed experts' gradient (and with the distributed optimizer parameter) collectives of each stage over
 * its EDP groups, queued after the dense ones on the stage's jobs (header: finish_grad_sync's order). */
static int build_experts(const pf_comm *c, const pf_stage_work *w, dp_ws *ws, pf_dpsync *d, double gbytes,
                         double pbytes) {
  const pf_scenario *sc = c->sc;
  const pf_topology *topo = &c->topo;
  int P = sc->plan.pp, rc = 0;
  for (int s = 0; s < P && rc == 0; s++) {
    pf_coll_result gi, ai;
    pf_coll_job xg, xa;
    memset(&xg, 0, sizeof xg);
    memset(&xa, 0, sizeof xa);
    memset(&ai, 0, sizeof ai);
    double x = w[s].expert_params;
    rc = pf_edp_collective_pattern(c, d->kind, x * gbytes, s, &d->xgrad[s], &gi);
    if (rc == 0 && d->has_ag) rc = pf_edp_collective_pattern(c, PF_ALLGATHER, x * pbytes, s, &d->xag[s], &ai);
    if (rc == 0) rc = pf_coll_job_build(topo, &d->xgrad[s], &xg);
    if (rc == 0) rc = pf_coll_job_build(topo, &d->xag[s], &xa);
    if (rc == 0) rc = pf_coll_job_append(&ws->gjob[s], &xg);
    if (rc == 0) rc = pf_coll_job_append(&ws->ajob[s], &xa);
    d->expert_s = fmax(d->expert_s, xg.solo_s + xa.solo_s);
    d->fabric_bytes += (gi.fabric_bytes + ai.fabric_bytes) / P;
    d->nic_bytes += (gi.nic_bytes + ai.nic_bytes) / P;
    pf_coll_job_free(&xg);
    pf_coll_job_free(&xa);
  }
  return rc;
}

/* Patterns and jobs: gradients and parameters per stage (the dense ones over DP x CP, a mixture of experts'
 * routed experts over EDP), tied embeddings. */
static int build(const pf_comm *c, const pf_stage_work *w, dp_ws *ws, pf_dpsync *d, double gbytes, double pbytes) {
  const pf_scenario *sc = c->sc;
  const pf_plan *p = &sc->plan;
  const pf_workload *wl = &sc->workload;
  const pf_topology *topo = &c->topo;
  int P = p->pp, rc = 0, ndp = p->dp * p->cp;
  /* single-process DataParallel sums the replicas' gradients onto the first GPU and broadcasts the weights
   * from it: kernels of its step (compute/stepkernels.c), not a collective of one process per GPU */
  if (wl->dp_impl == PF_DPIMPL_DATAPARALLEL) ndp = 1;
  int z = pf_plan_zero(p);
  for (int s = 0; s < P && rc == 0 && ndp > 1; s++) {
    pf_coll_result gi, ai;
    memset(&gi, 0, sizeof gi);
    double dense = w[s].params - (d->split ? w[s].expert_params : 0);
    if (z < 2) rc = pf_dp_collective_pattern(c, d->kind, dense * gbytes, s, &d->grad[s], &gi);
    if (s == 0) d->info = gi;
    d->fabric_bytes += gi.fabric_bytes / P;
    d->nic_bytes += gi.nic_bytes / P;
    if (rc == 0 && d->has_ag) {
      rc = z >= 2 ? pf_shard_collective_pattern(sc, topo, PF_ALLGATHER, w[s].params * pbytes, s, &d->ag[s], &ai)
                  : pf_dp_collective_pattern(c, PF_ALLGATHER, dense * pbytes, s, &d->ag[s], &ai);
      if (s == 0 && z >= 2) d->info = ai;
      d->fabric_bytes += ai.fabric_bytes / P;
      d->nic_bytes += ai.nic_bytes / P;
    }
  }
  if (rc == 0 && d->has_emb) {
    pf_coll_result ei;
    rc = pf_comm_embedding(c, pf_workload_embedding_params(wl, p->tp) / p->tp * gbytes, &d->emb, &ei);
    d->fabric_bytes += 2.0 / P * ei.fabric_bytes;
    d->nic_bytes += 2.0 / P * ei.nic_bytes;
  }
  for (int s = 0; s < P && rc == 0; s++) {
    rc = pf_coll_job_build(topo, &d->grad[s], &ws->gjob[s]);
    if (rc == 0) rc = pf_coll_job_build(topo, &d->ag[s], &ws->ajob[s]);
  }
  if (rc == 0 && d->has_x) rc = build_experts(c, w, ws, d, gbytes, pbytes);
  if (rc == 0) rc = pf_coll_job_build(topo, &d->emb, &ws->ejob);
  return rc;
}

/* Gradient sync per stage (whole or in buckets), embeddings, the global sync. */
static int gradients(const pf_comm *c, const pf_stage_work *w, const pf_pipeline_result *r, dp_ws *ws, pf_dpsync *d,
                     pf_iter_timeline *tl, double gbytes, double pbytes) {
  const pf_plan *p = &c->sc->plan;
  int P = p->pp, rc;
  int ovl = p->overlap_grad_reduce && (p->dp * p->cp > 1 || d->has_x) && pf_plan_zero(p) < 2;
  if (ovl) {
    rc = overlapped_grad_sync(c->sc, &c->topo, w, r, ws, d, gbytes, pbytes);
  } else {
    for (int s = 0; s < P; s++) { ws->jp[s] = &ws->gjob[s]; ws->t0[s] = r->stage_end_s[s]; }
    rc = pf_coll_timeline(&c->topo, ws->jp, P, ws->t0, ws->t1);
  }
  if (rc < 0) return rc;
  double sync = 0, emb = d->has_emb ? ws->ejob.solo_s : 0;
  for (int s = 0; s < P; s++) {
    double busy = ovl ? ws->gbusy[s] : ws->t1[s] - ws->t0[s];
    d->dp_max_s = fmax(d->dp_max_s, busy + (s == 0 || s == P - 1 ? emb : 0));
    /* what ran before the stage's backward ended hid behind it, and slowed that backward (pf_predict adds it) */
    double hid = fmax(0.0, fmin(busy, r->stage_end_s[s] - ws->t0[s]));
    d->grad_hidden_s = fmax(d->grad_hidden_s, hid);
    d->interference_s = fmax(d->interference_s, hid * c->sm_share);
    tl->grad_start_s[s] = ws->t0[s];
    tl->grad_end_s[s] = ws->t1[s];
  }
  if (d->has_emb) { /* after both ends' own gradient sync */
    tl->emb_start_s = fmax(tl->grad_end_s[0], tl->grad_end_s[P - 1]);
    tl->emb_end_s = tl->emb_start_s + emb;
    sync = tl->emb_end_s;
  }
  for (int s = 0; s < P; s++) {
    sync = fmax(sync, tl->grad_end_s[s]);
    d->opt_max_s = fmax(d->opt_max_s, w[s].optimizer_s);
  }
  d->sync_s = sync;
  return 0;
}

/* Optimizer after the global gradient-norm sync, then the parameter all-gather. */
static int parameters(const pf_comm *c, const pf_stage_work *w, dp_ws *ws, pf_dpsync *d, pf_iter_timeline *tl) {
  const pf_plan *p = &c->sc->plan;
  int P = p->pp, rc;
  for (int s = 0; s < P; s++) {
    tl->opt_start_s[s] = d->sync_s;
    tl->opt_end_s[s] = d->sync_s + w[s].optimizer_s;
    ws->jp[s] = &ws->ajob[s];
    ws->t0[s] = tl->opt_end_s[s];
  }
  if ((rc = pf_coll_timeline(&c->topo, ws->jp, P, ws->t0, ws->t1)) < 0) return rc;
  double core_end = d->sync_s, hid_cost = 0;
  int V = p->schedule == PF_SCHED_INTERLEAVED ? p->vstages : 1;
  for (int s = 0; s < P; s++) {
    tl->ag_start_s[s] = ws->t0[s];
    tl->ag_end_s[s] = ws->t1[s];
    if (p->overlap_param_gather) {
      /* Megatron-LM launches the all-gather in the next step's zero_grad and waits for it in the
       * forward pre-hooks; modelled as hidden behind the stage's first forward (chunk 0 of
       * microbatch 0): exposed = max(0, all-gather - that forward); the forward is slowed by the
       * hidden part's share of the compute units (pf_predict adds it).  The exposed part stays at the
       * end of this step; the hidden part is drawn at the start of the trace. */
      double dur = ws->t1[s] - ws->t0[s], hid = fmin(dur, (w[s].fwd_s + w[s].fwd_tp_s) / V);
      tl->ag_hidden_s[s] = hid;
      tl->ag_end_s[s] = ws->t0[s] + (dur - hid);
      d->ag_hidden_s = fmax(d->ag_hidden_s, hid);
      hid_cost = fmax(hid_cost, hid * c->sm_share);
    }
    core_end = fmax(core_end, tl->ag_end_s[s]);
    d->ag_max_s = fmax(d->ag_max_s, ws->t1[s] - ws->t0[s]);
  }
  d->interference_s += hid_cost;
  d->core_end_s = core_end;
  return 0;
}

int pf_dpsync_run(const pf_comm *c, const pf_stage_work *w, const pf_pipeline_result *r, pf_iter_timeline *tl,
                  pf_dpsync *d) {
  const pf_scenario *sc = c->sc;
  const pf_plan *p = &sc->plan;
  const pf_workload *wl = &sc->workload;
  int P = p->pp, rc;
  memset(d, 0, sizeof *d);
  pf_stage_work *mw = NULL;
  if (p->schedule == PF_SCHED_DUALPIPE) {
    /* DualPipe: rank s holds stage s and stage P - 1 - s (engine/pipeline.c), so its gradients are both
     * stages' (the sum of the two copies across the mirror ranks, deepseek-ai/DualPipe
     * examples/example_dualpipe.py, is not priced apart) */
    if (!(mw = malloc((size_t)P * sizeof *mw))) return pf_error_set(PF_ENOMEM, "out of memory");
    memcpy(mw, w, (size_t)P * sizeof *mw);
    for (int s = 0; s < P; s++)
      mw[s].params = w[s].params + w[P - 1 - s].params,
      mw[s].expert_params = w[s].expert_params + w[P - 1 - s].expert_params;
    w = mw;
  }
  d->kind = p->dist_opt ? PF_REDUCE_SCATTER : PF_ALLREDUCE;
  d->has_ag = p->dist_opt && p->dp * p->cp > 1 && pf_plan_zero(p) < 3;
  d->has_emb = P > 1 && wl->kind == PF_WL_TRANSFORMER && wl->tied_embeddings;
  /* the routed experts apart (header): their gradients are not the dense buffer's, and at EDP > 1 they are
   * reduced over the EDP groups */
  double xp = 0;
  for (int s = 0; s < P; s++) xp += w[s].expert_params;
  d->split = xp > 0 && pf_plan_zero(p) < 2 && wl->dp_impl != PF_DPIMPL_DATAPARALLEL;
  d->has_x = d->split && pf_plan_edp(p) > 1;
  d->edp = d->split ? pf_plan_edp(p) : 0;
  d->grad = calloc((size_t)P, sizeof *d->grad);
  d->ag = calloc((size_t)P, sizeof *d->ag);
  d->xgrad = calloc((size_t)P, sizeof *d->xgrad);
  d->xag = calloc((size_t)P, sizeof *d->xag);
  dp_ws ws;
  memset(&ws, 0, sizeof ws);
  ws.P = P;
  ws.parts = d->has_x ? 2 : 1;
  ws.gjob = calloc((size_t)P, sizeof *ws.gjob);
  ws.ajob = calloc((size_t)P, sizeof *ws.ajob);
  ws.jp = calloc((size_t)P, sizeof *ws.jp);
  ws.t0 = calloc((size_t)P, sizeof *ws.t0);
  ws.t1 = calloc((size_t)P, sizeof *ws.t1);
  if (!d->grad || !d->ag || !d->xgrad || !d->xag || !ws.gjob || !ws.ajob || !ws.jp || !ws.t0 || !ws.t1) {
    ws_free(&ws);
    pf_dpsync_free(d, P);
    free(mw);
    return pf_error_set(PF_ENOMEM, "out of memory");
  }
  double gbytes = pf_grad_bytes(sc); /* fp16 in fp16, bf16 in fp32 unless --grad-reduce-in-bf16 (plan.h) */
  double pbytes = sc->precision == PF_FP32 || sc->precision == PF_TF32 ? 4.0 : 2.0;
  tl->pp = P;
  rc = build(c, w, &ws, d, gbytes, pbytes);
  if (rc == 0) rc = gradients(c, w, r, &ws, d, tl, gbytes, pbytes);
  if (rc == 0) rc = parameters(c, w, &ws, d, tl);
  ws_free(&ws);
  free(mw);
  if (rc < 0) { pf_dpsync_free(d, P); return rc; }
  snprintf(tl->grad_name, sizeof tl->grad_name, "gradient %s (%s, %s)%s", pf_coll_kind_name(d->kind),
           pf_coll_algo_name(d->info.algo), pf_coll_proto_name(d->info.proto),
           p->overlap_grad_reduce ? ", overlapped" : "");
  if (d->has_x) /* the experts' collectives follow on the same span (dense DP x CP, then EDP) */
    snprintf(tl->grad_name + strlen(tl->grad_name), sizeof tl->grad_name - strlen(tl->grad_name),
             " + experts over EDP %d", d->edp);
  snprintf(tl->ag_name, sizeof tl->ag_name, "parameter all-gather%s", p->overlap_param_gather ? ", exposed part" : "");
  return 0;
}
