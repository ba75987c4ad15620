/* tunebound.c - a lower bound of a plan's screening (tune_int.h), from its stages' compute alone: tune prices
 * with the closed-form engine only the plans whose bound can still reach the 2 x top best (tune.c). */
#include "tune_int.h"

#include "comm/comm.h"
#include "compute/compute.h"
#include "core/core.h"
#include "engine/engine.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The plan's shape: the settings that change neither a stage's kernels nor its TP, CP and EP collectives
 * cleared (the optimizer's sharding and the DP overlap flags: compute.c and comm.c read none of them for the
 * forward and backward). */
static void shape_of(const pf_plan *p, pf_plan *k) {
  memcpy(k, p, sizeof *k);
  k->dist_opt = false, k->overlap_grad_reduce = false, k->overlap_param_gather = false;
  k->zero = 0, k->shard_group = PF_SHARD_ALL;
  k->given = 0, k->practice = 0;
}

/* 1F1B and GPipe: (M - 1) max_s t_s + sum_s t_s, the closed-form makespan (engine/pipeform.c) with the hops left
 * out and t_s bounded below: every stage's compute c_s (compute.c; the middle stages of equal layers priced once,
 * as predict.c's stage_work does), and on the stage r of the most compute its exposed TP, CP and EP collectives
 * too (comm.c, epa2a.c; the ZeRO-3 per-unit collectives, which comm/fsdp.c adds, left out): the other stages'
 * collectives, >= 0, are left out (pricing them costs as much as pricing the plan; r's set the M-fold term).
 * The interleaved schedule is a list schedule there, which may end below its formula with uneven chunks, so its
 * bound is what any schedule must take: stage r's M microbatches, M t_r, after the first microbatch's chunk-0
 * forward has crossed the stages before r and before the last one's chunk-0 backward crosses them back, the
 * chunk-0 work of those stages (fill0). */
static int pipeline_bound(pf_tune_lb *b, pf_tune_lb_shape *e, const pf_scenario *sc) {
  pf_stage_work *w = e->w;
  int P = sc->plan.pp, rc, V = sc->plan.schedule == PF_SCHED_INTERLEAVED ? sc->plan.vstages : 1;
  double sum = 0, mid = -1, cr = -1, c0[PF_MAXSTAGE], tf[64], tb[64];
  pf_stage_work *w1 = V > 1 ? malloc(sizeof *w1) : NULL; /* stage 1's work, for the middle stages' chunks */
  if (V > 1 && !w1) return pf_error_set(PF_ENOMEM, "out of memory");
  int r = 0;
  for (int s = 0; s < P; s++) {
    double c;
    const pf_stage_work *ws = w;
    if (s > 1 && s < P - 1 && mid >= 0 && pf_plan_stage_layers(sc, s) == pf_plan_stage_layers(sc, 1)) {
      c = mid;
      ws = w1;
    } else {
      if ((rc = pf_stage_work_at(sc, 0, s, w)) < 0) { free(w1); return rc; }
      c = w->fwd_s + w->bwd_s;
      if (s == 1) mid = c;
      if (s == 1 && w1) *w1 = *w;
    }
    c0[s] = 0;
    if (V > 1) { /* its chunk 0, the stage's own split of its layers (pf_pipeline_chunk_times), compute only */
      pf_stage_work k = *ws;
      k.fwd_tp_s = k.bwd_tp_s = 0;
      pf_pipeline_chunk_times(sc, &k, s, tf, tb);
      c0[s] = tf[0] + tb[0];
    }
    sum += c;
    if (c > cr) cr = c, r = s;
  }
  free(w1);
  e->fill0 = 0;
  for (int s = 0; s < r; s++) e->fill0 += c0[s];
  b->comm->sc = sc;
  memset(b->stage_comm, 0, sizeof *b->stage_comm);
  if ((rc = pf_stage_work_at(sc, 0, r, w)) < 0 || (rc = pf_comm_stage_ep(b->comm, r, w, b->stage_comm)) < 0) return rc;
  e->sum = sum, e->cr = cr, e->r = r; /* w stays stage r's, its all-to-alls in fwd_tp_s / bwd_tp_s */
  e->tr = w->fwd_s + w->bwd_s + w->fwd_tp_s + w->bwd_tp_s;
  return 0;
}

/* ZeRO-2/3: the critical stage's exposed per-unit collectives (comm/fsdp.c adds them to the stage's
 * fwd_tp_s / bwd_tp_s), kept for the last sharding level and group of the shape. */
static int fsdp_add(pf_tune_lb *b, pf_tune_lb_shape *e, const pf_scenario *sc, double *add) {
  const pf_plan *p = &sc->plan;
  int key = 1 + 4 * pf_plan_zero(p) + (int)p->shard_group;
  if (e->zkey == key) { *add = e->zadd; return 0; }
  pf_stage_work *w = e->w;
  double f0 = w->fwd_tp_s, b0 = w->bwd_tp_s;
  pf_fsdp_cost fc;
  b->comm->sc = sc;
  int rc = pf_comm_fsdp(b->comm, e->r, w, &fc);
  *add = rc < 0 ? 0 : (w->fwd_tp_s - f0) + (w->bwd_tp_s - b0);
  w->fwd_tp_s = f0, w->bwd_tp_s = b0;
  if (rc == 0) e->zkey = key, e->zadd = *add;
  return rc;
}

/* The entry of sc's shape: the one that holds it, else the one used less recently, bounded anew. */
static int shape_entry(pf_tune_lb *b, const pf_scenario *sc, pf_tune_lb_shape **out) {
  pf_plan *k = malloc(sizeof *k);
  *out = &b->e[b->last];
  if (!k) return pf_error_set(PF_ENOMEM, "out of memory");
  shape_of(&sc->plan, k);
  int i = 0, rc = 0;
  while (i < PF_TUNE_LB_WAYS && !(b->e[i].has && !memcmp(k, &b->e[i].key, sizeof *k))) i++;
  if (i == PF_TUNE_LB_WAYS) {
    i = (b->last + 1) % PF_TUNE_LB_WAYS;
    pf_tune_lb_shape *e = &b->e[i];
    if (!e->w && !(e->w = malloc(sizeof *e->w))) rc = pf_error_set(PF_ENOMEM, "out of memory");
    if (rc == 0) rc = pipeline_bound(b, e, sc);
    e->has = rc == 0;
    e->key = *k;
    e->zkey = 0;
  }
  free(k);
  b->last = i;
  *out = &b->e[i];
  return rc;
}

int pf_tune_lb_time(pf_tune_lb *b, const pf_scenario *sc, double *t_s) {
  /* DualPipe's rank runs the mean of its two stages (predict.c), below the slowest stage this bound takes: no
   * compute bound for it, so a pinned --schedule dualpipe is priced, never bounded out */
  if (sc->plan.schedule == PF_SCHED_DUALPIPE) {
    *t_s = fmax(sc->step_overhead_s, pf_input_time(sc));
    return 0;
  }
  if (!b->stage_comm && !(b->stage_comm = malloc(sizeof *b->stage_comm))) return pf_error_set(PF_ENOMEM, "out of memory");
  if (!b->comm) { /* the topology: the machine's, the same for every plan */
    if (!(b->comm = malloc(sizeof *b->comm))) return pf_error_set(PF_ENOMEM, "out of memory");
    int rc = pf_comm_init(sc, b->comm);
    if (rc < 0) { free(b->comm); b->comm = NULL; return rc; }
  }
  pf_tune_lb_shape *e = NULL;
  int rc = shape_entry(b, sc, &e);
  double tr = e->tr, add = 0;
  if (rc == 0 && pf_plan_zero(&sc->plan) >= 2) rc = fsdp_add(b, e, sc, &add);
  if (rc < 0) return rc;
  tr += add;
  const pf_plan *p = &sc->plan;
  int M = p->grad_accum, V = p->schedule == PF_SCHED_INTERLEAVED && p->vstages > 1 ? p->vstages : 1;
  double pipe = V > 1 ? M * tr + e->fill0 : (M - 1.0) * tr + (e->sum - e->cr + tr);
  /* the iteration: the pipeline, then the DP sync and the optimizer (>= 0), the fitted overhead; never shorter
   * than the input pipeline's time per iteration (predict.c) */
  *t_s = fmax(pipe + sc->step_overhead_s, pf_input_time(sc));
  return 0;
}

double pf_tune_lb_score(const pf_scenario *sc, double t_s, pf_objective o) {
  return pf_tune_score_of(sc, t_s, 0, o); /* energy >= 0: the bound of energy and action is 0 */
}

void pf_tune_lb_free(pf_tune_lb *b) {
  if (b->comm) pf_comm_free(b->comm);
  free(b->comm);
  free(b->stage_comm);
  for (int i = 0; i < PF_TUNE_LB_WAYS; i++) free(b->e[i].w);
  memset(b, 0, sizeof *b);
}

/* ---- the bound pass over workers ---- */

/* What one worker sends back: its counts, closest plan and EP 1's keep, then its entries. */
typedef struct {
  long enumerated, pruned, nent, tight_at;
  bool has_tight;
  pf_plan tight;
  pf_memory tight_m;
  pf_tune_ep1 ep1;
} part_head;

typedef struct {
  pf_tune_search *s;
  part_head *head;     /* per worker */
  pf_tune_ent **ent;   /* per worker */
  int failed;
} parts;

static int part_work(void *ctx, int i, int fd) {
  parts *ps = ctx;
  pf_tune_search *s = ps->s;
  s->part = i;
  memset(&s->out->ep1, 0, sizeof s->out->ep1);
  int rc = pf_tune_pass(s, PF_TUNE_PASS_BOUND);
  if (rc < 0) return 1;
  part_head h = {s->enumerated, s->pruned, s->nent, s->tight_at, s->has_tight, s->tight, s->tight_m, s->out->ep1};
  if (pf_write_all(fd, &h, sizeof h) < 0) return 1;
  return s->nent > 0 && pf_write_all(fd, s->ent, (size_t)s->nent * sizeof *s->ent) < 0;
}

static int part_collect(void *ctx, int i, int fd) {
  parts *ps = ctx;
  if (pf_read_all(fd, &ps->head[i], sizeof ps->head[i]) < 0) return 1;
  long n = ps->head[i].nent;
  if (n < 0 || !(ps->ent[i] = malloc((size_t)(n ? n : 1) * sizeof **ps->ent))) return 1;
  return n > 0 && pf_read_all(fd, ps->ent[i], (size_t)n * sizeof **ps->ent) < 0;
}

static void part_failed(void *ctx, int i, const char *why) {
  (void)i, (void)why;
  ((parts *)ctx)->failed = 1;
}

/* Join the workers' results in worker order (the entries are sorted by bound and position later, the closest
 * plan is the least memory then the first position, EP 1's keep is order-free): what one pass gives. */
static int join(pf_tune_search *s, parts *ps, int J) {
  long n = 0;
  for (int i = 0; i < J; i++) n += ps->head[i].nent;
  free(s->ent);
  s->ent = malloc((size_t)(n ? n : 1) * sizeof *s->ent);
  if (!s->ent) return pf_error_set(PF_ENOMEM, "out of memory");
  s->nent = s->capent = 0;
  s->pruned = 0;
  s->has_tight = false;
  memset(&s->out->ep1, 0, sizeof s->out->ep1);
  for (int i = 0; i < J; i++) {
    const part_head *h = &ps->head[i];
    memcpy(s->ent + s->nent, ps->ent[i], (size_t)h->nent * sizeof *s->ent);
    s->nent += h->nent;
    s->pruned += h->pruned;
    s->enumerated = h->enumerated;
    if (h->has_tight && (!s->has_tight || h->tight_m.total_B < s->tight_m.total_B ||
                         (h->tight_m.total_B == s->tight_m.total_B && h->tight_at < s->tight_at)))
      s->has_tight = true, s->tight = h->tight, s->tight_m = h->tight_m, s->tight_at = h->tight_at;
    pf_tune_ep1_join(&s->out->ep1, &h->ep1);
  }
  s->capent = n;
  return 0;
}

int pf_tune_bound_pass(pf_tune_search *s) {
  int J = s->o->jobs > 0 ? s->o->jobs : pf_workers_default_jobs();
  if (J <= 1) return pf_tune_pass(s, PF_TUNE_PASS_BOUND);
  if (J > 8) J = 8; /* the shapes split over a few workers; each pays its own memos' misses */
  parts ps = {s, calloc((size_t)J, sizeof *ps.head), calloc((size_t)J, sizeof *ps.ent), 0};
  int rc = ps.head && ps.ent ? 0 : pf_error_set(PF_ENOMEM, "out of memory");
  s->nparts = J;
  pf_workers_spec w = {.n = J, .jobs = J, .work = part_work, .collect = part_collect, .failed = part_failed, .ctx = &ps};
  if (rc == 0) rc = pf_workers_run(&w);
  s->nparts = 1;
  s->part = 0;
  if (rc == 0 && ps.failed) rc = pf_error_set(PF_ESIM, "tune: a worker of the bound pass failed");
  if (rc == 0) rc = join(s, &ps, J);
  for (int i = 0; ps.ent && i < J; i++) free(ps.ent[i]);
  free(ps.head);
  free(ps.ent);
  return rc;
}
