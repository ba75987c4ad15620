/* predict.c - one prediction (see predict.h).
 *
 * iteration = max over stages s of [ pipeline end of s (DES) + exposed DP
 *             gradient collective of s ] + optimizer step + parameter
 *             all-gather (distributed optimizer) + fitted per-step overhead
 * Breakdown (per GPU on the critical stage): compute and tp_comm are the
 * stage's busy time; pp_comm is the DES makespan minus the same DES with free
 * P2P transfers; pp_bubble is the rest of the pipeline makespan.
 *
 * Long pipelines are periodic once the schedule reaches steady state, so the
 * DES simulates two shorter runs (M1 and M1 + P microbatches) and extends the
 * makespan linearly to M; this is exact for a periodic steady state and keeps
 * GBS 1536 runs in milliseconds.  A trace simulates every microbatch.
 */
#include "preflight/predict.h"

#include "preflight/calibration.h"
#include "preflight/collective.h"
#include "preflight/compute.h"
#include "preflight/energy.h"
#include "preflight/error.h"
#include "preflight/pipeline.h"

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
static int run_pipeline(pf_scenario *sc, const pf_stage_work *w, int want_trace, pf_pipeline_result *r) {
  pf_plan *p = &sc->plan;
  int M = p->grad_accum, P = p->pp;
  int M1 = p->schedule == PF_SCHED_INTERLEAVED ? 3 * P : 2 * P + 2, M2 = M1 + P;
  if (want_trace || sc->engine == PF_ENGINE_ANALYTIC || M <= M2 + P || P == 1)
    return pf_pipeline_run(sc, w, want_trace, r);
  pf_pipeline_result *r2 = malloc(sizeof *r2);
  if (!r2) return pf_error_set(PF_ENOMEM, "out of memory");
  p->grad_accum = M1;
  int rc = pf_pipeline_run(sc, w, 0, r);
  p->grad_accum = M2;
  if (rc == 0) rc = pf_pipeline_run(sc, w, 0, r2);
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

  int P = p->pp, M = p->grad_accum;
  pf_stage_work *w = calloc((size_t)P, sizeof *w);
  pf_pipeline_result *r = calloc(1, sizeof *r), *r0 = calloc(1, sizeof *r0);
  if (!w || !r || !r0) { free(w); free(r); free(r0); return pf_error_set(PF_ENOMEM, "out of memory"); }
  for (int s = 0; s < P; s++) {
    if (s > 1 && s < P - 1) { w[s] = w[1]; continue; } /* middle stages are identical */
    pf_stage_work_compute(sc, s, &w[s]);
  }

  rc = run_pipeline(sc, w, sc->trace[0] != '\0', r);
  if (rc == 0) { /* the same pipeline with free transfers separates bubble from P2P time */
    pf_scenario *free_sc = malloc(sizeof *free_sc);
    if (!free_sc) rc = pf_error_set(PF_ENOMEM, "out of memory");
    else {
      *free_sc = *sc;
      free_sc->trace[0] = '\0';
      pf_stage_work *w0 = malloc((size_t)P * sizeof *w0);
      if (!w0) rc = pf_error_set(PF_ENOMEM, "out of memory");
      else {
        memcpy(w0, w, (size_t)P * sizeof *w0);
        for (int s = 0; s < P; s++) w0[s].p2p_bytes = 0;
        free_sc->free_p2p = true;
        rc = run_pipeline(free_sc, w0, 0, r0);
        free(w0);
      }
      free(free_sc);
    }
  }
  if (rc < 0) { free(w); free(r); free(r0); return rc; }

  /* critical stage: the one with the largest busy time */
  int crit = 0;
  for (int s = 1; s < P; s++)
    if (w[s].fwd_s + w[s].bwd_s + w[s].fwd_tp_s + w[s].bwd_tp_s >
        w[crit].fwd_s + w[crit].bwd_s + w[crit].fwd_tp_s + w[crit].bwd_tp_s) crit = s;
  double compute = M * (w[crit].fwd_s + w[crit].bwd_s);
  double tp = M * (w[crit].fwd_tp_s + w[crit].bwd_tp_s);
  double pp_comm = fmax(0.0, r->makespan_s - r0->makespan_s);
  double bubble = fmax(0.0, r->makespan_s - pp_comm - compute - tp);

  /* data-parallel gradient synchronisation per stage, started when the stage's
   * backward ends (Megatron's finalize_model_grads without --overlap-grad-reduce) */
  double grad_bytes_per_param = (sc->precision == PF_FP16) ? 2.0 : 4.0; /* bf16: fp32 grad reduction */
  double param_bytes = (sc->precision == PF_FP32 || sc->precision == PF_TF32) ? 4.0 : 2.0;
  double end = 0, dp_max = 0, opt_max = 0, ag_max = 0;
  pf_coll_result cr = {0};
  for (int s = 0; s < P; s++) {
    double dp_t = 0;
    if (p->dp > 1) {
      pf_coll_kind kind = p->dist_opt ? PF_REDUCE_SCATTER : PF_ALLREDUCE;
      if ((rc = pf_dp_collective(sc, kind, w[s].params * grad_bytes_per_param, s, P, &cr)) < 0) break;
      dp_t = cr.time_s;
      if (p->dist_opt) {
        pf_coll_result ag;
        if ((rc = pf_dp_collective(sc, PF_ALLGATHER, w[s].params * param_bytes, s, P, &ag)) < 0) break;
        ag_max = fmax(ag_max, ag.time_s);
      }
    }
    /* tied input/output embeddings: the first and last stage all-reduce that gradient */
    if (P > 1 && wl->kind == PF_WL_TRANSFORMER && wl->tied_embeddings && (s == 0 || s == P - 1)) {
      double bytes = pf_workload_embedding_params(wl, p->tp) / p->tp * grad_bytes_per_param;
      double bw, lat;
      pf_pipeline_link(sc, P - 1, &bw, &lat); /* same kind of path as the wrap-around link */
      int a = pf_plan_node_of(sc, pf_plan_rank(p, 0, 0, 0, 0)), b = pf_plan_node_of(sc, pf_plan_rank(p, 0, 0, 0, P - 1));
      if (a == b) pf_pipeline_link(sc, 0, &bw, &lat);
      dp_t += lat + bytes / bw;
    }
    dp_max = fmax(dp_max, dp_t);
    end = fmax(end, r->stage_end_s[s] + dp_t);
    opt_max = fmax(opt_max, w[s].optimizer_s);
  }
  if (rc < 0) { free(w); free(r); free(r0); return rc; }
  double dp_exposed = fmax(0.0, end - r->makespan_s);

  out->iteration_time_s = end + opt_max + ag_max + sc->step_overhead_s;
  out->breakdown_s = (pf_breakdown){compute, tp, bubble, pp_comm, dp_exposed + ag_max, opt_max, sc->step_overhead_s};
  out->pipeline_s = r->makespan_s;
  out->dp_comm_s = dp_max + ag_max;
  snprintf(out->dp_algorithm, sizeof out->dp_algorithm, "%s", p->dp > 1 ? pf_coll_algo_name(cr.algo) : "none");
  snprintf(out->engine, sizeof out->engine, "%s", sc->engine == PF_ENGINE_ANALYTIC ? "analytic" : "simgrid");
  out->des_events = r->events + r0->events;

  double t = out->iteration_time_s;
  out->samples_per_s = p->gbs / t;
  out->tokens_per_s = out->samples_per_s * pf_workload_tokens_per_sample(wl);
  out->model_flops_per_iter = p->gbs * pf_workload_model_flops_per_sample(wl, p->tp);
  out->tflops_per_gpu = out->model_flops_per_iter / (t * sc->gpus) / 1e12;
  double peak = pf_device_peak(&m->dev, sc->precision);
  out->mfu = peak > 0 ? out->tflops_per_gpu * 1e12 / peak : 0;
  double hw = 0;
  for (int s = 0; s < P; s++) hw += M * (w[s].fwd_flops + w[s].bwd_flops);
  out->hw_tflops_per_gpu = hw / P / t / 1e12; /* per GPU: stages hold the same number of GPUs */

  /* energy: average GPU timeline over all stages */
  pf_gpu_timeline tl = {0};
  for (int s = 0; s < P; s++) {
    tl.gemm_s += M * w[s].gemm_s / P;
    tl.mem_s += M * (w[s].mem_s + w[s].launch_s) / P + w[s].optimizer_s / P;
    tl.comm_s += M * (w[s].fwd_tp_s + w[s].bwd_tp_s) / P;
  }
  tl.comm_s += dp_max + ag_max + pp_comm;
  pf_energy_compute(sc, &tl, t, &out->energy);

  if (sc->trace[0]) {
    extern int pf_trace_write(const pf_scenario *, const pf_prediction *, const pf_pipeline_result *, const char *);
    rc = pf_trace_write(sc, out, r, sc->trace);
  }
  if (p->grad_accum < P && P > 1)
    pf_prediction_warn(out, "only %d microbatches for %d pipeline stages: the bubble dominates", p->grad_accum, P);
  if (out->memory.total_B > 0.92 * out->memory.capacity_B)
    pf_prediction_warn(out, "memory per GPU is within 8 %% of capacity; fragmentation may cause OOM");
  free(r->trace);
  free(w); free(r); free(r0);
  return rc;
}
