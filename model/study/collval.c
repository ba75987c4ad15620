/* collval.c - measured collectives against the communication model (see
 * collval.h): collective CSV rows and nccl-tests / rccl-tests output, read
 * strictly (errors name file:line:field), predicted with the same model
 * `preflight collective` prints (collbench.c). */
#include "collval.h"

#include "comm/comm.h"
#include "core/core.h"
#include "validate.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#define MAX_FILE_B (16L << 20)

static const char *cmetric_names[] = {"busbw", "algbw", "time_us"};
const char *pf_cmetric_name(pf_cmetric m) { return m <= PF_CMET_TIME ? cmetric_names[m] : "?"; }

void pf_cvset_free(pf_cvset *s) {
  free(s->rows);
  s->rows = NULL;
  s->n = 0;
}

int pf_collval_kind(const char *path) {
  /* only a regular file is sniffed: a pipe or FIFO can be read once, and is a run CSV */
  struct stat st;
  if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) return 0;
  FILE *f = fopen(path, "r");
  if (!f) return 0;
  int kind = 0;
  char line[1024];
  /* the header or the nccl-tests banner lies in the first lines: never read the whole of a large file */
  for (int n = 0; n < 256 && kind == 0 && fgets(line, sizeof line, f); n++) {
    if (!strncmp(line, "machine,", 8)) { /* a CSV header: collective rows name op and size_B */
      kind = strstr(line, ",op,") && strstr(line, "size_B") ? 1 : -1;
      break;
    }
    if (line[0] != '#') continue;
    const char *q = line + 1;
    while (*q == ' ') q++;
    if (strstr(line, "nThread") || strstr(line, "Collective test starting") ||
        (!strncmp(q, "size", 4) && strstr(q, "count") && strstr(q, "busbw")))
      kind = 2;
  }
  fclose(f);
  return kind > 0 ? kind : 0;
}

/* ---------- collective CSV ---------- */

enum { C_MACHINE, C_OP, C_NODES, C_GPN, C_SIZE, C_ALGO, C_METRIC, C_VALUE, C_UNIT, C_BOUND, C_VALUE_HI, C_USE,
       C_SOURCE, C_NOTES, C_N };
static const char *col_names[C_N] = {"machine", "op", "nodes", "gpus_per_node", "size_B", "algorithm", "metric",
                                     "value", "unit", "bound", "value_hi", "use", "source", "notes"};
static const int col_required[C_N] = {1, 1, 1, 0, 1, 0, 1, 1, 0, 0, 0, 0, 1, 0};

static int field_err(const char *path, int line, const char *col, const char *what, const char *v) {
  return pf_error_set(PF_EPARSE, "%s:%d: %s \"%s\": %s", path, line, col, v, what);
}

static int parse_num(const char *path, int line, const char *col, const char *v, double *out) {
  char *end;
  errno = 0;
  double x = strtod(v, &end);
  while (*end == ' ') end++;
  if (end == v || *end || errno || !isfinite(x)) return field_err(path, line, col, "expected a number", v);
  *out = x;
  return 0;
}

static int parse_row(const char *path, const pf_csv_row *rec, const int *idx, pf_cvrow *r) {
  memset(r, 0, sizeof *r);
  r->line = rec->line;
  const char *f[C_N];
  for (int c = 0; c < C_N; c++) f[c] = idx[c] >= 0 ? rec->fields[idx[c]] : "";
  for (int c = 0; c < C_N; c++)
    if (col_required[c] && !f[c][0]) return field_err(path, r->line, col_names[c], "required", f[c]);
  snprintf(r->machine, sizeof r->machine, "%s", f[C_MACHINE]);
  pf_machine *m = malloc(sizeof *m);
  if (!m) return pf_error_set(PF_ENOMEM, "out of memory");
  int rc = pf_machine_load(r->machine, m);
  int gpn_max = m->gpus_per_node, nodes_max = m->nodes;
  free(m);
  if (rc < 0) {
    char why[512];
    snprintf(why, sizeof why, "%s", pf_error_detail());
    return pf_error_set(rc, "%s:%d: machine \"%s\": %s", path, r->line, r->machine, why);
  }
  if (pf_coll_kind_parse(f[C_OP], &r->op) < 0)
    return field_err(path, r->line, "op", "valid: all_reduce, all_gather, reduce_scatter, alltoall, sendrecv", f[C_OP]);
  double x = 0; /* set by parse_num(); initialised for GCC -O3's -Wmaybe-uninitialized */
  if ((rc = parse_num(path, r->line, "nodes", f[C_NODES], &x)) < 0) return rc;
  if (x < 1 || x > nodes_max || x != floor(x))
    return field_err(path, r->line, "nodes", "a whole number of nodes the machine has", f[C_NODES]);
  r->nodes = (int)x;
  r->gpn = gpn_max;
  if (f[C_GPN][0]) {
    if ((rc = parse_num(path, r->line, "gpus_per_node", f[C_GPN], &x)) < 0) return rc;
    if (x < 1 || x > gpn_max || x != floor(x))
      return field_err(path, r->line, "gpus_per_node", "a whole number up to the node's GPUs", f[C_GPN]);
    r->gpn = (int)x;
  }
  if (parse_num(path, r->line, "size_B", f[C_SIZE], &r->size_B) < 0 &&
      pf_units_parse(f[C_SIZE], PF_UNIT_BYTES, &r->size_B) < 0)
    return field_err(path, r->line, "size_B", "a size in bytes", f[C_SIZE]);
  if (!(r->size_B >= 1)) return field_err(path, r->line, "size_B", "must be at least 1 byte", f[C_SIZE]);
  r->algo = PF_COLL_AUTO;
  if (f[C_ALGO][0] && pf_coll_algo_parse(f[C_ALGO], &r->algo) < 0) {
    char valid[512] = "valid: empty (the library's choice)"; /* the algorithms' names from comm's table */
    size_t n = strlen(valid);
    for (pf_coll_algo a = PF_COLL_FIRST; a < pf_coll_algo_end() && n < sizeof valid; a++)
      n += (size_t)snprintf(valid + n, sizeof valid - n, ", %s", pf_coll_algo_name(a));
    return field_err(path, r->line, "algorithm", valid, f[C_ALGO]);
  }
  int mi = -1;
  for (int k = 0; k <= PF_CMET_TIME; k++)
    if (!strcmp(f[C_METRIC], cmetric_names[k])) mi = k;
  if (mi < 0) return field_err(path, r->line, "metric", "valid: busbw, algbw, time_us", f[C_METRIC]);
  r->metric = (pf_cmetric)mi;
  const char *want = r->metric == PF_CMET_TIME ? "us" : "GB/s";
  if (f[C_UNIT][0] && strcmp(f[C_UNIT], want))
    return field_err(path, r->line, "unit", r->metric == PF_CMET_TIME ? "time_us is in us" : "bandwidths are in GB/s",
                     f[C_UNIT]);
  if ((rc = parse_num(path, r->line, "value", f[C_VALUE], &r->measured)) < 0) return rc;
  if (!(r->measured > 0)) return field_err(path, r->line, "value", "must be positive", f[C_VALUE]);
  r->bound = PF_BOUND_EXACT;
  if (!strcmp(f[C_BOUND], "lower")) r->bound = PF_BOUND_LOWER;
  else if (!strcmp(f[C_BOUND], "upper")) r->bound = PF_BOUND_UPPER;
  else if (!strcmp(f[C_BOUND], "range")) r->bound = PF_BOUND_RANGE;
  else if (f[C_BOUND][0]) return field_err(path, r->line, "bound", "valid: empty, lower, upper, range", f[C_BOUND]);
  if (r->bound == PF_BOUND_RANGE) {
    if ((rc = parse_num(path, r->line, "value_hi", f[C_VALUE_HI], &r->measured_hi)) < 0) return rc;
    if (r->measured_hi < r->measured) return field_err(path, r->line, "value_hi", "below value", f[C_VALUE_HI]);
  }
  if (f[C_USE][0] && strcmp(f[C_USE], "fit") && strcmp(f[C_USE], "check"))
    return field_err(path, r->line, "use", "valid: fit, check", f[C_USE]);
  snprintf(r->use, sizeof r->use, "%s", f[C_USE]);
  snprintf(r->source, sizeof r->source, "%s", f[C_SOURCE]);
  snprintf(r->notes, sizeof r->notes, "%s", f[C_NOTES]);
  return 0;
}

int pf_collval_read_csv(const char *path, pf_cvset *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->path, sizeof out->path, "%s", path);
  pf_csv csv;
  int rc = pf_csv_read(path, &csv);
  if (rc < 0) return rc;
  if (csv.nrows < 1) { pf_csv_free(&csv); return pf_error_set(PF_EPARSE, "%s: no header line", path); }
  int idx[C_N];
  for (int c = 0; c < C_N; c++) idx[c] = -1;
  const pf_csv_row *h = &csv.rows[0];
  for (int i = 0; i < h->nfields; i++) {
    int c = 0;
    while (c < C_N && strcmp(h->fields[i], col_names[c])) c++;
    if (c == C_N) {
      rc = pf_error_set(PF_EPARSE, "%s:%d: unknown column \"%s\"", path, h->line, h->fields[i]);
      pf_csv_free(&csv);
      return rc;
    }
    idx[c] = i;
  }
  for (int c = 0; c < C_N; c++)
    if (col_required[c] && idx[c] < 0) {
      rc = pf_error_set(PF_EPARSE, "%s:%d: missing column \"%s\"", path, h->line, col_names[c]);
      pf_csv_free(&csv);
      return rc;
    }
  out->rows = calloc((size_t)(csv.nrows > 1 ? csv.nrows - 1 : 1), sizeof *out->rows);
  if (!out->rows) { pf_csv_free(&csv); return pf_error_set(PF_ENOMEM, "out of memory"); }
  for (int i = 1; i < csv.nrows && rc == 0; i++) {
    const pf_csv_row *rec = &csv.rows[i];
    if (rec->nfields != h->nfields)
      rc = pf_error_set(PF_EPARSE, "%s:%d: %d fields, expected %d", path, rec->line, rec->nfields, h->nfields);
    else if ((rc = parse_row(path, rec, idx, &out->rows[out->n])) == 0)
      out->n++;
  }
  pf_csv_free(&csv);
  if (rc < 0) pf_cvset_free(out);
  return rc;
}

/* ---------- nccl-tests / rccl-tests output ---------- */

static int op_from_text(const char *s, pf_coll_kind *op) {
  static const struct { const char *key; pf_coll_kind k; } keys[] = {
      {"all_reduce", PF_ALLREDUCE}, {"all_gather", PF_ALLGATHER}, {"reduce_scatter", PF_REDUCE_SCATTER},
      {"alltoall", PF_ALLTOALL}, {"sendrecv", PF_SENDRECV}};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++)
    if (strstr(s, keys[i].key)) { *op = keys[i].k; return 1; }
  return 0;
}

/* Is t a number as strtod reads it, whole (and finite when finite is asked)? */
static bool numeric(const char *t, bool finite, double *v) {
  char *end;
  double x = strtod(t, &end);
  if (v) *v = x;
  return end != t && !*end && (!finite || isfinite(x));
}

/* One result line: size count type [redop [root]] time algbw busbw ...  Returns 1 when it is one, 0 when the
 * line is not a row (a log line of the launcher: its first field is not a number), or PF_EPARSE naming
 * path:line when it starts as a row and cannot be read (cut fields, N/A or nan, a size, time or bandwidth
 * out of the bounds of core/bounds.c): no row is dropped silently.  *sum: the redop names a reduction. */
static int result_line(const char *path, int line, const char *text, double *size, double *time_us,
                       double *algbw, double *busbw, int *sum) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", text);
  char *tok[16], *save = NULL;
  int n = 0;
  for (char *t = strtok_r(buf, " \t\r", &save); t && n < 16; t = strtok_r(NULL, " \t\r", &save)) tok[n++] = t;
  double sz;
  if (n == 0 || !numeric(tok[0], false, &sz)) return 0;
  int k = 3;
  *sum = 0;
  if (k < n && !numeric(tok[k], false, NULL)) { /* the reduction: sum, prod, min, max, avg, none */
    static const char *ops[] = {"sum", "prod", "min", "max", "avg"};
    for (int i = 0; i < 5; i++) *sum |= !strcmp(tok[k], ops[i]);
    k++;
  }
  if (k < n && numeric(tok[k], false, NULL) && !strpbrk(tok[k], ".eEnN") && k + 3 < n) k++; /* the root */
  double v[3];
  bool ok = n >= 6 && numeric(tok[1], true, NULL) && !numeric(tok[2], false, NULL) && k + 2 < n;
  for (int i = 0; ok && i < 3; i++) ok = numeric(tok[k + i], true, &v[i]);
  if (!ok)
    return pf_error_set(PF_EPARSE, "%s:%d: a result row that cannot be read (expected: size count type [redop "
                        "root] time algbw busbw, numbers; a field is cut, N/A or not finite)", path, line);
  const pf_plaus *bytes = pf_plaus_get(PF_PLAUS_BYTES), *bw = pf_plaus_get(PF_PLAUS_BANDWIDTH);
  const char *bad = !(sz >= 0 && sz <= bytes->hi) ? "size (B)" : !(v[0] > 0 && v[0] <= 3600e6) ? "time (us)"
                    : !(v[1] >= 0 && v[1] * 1e9 <= bw->hi) ? "algbw (GB/s)"
                    : !(v[2] >= 0 && v[2] * 1e9 <= bw->hi) ? "busbw (GB/s)" : NULL;
  if (bad)
    return pf_error_set(PF_EPARSE, "%s:%d: %s %s is out of bounds (size in [0, %g] B, time in (0, 3.6e9] us, "
                        "bandwidths in [0, %g] GB/s)", path, line, bad,
                        bad[0] == 's' ? tok[0] : bad[0] == 't' ? tok[k] : bad[0] == 'a' ? tok[k + 1] : tok[k + 2],
                        bytes->hi, bw->hi / 1e9);
  *size = sz;
  *time_us = v[0];
  *algbw = v[1];
  *busbw = v[2];
  return 1;
}

/* The collective from the bus-bandwidth factor busbw / algbw (nccl-tests' PERFORMANCE.md) over p ranks (0:
 * unknown) and the redop column: 2(p-1)/p all-reduce, (p-1)/p reduce-scatter (a reduction) or all-gather,
 * 1 send/receive.  0 when the numbers do not tell. */
static int op_from_factor(double ratio, int p, int sum, pf_coll_kind *op) {
  if (!(ratio > 0) || !isfinite(ratio)) return 0;
  if (p > 2) {
    double ar = 2.0 * (p - 1) / p, ag = (double)(p - 1) / p;
    if (fabs(ratio - ar) < 0.02 * ar) { *op = PF_ALLREDUCE; return 1; }
    if (fabs(ratio - ag) < 0.02) { *op = sum ? PF_REDUCE_SCATTER : PF_ALLGATHER; return 1; }
    if (fabs(ratio - 1) < 0.02) { *op = PF_SENDRECV; return 1; }
    return 0;
  }
  if (ratio > 1.02) { *op = PF_ALLREDUCE; return 1; }
  if (ratio < 0.98) { *op = sum ? PF_REDUCE_SCATTER : PF_ALLGATHER; return 1; }
  return 0;
}

/* The distinct hosts of nccl-tests' rank lines (any number of nodes) and the ranks counted. */
typedef struct {
  char (*host)[64];
  int n, ranks;
} hostset;

/* A "#" line: "# nodes N, GPUs per node G" (preflight collective's own), or a rank line
 * "#  Rank  0 Group  0 Pid 1 on host device 0 ...". */
static int header_line(const char *p, hostset *hs, int *own_nodes, int *own_gpn) {
  int a, b;
  if (sscanf(p, "# nodes %d, GPUs per node %d", &a, &b) == 2 && a > 0 && b > 0) { *own_nodes = a; *own_gpn = b; }
  const char *on = strstr(p, " on ");
  if (!(strstr(p, "Rank") && strstr(p, "Pid") && on)) return 0;
  hs->ranks++;
  char h[64] = "";
  sscanf(on + 4, "%63s", h);
  for (int i = 0; i < hs->n; i++)
    if (!strcmp(hs->host[i], h)) return 0;
  if ((hs->n & (hs->n - 1)) == 0) { /* grown at each power of two */
    char (*g)[64] = realloc(hs->host, (size_t)(hs->n ? 2 * hs->n : 1) * sizeof *hs->host);
    if (!g) return pf_error_set(PF_ENOMEM, "out of memory");
    hs->host = g;
  }
  snprintf(hs->host[hs->n++], sizeof hs->host[0], "%s", h);
  return 0;
}

int pf_collval_read_nccltests(const char *path, const char *machine, int nodes, int gpn, pf_cvset *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->path, sizeof out->path, "%s", path);
  pf_machine *m = malloc(sizeof *m);
  if (!m) return pf_error_set(PF_ENOMEM, "out of memory");
  int rc = machine ? pf_machine_load(machine, m) : pf_error_set(PF_EINVAL, "validating nccl-tests output needs --machine");
  int m_gpn = m->gpus_per_node;
  free(m);
  if (rc < 0) return rc;
  char *buf;
  size_t len;
  if ((rc = pf_read_file(path, MAX_FILE_B, &buf, &len)) < 0) return rc;
  pf_coll_kind op = PF_ALLREDUCE, by_name = PF_ALLREDUCE;
  /* the collective by content first: a "<op>_perf" anywhere (the command line, nccl-tests' "Collective test"
   * lines); then the file's name; then the bus-bandwidth factor of the rows */
  int have_op = 0, named = op_from_text(path, &by_name), cap = 0, line = 0, own_nodes = 0,
      own_gpn = 0, sum = 0;
  double ratio = 0;
  hostset hs = {0};
  int noise = 0, noise_line = 0;
  char *text = len >= 3 && memcmp(buf, "\xef\xbb\xbf", 3) == 0 ? buf + 3 : buf; /* a UTF-8 BOM skipped */
  for (char *p = text, *e; *p && rc == 0; p = e ? e + 1 : p + strlen(p)) {
    e = strchr(p, '\n');
    if (e) *e = '\0';
    line++;
    if (!have_op && strstr(p, "_perf")) have_op = op_from_text(p, &op);
    if (p[0] == '#') {
      if ((rc = header_line(p, &hs, &own_nodes, &own_gpn)) < 0) break;
      continue;
    }
    double size = 0, time_us = 0, algbw = 0, busbw = 0;
    int rsum, got = result_line(path, line, p, &size, &time_us, &algbw, &busbw, &rsum);
    if (got < 0) { rc = got; break; }
    if (got == 0) { /* not a row: a launcher's log line (NCCL_DEBUG=INFO), counted and reported below */
      if (!*p || strspn(p, " \t\r") == strlen(p)) continue;
      if (strlen(p) > 4096) {
        rc = pf_error_set(PF_EPARSE, "%s:%d: a line of %zu bytes that is no result row (nccl-tests lines are "
                          "under 200): not nccl-tests output", path, line, strlen(p));
        break;
      }
      if (!noise++) noise_line = line;
      continue;
    }
    if (size == 0) { /* nccl-tests -b 0: the call's latency alone, nothing the model prices */
      pf_warn("%s:%d: a row of size 0 skipped (only the call's latency; nothing to compare)", path, line);
      continue;
    }
    if (algbw >= 1.0 && ratio == 0) { ratio = busbw / algbw; sum = rsum; } /* printed to 0.01: a large row */
    if (out->n == cap) {
      cap = cap ? 2 * cap : 64;
      pf_cvrow *g = realloc(out->rows, (size_t)cap * sizeof *g);
      if (!g) { free(buf); pf_cvset_free(out); return pf_error_set(PF_ENOMEM, "out of memory"); }
      out->rows = g;
    }
    pf_cvrow *r = &out->rows[out->n++];
    memset(r, 0, sizeof *r);
    r->line = line;
    snprintf(r->machine, sizeof r->machine, "%s", machine);
    r->size_B = size;
    /* busbw is printed to 0.01 GB/s: below 1 GB/s compare the time (printed to 0.01 us) instead */
    r->metric = busbw >= 1.0 ? PF_CMET_BUSBW : PF_CMET_TIME;
    r->measured = busbw >= 1.0 ? busbw : time_us;
    r->algo = PF_COLL_AUTO;
    snprintf(r->source, sizeof r->source, "%s:%d", path, line);
  }
  free(buf);
  free(hs.host);
  int ranks = hs.ranks, nhosts = hs.n;
  if (rc < 0) { pf_cvset_free(out); return rc; }
  if (noise) pf_warn("%s:%d: %d line%s neither a comment (#) nor a result row, skipped (a launcher's log?)", path,
                     noise_line, noise, noise == 1 ? "" : "s");
  if (out->n == 0) return pf_error_set(PF_EPARSE, "%s: no nccl-tests / rccl-tests result line (size count type ... "
                                       "time algbw busbw)", path);
  if (nodes <= 0) nodes = own_nodes > 0 ? own_nodes : nhosts > 0 ? nhosts : 1;
  if (gpn <= 0) gpn = own_gpn > 0 ? own_gpn : ranks > 0 && ranks % nodes == 0 ? ranks / nodes : m_gpn;
  if (!have_op && named) { op = by_name; have_op = 1; }
  int p = own_nodes > 0 || ranks > 0 || nodes > 1 ? nodes * gpn : 0;
  if (!have_op) have_op = op_from_factor(ratio, p, sum, &op);
  if (!have_op) {
    pf_cvset_free(out);
    return pf_error_set(PF_EPARSE, "%s: which collective? no \"<op>_perf\" in the file (its command line or the "
                        "\"# Collective test starting\" line), none in its name, and busbw / algbw does not tell; "
                        "keep the command line or name the file after it (all_reduce_perf.txt)", path);
  }
  for (int i = 0; i < out->n; i++) {
    out->rows[i].op = op;
    out->rows[i].nodes = nodes;
    out->rows[i].gpn = gpn;
  }
  return 0;
}

/* ---------- predictions ---------- */

static double rel_error(const pf_cvrow *r, double p) { return pf_bound_error(r->bound, r->measured, r->measured_hi, p); }

int pf_collval_run(pf_cvset *s) {
  pf_machine *m = malloc(sizeof *m);
  pf_coll_bench b;
  memset(&b, 0, sizeof b);
  char have[PF_ID_MAX] = "";
  int bn = 0, bg = 0;
  if (!m) return pf_error_set(PF_ENOMEM, "out of memory");
  for (int i = 0; i < s->n; i++) {
    pf_cvrow *r = &s->rows[i];
    int rc = 0;
    if (strcmp(have, r->machine) || bn != r->nodes || bg != r->gpn) {
      pf_coll_bench_free(&b);
      have[0] = '\0';
      if ((rc = pf_machine_load(r->machine, m)) == 0 &&
          (rc = pf_coll_bench_init(m, r->nodes, r->gpn, PF_PLACE_CONTIGUOUS, 1, &b)) == 0) {
        snprintf(have, sizeof have, "%s", r->machine);
        bn = r->nodes;
        bg = r->gpn;
      }
    }
    pf_coll_result res;
    if (rc == 0) rc = pf_coll_bench_run(&b, r->op, r->algo, PF_PROTO_AUTO, r->size_B, &res);
    if (rc < 0) {
      snprintf(r->reason, sizeof r->reason, "%s", pf_error_detail());
      continue;
    }
    r->ok = 1;
    r->pred_algo = res.algo;
    r->pred_proto = res.proto;
    r->predicted = r->metric == PF_CMET_BUSBW ? res.bus_bw_Bps / 1e9
                   : r->metric == PF_CMET_ALGBW ? res.alg_bw_Bps / 1e9 : res.time_s * 1e6;
    r->error = rel_error(r, r->predicted);
  }
  pf_coll_bench_free(&b);
  free(m);
  return 0;
}

pf_vstats pf_collval_stats(const pf_cvset *s, double min_size) {
  pf_vstats st = {0};
  double *x = malloc((size_t)(s->n > 0 ? s->n : 1) * sizeof *x);
  if (!x) return st;
  int n = 0;
  for (int i = 0; i < s->n; i++)
    if (s->rows[i].ok && s->rows[i].size_B >= min_size) x[n++] = fabs(s->rows[i].error) * 100;
  st = pf_vstats_of(x, n);
  if (n == 0) st.mean_abs_pct = st.max_abs_pct = 0; /* no rows: mean and max print as 0, the median as nan */
  free(x);
  return st;
}
