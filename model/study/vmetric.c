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
  int i = pf_name_index(s, metric_names, PF_MET_COUNT, false);
  if (i >= 0) { *out = (pf_metric)i; return 0; }
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

/* Devices a metered scope covers, least and most: the row's GPUs (or nodes x devices per node), whole nodes
 * for node scopes; 1 to the whole machine when the row gives neither. */
static void scope_devices(const pf_vrow *r, const pf_machine *m, double *lo, double *hi) {
  double gpn = m->gpus_per_node > 0 ? m->gpus_per_node : 1;
  double gpus = r->gpus > 0 ? r->gpus : r->nodes > 0 ? r->nodes * gpn : 0;
  double nodes = r->nodes > 0 ? r->nodes : r->gpus > 0 ? ceil(r->gpus / gpn) : 0;
  bool node_scope = r->scope == PF_SCOPE_NODE || r->scope == PF_SCOPE_NODE_JOB || r->scope == PF_SCOPE_NODE_GPUS_JOB;
  double k = r->scope == PF_SCOPE_GPU_PER_GPU ? 1 : node_scope ? nodes * gpn : gpus;
  *lo = k > 0 ? k : 1;
  *hi = k > 0 ? k : fmax(1, m->nodes * gpn);
}

static int value_plausible(const pf_vrow *r, const pf_machine *m, double v, char *why, size_t n) {
  static const pf_plaus_id of[PF_MET_COUNT] = {
      [PF_MET_ITER_TIME] = PF_PLAUS_ITERATION, [PF_MET_TIME] = PF_PLAUS_ITERATION,
      [PF_MET_TFLOPS] = PF_PLAUS_GPU_RATE,     [PF_MET_TOKENS] = PF_PLAUS_ITEM_RATE,
      [PF_MET_SAMPLES] = PF_PLAUS_ITEM_RATE,   [PF_MET_SCALING] = PF_PLAUS_SCALING,
      [PF_MET_ENERGY] = PF_PLAUS_MEASURED_ENERGY, [PF_MET_POWER] = PF_PLAUS_DEVICE_POWER,
      [PF_MET_BATCH_RATIO] = PF_PLAUS_BATCH_RATIO};
  if (r->metric >= PF_MET_COUNT) return 0;
  const pf_plaus *b = pf_plaus_get(of[r->metric]);
  double x = r->metric == PF_MET_TFLOPS ? v * 1e12 : v, lo = 1, hi = 1;
  char pre[96] = "";
  if (r->metric == PF_MET_TIME && r->iterations > 0) {
    x = v / r->iterations;
    snprintf(pre, sizeof pre, "per iteration (%g iterations), ", r->iterations);
  }
  if (r->metric == PF_MET_POWER) {
    scope_devices(r, m, &lo, &hi);
    x = v / hi > b->hi ? v / hi : v / lo; /* the most devices against the ceiling, the fewest against the floor */
    snprintf(pre, sizeof pre, "per device (%g in the %s scope), ", x == v / hi ? hi : lo, pf_scope_name(r->scope));
  }
  if (pf_plaus_ok(b, x)) return 0;
  char w[512];
  snprintf(why, n, "%s%s", pre, pf_plaus_why(b, x, w, sizeof w));
  return 1;
}

int pf_vrow_plausible(const pf_vrow *r, const pf_machine *m, char *why, size_t n) {
  if (value_plausible(r, m, r->measured, why, n)) return 1;
  if (r->bound == PF_BOUND_RANGE && value_plausible(r, m, r->measured_hi, why, n)) return 2;
  return 0;
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
