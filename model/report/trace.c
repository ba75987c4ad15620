/* trace.c - Chrome / Perfetto trace of one simulated iteration.
 *
 * The Trace Event Format (Google, "Trace Event Format" document, the JSON
 * object form with a traceEvents array) read by chrome://tracing and
 * ui.perfetto.dev.  Processes group the tracks by kind, threads are the
 * pipeline stages:
 *   pid 0 "compute (incl. TP)"   one track per stage: F<mb>[.<chunk>] / B<mb> from the DES
 *   pid 1 "P2P sends"            per stage a forward-send and a backward-send track
 *   pid 2 "DP collectives"       per stage: gradient reduce-scatter / all-reduce and the
 *                                parameter all-gather, with the start and end of the
 *                                contention timeline (pf_coll_timeline); with
 *                                --overlap-grad-reduce the gradient span runs from
 *                                the first bucket's start to the last one's end, with
 *                                --overlap-param-gather the hidden part of the
 *                                all-gather sits at the start, the exposed part at
 *                                the end
 *   pid 3 "optimizer"            per stage: the optimizer step, and inside it the step's
 *                                kernels (compute/stepkernels.c) one after another,
 *                                each as long as the model prices it
 *   pid 4 "FSDP collectives"     with ZeRO-2/3 (comm/fsdp.c), per stage: inside each forward and
 *                                backward, one unit's parameter all-gather per unit ("AG u<k>", in
 *                                forward and, at ZeRO-3, again in backward) and its gradient
 *                                reduce-scatter after its backward ("RS u<k>"), each as long as
 *                                one unit's collective; the first gather before the first unit,
 *                                the others prefetched one unit ahead, spread over the interval
 *   pid 5 "EP all-to-all"        with expert parallelism (comm/epa2a.c), per stage: inside each forward, per
 *                                MoE layer its token dispatch ("dispatch L<k>") in the middle of the layer's
 *                                share of the interval (after the attention and the router) and its combine
 *                                ("combine L<k>") at the share's end; inside each backward the mirror images
 *                                in reverse layer order ("combine grad L<k>" first, "dispatch grad L<k>" at
 *                                the middle), each as long as the call (the forward's dispatch may be FP8,
 *                                the rest bf16: epa2a.c)
 * Times are microseconds with nanosecond resolution; every X event has name,
 * cat, ph, ts, dur, pid and tid.
 */
#include "compute/compute.h"
#include "engine/engine.h"

#include "core/core.h"
#include "report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void meta(cJSON *ev, const char *what, int pid, int tid, const char *name) {
  cJSON *m = cJSON_CreateObject();
  cJSON_AddStringToObject(m, "name", what);
  cJSON_AddStringToObject(m, "ph", "M");
  cJSON_AddNumberToObject(m, "pid", pid);
  cJSON_AddNumberToObject(m, "tid", tid);
  cJSON *a = cJSON_AddObjectToObject(m, "args");
  cJSON_AddStringToObject(a, "name", name);
  cJSON_AddItemToArray(ev, m);
}

static void span(cJSON *ev, int pid, int tid, const char *name, const char *cat, double t0, double t1);

/* The step kernels of stage s laid from the optimizer step's start (nothing when they cannot be listed). */
static void step_kernels(cJSON *ev, const pf_scenario *sc, int s, double t0, double t1) {
  pf_kernel_rows R;
  if (pf_stage_kernel_rows(sc, s, &R) < 0) return;
  for (int i = 0; i < R.n; i++) {
    const pf_kernel_row *r = &R.r[i];
    if (strcmp(r->phase, "step") || r->limit == PF_LIMIT_N || !(r->total_s > 0)) continue;
    double e = fmin(t1, t0 + r->total_s);
    span(ev, 3, s, r->name, "step_kernel", t0, e);
    t0 = e;
  }
  pf_kernel_rows_free(&R);
}

static void span(cJSON *ev, int pid, int tid, const char *name, const char *cat, double t0, double t1) {
  if (!(t1 >= t0)) return;
  cJSON *e = cJSON_CreateObject();
  cJSON_AddStringToObject(e, "name", name);
  cJSON_AddStringToObject(e, "cat", cat);
  cJSON_AddStringToObject(e, "ph", "X");
  cJSON_AddNumberToObject(e, "ts", round(t0 * 1e9) / 1e3);
  cJSON_AddNumberToObject(e, "dur", round((t1 - t0) * 1e9) / 1e3);
  cJSON_AddNumberToObject(e, "pid", pid);
  cJSON_AddNumberToObject(e, "tid", tid);
  cJSON_AddItemToArray(ev, e);
}

/* The per-unit collectives of one forward or backward interval [t0, t1] of stage s (pid 4, header). */
static void fsdp_units(cJSON *ev, const pf_iter_timeline *tl, int s, int V, char kind, double t0, double t1) {
  int n = tl->fsdp_units[s] / (V > 0 ? V : 1);
  double a = tl->fsdp_level >= 3 ? tl->fsdp_ag_s[s] : 0, r = tl->fsdp_rs_s[s];
  if (n < 1 || (a <= 0 && (kind == 'F' || r <= 0))) return;
  double slot = fmax(0.0, t1 - t0 - a) / n;
  char nm[32];
  for (int u = 0; u < n; u++) {
    int k = kind == 'F' ? u : n - 1 - u; /* the backward runs the units in reverse */
    double g = u == 0 ? t0 : t0 + a + (u - 1) * slot; /* unit u gathered while unit u-1 computes */
    if (a > 0) {
      snprintf(nm, sizeof nm, "AG u%d", k);
      span(ev, 4, s, nm, "fsdp_allgather", g, fmin(t1, g + a));
    }
    if (kind == 'B' && r > 0) {
      double e = t0 + a + (u + 1) * slot; /* after the unit's backward */
      snprintf(nm, sizeof nm, "RS u%d", k);
      span(ev, 4, s, nm, "fsdp_reduce_scatter", fmin(e, t1), fmin(e, t1) + r);
    }
  }
}

/* The all-to-alls of one forward or backward interval [t0, t1] of stage s (pid 5, header): the stage's MoE
 * layers over the V chunks, each layer an equal share of the interval; the forward's combine and the
 * backward's two calls are one combine's time each, the forward's dispatch the rest of its time. */
static void ep_calls(cJSON *ev, const pf_iter_timeline *tl, int s, int V, char kind, double t0, double t1) {
  int L = tl->ep_layers[s], n = L / (V > 0 ? V : 1);
  if (L < 1 || n < 1) return;
  double comb = tl->ep_bwd_s[s] / (2.0 * L), disp = tl->ep_fwd_s[s] / L - comb, slot = (t1 - t0) / n;
  double first = kind == 'F' ? disp : comb, last = comb; /* the call in the middle, the call at the end */
  const char *mid = kind == 'F' ? "dispatch" : "dispatch grad", *end = kind == 'F' ? "combine" : "combine grad";
  char nm[48];
  for (int u = 0; u < n; u++) {
    int k = kind == 'F' ? u : n - 1 - u;
    double a = t0 + u * slot, b = a + slot;
    if (kind == 'F') {
      snprintf(nm, sizeof nm, "%s L%d", mid, k);
      span(ev, 5, s, nm, "ep_a2a", fmax(a, a + 0.5 * (slot - first - last)), fmin(b, a + 0.5 * (slot - first - last) + first));
      snprintf(nm, sizeof nm, "%s L%d", end, k);
      span(ev, 5, s, nm, "ep_a2a", fmax(a, b - last), b);
    } else { /* the backward meets the combine's gradient first, the dispatch's in the middle */
      snprintf(nm, sizeof nm, "%s L%d", end, k);
      span(ev, 5, s, nm, "ep_a2a", a, fmin(b, a + last));
      snprintf(nm, sizeof nm, "%s L%d", mid, k);
      span(ev, 5, s, nm, "ep_a2a", fmax(a, a + 0.5 * slot), fmin(b, a + 0.5 * slot + first));
    }
  }
}

int pf_trace_write(const pf_scenario *sc, const pf_trace *t, const char *path) {
  const pf_iter_timeline *tl = &t->tl;
  cJSON *root = cJSON_CreateObject();
  cJSON *ev = cJSON_AddArrayToObject(root, "traceEvents");
  int P = sc->plan.pp;
  meta(ev, "process_name", 0, 0, "compute (incl. TP)");
  meta(ev, "process_name", 1, 0, "P2P sends");
  meta(ev, "process_name", 2, 0, "DP collectives");
  meta(ev, "process_name", 3, 0, "optimizer");
  if (tl->fsdp_level >= 2) meta(ev, "process_name", 4, 0, "FSDP collectives");
  bool ep = false;
  for (int s = 0; s < P; s++) ep |= tl->ep_layers[s] > 0;
  if (ep) meta(ev, "process_name", 5, 0, "EP all-to-all");
  for (int s = 0; s < P; s++) {
    char nm[64];
    snprintf(nm, sizeof nm, "stage %d", s);
    meta(ev, "thread_name", 0, s, nm);
    meta(ev, "thread_name", 2, s, nm);
    meta(ev, "thread_name", 3, s, nm);
    if (tl->fsdp_level >= 2) meta(ev, "thread_name", 4, s, nm);
    if (ep) meta(ev, "thread_name", 5, s, nm);
    snprintf(nm, sizeof nm, "stage %d activations ->", s);
    meta(ev, "thread_name", 1, 2 * s, nm);
    snprintf(nm, sizeof nm, "stage %d <- gradients", s);
    meta(ev, "thread_name", 1, 2 * s + 1, nm);
  }
  int interleaved = sc->plan.schedule == PF_SCHED_INTERLEAVED;
  for (int i = 0; i < t->nevents; i++) {
    const pf_pipe_event *e = &t->events[i];
    char nm[48];
    char k = e->kind == 'S' ? 'F' : e->kind == 'R' ? 'B' : e->kind;
    if (interleaved) snprintf(nm, sizeof nm, "%c%d.%d", k, e->microbatch, e->chunk);
    else snprintf(nm, sizeof nm, "%c%d", k, e->microbatch);
    if (e->kind == 'F' || e->kind == 'B') {
      span(ev, 0, e->stage, nm, e->kind == 'F' ? "forward" : "backward", e->start_s, e->end_s);
      if (tl->fsdp_level >= 2)
        fsdp_units(ev, tl, e->stage, interleaved ? sc->plan.vstages : 1, e->kind, e->start_s, e->end_s);
      if (ep) ep_calls(ev, tl, e->stage, interleaved ? sc->plan.vstages : 1, e->kind, e->start_s, e->end_s);
    }
    else
      span(ev, 1, 2 * e->stage + (e->kind == 'R'), nm, e->kind == 'S' ? "p2p_fwd" : "p2p_bwd", e->start_s, e->end_s);
  }
  for (int s = 0; tl && s < P; s++) {
    if (tl->grad_end_s[s] > tl->grad_start_s[s])
      span(ev, 2, s, tl->grad_name, "dp_comm", tl->grad_start_s[s], tl->grad_end_s[s]);
    if (tl->opt_end_s[s] > tl->opt_start_s[s]) {
      span(ev, 3, s, "optimizer step", "optimizer", tl->opt_start_s[s], tl->opt_end_s[s]);
      step_kernels(ev, sc, s, tl->opt_start_s[s], tl->opt_end_s[s]);
    }
    if ((s == 0 || s == P - 1) && tl->emb_end_s > tl->emb_start_s)
      span(ev, 2, s, "tied-embedding all-reduce", "dp_comm", tl->emb_start_s, tl->emb_end_s);
    if (tl->ag_end_s[s] > tl->ag_start_s[s])
      span(ev, 2, s, tl->ag_name, "dp_comm", tl->ag_start_s[s], tl->ag_end_s[s]);
    if (tl->ag_hidden_s[s] > 0) /* steady state: the previous step's all-gather under the first forward */
      span(ev, 2, s, "parameter all-gather (overlapped with the first forward)", "dp_comm", 0, tl->ag_hidden_s[s]);
  }
  if (tl && tl->slow_end_s > tl->slow_start_s)
    span(ev, 3, 0, "compute slowed by hidden DP collectives (all stages)", "interference", tl->slow_start_s,
         tl->slow_end_s);
  cJSON_AddStringToObject(root, "displayTimeUnit", "ms");
  cJSON *m = cJSON_AddObjectToObject(root, "metadata");
  cJSON_AddStringToObject(m, "machine", sc->machine.id);
  cJSON_AddStringToObject(m, "model", sc->workload.id);
  cJSON_AddNumberToObject(m, "iteration_time_s", t->iteration_s);
  char *txt = cJSON_PrintUnformatted(root);
  cJSON_Delete(root);
  if (!txt) return pf_error_set(PF_ENOMEM, "out of memory");
  size_t n = strlen(txt);
  char *withnl = malloc(n + 2);
  if (!withnl) { free(txt); return pf_error_set(PF_ENOMEM, "out of memory"); }
  memcpy(withnl, txt, n);
  withnl[n] = '\n';
  withnl[n + 1] = '\0';
  free(txt);
  int rc = pf_write_file_atomic(path, withnl);
  free(withnl);
  return rc;
}
