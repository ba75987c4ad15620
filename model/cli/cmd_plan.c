/* cmd_plan.c - `preflight plan`: what a proposal must request.
 *
 * For each scale (the node counts given, or powers of two from the smallest
 * that fits up to the site's per-job limit) the job is predicted with the
 * user's parallel plan, or with the best plan `tune` finds when no split was
 * given; budget.c turns each prediction into wall time, jobs under the site's
 * wall-time limit, checkpoint and failure overheads, GPU-hours, node-hours,
 * billing units and energy.  Efficiency is relative to the smallest scale that
 * fits (DESIGN 5.6).  It recommends the fastest, the cheapest, the best time x
 * energy and - with --min-efficiency - the largest scale still above it, and
 * gives a range from the validation error of similar measured runs.
 */
#include "cli.h"
#include "options.h"
#include "plan.h"
#include "validate_cli.h"

#include "study/study.h"
#include "core/core.h"
#include "report/report.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const pf_opt pf_plan_opts[] = {
    {"tokens", "N", "training tokens to process (e.g. 3e11)"},
    {"epochs", "E", "epochs (with --samples)"},
    {"samples", "S", "samples per epoch (with --epochs)"},
    {"overhead", "F", "other phases you run as a fraction of training time (default 0)"},
    {"eval-interval", "N", "evaluate every N iterations, as Megatron's --eval-interval (default: no evaluation; 1000 with --eval-iters)"},
    {"eval-iters", "K", "forward-only iterations per evaluation, as Megatron's --eval-iters (default 100 with --eval-interval)"},
    {"checkpoint-size", "BYTES", "checkpoint size (default 14 B per parameter: bf16 weights + fp32 Adam state)"},
    {"fs-bandwidth", "BW", "checkpoint write bandwidth of the job (default: one NIC per node, capped by the machine's file system)"},
    {"gpu-mtbf", "TIME", "mean time between failures per GPU (default 50677 h, the Llama 3 run's rate; 0: no failures)"},
    {"restart-time", "TIME", "time lost per failure besides the lost work (default 10 min)"},
    {"job-startup", "TIME", "start-up of each job: launch, staging, loading the checkpoint (default 10 min)"},
    {"job-walltime", "TIME", "longest job (default: the machine file's limit)"},
    {"min-efficiency", "F", "recommend the largest scale whose parallel efficiency is at least F (e.g. 0.8)"},
    {"tune-each", NULL, "tune the parallel split at every scale (the default when no --tp/--pp/--cp is given)"},
    {"validation", "DIR|CSV", "measured runs for the range (default: $PREFLIGHT_VALIDATION or scenarios/validation)"},
    {"plot", "FILE.svg", "cost versus scale: node-hours and wall time against nodes"},
    {NULL, NULL, NULL}};

#define EXAMPLES \
    "  preflight plan --machine leonardo-booster --model gpt3-175b --tokens 3e11 --format md\n" \
    "  preflight plan --machine lumi-g --model gpt3-175b --tp 4 --pp 32 --mbs 1 --gbs 1536 --precision fp16 --sp \\\n" \
    "      --dist-opt --recompute selective --nodes 16,32,64,128 --tokens 3e11 --min-efficiency 0.8\n" \
    "  preflight plan --machine leonardo-booster --model llama2-7b --tp 2 --gbs 1024 --dist-opt --recompute full \\\n" \
    "      --nodes 16,32,64 --tokens 2e11 --plot cost.svg\n" \
    "  preflight plan --machine lumi-g --model resnet50 --mbs 256 --gbs 8192 --precision fp16 --nodes 4,8 \\\n" \
    "      --epochs 90 --samples 1281167\n"

static int time_opt(const pf_optvals *v, const char *name, double *out) {
  const char *s = pf_opts_get(v, name);
  if (!s) return 0;
  double x;
  int rc = pf_units_parse(s, PF_UNIT_TIME, &x);
  if (rc < 0) {
    char *end;
    x = strtod(s, &end); /* a bare number is seconds */
    if (end == s || *end) return pf_error_set(PF_EINVAL, "--%s \"%s\": expected a time such as \"10 min\" or \"48 h\"", name, s);
  }
  if (!(x >= 0) || !isfinite(x)) return pf_error_set(PF_EINVAL, "--%s \"%s\": must be a finite time >= 0", name, s);
  *out = x;
  return 1;
}

static int qty_opt(const pf_optvals *v, const char *name, pf_unit_kind k, double *out) {
  const char *s = pf_opts_get(v, name);
  if (!s) return 0;
  int rc = pf_units_parse(s, k, out);
  if (rc < 0 || !(*out > 0) || !isfinite(*out))
    return pf_error_set(PF_EINVAL, "--%s \"%s\": expected a positive quantity with its unit", name, s);
  return 1;
}

static int read_budget_opts(const pf_optvals *v, pf_budget_opts *o) {
  pf_budget_opts_init(o);
  int rc;
  /* a training run: up to 1e18 tokens or samples (a million times today's largest) */
  if ((rc = pf_opts_num_range(v, "tokens", 0, true, 1e18, &o->tokens)) < 0 ||
      (rc = pf_opts_num_range(v, "epochs", 0, true, 1e9, &o->epochs)) < 0 ||
      (rc = pf_opts_num_range(v, "samples", 0, true, 1e18, &o->samples)) < 0 ||
      (rc = pf_opts_num_range(v, "overhead", 0, false, 5, &o->other_fraction)) < 0 ||
      (rc = pf_opts_num_range(v, "eval-interval", 0, true, 1e15, &o->eval_interval)) < 0 ||
      (rc = pf_opts_num_range(v, "eval-iters", 0, true, 1e9, &o->eval_iters)) < 0)
    return rc;
  /* Megatron-LM's defaults (arguments.py: --eval-interval 1000, --eval-iters 100) for the one not given */
  if (o->eval_interval > 0 && !(o->eval_iters > 0)) o->eval_iters = 100;
  if (o->eval_iters > 0 && !(o->eval_interval > 0)) o->eval_interval = 1000;
  if (!(o->tokens > 0 && isfinite(o->tokens)) && !(o->epochs > 0 && o->samples > 0 && isfinite(o->epochs * o->samples)))
    return pf_error_set(PF_EINVAL, "give --tokens N, or --epochs E with --samples S (finite, positive)");
  if (o->tokens > 0 && (o->epochs > 0 || o->samples > 0))
    return pf_error_set(PF_EINVAL, "give --tokens or --epochs/--samples, not both");
  if (!(o->other_fraction >= 0 && o->other_fraction <= 5))
    return pf_error_set(PF_EINVAL, "--overhead %g: expected a fraction between 0 and 5", o->other_fraction);
  if ((rc = qty_opt(v, "checkpoint-size", PF_UNIT_BYTES, &o->checkpoint_B)) < 0 ||
      (rc = qty_opt(v, "fs-bandwidth", PF_UNIT_BANDWIDTH, &o->fs_bw_Bps)) < 0 ||
      (rc = time_opt(v, "gpu-mtbf", &o->gpu_mtbf_s)) < 0 || (rc = time_opt(v, "restart-time", &o->restart_s)) < 0 ||
      (rc = time_opt(v, "job-startup", &o->startup_s)) < 0 || (rc = time_opt(v, "job-walltime", &o->walltime_s)) < 0)
    return rc;
  return 0;
}

/* Predict one scale: the user's plan, or the best plan tune finds. */
static int predict_scale(const pf_scenario *base, int nodes, int tune, plan_row *r, pf_prediction *p) {
  pf_scenario *sc = malloc(sizeof *sc);
  if (!sc) return pf_error_set(PF_ENOMEM, "out of memory");
  *sc = *base;
  sc->nodes = nodes;
  sc->gpus = nodes * base->machine.gpus_per_node;
  int rc = 0;
  if (tune) {
    pf_tune_config o = {.fixed = 0, .objective = PF_OBJ_TIME, .top = 1, .shard = 1, .nshards = 1};
    pf_tune_result t;
    sc->plan.dp = 0;
    sc->plan.grad_accum = 0;
    rc = pf_tune(sc, &o, &t);
    if (rc == 0) sc->plan = t.final[0].plan;
    pf_tune_result_free(&t);
  }
  if (rc == 0) rc = pf_report_predict(sc, NULL, p);
  r->nodes = nodes;
  r->gpus = sc->gpus;
  r->plan = sc->plan;
  if (rc < 0) {
    r->ok = 0;
    snprintf(r->why, sizeof r->why, "%s", pf_error_detail());
  } else {
    r->ok = 1;
    r->t_iter_s = p->iteration_time_s;
    r->eval_iter_s = p->eval_iteration_s;
    r->tflops = p->tflops_per_gpu;
    r->tokens_per_s = p->tokens_per_s;
  }
  free(sc);
  return rc == PF_ENOMEM ? rc : 0;
}

static int by_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

/* Scales: the given node counts, or powers of two from the smallest that fits. */
static int scales(const pf_optvals *v, const pf_scenario *base, int tune, int *nodes, int *nn) {
  const char *nl = pf_opts_get(v, "nodes");
  if (nl) {
    char *copy = strdup(nl);
    int rc = copy ? pf_cli_parse_nodes(copy, nodes, 64, nn) : pf_error_set(PF_ENOMEM, "out of memory");
    free(copy);
    if (rc < 0) return rc;
    qsort(nodes, (size_t)*nn, sizeof *nodes, by_int);
    int k = 0;
    for (int i = 0; i < *nn; i++) if (k == 0 || nodes[k - 1] != nodes[i]) nodes[k++] = nodes[i];
    *nn = k;
    return 0;
  }
  const pf_machine *m = &base->machine;
  int limit = m->max_job_nodes > 0 && m->max_job_nodes < m->nodes ? m->max_job_nodes : m->nodes;
  pf_prediction *p = malloc(sizeof *p);
  if (!p) return pf_error_set(PF_ENOMEM, "out of memory");
  int n0 = 0;
  for (int n = 1; n <= limit && n0 == 0; n *= 2) { /* the smallest power of two that holds the job */
    plan_row r;
    memset(&r, 0, sizeof r);
    int rc = predict_scale(base, n, tune, &r, p);
    if (rc < 0) { free(p); return rc; }
    if (r.ok) n0 = n;
  }
  free(p);
  if (n0 == 0)
    return pf_error_set(PF_ENOFIT, "%s does not fit on up to %d nodes of %s with any parallel plan tried",
                        base->workload.id, limit, m->id);
  *nn = 0;
  for (int n = n0; n <= limit && *nn < 7; n *= 2) nodes[(*nn)++] = n;
  return 0;
}

static void choose(plan_doc *d) {
  d->base = d->fastest = d->cheapest = d->greenest = d->recommended = -1;
  for (int i = 0; i < d->nrows; i++) {
    plan_row *r = &d->rows[i];
    if (!r->ok) continue;
    if (d->base < 0) d->base = i;
    r->eff = pf_scaling_efficiency(r->tflops, d->rows[d->base].tflops);
    if (!r->within_limit) continue;
    if (d->fastest < 0 || r->b.wall_s < d->rows[d->fastest].b.wall_s) d->fastest = i;
    if (d->cheapest < 0 || r->b.units < d->rows[d->cheapest].b.units) d->cheapest = i;
    if (d->greenest < 0 || r->b.wall_s * r->b.energy_MWh < d->rows[d->greenest].b.wall_s * d->rows[d->greenest].b.energy_MWh)
      d->greenest = i;
    if (d->min_eff > 0 && r->eff >= d->min_eff - 1e-12) d->recommended = i;
  }
  if (d->min_eff <= 0) d->recommended = d->fastest;
}

static const pf_opt *const tables[] = {pf_scenario_opts, pf_plan_opts, NULL};

static const pf_cli_spec spec = {
    "plan",
    "usage: preflight plan [SCENARIO.cfg] --tokens N | --epochs E --samples S [--nodes LIST] [options]\n\n"
    "Without --nodes, the scales are powers of two from the smallest that fits up to the site's per-job limit;\n"
    "without --tp/--pp/--cp the split is tuned at each scale.  --format md (or -o FILE.md) writes a section\n"
    "for a proposal.",
    tables, true, 1, true, EXAMPLES};

int pf_cmd_plan(int argc, char **argv) {
  pf_cli cli;
  int rc = pf_cli_begin(&spec, argc, argv, &cli);
  if (rc != 0) return pf_cli_end(&cli, rc > 0 ? 0 : pf_cli_fail("plan", rc));
  if (pf_opts_get(&cli.v, "trace")) /* many predictions, one file: each would replace the last */
    return pf_cli_end(&cli, pf_cli_fail("plan", pf_error_set(PF_EINVAL, "--trace writes the timeline of one "
                                                              "prediction: use predict, or tune for its best plan")));
  pf_optvals *vp = &cli.v;
  plan_doc *d = calloc(1, sizeof *d);
  pf_scenario *base = malloc(sizeof *base);
  pf_prediction *p = malloc(sizeof *p);
  char *text = NULL, *nodes_list = NULL;
  pf_format fmt = cli.fmt == PF_FMT_MARKDOWN ? PF_FMT_TABLE : cli.fmt;
  int md = cli.fmt == PF_FMT_MARKDOWN, nodes[64], nn = 0;
  if (!d || !base || !p) { rc = pf_error_set(PF_ENOMEM, "out of memory"); goto done; }
  if ((rc = read_budget_opts(vp, &d->bo)) < 0) goto done;
  if ((rc = pf_opts_double(vp, "min-efficiency", &d->min_eff)) < 0) goto done;
  if (d->min_eff < 0 || d->min_eff > 1) { rc = pf_error_set(PF_EINVAL, "--min-efficiency %g: expected 0..1", d->min_eff); goto done; }
  /* the node list is this command's axis: read it apart from the scenario */
  if (pf_opts_get(vp, "nodes") && !(nodes_list = strdup(pf_opts_get(vp, "nodes")))) {
    rc = pf_error_set(PF_ENOMEM, "out of memory");
    goto done;
  }
  if ((rc = pf_opts_set(vp, "nodes", NULL)) < 0 || (rc = pf_opts_scenario(vp, base)) < 0) goto done;
  if (base->gpus > 0 && !nodes_list) { /* --gpus N: one scale */
    int gpn = base->machine.gpus_per_node;
    char one[32];
    snprintf(one, sizeof one, "%d", (base->gpus + gpn - 1) / gpn);
    nodes_list = strdup(one);
  }
  int tune = pf_opts_get(vp, "tune-each") || !(pf_opts_get(vp, "tp") || pf_opts_get(vp, "pp") || pf_opts_get(vp, "cp"));
  if (base->plan.gbs <= 0 && base->plan.grad_accum <= 0) {
    if (base->workload.ref_gbs <= 0) {
      rc = pf_error_set(PF_EINVAL, "give the global batch (--gbs N): %s has no published reference batch", base->workload.id);
      goto done;
    }
    base->plan.gbs = base->workload.ref_gbs;
    d->tuned |= 2; /* the reference batch was used */
  }
  if (tune && base->plan.gbs <= 0) { rc = pf_error_set(PF_EINVAL, "tuning the split needs --gbs"); goto done; }
  d->tuned |= tune;
  {
    pf_optvals tmp = {0};
    if (nodes_list && (rc = pf_opts_set(&tmp, "nodes", nodes_list)) < 0) { pf_opts_free(&tmp); goto done; }
    rc = scales(&tmp, base, tune, nodes, &nn);
    pf_opts_free(&tmp);
    if (rc < 0) goto done;
  }
  const pf_machine *m = &base->machine;
  pf_progress_begin("plan", nn, false);
  for (int i = 0; i < nn; i++) {
    plan_row *r = &d->rows[d->nrows++];
    memset(r, 0, sizeof *r);
    rc = predict_scale(base, nodes[i], tune, r, p);
    pf_progress_item();
    if (rc < 0) { pf_progress_end(); goto done; }
    r->within_limit = m->max_job_nodes <= 0 || nodes[i] <= m->max_job_nodes;
    if (r->ok) {
      pf_scenario *sc = malloc(sizeof *sc);
      if (!sc) { rc = pf_error_set(PF_ENOMEM, "out of memory"); goto done; }
      *sc = *base;
      sc->nodes = r->nodes;
      sc->gpus = r->gpus;
      sc->plan = r->plan;
      /* the prediction of this row is in p (predict_scale's last call) */
      rc = pf_budget_compute(sc, p, &d->bo, &r->b);
      free(sc);
      if (rc < 0) { pf_progress_end(); goto done; }
    }
  }
  pf_progress_end();
  choose(d);
  if (d->base < 0) {
    rc = pf_error_set(PF_ENOFIT, "no scale is a valid plan that fits (first: %s)", d->rows[0].why);
    goto done;
  }
  /* context for the renderers */
  snprintf(d->machine, sizeof d->machine, "%s", m->id);
  snprintf(d->machine_name, sizeof d->machine_name, "%s", m->name);
  snprintf(d->model, sizeof d->model, "%s", base->workload.id);
  snprintf(d->model_name, sizeof d->model_name, "%s", base->workload.name);
  snprintf(d->precision, sizeof d->precision, "%s", pf_precision_name(base->precision));
  snprintf(d->unit, sizeof d->unit, "%s", m->billing_unit);
  snprintf(d->billing_note, sizeof d->billing_note, "%s", m->billing_note);
  snprintf(d->limits_note, sizeof d->limits_note, "%s", m->limits_note);
  d->per_node_hour = m->billing_per_node_hour;
  d->gpn = m->gpus_per_node;
  d->dies_per_package = m->dev.dies_per_package;
  d->billing_per_device = m->billing_per_device;
  d->max_job_nodes = m->max_job_nodes;
  d->walltime_limit_s = d->rows[d->base].b.walltime_limit_s;
  snprintf(d->devh, sizeof d->devh, "%s", d->dies_per_package > 1 ? (strcmp(m->dev.vendor, "intel") ? "GCD-hours" : "tile-hours")
                                                                  : "GPU-hours");
  if (d->bo.tokens > 0) snprintf(d->run, sizeof d->run, "%.4g tokens", d->bo.tokens);
  else snprintf(d->run, sizeof d->run, "%g epochs of %.4g samples", d->bo.epochs, d->bo.samples);
  const char *val = pf_opts_get(vp, "validation");
  snprintf(d->validation, sizeof d->validation, "%s", val ? val : pf_validation_dir());
  pf_scenario *rs = malloc(sizeof *rs);
  if (!rs) { rc = pf_error_set(PF_ENOMEM, "out of memory"); goto done; }
  *rs = *base;
  rs->plan = d->rows[d->base].plan;
  pf_optvals none = {0}; /* the measured rows as they are: no defaults from this command */
  pf_vrow_defaults vd;
  pf_validate_opts vo = pf_cli_validate_opts(&none, &vd, d->validation);
  rc = pf_budget_similar(rs, d->validation, &vo, &d->range);
  free(rs);
  if (rc < 0) goto done;
  const char *plot = pf_opts_get(vp, "plot");
  if (plot && (rc = plan_plot(d, plot)) < 0) goto done;
  if (!(text = plan_render(d, fmt, md, plot))) { rc = pf_error_set(PF_ENOMEM, "out of memory"); goto done; }
  rc = pf_cli_emit(&cli, text);
done:
  free(text);
  free(nodes_list);
  free(d);
  free(base);
  free(p);
  return pf_cli_end(&cli, rc < 0 ? pf_cli_fail("plan", rc) : 0);
}
