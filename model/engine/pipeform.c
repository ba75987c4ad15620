/* pipeform.c - the representative pipeline in closed form (pipeline.h pf_pipeline_closed_form): engine
 * "analytic", tune's screening, and DualPipe in every engine.
 *
 * Closed form (engine "analytic"): makespan = M x max_s(t_s + x_s) + sum of the
 * other stages' t_s + 2 (P-1) hop times, with t_s = forward + backward of a
 * microbatch on stage s and x_s its blocking exchanges of a microbatch under 1F1B (the hops of the boundaries
 * on either side; 0 for the other schedules) (exact for 1F1B with free transfers, also with uneven stages).  Each
 * stage's end (where its DP collectives start, dpsync.c) follows the cooldown's gradient chain (cooldown_ends), as
 * in the DES.  The interleaved schedule is a list schedule instead (interleaved_list): each stage's operations in
 * Megatron's order, each when its stage is free and its input has arrived, one hop after the neighbouring virtual
 * stage; the same schedule as the DES without SimGrid's link sharing, so the fill's hops (the first microbatch
 * crosses all 2 (P V - 1) boundaries of the virtual stages, not 2 (P - 1) / V), uneven chunks
 * (pf_pipeline_chunk_times) and the stage ends come out as the DES gives them.  The formula above with the fill
 * divided by V is its fallback when memory runs out.
 *
 * DualPipe (--schedule dualpipe; DeepSeek-V3, arXiv 2412.19437 section 3.2.1 and Table 2; deepseek-ai/DualPipe)
 * is priced in closed form in every engine, not as an event schedule: rank d holds stage d and stage
 * P - 1 - d (examples/example_dualpipe.py: full_modules[rank], full_modules[pp_size - 1 - rank]) and half the
 * M microbatches enter at each end, so rank d runs M/2 microbatches through each of its two stages,
 * t_d = (t_s + t_{P-1-s}) / 2 a microbatch, and the report's Table 2 gives the bubble:
 *     makespan = M max_d t_d + (P/2 - 1)(F&B + B - 3W) + the 1F1B fill's 2 (P-1) hop times
 * with F, B the slowest rank's forward and full backward of a microbatch (their exposed communication
 * included), F&B = F + B (the forward and backward chunks overlapped: their all-to-alls are what
 * --overlap-moe-expert-parallel-comm hides, priced in F and B), and W the weight-gradient part of the
 * backward, W = min(gemm / 3, B / 2) (a layer's forward, input-gradient and weight-gradient GEMMs have the
 * same FLOPs; gemm_s is the compute-bound kernels' time of a microbatch).  The P2P sends are kept as 1F1B's
 * fill though DualPipe hides them too (an upper bound; docs/moe.md).
 */
#include "pipeline.h"

#include "core/core.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef pf_sched_op op;

/* DualPipe (header): rank d's time per microbatch and the Table 2 bubble of the slowest rank. */
static void dualpipe(const pf_stage_work *w, int P, int M, double hop, pf_pipeline_result *r) {
  double worst = -1, F = 0, B = 0, W = 0;
  for (int d = 0; d < P / 2; d++) {
    const pf_stage_work *a = &w[d], *b = &w[P - 1 - d];
    double f = 0.5 * (a->fwd_s + a->fwd_tp_s + b->fwd_s + b->fwd_tp_s);
    double bw = 0.5 * (a->bwd_s + a->bwd_tp_s + b->bwd_s + b->bwd_tp_s);
    double t = f + bw;
    r->stage_busy_s[d] = r->stage_busy_s[P - 1 - d] = M * t;
    if (t > worst) worst = t, F = f, B = bw, W = fmin(0.5 * (a->gemm_s + b->gemm_s) / 3.0, bw / 2.0);
  }
  double bubble = fmax(0.0, (P / 2 - 1) * ((F + B) + B - 3.0 * W));
  r->makespan_s = M * worst + bubble + hop;
}

/* Each stage's end and its last microbatch's backward, from the cooldown (1F1B, GPipe): stage 0 ends at the
 * makespan and every stage s ends one backward and one hop of boundary s - 1 before stage s - 1 does, the
 * gradient chain of the last microbatch (exact for equal stages; the DES finds the same when no stage waits on
 * another in the cooldown).  DualPipe: each rank ends at the makespan.  The interleaved schedule's come from its
 * list schedule (interleaved_list). */
static void cooldown_ends(const pf_stage_work *w, const pf_pipe_net *net, bool dualpipe, pf_pipeline_result *r,
                          int P) {
  double end = r->makespan_s;
  for (int s = 0; s < P; s++) {
    double b = w[s].bwd_s + w[s].bwd_tp_s;
    if (s > 0 && !dualpipe)
      end -= w[s - 1].bwd_s + w[s - 1].bwd_tp_s + pf_pipe_net_time(net, s - 1, w[s - 1].p2p_bytes) + net->recv_s;
    r->stage_end_s[s] = fmax(end, 0.0);
    r->stage_first_bwd_s[s] = fmax(end - b, 0.0);
  }
}

/* The interleaved schedule as a list schedule (header): every stage runs its operations in Megatron's order
 * (pf_pipeline_schedule), each as soon as the stage is free and its input has arrived, an input arriving one hop
 * after the neighbouring virtual stage finished (its send is eager and detached, as in the DES) and taking the
 * receive's gather; so the fill's and the drain's hops, and where a stage waits on the ring in the steady state,
 * come out as the DES gives them, less the contention of two sends on one link.  Long schedules are run at fewer
 * microbatches and extended by the caller, as the DES is (predict.c run_pipeline).  Returns false, r untouched,
 * when out of memory or when a schedule could not be placed (the formula's result then stands). */
static bool interleaved_list(const pf_scenario *sc, const pf_stage_work *w, const pf_pipe_net *net,
                             pf_pipeline_result *r) {
  const pf_plan *p = &sc->plan;
  bool done = false;
  int P = p->pp, V = p->vstages, M = p->grad_accum, K = P * V, n = 2 * M * V;
  op *ops = malloc((size_t)P * n * sizeof *ops);
  int *cnt = calloc((size_t)P, sizeof *cnt), *next = calloc((size_t)P, sizeof *next);
  double *arr = malloc(2 * (size_t)K * M * sizeof *arr), *tf = malloc(2 * (size_t)P * 64 * sizeof *tf);
  double *free_at = calloc((size_t)P, sizeof *free_at), *first = malloc((size_t)P * sizeof *first);
  double *busy = calloc((size_t)P, sizeof *busy);
  if (!ops || !cnt || !next || !arr || !tf || !free_at || !first || !busy) goto out;
  double *tb = tf + (size_t)P * 64, *fwd = arr, *bwd = arr + (size_t)K * M; /* arrivals at [virtual stage][mb] */
  for (size_t i = 0; i < 2 * (size_t)K * M; i++) arr[i] = -1;
  for (int s = 0; s < P; s++) {
    cnt[s] = pf_pipeline_schedule(p, s, ops + (size_t)s * n);
    pf_pipeline_chunk_times(sc, &w[s], s, tf + (size_t)s * 64, tb + (size_t)s * 64);
    first[s] = -1;
  }
  int left = 0;
  for (int s = 0; s < P; s++) left += cnt[s];
  for (bool moved = true; left > 0 && moved;) {
    moved = false;
    for (int s = 0; s < P; s++)
      while (next[s] < cnt[s]) {
        const op *o = &ops[(size_t)s * n + next[s]];
        int k = o->chunk * P + s;
        bool f = o->kind == 'F';
        bool has_in = f ? k > 0 : k < K - 1;
        double in = has_in ? (f ? fwd : bwd)[(size_t)k * M + o->mb] : 0;
        if (has_in && in < 0) break; /* not arrived yet: the other stages first */
        double t0 = fmax(free_at[s], has_in ? in + net->recv_s : 0);
        double t1 = t0 + (f ? tf : tb)[(size_t)s * 64 + o->chunk];
        if (!f && o->mb == M - 1 && first[s] < 0) first[s] = t0;
        free_at[s] = t1;
        busy[s] += t1 - t0;
        /* to virtual stage k + 1 over boundary s, or k - 1 over boundary s - 1; the wrap between the last stage and
         * stage 0 is link P - 1 of the DES's platform, link 0 itself at P 2 (write_platform) */
        int b = f ? s : (s - 1 + P) % P;
        if (b == P - 1 && P == 2) b = 0;
        if (f && k < K - 1) fwd[(size_t)(k + 1) * M + o->mb] = t1 + pf_pipe_net_time(net, b, w[s].p2p_bytes);
        if (!f && k > 0) bwd[(size_t)(k - 1) * M + o->mb] = t1 + pf_pipe_net_time(net, b, w[s].p2p_bytes);
        next[s]++, left--, moved = true;
      }
  }
  if (left == 0) { /* every operation placed (a schedule that deadlocked keeps the closed form) */
    double mk = 0;
    for (int s = 0; s < P; s++) {
      r->stage_end_s[s] = free_at[s];
      r->stage_first_bwd_s[s] = first[s];
      r->stage_busy_s[s] = busy[s];
      mk = fmax(mk, free_at[s]);
    }
    r->makespan_s = mk;
    done = true;
  }
out:
  free(ops), free(cnt), free(next), free(arr), free(tf), free(free_at), free(first), free(busy);
  return done;
}

void pf_pipeline_closed_form(const pf_scenario *sc, const pf_stage_work *w, const pf_pipe_net *net,
                             pf_pipeline_result *r) {
  const pf_plan *p = &sc->plan;
  int P = p->pp, M = p->grad_accum;
  double worst = 0, sum = 0, hop = 0;
  for (int s = 0; s < P; s++) {
    double t = w[s].fwd_s + w[s].bwd_s + w[s].fwd_tp_s + w[s].bwd_tp_s;
    r->stage_busy_s[s] = M * t;
    sum += t;
    if (t > worst) worst = t;
  }
  for (int s = 0; s + 1 < P; s++) hop += 2 * (pf_pipe_net_time(net, s, w[s].p2p_bytes) + net->recv_s);
  if (pf_pipeline_blocking_p2p(p)) { /* each stage's cycle holds its exchanges (header) */
    double cyc = 0, tw = 0;
    for (int s = 0; s < P; s++) {
      double t = w[s].fwd_s + w[s].bwd_s + w[s].fwd_tp_s + w[s].bwd_tp_s, x = 0;
      if (s + 1 < P) x += pf_pipe_net_time(net, s, w[s].p2p_bytes) + net->recv_s;
      if (s > 0) x += pf_pipe_net_time(net, s - 1, w[s - 1].p2p_bytes) + net->recv_s;
      if (t + x > cyc) cyc = t + x, tw = t;
    }
    worst = cyc;
    sum += cyc - tw; /* the fill below keeps the other stages' compute */
  }
  double fill = (sum - worst) + hop;
  if (p->schedule == PF_SCHED_INTERLEAVED) fill /= p->vstages;
  r->makespan_s = M * worst + fill;
  if (p->schedule == PF_SCHED_DUALPIPE) dualpipe(w, P, M, hop, r);
  cooldown_ends(w, net, p->schedule == PF_SCHED_DUALPIPE, r, P);
  r->events = 0;
  if (p->schedule == PF_SCHED_INTERLEAVED && p->vstages > 1) interleaved_list(sc, w, net, r); /* (header) */
}

