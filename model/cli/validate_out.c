/* validate_out.c - the rows and summary of `preflight validate` (see
 * validate_out.h) in four formats: table, JSON, CSV, markdown.  (The summary's
 * statistics: validate_sum.c; the parity plot: validate_plot.c.) */
#include "validate_out.h"

#include "core/core.h"
#include "report/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- display helpers ---- */

static double disp(const pf_vrow *r, double x) { return r->metric == PF_MET_SCALING ? 100 * x : x; }
static const char *unit(const pf_vrow *r) { return pf_metric_unit(r->metric); }

void pf_vfmt_measured(const pf_vrow *r, char *b, size_t n) {
  const char *u = unit(r);
  switch (r->bound) {
  case PF_BOUND_LOWER: snprintf(b, n, ">= %.4g %s", disp(r, r->measured), u); break;
  case PF_BOUND_UPPER: snprintf(b, n, "<= %.4g %s", disp(r, r->measured), u); break;
  case PF_BOUND_RANGE: snprintf(b, n, "%.4g-%.4g %s", disp(r, r->measured), disp(r, r->measured_hi), u); break;
  default: snprintf(b, n, "%.4g %s", disp(r, r->measured), u);
  }
}

void pf_vfmt_value(const pf_vrow *r, double x, char *b, size_t n) {
  if (isnan(x)) snprintf(b, n, "-");
  else snprintf(b, n, "%.4g %s", disp(r, x), unit(r));
}

/* "+3.1%", or "0.0%" when the prediction satisfies a bound */
const char *pf_vfmt_err(double e, char *b, size_t n) {
  if (e == 0) snprintf(b, n, "0.0%%");
  else snprintf(b, n, "%+.1f%%", 100 * e);
  return b;
}

static const char *status_name(pf_row_status s) {
  return s == PF_ROW_PREDICTED ? "predicted" : s == PF_ROW_NOT_PREDICTED ? "not predicted" : "failed";
}

static const char *model_name(const pf_vrow *r) { return r->model[0] ? r->model : r->layers ? "custom-tf" : "custom"; }

cJSON *pf_vstats_json(pf_vstats st) {
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
  if (r->baseline_mbs) cJSON_AddNumberToObject(o, "baseline_mbs", r->baseline_mbs);
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

static cJSON *summary_json(const pf_vsum *s) {
  cJSON *sum = cJSON_CreateObject();
  pf_vstats all = pf_vsum_stats(s, -1, 0);
  cJSON_AddNumberToObject(sum, "rows", s->rows);
  cJSON_AddNumberToObject(sum, "predicted", all.n);
  cJSON_AddNumberToObject(sum, "not_predicted", s->not_predicted);
  add_num_or_null(sum, "median_abs_pct_error", all.median_abs_pct);
  add_num_or_null(sum, "mean_abs_pct_error", all.mean_abs_pct);
  add_num_or_null(sum, "max_abs_pct_error", all.max_abs_pct);
  cJSON *bm = cJSON_AddObjectToObject(sum, "by_metric");
  for (int m = 0; m < PF_MET_COUNT; m++) {
    pf_vstats st = pf_vsum_stats(s, 3, m);
    if (st.n > 0) cJSON_AddItemToObject(bm, pf_metric_name((pf_metric)m), pf_vstats_json(st));
  }
  cJSON *bs = cJSON_AddObjectToObject(sum, "by_scope");
  for (int k = PF_SCOPE_GPU; k <= PF_SCOPE_NODE_GPUS_JOB; k++) {
    pf_vstats st = pf_vsum_stats(s, 4, k);
    if (st.n > 0) cJSON_AddItemToObject(bs, pf_scope_name((pf_scope)k), pf_vstats_json(st));
  }
  static const char *groups[] = {"by_tag", "by_use", "by_machine"};
  for (int g = 0; g < 3; g++) {
    cJSON *o = cJSON_AddObjectToObject(sum, groups[g]);
    for (int k = 0; k < s->nnames[g]; k++) {
      pf_vstats st = pf_vsum_stats(s, g, k);
      if (st.n > 0) cJSON_AddItemToObject(o, s->names[g][k], pf_vstats_json(st));
    }
  }
  cJSON *w = cJSON_AddArrayToObject(sum, "worst");
  for (int k = 0; k < s->nworst; k++) {
    const pf_vrow *r = &s->worst[k];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "line", r->line);
    cJSON_AddStringToObject(o, "machine", r->machine);
    cJSON_AddStringToObject(o, "metric", pf_metric_name(r->metric));
    cJSON_AddNumberToObject(o, "error_pct", 100 * r->error);
    cJSON_AddItemToArray(w, o);
  }
  return sum;
}

/* ---- table ---- */

static void print_stats_line(FILE *f, const char *label, pf_vstats st) {
  if (st.n == 0) return;
  fprintf(f, "  %-24s %4d rows  median %6.1f %%  mean %6.1f %%  max %6.1f %%\n", label, st.n, st.median_abs_pct,
          st.mean_abs_pct, st.max_abs_pct);
}

static void table_header(FILE *f, bool fit) {
  if (fit)
    fprintf(f, "%5s  %-17s %-12s %5s  %-18s %14s  %-26s %8s %8s  %-5s\n", "line", "machine", "model", "nodes", "metric",
            "measured", "predicted (fit) +- band", "error", "LOO", "use");
  else
    fprintf(f, "%5s  %-17s %-12s %5s  %-18s %16s %14s %8s  %-5s %s\n", "line", "machine", "model", "nodes", "metric",
            "measured", "predicted", "error", "use", "tag");
}

static void table_row(FILE *f, const pf_vrow *r, bool fit) {
  char m[48], p[48], e[16];
  pf_vfmt_measured(r, m, sizeof m);
  pf_vfmt_value(r, r->predicted, p, sizeof p);
  if (fit) {
    char band[64], loo[16];
    snprintf(band, sizeof band, "%s +- %.2g%%", p, 100 * (r->band_hi / r->predicted - 1));
    if (isnan(r->loo_error)) snprintf(loo, sizeof loo, "-");
    else snprintf(loo, sizeof loo, "%+.1f%%", 100 * r->loo_error);
    fprintf(f, "%5d  %-17s %-12s %5d  %-18s %14s  %-26s %8s %8s  %-5s\n", r->line, r->machine, model_name(r), r->nodes,
            pf_metric_name(r->metric), m, band, pf_vfmt_err(r->error, e, sizeof e), loo, r->use);
  } else {
    fprintf(f, "%5d  %-17s %-12s %5d  %-18s %16s %14s %8s  %-5s %s\n", r->line, r->machine, model_name(r), r->nodes,
            pf_metric_name(r->metric), m, p, pf_vfmt_err(r->error, e, sizeof e), r->use, r->tag);
  }
}

static void table_summary(FILE *f, const pf_vsum *s) {
  pf_vstats all = pf_vsum_stats(s, -1, 0);
  if (all.n == 0) {
    fprintf(f, "summary: no row could be predicted\n");
    return;
  }
  int nj = pf_vsum_unjudged(s);
  fprintf(f, "summary: median |error| %.1f %%, mean %.1f %%, max %.1f %% over %d predicted rows%s\n", all.median_abs_pct,
          all.mean_abs_pct, all.max_abs_pct, all.n, nj ? " (rows tagged regression are not judged)" : "");
  fprintf(f, "by metric:\n");
  for (int m = 0; m < PF_MET_COUNT; m++) print_stats_line(f, pf_metric_name((pf_metric)m), pf_vsum_stats(s, 3, m));
  bool any_scope = false;
  for (int k = PF_SCOPE_GPU; k <= PF_SCOPE_NODE_GPUS_JOB; k++) {
    pf_vstats st = pf_vsum_stats(s, 4, k);
    if (st.n == 0) continue;
    if (!any_scope) fprintf(f, "by metering scope (energy and power rows; a job's rows with the time held at duration_s):\n");
    any_scope = true;
    print_stats_line(f, pf_scope_name((pf_scope)k), st);
  }
  static const char *titles[] = {"by tag:", "by use:", "by machine:"};
  for (int g = 0; g < 3; g++) {
    if (s->nnames[g] == 0) continue;
    fprintf(f, "%s\n", titles[g]);
    for (int k = 0; k < s->nnames[g]; k++) print_stats_line(f, s->names[g][k], pf_vsum_stats(s, g, k));
  }
  fprintf(f, "worst rows:\n");
  for (int k = 0; k < s->nworst; k++) {
    const pf_vrow *r = &s->worst[k];
    char m[48], p[48], e[16];
    pf_vfmt_measured(r, m, sizeof m);
    pf_vfmt_value(r, r->predicted, p, sizeof p);
    fprintf(f, "  line %d: %s %s %d nodes %s: predicted %s, measured %s (%s)\n", r->line, r->machine, model_name(r),
            r->nodes, pf_metric_name(r->metric), p, m, pf_vfmt_err(r->error, e, sizeof e));
  }
}

/* ---- markdown ---- */

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

static void md_row(FILE *f, const pf_vrow *r) {
  char m[48], p[48], e[16];
  pf_vfmt_measured(r, m, sizeof m);
  pf_vfmt_value(r, r->predicted, p, sizeof p);
  fprintf(f, "| %d | %s | %s | %d | %s | %s | %s | %s | %s | ", r->line, r->machine, model_name(r), r->nodes,
          pf_metric_name(r->metric), m, p, pf_vfmt_err(r->error, e, sizeof e), r->use);
  md_escape(f, r->source);
  fprintf(f, " |\n");
}

static void md_summary(FILE *f, const pf_vsum *s, const char *path) {
  pf_vstats all = pf_vsum_stats(s, -1, 0);
  fprintf(f, "`%s`: %d rows, %d predicted, %d not predicted.\n\n", path, s->rows, s->rows - s->not_predicted,
          s->not_predicted);
  fprintf(f, "| rows | n | median \\|error\\| | mean \\|error\\| | max \\|error\\| |\n|---|---:|---:|---:|---:|\n");
  md_stats_row(f, "all predicted", all);
  for (int m = 0; m < PF_MET_COUNT; m++) {
    char label[64];
    snprintf(label, sizeof label, "metric `%s`", pf_metric_name((pf_metric)m));
    md_stats_row(f, label, pf_vsum_stats(s, 3, m));
  }
  for (int k = PF_SCOPE_GPU; k <= PF_SCOPE_NODE_GPUS_JOB; k++) { /* energy and power rows, time held fixed */
    char label[64];
    snprintf(label, sizeof label, "energy/power scope `%s`", pf_scope_name((pf_scope)k));
    md_stats_row(f, label, pf_vsum_stats(s, 4, k));
  }
  static const char *what[] = {"tag", "use", "machine"};
  for (int g = 0; g < 3; g++)
    for (int k = 0; k < s->nnames[g]; k++) {
      char label[96];
      snprintf(label, sizeof label, "%s `%s`", what[g], s->names[g][k]);
      md_stats_row(f, label, pf_vsum_stats(s, g, k));
    }
}

static void md_not_predicted(FILE *f, const pf_vsum *s, const char *path) {
  if (!s->not_predicted) return;
  fprintf(f, "\nNot predicted: ");
  int shown = s->not_predicted < 12 ? s->not_predicted : 12;
  for (int k = 0; k < shown; k++)
    fprintf(f, "%sline %d (%s)", k ? ", " : "", s->np_line[k], pf_metric_name((pf_metric)s->np_metric[k]));
  if (s->not_predicted > 12) fprintf(f, " and %d more", s->not_predicted - 12);
  fprintf(f, "; reasons in `preflight validate %s`.\n", path);
}

/* ---- CSV ---- */

static void csv_header(FILE *f, bool fit) {
  fprintf(f, "line,machine,model,nodes,gpus,metric,unit,bound,measured,measured_hi,status,predicted,error_pct%s,use,tag,"
             "reason,source\n", fit ? ",band_lo,band_hi,loo_predicted,loo_error_pct" : "");
}

static void csv_row(FILE *f, const pf_vrow *r, bool fit) {
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

/* ---- JSON, streamed: cJSON's own layout, one row at a time ---- */

/* Print text (cJSON_Print output) `levels` deeper: tabs after each newline
 * (cJSON indents an object in an array of the root by two levels, an object
 * member of the root by one). */
static void put_indented(FILE *f, const char *text, int levels) {
  for (const char *c = text; *c; c++) {
    fputc(*c, f);
    if (*c == '\n')
      for (int k = 0; k < levels; k++) fputc('\t', f);
  }
}

/* ---- the emitter ---- */

static int copy_file(FILE *from, FILE *to) {
  if (fflush(from) != 0 || fseek(from, 0, SEEK_SET) != 0) return pf_error_set(PF_EIO, "temporary file: %s", "seek");
  char buf[65536];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, from)) > 0)
    if (fwrite(buf, 1, k, to) != k) return pf_error_set(PF_EIO, "write failed");
  return ferror(from) ? pf_error_set(PF_EIO, "temporary file: read error") : 0;
}

int pf_vemit_begin(pf_vemit *e, FILE *out, pf_format fmt, const char *path, bool rows, bool fit, cJSON *head) {
  memset(e, 0, sizeof *e);
  e->fmt = fmt;
  e->rows = rows;
  e->fit = fit;
  e->out = out;
  snprintf(e->path, sizeof e->path, "%s", path);
  if (fmt != PF_FMT_JSON) { /* only JSON prints a head */
    cJSON_Delete(head);
    head = NULL;
  }
  if (fmt == PF_FMT_TABLE || fmt == PF_FMT_MARKDOWN) {
    e->body = tmpfile();
    e->np = tmpfile();
    if (!e->body || !e->np) {
      pf_vemit_abort(e);
      return pf_error_set(PF_EIO, "cannot create a temporary file: %s", "tmpfile");
    }
    if (fmt == PF_FMT_TABLE) table_header(e->body, fit);
    else
      fprintf(e->body, "\n| line | machine | model | nodes | metric | measured | predicted | error | use | source |\n"
                       "|---:|---|---|---:|---|---:|---:|---:|---|---|\n");
  } else if (fmt == PF_FMT_CSV) {
    csv_header(out, fit);
  } else {
    char *t = cJSON_Print(head);
    cJSON_Delete(head);
    if (!t) return pf_error_set(PF_ENOMEM, "out of memory");
    size_t n = strlen(t);
    if (n >= 2 && t[n - 1] == '}' && t[n - 2] == '\n') t[n - 2] = '\0';
    fputs(t, out);
    fputs(",\n\t\"rows\":\t[", out);
    free(t);
  }
  return 0;
}

int pf_vemit_row(pf_vemit *e, const pf_vrow *r) {
  pf_vsum_add(&e->sum, r);
  bool ok = r->status == PF_ROW_PREDICTED;
  switch (e->fmt) {
  case PF_FMT_TABLE:
    if (!e->rows) break;
    if (ok) table_row(e->body, r, e->fit);
    else fprintf(e->np, "%5d  %-17s %-12s %-14s %s\n", r->line, r->machine, model_name(r), pf_metric_name(r->metric),
                 r->reason);
    break;
  case PF_FMT_MARKDOWN:
    if (e->rows && ok) md_row(e->body, r);
    break;
  case PF_FMT_CSV: csv_row(e->out, r, e->fit); break;
  case PF_FMT_JSON: {
    cJSON *j = row_json(r, e->fit);
    char *s = cJSON_Print(j);
    cJSON_Delete(j);
    if (!s) return pf_error_set(PF_ENOMEM, "out of memory");
    if (e->njson++) fputs(", ", e->out);
    put_indented(e->out, s, 2);
    free(s);
    break;
  }
  case PF_FMT_COUNT: break;
  }
  return ferror(e->out) ? pf_error_set(PF_EIO, "write failed") : 0;
}

int pf_vemit_end(pf_vemit *e) {
  FILE *f = e->out;
  int rc = 0;
  const pf_vsum *s = &e->sum;
  if (e->fmt == PF_FMT_TABLE) {
    fprintf(f, "validation: %s (%d rows: %d predicted, %d not predicted)\n", e->path, s->rows,
            s->rows - s->not_predicted, s->not_predicted);
    if (e->rows) {
      if ((rc = copy_file(e->body, f)) == 0 && s->not_predicted) {
        fprintf(f, "\nnot predicted:\n");
        rc = copy_file(e->np, f);
      }
      fprintf(f, "\n");
    }
    table_summary(f, s);
  } else if (e->fmt == PF_FMT_MARKDOWN) {
    md_summary(f, s, e->path);
    if (e->rows) {
      rc = copy_file(e->body, f);
      md_not_predicted(f, s, e->path);
    }
  } else if (e->fmt == PF_FMT_JSON) {
    fputs("],\n\t\"summary\":\t", f);
    cJSON *j = summary_json(s);
    char *txt = cJSON_Print(j);
    cJSON_Delete(j);
    if (!txt) rc = pf_error_set(PF_ENOMEM, "out of memory");
    else {
      put_indented(f, txt, 1);
      fputs("\n}\n", f);
      free(txt);
    }
  }
  pf_vemit_abort(e);
  if (rc == 0 && ferror(f)) rc = pf_error_set(PF_EIO, "write failed");
  return rc;
}

void pf_vemit_abort(pf_vemit *e) {
  if (e->body) fclose(e->body);
  if (e->np) fclose(e->np);
  e->body = e->np = NULL;
}
