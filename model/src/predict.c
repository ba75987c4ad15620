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

/* Everything one prediction allocates, freed in one place. */
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
  free(ws->w); free(ws->w0); free(ws->r); free(ws->r0); free(ws->net); free(ws->net0); free(ws->free_sc);
  pf_topology_free(&ws->topo);
}

int pf_predict(pf_scenario *sc, pf_prediction *out) {
  memset(out, 0, sizeof *out);
  int rc;
  if (sc->calibration[0]) {
    pf_calibration cal;
    if ((rc = pf_calibration_load(sc->calibration, &cal)) < 0) return rc;
    if ((rc = pf_calibration_apply(&cal, &sc->machine)) < 0) return rc;
    if (cal.has_fit) {
      if (cal.fit_compute_eff > 0) sc->compute_eff_scale = cal.fit_compute_eff;
      if (cal.fit_comm_eff > 0) sc->comm_eff_scale = cal.fit_comm_eff;
      sc->step_overhead_s = cal.fit_step_overhead_s;
    }
  }
  if ((rc = pf_plan_check(sc)) < 0) return rc;
  const pf_plan *p = &sc->plan;
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
    pf_stage_work_compute(sc, s, &w[s]);
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

  /* gradient sync: each stage's collective starts when its backward ends, all share links in time */
  pf_iter_timeline *tl = ws.tl;
  tl->pp = P;
  for (int s = 0; s < P; s++) { ws.jp[s] = &ws.gjob[s]; ws.t0[s] = r->stage_end_s[s]; }
  if ((rc = pf_coll_timeline(topo, ws.jp, P, ws.t0, ws.t1)) < 0) { ws_free(&ws); return rc; }
  double sync = 0, dp_max = 0, opt_max = 0;
  for (int s = 0; s < P; s++) {
    tl->grad_start_s[s] = ws.t0[s];
    tl->grad_end_s[s] = ws.t1[s];
    dp_max = fmax(dp_max, ws.t1[s] - ws.t0[s] + (has_emb && (s == 0 || s == P - 1) ? ws.ejob.solo_s : 0));
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
  for (int s = 0; s < P; s++) {
    tl->ag_start_s[s] = ws.t0[s];
    tl->ag_end_s[s] = ws.t1[s];
    core_end = fmax(core_end, ws.t1[s]);
    ag_max = fmax(ag_max, ws.t1[s] - ws.t0[s]);
  }
  snprintf(tl->grad_name, sizeof tl->grad_name, "gradient %s (%s)", pf_coll_kind_name(kind), pf_coll_algo_name(info.algo));
  snprintf(tl->ag_name, sizeof tl->ag_name, "parameter all-gather");

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
