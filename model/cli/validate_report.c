/* validate_report.c - formatting validation results: table, JSON, CSV,
 * Markdown, and the parity plot (see validate_cli.h). */
#include "options.h"
#include "validate_cli.h"

#include "preflight/error.h"
#include "preflight/plot.h"
#include "preflight/report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- display helpers ---- */

static double disp(const pf_vrow *r, double x) { return r->metric == PF_MET_SCALING ? 100 * x : x; }
static const char *unit(const pf_vrow *r) { return pf_metric_unit(r->metric); }

void pf_vreport_fmt_measured(const pf_vrow *r, char *b, size_t n) {
  const char *u = unit(r);
  switch (r->bound) {
  case PF_BOUND_LOWER: snprintf(b, n, ">= %.4g %s", disp(r, r->measured), u); break;
  case PF_BOUND_UPPER: snprintf(b, n, "<= %.4g %s", disp(r, r->measured), u); break;
  case PF_BOUND_RANGE: snprintf(b, n, "%.4g-%.4g %s", disp(r, r->measured), disp(r, r->measured_hi), u); break;
  default: snprintf(b, n, "%.4g %s", disp(r, r->measured), u);
  }
}

void pf_vreport_fmt_value(const pf_vrow *r, double x, char *b, size_t n) {
  if (isnan(x)) snprintf(b, n, "-");
  else snprintf(b, n, "%.4g %s", disp(r, x), unit(r));
}

/* "+3.1%", or "0.0%" when the prediction satisfies a bound */
const char *pf_vreport_fmt_err(double e, char *b, size_t n) {
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

cJSON *pf_vreport_stats_json(pf_vstats st) {
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

void pf_vreport_num_or_null(cJSON *o, const char *k, double x) {
  if (isfinite(x)) cJSON_AddNumberToObject(o, k, x);
  else cJSON_AddNullToObject(o, k);
}

cJSON *pf_vreport_row_json(const pf_vrow *r, bool fit) {
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

cJSON *pf_vreport_summary_json(const pf_vset *s) {
  cJSON *sum = cJSON_CreateObject();
  pf_vstats all = pf_validate_stats(s, NULL, NULL);
  int np = 0;
  for (int i = 0; i < s->n; i++) np += s->rows[i].status != PF_ROW_PREDICTED;
  cJSON_AddNumberToObject(sum, "rows", s->n);
  cJSON_AddNumberToObject(sum, "predicted", all.n);
  cJSON_AddNumberToObject(sum, "not_predicted", np);
  pf_vreport_num_or_null(sum, "median_abs_pct_error", all.median_abs_pct);
  pf_vreport_num_or_null(sum, "mean_abs_pct_error", all.mean_abs_pct);
  pf_vreport_num_or_null(sum, "max_abs_pct_error", all.max_abs_pct);
  cJSON *bm = cJSON_AddObjectToObject(sum, "by_metric");
  for (int m = 0; m < PF_MET_COUNT; m++) {
    pf_metric mm = (pf_metric)m;
    pf_vstats st = pf_validate_stats(s, keep_metric, &mm);
    if (st.n > 0) cJSON_AddItemToObject(bm, pf_metric_name(mm), pf_vreport_stats_json(st));
  }
  const char *names[64];
  static const char *groups[] = {"by_tag", "by_use", "by_machine"};
  bool (*keeps[])(const pf_vrow *, const void *) = {keep_tag, keep_use, keep_machine};
  for (int g = 0; g < 3; g++) {
    cJSON *o = cJSON_AddObjectToObject(sum, groups[g]);
    int n = distinct(s, g, names, 64);
    for (int k = 0; k < n; k++) {
      pf_vstats st = pf_validate_stats(s, keeps[g], names[k]);
      if (st.n > 0) cJSON_AddItemToObject(o, names[k], pf_vreport_stats_json(st));
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

void pf_vreport_table(FILE *f, const pf_vset *s, bool rows, bool fit) {
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
      pf_vreport_fmt_measured(r, m, sizeof m);
      pf_vreport_fmt_value(r, r->predicted, p, sizeof p);
      if (fit) {
        char band[64], loo[16];
        snprintf(band, sizeof band, "%s +- %.2g%%", p, 100 * (r->band_hi / r->predicted - 1));
        if (isnan(r->loo_error)) snprintf(loo, sizeof loo, "-");
        else snprintf(loo, sizeof loo, "%+.1f%%", 100 * r->loo_error);
        char e[16];
        fprintf(f, "%5d  %-17s %-12s %5d  %-18s %14s  %-26s %8s %8s  %-5s\n", r->line, r->machine, model_name(r),
                r->nodes, pf_metric_name(r->metric), m, band, pf_vreport_fmt_err(r->error, e, sizeof e), loo, r->use);
      } else {
        char e[16];
        fprintf(f, "%5d  %-17s %-12s %5d  %-18s %16s %14s %8s  %-5s %s\n", r->line, r->machine, model_name(r),
                r->nodes, pf_metric_name(r->metric), m, p, pf_vreport_fmt_err(r->error, e, sizeof e), r->use, r->tag);
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
    pf_vreport_fmt_measured(r, m, sizeof m);
    pf_vreport_fmt_value(r, r->predicted, p, sizeof p);
    char e[16];
    fprintf(f, "  line %d: %s %s %d nodes %s: predicted %s, measured %s (%s)\n", r->line, r->machine,
            model_name(r), r->nodes, pf_metric_name(r->metric), p, m, pf_vreport_fmt_err(r->error, e, sizeof e));
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

void pf_vreport_markdown(FILE *f, const pf_vset *s, bool rows) {
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
    pf_vreport_fmt_measured(r, m, sizeof m);
    pf_vreport_fmt_value(r, r->predicted, p, sizeof p);
    char e[16];
    fprintf(f, "| %d | %s | %s | %d | %s | %s | %s | %s | %s | ", r->line, r->machine, model_name(r), r->nodes,
            pf_metric_name(r->metric), m, p, pf_vreport_fmt_err(r->error, e, sizeof e), r->use);
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

void pf_vreport_csv(FILE *f, const pf_vset *s, bool fit) {
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

/* Parity plots: one panel per metric (never two units on one axis), predicted
 * against measured on log axes with y = x and a +-10 % band; at most the four
 * metrics with the most predicted rows. */
static const char *pf_short_path(const char *p) {
  size_t n = strlen(p);
  return n > 200 ? p + n - 200 : p;
}

int pf_vreport_plot(const pf_vset *s, const char *path) {
  int count[PF_MET_COUNT] = {0};
  for (int i = 0; i < s->n; i++)
    if (s->rows[i].status == PF_ROW_PREDICTED && isfinite(s->rows[i].predicted)) count[s->rows[i].metric]++;
  pf_plot fig;
  pf_plot_init(&fig);
  double *x = malloc((size_t)(s->n + 1) * sizeof *x), *y = malloc((size_t)(s->n + 1) * sizeof *y);
  int rc = x && y ? 0 : pf_error_set(PF_ENOMEM, "out of memory"), shown = 0, left = 0;
  for (int k = 0; k < PF_MET_COUNT && rc == 0; k++) {
    int best = -1;
    for (int m = 0; m < PF_MET_COUNT; m++) if (count[m] > 0 && (best < 0 || count[m] > count[best])) best = m;
    if (best < 0) break;
    if (shown == PF_PLOT_MAXPANELS) { left += count[best]; count[best] = 0; continue; }
    pf_metric m = (pf_metric)best;
    char lx[96], ly[96], title[160];
    snprintf(lx, sizeof lx, "measured %s (%s)", pf_metric_name(m), pf_metric_unit(m));
    snprintf(ly, sizeof ly, "predicted %s (%s)", pf_metric_name(m), pf_metric_unit(m));
    snprintf(title, sizeof title, "%s: %d rows", pf_metric_name(m), count[best]);
    pf_plot_panel *p = pf_plot_panel_add(&fig, title, lx, ly, true, true);
    p->parity_band = 0.10;
    int n = 0;
    for (int i = 0; i < s->n; i++) {
      const pf_vrow *r = &s->rows[i];
      if (r->metric != m || r->status != PF_ROW_PREDICTED || !isfinite(r->predicted)) continue;
      double meas = r->bound == PF_BOUND_RANGE ? 0.5 * (r->measured + r->measured_hi) : r->measured;
      x[n] = disp(r, meas);
      y[n++] = disp(r, r->predicted);
    }
    rc = pf_plot_add(p, "rows", PF_PLOT_POINTS, n, x, y);
    count[best] = 0;
    shown++;
  }
  char more[96] = "";
  if (left > 0) snprintf(more, sizeof more, " %d rows of further metrics are not drawn (see the table).", left);
  snprintf(fig.caption, sizeof fig.caption,
           "Predicted (preflight %s) against measured, %.200s: one panel per metric, log axes; solid y = x, dashed +-10 %%. "
           "Bounds (>= x) are drawn at the bound, ranges at their middle.%s",
           pf_version(), pf_short_path(s->path), more);
  char *svg = rc == 0 ? pf_plot_svg(&fig) : NULL;
  if (rc == 0 && !svg) rc = pf_error_set(PF_ENOMEM, "out of memory");
  if (rc == 0) rc = pf_write_file_atomic(path, svg);
  free(svg);
  free(x);
  free(y);
  pf_plot_free(&fig);
  return rc;
}
