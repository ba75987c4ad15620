/* sweep_render.c - formatting a sweep's rows (plain run or merged shards) as a
 * table, CSV or JSON, and its scaling plot; the node-list and shard parsers. */
#include "options.h"
#include "results.h"

#include "core/core.h"
#include "io/io.h"
#include "report/report.h"
#include "study/study.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* "16,32,64" or "1..64" (powers of two); every count in [1, 2^20]. */
int pf_cli_parse_nodes(const char *s, int *out, int max, int *n) {
  const long top = 1L << 20;
  *n = 0;
  const char *dots = strstr(s, "..");
  if (dots) {
    char *end;
    errno = 0;
    long a = strtol(s, &end, 10), b;
    if (end != dots || a < 1 || errno) goto bad;
    b = strtol(dots + 2, &end, 10);
    if (*end || b < a || errno) goto bad;
    if (b > top) goto range;
    for (long x = a; x <= b; x *= 2) {
      if (*n >= max) return pf_error_set(PF_EINVAL, "--nodes \"%s\": at most %d values", s, max);
      out[(*n)++] = (int)x;
    }
    return 0;
  }
  const char *p = s;
  while (*p) {
    char *end;
    errno = 0;
    long x = strtol(p, &end, 10);
    if (end == p || x < 1 || errno) goto bad;
    if (x > top) goto range;
    if (*n >= max) return pf_error_set(PF_EINVAL, "--nodes \"%s\": at most %d values", s, max);
    out[(*n)++] = (int)x;
    if (*end == ',') p = end + 1;
    else if (*end == '\0') break;
    else goto bad;
  }
  if (*n > 0) return 0;
bad:
  return pf_error_set(PF_EINVAL, "--nodes \"%s\": expected a list like 16,32,64 or a range like 1..64", s);
range:
  return pf_error_set(PF_EINVAL, "--nodes \"%s\": node counts must be at most %ld", s, top);
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
    double eff = pf_scaling_efficiency(jnum(r, "tflops_per_gpu", NULL), jnum(base, "tflops_per_gpu", NULL));
    double sp = jnum(r, "tokens_per_s", NULL) / jnum(base, "tokens_per_s", NULL);
    cJSON_DeleteItemFromObjectCaseSensitive(r, "scaling_efficiency");
    cJSON_DeleteItemFromObjectCaseSensitive(r, "speedup");
    cJSON_DeleteItemFromObjectCaseSensitive(r, "baseline_nodes");
    cJSON_AddNumberToObject(r, "scaling_efficiency", eff);
    cJSON_AddNumberToObject(r, "speedup", sp);
    cJSON_AddNumberToObject(r, "baseline_nodes", jnum(base, "nodes", NULL));
  }
}

/* A row as the table and CSV print it: from a JSON row, or from a CSV shard. */
typedef struct {
  double index, group, nodes, gpus, tp, pp, dp, gbs, mb, iter, tput, tflops, mem, memfail;
  double gpu_W, gpu_J, node_J;   /* energy per iteration (docs/energy.md) */
  int feasible, fits, naxes;
  const char *axes[16], *status, *reason;
} srow;

static void srow_from_json(const cJSON *ctx, const cJSON *r, srow *x) {
  memset(x, 0, sizeof *x);
  const cJSON *a;
  cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(ctx, "axes"))
    if (x->naxes < 16) x->axes[x->naxes++] = jstr(r, "axes", a->valuestring);
  x->index = jnum(r, "index", NULL);
  x->group = jnum(r, "group", NULL);
  x->nodes = jnum(r, "nodes", NULL);
  x->gpus = jnum(r, "gpus", NULL);
  x->feasible = feasible(r);
  x->fits = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(r, "fits"));
  x->status = jstr(r, "status", NULL);
  x->reason = jstr(r, "reason", NULL);
  x->memfail = jnum(r, "memory_GiB", NULL);
  x->tp = jnum(r, "parallel", "tp");
  x->pp = jnum(r, "parallel", "pp");
  x->dp = jnum(r, "parallel", "dp");
  x->gbs = jnum(r, "parallel", "gbs");
  x->mb = jnum(r, "parallel", "microbatches");
  x->iter = jnum(r, "iteration_time_s", NULL);
  x->tput = jnum(r, "tokens_per_s", NULL);
  x->tflops = jnum(r, "tflops_per_gpu", NULL);
  x->mem = jnum(r, "memory_per_gpu_GiB", "total");
  x->gpu_W = jnum(r, "energy", "avg_power_per_gpu_W");
  x->gpu_J = jnum(r, "energy", "gpu_J");
  x->node_J = jnum(r, "energy", "node_J");
}

/* Efficiency against the group's first feasible row, in index order. */
typedef struct { double group, tflops, tput; int have; } baseline;

static void srow_eff(baseline *b, const srow *x, double *eff, double *speedup) {
  if (!b->have || x->group != b->group) { b->group = x->group; b->have = 1; b->tflops = NAN; }
  if (!x->feasible) return;
  if (!isfinite(b->tflops)) { b->tflops = x->tflops; b->tput = x->tput; }
  *eff = pf_scaling_efficiency(x->tflops, b->tflops);
  *speedup = x->tput / b->tput;
}

static void table_header(FILE *out, const cJSON *ctx) {
  const cJSON *a;
  cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(ctx, "axes")) fprintf(out, "%-18s ", a->valuestring);
  fprintf(out, "%6s %7s %4s %4s %5s %6s %8s %11s %12s %10s %8s %8s %9s %7s %10s %10s\n", "nodes", "GPUs", "TP", "PP",
          "DP", "GBS", "microb", "iter (s)", "tokens/s", "TFLOP/s/G", "speedup", "eff", "mem GiB", "W/GPU", "GPU kJ/it",
          "node kJ/it");
}

static void table_row(FILE *out, const srow *x, double eff, double sp) {
  for (int i = 0; i < x->naxes; i++) fprintf(out, "%-18s ", x->axes[i]);
  if (!x->feasible) {
    if (isfinite(x->memfail))
      fprintf(out, "%6.0f %7.0f  (%s: needs %.1f GiB per GPU)\n", x->nodes, x->gpus, x->status, x->memfail);
    else fprintf(out, "%6.0f %7.0f  (%s: %s)\n", x->nodes, x->gpus, x->status, x->reason);
    return;
  }
  fprintf(out, "%6.0f %7.0f %4.0f %4.0f %5.0f %6.0f %8.0f %11.4g %12.4g %10.1f %8.2f %7.1f%% %9.1f %7.0f %10.4g %10.4g\n",
          x->nodes, x->gpus, x->tp, x->pp, x->dp, x->gbs, x->mb, x->iter, x->tput, x->tflops, sp, 100 * eff, x->mem,
          x->gpu_W, x->gpu_J / 1e3, x->node_J / 1e3);
}

static void csv_header(FILE *out, const cJSON *ctx) {
  const cJSON *a;
  cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(ctx, "axes")) fprintf(out, "%s,", a->valuestring);
  fprintf(out, "nodes,gpus,tp,pp,dp,gbs,microbatches,iteration_time_s,tokens_per_s,tflops_per_gpu,speedup,"
               "scaling_efficiency,memory_GiB,fits,status,avg_power_per_gpu_W,gpu_J,node_J\n");
}

static void csv_row(FILE *out, const srow *x, double eff, double sp) {
  for (int i = 0; i < x->naxes; i++) { pf_csv_put(out, x->axes[i]); fputc(',', out); }
  if (!x->feasible) {
    fprintf(out, "%.0f,%.0f,", x->nodes, x->gpus);
    const double plan[4] = {x->tp, x->pp, NAN, x->gbs}; /* the plan as asked, where known */
    for (int k = 0; k < 4; k++) {
      if (isfinite(plan[k]) && plan[k] > 0) fprintf(out, "%.0f", plan[k]);
      fputc(',', out);
    }
    fputs(",,,,,,", out);
    if (isfinite(x->memfail)) fprintf(out, "%.4g", x->memfail);
    fputs(",false,", out);
    pf_csv_put(out, x->status);
    fputs(",,,\n", out);
    return;
  }
  fprintf(out, "%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.0f,%.6g,%.6g,%.6g,%.6g,%.6g,%.4g,%s,ok,%.6g,%.6g,%.6g\n", x->nodes, x->gpus,
          x->tp, x->pp, x->dp, x->gbs, x->mb, x->iter, x->tput, x->tflops, sp, eff, x->mem, x->fits ? "true" : "false",
          x->gpu_W, x->gpu_J, x->node_J);
}

static void print_rows(FILE *out, const cJSON *ctx, const cJSON *rows, int csv) {
  if (csv) csv_header(out, ctx);
  else table_header(out, ctx);
  baseline b = {0};
  const cJSON *r;
  cJSON_ArrayForEach(r, rows) {
    srow x;
    double eff = NAN, sp = NAN;
    srow_from_json(ctx, r, &x);
    srow_eff(&b, &x, &eff, &sp);
    if (csv) csv_row(out, &x, eff, sp);
    else table_row(out, &x, eff, sp);
  }
}

void pf_sweep_table(FILE *out, const cJSON *ctx, const cJSON *rows) { print_rows(out, ctx, rows, 0); }
void pf_sweep_csv(FILE *out, const cJSON *ctx, const cJSON *rows) { print_rows(out, ctx, rows, 1); }

void pf_sweep_json(FILE *out, const cJSON *ctx, const cJSON *rows) {
  cJSON *root = pf_report_root_json();
  const cJSON *c;
  cJSON_ArrayForEach(c, ctx) cJSON_AddItemToObject(root, c->string, cJSON_Duplicate(c, 1));
  cJSON_AddItemToObject(root, "rows", cJSON_Duplicate(rows, 1));
  pf_report_json_print(out, root);
}

char *pf_cli_sweep_render(const cJSON *ctx, cJSON *rows, pf_format fmt) {
  add_efficiency(rows);
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  if (!out) return NULL;
  pf_fmt(fmt)->sweep(out, ctx, rows); /* the format table's sweep renderer */
  if (fclose(out) != 0) { free(buf); return NULL; }
  return buf;
}

/* ---- CSV shards: the rows with exact numbers, merged by streaming ---- */

#define RAW_MAGIC "# preflight sweep shard "

int pf_cli_sweep_raw(FILE *out, const cJSON *ctx, const cJSON *rows, int shard, int nshards) {
  char *study = cJSON_PrintUnformatted(ctx);
  if (!study) return pf_error_set(PF_ENOMEM, "out of memory");
  fprintf(out, RAW_MAGIC "%d/%d\n# study %s\n", shard, nshards, study);
  free(study);
  fprintf(out, "index,group");
  const cJSON *a, *r;
  cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(ctx, "axes")) fprintf(out, ",axis_%s", a->valuestring);
  fprintf(out, ",nodes,gpus,tp,pp,dp,gbs,microbatches,iteration_time_s,tokens_per_s,tflops_per_gpu,memory_GiB,"
               "memory_needed_GiB,avg_power_per_gpu_W,gpu_J,node_J,feasible,fits,status,reason\n");
  cJSON_ArrayForEach(r, rows) {
    srow x;
    srow_from_json(ctx, r, &x);
    fprintf(out, "%.17g,%.17g", x.index, x.group);
    for (int i = 0; i < x.naxes; i++) { fputc(',', out); pf_csv_put(out, x.axes[i]); }
    const double v[] = {x.nodes, x.gpus, x.tp, x.pp, x.dp, x.gbs,   x.mb,    x.iter,
                        x.tput,  x.tflops, x.mem, x.memfail, x.gpu_W, x.gpu_J, x.node_J};
    for (size_t i = 0; i < sizeof v / sizeof *v; i++) {
      if (isfinite(v[i])) fprintf(out, ",%.17g", v[i]);
      else fputc(',', out);
    }
    fprintf(out, ",%d,%d,", x.feasible, x.fits);
    pf_csv_put(out, x.status);
    fputc(',', out);
    pf_csv_put(out, x.reason);
    fputc('\n', out);
  }
  return 0;
}

/* One CSV line into fields (quotes as pf_csv_put writes them); fields point into line. */
static int split_csv(char *line, char **f, int max) {
  int n = 0;
  char *p = line;
  while (n < max) {
    if (*p == '"') {
      char *w = ++p;
      f[n++] = w;
      while (*p) {
        if (*p == '"' && p[1] == '"') { *w++ = '"'; p += 2; continue; }
        if (*p == '"') { p++; break; }
        *w++ = *p++;
      }
      *w = '\0';
      if (*p == ',') { *p++ = '\0'; continue; }
      break;
    }
    f[n++] = p;
    char *c = strchr(p, ',');
    if (!c) break;
    *c = '\0';
    p = c + 1;
  }
  return n;
}

static double fnum(const char *s) {
  if (!*s) return NAN;
  char *end;
  double x = strtod(s, &end);
  return *end ? NAN : x;
}

int pf_cli_sweep_is_raw(const char *first_line) { return strncmp(first_line, RAW_MAGIC, strlen(RAW_MAGIC)) == 0; }

/* A CSV shard's line into buf (PF_SHARD_CSV_LINE_B + 2 bytes): its length, -1 at its end, PF_EPARSE if longer. */
static ssize_t shard_line(char *buf, FILE *f, const char *path) {
  if (!fgets(buf, PF_SHARD_CSV_LINE_B + 2, f)) return -1;
  size_t len = strlen(buf);
  if (len == PF_SHARD_CSV_LINE_B + 1 && buf[len - 1] != '\n')
    return pf_error_set(PF_EPARSE, "%s: a line longer than %d bytes, the most a CSV shard's line holds", path,
                        PF_SHARD_CSV_LINE_B);
  return (ssize_t)len;
}

int pf_cli_sweep_merge_raw(FILE *const *in, const char *const *paths, int n, pf_format fmt, FILE *out, int *none_runs) {
  *none_runs = 0;
  char *line[2] = {malloc(PF_SHARD_CSV_LINE_B + 2), malloc(PF_SHARD_CSV_LINE_B + 2)};
  char study0[PF_SHARD_CSV_LINE_B + 2] = "";
  if (!line[0] || !line[1]) { free(line[0]); free(line[1]); return pf_error_set(PF_ENOMEM, "out of memory"); }
  long points = -1;
  cJSON *ctx = NULL;
  int rc = 0; ssize_t got;
  /* every shard: its magic line, the same study, the column header */
  for (int i = 0; i < n && rc == 0; i++) {
    int si, sn;
    if ((got = shard_line(line[0], in[i], paths[i])) < -1) { rc = (int)got; break; }
    if (got < 0 || sscanf(line[0], RAW_MAGIC "%d/%d", &si, &sn) != 2) {
      rc = pf_error_set(PF_EPARSE, "%s: not a CSV sweep shard", paths[i]);
      break;
    }
    if (sn != n || si != i + 1) {
      rc = pf_error_set(PF_EPARSE, "%s: shard %d/%d; give the %d shards in order 1..%d", paths[i], si, sn, n, n);
      break;
    }
    if ((got = shard_line(line[0], in[i], paths[i])) < -1) { rc = (int)got; break; }
    if (got < 0 || strncmp(line[0], "# study ", 8) != 0) {
      rc = pf_error_set(PF_EPARSE, "%s:2: no study line", paths[i]);
      break;
    }
    if (i == 0) {
      snprintf(study0, sizeof study0, "%s", line[0] + 8);
      ctx = cJSON_Parse(study0);
      const cJSON *p = cJSON_GetObjectItemCaseSensitive(ctx, "points");
      if (!cJSON_IsNumber(p) || !(p->valuedouble >= 0 && p->valuedouble <= (double)PF_SWEEP_MAX_POINTS)) {
        rc = pf_error_set(PF_EPARSE, "%s:2: the study's point count is missing or not in 0..1e8", paths[i]); break;
      }
      points = (long)p->valuedouble;
    } else if (strcmp(study0, line[0] + 8) != 0) {
      rc = pf_error_set(PF_EPARSE, "%s: not a shard of the same study as %s", paths[i], paths[0]);
      break;
    }
    if ((got = shard_line(line[0], in[i], paths[i])) < -1) rc = (int)got;
    else if (got < 0) rc = pf_error_set(PF_EPARSE, "%s: no column header", paths[i]);
  }
  if (rc == 0) {
    if (fmt == PF_FMT_CSV) csv_header(out, ctx);
    else table_header(out, ctx);
  }
  int naxes = cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(ctx, "axes"));
  baseline b = {0};
  pf_sweep_verdict vd = {0};
  for (long idx = 0; idx < points && rc == 0; idx++) {
    int k = (int)(idx % n);
    ssize_t len = shard_line(line[1], in[k], paths[k]);
    if (len < -1) { rc = (int)len; break; }
    if (len <= 0) { rc = pf_error_set(PF_EPARSE, "%s: ends before point %ld", paths[k], idx); break; }
    if (line[1][len - 1] == '\n') line[1][len - 1] = '\0';
    char *f[56];
    int nf = split_csv(line[1], f, 56);
    if (nf != 2 + naxes + 19 || fnum(f[0]) != (double)idx) {
      rc = pf_error_set(PF_EPARSE, "%s: point %ld: malformed or out of order", paths[k], idx);
      break;
    }
    srow x;
    memset(&x, 0, sizeof x);
    x.index = fnum(f[0]);
    x.group = fnum(f[1]);
    x.naxes = naxes;
    for (int i = 0; i < naxes && i < 16; i++) x.axes[i] = f[2 + i];
    double *v[] = {&x.nodes, &x.gpus, &x.tp,     &x.pp,      &x.dp,    &x.gbs,   &x.mb,   &x.iter,
                   &x.tput,  &x.tflops, &x.mem, &x.memfail, &x.gpu_W, &x.gpu_J, &x.node_J};
    for (int i = 0; i < 15; i++) *v[i] = fnum(f[2 + naxes + i]);
    x.feasible = strcmp(f[2 + naxes + 15], "1") == 0;
    x.fits = strcmp(f[2 + naxes + 16], "1") == 0;
    x.status = f[2 + naxes + 17];
    x.reason = f[2 + naxes + 18];
    pf_sweep_verdict_add(&vd, x.status, x.reason);
    double eff = NAN, sp = NAN;
    srow_eff(&b, &x, &eff, &sp);
    if (fmt == PF_FMT_CSV) csv_row(out, &x, eff, sp);
    else table_row(out, &x, eff, sp);
  }
  for (int i = 0; i < n && rc == 0; i++)
    if (shard_line(line[0], in[i], paths[i]) != -1)
      rc = pf_error_set(PF_EPARSE, "%s: rows beyond the study's points", paths[i]);
  if (rc == 0) *none_runs = pf_sweep_verdict_end(&vd);
  cJSON_Delete(ctx);
  free(line[0]);
  free(line[1]);
  return rc;
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
    if (n > 0) rc = pf_plot_add_like(pass == 0 ? tput : eff, name, label, PF_PLOT_POINTS, n, x, y);
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
          (rc = pf_plot_add_like(tput, ideal, label, PF_PLOT_DASHED, n, x, id)) < 0 ||
          (rc = pf_plot_add(eff, label, PF_PLOT_LINES, n, x, e)) < 0)
        break;
      if (vs.n > 0) rc = add_measured(tput, eff, &vs, jstr(first, "machine", NULL), jstr(first, "model", NULL), label);
    }
  }
  snprintf(fig.caption, sizeof fig.caption,
           "Predicted by preflight %s (%s scaling): throughput in tokens per second (ideal: linear from the smallest "
           "feasible node count, dashed, in its series' colour) and parallel efficiency = TFLOP/s per GPU relative to the smallest node count that "
           "fits in memory (EPICURE's definition)%s.%s",
           pf_version(), jstr(ctx, "scaling", NULL), vs.n > 0 ? "; dots: measured runs from the given CSV" : "",
           groups > 5 ? " Only the first five groups are drawn." : "");
  if (rc == 0) rc = pf_plot_write(&fig, path);
  free(x); free(y); free(e); free(id);
  pf_plot_free(&fig);
  pf_vset_free(&vs);
  return rc;
}
