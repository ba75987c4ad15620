/* validate_out.c - the rows and summary of `preflight validate` (see
 * validate_out.h): the emitter that keeps the summary and hands each row to
 * the asked format's validate renderers (formats.h: fmt_table.c, fmt_json.c,
 * fmt_csv.c, fmt_markdown.c), and the display helpers those share.  (The
 * summary's statistics: validate_sum.c; the parity plot: validate_plot.c.) */
#include "validate_out.h"

#include "core/core.h"
#include "report/report.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- display helpers ---- */

double pf_vdisp(const pf_vrow *r, double x) { return r->metric == PF_MET_SCALING ? 100 * x : x; }
static const char *unit(const pf_vrow *r) { return pf_metric_unit(r->metric); }

void pf_vfmt_measured(const pf_vrow *r, char *b, size_t n) {
  const char *u = unit(r);
  switch (r->bound) {
  case PF_BOUND_LOWER: snprintf(b, n, ">= %.4g %s", pf_vdisp(r, r->measured), u); break;
  case PF_BOUND_UPPER: snprintf(b, n, "<= %.4g %s", pf_vdisp(r, r->measured), u); break;
  case PF_BOUND_RANGE: snprintf(b, n, "%.4g-%.4g %s", pf_vdisp(r, r->measured), pf_vdisp(r, r->measured_hi), u); break;
  default: snprintf(b, n, "%.4g %s", pf_vdisp(r, r->measured), u);
  }
}

void pf_vfmt_value(const pf_vrow *r, double x, char *b, size_t n) {
  if (isnan(x)) snprintf(b, n, "-");
  else snprintf(b, n, "%.4g %s", pf_vdisp(r, x), unit(r));
}

/* "+3.1%", or "0.0%" when the prediction satisfies a bound */
const char *pf_vfmt_err(double e, char *b, size_t n) {
  if (e == 0) snprintf(b, n, "0.0%%");
  else snprintf(b, n, "%+.1f%%", 100 * e);
  return b;
}

const char *pf_vstatus_name(pf_row_status s) {
  return s == PF_ROW_PREDICTED ? "predicted" : s == PF_ROW_NOT_PREDICTED ? "not predicted" : "failed";
}

const char *pf_vmodel_name(const pf_vrow *r) { return r->model[0] ? r->model : r->layers ? "custom-tf" : "custom"; }

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

void pf_vfmt_size(double b, char *buf, size_t n) {
  if (b >= 1073741824.0) snprintf(buf, n, "%.4g GiB", b / 1073741824.0);
  else if (b >= 1048576.0) snprintf(buf, n, "%.4g MiB", b / 1048576.0);
  else if (b >= 1024.0) snprintf(buf, n, "%.4g KiB", b / 1024.0);
  else snprintf(buf, n, "%.0f B", b);
}

/* ---- the emitter ---- */

int pf_vcopy_file(FILE *from, FILE *to) {
  if (fflush(from) != 0 || fseek(from, 0, SEEK_SET) != 0) return pf_error_set(PF_EIO, "temporary file: %s", "seek");
  char buf[65536];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, from)) > 0)
    if (fwrite(buf, 1, k, to) != k) return pf_error_set(PF_EIO, "write failed");
  return ferror(from) ? pf_error_set(PF_EIO, "temporary file: read error") : 0;
}

int pf_vemit_defer(pf_vemit *e) {
  e->body = tmpfile();
  e->np = tmpfile();
  if (!e->body || !e->np) {
    pf_vemit_abort(e);
    return pf_error_set(PF_EIO, "cannot create a temporary file: %s", "tmpfile");
  }
  return 0;
}

int pf_vemit_begin(pf_vemit *e, FILE *out, pf_format fmt, const char *path, bool rows, bool fit, cJSON *head) {
  memset(e, 0, sizeof *e);
  e->fmt = fmt;
  e->rows = rows;
  e->fit = fit;
  e->out = out;
  snprintf(e->path, sizeof e->path, "%s", path);
  return pf_fmt(fmt)->validate_begin(e, head); /* the format table's renderer */
}

int pf_vemit_row(pf_vemit *e, const pf_vrow *r) {
  pf_vsum_add(&e->sum, r);
  int rc = pf_fmt(e->fmt)->validate_row(e, r);
  if (rc < 0) return rc;
  return ferror(e->out) ? pf_error_set(PF_EIO, "write failed") : 0;
}

int pf_vemit_end(pf_vemit *e) {
  FILE *f = e->out;
  int rc = pf_fmt(e->fmt)->validate_end(e);
  pf_vemit_abort(e);
  if (rc == 0 && ferror(f)) rc = pf_error_set(PF_EIO, "write failed");
  return rc;
}

void pf_vemit_abort(pf_vemit *e) {
  if (e->body) fclose(e->body);
  if (e->np) fclose(e->np);
  e->body = e->np = NULL;
}
