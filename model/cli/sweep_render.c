/* sweep_render.c - formatting a sweep's rows (plain run or merged shards) as a
 * table, CSV or JSON, and its scaling plot; the node-list and shard parsers. */
#include "options.h"
#include "results.h"

#include "preflight/error.h"
#include "preflight/plot.h"
#include "preflight/report.h"
#include "preflight/validate.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "16,32,64" or "1..64" (powers of two) */
int pf_cli_parse_nodes(const char *s, int *out, int max, int *n) {
  *n = 0;
  const char *dots = strstr(s, "..");
  if (dots) {
    char *end;
    errno = 0;
    long a = strtol(s, &end, 10), b;
    if (end != dots || a < 1 || errno) goto bad;
    b = strtol(dots + 2, &end, 10);
    if (*end || b < a || errno || b > 1000000) goto bad;
    for (long x = a; x <= b && *n < max; x *= 2) out[(*n)++] = (int)x;
    return 0;
  }
  const char *p = s;
  while (*p) {
    char *end;
    errno = 0;
    long x = strtol(p, &end, 10);
    if (end == p || x < 1 || x > 1000000 || errno) goto bad;
    if (*n >= max) return pf_error_set(PF_EINVAL, "--nodes: at most %d values", max);
    out[(*n)++] = (int)x;
    if (*end == ',') p = end + 1;
    else if (*end == '\0') break;
    else goto bad;
  }
  if (*n > 0) return 0;
bad:
  return pf_error_set(PF_EINVAL, "--nodes \"%s\": expected a list like 16,32,64 or a range like 1..64", s);
}

int pf_cli_parse_shard(const char *s, int *shard, int *nshards) {
  char *end;
  errno = 0;
  long i = strtol(s, &end, 10), n;
  if (end == s || *end != '/' || errno) goto bad;
  const char *q = end + 1;
  n = strtol(q, &end, 10);
  if (end == q || *end || errno || n < 1 || n > 1000000 || i < 1 || i > n) goto bad;
  *shard = (int)i;
  *nshards = (int)n;
  return 0;
bad:
  return pf_error_set(PF_EINVAL, "--shard \"%s\": expected I/N with 1 <= I <= N (e.g. 2/8)", s);
}

/* ---- rows ---- */

static double jnum(const cJSON *o, const char *a, const char *b) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
  if (b) x = cJSON_GetObjectItemCaseSensitive(x, b);
  return cJSON_IsNumber(x) ? x->valuedouble : NAN;
}

static const char *jstr(const cJSON *o, const char *a, const char *b) {
  const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, a);
  if (b) x = cJSON_GetObjectItemCaseSensitive(x, b);
  return cJSON_IsString(x) ? x->valuestring : "";
}

static int feasible(const cJSON *r) { return isfinite(jnum(r, "iteration_time_s", NULL)); }

/* Add scaling_efficiency, speedup and baseline_nodes: the baseline of a group
 * is its first feasible row (rows come in index order, nodes ascending). */
static void add_efficiency(cJSON *rows) {
  const cJSON *base = NULL;
  double group = NAN;
  cJSON *r;
  cJSON_ArrayForEach(r, rows) {
    double g = jnum(r, "group", NULL);
    if (g != group) { group = g; base = NULL; }
    if (!feasible(r)) continue;
    if (!base) base = r;
    double eff = jnum(r, "tflops_per_gpu", NULL) / jnum(base, "tflops_per_gpu", NULL);
    double sp = jnum(r, "tokens_per_s", NULL) / jnum(base, "tokens_per_s", NULL);
    cJSON_DeleteItemFromObjectCaseSensitive(r, "scaling_efficiency");
    cJSON_DeleteItemFromObjectCaseSensitive(r, "speedup");
    cJSON_DeleteItemFromObjectCaseSensitive(r, "baseline_nodes");
    cJSON_AddNumberToObject(r, "scaling_efficiency", eff);
    cJSON_AddNumberToObject(r, "speedup", sp);
    cJSON_AddNumberToObject(r, "baseline_nodes", jnum(base, "nodes", NULL));
  }
}

static void axes_cells(FILE *out, const cJSON *ctx, const cJSON *row, int csv) {
  const cJSON *a;
  cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(ctx, "axes")) {
    const char *val = jstr(row, "axes", a->valuestring);
    if (csv) { pf_csv_put(out, val); fputc(',', out); }
    else fprintf(out, "%-18s ", val);
  }
}

static void table(FILE *out, const cJSON *ctx, const cJSON *rows) {
  const cJSON *a, *r;
  cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(ctx, "axes")) fprintf(out, "%-18s ", a->valuestring);
  fprintf(out, "%6s %7s %4s %4s %5s %6s %8s %11s %12s %10s %8s %8s %9s\n", "nodes", "GPUs", "TP", "PP", "DP", "GBS",
          "microb", "iter (s)", "tokens/s", "TFLOP/s/G", "speedup", "eff", "mem GiB");
  cJSON_ArrayForEach(r, rows) {
    axes_cells(out, ctx, r, 0);
    if (!feasible(r)) {
      double mem = jnum(r, "memory_GiB", NULL);
      if (isfinite(mem))
        fprintf(out, "%6.0f %7.0f  (%s: needs %.1f GiB per GPU)\n", jnum(r, "nodes", NULL), jnum(r, "gpus", NULL),
                jstr(r, "status", NULL), mem);
      else
        fprintf(out, "%6.0f %7.0f  (%s: %s)\n", jnum(r, "nodes", NULL), jnum(r, "gpus", NULL), jstr(r, "status", NULL),
                jstr(r, "reason", NULL));
      continue;
    }
    fprintf(out, "%6.0f %7.0f %4.0f %4.0f %5.0f %6.0f %8.0f %11.4g %12.4g %10.1f %8.2f %7.1f%% %9.1f\n",
            jnum(r, "nodes", NULL), jnum(r, "gpus", NULL), jnum(r, "parallel", "tp"), jnum(r, "parallel", "pp"),
            jnum(r, "parallel", "dp"), jnum(r, "parallel", "gbs"), jnum(r, "parallel", "microbatches"),
            jnum(r, "iteration_time_s", NULL), jnum(r, "tokens_per_s", NULL), jnum(r, "tflops_per_gpu", NULL),
            jnum(r, "speedup", NULL), 100 * jnum(r, "scaling_efficiency", NULL),
            jnum(r, "memory_per_gpu_GiB", "total"));
  }
}

static void csv(FILE *out, const cJSON *ctx, const cJSON *rows) {
  const cJSON *a, *r;
  cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(ctx, "axes")) fprintf(out, "%s,", a->valuestring);
  fprintf(out, "nodes,gpus,tp,pp,dp,gbs,microbatches,iteration_time_s,tokens_per_s,tflops_per_gpu,speedup,"
               "scaling_efficiency,memory_GiB,fits,status\n");
  cJSON_ArrayForEach(r, rows) {
    axes_cells(out, ctx, r, 1);
    if (!feasible(r)) {
      double mem = jnum(r, "memory_GiB", NULL);
      fprintf(out, "%.0f,%.0f,,,,,,,,,,,", jnum(r, "nodes", NULL), jnum(r, "gpus", NULL));
      if (isfinite(mem)) fprintf(out, "%.4g", mem);
      fputs(",false,", out);
      pf_csv_put(out, jstr(r, "status", NULL));
      fputc('\n', out);
      continue;
    }
    fprintf(out, "%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.6g,%.6g,%.6g,%.6g,%.6g,%.4g,%s,ok\n", jnum(r, "nodes", NULL),
            jnum(r, "gpus", NULL), jnum(r, "parallel", "tp"), jnum(r, "parallel", "pp"), jnum(r, "parallel", "dp"),
            jnum(r, "parallel", "gbs"), jnum(r, "parallel", "microbatches"), jnum(r, "iteration_time_s", NULL),
            jnum(r, "tokens_per_s", NULL), jnum(r, "tflops_per_gpu", NULL), jnum(r, "speedup", NULL),
            jnum(r, "scaling_efficiency", NULL), jnum(r, "memory_per_gpu_GiB", "total"),
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "fits")) ? "true" : "false");
  }
}

char *pf_cli_sweep_render(const cJSON *ctx, cJSON *rows, pf_format fmt) {
  add_efficiency(rows);
  if (fmt == PF_FMT_JSON) {
    cJSON *root = pf_report_root_json();
    const cJSON *c;
    cJSON_ArrayForEach(c, ctx) cJSON_AddItemToObject(root, c->string, cJSON_Duplicate(c, 1));
    cJSON_AddItemToObject(root, "rows", cJSON_Duplicate(rows, 1));
    return pf_report_json_text(root);
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  if (!out) return NULL;
  if (fmt == PF_FMT_CSV) csv(out, ctx, rows);
  else table(out, ctx, rows);
  if (fclose(out) != 0) { free(buf); return NULL; }
  return buf;
}

/* ---- the scaling plot ---- */

static void group_label(const cJSON *ctx, const cJSON *row, char *buf, size_t n) {
  snprintf(buf, n, "%s %s", jstr(row, "model", NULL), jstr(row, "machine", NULL));
  const cJSON *a;
  cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(ctx, "axes")) {
    if (!strcmp(a->valuestring, "machine") || !strcmp(a->valuestring, "model")) continue;
    size_t l = strlen(buf);
    snprintf(buf + l, n - l, " %s=%s", a->valuestring, jstr(row, "axes", a->valuestring));
  }
}

/* Measured scaling efficiency and tokens/s of a validation CSV that match a group. */
static int add_measured(pf_plot_panel *tput, pf_plot_panel *eff, const pf_vset *vs, const char *machine,
                        const char *model, const char *label) {
  double *x = malloc((size_t)(vs->n + 1) * sizeof *x), *y = malloc((size_t)(vs->n + 1) * sizeof *y);
  if (!x || !y) { free(x); free(y); return pf_error_set(PF_ENOMEM, "out of memory"); }
  int rc = 0;
  for (int pass = 0; pass < 2 && rc == 0; pass++) {
    int n = 0;
    for (int i = 0; i < vs->n; i++) {
      const pf_vrow *r = &vs->rows[i];
      if (strcmp(r->machine, machine) || strcmp(r->model, model) || r->bound != PF_BOUND_EXACT) continue;
      if (pass == 0 && r->metric == PF_MET_TOKENS) { x[n] = r->nodes; y[n++] = r->measured; }
      if (pass == 1 && r->metric == PF_MET_SCALING) { x[n] = r->nodes; y[n++] = 100 * r->measured; }
    }
    char name[128];
    snprintf(name, sizeof name, "measured: %s", label);
    if (n > 0) rc = pf_plot_add(pass == 0 ? tput : eff, name, PF_PLOT_POINTS, n, x, y);
  }
  free(x);
  free(y);
  return rc;
}

int pf_cli_sweep_plot(const cJSON *ctx, const cJSON *rows, const char *measured_csv, const char *path) {
  pf_plot fig;
  pf_plot_init(&fig);
  pf_vset vs = {0};
  int rc = 0;
  if (measured_csv && (rc = pf_validate_read(measured_csv, &vs)) < 0) return rc;
  pf_plot_panel *tput = pf_plot_panel_add(&fig, "Throughput", "nodes", "throughput (tokens/s)", true, true);
  pf_plot_panel *eff = pf_plot_panel_add(&fig, "Parallel efficiency relative to the smallest feasible run", "nodes",
                                         "parallel efficiency (%)", true, false);
  double me = jnum(ctx, "min_efficiency", NULL);
  if (isfinite(me)) {
    eff->ref_y = 100 * me;
    snprintf(eff->ref_label, sizeof eff->ref_label, "threshold %.0f %%", 100 * me);
  }
  int nrows = cJSON_GetArraySize(rows);
  double *x = malloc((size_t)(nrows + 1) * sizeof *x), *y = malloc((size_t)(nrows + 1) * sizeof *y);
  double *e = malloc((size_t)(nrows + 1) * sizeof *e), *id = malloc((size_t)(nrows + 1) * sizeof *id);
  if (!x || !y || !e || !id) rc = pf_error_set(PF_ENOMEM, "out of memory");
  const cJSON *r = rows ? rows->child : NULL;
  int groups = 0;
  while (r && rc == 0) {
    double g = jnum(r, "group", NULL);
    char label[128];
    group_label(ctx, r, label, sizeof label);
    const cJSON *first = r;
    int n = 0;
    for (; r && jnum(r, "group", NULL) == g; r = r->next) {
      if (!feasible(r)) continue;
      x[n] = jnum(r, "nodes", NULL);
      y[n] = jnum(r, "tokens_per_s", NULL);
      e[n] = 100 * jnum(r, "scaling_efficiency", NULL);
      n++;
    }
    if (n == 0) continue;
    if (groups++ < 5) { /* beyond five groups the figure is unreadable: the table has them */
      for (int i = 0; i < n; i++) id[i] = y[0] * x[i] / x[0];
      char ideal[160];
      snprintf(ideal, sizeof ideal, "ideal: %s", label);
      if ((rc = pf_plot_add(tput, label, PF_PLOT_LINES, n, x, y)) < 0 ||
          (rc = pf_plot_add(tput, ideal, PF_PLOT_DASHED, n, x, id)) < 0 ||
          (rc = pf_plot_add(eff, label, PF_PLOT_LINES, n, x, e)) < 0)
        break;
      if (vs.n > 0) rc = add_measured(tput, eff, &vs, jstr(first, "machine", NULL), jstr(first, "model", NULL), label);
    }
  }
  snprintf(fig.caption, sizeof fig.caption,
           "Predicted by preflight %s (%s scaling): throughput in tokens per second (ideal: linear from the smallest "
           "feasible node count) and parallel efficiency = TFLOP/s per GPU relative to the smallest node count that "
           "fits in memory (EPICURE's definition)%s.%s",
           pf_version(), jstr(ctx, "scaling", NULL), vs.n > 0 ? "; dots: measured runs from the given CSV" : "",
           groups > 5 ? " Only the first five groups are drawn." : "");
  char *svg = rc == 0 ? pf_plot_svg(&fig) : NULL;
  if (rc == 0 && !svg) rc = pf_error_set(PF_ENOMEM, "out of memory");
  if (rc == 0) rc = pf_write_file_atomic(path, svg);
  free(svg);
  free(x); free(y); free(e); free(id);
  pf_plot_free(&fig);
  pf_vset_free(&vs);
  return rc;
}
