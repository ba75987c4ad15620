/* tunebound.c - a lower bound of a plan's screening (tune_int.h), from its stages' compute alone: tune prices
 * with the closed-form engine only the plans whose bound can still reach the 2 x top best (tune.c). */
#include "tune_int.h"

#include "comm/comm.h"
#include "compute/compute.h"
#include "core/core.h"

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

/* (M - 1/V) max_s t_s + sum_s t_s / V: the closed-form makespan (engine/pipeline.c run_analytic) with the hops
 * left out and t_s bounded below: every stage's compute c_s (compute.c; the middle stages of equal layers
 * priced once, as predict.c's stage_work does), and on the stage r of the most compute its exposed TP, CP and EP
 * collectives too (comm.c, epa2a.c; the ZeRO-3 per-unit collectives, which comm/fsdp.c adds, left out): the
 * other stages' collectives, >= 0, are left out (pricing them costs as much as pricing the plan; r's set the
 * M-fold term, (M - 1/V) max_s t_s >= (M - 1/V) t_r). */
static int pipeline_bound(pf_tune_lb *b, const pf_scenario *sc, double *t_s) {
  pf_stage_work *w = b->w;
  const pf_plan *p = &sc->plan;
  int P = p->pp, M = p->grad_accum, V = p->schedule == PF_SCHED_INTERLEAVED && p->vstages > 1 ? p->vstages : 1;
  double sum = 0, mid = -1, cr = -1;
  int r = 0, rc;
  for (int s = 0; s < P; s++) {
    double c;
    if (s > 1 && s < P - 1 && mid >= 0 && pf_plan_stage_layers(sc, s) == pf_plan_stage_layers(sc, 1)) {
      c = mid;
    } else {
      if ((rc = pf_stage_work_at(sc, 0, s, w)) < 0) return rc;
      c = w->fwd_s + w->bwd_s;
      if (s == 1) mid = c;
    }
    sum += c;
    if (c > cr) cr = c, r = s;
  }
  b->comm->sc = sc;
  memset(b->stage_comm, 0, sizeof *b->stage_comm);
  if ((rc = pf_stage_work_at(sc, 0, r, w)) < 0 || (rc = pf_comm_stage_ep(b->comm, r, w, b->stage_comm)) < 0) return rc;
  double tr = w->fwd_s + w->bwd_s + w->fwd_tp_s + w->bwd_tp_s;
  *t_s = (M - 1.0 / V) * tr + (sum - cr + tr) / V;
  return 0;
}

int pf_tune_lb_time(pf_tune_lb *b, const pf_scenario *sc, double *t_s) {
  if (!b->w && !(b->w = malloc(sizeof *b->w))) return pf_error_set(PF_ENOMEM, "out of memory");
  if (!b->stage_comm && !(b->stage_comm = malloc(sizeof *b->stage_comm))) return pf_error_set(PF_ENOMEM, "out of memory");
  if (!b->comm) { /* the topology: the machine's, the same for every plan */
    if (!(b->comm = malloc(sizeof *b->comm))) return pf_error_set(PF_ENOMEM, "out of memory");
    int rc = pf_comm_init(sc, b->comm);
    if (rc < 0) { free(b->comm); b->comm = NULL; return rc; }
  }
  pf_plan *k = malloc(sizeof *k);
  if (!k) return pf_error_set(PF_ENOMEM, "out of memory");
  shape_of(&sc->plan, k);
  int rc = 0;
  if (!b->has || memcmp(k, &b->key, sizeof *k)) {
    double pipe = 0;
    rc = pipeline_bound(b, sc, &pipe);
    b->has = rc == 0;
    b->key = *k;
    /* the iteration: the pipeline, then the DP sync and the optimizer (>= 0), the fitted overhead; never shorter
     * than the input pipeline's time per iteration (predict.c) */
    b->t_s = fmax(pipe + sc->step_overhead_s, pf_input_time(sc));
  }
  free(k);
  *t_s = b->t_s;
  return rc;
}

double pf_tune_lb_score(const pf_scenario *sc, double t_s, pf_objective o) {
  return pf_tune_score_of(sc, t_s, 0, o); /* energy >= 0: the bound of energy and action is 0 */
}

void pf_tune_lb_free(pf_tune_lb *b) {
  if (b->comm) pf_comm_free(b->comm);
  free(b->comm);
  free(b->stage_comm);
  free(b->w);
  memset(b, 0, sizeof *b);
}
