/* vmetric.c - what a validation row measures: metrics, their units and the
 * unit scales a CSV may write, metering scopes and bounds; and the statistics
 * of the errors (median, mean, max |error|: pf_vstats_of, core/stats.c) over
 * a file's predicted rows.
 *
 * What each metric is predicted from (vpredict.c; columns in
 * docs/validation.md, DESIGN 4.3 plus optional columns):
 *   iteration_time_s, tflops_per_gpu, tokens_per_s, samples_per_s: the
 *     prediction's fields (tflops_per_gpu counts model FLOPs as Megatron-LM's
 *     training_log does; shared/research/style-and-ecosystem.md B.3)
 *   time_s: iteration_time_s x iterations (e.g. MAELSTROM epoch times)
 *   scaling_efficiency: TFLOP/s per GPU at nodes over TFLOP/s per GPU at
 *     baseline_nodes (EPICURE 000_ff12095d05d26000.txt:843-847; for the vision
 *     benchmark's fixed per-GPU batch this equals t_batch(1)/t_batch(n)).
 *     weak: the baseline keeps the gradient-accumulation steps per replica;
 *     strong: the baseline keeps the global batch.
 *   throughput_ratio: samples/s at the row's micro- and global batch over
 *     samples/s of the same configuration at baseline_mbs (the global batch
 *     scaled with it, dp and gradient accumulation kept): how a model's rate
 *     follows its batch (MAELSTROM AP5, 001_dfe9b61861599094.txt:1301-1306).
 *   energy_J, avg_power_W: in the row's metering scope (vpredict.c,
 *     docs/energy.md): training iterations only (gpu, gpu_per_gpu, node:
 *     energy x iterations), or a whole job (gpu_job, node_gpus_job,
 *     node_job) over its measured duration_s with `iterations` steps in it,
 *     so the energy error is judged with the time held at the measured value.
 * Error of a bound is 0 when the prediction satisfies it, else the relative
 * distance to it (validate.h).
 */
#include "validate.h"

#include "core/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *metric_names[PF_MET_COUNT] = {"iteration_time_s", "time_s",           "tflops_per_gpu",
                                                 "tokens_per_s",     "samples_per_s",    "scaling_efficiency",
                                                 "energy_J",         "avg_power_W",      "throughput_ratio"};
static const char *metric_units[PF_MET_COUNT] = {"s", "s", "TFLOP/s", "tokens/s", "samples/s", "%", "J", "W", "x"};
static const char *scope_names[] = {"", "gpu", "gpu_per_gpu", "gpu_job", "node", "node_job", "node_gpus_job",
                                    "package_job"};
static const char *bound_names[] = {"", "lower", "upper", "range"};

const char *pf_metric_name(pf_metric m) { return m < PF_MET_COUNT ? metric_names[m] : "?"; }
const char *pf_metric_unit(pf_metric m) { return m < PF_MET_COUNT ? metric_units[m] : "?"; }
const char *pf_scope_name(pf_scope s) { return s <= PF_SCOPE_PACKAGE_JOB ? scope_names[s] : "?"; }
const char *pf_bound_name(pf_bound b) { return b <= PF_BOUND_RANGE ? bound_names[b] : "?"; }

int pf_metric_parse(const char *s, pf_metric *out) {
  for (int i = 0; i < PF_MET_COUNT; i++)
    if (strcmp(s, metric_names[i]) == 0) { *out = (pf_metric)i; return 0; }
  return PF_EINVAL;
}

typedef struct { const char *unit; double scale; } unit_scale;

int pf_metric_unit_scale(pf_metric m, const char *u, double *scale) {
  static const unit_scale times[] = {{"s", 1}, {"ms", 1e-3}, {"us", 1e-6}, {"min", 60}, {"h", 3600}, {NULL, 0}};
  static const unit_scale tflops[] = {{"TFLOP/s", 1}, {"TFLOPS", 1}, {"TFLOP/s/GPU", 1}, {"GFLOP/s", 1e-3}, {NULL, 0}};
  static const unit_scale tokens[] = {{"tokens/s", 1}, {"1/s", 1}, {NULL, 0}};
  static const unit_scale samples[] = {{"samples/s", 1}, {"images/s", 1}, {"1/s", 1}, {NULL, 0}};
  static const unit_scale eff[] = {{"%", 0.01}, {"fraction", 1}, {"1", 1}, {NULL, 0}};
  static const unit_scale energy[] = {{"J", 1}, {"kJ", 1e3}, {"MJ", 1e6}, {"Wh", 3600}, {"kWh", 3.6e6}, {"MWh", 3.6e9}, {NULL, 0}};
  static const unit_scale power[] = {{"W", 1}, {"kW", 1e3}, {NULL, 0}};
  static const unit_scale ratio[] = {{"x", 1}, {"1", 1}, {"fraction", 1}, {NULL, 0}};
  const unit_scale *t = NULL;
  switch (m) {
  case PF_MET_ITER_TIME: case PF_MET_TIME: t = times; break;
  case PF_MET_TFLOPS: t = tflops; break;
  case PF_MET_TOKENS: t = tokens; break;
  case PF_MET_SAMPLES: t = samples; break;
  case PF_MET_SCALING: t = eff; break;
  case PF_MET_ENERGY: t = energy; break;
  case PF_MET_POWER: t = power; break;
  case PF_MET_BATCH_RATIO: t = ratio; break;
  default: return PF_EINVAL;
  }
  for (; t->unit; t++)
    if (strcmp(u, t->unit) == 0) { *scale = t->scale; return 0; }
  return PF_EINVAL;
}

pf_vstats pf_validate_stats(const pf_vset *s, bool (*keep)(const pf_vrow *, const void *), const void *arg) {
  pf_vstats st = {0, NAN, NAN, NAN};
  double *x = malloc((size_t)(s->n > 0 ? s->n : 1) * sizeof *x);
  if (!x) return st;
  int n = 0;
  for (int i = 0; i < s->n; i++) {
    const pf_vrow *r = &s->rows[i];
    if (r->status != PF_ROW_PREDICTED || (keep && !keep(r, arg))) continue;
    x[n++] = 100.0 * fabs(r->error);
  }
  st = pf_vstats_of(x, n);
  free(x);
  return st;
}
