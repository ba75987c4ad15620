/* cmd_sweep.c - `preflight sweep`: the same job over node counts and any other
 * axes (--vary NAME=V1,V2, --machines, --models), each point a prediction.
 *
 * Points are the product of the axes in the order given, node counts innermost
 * (sorted, duplicates dropped).  A GROUP is the points that share every axis
 * value but the node count; its baseline is its smallest node count that fits
 * (EPICURE's definition, DESIGN 5.6): efficiency = TFLOP/s per GPU over the
 * baseline's, speed-up = tokens/s over the baseline's.  Weak scaling keeps the
 * microbatches per replica of the group's smallest valid plan; strong scaling
 * keeps the global batch.  Points that do not fit or are not valid plans are
 * rows too, marked with the reason.  `--shard I/N` computes the points whose
 * index is I-1 modulo N and writes them as JSON for `preflight merge`, which
 * renders exactly what the unsharded sweep renders (results.h).
 */
#include "cli.h"
#include "options.h"
#include "validate_cli.h"
#include "results.h"

#include "study/study.h"
#include "core/core.h"
#include "report/report.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const pf_opt pf_sweep_opts[] = {
    {"scaling", "weak|strong", "weak: fixed microbatches per replica; strong: fixed global batch (default)",
     .type = PF_OPT_TEXT},
    {"vary", "NAME=V1,V2", "sweep any option too (repeatable), e.g. --vary tp=1,2,4 --vary mbs=1,2",
     .type = PF_OPT_TEXT},
    {"machines", "A,B", "sweep several machines (same as --vary machine=A,B)", .type = PF_OPT_TEXT},
    {"models", "A,B", "sweep several models (same as --vary model=A,B)", .type = PF_OPT_TEXT},
    {"tune-each", NULL, "tune the parallel split (TP, PP, micro-batch, ...) at every point", .type = PF_OPT_FLAG},
    {"plot", "FILE", "scaling curve: throughput and efficiency against nodes (FILE.svg, .pdf or .png)",
     .type = PF_OPT_TEXT},
    {"measured", "RUNS.csv", "overlay measured points (a validation CSV) on the plot", .type = PF_OPT_TEXT},
    {"min-efficiency", "F", "efficiency threshold drawn on the plot (e.g. 0.8)", .type = PF_OPT_TEXT},
    {"shard", "I/N", "compute the I-th of N disjoint slices of the points (JSON for `preflight merge`)",
     .type = PF_OPT_TEXT},
    PF_OPT_END};

#define EXAMPLES \
    "  preflight sweep --machine lumi-g --model gpt3-175b --tp 4 --pp 32 --sp --dist-opt \\\n" \
    "      --recompute selective --precision fp16 --nodes 16,32,64,128,256,512 --scaling weak --grad-accum 192\n" \
    "  preflight sweep --machine mn5-acc --model gpt3-175b --tp 4 --pp 32 --gbs 1536 --sp --dist-opt \\\n" \
    "      --recompute selective --nodes 32..128 --format csv\n" \
    "  preflight sweep --machines mn5-acc,leonardo-booster --model llama2-7b --gbs 512 --nodes 4,8,16 \\\n" \
    "      --vary tp=1,2 --dist-opt --recompute selective --flash-attn --plot scaling.svg\n" \
    "  preflight sweep --machine mn5-acc --model llama2-7b --gbs 512 --tp 2 --dist-opt --recompute selective \\\n" \
    "      --nodes 8,16 --shard 1/2 -o s1.json\n"

#define MAXAXES 8
#define MAXVALS 64

typedef struct {
  const char *name;          /* option name (static: from the option table) */
  int n;
  char *val[MAXVALS];        /* owned */
} axis;

typedef struct {
  int naxes;
  axis ax[MAXAXES];
  int nodes[256], nn;
} space;

static void space_free(space *s) {
  for (int a = 0; a < s->naxes; a++)
    for (int i = 0; i < s->ax[a].n; i++) free(s->ax[a].val[i]);
}

static int is_number(const char *s) {
  char *end;
  errno = 0;
  strtod(s, &end);
  return end != s && *end == '\0' && !errno;
}

static int by_number(const void *a, const void *b) {
  double x = strtod(*(char *const *)a, NULL), y = strtod(*(char *const *)b, NULL);
  return (x > y) - (x < y);
}

/* NAME=V1,V2,... into an axis: values de-duplicated, numeric axes sorted. */
static int add_axis(space *s, const char *spec) {
  const char *eq = strchr(spec, '=');
  if (!eq || eq == spec || !eq[1])
    return pf_error_set(PF_EINVAL, "--vary \"%s\": expected NAME=V1,V2,... (an option name and its values)", spec);
  char name[64];
  snprintf(name, sizeof name, "%.*s", (int)(eq - spec) < 63 ? (int)(eq - spec) : 63, spec);
  const pf_opt *o = pf_opts_find_scenario(name);
  if (!o) return pf_error_set(PF_EINVAL, "--vary %s: not an option (see `preflight sweep --help`)", name);
  if (strcmp(o->name, "nodes") == 0 || strcmp(o->name, "gpus") == 0)
    return pf_error_set(PF_EINVAL, "--vary %s: give node counts with --nodes", name);
  for (int a = 0; a < s->naxes; a++)
    if (strcmp(s->ax[a].name, o->name) == 0) return pf_error_set(PF_EINVAL, "--vary %s given twice", name);
  if (s->naxes == MAXAXES) return pf_error_set(PF_EINVAL, "--vary: at most %d axes", MAXAXES);
  axis *ax = &s->ax[s->naxes++];
  ax->name = o->name;
  ax->n = 0;
  char *copy = strdup(eq + 1), *save = NULL;
  if (!copy) return pf_error_set(PF_ENOMEM, "out of memory");
  int numeric = 1;
  for (char *t = strtok_r(copy, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
    if (!*t) continue;
    if (o->arg == NULL) { /* a flag: on or off */
      if (!strcmp(t, "on") || !strcmp(t, "true") || !strcmp(t, "1")) t = "1";
      else if (!strcmp(t, "off") || !strcmp(t, "false") || !strcmp(t, "0")) t = "0";
      else { free(copy); return pf_error_set(PF_EINVAL, "--vary %s: a flag takes on or off, not \"%s\"", name, t); }
    }
    int dup = 0;
    for (int i = 0; i < ax->n; i++) dup |= strcmp(ax->val[i], t) == 0;
    if (dup) continue;
    if (ax->n == MAXVALS) { free(copy); return pf_error_set(PF_EINVAL, "--vary %s: at most %d values", name, MAXVALS); }
    ax->val[ax->n++] = strdup(t);
    numeric &= is_number(t);
  }
  free(copy);
  if (ax->n == 0) return pf_error_set(PF_EINVAL, "--vary %s: no values", name);
  if (numeric) qsort(ax->val, (size_t)ax->n, sizeof *ax->val, by_number);
  return 0;
}

static int by_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

static int build_space(const pf_optvals *v, space *s) {
  memset(s, 0, sizeof *s);
  int rc;
  char spec[PF_PATH_MAX];
  const char *m = pf_opts_get(v, "machines"), *w = pf_opts_get(v, "models");
  if (m) { snprintf(spec, sizeof spec, "machine=%s", m); if ((rc = add_axis(s, spec)) < 0) return rc; }
  if (w) { snprintf(spec, sizeof spec, "model=%s", w); if ((rc = add_axis(s, spec)) < 0) return rc; }
  for (int i = 0; i < v->n; i++) {
    if (strcmp(v->name[i], "vary") != 0) continue;
    /* in a scenario file several axes are written "tp=1,2;mbs=1,2" */
    char *copy = strdup(v->value[i]), *save = NULL;
    if (!copy) return pf_error_set(PF_ENOMEM, "out of memory");
    rc = 0;
    for (char *t = strtok_r(copy, ";", &save); t && rc == 0; t = strtok_r(NULL, ";", &save)) rc = add_axis(s, t);
    free(copy);
    if (rc < 0) return rc;
  }
  /* --power-cap 300,400,500,700: the power-cap what-if as an axis (issue 11; docs/energy.md) */
  const char *pc = pf_opts_get(v, "power-cap");
  if (pc && strchr(pc, ',')) {
    snprintf(spec, sizeof spec, "power-cap=%s", pc);
    if ((rc = add_axis(s, spec)) < 0) return rc;
  }
  const char *nl = pf_opts_get(v, "nodes");
  if (!nl) return pf_error_set(PF_EINVAL, "sweep needs --nodes LIST (e.g. 16,32,64 or 1..64)");
  char *copy = strdup(nl);
  rc = copy ? pf_cli_parse_nodes(copy, s->nodes, 256, &s->nn) : pf_error_set(PF_ENOMEM, "out of memory");
  free(copy);
  if (rc < 0) return rc;
  qsort(s->nodes, (size_t)s->nn, sizeof *s->nodes, by_int);
  int k = 0;
  for (int i = 0; i < s->nn; i++) if (k == 0 || s->nodes[k - 1] != s->nodes[i]) s->nodes[k++] = s->nodes[i];
  s->nn = k;
  return 0;
}

static long groups_of(const space *s) {
  long g = 1;
  for (int a = 0; a < s->naxes; a++) g *= s->ax[a].n;
  return g;
}

/* Set the options of group g (mixed radix over the axes, the first axis slowest). */
static int set_group(pf_optvals *v, const space *s, long g) {
  for (int a = s->naxes - 1; a >= 0; a--) {
    const axis *ax = &s->ax[a];
    const char *val = ax->val[g % ax->n];
    g /= ax->n;
    const pf_opt *o = pf_opts_find_scenario(ax->name);
    /* a flag off is --no-X where it is on by default (docs/defaults.md) */
    int rc = o->arg == NULL ? pf_opts_set_flag(v, ax->name, strcmp(val, "0") != 0, "command line")
                            : pf_opts_set(v, ax->name, val);
    if (rc < 0) return rc;
  }
  return 0;
}

static int set_nodes(pf_optvals *v, int nodes) {
  char val[32];
  snprintf(val, sizeof val, "%d", nodes);
  return pf_opts_set(v, "nodes", val);
}

/* Weak scaling: microbatches per replica of the group's smallest valid plan. */
static int weak_accum(pf_optvals *v, const space *s, long g, int *accum) {
  pf_scenario *sc = malloc(sizeof *sc);
  if (!sc) return pf_error_set(PF_ENOMEM, "out of memory");
  int rc = set_group(v, s, g);
  *accum = 0;
  for (int j = 0; j < s->nn && rc == 0 && *accum == 0; j++) {
    if ((rc = set_nodes(v, s->nodes[j])) < 0 || (rc = pf_opts_scenario(v, sc)) < 0) break;
    if (pf_plan_check(sc) == 0) *accum = sc->plan.grad_accum;
  }
  free(sc);
  return rc;
}

static cJSON *axes_json(const space *s, long g) {
  cJSON *o = cJSON_CreateObject();
  long gg = g;
  const char *vals[MAXAXES];
  for (int a = s->naxes - 1; a >= 0; a--) { vals[a] = s->ax[a].val[gg % s->ax[a].n]; gg /= s->ax[a].n; }
  for (int a = 0; a < s->naxes; a++) cJSON_AddStringToObject(o, s->ax[a].name, vals[a]);
  return o;
}

/* A row for a point that has no prediction. */
static cJSON *failed_row(const pf_scenario *sc, int nodes, int rc, const char *detail, const pf_prediction *p) {
  cJSON *r = cJSON_CreateObject();
  cJSON_AddStringToObject(r, "machine", sc->machine.id);
  cJSON_AddStringToObject(r, "model", sc->workload.id);
  cJSON_AddNumberToObject(r, "nodes", sc->nodes > 0 ? sc->nodes : nodes);
  cJSON_AddNumberToObject(r, "gpus", sc->gpus);
  cJSON_AddBoolToObject(r, "fits", false);
  cJSON_AddStringToObject(r, "status", rc == PF_ENOFIT ? "does not fit" : "invalid plan");
  cJSON_AddStringToObject(r, "reason", detail);
  pf_plan_json_parallel(r, &sc->plan, PF_PLAN_FORM_ASKED); /* the plan as asked */
  if (rc == PF_ENOFIT && p)
    cJSON_AddNumberToObject(r, "memory_GiB", p->memory.total_B / (1024.0 * 1024 * 1024));
  return r;
}

/* ---- computing the points ---- */

typedef struct {
  long index, group;
  int nodes;
} point;

static int tune_point(pf_scenario *sc, unsigned fixed, pf_batch_item *it) {
  pf_tune_config o = {.fixed = fixed, .objective = PF_OBJ_TIME, .top = 1, .shard = 1, .nshards = 1, .progress = true};
  pf_tune_result r;
  int rc = pf_tune(sc, &o, &r);
  if (rc == 0) {
    sc->plan = r.final[0].plan;
    rc = pf_report_predict(sc, NULL, &it->pred);
  }
  pf_tune_result_free(&r);
  it->rc = rc;
  snprintf(it->detail, sizeof it->detail, "%s", rc < 0 ? pf_error_detail() : "");
  return rc == PF_ENOMEM || rc == PF_ESIM ? rc : 0;
}

static const pf_opt *const tables[] = {pf_scenario_opts, pf_sweep_opts, NULL};

static const pf_cli_spec spec = {
    "sweep",
    "usage: preflight sweep [SCENARIO.cfg] --nodes LIST [--scaling weak|strong] [--vary NAME=V1,V2] [options]",
    tables, true, 1, false, EXAMPLES, true, .doc = PF_DOC(sweep)};
const pf_cli_spec *const pf_cli_spec_sweep = &spec; /* for the man page and the completion (gendoc.c) */


/* One sweep: its axes, options, this shard's points and their results. */
typedef struct {
  space s;
  int shard, nshards, weak;
  double min_eff;
  long ngroups, npoints, mine; /* mine: this shard's points */
  point *pts;                  /* [mine] */
  pf_scenario *scs;            /* [mine] */
  pf_batch_item *items;        /* [mine] */
  int *accum;                  /* [ngroups]: weak scaling's microbatches per replica */
} sweep_run;

static void sweep_run_free(sweep_run *r) {
  free(r->pts);
  free(r->scs);
  free(r->items);
  free(r->accum);
  space_free(&r->s);
}

/* The axes and the sweep's own options, checked. */
static int sweep_options(const pf_optvals *vp, pf_format fmt, sweep_run *r) {
  int rc;
  const char *scaling = pf_opts_get(vp, "scaling"), *sh = pf_opts_get(vp, "shard");
  r->shard = r->nshards = 1;
  if (!pf_opts_get(vp, "nodes")) return pf_error_set(PF_EINVAL, "--nodes LIST is required");
  if ((rc = build_space(vp, &r->s)) < 0) return rc;
  if (scaling && strcmp(scaling, "weak") != 0 && strcmp(scaling, "strong") != 0)
    return pf_error_set(PF_EINVAL, "--scaling \"%s\": valid: weak, strong", scaling);
  r->weak = scaling && strcmp(scaling, "weak") == 0;
  if (sh && (rc = pf_cli_parse_shard(sh, &r->shard, &r->nshards)) < 0) return rc;
  if ((rc = pf_opts_double(vp, "min-efficiency", &r->min_eff)) < 0) return rc;
  if (r->min_eff < 0 || r->min_eff > 1) return pf_error_set(PF_EINVAL, "--min-efficiency %g: expected 0..1", r->min_eff);
  if (r->nshards > 1 && fmt == PF_FMT_TABLE)
    return pf_error_set(PF_EINVAL, "--shard writes a shard for `preflight merge`: add --format json (or csv for very "
                        "large studies), or -o FILE.json");
  r->ngroups = groups_of(&r->s);
  r->npoints = r->ngroups * r->s.nn;
  if (r->npoints > PF_SWEEP_MAX_POINTS) return pf_error_set(PF_EINVAL, "%ld points: at most 1e8 in one sweep", r->npoints);
  long mine = r->nshards > 1 ? (r->npoints - r->shard + r->nshards) / r->nshards : 0;
  if (fmt == PF_FMT_JSON && mine > PF_SHARD_JSON_ROWS) /* merge reads a JSON shard whole (results.h) */
    return pf_error_set(PF_EINVAL, "--shard %d/%d: %ld points in this JSON shard, more than the %d a JSON shard "
                        "holds; use more shards (at least %ld) or CSV shards (--format csv), which stream",
                        r->shard, r->nshards, mine, PF_SHARD_JSON_ROWS,
                        (r->npoints + PF_SHARD_JSON_ROWS - 1) / PF_SHARD_JSON_ROWS);
  return 0;
}

/* This shard's points and the scenario of each (vp is rewritten point by point). */
static int sweep_points(pf_optvals *vp, sweep_run *r) {
  int rc;
  long mine = 0;
  for (long i = 0; i < r->npoints; i++) if (i % r->nshards == r->shard - 1) mine++;
  r->mine = mine;
  r->pts = calloc((size_t)(mine ? mine : 1), sizeof *r->pts);
  r->scs = calloc((size_t)(mine ? mine : 1), sizeof *r->scs);
  r->items = calloc((size_t)(mine ? mine : 1), sizeof *r->items);
  r->accum = calloc((size_t)r->ngroups, sizeof *r->accum);
  if (!r->pts || !r->scs || !r->items || !r->accum) return pf_error_set(PF_ENOMEM, "out of memory");
  const space *s = &r->s;
  long k = 0;
  for (long i = 0; i < r->npoints; i++)
    if (i % r->nshards == r->shard - 1) r->pts[k++] = (point){i, i / s->nn, s->nodes[i % s->nn]};
  for (long i = 0; i < mine; i++) {
    const point *pt = &r->pts[i];
    if (r->weak && (i == 0 || r->pts[i - 1].group != pt->group) &&
        (rc = weak_accum(vp, s, pt->group, &r->accum[pt->group])) < 0)
      return rc;
    if ((rc = set_group(vp, s, pt->group)) < 0 || (rc = set_nodes(vp, pt->nodes)) < 0) return rc;
    if ((rc = pf_opts_scenario(vp, &r->scs[i])) < 0) return rc;
    if (r->weak && r->accum[pt->group] > 0) { r->scs[i].plan.gbs = 0; r->scs[i].plan.grad_accum = r->accum[pt->group]; }
    r->items[i].sc = &r->scs[i];
  }
  return 0;
}

/* A point whose run failed (an engine failure, a killed worker: pf_error_is_failure) stops the sweep with
 * its cause (exit 2): it is not a row, and "invalid plan" would hide it. */
static int sweep_failure(const sweep_run *r) {
  for (long i = 0; i < r->mine; i++)
    if (pf_error_is_failure(r->items[i].rc))
      return pf_error_set(r->items[i].rc, "point %ld (%d nodes): %s", r->pts[i].index + 1, r->pts[i].nodes,
                          r->items[i].detail);
  return 0;
}

/* Predict every point: as given, or with the split tuned at each (--tune-each). */
static int sweep_predict(const pf_optvals *vp, sweep_run *r) {
  int rc = 0;
  pf_scenario *scs = r->scs;
  if (!pf_opts_get(vp, "tune-each")) {
    rc = pf_predict_batch(r->items, (int)r->mine, 0, "sweep");
    return rc < 0 ? rc : sweep_failure(r);
  }
  unsigned fixed = pf_opts_tune_fixed(vp);
  pf_progress_begin("sweep", r->mine, false); /* each point's tune draws its bar inside this one */
  for (long i = 0; i < r->mine && rc == 0; i++) {
    if (scs[i].plan.gbs <= 0 && !r->weak) {
      pf_progress_end();
      return pf_error_set(PF_EINVAL, "--tune-each needs --gbs");
    }
    if (r->weak && scs[i].plan.gbs <= 0) { /* weak: the global batch follows the tuned DP; keep the first plan's */
      pf_scenario t = scs[i];
      if (pf_plan_check(&t) == 0) scs[i].plan.gbs = t.plan.gbs;
      scs[i].plan.grad_accum = 0;
    }
    if (scs[i].gpus <= 0) scs[i].gpus = scs[i].nodes * scs[i].machine.gpus_per_node;
    rc = tune_point(&scs[i], fixed, &r->items[i]);
    pf_progress_item();
  }
  pf_progress_end();
  return rc < 0 ? rc : sweep_failure(r);
}

/* Every predicted point's interval (study/interval.h); without a readable validation folder the points go
 * out without one, and stderr says why. */
static int sweep_intervals(sweep_run *r) {
  pf_cli_intervals *ci = calloc(1, sizeof *ci);
  if (!ci) return pf_error_set(PF_ENOMEM, "out of memory");
  int rc = pf_cli_intervals_open(ci, NULL);
  if (rc < 0 && rc != PF_ENOMEM) {
    fprintf(stderr, "preflight sweep: no ranges: %s\n", pf_error_detail());
    rc = 0;
  }
  for (long i = 0; i < r->mine && rc == 0 && ci->pool; i++)
    if (r->items[i].rc == 0) rc = pf_cli_intervals_of(ci, &r->scs[i], false, &r->items[i].pred);
  pf_cli_intervals_close(ci);
  free(ci);
  return rc;
}

/* One row per point: its prediction, or why it has none. */
static cJSON *sweep_rows(const sweep_run *r) {
  cJSON *rows = cJSON_CreateArray();
  for (long i = 0; i < r->mine; i++) {
    const pf_batch_item *it = &r->items[i];
    cJSON *row = it->rc < 0 ? failed_row(&r->scs[i], r->pts[i].nodes, it->rc, it->detail, &it->pred)
                            : pf_report_prediction_json(&r->scs[i], &it->pred);
    cJSON_AddNumberToObject(row, "index", (double)r->pts[i].index);
    cJSON_AddNumberToObject(row, "group", (double)r->pts[i].group);
    cJSON_AddItemToObject(row, "axes", axes_json(&r->s, r->pts[i].group));
    cJSON_AddItemToArray(rows, row);
  }
  return rows;
}

/* The result as text: a shard (CSV or JSON for `preflight merge`) or the rendered sweep (and its plot).
 * Takes *rows and ctx (set to NULL when handed on to the document). */
static int sweep_text(const pf_optvals *vp, const sweep_run *r, pf_format fmt, cJSON **rows, cJSON **ctx,
                      char **text) {
  int rc = 0;
  if (r->nshards > 1 && fmt == PF_FMT_CSV) {
    char *b = NULL;
    size_t bl = 0;
    FILE *f = open_memstream(&b, &bl);
    if (!f) return pf_error_set(PF_ENOMEM, "out of memory");
    rc = pf_cli_sweep_raw(f, *ctx, *rows, r->shard, r->nshards);
    fclose(f);
    *text = b;
    if (rc < 0) return rc;
  } else if (r->nshards > 1) {
    cJSON *doc = pf_report_root_json();
    cJSON_AddItemToObject(doc, "sweep", *ctx);
    *ctx = NULL;
    cJSON *shd = cJSON_AddObjectToObject(doc, "shard");
    cJSON_AddNumberToObject(shd, "index", r->shard);
    cJSON_AddNumberToObject(shd, "count", r->nshards);
    cJSON_AddItemToObject(doc, "rows", *rows);
    *rows = NULL;
    *text = pf_report_json_text(doc);
    if (*text && strlen(*text) > PF_SHARD_JSON_MAX_B) /* rows longer than PF_SHARD_ROW_B: merge would refuse it */
      return pf_error_set(PF_EINVAL, "internal: this JSON shard is %zu bytes, more than the %zu `preflight merge` "
                          "reads; use CSV shards (--format csv)", strlen(*text), PF_SHARD_JSON_MAX_B);
  } else {
    *text = pf_cli_sweep_render(*ctx, *rows, fmt);
    const char *plot = pf_opts_get(vp, "plot");
    if (*text && plot && (rc = pf_cli_sweep_plot(*ctx, *rows, pf_opts_get(vp, "measured"), plot)) < 0) return rc;
  }
  if (!*text) return pf_error_set(PF_ENOMEM, "out of memory");
  return 0;
}

/* After the result: the predictions' warnings on stderr, and the verdict of a sweep whose every point
 * failed (pf_cli_sweep_verdict: exit 1, as its merged shards exit).  A shard's status says it ran: its
 * points are part of the sweep, whose verdict is the merge's. */
static int sweep_finish(const sweep_run *r, const cJSON *rows) {
  if (r->nshards != 1) return 0;
  for (long i = 0; i < r->mine; i++) /* diagnostics, not part of the result */
    for (int w = 0; r->items[i].rc == 0 && w < r->items[i].pred.nwarnings; w++)
      fprintf(stderr, "preflight sweep: warning: %d nodes: %s\n", r->pts[i].nodes, r->items[i].pred.warnings[w]);
  return pf_cli_sweep_verdict(rows);
}

int pf_cmd_sweep(int argc, char **argv) {
  pf_cli cli;
  int rc = pf_cli_begin(&spec, argc, argv, &cli);
  if (rc != 0) return pf_cli_end(&cli, rc > 0 ? 0 : pf_cli_fail("sweep", rc));
  pf_optvals *vp = &cli.v;
  sweep_run r;
  memset(&r, 0, sizeof r);
  cJSON *rows = NULL, *ctx = NULL;
  char *text = NULL;
  if ((rc = sweep_options(vp, cli.fmt, &r)) < 0 || (rc = sweep_points(vp, &r)) < 0 || (rc = sweep_predict(vp, &r)) < 0 ||
      (rc = sweep_intervals(&r)) < 0)
    goto done;
  rows = sweep_rows(&r);
  ctx = cJSON_CreateObject();
  cJSON_AddStringToObject(ctx, "command", "sweep");
  cJSON_AddStringToObject(ctx, "scaling", r.weak ? "weak" : "strong");
  cJSON *axn = cJSON_AddArrayToObject(ctx, "axes");
  for (int a = 0; a < r.s.naxes; a++) cJSON_AddItemToArray(axn, cJSON_CreateString(r.s.ax[a].name));
  cJSON_AddNumberToObject(ctx, "points", (double)r.npoints);
  if (r.min_eff > 0) cJSON_AddNumberToObject(ctx, "min_efficiency", r.min_eff);
  if ((rc = sweep_text(vp, &r, cli.fmt, &rows, &ctx, &text)) < 0) goto done;
  rc = pf_cli_emit(&cli, text);
  if (rc == 0) rc = sweep_finish(&r, rows);
done:
  free(text);
  cJSON_Delete(rows);
  cJSON_Delete(ctx);
  sweep_run_free(&r);
  return pf_cli_end(&cli, rc < 0 ? pf_cli_fail("sweep", rc) : 0);
}
