/* predict.c - one prediction (see predict.h).
 *
 * iteration = pipeline (SimGrid DES of one representative pipeline; stage
 *             work = compute (compute.c) + exposed TP/SP/CP communication
 *             (comm.c); P2P links from the topology's routes with all
 *             replicas' flows)
 *           + the data-parallel synchronisation after it (dpsync.c:
 *             gradient collectives per stage or per bucket sharing links in
 *             time, tied embeddings, global sync, optimizer, parameter
 *             all-gather)
 *           + the fitted per-step overhead.
 * Every byte is priced by the communication module (comm.h); this file only
 * composes the iteration.
 * Breakdown (per GPU on the critical stage): compute and tp_comm are the
 * stage's busy time; pp_comm is the DES makespan minus the same DES with free
 * P2P transfers; pp_bubble is the rest of the pipeline makespan;
 * dp_comm_exposed is everything between the pipeline's end and the end of
 * the iteration except the optimizer.  The communication summary adds what
 * ran hidden under compute and what that cost (pf_comm_summary).
 *
 * Long pipelines are periodic once the schedule reaches steady state, so the
 * DES simulates two shorter runs (M1 and M1 + P microbatches) and extends the
 * makespan linearly to M; this is exact for a periodic steady state and keeps
 * GBS 1536 runs in milliseconds.  A trace simulates every microbatch.
 * `--engine full` replaces the pipeline and the collectives by one SimGrid
 * run of every GPU (fullsim.c) on the same topology and patterns.
 */
#include "predict.h"
#include "compute/compute.h"

#include "machine/machine.h"
#include "comm/comm.h"
#include "engine/engine.h"
#include "power/power.h"
#include "core/core.h"
#include "engine/engine.h"

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

/* Run the pipeline engine, extrapolating long steady-state runs: at M1 and M2 = M1 + P microbatches, extended
 * linearly to M.  The extension holds once the pipeline runs at its steady rate, one microbatch per cycle of the
 * busiest stage at least; where the stages are uneven the faster ones can still be running ahead of it at M2
 * (the makespan grows more slowly than the busiest stage's work), and the extension would end the iteration
 * before that stage could have done its work: then all M are simulated. */
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
  /* the closed forms of 1F1B and GPipe cost nothing at any M; the interleaved list schedule, as the DES, is
   * extended (engine/pipeform.c) */
  bool formula = sc->engine == PF_ENGINE_ANALYTIC && p->schedule != PF_SCHED_INTERLEAVED;
  if (want_trace || formula || M <= M2 + P || P == 1) return pf_pipeline_run(sc, w, net, want_trace, r);
  pf_pipeline_result *r2 = malloc(sizeof *r2);
  if (!r2) return pf_error_set(PF_ENOMEM, "out of memory");
  p->grad_accum = M1;
  int rc = pf_pipeline_run(sc, w, net, 0, r);
  p->grad_accum = M2;
  if (rc == 0) rc = pf_pipeline_run(sc, w, net, 0, r2);
  p->grad_accum = M;
  double slope = 0, busiest = 0; /* a microbatch's growth of the makespan and of the busiest stage's work */
  for (int s = 0; rc == 0 && s < P; s++) busiest = fmax(busiest, (r2->stage_busy_s[s] - r->stage_busy_s[s]) / P);
  if (rc == 0) slope = (r2->makespan_s - r->makespan_s) / P;
  if (rc == 0 && slope < busiest * (1 - 1e-6)) { /* not yet at the steady rate (header): simulate all M */
    free(r2);
    return pf_pipeline_run(sc, w, net, 0, r);
  }
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
  pf_stage_comm *sc_comm;
  pf_fsdp_cost *fsdp;  /* ZeRO-2/3 per-unit collectives per stage (comm/fsdp.c) */
  pf_pipeline_result *r, *r0;
  pf_pipe_net *net, *net0;
  pf_scenario *free_sc;
  pf_comm comm;
  pf_dpsync dp;
  pf_iter_timeline *tl;
  pf_fullsim_result *full;
  int P;
  double clock;   /* SM clock / full clock the kernels run at (0: full, and find the clock the cap leaves) */
  bool want_trace; /* the pipeline keeps its intervals (pf_predict_traced) */
} work_set;

static void ws_free(work_set *ws) {
  if (ws->r) free(ws->r->trace);
  pf_dpsync_free(&ws->dp, ws->P);
  pf_comm_free(&ws->comm);
  free(ws->w); free(ws->w0); free(ws->sc_comm); free(ws->fsdp); free(ws->r); free(ws->r0); free(ws->net); free(ws->net0);
  free(ws->free_sc); free(ws->tl); free(ws->full);
}

static int ws_alloc(work_set *ws, int P, double clock, bool want_trace) {
  memset(ws, 0, sizeof *ws);
  ws->P = P;
  ws->clock = clock;
  ws->want_trace = want_trace;
  ws->w = calloc((size_t)P, sizeof *ws->w);
  ws->w0 = calloc((size_t)P, sizeof *ws->w0);
  ws->sc_comm = calloc((size_t)P, sizeof *ws->sc_comm);
  ws->fsdp = calloc((size_t)P, sizeof *ws->fsdp);
  ws->r = calloc(1, sizeof *ws->r);
  ws->r0 = calloc(1, sizeof *ws->r0);
  ws->net = calloc(1, sizeof *ws->net);
  ws->net0 = calloc(1, sizeof *ws->net0);
  ws->free_sc = malloc(sizeof *ws->free_sc);
  ws->tl = calloc(1, sizeof *ws->tl);
  if (!ws->w || !ws->w0 || !ws->sc_comm || !ws->fsdp || !ws->r || !ws->r0 || !ws->net || !ws->net0 || !ws->free_sc || !ws->tl)
    return pf_error_set(PF_ENOMEM, "out of memory");
  return 0;
}

/* Stage work: compute, then the TP/SP/CP communication priced over the job's routes. */
static int stage_work(pf_scenario *sc, work_set *ws) {
  int P = ws->P, rc;
  for (int s = 0; s < P; s++) {
    if (s > 1 && s < P - 1 && pf_plan_stage_layers(sc, s) == pf_plan_stage_layers(sc, 1)) { /* middle stages */
      ws->w[s] = ws->w[1], ws->sc_comm[s] = ws->sc_comm[1], ws->fsdp[s] = ws->fsdp[1];
      continue;
    }
    if ((rc = pf_stage_work_at(sc, ws->clock, s, &ws->w[s])) < 0) return rc;
    if ((rc = pf_comm_stage(&ws->comm, s, &ws->w[s], &ws->sc_comm[s])) < 0) return rc;
    if ((rc = pf_comm_fsdp(&ws->comm, s, &ws->w[s], &ws->fsdp[s])) < 0) return rc;
  }
  return 0;
}

/* The pipeline, and the same pipeline with free transfers (bubble vs P2P). */
static int pipelines(pf_scenario *sc, work_set *ws) {
  int P = ws->P, rc;
  const pf_topology *topo = &ws->comm.topo;
  *ws->free_sc = *sc;
  if (ws->free_sc->engine == PF_ENGINE_FULL) ws->free_sc->engine = PF_ENGINE_DES;
  memcpy(ws->w0, ws->w, (size_t)P * sizeof *ws->w);
  for (int s = 0; s < P; s++) ws->w0[s].p2p_bytes = 0;
  pf_engine eng = sc->engine;
  if (eng == PF_ENGINE_FULL) sc->engine = PF_ENGINE_DES; /* the representative pipeline is still needed */
  rc = pf_pipeline_net(sc, topo, ws->net);
  if (rc == 0) pf_pipeline_net_free(P, ws->net0);
  if (rc == 0) rc = run_pipeline(sc, ws->w, ws->net, ws->want_trace, ws->r);
  if (rc == 0) rc = run_pipeline(ws->free_sc, ws->w0, ws->net0, 0, ws->r0);
  sc->engine = eng;
  return rc;
}

/* Per GPU, averaged over the stages: communication kernel time, exposed and hidden, inside and across
 * nodes, and bytes over the fabric and the NICs (for the energy model and the breakdown). */
static void comm_summary(const pf_scenario *sc, const work_set *ws, double pp_comm, double dp_exposed,
                         pf_prediction *out) {
  const pf_plan *p = &sc->plan;
  const pf_topology *t = &ws->comm.topo;
  int P = ws->P, M = p->grad_accum;
  pf_comm_summary *cs = &out->comm;
  double tp_busy = 0, tp_inter = 0, fsdp_busy = 0, fsdp_inter = 0;
  for (int s = 0; s < P; s++) {
    const pf_stage_comm *c = &ws->sc_comm[s];
    tp_busy += M * c->busy_s / P;
    if (c->inter) tp_inter += M * c->busy_s / P;
    cs->tp_hidden_s += M * (c->tp_hidden_s + c->cp_hidden_s) / P;
    cs->interference_s += M * c->interference_s / P;
    cs->fabric_bytes += M * c->fabric_bytes / P;
    cs->nic_bytes += M * c->nic_bytes / P;
    const pf_fsdp_cost *f = &ws->fsdp[s]; /* ZeRO-2/3 per-unit collectives, counted with the DP time */
    fsdp_busy += M * f->busy_s / P;
    fsdp_inter += M * f->inter_busy_s / P;
    cs->dp_hidden_s += M * f->hidden_s / P;
    cs->interference_s += M * f->interference_s / P;
    cs->fabric_bytes += M * f->fabric_bytes / P;
    cs->nic_bytes += M * f->nic_bytes / P;
  }
  /* P2P: each GPU of a middle stage sends an activation forward and a gradient backward per microbatch */
  double sends = P > 1 ? 2.0 * M * (P - 1) / P : 0, pp_busy = 0;
  if (P > 1) {
    double bytes = ws->w[0].p2p_bytes;
    pp_busy = sends * pf_pipe_net_time(ws->net, 0, bytes);
    int a = pf_plan_rank(p, 0, 0, 0, 0), b = pf_plan_rank(p, 0, 0, 0, 1);
    if (pf_topology_node_of(t, a) != pf_topology_node_of(t, b)) cs->nic_bytes += sends * bytes;
    else cs->fabric_bytes += sends * bytes;
  }
  const pf_dpsync *d = &ws->dp;
  double dp_busy = d->dp_max_s + d->ag_max_s;
  cs->tp_s = tp_busy;
  cs->pp_s = pp_busy;
  cs->dp_s = dp_busy + fsdp_busy;
  cs->dp_hidden_s += d->grad_hidden_s + d->ag_hidden_s;
  cs->interference_s += d->interference_s;
  cs->fabric_bytes += d->fabric_bytes;
  cs->nic_bytes += d->nic_bytes;
  cs->inter_s = tp_inter + fsdp_inter + (d->info.inter ? dp_busy : 0) + (cs->nic_bytes > 0 ? pp_busy : 0);
  cs->intra_s = tp_busy + dp_busy + fsdp_busy + pp_busy - cs->inter_s;
  cs->hidden_s = cs->tp_hidden_s + cs->dp_hidden_s;
  cs->exposed_s = out->breakdown_s.tp_comm + pp_comm + dp_exposed + out->breakdown_s.fsdp_allgather +
                  out->breakdown_s.fsdp_reduce_scatter;
  cs->dp_busbw_Bps = d->info.bus_bw_Bps;
  cs->dp_expert_s = d->expert_s;
  cs->edp = d->edp;
  snprintf(cs->tp_algorithm, sizeof cs->tp_algorithm, "%s",
           p->tp > 1 ? pf_coll_algo_name(ws->sc_comm[0].tp_algo) : "none");
  snprintf(cs->dp_protocol, sizeof cs->dp_protocol, "%s", p->dp * p->cp > 1 ? pf_coll_proto_name(d->info.proto) : "none");
  snprintf(cs->placement, sizeof cs->placement, "%s", pf_placement_name(sc->placement));
}

/* Throughput, MFU and energy from the iteration time. */
static void rates_and_energy(const pf_scenario *sc, const work_set *ws, double pp_comm, pf_prediction *out) {
  const pf_plan *p = &sc->plan;
  const pf_workload *wl = &sc->workload;
  const pf_machine *m = &sc->machine;
  int P = ws->P, M = p->grad_accum;
  const pf_stage_work *w = ws->w;
  double t = out->iteration_time_s;
  out->samples_per_s = p->gbs / t;
  out->tokens_per_s = out->samples_per_s * pf_workload_tokens_per_sample(wl);
  out->model_flops_per_iter = p->gbs * pf_workload_model_flops_per_sample_as(wl, p->tp, sc->flops_conv);
  out->tflops_per_gpu = out->model_flops_per_iter / (t * sc->gpus) / 1e12;
  double peak = pf_device_peak(&m->dev, sc->precision);
  /* fp32 convolutions run on TF32 tensor cores (cuDNN's default, as compute.c models): MFU against that */
  if (sc->precision == PF_FP32 && wl->kind != PF_WL_TRANSFORMER && m->dev.peak_flops[PF_TF32] > 0)
    peak = m->dev.peak_flops[PF_TF32];
  out->mfu = peak > 0 ? out->tflops_per_gpu * 1e12 / peak : 0;
  double hw = 0;
  for (int s = 0; s < P; s++) hw += M * (w[s].fwd_flops + w[s].bwd_flops);
  out->hw_tflops_per_gpu = hw / P / t / 1e12; /* per GPU: stages hold the same number of GPUs */

  /* energy: what one device does, averaged over the stages (energy.h) */
  pf_energy_use u = {.window_s = t, .clock_ratio = ws->clock > 0 ? ws->clock : 1.0, .loop_s = t};
  /* single-process DataParallel: the step's tail (optimizer, clipping, the first GPU's flatten and add) runs
   * on the first GPU only, where the parameters live (torch/nn/parallel/data_parallel.py: device_ids[0];
   * compute/stepkernels.c): one GPU's work in the per-GPU mean.  Its broadcast and reduce are NCCL collectives
   * (the tail's comm kernels), whose kernels run on every GPU: the others' share is added back.  Their flatten
   * copies (about 8 B a parameter) are left out of their energy: on MAELSTROM AP2's 4 A100s about 1 W a GPU. */
  double tail_share = wl->dp_impl == PF_DPIMPL_DATAPARALLEL && p->dp > 1 ? 1.0 / p->dp : 1.0;
  for (int s = 0; s < P; s++) {
    pf_energy_use_add_step(&u, &w[s].work, (double)M / P);
    pf_energy_use_add_step(&u, &w[s].opt, tail_share / P);
    u.comm_s += (1.0 - tail_share) * w[s].opt.comm_s / P;
    u.comm_s += M * (w[s].fwd_tp_s + w[s].bwd_tp_s) / P; /* exposed TP/CP */
  }
  u.comm_s += pp_comm + out->breakdown_s.dp_comm_exposed;
  pf_energy_window(sc, &u, &out->energy);
  /* evaluation: the forward kernels alone over one forward-only pass (no optimizer, no DP sync) */
  pf_energy_use ue = {.window_s = out->eval_iteration_s, .clock_ratio = u.clock_ratio, .loop_s = out->eval_iteration_s};
  for (int s = 0; s < P; s++) {
    pf_energy_use_add_step(&ue, &w[s].eval, (double)M / P);
    ue.comm_s += M * w[s].fwd_tp_s / P;
  }
  ue.comm_s += 0.5 * pp_comm;
  pf_energy_window(sc, &ue, &out->eval_energy);
  /* first pass at full clock: the clock the cap leaves (pf_predict reprices at it) */
  if (!(ws->clock > 0)) out->energy.clock_ratio = pf_energy_clock_for_cap(sc, &u);
  pf_energy_rates(&out->energy, t, p->gbs, p->gbs * pf_workload_tokens_per_sample(wl));
  pf_energy_range(&out->energy, 1.0, 1.0, 1.0, 1.0); /* no range until the commands' intervals (pf_interval_energy) */
}

/* The critical stage: the one with the largest busy time.  Under DualPipe a rank runs half the microbatches
 * through stage s and half through stage P - 1 - s (engine/pipeline.c): the critical rank's two stages, the
 * busier first, *mate the other (-1 for the other schedules). */
static int critical(const pf_plan *p, const pf_stage_work *w, int *mate) {
  int P = p->pp, crit = 0;
  double best = -1;
  *mate = -1;
  for (int s = 0; s < P; s++) {
    double t = w[s].fwd_s + w[s].bwd_s + w[s].fwd_tp_s + w[s].bwd_tp_s;
    if (p->schedule == PF_SCHED_DUALPIPE && P > 1) {
      const pf_stage_work *o = &w[P - 1 - s];
      double u = o->fwd_s + o->bwd_s + o->fwd_tp_s + o->bwd_tp_s;
      if (u > t) continue; /* the pair is counted from its busier stage */
      t += u;
      if (t > best) best = t, crit = s, *mate = P - 1 - s;
    } else if (t > best) {
      best = t, crit = s;
    }
  }
  return crit;
}

/* What bounds the critical stage's compute (kernel timelines: transformers and layer lists). */
/* The expert-parallel all-to-alls of each stage, for the trace (report/trace.c): its MoE layers (the MTP
 * module's on the last stage) and one microbatch's all-to-all time forward and backward (comm/epa2a.c). */
static void ep_timeline(const pf_scenario *sc, const pf_stage_work *w, pf_iter_timeline *tl) {
  const pf_plan *p = &sc->plan;
  for (int s = 0; s < p->pp && s < PF_MAXSTAGE; s++) {
    int n = 0;
    if (w[s].fwd_ep_s > 0 && pf_workload_is_moe(&sc->workload))
      n = pf_workload_moe_layers_in(&sc->workload, pf_plan_stage_first_layer(sc, s), pf_plan_stage_layers(sc, s)) +
          (s == p->pp - 1 ? sc->workload.mtp_layers : 0);
    tl->ep_layers[s] = n;
    tl->ep_fwd_s[s] = n > 0 ? w[s].fwd_ep_s : 0;
    tl->ep_bwd_s[s] = n > 0 ? w[s].bwd_ep_s : 0;
  }
}

static void compute_split(const pf_scenario *sc, const pf_stage_work *crit, pf_prediction *out) {
  int M = sc->plan.grad_accum;
  const pf_step *f = &crit->fwd, *b = &crit->bwd;
  pf_compute_split *cs = &out->compute_split_s;
  cs->compute_bound = M * (f->limit_s[PF_LIMIT_COMPUTE] + b->limit_s[PF_LIMIT_COMPUTE]);
  cs->memory_bound = M * (f->limit_s[PF_LIMIT_MEMORY] + b->limit_s[PF_LIMIT_MEMORY]);
  cs->launch = M * (f->limit_s[PF_LIMIT_FLOOR] + b->limit_s[PF_LIMIT_FLOOR]);
  cs->host_bound = M * (pf_step_host_bound_s(f) + pf_step_host_bound_s(b));
  cs->host_op_s = pf_host_op_s(sc);
  cs->ops = M * (f->ops + b->ops);
  cs->host_python = M * (f->python_s + b->python_s);
  cs->fp8_math = M * (f->fp8_math_s + b->fp8_math_s);
  cs->fp8_scaling = M * (f->fp8_scaling_s + b->fp8_scaling_s);
  const pf_moe_split *x = &crit->moe;
  cs->moe = (pf_moe_split){.router = M * x->router, .host_sync = M * x->host_sync, .permute = M * x->permute,
                           .experts = M * x->experts, .unpermute = M * x->unpermute, .shared = M * x->shared};
}

/* What the prediction warns about the plan: DualPipe's closed form, few microbatches, memory near capacity, an
 * NVIDIA all-to-all library on another vendor's machine. */
static void plan_warnings(const pf_scenario *sc, pf_prediction *out) {
  const pf_plan *p = &sc->plan;
  int P = p->pp;
  if (p->schedule == PF_SCHED_DUALPIPE && sc->engine != PF_ENGINE_ANALYTIC)
    pf_prediction_warn(out, "--schedule dualpipe is priced in closed form (the DeepSeek-V3 report's Table 2 bubble, "
                       "engine/pipeline.c), not simulated event by event");
  if (p->grad_accum < P && P > 1)
    pf_prediction_warn(out, "only %d microbatches for %d pipeline stages: the bubble dominates", p->grad_accum, P);
  if (out->memory.total_B > 0.92 * out->memory.capacity_B)
    pf_prediction_warn(out, "memory per GPU is within 8 %% of capacity; fragmentation may cause OOM");
  if (p->dispatcher == PF_MOE_DISPATCH_FLEX && pf_plan_ep(p) > 1 && sc->machine.ccl != PF_CCL_NCCL)
    pf_prediction_warn(out, "the flex dispatcher's library (%s) is NVIDIA's: on this %s machine its rates measured on "
                       "NVLink and InfiniBand are applied to a fabric where it was not measured",
                       pf_flex_backend_name(p->flex_backend), pf_ccl_lib_name(sc->machine.ccl));
}

static int predict_once(pf_scenario *sc, double clock, pf_prediction *out, pf_trace *trace) {
  memset(out, 0, sizeof *out);
  int rc;
  if (sc->calibration_note[0]) pf_prediction_warn(out, "%s", sc->calibration_note);
  /* sc is a resolved job (pf_predict_traced checked it): its plan is derived and its constraints hold */
  const pf_plan *p = &sc->plan;
  pf_memory_estimate(sc, &out->memory);
  out->fits = out->memory.total_B <= out->memory.capacity_B;
  if ((rc = pf_memory_check(sc, &out->memory)) < 0) return rc;
  if (!out->fits) pf_prediction_warn(out, "memory: %.1f GiB a GPU with the framework allowance, above %.1f GiB; the "
                                     "run fitted", out->memory.total_B / 1073741824.0, out->memory.capacity_B / 1073741824.0);

  int P = p->pp, M = p->grad_accum, ngpu_dp = p->dp * p->cp;
  work_set ws;
  if ((rc = ws_alloc(&ws, P, clock, trace != NULL)) < 0 || (rc = pf_comm_init(sc, &ws.comm)) < 0 || (rc = stage_work(sc, &ws)) < 0 ||
      (rc = pipelines(sc, &ws)) < 0 || (rc = pf_dpsync_run(&ws.comm, ws.w, ws.r, ws.tl, &ws.dp)) < 0) {
    ws_free(&ws);
    return rc;
  }
  const pf_stage_work *w = ws.w;
  const pf_pipeline_result *r = ws.r, *r0 = ws.r0;
  const pf_dpsync *d = &ws.dp;

  int mate, crit = critical(p, w, &mate);
  /* a per-microbatch field of the critical stage, under DualPipe the mean of the rank's two stages */
#define CRIT(a, f) (mate < 0 ? (a)[crit].f : 0.5 * ((a)[crit].f + (a)[mate].f))
  double compute = M * (CRIT(w, fwd_s) + CRIT(w, bwd_s));
  const pf_fsdp_cost *fc = &ws.fsdp[crit]; /* inside fwd_tp_s / bwd_tp_s, reported apart */
  double fsdp_ag = M * (CRIT(ws.fsdp, fwd_ag_s) + CRIT(ws.fsdp, bwd_ag_s)), fsdp_rs = M * CRIT(ws.fsdp, bwd_rs_s);
  double amax = M * (CRIT(ws.sc_comm, amax_fwd_s) + CRIT(ws.sc_comm, amax_bwd_s)); /* in fwd/bwd_tp_s (comm.c) */
  double tp = fmax(0.0, M * (CRIT(w, fwd_tp_s) + CRIT(w, bwd_tp_s)) - fsdp_ag - fsdp_rs - amax);
  double pp_comm = fmax(0.0, r->makespan_s - r0->makespan_s);
  double makespan = r->makespan_s, sync = d->sync_s, core_end = d->core_end_s;
  out->des_events = r->events + r0->events;
  snprintf(out->engine, sizeof out->engine, "%s",
           sc->engine == PF_ENGINE_ANALYTIC || p->schedule == PF_SCHED_DUALPIPE ? "analytic"
           : P == 1 && !trace                                                 ? "single-stage"
                                                                              : "simgrid");

  if (sc->engine == PF_ENGINE_FULL) {
    ws.full = calloc(1, sizeof *ws.full);
    if (!ws.full) { ws_free(&ws); return pf_error_set(PF_ENOMEM, "out of memory"); }
    pf_fullsim_input in = {sc, w, &ws.comm.topo, ws.net, d->grad, d->has_emb ? &d->emb : NULL, d->has_ag ? d->ag : NULL,
                           d->has_x ? d->xgrad : NULL, d->has_x && d->has_ag ? d->xag : NULL};
    if ((rc = pf_fullsim_run(&in, ws.full)) < 0) { ws_free(&ws); return rc; }
    makespan = ws.full->makespan_s;
    sync = ws.full->opt_start_s;
    core_end = ws.full->iteration_s;
    out->des_events = (int)fmin(ws.full->events, 2e9);
    snprintf(out->engine, sizeof out->engine, "full");
  }
  double bubble = fmax(0.0, makespan - pp_comm - compute - tp - fsdp_ag - fsdp_rs - amax);
  double dp_exposed = fmax(0.0, sync - makespan) + fmax(0.0, core_end - sync - d->opt_max_s);

  double dpi = sc->engine == PF_ENGINE_FULL ? 0 : d->interference_s;
  ws.tl->slow_start_s = core_end;
  ws.tl->slow_end_s = core_end + dpi;
  out->iteration_time_s = core_end + dpi + sc->step_overhead_s;
  double input = pf_input_time(sc), input_wait = fmax(0.0, input - out->iteration_time_s);
  out->iteration_time_s += input_wait;
  double ep = M * (CRIT(w, fwd_ep_s) + CRIT(w, bwd_ep_s)); /* part of tp: the comm layer adds it there */
  out->breakdown_s = (pf_breakdown){compute, fmax(0.0, tp - ep), bubble, pp_comm, dp_exposed, d->opt_max_s, sc->step_overhead_s, dpi,
                                    input_wait, fsdp_ag, fsdp_rs, amax, ep};
  for (int s = 0; s < P; s++) /* the per-unit collectives of each stage, for the trace (report/trace.c) */
    ws.tl->fsdp_ag_s[s] = ws.fsdp[s].ag_s, ws.tl->fsdp_rs_s[s] = ws.fsdp[s].rs_s + ws.fsdp[s].ar_s,
    ws.tl->fsdp_units[s] = (int)ws.fsdp[s].units;
  ws.tl->fsdp_level = fc->level;
  ep_timeline(sc, w, ws.tl);
  compute_split(sc, &w[crit], out);
  out->pipeline_s = makespan;
  out->comm.ep_hidden_s = M * CRIT(w, ep_hidden_s);
  out->comm.ep_sm_s = M * CRIT(w, ep_sm_s);
#undef CRIT
  { /* evaluation (Megatron's forward_only schedule): M microbatches through P stages forward, the slowest stage
     * setting the pace, (M + P - 1) stage times, the forward half of the pipeline's p2p time */
    double tf = 0;
    for (int s = 0; s < P; s++) tf = fmax(tf, pf_step_time(&w[s].eval) + w[s].fwd_tp_s);
    out->eval_iteration_s = (M + P - 1) * tf + 0.5 * pp_comm + input_wait;
  }
  out->dp_comm_s = d->dp_max_s + d->ag_max_s;
  snprintf(out->dp_algorithm, sizeof out->dp_algorithm, "%s",
           ngpu_dp < 2 ? "none" : pf_coll_algo_name(fc->level >= 2 ? fc->algo : d->info.algo));
  comm_summary(sc, &ws, pp_comm, dp_exposed, out);
  rates_and_energy(sc, &ws, pp_comm, out);

  rc = 0;
  if (trace) { /* the timeline leaves as data: the caller writes it (report/trace.c) */
    trace->iteration_s = out->iteration_time_s;
    trace->events = ws.r->trace;
    trace->nevents = ws.r->ntrace;
    trace->tl = *ws.tl;
    ws.r->trace = NULL;
    ws.r->ntrace = 0;
  }
  plan_warnings(sc, out);
  ws_free(&ws);
  return rc;
}

/* A cap below what the iteration draws at full clock lowers the clock
 * (energy.c): the whole iteration is priced again at that clock, from the
 * job as given.  The model works on its own copy of the job: the caller's is
 * read, never written. */
int pf_predict_traced(const pf_scenario *job, pf_prediction *out, pf_trace *trace) {
  if (trace) memset(trace, 0, sizeof *trace);
  pf_scenario *sc = malloc(sizeof *sc);
  if (!sc) return pf_error_set(PF_ENOMEM, "out of memory");
  *sc = *job;
  /* the job comes resolved: resolving the copy again derives nothing new (the plan's bytes are the copy's,
   * padding included, so memcmp compares the fields pf_plan_check may write) */
  int rc = pf_job_resolve(sc);
  if (rc == 0 && (memcmp(&sc->plan, &job->plan, sizeof sc->plan) || sc->gpus != job->gpus || sc->nodes != job->nodes))
    rc = pf_error_set(PF_EINVAL, "internal: pf_predict() was given a scenario that pf_job_resolve() has not resolved");
  if (rc < 0) {
    memset(out, 0, sizeof *out);
    free(sc);
    return rc;
  }
  rc = predict_once(sc, 0, out, trace);
  double r = out->energy.clock_ratio;
  if (rc == 0 && r < 1.0 - 1e-9) {
    *sc = *job;
    if (trace) pf_trace_free(trace);
    rc = predict_once(sc, r, out, trace);
    /* one decimal: a drop under 0.5 % printed "falls to 100 % (slow by 0 %)"; a slowdown under 0.05 % would
     * print 0.0 % and says nothing (the clock stays in JSON energy.clock_ratio and the energy line) */
    if (rc == 0 && 100 * (1 / r - 1) >= 0.05)
      pf_prediction_warn(out, "power cap %.4g W per device: the SM clock falls to %.1f %% (compute-bound kernels "
                         "slow by %.1f %%)", out->energy.cap_W, 100 * r, 100 * (1 / r - 1));
  } else if (rc == 0) {
    out->energy.clock_ratio = 1.0;
  }
  free(sc);
  if (rc == 0) rc = pf_prediction_check(out); /* an absurd number is the engine's failure, never a result */
  return rc;
}

int pf_predict(const pf_scenario *job, pf_prediction *out) { return pf_predict_traced(job, out, NULL); }
