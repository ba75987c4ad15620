/* budget.c - the cost of a training run for an allocation request (see budget.h).
 *
 * Sources of the formulas and defaults:
 *  - checkpoint size: Megatron-LM with the distributed optimizer saves the bf16
 *    model (2 B per parameter) and the optimizer's fp32 main weights and two Adam
 *    moments (12 B), 14 B per parameter; gradients are not saved (Rajbhandari
 *    et al., ZeRO, SC20, section 3.1 counts the same 2 + 12 B of model state).
 *  - checkpoint write bandwidth: every node writes its shard through its own
 *    NIC (one NIC's rate per node; Lustre clients stripe over the network the
 *    job already uses), capped by the file system's aggregate write bandwidth
 *    where the machine file gives it, else by an assumed 100 GB/s for one job
 *    (a share of a production Lustre/GPFS file system; no site figure in the
 *    sources).  --fs-bandwidth overrides both.
 *  - optimal checkpoint interval: Young, "A first order approximation to the
 *    optimum checkpoint interval", CACM 17(9), 1974: tau = sqrt(2 d M); Daly,
 *    FGCS 22(3), 2006, shows it is within a few percent of the higher-order
 *    optimum for d << M.
 *  - failure rate: Llama 3 (Dubey et al., "The Llama 3 Herd of Models", 2024,
 *    section 3.3.4, Table 5): 419 unexpected interruptions in 54 days on 16,384
 *    H100 GPUs, i.e. one per 54 x 24 x 16384 / 419 = 50,677 GPU-hours.  Used as
 *    the default GPU MTBF; --gpu-mtbf overrides it (0 turns failures off).
 *  - restart and start-up times: assumed 10 min each (job launch, container and
 *    NCCL start, loading the checkpoint; EPICURE 000:1062 notes minutes of data
 *    staging at each start); both are options.
 * Evaluation: Megatron's --eval-interval / --eval-iters, each evaluation that
 * many forward-only passes of the global batch (pf_prediction.eval_iteration_s).
 * Energy by phase (issue 11, docs/proposals.md): the training iterations, the
 * user's other phases and the work a failure loses (redone) draw the
 * predicted training power, evaluations the power of their own forward
 * kernels (pf_prediction.eval_energy); checkpoint writes, restarts and job
 * start-ups keep the nodes allocated with the GPUs waiting, at the power of
 * the same nodes whose devices hold a context and run nothing (energy.c with
 * no kernels: context_W per used device, the rest of the node as in
 * training).  Before, the whole wall time was charged at training power.
 */
#include "budget.h"

#include "collval.h"
#include "power/power.h"
#include "core/core.h"
#include "validate.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CKPT_BYTES_PER_PARAM 14.0
#define PF_ASSUMED_JOB_FS_BW 100e9
#define LLAMA3_GPU_MTBF_S (54.0 * 24 * 16384 / 419 * 3600)

void pf_budget_opts_init(pf_budget_opts *o) {
  memset(o, 0, sizeof *o);
  o->gpu_mtbf_s = LLAMA3_GPU_MTBF_S;
  o->restart_s = 600;
  o->startup_s = 600;
}

int pf_budget_compute(const pf_scenario *sc, const pf_prediction *p, const pf_budget_opts *o, pf_budget *b) {
  memset(b, 0, sizeof *b);
  const pf_workload *w = &sc->workload;
  const pf_machine *m = &sc->machine;
  double per_iter = w->kind == PF_WL_TRANSFORMER ? (double)sc->plan.gbs * w->seq : sc->plan.gbs;
  if (o->tokens > 0) b->iterations = ceil(o->tokens / per_iter);
  else if (o->epochs > 0 && o->samples > 0) b->iterations = ceil(o->epochs * o->samples / sc->plan.gbs);
  else return pf_error_set(PF_EINVAL, "give --tokens N, or --epochs E with --samples S");
  b->compute_s = b->iterations * p->iteration_time_s;
  b->other_s = b->compute_s * o->other_fraction;
  if (o->eval_interval > 0 && o->eval_iters > 0) { /* Megatron evaluates every eval_interval iterations */
    b->evaluations = floor(b->iterations / o->eval_interval);
    b->eval_s = b->evaluations * o->eval_iters * p->eval_iteration_s;
  }

  /* checkpoints */
  double params = w->kind == PF_WL_TRANSFORMER ? pf_workload_params(w, sc->plan.tp) : w->params;
  b->checkpoint_B = o->checkpoint_B > 0 ? o->checkpoint_B : CKPT_BYTES_PER_PARAM * params;
  double bw = o->fs_bw_Bps;
  if (!(bw > 0)) {
    bw = sc->nodes * (m->nic_bw_Bps > 0 ? m->nic_bw_Bps : 12.5e9);
    bw = fmin(bw, m->storage_bw_Bps > 0 ? m->storage_bw_Bps : PF_ASSUMED_JOB_FS_BW);
  }
  b->checkpoint_s = b->checkpoint_B / bw;
  b->walltime_limit_s = o->walltime_s > 0 ? o->walltime_s : m->walltime_limit_s;
  double job_work = b->walltime_limit_s > o->startup_s ? b->walltime_limit_s - o->startup_s : INFINITY;

  /* failures and the checkpoint interval */
  b->mtbf_s = o->gpu_mtbf_s > 0 ? o->gpu_mtbf_s / sc->gpus : INFINITY;
  double tau = isfinite(b->mtbf_s) ? sqrt(2 * b->checkpoint_s * b->mtbf_s) : job_work;
  if (!isfinite(tau)) tau = b->compute_s; /* neither failures nor a limit: one checkpoint at the end */
  tau = fmax(tau, b->checkpoint_s);
  if (isfinite(job_work)) tau = fmin(tau, job_work);
  b->interval_s = tau;
  b->checkpoint_frac = b->checkpoint_s / tau;
  double work = (b->compute_s + b->other_s + b->eval_s) * (1 + b->checkpoint_frac);
  double per_failure = tau / 2 + o->restart_s;
  double denom = isfinite(b->mtbf_s) ? 1 - per_failure / b->mtbf_s : 1;
  if (denom <= 0.05) { b->failures_dominate = true; denom = 0.05; }
  double total = work / denom;
  b->failures = isfinite(b->mtbf_s) ? total / b->mtbf_s : 0;
  b->failure_s = b->failures * per_failure;

  /* jobs under the wall-time limit */
  b->jobs = isfinite(job_work) ? ceil(total / job_work) : 1;
  b->startup_total_s = b->jobs * o->startup_s;
  b->wall_s = total + b->startup_total_s;

  double h = b->wall_s / 3600.0;
  int gpn = m->gpus_per_node;
  b->gpu_h = sc->gpus * h;
  b->node_h = sc->nodes * h;
  b->billed_node_h = m->billing_per_device ? (double)sc->gpus / gpn * h : b->node_h;
  b->units = b->billed_node_h * m->billing_per_node_hour;
  /* energy by phase: training power while the GPUs compute, waiting power while they do not */
  double train_W = p->iteration_time_s > 0 ? p->energy.facility_J / p->iteration_time_s : 0;
  pf_energy_use idle_use;
  memset(&idle_use, 0, sizeof idle_use);
  idle_use.window_s = 1.0;
  idle_use.clock_ratio = 1.0;
  pf_energy waiting;
  memset(&waiting, 0, sizeof waiting);
  pf_energy_window(sc, &idle_use, &waiting);
  double lost_work_s = b->failures * tau / 2;
  b->busy_s = b->compute_s + b->other_s + b->eval_s + lost_work_s;
  b->waiting_s = b->wall_s - b->busy_s; /* checkpoint writes, restarts, start-ups */
  if (b->waiting_s < 0) { b->waiting_s = 0; b->busy_s = b->wall_s; } /* failures dominate: the clamp above */
  double eval_W = p->eval_iteration_s > 0 ? p->eval_energy.facility_J / p->eval_iteration_s : train_W;
  b->energy_eval_MWh = eval_W * b->eval_s / 3.6e9;
  b->energy_busy_MWh = train_W * (b->busy_s - b->eval_s) / 3.6e9 + b->energy_eval_MWh;
  b->energy_waiting_MWh = waiting.facility_J * b->waiting_s / 3.6e9;
  b->energy_MWh = b->energy_busy_MWh + b->energy_waiting_MWh;
  return 0;
}

/* ---- range from similar measured runs ---- */

const char *pf_validation_dir(void) {
  const char *e = getenv("PREFLIGHT_VALIDATION");
  if (e && *e) return e;
  static char dir[4300];
  if (!dir[0]) snprintf(dir, sizeof dir, "%s/scenarios/validation", pf_data_dir()); /* installed or source tree */
  return dir;
}

static bool throughput_metric(pf_metric m) {
  return m == PF_MET_ITER_TIME || m == PF_MET_TIME || m == PF_MET_TFLOPS || m == PF_MET_TOKENS || m == PF_MET_SAMPLES;
}

/* Factor on cost implied by one row: measured / predicted time (cost follows time). */
static double cost_factor(const pf_vrow *r) {
  double m = r->bound == PF_BOUND_RANGE ? 0.5 * (r->measured + r->measured_hi) : r->measured;
  if (!(m > 0) || !(r->predicted > 0)) return NAN;
  bool time = r->metric == PF_MET_ITER_TIME || r->metric == PF_MET_TIME;
  return time ? m / r->predicted : r->predicted / m;
}

static int add_csv(const char *path, const pf_scenario *sc, const pf_validate_opts *vo, pf_budget_range *out,
                   double *lo, double *hi) {
  pf_vset all;
  int rc = pf_validate_read(path, &all);
  if (rc < 0) return rc;
  pf_vset sub = {0};
  snprintf(sub.path, sizeof sub.path, "%s", all.path);
  sub.rows = calloc((size_t)(all.n ? all.n : 1), sizeof *sub.rows);
  if (!sub.rows) { pf_vset_free(&all); return pf_error_set(PF_ENOMEM, "out of memory"); }
  bool tr = sc->workload.kind == PF_WL_TRANSFORMER;
  for (int i = 0; i < all.n; i++) {
    const pf_vrow *r = &all.rows[i];
    if (strcmp(r->use, "check") != 0 || strcmp(r->machine, sc->machine.id) != 0 || !throughput_metric(r->metric) ||
        (r->bound != PF_BOUND_EXACT && r->bound != PF_BOUND_RANGE))
      continue;
    pf_workload w;
    bool row_tr = r->model[0] ? pf_workload_get(r->model, &w) == 0 && w.kind == PF_WL_TRANSFORMER : r->layers > 0;
    if (row_tr != tr) continue;
    sub.rows[sub.n++] = *r;
  }
  if (sub.n > 0 && (rc = pf_validate_run(&sub, vo)) == 0) {
    const char *base = strrchr(path, '/');
    base = base ? base + 1 : path;
    for (int i = 0; i < sub.n; i++) {
      double f = sub.rows[i].status == PF_ROW_PREDICTED ? cost_factor(&sub.rows[i]) : NAN;
      if (!isfinite(f)) continue;
      *lo = fmin(*lo, f);
      *hi = fmax(*hi, f);
      size_t l = strlen(out->rows);
      snprintf(out->rows + l, sizeof out->rows - l, "%s%s:%d", out->n ? ", " : "", base, sub.rows[i].line);
      out->n++;
    }
  }
  free(sub.rows);
  pf_vset_free(&all);
  return rc;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int pf_budget_similar(const pf_scenario *sc, const char *dir_or_csv, const pf_validate_opts *vo, pf_budget_range *r) {
  memset(r, 0, sizeof *r);
  double lo = INFINITY, hi = -INFINITY;
  int rc = 0;
  size_t n = strlen(dir_or_csv);
  if (n > 4 && strcmp(dir_or_csv + n - 4, ".csv") == 0) {
    rc = add_csv(dir_or_csv, sc, vo, r, &lo, &hi);
  } else {
    DIR *d = opendir(dir_or_csv);
    if (!d) return pf_error_set(PF_ENOENT, "%s: cannot open the validation folder", dir_or_csv);
    char *names[64];
    int nn = 0;
    struct dirent *e;
    while ((e = readdir(d)) && nn < 64) {
      size_t l = strlen(e->d_name);
      if (l > 4 && strcmp(e->d_name + l - 4, ".csv") == 0) names[nn++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)nn, sizeof *names, by_name); /* deterministic order */
    for (int i = 0; i < nn; i++) {
      char path[PF_PATH_MAX * 2];
      snprintf(path, sizeof path, "%s/%s", dir_or_csv, names[i]);
      /* files of measured collectives (collval.h) are not runs */
      if (rc == 0 && names[i] && pf_collval_kind(path) == 0) rc = add_csv(path, sc, vo, r, &lo, &hi);
      free(names[i]);
    }
  }
  if (rc < 0) return rc;
  if (r->n >= PF_RANGE_MIN_ROWS) {
    r->lo = lo;
    r->hi = hi;
  } else {
    snprintf(r->why, sizeof r->why, "%d similar measured run%s (`check` rows of %s with a %s and a throughput or "
             "time metric) where at least %d are needed", r->n, r->n == 1 ? "" : "s", sc->machine.id,
             sc->workload.kind == PF_WL_TRANSFORMER ? "transformer" : "non-transformer", PF_RANGE_MIN_ROWS);
  }
  return 0;
}
