/* validate.c - validation CSVs: the rows read and checked (errors name
 * file:line:column), whole or streamed one record at a time, with the columns
 * that are scenario options kept as written for the command that builds each
 * row's scenario, and the machines they name loaded once per process.
 *
 * Columns and their meaning are documented in docs/validation.md (DESIGN 4.3
 * plus optional columns).  The metrics, their units and the error statistics:
 * vmetric.c; predicting a row and its error: vpredict.c.
 */
#include "validate.h"

#include "core/core.h"
#include "power/power.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- machine cache: each distinct machine is loaded once per process ---- */

#define MCACHE 48
static struct { char id[PF_PATH_MAX]; pf_machine *m; } mcache[MCACHE];
static int nmcache;

int pf_validate_machine(const char *id, const pf_machine **out) {
  for (int i = 0; i < nmcache; i++)
    if (strcmp(mcache[i].id, id) == 0) { *out = mcache[i].m; return 0; }
  pf_machine *m = malloc(sizeof *m);
  if (!m) return pf_error_set(PF_ENOMEM, "out of memory");
  int rc = pf_machine_load(id, m);
  if (rc == 0) rc = pf_power_check(&m->dev);
  if (rc < 0) { free(m); return rc; }
  if (nmcache < MCACHE) {
    snprintf(mcache[nmcache].id, sizeof mcache[0].id, "%s", id);
    mcache[nmcache++].m = m;
    *out = m;
    return 0;
  }
  /* cache full: keep the newest in the last slot */
  free(mcache[MCACHE - 1].m);
  snprintf(mcache[MCACHE - 1].id, sizeof mcache[0].id, "%s", id);
  mcache[MCACHE - 1].m = m;
  *out = m;
  return 0;
}

/* ---- parsing ---- */

enum {
  C_MACHINE, C_MODEL, C_LAYERS, C_HIDDEN, C_HEADS, C_SEQ, C_VOCAB, C_NODES, C_GPUS, C_TP, C_PP, C_DP, C_MBS, C_GBS,
  C_PRECISION, C_SP, C_DIST_OPT, C_RECOMPUTE, C_SCHEDULE, C_METRIC, C_VALUE, C_UNIT, C_BASELINE, C_SOURCE,
  C_NREQUIRED,
  C_NOTES = C_NREQUIRED, C_PARAMS, C_FLOPS, C_GRAD_ACCUM, C_SCALING, C_BOUND, C_VALUE_HI, C_ITERATIONS, C_SCOPE,
  C_USE, C_TAG, C_DURATION, C_TRAIN, C_BASE_MBS, C_EVAL_ITERS, C_NCOLS
};
static const char *col_names[C_NCOLS] = {
    "machine", "model", "layers", "hidden", "heads", "seq", "vocab", "nodes", "gpus", "tp", "pp", "dp", "mbs",
    "gbs", "precision", "sp", "dist_opt", "recompute", "schedule", "metric", "value", "unit", "baseline_nodes",
    "source", "notes", "params", "flops_per_sample", "grad_accum", "scaling", "bound", "value_hi", "iterations",
    "scope", "use", "tag", "duration_s", "train_s", "baseline_mbs", "eval_iterations"};

typedef struct {
  const char *path;
  int line;
  const pf_csv_row *row;
  const int *map; /* column -> field index, -1 absent */
} ctx;

static const char *field(const ctx *c, int col) {
  int k = c->map[col];
  if (k < 0 || k >= c->row->nfields) return "";
  return c->row->fields[k];
}

/* Trimmed copy of a field. */
static void field_copy(const ctx *c, int col, char *dst, size_t n) {
  const char *s = field(c, col);
  while (*s == ' ' || *s == '\t') s++;
  size_t len = strlen(s);
  while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t')) len--;
  if (len >= n) len = n - 1;
  memcpy(dst, s, len);
  dst[len] = '\0';
}

static int bad(const ctx *c, int col, const char *what) {
  char v[96];
  field_copy(c, col, v, sizeof v);
  return pf_error_set(PF_EPARSE, "%s:%d: %s \"%s\": %s", c->path, c->line, col_names[col], v, what);
}

static int get_int(const ctx *c, int col, int *out) {
  char s[64];
  field_copy(c, col, s, sizeof s);
  *out = 0;
  if (!s[0]) return 0;
  char *end;
  errno = 0;
  long x = strtol(s, &end, 10);
  if (end == s || *end || errno || x < 0 || x > INT_MAX) return bad(c, col, "expected a non-negative integer");
  *out = (int)x;
  return 0;
}

static int get_double(const ctx *c, int col, double *out, bool required) {
  char s[64];
  field_copy(c, col, s, sizeof s);
  *out = 0;
  if (!s[0]) return required ? bad(c, col, "a number is required") : 0;
  char *end;
  errno = 0;
  double x = strtod(s, &end);
  if (end == s || *end || errno || !isfinite(x)) return bad(c, col, "expected a number");
  *out = x;
  return 0;
}

static int get_bool(const ctx *c, int col, bool *out) {
  char s[16];
  field_copy(c, col, s, sizeof s);
  for (char *p = s; *p; p++) if (*p >= 'A' && *p <= 'Z') *p = (char)(*p - 'A' + 'a');
  if (!s[0] || !strcmp(s, "false") || !strcmp(s, "0") || !strcmp(s, "no")) { *out = false; return 0; }
  if (!strcmp(s, "true") || !strcmp(s, "1") || !strcmp(s, "yes")) { *out = true; return 0; }
  return bad(c, col, "expected true or false");
}

/* The machine (which must exist) and the model (when given, a built-in one). */
static int row_ids(const ctx *c, pf_vrow *r) {
  int rc;
  field_copy(c, C_MACHINE, r->machine, sizeof r->machine);
  if (!r->machine[0]) return bad(c, C_MACHINE, "a machine id is required");
  const pf_machine *m;
  if ((rc = pf_validate_machine(r->machine, &m)) < 0) {
    char d[1024];
    snprintf(d, sizeof d, "%s", pf_error_detail());
    return pf_error_set(rc == PF_ENOENT ? PF_ENOENT : PF_EPARSE, "%s:%d: machine: %s", c->path, c->line, d);
  }
  field_copy(c, C_MODEL, r->model, sizeof r->model);
  if (r->model[0]) {
    pf_workload w;
    if ((rc = pf_workload_get(r->model, &w)) < 0) {
      char d[1024];
      snprintf(d, sizeof d, "%s", pf_error_detail());
      return pf_error_set(PF_ENOENT, "%s:%d: model: %s", c->path, c->line, d);
    }
  }
  return 0;
}

/* The integer and real columns, and the ranges they must lie in. */
static int row_numbers(const ctx *c, pf_vrow *r) {
  int rc;
  if ((rc = get_int(c, C_LAYERS, &r->layers)) < 0 || (rc = get_int(c, C_HIDDEN, &r->hidden)) < 0 ||
      (rc = get_int(c, C_HEADS, &r->heads)) < 0 || (rc = get_int(c, C_SEQ, &r->seq)) < 0 ||
      (rc = get_int(c, C_VOCAB, &r->vocab)) < 0 || (rc = get_int(c, C_NODES, &r->nodes)) < 0 ||
      (rc = get_int(c, C_GPUS, &r->gpus)) < 0 || (rc = get_int(c, C_TP, &r->tp)) < 0 ||
      (rc = get_int(c, C_PP, &r->pp)) < 0 || (rc = get_int(c, C_DP, &r->dp)) < 0 ||
      (rc = get_int(c, C_MBS, &r->mbs)) < 0 || (rc = get_int(c, C_GBS, &r->gbs)) < 0 ||
      (rc = get_int(c, C_BASELINE, &r->baseline_nodes)) < 0 || (rc = get_int(c, C_GRAD_ACCUM, &r->grad_accum)) < 0 ||
      (rc = get_int(c, C_BASE_MBS, &r->baseline_mbs)) < 0)
    return rc;
  if ((rc = get_double(c, C_PARAMS, &r->params, false)) < 0 ||
      (rc = get_double(c, C_FLOPS, &r->flops_per_sample, false)) < 0 ||
      (rc = get_double(c, C_ITERATIONS, &r->iterations, false)) < 0 ||
      (rc = get_double(c, C_DURATION, &r->duration_s, false)) < 0 ||
      (rc = get_double(c, C_TRAIN, &r->train_s, false)) < 0 ||
      (rc = get_double(c, C_EVAL_ITERS, &r->eval_iterations, false)) < 0)
    return rc;
  if (r->train_s < 0 || (r->train_s > 0 && r->train_s > r->duration_s * 1.0001))
    return bad(c, C_TRAIN, "must be within duration_s (the training part of the metered job)");
  if (r->params < 0 || r->flops_per_sample < 0 || r->iterations < 0 || r->duration_s < 0 || r->eval_iterations < 0)
    return bad(c, r->params < 0 ? C_PARAMS : r->flops_per_sample < 0 ? C_FLOPS : r->iterations < 0 ? C_ITERATIONS
                  : r->duration_s < 0 ? C_DURATION : C_EVAL_ITERS,
               "must not be negative");
  if (r->eval_iterations > 0 && !(r->duration_s > 0))
    return bad(c, C_EVAL_ITERS, "needs duration_s (the evaluation passes run within a metered job)");
  return 0;
}

/* The plan's names (precision, recompute, schedule) are checked here and kept as text; sp and dist_opt. */
static int row_plan(const ctx *c, pf_vrow *r) {
  int rc;
  field_copy(c, C_PRECISION, r->precision, sizeof r->precision);
  if (r->precision[0]) {
    pf_precision p;
    if (pf_precision_parse(r->precision, &p) < 0) return bad(c, C_PRECISION, "valid: fp32, tf32, fp16, bf16, fp8");
  }
  field_copy(c, C_RECOMPUTE, r->recompute, sizeof r->recompute);
  if (r->recompute[0]) {
    pf_recompute x;
    if (pf_recompute_parse(r->recompute, &x) < 0) return bad(c, C_RECOMPUTE, "valid: none, selective, full");
  }
  field_copy(c, C_SCHEDULE, r->schedule, sizeof r->schedule);
  if (r->schedule[0]) {
    pf_schedule s;
    int v;
    if (pf_schedule_parse(r->schedule, &s, &v) < 0) return bad(c, C_SCHEDULE, "valid: 1f1b, interleaved:V, gpipe");
  }
  if ((rc = get_bool(c, C_SP, &r->sp)) < 0 || (rc = get_bool(c, C_DIST_OPT, &r->dist_opt)) < 0) return rc;
  return 0;
}

/* What was measured: metric, value (and value_hi), unit and bound. */
static int row_measurement(const ctx *c, pf_vrow *r) {
  int rc;
  char tmp[64];
  field_copy(c, C_METRIC, tmp, sizeof tmp);
  if (pf_metric_parse(tmp, &r->metric) < 0)
    return bad(c, C_METRIC, "valid: iteration_time_s, time_s, tflops_per_gpu, tokens_per_s, samples_per_s, "
                            "scaling_efficiency, energy_J, avg_power_W, throughput_ratio");
  if ((rc = get_double(c, C_VALUE, &r->value, true)) < 0) return rc;
  if ((rc = get_double(c, C_VALUE_HI, &r->value_hi, false)) < 0) return rc;
  field_copy(c, C_UNIT, r->unit, sizeof r->unit);
  if (!r->unit[0]) snprintf(r->unit, sizeof r->unit, "%s", pf_metric_unit(r->metric));
  double scale;
  if (pf_metric_unit_scale(r->metric, r->unit, &scale) < 0) {
    char msg[128];
    snprintf(msg, sizeof msg, "not a unit of %s", pf_metric_name(r->metric));
    return bad(c, C_UNIT, msg);
  }
  r->measured = r->value * scale;
  r->measured_hi = r->value_hi * scale;
  if (!(r->measured > 0)) return bad(c, C_VALUE, "must be positive");

  field_copy(c, C_BOUND, tmp, sizeof tmp);
  if (!tmp[0] || !strcmp(tmp, "exact")) r->bound = PF_BOUND_EXACT;
  else if (!strcmp(tmp, "lower")) r->bound = PF_BOUND_LOWER;
  else if (!strcmp(tmp, "upper")) r->bound = PF_BOUND_UPPER;
  else if (!strcmp(tmp, "range")) r->bound = PF_BOUND_RANGE;
  else return bad(c, C_BOUND, "valid: (empty), lower, upper, range");
  if (r->bound == PF_BOUND_RANGE && !(r->value_hi > r->value))
    return bad(c, C_VALUE_HI, "a range needs value_hi greater than value");
  if (r->bound != PF_BOUND_RANGE && field(c, C_VALUE_HI)[0]) return bad(c, C_VALUE_HI, "only used with bound range");
  return 0;
}

/* Weak or strong scaling, and the baselines the scaling and batch-ratio metrics need. */
static int row_scaling(const ctx *c, pf_vrow *r) {
  char tmp[64];
  field_copy(c, C_SCALING, tmp, sizeof tmp);
  if (!tmp[0]) r->scaling = PF_SCALING_NONE;
  else if (!strcmp(tmp, "weak")) r->scaling = PF_SCALING_WEAK;
  else if (!strcmp(tmp, "strong")) r->scaling = PF_SCALING_STRONG;
  else return bad(c, C_SCALING, "valid: weak, strong");
  if (r->metric == PF_MET_SCALING) {
    if (r->baseline_nodes <= 0) return bad(c, C_BASELINE, "scaling_efficiency needs baseline_nodes");
    if (r->nodes <= 0) return bad(c, C_NODES, "scaling_efficiency needs nodes");
    if (r->scaling == PF_SCALING_NONE) return bad(c, C_SCALING, "scaling_efficiency needs weak or strong");
  }
  if (r->metric == PF_MET_TIME && !(r->iterations > 0)) return bad(c, C_ITERATIONS, "time_s needs iterations");
  if (r->metric == PF_MET_BATCH_RATIO) {
    if (r->baseline_mbs <= 0) return bad(c, C_BASE_MBS, "throughput_ratio needs baseline_mbs");
    if (r->mbs <= 0) return bad(c, C_MBS, "throughput_ratio needs mbs");
  } else if (r->baseline_mbs > 0) {
    return bad(c, C_BASE_MBS, "only used with metric throughput_ratio");
  }
  return 0;
}

/* The metering scope, the row's use, tag, source and notes. */
static int row_provenance(const ctx *c, pf_vrow *r) {
  char tmp[64];
  field_copy(c, C_SCOPE, tmp, sizeof tmp);
  r->scope = PF_SCOPE_NONE;
  if (tmp[0]) {
    bool found = false;
    for (int i = 1; i <= PF_SCOPE_PACKAGE_JOB; i++)
      if (!strcmp(tmp, pf_scope_name((pf_scope)i))) { r->scope = (pf_scope)i; found = true; }
    if (!found) return bad(c, C_SCOPE, "valid: gpu, gpu_per_gpu, gpu_job, node, node_job, node_gpus_job, package_job");
  }
  field_copy(c, C_USE, r->use, sizeof r->use);
  if (r->use[0] && strcmp(r->use, "fit") && strcmp(r->use, "check")) return bad(c, C_USE, "valid: fit, check");
  field_copy(c, C_TAG, r->tag, sizeof r->tag);
  field_copy(c, C_SOURCE, r->source, sizeof r->source);
  if (!r->source[0]) return bad(c, C_SOURCE, "every row needs its source (document and line)");
  field_copy(c, C_NOTES, r->notes, sizeof r->notes);
  return 0;
}

/* The measured value within its metric's plausible range (core/bounds.h, docs/bounds.md). */
static int row_plausible(const ctx *c, const pf_vrow *r) {
  const pf_machine *m;
  char why[640];
  int k = pf_validate_machine(r->machine, &m) < 0 ? 0 : pf_vrow_plausible(r, m, why, sizeof why);
  return k == 0 ? 0 : bad(c, k == 1 ? C_VALUE : C_VALUE_HI, why);
}

/* One data row, column by column in the order the checks name the first problem. */
static int parse_row(const ctx *c, pf_vrow *r) {
  memset(r, 0, sizeof *r);
  r->line = c->line;
  r->loo_predicted = r->loo_error = NAN;
  int rc;
  if ((rc = row_ids(c, r)) < 0 || (rc = row_numbers(c, r)) < 0 || (rc = row_plan(c, r)) < 0 ||
      (rc = row_measurement(c, r)) < 0 || (rc = row_scaling(c, r)) < 0 || (rc = row_provenance(c, r)) < 0 ||
      (rc = row_plausible(c, r)) < 0)
    return rc;
  return 0;
}

/* The core columns that are scenario options (the extra columns follow them). */
static const int option_cols[] = {C_MACHINE, C_MODEL, C_LAYERS, C_HIDDEN, C_HEADS, C_SEQ, C_VOCAB, C_NODES, C_GPUS,
                                  C_TP, C_PP, C_DP, C_MBS, C_GBS, C_PRECISION, C_SP, C_DIST_OPT, C_RECOMPUTE,
                                  C_SCHEDULE, C_PARAMS, C_FLOPS, C_GRAD_ACCUM};

bool pf_validate_core_option(const char *name) {
  for (size_t i = 0; i < sizeof option_cols / sizeof *option_cols; i++)
    if (!strcmp(col_names[option_cols[i]], name)) return true;
  return false;
}

/* Every non-empty option column of the record, as written (pf_vrow.opt_*). */
static int option_pairs(const ctx *c, const pf_vset *s, const int *extra_at, pf_vrow *r) {
  r->nopt = 0;
  int ncore = (int)(sizeof option_cols / sizeof *option_cols);
  for (int i = 0; i < ncore + s->nextra; i++) {
    const char *name = i < ncore ? col_names[option_cols[i]] : s->extra[i - ncore];
    const char *v = i < ncore ? field(c, option_cols[i])
                              : extra_at[i - ncore] < c->row->nfields ? c->row->fields[extra_at[i - ncore]] : "";
    while (*v == ' ' || *v == '\t') v++;
    if (!*v) continue;
    if (strlen(v) >= PF_VOPTLEN)
      return pf_error_set(PF_EPARSE, "%s:%d: %s: value longer than %d characters", c->path, c->line, name, PF_VOPTLEN - 1);
    if (r->nopt == PF_VMAXOPT) return pf_error_set(PF_EPARSE, "%s:%d: too many option columns", c->path, c->line);
    snprintf(r->opt_name[r->nopt], sizeof r->opt_name[0], "%s", name);
    snprintf(r->opt_value[r->nopt], sizeof r->opt_value[0], "%s", v);
    size_t l = strlen(r->opt_value[r->nopt]);
    while (l > 0 && (r->opt_value[r->nopt][l - 1] == ' ' || r->opt_value[r->nopt][l - 1] == '\t'))
      r->opt_value[r->nopt][--l] = '\0';
    r->nopt++;
  }
  return 0;
}

/* Map the header's columns (map[col] = field index, -1 when absent); a column
 * that is not a core one is a scenario option (cols->extra, its field index in
 * extra_at), checked by the builder that applies it. */
static int read_header(const char *path, const pf_csv_row *h, int *map, pf_vset *cols, int *extra_at) {
  cols->nextra = 0;
  cols->header_line = h->line;
  for (int i = 0; i < C_NCOLS; i++) map[i] = -1;
  for (int k = 0; k < h->nfields; k++) {
    const char *name = h->fields[k];
    while (*name == ' ') name++;
    int col = -1;
    for (int i = 0; i < C_NCOLS; i++)
      if (!strcmp(name, col_names[i])) col = i;
    if (col < 0) {
      /* a near miss of a longer core name is a typo (short ones like cp, tp are options in their own right) */
      const char *near = pf_closest(name, col_names, C_NCOLS);
      if (near && strlen(near) >= 5)
        return pf_error_set(PF_EPARSE, "%s:%d: column %d \"%s\": unknown column; did you mean \"%s\"? (see "
                            "docs/validation.md)", path, h->line, k + 1, name, near);
      bool word = *name != '\0' && strlen(name) < sizeof cols->extra[0];
      for (const char *q = name; *q; q++) word &= (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9') || *q == '_';
      if (!word)
        return pf_error_set(PF_EPARSE, "%s:%d: column %d \"%s\": unknown column (see docs/validation.md)", path,
                            h->line, k + 1, name);
      for (int i = 0; i < cols->nextra; i++)
        if (!strcmp(cols->extra[i], name))
          return pf_error_set(PF_EPARSE, "%s:%d: column \"%s\" appears twice", path, h->line, name);
      if (cols->nextra == PF_VMAXOPT)
        return pf_error_set(PF_EPARSE, "%s:%d: more than %d option columns", path, h->line, PF_VMAXOPT);
      extra_at[cols->nextra] = k;
      snprintf(cols->extra[cols->nextra++], sizeof cols->extra[0], "%s", name);
      continue;
    }
    if (map[col] >= 0) return pf_error_set(PF_EPARSE, "%s:%d: column \"%s\" appears twice", path, h->line, name);
    map[col] = k;
  }
  for (int i = 0; i < C_NREQUIRED; i++)
    if (map[i] < 0) return pf_error_set(PF_EPARSE, "%s:%d: missing column \"%s\"", path, h->line, col_names[i]);
  return 0;
}

static int parse_record(const char *path, const pf_csv_row *row, int nheader, const int *map, const pf_vset *cols,
                        const int *extra_at, pf_vrow *out) {
  if (row->nfields != nheader)
    return pf_error_set(PF_EPARSE, "%s:%d: %d fields, expected %d as in the header", path, row->line, row->nfields,
                        nheader);
  ctx c = {path, row->line, row, map};
  int rc = parse_row(&c, out);
  return rc < 0 ? rc : option_pairs(&c, cols, extra_at, out);
}

int pf_validate_parse(const pf_csv *csv, pf_vset *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->path, sizeof out->path, "%s", csv->path);
  if (csv->nrows == 0) return pf_error_set(PF_EPARSE, "%s: empty file (a header line is required)", csv->path);
  const pf_csv_row *h = &csv->rows[0];
  int map[C_NCOLS], extra_at[PF_VMAXOPT];
  int rc = read_header(csv->path, h, map, out, extra_at);
  if (rc < 0) return rc;
  out->rows = calloc((size_t)(csv->nrows > 1 ? csv->nrows - 1 : 1), sizeof *out->rows);
  if (!out->rows) return pf_error_set(PF_ENOMEM, "out of memory");
  for (int i = 1; i < csv->nrows; i++) {
    if ((rc = parse_record(csv->path, &csv->rows[i], h->nfields, map, out, extra_at, &out->rows[out->n])) < 0) {
      pf_vset_free(out);
      return rc;
    }
    out->n++;
  }
  return 0;
}

int pf_validate_read(const char *path, pf_vset *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->path, sizeof out->path, "%s", path);
  pf_vreader *r;
  int rc = pf_vreader_open(path, &r);
  if (rc < 0) return rc;
  *out = *pf_vreader_columns(r); /* the columns; rows follow */
  int cap = 0;
  pf_vrow row;
  while ((rc = pf_vreader_next(r, &row)) > 0) {
    if (out->n == cap) {
      int nc = cap ? 2 * cap : 64;
      pf_vrow *g = realloc(out->rows, (size_t)nc * sizeof *g);
      if (!g) {
        rc = pf_error_set(PF_ENOMEM, "out of memory");
        break;
      }
      out->rows = g;
      cap = nc;
    }
    out->rows[out->n++] = row;
  }
  pf_vreader_close(r);
  if (rc < 0) pf_vset_free(out);
  return rc < 0 ? rc : 0;
}

struct pf_vreader {
  pf_csv_reader *csv;
  int map[C_NCOLS];
  int nheader;
  pf_vset cols; /* path, header line and option columns; no rows */
  int extra_at[PF_VMAXOPT];
};

const pf_vset *pf_vreader_columns(const pf_vreader *r) { return &r->cols; }

int pf_vreader_open(const char *path, pf_vreader **out) {
  *out = NULL;
  pf_vreader *r = calloc(1, sizeof *r);
  if (!r) return pf_error_set(PF_ENOMEM, "out of memory");
  int rc = pf_csv_open(path, &r->csv);
  pf_csv_row h = {0};
  if (rc == 0 && (rc = pf_csv_next(r->csv, &h)) == 0)
    rc = pf_error_set(PF_EPARSE, "%s: empty file (a header line is required)", path);
  snprintf(r->cols.path, sizeof r->cols.path, "%s", path);
  if (rc > 0) {
    rc = read_header(path, &h, r->map, &r->cols, r->extra_at);
    r->nheader = h.nfields;
  }
  pf_csv_row_free(&h);
  if (rc < 0) {
    pf_vreader_close(r);
    return rc;
  }
  *out = r;
  return 0;
}

int pf_vreader_next(pf_vreader *r, pf_vrow *row) {
  pf_csv_row rec;
  int rc = pf_csv_next(r->csv, &rec);
  if (rc <= 0) return rc;
  rc = parse_record(pf_csv_name(r->csv), &rec, r->nheader, r->map, &r->cols, r->extra_at, row);
  pf_csv_row_free(&rec);
  return rc < 0 ? rc : 1;
}

long long pf_vreader_pos(const pf_vreader *r) { return pf_csv_pos(r->csv); }
long long pf_vreader_size(const pf_vreader *r) { return pf_csv_size(r->csv); }

void pf_vreader_close(pf_vreader *r) {
  if (!r) return;
  pf_csv_close(r->csv);
  free(r);
}

void pf_vset_free(pf_vset *s) {
  free(s->rows);
  s->rows = NULL;
  s->n = 0;
}
