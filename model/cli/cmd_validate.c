/* cmd_validate.c - `preflight validate`: predicted vs measured.
 *
 *   validate RUNS.csv [--format table|json|csv|markdown] [--plot FILE.svg] [--max-error P]
 *   validate --megatron-log FILE --machine ID [scenario options]
 *   validate --fit RUNS.csv [-o fitted.json] [--no-loo]
 *
 * Rows, errors and statistics come from the library (validate.c, fit.c,
 * megatron.c); this file formats them.  The parity plot is hand-written SVG:
 * predicted against measured on log axes with the +-10 % band (no plotting
 * dependency).  Exit codes: 0 done; 1 --max-error exceeded (median absolute
 * percentage error above P); 2 malformed input or usage.
 */
#include "cli.h"
#include "options.h"

#include "preflight/collval.h"
#include "preflight/error.h"
#include "preflight/report.h"
#include "preflight/validate.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pf_opt validate_opts[] = {
    {"megatron-log", "FILE", "compare a Megatron-LM training log with the prediction for its configuration"},
    {"fit", "RUNS.csv", "fit compute_eff, comm_eff, step_overhead_s to the runs; -o writes the calibration overlay"},
    {"no-loo", NULL, "with --fit: skip the leave-one-configuration-out errors"},
    {"plot", "FILE.svg", "parity plot: predicted vs measured, log axes, +-10 % band"},
    {"max-error", "P", "exit 1 when the median absolute error exceeds P percent (for CI)"},
    {"gpus-per-node", "K", "nccl-tests / rccl-tests output: ranks per node (default: from its \"# Rank\" lines)"},
    {"summary-only", NULL, "print the summary without the per-row table"},
    {NULL, NULL, NULL}};

static const char *examples =
    "  preflight validate scenarios/validation/epicure.csv\n"
    "  preflight validate scenarios/validation/maelstrom.csv --format json --plot parity.svg\n"
    "  preflight validate runs.csv --max-error 15          # exit 1 if the median error exceeds 15 %\n"
    "  preflight validate --megatron-log train.log --machine leonardo-booster\n"
    "  preflight validate --fit my-runs.csv -o fitted.json\n"
    "  preflight predict --machine lumi-g --model llama2-7b --nodes 64 --tp 2 --gbs 1024 --calibration fitted.json\n";

typedef enum { FMT_TABLE, FMT_JSON, FMT_CSV, FMT_MD } vfmt;

static int get_format(const pf_optvals *v, vfmt *f, bool fit_mode) {
  const char *s = pf_opts_get(v, "format");
  const char *o = fit_mode ? NULL : pf_opts_get(v, "o");
  *f = FMT_TABLE;
  if (!s && o) {
    size_t n = strlen(o);
    if (n > 5 && !strcmp(o + n - 5, ".json")) s = "json";
    else if (n > 4 && !strcmp(o + n - 4, ".csv")) s = "csv";
    else if (n > 3 && !strcmp(o + n - 3, ".md")) s = "markdown";
  }
  if (!s || !strcmp(s, "table")) return 0;
  if (!strcmp(s, "json")) { *f = FMT_JSON; return 0; }
  if (!strcmp(s, "csv")) { *f = FMT_CSV; return 0; }
  if (!strcmp(s, "markdown") || !strcmp(s, "md")) { *f = FMT_MD; return 0; }
  return pf_error_set(PF_EINVAL, "--format \"%s\": valid: table, json, csv, markdown", s);
}

/* ---- display helpers ---- */

static double disp(const pf_vrow *r, double x) { return r->metric == PF_MET_SCALING ? 100 * x : x; }
static const char *unit(const pf_vrow *r) { return pf_metric_unit(r->metric); }

static void fmt_measured(const pf_vrow *r, char *b, size_t n) {
  const char *u = unit(r);
  switch (r->bound) {
  case PF_BOUND_LOWER: snprintf(b, n, ">= %.4g %s", disp(r, r->measured), u); break;
  case PF_BOUND_UPPER: snprintf(b, n, "<= %.4g %s", disp(r, r->measured), u); break;
  case PF_BOUND_RANGE: snprintf(b, n, "%.4g-%.4g %s", disp(r, r->measured), disp(r, r->measured_hi), u); break;
  default: snprintf(b, n, "%.4g %s", disp(r, r->measured), u);
  }
}

static void fmt_value(const pf_vrow *r, double x, char *b, size_t n) {
  if (isnan(x)) snprintf(b, n, "-");
  else snprintf(b, n, "%.4g %s", disp(r, x), unit(r));
}

/* "+3.1%", or "0.0%" when the prediction satisfies a bound */
static const char *fmt_err(double e, char *b, size_t n) {
  if (e == 0) snprintf(b, n, "0.0%%");
  else snprintf(b, n, "%+.1f%%", 100 * e);
  return b;
}

static const char *status_name(pf_row_status s) {
  return s == PF_ROW_PREDICTED ? "predicted" : s == PF_ROW_NOT_PREDICTED ? "not predicted" : "failed";
}

/* ---- grouping for summaries ---- */

static bool keep_metric(const pf_vrow *r, const void *a) { return r->metric == *(const pf_metric *)a; }
static bool keep_tag(const pf_vrow *r, const void *a) { return !strcmp(r->tag, (const char *)a); }
static bool keep_use(const pf_vrow *r, const void *a) { return !strcmp(r->use, (const char *)a); }
static bool keep_machine(const pf_vrow *r, const void *a) { return !strcmp(r->machine, (const char *)a); }

/* Distinct non-empty strings of field f among predicted rows, in order of appearance. */
static int distinct(const pf_vset *s, int which, const char **out, int max) {
  int n = 0;
  for (int i = 0; i < s->n; i++) {
    const pf_vrow *r = &s->rows[i];
    const char *v = which == 0 ? r->tag : which == 1 ? r->use : r->machine;
    if (!v[0]) continue;
    bool seen = false;
    for (int k = 0; k < n; k++) if (!strcmp(out[k], v)) seen = true;
    if (!seen && n < max) out[n++] = v;
  }
  return n;
}

/* Indices of the worst predicted rows, largest |error| first. */
static int worst(const pf_vset *s, int *idx, int max) {
  int n = 0;
  for (int i = 0; i < s->n; i++) {
    if (s->rows[i].status != PF_ROW_PREDICTED) continue;
    double e = fabs(s->rows[i].error);
    int k = n < max ? n++ : max;
    if (k == max) { if (e <= fabs(s->rows[idx[max - 1]].error)) continue; k = max - 1; }
    while (k > 0 && fabs(s->rows[idx[k - 1]].error) < e) { idx[k] = idx[k - 1]; k--; }
    idx[k] = i;
  }
  return n;
}

static cJSON *stats_json(pf_vstats st) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "rows", st.n);
  if (st.n > 0) {
    cJSON_AddNumberToObject(o, "median_abs_pct_error", st.median_abs_pct);
    cJSON_AddNumberToObject(o, "mean_abs_pct_error", st.mean_abs_pct);
    cJSON_AddNumberToObject(o, "max_abs_pct_error", st.max_abs_pct);
  } else {
    cJSON_AddNullToObject(o, "median_abs_pct_error");
    cJSON_AddNullToObject(o, "mean_abs_pct_error");
  }
  return o;
}

static void add_num_or_null(cJSON *o, const char *k, double x) {
  if (isfinite(x)) cJSON_AddNumberToObject(o, k, x);
  else cJSON_AddNullToObject(o, k);
}

static cJSON *row_json(const pf_vrow *r, bool fit) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "line", r->line);
  cJSON_AddStringToObject(o, "machine", r->machine);
  cJSON_AddStringToObject(o, "model", r->model[0] ? r->model : r->layers ? "custom-transformer" : "custom");
  cJSON_AddNumberToObject(o, "nodes", r->nodes);
  if (r->gpus) cJSON_AddNumberToObject(o, "gpus", r->gpus);
  cJSON_AddStringToObject(o, "metric", pf_metric_name(r->metric));
  cJSON_AddStringToObject(o, "unit", pf_metric_unit(r->metric) );
  cJSON_AddNumberToObject(o, "measured", disp(r, r->measured));
  if (r->bound != PF_BOUND_EXACT) cJSON_AddStringToObject(o, "bound", pf_bound_name(r->bound));
  if (r->bound == PF_BOUND_RANGE) cJSON_AddNumberToObject(o, "measured_hi", disp(r, r->measured_hi));
  if (r->scaling != PF_SCALING_NONE) cJSON_AddStringToObject(o, "scaling", r->scaling == PF_SCALING_WEAK ? "weak" : "strong");
  if (r->baseline_nodes) cJSON_AddNumberToObject(o, "baseline_nodes", r->baseline_nodes);
  if (r->scope != PF_SCOPE_NONE) cJSON_AddStringToObject(o, "scope", pf_scope_name(r->scope));
  cJSON_AddStringToObject(o, "status", status_name(r->status));
  if (r->status == PF_ROW_PREDICTED) {
    cJSON_AddNumberToObject(o, "predicted", disp(r, r->predicted));
    cJSON_AddNumberToObject(o, "error_pct", 100 * r->error);
    cJSON_AddNumberToObject(o, "abs_error_pct", 100 * fabs(r->error));
    if (fit) {
      cJSON_AddNumberToObject(o, "band_lo", disp(r, r->band_lo));
      cJSON_AddNumberToObject(o, "band_hi", disp(r, r->band_hi));
      if (!isnan(r->loo_error)) {
        cJSON_AddNumberToObject(o, "loo_predicted", disp(r, r->loo_predicted));
        cJSON_AddNumberToObject(o, "loo_error_pct", 100 * r->loo_error);
      }
    }
  } else {
    cJSON_AddStringToObject(o, "reason", r->reason);
  }
  if (r->use[0]) cJSON_AddStringToObject(o, "use", r->use);
  if (r->tag[0]) cJSON_AddStringToObject(o, "tag", r->tag);
  cJSON_AddStringToObject(o, "source", r->source);
  return o;
}

static cJSON *summary_json(const pf_vset *s) {
  cJSON *sum = cJSON_CreateObject();
  pf_vstats all = pf_validate_stats(s, NULL, NULL);
  int np = 0;
  for (int i = 0; i < s->n; i++) np += s->rows[i].status != PF_ROW_PREDICTED;
  cJSON_AddNumberToObject(sum, "rows", s->n);
  cJSON_AddNumberToObject(sum, "predicted", all.n);
  cJSON_AddNumberToObject(sum, "not_predicted", np);
  add_num_or_null(sum, "median_abs_pct_error", all.median_abs_pct);
  add_num_or_null(sum, "mean_abs_pct_error", all.mean_abs_pct);
  add_num_or_null(sum, "max_abs_pct_error", all.max_abs_pct);
  cJSON *bm = cJSON_AddObjectToObject(sum, "by_metric");
  for (int m = 0; m < PF_MET_COUNT; m++) {
    pf_metric mm = (pf_metric)m;
    pf_vstats st = pf_validate_stats(s, keep_metric, &mm);
    if (st.n > 0) cJSON_AddItemToObject(bm, pf_metric_name(mm), stats_json(st));
  }
  const char *names[64];
  static const char *groups[] = {"by_tag", "by_use", "by_machine"};
  bool (*keeps[])(const pf_vrow *, const void *) = {keep_tag, keep_use, keep_machine};
  for (int g = 0; g < 3; g++) {
    cJSON *o = cJSON_AddObjectToObject(sum, groups[g]);
    int n = distinct(s, g, names, 64);
    for (int k = 0; k < n; k++) {
      pf_vstats st = pf_validate_stats(s, keeps[g], names[k]);
      if (st.n > 0) cJSON_AddItemToObject(o, names[k], stats_json(st));
    }
  }
  int idx[5], nw = worst(s, idx, 5);
  cJSON *w = cJSON_AddArrayToObject(sum, "worst");
  for (int k = 0; k < nw; k++) {
    const pf_vrow *r = &s->rows[idx[k]];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "line", r->line);
    cJSON_AddStringToObject(o, "machine", r->machine);
    cJSON_AddStringToObject(o, "metric", pf_metric_name(r->metric));
    cJSON_AddNumberToObject(o, "error_pct", 100 * r->error);
    cJSON_AddItemToArray(w, o);
  }
  return sum;
}

static const char *model_name(const pf_vrow *r) { return r->model[0] ? r->model : r->layers ? "custom-tf" : "custom"; }

static void print_stats_line(FILE *f, const char *label, pf_vstats st) {
  if (st.n == 0) return;
  fprintf(f, "  %-24s %4d rows  median %6.1f %%  mean %6.1f %%  max %6.1f %%\n", label, st.n, st.median_abs_pct,
          st.mean_abs_pct, st.max_abs_pct);
}

static void print_table(FILE *f, const pf_vset *s, bool rows, bool fit) {
  int np = 0;
  for (int i = 0; i < s->n; i++) np += s->rows[i].status != PF_ROW_PREDICTED;
  fprintf(f, "validation: %s (%d rows: %d predicted, %d not predicted)\n", s->path, s->n, s->n - np, np);
  if (rows) {
    if (fit)
      fprintf(f, "%5s  %-17s %-12s %5s  %-18s %14s  %-26s %8s %8s  %-5s\n", "line", "machine", "model", "nodes",
              "metric", "measured", "predicted (fit) +- band", "error", "LOO", "use");
    else
      fprintf(f, "%5s  %-17s %-12s %5s  %-18s %16s %14s %8s  %-5s %s\n", "line", "machine", "model", "nodes",
              "metric", "measured", "predicted", "error", "use", "tag");
    for (int i = 0; i < s->n; i++) {
      const pf_vrow *r = &s->rows[i];
      if (r->status != PF_ROW_PREDICTED) continue;
      char m[48], p[48];
      fmt_measured(r, m, sizeof m);
      fmt_value(r, r->predicted, p, sizeof p);
      if (fit) {
        char band[64], loo[16];
        snprintf(band, sizeof band, "%s +- %.2g%%", p, 100 * (r->band_hi / r->predicted - 1));
        if (isnan(r->loo_error)) snprintf(loo, sizeof loo, "-");
        else snprintf(loo, sizeof loo, "%+.1f%%", 100 * r->loo_error);
        char e[16];
        fprintf(f, "%5d  %-17s %-12s %5d  %-18s %14s  %-26s %8s %8s  %-5s\n", r->line, r->machine, model_name(r),
                r->nodes, pf_metric_name(r->metric), m, band, fmt_err(r->error, e, sizeof e), loo, r->use);
      } else {
        char e[16];
        fprintf(f, "%5d  %-17s %-12s %5d  %-18s %16s %14s %8s  %-5s %s\n", r->line, r->machine, model_name(r),
                r->nodes, pf_metric_name(r->metric), m, p, fmt_err(r->error, e, sizeof e), r->use, r->tag);
      }
    }
    if (np) {
      fprintf(f, "\nnot predicted:\n");
      for (int i = 0; i < s->n; i++) {
        const pf_vrow *r = &s->rows[i];
        if (r->status == PF_ROW_PREDICTED) continue;
        fprintf(f, "%5d  %-17s %-12s %-14s %s\n", r->line, r->machine, model_name(r), pf_metric_name(r->metric),
                r->reason);
      }
    }
    fprintf(f, "\n");
  }
  pf_vstats all = pf_validate_stats(s, NULL, NULL);
  if (all.n == 0) { fprintf(f, "summary: no row could be predicted\n"); return; }
  fprintf(f, "summary: median |error| %.1f %%, mean %.1f %%, max %.1f %% over %d predicted rows\n",
          all.median_abs_pct, all.mean_abs_pct, all.max_abs_pct, all.n);
  fprintf(f, "by metric:\n");
  for (int m = 0; m < PF_MET_COUNT; m++) {
    pf_metric mm = (pf_metric)m;
    print_stats_line(f, pf_metric_name(mm), pf_validate_stats(s, keep_metric, &mm));
  }
  const char *names[64];
  static const char *titles[] = {"by tag:", "by use:", "by machine:"};
  bool (*keeps[])(const pf_vrow *, const void *) = {keep_tag, keep_use, keep_machine};
  for (int g = 0; g < 3; g++) {
    int n = distinct(s, g, names, 64);
    if (n == 0) continue;
    fprintf(f, "%s\n", titles[g]);
    for (int k = 0; k < n; k++) print_stats_line(f, names[k], pf_validate_stats(s, keeps[g], names[k]));
  }
  int idx[5], nw = worst(s, idx, 5);
  fprintf(f, "worst rows:\n");
  for (int k = 0; k < nw; k++) {
    const pf_vrow *r = &s->rows[idx[k]];
    char m[48], p[48];
    fmt_measured(r, m, sizeof m);
    fmt_value(r, r->predicted, p, sizeof p);
    char e[16];
    fprintf(f, "  line %d: %s %s %d nodes %s: predicted %s, measured %s (%s)\n", r->line, r->machine,
            model_name(r), r->nodes, pf_metric_name(r->metric), p, m, fmt_err(r->error, e, sizeof e));
  }
}

static void md_escape(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '|') fputs("\\|", f);
    else if (*s == '\n') fputc(' ', f);
    else fputc(*s, f);
  }
}

static void md_stats_row(FILE *f, const char *label, pf_vstats st) {
  if (st.n == 0) return;
  fprintf(f, "| %s | %d | %.1f %% | %.1f %% | %.1f %% |\n", label, st.n, st.median_abs_pct, st.mean_abs_pct,
          st.max_abs_pct);
}

static void print_markdown(FILE *f, const pf_vset *s, bool rows) {
  pf_vstats all = pf_validate_stats(s, NULL, NULL);
  int np = 0;
  for (int i = 0; i < s->n; i++) np += s->rows[i].status != PF_ROW_PREDICTED;
  fprintf(f, "`%s`: %d rows, %d predicted, %d not predicted.\n\n", s->path, s->n, s->n - np, np);
  fprintf(f, "| rows | n | median \\|error\\| | mean \\|error\\| | max \\|error\\| |\n|---|---:|---:|---:|---:|\n");
  md_stats_row(f, "all predicted", all);
  for (int m = 0; m < PF_MET_COUNT; m++) {
    pf_metric mm = (pf_metric)m;
    char label[64];
    snprintf(label, sizeof label, "metric `%s`", pf_metric_name(mm));
    md_stats_row(f, label, pf_validate_stats(s, keep_metric, &mm));
  }
  const char *names[64];
  static const char *what[] = {"tag", "use", "machine"};
  bool (*keeps[])(const pf_vrow *, const void *) = {keep_tag, keep_use, keep_machine};
  for (int g = 0; g < 3; g++) {
    int n = distinct(s, g, names, 64);
    for (int k = 0; k < n; k++) {
      char label[96];
      snprintf(label, sizeof label, "%s `%s`", what[g], names[k]);
      md_stats_row(f, label, pf_validate_stats(s, keeps[g], names[k]));
    }
  }
  if (!rows) return;
  fprintf(f, "\n| line | machine | model | nodes | metric | measured | predicted | error | use | source |\n"
             "|---:|---|---|---:|---|---:|---:|---:|---|---|\n");
  for (int i = 0; i < s->n; i++) {
    const pf_vrow *r = &s->rows[i];
    if (r->status != PF_ROW_PREDICTED) continue;
    char m[48], p[48];
    fmt_measured(r, m, sizeof m);
    fmt_value(r, r->predicted, p, sizeof p);
    char e[16];
    fprintf(f, "| %d | %s | %s | %d | %s | %s | %s | %s | %s | ", r->line, r->machine, model_name(r), r->nodes,
            pf_metric_name(r->metric), m, p, fmt_err(r->error, e, sizeof e), r->use);
    md_escape(f, r->source);
    fprintf(f, " |\n");
  }
  if (np) {
    fprintf(f, "\nNot predicted: ");
    int shown = 0;
    for (int i = 0; i < s->n; i++) {
      const pf_vrow *r = &s->rows[i];
      if (r->status == PF_ROW_PREDICTED) continue;
      if (shown < 12) fprintf(f, "%sline %d (%s)", shown ? ", " : "", r->line, pf_metric_name(r->metric));
      shown++;
    }
    if (shown > 12) fprintf(f, " and %d more", shown - 12);
    fprintf(f, "; reasons in `preflight validate %s`.\n", s->path);
  }
}

static void print_csv(FILE *f, const pf_vset *s, bool fit) {
  fprintf(f, "line,machine,model,nodes,gpus,metric,unit,bound,measured,measured_hi,status,predicted,error_pct%s,use,tag,"
             "reason,source\n", fit ? ",band_lo,band_hi,loo_predicted,loo_error_pct" : "");
  for (int i = 0; i < s->n; i++) {
    const pf_vrow *r = &s->rows[i];
    bool ok = r->status == PF_ROW_PREDICTED;
    fprintf(f, "%d,%s,%s,%d,%d,%s,%s,%s,%.6g,", r->line, r->machine, model_name(r), r->nodes, r->gpus,
            pf_metric_name(r->metric), pf_metric_unit(r->metric), pf_bound_name(r->bound), disp(r, r->measured));
    if (r->bound == PF_BOUND_RANGE) fprintf(f, "%.6g", disp(r, r->measured_hi));
    fprintf(f, ",%s,", status_name(r->status));
    if (ok) fprintf(f, "%.6g,%.4f", disp(r, r->predicted), 100 * r->error);
    else fprintf(f, ",");
    if (fit) {
      if (ok) fprintf(f, ",%.6g,%.6g", disp(r, r->band_lo), disp(r, r->band_hi));
      else fprintf(f, ",,");
      if (!isnan(r->loo_error)) fprintf(f, ",%.6g,%.4f", disp(r, r->loo_predicted), 100 * r->loo_error);
      else fprintf(f, ",,");
    }
    fprintf(f, ",%s,%s,", r->use, r->tag);
    pf_csv_put(f, ok ? "" : r->reason);
    fputc(',', f);
    pf_csv_put(f, r->source);
    fputc('\n', f);
  }
}

/* ---- parity plot (SVG) ---- */

static int write_plot(const pf_vset *s, const char *path) {
  static const char *colors[PF_MET_COUNT] = {"#1f77b4", "#17becf", "#d62728", "#9467bd",
                                             "#8c564b", "#2ca02c", "#ff7f0e", "#e377c2"};
  double vmin = INFINITY, vmax = 0;
  int n = 0;
  for (int i = 0; i < s->n; i++) {
    const pf_vrow *r = &s->rows[i];
    if (r->status != PF_ROW_PREDICTED || !(r->predicted > 0) || !(r->measured > 0)) continue;
    double a = disp(r, r->measured), b = disp(r, r->predicted);
    double a2 = r->bound == PF_BOUND_RANGE ? disp(r, r->measured_hi) : a;
    vmin = fmin(vmin, fmin(a, fmin(a2, b)));
    vmax = fmax(vmax, fmax(a, fmax(a2, b)));
    n++;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return pf_error_set(PF_ENOMEM, "out of memory");
  const double W = 640, H = 600, L = 80, R = 190, T = 40, B = 60;
  const double pw = W - L - R, ph = H - T - B;
  if (n == 0) { vmin = 0.1; vmax = 10; }
  double d0 = floor(log10(vmin)), d1 = ceil(log10(vmax));
  if (d1 <= d0) d1 = d0 + 1;
  fprintf(f, "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
             "font-family=\"sans-serif\" font-size=\"12\">\n", W, H, W, H);
  fprintf(f, "<title>preflight validate: predicted vs measured (%s)</title>\n", s->path);
  fprintf(f, "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n");
#define X(v) (L + (log10(v) - d0) / (d1 - d0) * pw)
#define Y(v) (T + ph - (log10(v) - d0) / (d1 - d0) * ph)
  double a = pow(10, d0), b = pow(10, d1);
  /* +-10 % band, then y = x */
  fprintf(f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"#dddddd\" opacity=\"0.7\"/>\n",
          X(a), Y(a * 1.1), X(b / 1.1), Y(b), X(b), Y(b * 0.9), X(a), Y(a * 0.9));
  fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" stroke-dasharray=\"4 3\"/>\n", X(a),
          Y(a), X(b), Y(b));
  fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"black\"/>\n", L, T, pw, ph);
  for (double d = d0; d <= d1 + 1e-9; d += 1) {
    double v = pow(10, d);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", X(v), T + ph, X(v), T + ph + 5);
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">%g</text>\n", X(v), T + ph + 18, v);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"black\"/>\n", L - 5, Y(v), L, Y(v));
    fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"end\">%g</text>\n", L - 8, Y(v) + 4, v);
  }
  fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"middle\">measured (row's unit; efficiencies in %%)</text>\n",
          L + pw / 2, H - 15);
  fprintf(f, "<text transform=\"translate(18 %.1f) rotate(-90)\" text-anchor=\"middle\">predicted</text>\n", T + ph / 2);
  fprintf(f, "<text x=\"%.1f\" y=\"22\" text-anchor=\"middle\" font-size=\"14\">predicted vs measured: ", L + pw / 2);
  for (const char *c = s->path; *c; c++) {
    if (*c == '<') fputs("&lt;", f);
    else if (*c == '&') fputs("&amp;", f);
    else fputc(*c, f);
  }
  fprintf(f, "</text>\n");
  bool used[PF_MET_COUNT] = {0};
  for (int i = 0; i < s->n; i++) {
    const pf_vrow *r = &s->rows[i];
    if (r->status != PF_ROW_PREDICTED || !(r->predicted > 0) || !(r->measured > 0)) continue;
    double mx = disp(r, r->measured), py = disp(r, r->predicted);
    const char *col = colors[r->metric];
    used[r->metric] = true;
    if (r->bound == PF_BOUND_EXACT)
      fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\" fill-opacity=\"0.75\"><title>line %d: %s</title></circle>\n",
              X(mx), Y(py), col, r->line, pf_metric_name(r->metric));
    else {
      if (r->bound == PF_BOUND_RANGE)
        fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"/>\n", X(mx),
                Y(py), X(disp(r, r->measured_hi)), Y(py), col);
      double up = r->bound == PF_BOUND_UPPER ? -1 : 1; /* triangle points the way the bound allows */
      double x0 = X(mx), y0 = Y(py);
      fprintf(f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"none\" stroke=\"%s\" stroke-width=\"1.5\">"
                 "<title>line %d: %s (%s bound)</title></polygon>\n",
              x0 + 6 * up, y0, x0 - 4 * up, y0 - 5, x0 - 4 * up, y0 + 5, col, r->line, pf_metric_name(r->metric),
              pf_bound_name(r->bound));
    }
  }
  double ly = T + 10;
  for (int m = 0; m < PF_MET_COUNT; m++) {
    if (!used[m]) continue;
    fprintf(f, "<circle cx=\"%.1f\" cy=\"%.1f\" r=\"4\" fill=\"%s\"/><text x=\"%.1f\" y=\"%.1f\">%s</text>\n",
            L + pw + 15, ly, colors[m], L + pw + 25, ly + 4, pf_metric_name((pf_metric)m));
    ly += 18;
  }
  fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"12\" height=\"10\" fill=\"#dddddd\"/><text x=\"%.1f\" y=\"%.1f\">"
             "within 10 %%</text>\n", L + pw + 9, ly - 5, L + pw + 25, ly + 4);
  ly += 18;
  fprintf(f, "<polygon points=\"%.1f,%.1f %.1f,%.1f %.1f,%.1f\" fill=\"none\" stroke=\"black\"/><text x=\"%.1f\" "
             "y=\"%.1f\">bound (lower: right)</text>\n", L + pw + 21, ly, L + pw + 11, ly - 5, L + pw + 11, ly + 5,
          L + pw + 25, ly + 4);
#undef X
#undef Y
  fprintf(f, "</svg>\n");
  fclose(f);
  int rc = pf_write_file_atomic(path, buf);
  free(buf);
  return rc;
}

/* ---- emit text to -o or stdout ---- */

static int emit(const char *out_path, char *buf) {
  if (!out_path) { fputs(buf, stdout); return 0; }
  return pf_write_file_atomic(out_path, buf);
}

static int render(const pf_vset *s, vfmt fmt, bool rows, bool fit, char **text) {
  size_t len = 0;
  FILE *f = open_memstream(text, &len);
  if (!f) return pf_error_set(PF_ENOMEM, "out of memory");
  if (fmt == FMT_JSON) {
    cJSON *root = pf_report_root_json();
    cJSON_AddStringToObject(root, "file", s->path);
    cJSON *arr = cJSON_AddArrayToObject(root, "rows");
    for (int i = 0; i < s->n; i++) cJSON_AddItemToArray(arr, row_json(&s->rows[i], fit));
    cJSON_AddItemToObject(root, "summary", summary_json(s));
    pf_report_json_print(f, root);
  } else if (fmt == FMT_CSV) print_csv(f, s, fit);
  else if (fmt == FMT_MD) print_markdown(f, s, rows);
  else print_table(f, s, rows, fit);
  fclose(f);
  return 0;
}

/* ---- validate RUNS.csv ---- */

static int check_max_error(const pf_optvals *v, const pf_vset *s, int *status) {
  double p;
  int rc = pf_opts_double(v, "max-error", &p);
  if (rc <= 0) return rc;
  pf_vstats st = pf_validate_stats(s, NULL, NULL);
  if (st.n == 0) {
    fprintf(stderr, "preflight validate: --max-error %g: no row could be predicted\n", p);
    *status = 1;
  } else if (st.median_abs_pct > p) {
    fprintf(stderr, "preflight validate: median |error| %.2f %% exceeds --max-error %g %%\n", st.median_abs_pct, p);
    *status = 1;
  }
  return 0;
}

static int cmd_csv(const pf_optvals *v, const char *path, vfmt fmt) {
  pf_vset s;
  int rc = pf_validate_read(path, &s);
  if (rc < 0) return pf_cli_fail("validate", rc);
  pf_validate_opts o = {pf_opts_get(v, "calibration"), NULL};
  double me;
  if ((rc = pf_opts_double(v, "max-error", &me)) < 0) { pf_vset_free(&s); return pf_cli_fail("validate", rc); }
  if ((rc = pf_validate_run(&s, &o)) < 0) { pf_vset_free(&s); return pf_cli_fail("validate", rc); }
  char *text = NULL;
  int status = 0;
  if ((rc = render(&s, fmt, !pf_opts_get(v, "summary-only"), false, &text)) < 0 ||
      (rc = emit(pf_opts_get(v, "o"), text)) < 0)
    status = pf_cli_fail("validate", rc);
  free(text);
  const char *plot = pf_opts_get(v, "plot");
  if (status == 0 && plot && (rc = write_plot(&s, plot)) < 0) status = pf_cli_fail("validate", rc);
  if (status == 0 && (rc = check_max_error(v, &s, &status)) < 0) status = pf_cli_fail("validate", rc);
  pf_vset_free(&s);
  return status;
}

/* ---- validate --fit RUNS.csv ---- */

static int cmd_fit(const pf_optvals *v, const char *path, vfmt fmt) {
  pf_vset s;
  int rc = pf_validate_read(path, &s);
  if (rc < 0) return pf_cli_fail("validate", rc);
  pf_validate_opts o = {pf_opts_get(v, "calibration"), NULL};
  if ((rc = pf_validate_run(&s, &o)) < 0) { pf_vset_free(&s); return pf_cli_fail("validate", rc); }
  pf_vstats before = pf_validate_stats(&s, NULL, NULL);
  pf_fit_result fr;
  fprintf(stderr, "preflight validate: fitting %s ...\n", path);
  if ((rc = pf_fit(&s, &o, !pf_opts_get(v, "no-loo"), &fr)) < 0) { pf_vset_free(&s); return pf_cli_fail("validate", rc); }
  pf_vstats after = pf_validate_stats(&s, NULL, NULL);
  /* machines the runs came from, for the overlay's provenance */
  char machines[512] = "";
  for (int i = 0; i < s.n; i++) {
    if (s.rows[i].group < 0 || strstr(machines, s.rows[i].machine)) continue;
    if (machines[0]) strncat(machines, ",", sizeof machines - strlen(machines) - 1);
    strncat(machines, s.rows[i].machine, sizeof machines - strlen(machines) - 1);
  }
  char *overlay = pf_fit_json(&fr, path, machines);
  const char *out = pf_opts_get(v, "o");
  int status = 0;
  if (!overlay) status = pf_cli_fail("validate", pf_error_set(PF_ENOMEM, "out of memory"));
  else if (out && (rc = pf_write_file_atomic(out, overlay)) < 0) status = pf_cli_fail("validate", rc);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (status == 0 && f) {
    static const char *pn[3] = {"compute_eff", "comm_eff", "step_overhead_s"};
    double pv[3] = {fr.p.compute_eff, fr.p.comm_eff, fr.p.step_overhead_s};
    if (fmt == FMT_JSON) {
      cJSON *root = pf_report_root_json();
      cJSON_AddStringToObject(root, "file", path);
      cJSON *fo = cJSON_AddObjectToObject(root, "fit");
      for (int k = 0; k < 3; k++) cJSON_AddNumberToObject(fo, pn[k], pv[k]);
      cJSON_AddNumberToObject(fo, "rel_sigma", fr.rel_sigma);
      cJSON *nc = cJSON_AddArrayToObject(fo, "not_constrained");
      for (int k = 0; k < 3; k++) if (fr.fixed[k]) cJSON_AddItemToArray(nc, cJSON_CreateString(pn[k]));
      cJSON *ab = cJSON_AddArrayToObject(fo, "at_range_limit");
      for (int k = 0; k < 3; k++) if (fr.at_bound[k]) cJSON_AddItemToArray(ab, cJSON_CreateString(pn[k]));
      cJSON_AddNumberToObject(fo, "rows_used", fr.rows_used);
      cJSON_AddNumberToObject(fo, "configurations", fr.groups);
      cJSON_AddNumberToObject(fo, "iterations", fr.iterations);
      cJSON_AddStringToObject(fo, "status", fr.status);
      cJSON_AddItemToObject(fo, "before", stats_json(before));
      cJSON_AddItemToObject(fo, "after", stats_json(after));
      if (fr.loo_done) cJSON_AddItemToObject(fo, "leave_one_out", stats_json(fr.loo));
      if (out) cJSON_AddStringToObject(fo, "overlay", out);
      cJSON *arr = cJSON_AddArrayToObject(root, "rows");
      for (int i = 0; i < s.n; i++) cJSON_AddItemToArray(arr, row_json(&s.rows[i], true));
      cJSON_AddItemToObject(root, "summary", summary_json(&s));
      pf_report_json_print(f, root);
    } else if (fmt == FMT_CSV) {
      print_csv(f, &s, true);
    } else {
      fprintf(f, "fit of %s: %d rows in %d configurations, %d iterations (%s)\n", path, fr.rows_used, fr.groups,
              fr.iterations, fr.status);
      for (int k = 0; k < 3; k++)
        fprintf(f, "  %-16s %.6g%s\n", pn[k], pv[k],
                fr.fixed[k]             ? "   (not constrained by these runs: default kept)"
                : fr.at_bound[k] > 0   ? "   (at the upper end of its range)"
                : fr.at_bound[k] < 0   ? "   (at the lower end of its range)" : "");
      if (fr.dof > 0) fprintf(f, "  %-16s %.4g (relative band of a prediction)\n", "rel_sigma", fr.rel_sigma);
      else fprintf(f, "  %-16s unknown: as many free parameters as runs, no residual left to estimate it\n", "rel_sigma");
      fprintf(f, "  RMS log residual %.4g -> %.4g; median |error| %.1f %% -> %.1f %% (all predicted rows)\n",
              fr.rms_before, fr.rms_after, before.median_abs_pct, after.median_abs_pct);
      if (fr.loo_done)
        fprintf(f, "  leave-one-configuration-out: median |error| %.1f %%, mean %.1f %%, max %.1f %% over %d rows\n",
                fr.loo.median_abs_pct, fr.loo.mean_abs_pct, fr.loo.max_abs_pct, fr.loo.n);
      if (out) fprintf(f, "  overlay written to %s (use: --calibration %s)\n", out, out);
      fprintf(f, "\n");
      print_table(f, &s, !pf_opts_get(v, "summary-only"), true);
    }
  }
  if (f) fclose(f);
  if (status == 0 && text) fputs(text, stdout);
  free(text);
  free(overlay);
  pf_vset_free(&s);
  return status;
}

/* ---- validate --megatron-log FILE ---- */

static int opt_add(pf_optvals *v, const char *name, const char *value, const char *src) {
  if (v->n >= PF_MAXVALS) return pf_error_set(PF_EINVAL, "too many options");
  v->name[v->n] = name;
  v->value[v->n] = strdup(value);
  if (!v->value[v->n]) return pf_error_set(PF_ENOMEM, "out of memory");
  snprintf(v->source[v->n], sizeof v->source[0], "%s", src);
  v->n++;
  return 0;
}

static bool is_true(const char *s) { return s && (!strcmp(s, "True") || !strcmp(s, "true") || !strcmp(s, "1")); }
static bool is_set(const char *s) { return s && *s && strcmp(s, "None") && strcmp(s, "null"); }

/* Option pairs from the log's argument dump (Megatron names -> preflight options). */
static int log_options(const pf_megatron_log *l, const pf_optvals *cli, pf_optvals *v, char *notes, size_t nlen) {
  static const struct { const char *arg, *opt; bool shape; } map[] = {
      {"tensor_model_parallel_size", "tp", false}, {"pipeline_model_parallel_size", "pp", false},
      {"context_parallel_size", "cp", false},      {"micro_batch_size", "mbs", false},
      {"global_batch_size", "gbs", false},         {"seq_length", "seq", false},
      {"num_layers", "layers", true},              {"hidden_size", "hidden", true},
      {"num_attention_heads", "heads", true},      {"ffn_hidden_size", "ffn-hidden", true}};
  bool user_model = pf_opts_get(cli, "model") || pf_opts_get(cli, "params") || pf_opts_get(cli, "flops-per-sample");
  int rc = 0;
  char src[PF_PATH_MAX + 16];
  for (size_t i = 0; i < sizeof map / sizeof map[0] && rc == 0; i++) {
    const char *a = pf_megatron_arg(l, map[i].arg);
    if (!is_set(a) || (map[i].shape && user_model)) continue;
    snprintf(src, sizeof src, "%s:%d", l->path, pf_megatron_arg_line(l, map[i].arg));
    rc = opt_add(v, map[i].opt, a, src);
  }
  if (rc < 0) return rc;
  const char *a;
  if (!user_model) {
    if (is_true(pf_megatron_arg(l, "group_query_attention")) && is_set(a = pf_megatron_arg(l, "num_query_groups")))
      if ((rc = opt_add(v, "kv-heads", a, l->path)) < 0) return rc;
    if (is_true(pf_megatron_arg(l, "swiglu")) && (rc = opt_add(v, "swiglu", "1", l->path)) < 0) return rc;
    const char *voc = pf_megatron_arg(l, "padded_vocab_size");
    if (!is_set(voc)) voc = pf_megatron_arg(l, "vocab_size");
    if (!is_set(voc) && (a = pf_megatron_arg(l, "tokenizer_type")) && !strcmp(a, "GPT2BPETokenizer")) {
      voc = "50257";
      strncat(notes, "vocabulary 50257 (GPT2BPETokenizer)", nlen - strlen(notes) - 1);
    }
    if (is_set(voc) && (rc = opt_add(v, "vocab", voc, l->path)) < 0) return rc;
  }
  if (is_true(pf_megatron_arg(l, "sequence_parallel")) && (rc = opt_add(v, "sp", "1", l->path)) < 0) return rc;
  if (is_true(pf_megatron_arg(l, "use_distributed_optimizer")) && (rc = opt_add(v, "dist-opt", "1", l->path)) < 0)
    return rc;
  if (is_true(pf_megatron_arg(l, "overlap_grad_reduce")) && (rc = opt_add(v, "overlap-grad-reduce", "1", l->path)) < 0)
    return rc;
  if (is_true(pf_megatron_arg(l, "overlap_param_gather")) && (rc = opt_add(v, "overlap-param-gather", "1", l->path)) < 0)
    return rc;
  if (is_set(a = pf_megatron_arg(l, "ddp_bucket_size")) && (rc = opt_add(v, "ddp-bucket-size", a, l->path)) < 0) return rc;
  const char *prec = is_true(pf_megatron_arg(l, "fp16")) ? "fp16" : is_true(pf_megatron_arg(l, "bf16")) ? "bf16"
                     : l->nargs > 0 ? "fp32" : NULL;
  if (prec && (rc = opt_add(v, "precision", prec, l->path)) < 0) return rc;
  a = pf_megatron_arg(l, "recompute_granularity");
  if (is_set(a) && (!strcmp(a, "selective") || !strcmp(a, "full"))) rc = opt_add(v, "recompute", a, l->path);
  else if (is_true(pf_megatron_arg(l, "recompute_activations"))) rc = opt_add(v, "recompute", "selective", l->path);
  if (rc < 0) return rc;
  if (is_set(a = pf_megatron_arg(l, "virtual_pipeline_model_parallel_size"))) {
    char sch[40];
    snprintf(sch, sizeof sch, "interleaved:%s", a);
    if ((rc = opt_add(v, "schedule", sch, l->path)) < 0) return rc;
  }
  if (!pf_opts_get(cli, "nodes") && !pf_opts_get(cli, "gpus") && is_set(a = pf_megatron_arg(l, "world_size")))
    if ((rc = opt_add(v, "gpus", a, l->path)) < 0) return rc;
  /* the global batch from the iteration lines when the dump does not give it */
  if (!is_set(pf_megatron_arg(l, "global_batch_size")) && l->niter > 0 && l->gbs[l->niter - 1] > 0) {
    char g[32];
    snprintf(g, sizeof g, "%d", l->gbs[l->niter - 1]);
    if ((rc = opt_add(v, "gbs", g, l->path)) < 0) return rc;
  }
  return 0;
}

static int cmd_megatron(const pf_optvals *cli, const char *path, vfmt fmt) {
  pf_megatron_log *l = malloc(sizeof *l);
  if (!l) return pf_cli_fail("validate", pf_error_set(PF_ENOMEM, "out of memory"));
  int rc = pf_megatron_read(path, l);
  if (rc < 0) { free(l); return pf_cli_fail("validate", rc); }
  pf_optvals v = {0};
  char notes[256] = "";
  rc = log_options(l, cli, &v, notes, sizeof notes);
  for (int i = 0; rc == 0 && i < cli->n; i++) rc = opt_add(&v, cli->name[i], cli->value[i], cli->source[i]);
  pf_scenario *sc = malloc(sizeof *sc);
  int status = 0;
  if (!sc) rc = pf_error_set(PF_ENOMEM, "out of memory");
  if (rc == 0 && !pf_opts_get(&v, "machine"))
    rc = pf_error_set(PF_EINVAL, "--machine is required: a Megatron log does not say which machine it ran on");
  if (rc == 0 && !pf_opts_get(&v, "model") && !pf_opts_get(&v, "layers") && !pf_opts_get(&v, "params"))
    rc = pf_error_set(PF_EINVAL, "%s: no argument dump (\"---- arguments ----\"): give the model (--model or "
                      "--layers/--hidden/--heads/--seq/--vocab) and the plan as options", path);
  if (rc == 0 && !pf_opts_get(&v, "nodes") && !pf_opts_get(&v, "gpus"))
    rc = pf_error_set(PF_EINVAL, "%s: the log does not state world_size: give --nodes or --gpus", path);
  if (rc == 0) rc = pf_opts_scenario(&v, sc);
  if (rc < 0) { status = pf_cli_fail("validate", rc); goto done; }

  pf_vset s = {0};
  snprintf(s.path, sizeof s.path, "%s", path);
  s.rows = calloc(4, sizeof *s.rows);
  if (!s.rows) { status = pf_cli_fail("validate", pf_error_set(PF_ENOMEM, "out of memory")); goto done; }
  int first = l->line[0], last = l->line[l->niter - 1];
  struct { pf_metric m; double v; pf_scope scope; } meas[4] = {
      {PF_MET_ITER_TIME, l->med_time_s, PF_SCOPE_NONE}, {PF_MET_TFLOPS, l->med_tflops, PF_SCOPE_NONE},
      {PF_MET_ENERGY, l->med_energy_J, PF_SCOPE_GPU_PER_GPU}, {PF_MET_POWER, l->med_power_W, PF_SCOPE_GPU_PER_GPU}};
  pf_prediction *pred = malloc(sizeof *pred);
  pf_scenario *chk = malloc(sizeof *chk);
  if (!pred || !chk) { free(pred); free(chk); free(s.rows); status = pf_cli_fail("validate", pf_error_set(PF_ENOMEM, "out of memory")); goto done; }
  *chk = *sc;
  pf_plan_check(chk);
  for (int k = 0; k < 4; k++) {
    if (isnan(meas[k].v)) continue;
    pf_vrow *r = &s.rows[s.n++];
    r->line = l->line[l->niter > 1 ? 1 : 0];
    snprintf(r->machine, sizeof r->machine, "%s", sc->machine.id);
    snprintf(r->model, sizeof r->model, "%s", sc->workload.id);
    r->nodes = chk->nodes;
    r->gpus = chk->gpus;
    r->metric = meas[k].m;
    r->scope = meas[k].scope;
    r->measured = r->value = meas[k].v;
    snprintf(r->unit, sizeof r->unit, "%s", pf_metric_unit(r->metric));
    r->loo_error = r->loo_predicted = NAN;
    snprintf(r->source, sizeof r->source, "%s:%d-%d (median of %d logged iterations after the first)", path, first,
             last, l->used);
    rc = pf_vrow_predict(r, sc, NULL, &r->predicted, pred, r->reason, sizeof r->reason);
    if (rc == 0) { r->status = PF_ROW_PREDICTED; r->error = pf_vrow_error(r, r->predicted); }
    else r->status = rc > 0 ? PF_ROW_NOT_PREDICTED : PF_ROW_FAILED;
  }
  free(pred);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (fmt == FMT_JSON) {
    cJSON *root = pf_report_root_json();
    cJSON *mg = cJSON_AddObjectToObject(root, "megatron_log");
    cJSON_AddStringToObject(mg, "file", path);
    cJSON_AddStringToObject(mg, "time_format", l->format);
    cJSON_AddNumberToObject(mg, "iterations_logged", l->niter);
    cJSON_AddNumberToObject(mg, "iterations_used", l->used);
    cJSON_AddNumberToObject(mg, "arguments", l->nargs);
    add_num_or_null(mg, "median_iteration_time_s", l->med_time_s);
    add_num_or_null(mg, "median_tflops_per_gpu", l->med_tflops);
    add_num_or_null(mg, "median_energy_J_per_iter_per_gpu", l->med_energy_J);
    add_num_or_null(mg, "median_power_W_per_gpu", l->med_power_W);
    cJSON *cfg = cJSON_AddObjectToObject(root, "configuration");
    cJSON_AddStringToObject(cfg, "machine", chk->machine.id);
    cJSON_AddStringToObject(cfg, "model", chk->workload.id);
    cJSON_AddNumberToObject(cfg, "nodes", chk->nodes);
    cJSON_AddNumberToObject(cfg, "gpus", chk->gpus);
    cJSON_AddNumberToObject(cfg, "tp", chk->plan.tp);
    cJSON_AddNumberToObject(cfg, "pp", chk->plan.pp);
    cJSON_AddNumberToObject(cfg, "dp", chk->plan.dp);
    cJSON_AddNumberToObject(cfg, "mbs", chk->plan.mbs);
    cJSON_AddNumberToObject(cfg, "gbs", chk->plan.gbs);
    cJSON_AddStringToObject(cfg, "precision", pf_precision_name(chk->precision));
    cJSON_AddBoolToObject(cfg, "sp", chk->plan.sp);
    cJSON_AddBoolToObject(cfg, "dist_opt", chk->plan.dist_opt);
    cJSON_AddStringToObject(cfg, "recompute", pf_recompute_name(chk->plan.recompute));
    cJSON_AddBoolToObject(cfg, "overlap_grad_reduce", chk->plan.overlap_grad_reduce);
    cJSON_AddBoolToObject(cfg, "overlap_param_gather", chk->plan.overlap_param_gather);
    cJSON *arr = cJSON_AddArrayToObject(root, "rows");
    for (int i = 0; i < s.n; i++) cJSON_AddItemToArray(arr, row_json(&s.rows[i], false));
    cJSON_AddItemToObject(root, "summary", summary_json(&s));
    pf_report_json_print(f, root);
  } else {
    fprintf(f, "Megatron-LM log %s: %d iteration lines (time in %s), %d used (first skipped as warm-up), %d "
               "arguments\n", path, l->niter, l->format, l->used, l->nargs);
    fprintf(f, "configuration: %s on %s, %d nodes, %d GPUs, TP %d x PP %d x DP %d, mbs %d, gbs %d, %s%s%s\n",
            chk->workload.id, chk->machine.id, chk->nodes, chk->gpus, chk->plan.tp, chk->plan.pp, chk->plan.dp,
            chk->plan.mbs, chk->plan.gbs, pf_precision_name(chk->precision), notes[0] ? "; " : "", notes);
    fprintf(f, "%-26s %14s %14s %9s\n", "metric", "measured", "predicted", "error");
    for (int i = 0; i < s.n; i++) {
      const pf_vrow *r = &s.rows[i];
      char m[48], p[48];
      fmt_measured(r, m, sizeof m);
      fmt_value(r, r->predicted, p, sizeof p);
      char label[48], e[16];
      snprintf(label, sizeof label, "%s%s", pf_metric_name(r->metric),
               r->scope == PF_SCOPE_GPU_PER_GPU ? " (per GPU)" : "");
      if (r->status == PF_ROW_PREDICTED) fprintf(f, "%-26s %14s %14s %9s\n", label, m, p, fmt_err(r->error, e, sizeof e));
      else fprintf(f, "%-26s %14s %14s  %s\n", label, m, "-", r->reason);
    }
  }
  fclose(f);
  if ((rc = emit(pf_opts_get(cli, "o"), text)) < 0) status = pf_cli_fail("validate", rc);
  free(text);
  if (status == 0 && (rc = check_max_error(cli, &s, &status)) < 0) status = pf_cli_fail("validate", rc);
  free(s.rows);
  free(chk);
done:
  pf_opts_free(&v);
  free(sc);
  pf_megatron_free(l);
  free(l);
  return status;
}

int pf_cmd_validate(int argc, char **argv) {
  pf_optvals v = {0};
  const pf_opt *const tables[] = {validate_opts, pf_scenario_opts, pf_output_opts, NULL};
  int rc = pf_opts_parse(argc, argv, tables, &v);
  if (rc < 0) { pf_opts_free(&v); return pf_cli_fail("validate", rc); }
  if (v.help) {
    pf_opts_help(stdout,
                 "usage: preflight validate RUNS.csv [--format table|json|csv|markdown] [--plot FILE.svg] [--max-error P]\n"
                 "       preflight validate --megatron-log FILE --machine ID [scenario options]\n"
                 "       preflight validate --fit RUNS.csv [-o fitted.json] [--no-loo]\n\n"
                 "Predicts every measured run, prints the relative errors and their median and mean; rows the model\n"
                 "cannot predict (no workload, energy measured over whole jobs or nodes) are listed with the reason.\n"
                 "The CSV columns are described in docs/validation.md.",
                 tables, examples);
    pf_opts_free(&v);
    return 0;
  }
  const char *mlog = pf_opts_get(&v, "megatron-log"), *fit = pf_opts_get(&v, "fit");
  vfmt fmt;
  int status;
  if ((rc = get_format(&v, &fmt, fit != NULL)) < 0) status = pf_cli_fail("validate", rc);
  else if (mlog && fit) status = pf_cli_fail("validate", pf_error_set(PF_EINVAL, "--megatron-log and --fit: give one"));
  else if ((mlog || fit) && v.npositional > 0)
    status = pf_cli_fail("validate", pf_error_set(PF_EINVAL, "\"%s\": no RUNS.csv argument with --%s", v.positional[0],
                                                  mlog ? "megatron-log" : "fit"));
  else if (!mlog && !fit && v.npositional != 1)
    status = pf_cli_fail("validate", pf_error_set(PF_EINVAL, "give one RUNS.csv, --megatron-log FILE or --fit RUNS.csv "
                                                  "(see preflight validate --help)"));
  else if (mlog) {
    /* scenario options only: drop validate's own */
    pf_optvals sv = {0};
    rc = 0;
    for (int i = 0; i < v.n && rc == 0; i++) {
      bool own = false;
      for (const pf_opt *o = validate_opts; o->name; o++) if (!strcmp(o->name, v.name[i])) own = true;
      if (!own && strcmp(v.name[i], "format") && strcmp(v.name[i], "o")) rc = opt_add(&sv, v.name[i], v.value[i], v.source[i]);
    }
    if (rc < 0) status = pf_cli_fail("validate", rc);
    else {
      /* cmd_megatron reads --o and --max-error from v, scenario pairs from sv */
      for (int i = 0; i < v.n && rc == 0; i++)
        if (!strcmp(v.name[i], "o") || !strcmp(v.name[i], "max-error")) rc = opt_add(&sv, v.name[i], v.value[i], v.source[i]);
      status = rc < 0 ? pf_cli_fail("validate", rc) : cmd_megatron(&sv, mlog, fmt);
    }
    pf_opts_free(&sv);
  } else if (fit) status = cmd_fit(&v, fit, fmt);
  else if (pf_collval_kind(v.positional[0]) > 0) /* measured collectives: CSV rows or nccl-tests output */
    status = pf_cli_validate_collectives(&v, v.positional[0], pf_collval_kind(v.positional[0]));
  else status = cmd_csv(&v, v.positional[0], fmt);
  pf_opts_free(&v);
  return status;
}
