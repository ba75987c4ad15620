/* megatron.c - read a Megatron-LM training log: the argument dump and the
 * per-iteration lines (shared/research/style-and-ecosystem.md B.3).
 *
 * Megatron-LM's training_log() prints on the last rank, every --log-interval
 * iterations:
 *   [date] iteration       10/     100 | consumed samples: ... |
 *     elapsed time per iteration (ms): 1234.5 | throughput per GPU
 *     (TFLOP/s/GPU): 150.2 | energy per GPU (J/iter/GPU): ... |
 *     power per GPU (W/GPU): ... | ... | global batch size:   512 | ...
 * Older versions and forks print "elapsed time per iteration (s): 1.23" and
 * "TFLOPs: 150.2" (the patterns CARAML's JUBE scripts match).  Arguments are
 * dumped between "---- arguments ----" and "---- end of arguments ----" as
 * "  name ........ value".  The first logged iteration includes warm-up and
 * initialisation, so the medians skip it (when more than one is logged).
 * Lines may carry launcher prefixes ("0: ", "[rank0]: "): fields are found by
 * their labels anywhere in the line.
 */
#include "core/core.h"
#include "validate.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

void pf_megatron_free(pf_megatron_log *l) {
  free(l->iteration); free(l->line); free(l->time_s); free(l->tflops);
  free(l->energy_J); free(l->power_W); free(l->gbs);
  l->iteration = l->line = l->gbs = NULL;
  l->time_s = l->tflops = l->energy_J = l->power_W = NULL;
  l->niter = 0;
}

const char *pf_megatron_arg(const pf_megatron_log *l, const char *name) {
  for (int i = 0; i < l->nargs; i++)
    if (!strcmp(l->arg_name[i], name)) return l->arg_value[i];
  return NULL;
}

int pf_megatron_arg_line(const pf_megatron_log *l, const char *name) {
  for (int i = 0; i < l->nargs; i++)
    if (!strcmp(l->arg_name[i], name)) return l->arg_line[i];
  return 0;
}

/* "  name ....... value" -> name, value; 0 if the line has that shape. */
static int arg_line(const char *s, char *name, size_t nn, char *value, size_t vn) {
  while (*s == ' ' || *s == '\t') s++;
  const char *a = s;
  while (isalnum((unsigned char)*s) || *s == '_') s++;
  size_t len = (size_t)(s - a);
  if (len == 0 || len >= nn || *s != ' ') return -1;
  while (*s == ' ') s++;
  if (*s != '.') return -1;
  while (*s == '.') s++;
  if (*s != ' ') return -1;
  while (*s == ' ') s++;
  memcpy(name, a, len);
  name[len] = '\0';
  size_t vl = strlen(s);
  while (vl > 0 && isspace((unsigned char)s[vl - 1])) vl--;
  if (vl >= vn) vl = vn - 1;
  memcpy(value, s, vl);
  value[vl] = '\0';
  return 0;
}

/* Number after label in line; NAN if the label is absent; error if it does
 * not parse. */
static int labelled(const char *line, const char *label, const char *name, int lineno, const char *field, double *out) {
  *out = NAN;
  const char *p = strstr(line, label);
  if (!p) return 0;
  p += strlen(label);
  while (*p == ' ') p++;
  char *end;
  errno = 0;
  double x = strtod(p, &end);
  if (end == p || errno || !isfinite(x) || (*end && *end != ' ' && *end != '|' && *end != '\r' && *end != '\n'))
    return pf_error_set(PF_EPARSE, "%s:%d: %s: \"%.20s\" is not a number", name, lineno, field, p);
  *out = x;
  return 0;
}

static int grow(pf_megatron_log *l, int *cap) {
  if (l->niter < *cap) return 0;
  int nc = *cap ? 2 * *cap : 64;
#define GROW(f) do { void *n_ = realloc(l->f, (size_t)nc * sizeof *l->f); if (!n_) return PF_ENOMEM; l->f = n_; } while (0)
  GROW(iteration); GROW(line); GROW(time_s); GROW(tflops); GROW(energy_J); GROW(power_W); GROW(gbs);
#undef GROW
  *cap = nc;
  return 0;
}

static double median_after_first(const double *v, int n, int *used) {
  double *x = malloc((size_t)(n > 0 ? n : 1) * sizeof *x);
  if (!x) return NAN;
  int k = 0;
  for (int i = (n > 1 ? 1 : 0); i < n; i++)
    if (!isnan(v[i])) x[k++] = v[i];
  double m = pf_median(x, k);
  if (used) *used = k;
  free(x);
  return m;
}

int pf_megatron_parse(const char *text, size_t len, const char *name, pf_megatron_log *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->path, sizeof out->path, "%s", name);
  out->med_time_s = out->med_tflops = out->med_energy_J = out->med_power_W = NAN;
  int cap = 0, lineno = 0, rc = 0;
  bool in_args = false;
  char *line = malloc(len + 1);
  if (!line) return pf_error_set(PF_ENOMEM, "out of memory");
  size_t i = 0;
  while (i < len && rc == 0) {
    size_t j = i;
    while (j < len && text[j] != '\n') j++;
    size_t n = j - i;
    memcpy(line, text + i, n);
    line[n] = '\0';
    if (n > 0 && line[n - 1] == '\r') line[--n] = '\0';
    i = j + 1;
    lineno++;

    if (strstr(line, "end of arguments") && strstr(line, "---")) { in_args = false; continue; }
    if (strstr(line, "arguments") && strstr(line, "-----") && !strstr(line, "end of")) { in_args = true; continue; }
    if (in_args) {
      char an[64], av[128];
      if (arg_line(line, an, sizeof an, av, sizeof av) == 0 && out->nargs < PF_MEGATRON_MAXARGS) {
        snprintf(out->arg_name[out->nargs], sizeof out->arg_name[0], "%s", an);
        snprintf(out->arg_value[out->nargs], sizeof out->arg_value[0], "%s", av);
        out->arg_line[out->nargs++] = lineno;
      }
      continue;
    }
    const char *et = strstr(line, "elapsed time per iteration");
    if (!et) continue;
    /* the iteration counter comes first: "iteration   N/   M |" */
    const char *it = strstr(line, "iteration");
    if (it == et + strlen("elapsed time per ")) {
      rc = pf_error_set(PF_EPARSE, "%s:%d: iteration: no \"iteration N/M\" counter before the elapsed time", name,
                        lineno);
      break;
    }
    const char *p = it + strlen("iteration");
    while (*p == ' ' || *p == '\t') p++;
    char *end;
    errno = 0;
    long num = strtol(p, &end, 10);
    const char *q = end;
    while (*q == ' ') q++;
    if (end == p || errno || num < 0 || *q != '/') {
      rc = pf_error_set(PF_EPARSE, "%s:%d: iteration: \"%.16s\" is not an iteration number N/M", name, lineno, p);
      break;
    }
    q++;
    while (*q == ' ') q++;
    long total = strtol(q, &end, 10);
    if (end == q || total < 0) {
      rc = pf_error_set(PF_EPARSE, "%s:%d: iteration: \"%.16s\" is not a total number of iterations", name, lineno, q);
      break;
    }
    double t_ms, t_s, tf, tf_old, en, pw, gb;
    if ((rc = labelled(line, "elapsed time per iteration (ms):", name, lineno, "elapsed time per iteration (ms)", &t_ms)) < 0 ||
        (rc = labelled(line, "elapsed time per iteration (s):", name, lineno, "elapsed time per iteration (s)", &t_s)) < 0 ||
        (rc = labelled(line, "throughput per GPU (TFLOP/s/GPU):", name, lineno, "throughput per GPU (TFLOP/s/GPU)", &tf)) < 0 ||
        (rc = labelled(line, "TFLOPs:", name, lineno, "TFLOPs", &tf_old)) < 0 ||
        (rc = labelled(line, "energy per GPU (J/iter/GPU):", name, lineno, "energy per GPU (J/iter/GPU)", &en)) < 0 ||
        (rc = labelled(line, "power per GPU (W/GPU):", name, lineno, "power per GPU (W/GPU)", &pw)) < 0 ||
        (rc = labelled(line, "global batch size:", name, lineno, "global batch size", &gb)) < 0)
      break;
    double t = !isnan(t_ms) ? t_ms * 1e-3 : t_s;
    if (isnan(t) || !(t > 0)) {
      rc = pf_error_set(PF_EPARSE, "%s:%d: elapsed time per iteration: expected \"(ms): X\" or \"(s): X\" with X > 0",
                        name, lineno);
      break;
    }
    if (!isnan(gb) && !(gb >= 1 && gb <= INT_MAX)) { /* converted to int below (fuzz_megatron: 1e60) */
      rc = pf_error_set(PF_EPARSE, "%s:%d: global batch size: %g is not a batch size (1 to %d)", name, lineno, gb,
                        INT_MAX);
      break;
    }
    if (!out->format[0]) snprintf(out->format, sizeof out->format, "%s", !isnan(t_ms) ? "ms" : "s");
    if (grow(out, &cap) < 0) { rc = pf_error_set(PF_ENOMEM, "out of memory"); break; }
    int k = out->niter++;
    out->iteration[k] = (int)num;
    out->line[k] = lineno;
    out->time_s[k] = t;
    out->tflops[k] = !isnan(tf) ? tf : tf_old;
    out->energy_J[k] = en;
    out->power_W[k] = pw;
    out->gbs[k] = isnan(gb) ? 0 : (int)gb;
    out->total_iters = (int)total;
  }
  free(line);
  if (rc == 0 && out->niter == 0)
    rc = pf_error_set(PF_EPARSE, "%s:%d: no per-iteration lines (\"iteration N/M | ... elapsed time per iteration "
                      "(ms): ...\") in %d lines", name, lineno, lineno);
  if (rc < 0) { pf_megatron_free(out); return rc; }
  out->med_time_s = median_after_first(out->time_s, out->niter, &out->used);
  out->med_tflops = median_after_first(out->tflops, out->niter, NULL);
  out->med_energy_J = median_after_first(out->energy_J, out->niter, NULL);
  out->med_power_W = median_after_first(out->power_W, out->niter, NULL);
  return 0;
}

int pf_megatron_read(const char *path, pf_megatron_log *out) {
  memset(out, 0, sizeof *out);
  char *buf;
  size_t len;
  /* 256 MiB: a million iteration lines and more; a device or a binary file stops there */
  int rc0 = pf_read_file(path, (size_t)256 << 20, &buf, &len);
  if (rc0 < 0) return rc0;
  int rc = pf_megatron_parse(buf, len, path, out);
  free(buf);
  return rc;
}
