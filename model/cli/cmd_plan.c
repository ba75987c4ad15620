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
 * gives every row a range: its prediction interval (study/interval.h) from the
 * validation folder, anchored when --calibration holds a fit, and the budget
 * at both ends of it.
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

#define EXAMPLES \
    "  preflight plan --machine leonardo-booster --model gpt3-175b --tokens 3e11 --format md\n" \
    "  preflight plan --machine lumi-g --model gpt3-175b --tp 4 --pp 32 --mbs 1 --gbs 1536 --precision fp16 --sp \\\n" \
    "      --dist-opt --recompute selective --nodes 16,32,64,128 --tokens 3e11 --min-efficiency 0.8\n" \
    "  preflight plan --machine leonardo-booster --model llama2-7b --tp 2 --gbs 1024 --dist-opt --recompute full \\\n" \
    "      --nodes 16,32,64 --tokens 2e11 --plot cost.pdf \\\n" \
    "      --format tex -o plan.tex\n" \
    "  preflight plan --machine lumi-g --model resnet50 --mbs 256 --gbs 8192 --precision fp16 --nodes 4,8 \\\n" \
    "      --epochs 90 --samples 1281167\n"

/* A time: "10 min", "48 h" or a bare number of seconds, finite and >= 0. */
static int parse_time(const pf_opt *o, const char *s, void *dest, char *why, size_t len) {
  (void)why, (void)len;
  double x;
  int rc = pf_units_parse(s, PF_UNIT_TIME, &x);
  if (rc < 0) {
    char *end;
    x = strtod(s, &end); /* a bare number is seconds */
    if (end == s || *end) return pf_error_set(PF_EINVAL, "--%s \"%s\": expected a time such as \"10 min\" or \"48 h\"", o->name, s);
  }
  if (!(x >= 0) || !isfinite(x)) return pf_error_set(PF_EINVAL, "--%s \"%s\": must be a finite time >= 0", o->name, s);
  if (dest) *(double *)dest = x;
  return 0;
}

/* A positive quantity with its unit (o->unit). */
static int parse_qty(const pf_opt *o, const char *s, void *dest, char *why, size_t len) {
  (void)why, (void)len;
  double x;
  int rc = pf_units_parse(s, o->unit, &x);
  if (rc < 0 || !(x > 0) || !isfinite(x))
    return pf_error_set(PF_EINVAL, "--%s \"%s\": expected a positive quantity with its unit", o->name, s);
  if (dest) *(double *)dest = x;
  return 0;
}

/* The groups of pf_plan_opts: the size of the run, read and checked first, then its costs. */
enum { PLAN_RUN = 1, PLAN_COSTS };
#define BO(member) PF_AT(pf_budget_opts, member)

/* A training run: up to 1e18 tokens or samples (a million times today's largest). */
const pf_opt pf_plan_opts[] = {
    {"tokens", "N", "training tokens to process (e.g. 3e11)",
     .type = PF_OPT_NUM, .at = BO(tokens), .lo = 0, .hi = 1e18, .flags = PF_OPT_LO_OPEN, .group = PLAN_RUN},
    {"epochs", "E", "epochs (with --samples)",
     .type = PF_OPT_NUM, .at = BO(epochs), .lo = 0, .hi = 1e9, .flags = PF_OPT_LO_OPEN, .group = PLAN_RUN},
    {"samples", "S", "samples per epoch (with --epochs)",
     .type = PF_OPT_NUM, .at = BO(samples), .lo = 0, .hi = 1e18, .flags = PF_OPT_LO_OPEN, .group = PLAN_RUN},
    {"overhead", "F", "other phases you run as a fraction of training time (default 0)",
     .type = PF_OPT_NUM, .at = BO(other_fraction), .lo = 0, .hi = 5, .group = PLAN_RUN},
    {"eval-interval", "N", "evaluate every N iterations, as Megatron's --eval-interval (default: no evaluation; 1000 with --eval-iters)",
     .type = PF_OPT_NUM, .at = BO(eval_interval), .lo = 0, .hi = 1e15, .flags = PF_OPT_LO_OPEN, .group = PLAN_RUN},
    {"eval-iters", "K", "forward-only iterations per evaluation, as Megatron's --eval-iters (default 100 with --eval-interval)",
     .type = PF_OPT_NUM, .at = BO(eval_iters), .lo = 0, .hi = 1e9, .flags = PF_OPT_LO_OPEN, .group = PLAN_RUN},
    {"checkpoint-size", "BYTES", "checkpoint size (default 14 B per parameter: bf16 weights + fp32 Adam state)",
     .type = PF_OPT_CALLBACK, .at = BO(checkpoint_B), .unit = PF_UNIT_BYTES, .parse = parse_qty, .group = PLAN_COSTS},
    {"fs-bandwidth", "BW", "checkpoint write bandwidth of the job (default: one NIC per node, capped by the machine's file system)",
     .type = PF_OPT_CALLBACK, .at = BO(fs_bw_Bps), .unit = PF_UNIT_BANDWIDTH, .parse = parse_qty, .group = PLAN_COSTS},
    {"gpu-mtbf", "TIME", "mean time between failures per GPU (default 50677 h, the Llama 3 run's rate; 0: no failures)",
     .type = PF_OPT_CALLBACK, .at = BO(gpu_mtbf_s), .parse = parse_time, .group = PLAN_COSTS},
    {"restart-time", "TIME", "time lost per failure besides the lost work (default 10 min)",
     .type = PF_OPT_CALLBACK, .at = BO(restart_s), .parse = parse_time, .group = PLAN_COSTS},
    {"job-startup", "TIME", "start-up of each job: launch, staging, loading the checkpoint (default 10 min)",
     .type = PF_OPT_CALLBACK, .at = BO(startup_s), .parse = parse_time, .group = PLAN_COSTS},
    {"job-walltime", "TIME", "longest job (default: the machine file's limit)",
     .type = PF_OPT_CALLBACK, .at = BO(walltime_s), .parse = parse_time, .group = PLAN_COSTS},
    {"min-efficiency", "F", "recommend the largest scale whose parallel efficiency is at least F (e.g. 0.8)",
     .type = PF_OPT_TEXT},
    {"tune-each", NULL, "tune the parallel split at every scale (the default when no --tp/--pp/--cp is given)",
     .type = PF_OPT_FLAG},
    {"validation", "DIR|CSV", "measured runs the ranges come from (default: $PREFLIGHT_VALIDATION or scenarios/validation)",
     .type = PF_OPT_TEXT},
    {"plot", "FILE", "cost versus scale: node-hours and wall time against nodes (FILE.svg, .pdf or .png)",
     .type = PF_OPT_TEXT},
    PF_OPT_END};

static int read_budget_opts(const pf_optvals *v, pf_budget_opts *o) {
  pf_budget_opts_init(o);
  int rc;
  if ((rc = pf_opts_fill(v, pf_plan_opts, PLAN_RUN, o)) < 0) return rc;
  /* Megatron-LM's defaults (arguments.py: --eval-interval 1000, --eval-iters 100) for the one not given */
  if (o->eval_interval > 0 && !(o->eval_iters > 0)) o->eval_iters = 100;
  if (o->eval_iters > 0 && !(o->eval_interval > 0)) o->eval_interval = 1000;
  if (!(o->tokens > 0 && isfinite(o->tokens)) && !(o->epochs > 0 && o->samples > 0 && isfinite(o->epochs * o->samples)))
    return pf_error_set(PF_EINVAL, "give --tokens N, or --epochs E with --samples S (finite, positive)");
  if (o->tokens > 0 && (o->epochs > 0 || o->samples > 0))
    return pf_error_set(PF_EINVAL, "give --tokens or --epochs/--samples, not both");
  if (!(o->other_fraction >= 0 && o->other_fraction <= 5))
    return pf_error_set(PF_EINVAL, "--overhead %g: expected a fraction between 0 and 5", o->other_fraction);
  return pf_opts_fill(v, pf_plan_opts, PLAN_COSTS, o);
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
    pf_tune_config o = {.fixed = 0, .objective = PF_OBJ_TIME, .top = 1, .shard = 1, .nshards = 1, .progress = true};
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
  return pf_error_is_failure(rc) ? rc : 0; /* an engine failure stops the plan (exit 2): never a row */
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
  int n0 = 0, tries = 0;
  for (int n = 1; n <= limit; n *= 2) tries++;
  pf_progress_begin("plan: smallest scale", tries, false);
  for (int n = 1; n <= limit && n0 == 0; n *= 2) { /* the smallest power of two that holds the job */
    plan_row r;
    memset(&r, 0, sizeof r);
    int rc = predict_scale(base, n, tune, &r, p);
    pf_progress_item();
    if (rc < 0) { pf_progress_end(); free(p); return rc; }
    if (r.ok) n0 = n;
  }
  pf_progress_end();
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
    /* the smallest scale is the reference: its efficiency is 1 by definition */
    r->eff_lo = i == d->base ? r->eff : r->eff * r->iv.eff_lo;
    r->eff_hi = i == d->base ? r->eff : r->eff * r->iv.eff_hi;
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
    "without --tp/--pp/--cp the split is tuned at each scale.  --format md or tex (or -o FILE.md, FILE.tex)\n"
    "writes a section for a proposal; --plot FILE.svg|.pdf|.png draws cost and wall time against scale.",
    tables, true, 1, true, EXAMPLES, true, .doc = PF_DOC(plan)};
const pf_cli_spec *const pf_cli_spec_plan = &spec; /* for the man page and the completion (gendoc.c) */


/* The run's size and costs, the threshold, the scales asked for (*nodes_list, caller frees; NULL: from
 * the smallest that fits) and the base scenario with its global batch; *tune: tune the split per scale. */
static int plan_inputs(pf_optvals *vp, plan_doc *d, pf_scenario *base, char **nodes_list, int *tune) {
  int rc;
  if ((rc = read_budget_opts(vp, &d->bo)) < 0) return rc;
  if ((rc = pf_opts_double(vp, "min-efficiency", &d->min_eff)) < 0) return rc;
  if (d->min_eff < 0 || d->min_eff > 1) return pf_error_set(PF_EINVAL, "--min-efficiency %g: expected 0..1", d->min_eff);
  /* the node list is this command's axis: read it apart from the scenario */
  if (pf_opts_get(vp, "nodes") && !(*nodes_list = strdup(pf_opts_get(vp, "nodes"))))
    return pf_error_set(PF_ENOMEM, "out of memory");
  if ((rc = pf_opts_set(vp, "nodes", NULL)) < 0 || (rc = pf_opts_scenario(vp, base)) < 0) return rc;
  if (base->gpus > 0 && !*nodes_list) { /* --gpus N: one scale */
    int gpn = base->machine.gpus_per_node;
    char one[32];
    snprintf(one, sizeof one, "%d", (base->gpus + gpn - 1) / gpn);
    *nodes_list = strdup(one);
  }
  *tune = pf_opts_get(vp, "tune-each") || !(pf_opts_get(vp, "tp") || pf_opts_get(vp, "pp") || pf_opts_get(vp, "cp"));
  if (base->plan.gbs <= 0 && base->plan.grad_accum <= 0) {
    if (base->workload.ref_gbs <= 0)
      return pf_error_set(PF_EINVAL, "give the global batch (--gbs N): %s has no published reference batch",
                          base->workload.id);
    base->plan.gbs = base->workload.ref_gbs;
    d->tuned |= 2; /* the reference batch was used */
  }
  if (*tune && base->plan.gbs <= 0) return pf_error_set(PF_EINVAL, "tuning the split needs --gbs");
  d->tuned |= *tune;
  return 0;
}

/* A row's budget, its prediction interval and the budget at both ends of it (p: the row's prediction). */
static int row_budget(plan_doc *d, const pf_scenario *base, plan_row *r, pf_prediction *p, pf_cli_intervals *ci) {
  pf_scenario *sc = malloc(sizeof *sc);
  pf_prediction *q = malloc(sizeof *q);
  int rc = sc && q ? 0 : pf_error_set(PF_ENOMEM, "out of memory");
  if (rc == 0) {
    *sc = *base;
    sc->nodes = r->nodes;
    sc->gpus = r->gpus;
    sc->plan = r->plan;
    rc = pf_budget_compute(sc, p, &d->bo, &r->b);
  }
  if (rc == 0) rc = pf_cli_intervals_of(ci, sc, true, p);
  if (rc == 0) {
    r->iv = p->interval;
    /* the MWh's range: the iteration's facility energy range (power and time intervals, pf_interval_energy) */
    double E = p->energy.facility_J;
    r->mwh_lo = E > 0 ? r->b.energy_MWh * p->energy.facility_J_low / E : r->b.energy_MWh;
    r->mwh_hi = E > 0 ? r->b.energy_MWh * p->energy.facility_J_high / E : r->b.energy_MWh;
    pf_interval_scale(p, r->iv.time_lo, q);
    rc = pf_budget_compute(sc, q, &d->bo, &r->lo);
  }
  if (rc == 0) {
    pf_interval_scale(p, r->iv.time_hi, q);
    rc = pf_budget_compute(sc, q, &d->bo, &r->hi);
  }
  free(q);
  free(sc);
  return rc;
}

/* One row per scale: its prediction (p is the work space) and, where it fits, its budget and ranges. */
static int plan_rows(plan_doc *d, const pf_scenario *base, const char *nodes_list, int tune, pf_prediction *p,
                     pf_cli_intervals *ci) {
  int nodes[64], nn = 0, rc;
  pf_optvals tmp = {0};
  if (nodes_list && (rc = pf_opts_set(&tmp, "nodes", nodes_list)) < 0) { pf_opts_free(&tmp); return rc; }
  rc = scales(&tmp, base, tune, nodes, &nn);
  pf_opts_free(&tmp);
  if (rc < 0) return rc;
  const pf_machine *m = &base->machine;
  pf_progress_begin("plan", nn, false);
  for (int i = 0; i < nn; i++) {
    plan_row *r = &d->rows[d->nrows++];
    memset(r, 0, sizeof *r);
    rc = predict_scale(base, nodes[i], tune, r, p);
    pf_progress_item();
    if (rc < 0) break;
    r->within_limit = m->max_job_nodes <= 0 || nodes[i] <= m->max_job_nodes;
    /* the prediction of this row is in p (predict_scale's last call) */
    if (r->ok && (rc = row_budget(d, base, r, p, ci)) < 0) break;
  }
  pf_progress_end();
  return rc < 0 ? rc : 0;
}

/* Context for the renderers: machine, model, billing, limits and the run. */
static void plan_context(plan_doc *d, const pf_scenario *base) {
  const pf_machine *m = &base->machine;
  snprintf(d->machine, sizeof d->machine, "%s", m->id);
  snprintf(d->machine_name, sizeof d->machine_name, "%s", m->name);
  snprintf(d->model, sizeof d->model, "%s", base->workload.id);
  snprintf(d->model_name, sizeof d->model_name, "%s", base->workload.name);
  snprintf(d->precision, sizeof d->precision, "%s", pf_precision_name(base->precision));
  snprintf(d->unit, sizeof d->unit, "%s", m->billing_unit);
  snprintf(d->billing_note, sizeof d->billing_note, "%s", m->billing_note);
  snprintf(d->limits_note, sizeof d->limits_note, "%s", m->limits_note);
  snprintf(d->machine_file, sizeof d->machine_file, "%s", m->path);
  d->storage_bw_Bps = m->storage_bw_Bps;
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
}

int pf_cmd_plan(int argc, char **argv) {
  pf_cli cli;
  int rc = pf_cli_begin(&spec, argc, argv, &cli);
  if (rc != 0) return pf_cli_end(&cli, rc > 0 ? 0 : pf_cli_fail("plan", rc));
  pf_optvals *vp = &cli.v;
  plan_doc *d = calloc(1, sizeof *d);
  pf_scenario *base = malloc(sizeof *base);
  pf_prediction *p = malloc(sizeof *p);
  pf_cli_intervals *ci = calloc(1, sizeof *ci);
  char *text = NULL, *nodes_list = NULL;
  int tune = 0;
  if (!d || !base || !p || !ci) { rc = pf_error_set(PF_ENOMEM, "out of memory"); goto done; }
  if ((rc = plan_inputs(vp, d, base, &nodes_list, &tune)) < 0) goto done;
  /* the ranges' validation rows: read (and checked) before any prediction */
  if ((rc = pf_cli_intervals_open(ci, pf_opts_get(vp, "validation"))) < 0) goto done;
  snprintf(d->validation, sizeof d->validation, "%s", ci->dir);
  d->anchored = base->fit_anchored;
  if ((rc = plan_rows(d, base, nodes_list, tune, p, ci)) < 0) goto done;
  choose(d);
  if (d->base < 0) {
    rc = pf_error_set(PF_ENOFIT, "no scale is a valid plan that fits (first: %s)", d->rows[0].why);
    goto done;
  }
  plan_context(d, base);
  const char *plot = pf_opts_get(vp, "plot");
  if (plot && (rc = plan_plot(d, plot)) < 0) goto done;
  if (!(text = plan_render(d, cli.fmt, plot))) { rc = pf_error_set(PF_ENOMEM, "out of memory"); goto done; }
  rc = pf_cli_emit(&cli, text);
done:
  if (ci) pf_cli_intervals_close(ci);
  free(ci);
  free(text);
  free(nodes_list);
  free(d);
  free(base);
  free(p);
  return pf_cli_end(&cli, rc < 0 ? pf_cli_fail("plan", rc) : 0);
}
