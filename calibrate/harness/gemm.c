/* gemm.c - the achievable-GEMM table of research notes 4.1 row 6: the vendor
 * library's matrix products (cuBLASLt on NVIDIA, rocBLAS on AMD, opened by the
 * back-end at run time) timed over the shapes a training step issues, with the
 * harness's protocol (warm-up, repeat to a small cv, median).  The simulator
 * reads the rows as a GEMM table (model/compute/gemm.c) and takes the best row per
 * precision as the library ceiling, the large-GEMM efficiency that MAMF
 * (stas00/ml-engineering) measures the same way.
 *
 * Shapes: the scenario's own (`preflight calibrate --for SCENARIO.cfg` writes
 * them to a file the back-end reads), or a standard grid of Megatron-style
 * layers (QKV, proj, fc1, fc2 and the fused QKV of GQA models are all of the
 * form tokens x (c h) x h or tokens x h x (c h)) over hidden 1024-8192 and
 * 2k-32k tokens, plus squares 1024-16384 that bound the ceiling.
 */
#include "pfcal.h"

#include "core/core.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *const layouts[] = {"NN", "NT", "TN"};

static int add(pfcal_gemm_shape *out, int n, int max, double m, double nn, double k, const char *lay, pf_precision p) {
  if (n >= max) return n;
  out[n] = (pfcal_gemm_shape){.m = m, .n = nn, .k = k, .prec = p};
  snprintf(out[n].layout, sizeof out[n].layout, "%s", lay);
  return n + 1;
}

int pfcal_gemm_grid(bool quick, const pf_precision *precs, int np, pfcal_gemm_shape *out, int max) {
  static const double hidden_full[] = {1024, 2048, 4096, 8192}, hidden_quick[] = {1024, 4096, 8192};
  static const double tokens_full[] = {2048, 8192, 32768}, tokens_quick[] = {4096, 16384};
  /* (n, k) per hidden h: QKV (3h x h), proj (h x h), fc1 (4h x h), fc2 (h x 4h) */
  static const double nk[][2] = {{3, 1}, {1, 1}, {4, 1}, {1, 4}};
  const double *hs = quick ? hidden_quick : hidden_full, *ts = quick ? tokens_quick : tokens_full;
  int nh = quick ? 3 : 4, nt = quick ? 2 : 3, nl = quick ? 1 : 3, n = 0;
  for (int q = 0; q < np; q++) {
    pf_precision p = precs[q];
    for (double sq = 1024; sq <= 16384; sq *= 2) n = add(out, n, max, sq, sq, sq, "NN", p);
    if (p != PF_BF16 && p != PF_FP8) continue; /* fp16 runs at the bf16 rate; tf32/fp64: ceiling only */
    for (int h = 0; h < nh; h++)
      for (int t = 0; t < nt; t++)
        for (int j = 0; j < 4; j++)
          for (int l = 0; l < nl; l++) {
            double T = ts[t], N = nk[j][0] * hs[h], K = nk[j][1] * hs[h];
            /* NN: tokens x N x K; NT (data gradient): tokens x K x N; TN (weight gradient): K x N x tokens */
            if (l == 0) n = add(out, n, max, T, N, K, layouts[0], p);
            else if (l == 1) n = add(out, n, max, T, K, N, layouts[1], p);
            else n = add(out, n, max, K, N, T, layouts[2], p);
          }
  }
  return n;
}

static char *trim(char *s) {
  while (isspace((unsigned char)*s)) s++;
  char *e = s + strlen(s);
  while (e > s && isspace((unsigned char)e[-1])) *--e = '\0';
  return s;
}

int pfcal_gemm_read_shapes(const char *path, pfcal_gemm_shape **out, int *n) {
  *out = NULL;
  *n = 0;
  FILE *f = fopen(path, "r");
  if (!f) return pf_error_set(PF_EIO, "--gemm-shapes %s: cannot open", path);
  int cap = 0, line = 0, rc = 0;
  char buf[512];
  pfcal_gemm_shape *v = NULL;
  while (fgets(buf, sizeof buf, f)) {
    line++;
    char *s = trim(buf);
    if (!*s || *s == '#' || strncmp(s, "m,", 2) == 0) continue;
    char *fld[5];
    int k = 0;
    for (char *tok = s; k < 5 && tok; k++) {
      fld[k] = tok;
      char *c = strchr(tok, ',');
      if (c) *c++ = '\0';
      tok = c;
    }
    pfcal_gemm_shape x = {0};
    char *end;
    double d[3] = {0};
    bool ok = k == 5;
    for (int i = 0; ok && i < 3; i++) {
      d[i] = strtod(trim(fld[i]), &end);
      ok = *end == '\0' && d[i] >= 1 && d[i] <= 1e7;
    }
    const char *lay = ok ? trim(fld[3]) : "";
    ok = ok && (strcmp(lay, "NN") == 0 || strcmp(lay, "NT") == 0 || strcmp(lay, "TN") == 0);
    const char *dt = ok ? trim(fld[4]) : "";
    int p = -1;
    for (int i = 0; ok && i < PF_NPREC; i++)
      if (strcmp(dt, pfcal_prec_name((pf_precision)i)) == 0) p = i;
    if (!ok || p < 0) {
      rc = pf_error_set(PF_EINVAL, "%s:%d: expected m,n,k,layout,dtype (layout NN, NT or TN; dtype fp64, fp32, tf32, "
                                   "fp16, bf16 or fp8)",
                        path, line);
      break;
    }
    x.m = d[0];
    x.n = d[1];
    x.k = d[2];
    snprintf(x.layout, sizeof x.layout, "%s", lay);
    x.prec = (pf_precision)p;
    if (*n == cap) {
      cap = cap ? 2 * cap : 64;
      pfcal_gemm_shape *g = realloc(v, (size_t)cap * sizeof *g);
      if (!g) {
        rc = pf_error_set(PF_ENOMEM, "out of memory");
        break;
      }
      v = g;
    }
    v[(*n)++] = x;
  }
  fclose(f);
  if (rc) {
    free(v);
    *n = 0;
    return rc;
  }
  if (*n == 0) return pf_error_set(PF_EINVAL, "--gemm-shapes %s: no shapes", path);
  *out = v;
  return 0;
}

typedef struct gemm_ctx {
  const pfcal_backend *be;
  const pfcal_gemm_shape *s;
} gemm_ctx;

static int s_gemm(void *c, double *v) {
  gemm_ctx *x = c;
  return x->be->gemm(x->s, v);
}

int pfcal_run_gemm(const pfcal_backend *be, const pfcal_opts *o, const pfcal_protocol *pr, cJSON *results,
                   cJSON *unsupported) {
  if (!be->gemm_open || !be->gemm)
    return pf_error_set(PF_EINVAL, "--gemm: the %s back-end has no vendor GEMM library (use --backend cuda or hip)",
                        be->name);
  char lib[128] = "";
  int rc = be->gemm_open(lib, sizeof lib);
  if (rc) return rc;
  pfcal_gemm_shape *shapes = NULL;
  int n = 0;
  if (o->gemm_shapes) {
    if ((rc = pfcal_gemm_read_shapes(o->gemm_shapes, &shapes, &n))) return rc;
  } else {
    static const pf_precision precs[] = {PF_BF16, PF_FP8, PF_FP16, PF_TF32};
    shapes = calloc(1024, sizeof *shapes);
    if (!shapes) return pf_error_set(PF_ENOMEM, "out of memory");
    n = pfcal_gemm_grid(o->quick, precs, 4, shapes, 1024);
  }
  /* fewer samples than the streams: a GEMM's time is stable, and there are hundreds */
  pfcal_protocol gp = *pr;
  if (gp.max_samples > 20) gp.max_samples = 20;
  if (gp.time_cap_s > 0.5) gp.time_cap_s = 0.5;
  cJSON *g = cJSON_AddObjectToObject(results, "gemm");
  cJSON_AddStringToObject(g, "library", lib);
  cJSON_AddStringToObject(g, "timing",
                          "kernel only: calls back to back between two events, per-call median; no host dispatch");
  cJSON_AddNumberToObject(g, "overhead_s", 0);
  cJSON *rows = cJSON_AddArrayToObject(g, "rows");
  double best[PF_NPREC] = {0};
  int done = 0, skipped = 0;
  for (int i = 0; i < n && !rc; i++) {
    const pfcal_gemm_shape *s = &shapes[i];
    gemm_ctx c = {be, s};
    pfcal_stat st;
    memset(&st, 0, sizeof st);
    st.unit = "s";
    st.lower_is_better = true;
    rc = pfcal_measure(&gp, s_gemm, &c, &st);
    if (rc == PF_EINVAL) { /* this type or shape is not supported here */
      pf_error_clear();
      rc = 0;
      char what[96];
      snprintf(what, sizeof what, "gemm.%s.%.0fx%.0fx%.0f.%s", pfcal_prec_name(s->prec), s->m, s->n, s->k, s->layout);
      cJSON_AddItemToArray(unsupported, cJSON_CreateString(what));
      skipped++;
      continue;
    }
    if (rc) break;
    double flops = 2.0 * s->m * s->n * s->k, rate = flops / st.median;
    cJSON *r = cJSON_CreateObject();
    cJSON_AddNumberToObject(r, "m", s->m);
    cJSON_AddNumberToObject(r, "n", s->n);
    cJSON_AddNumberToObject(r, "k", s->k);
    cJSON_AddStringToObject(r, "layout", s->layout);
    cJSON_AddStringToObject(r, "dtype", pfcal_prec_name(s->prec));
    cJSON_AddNumberToObject(r, "time_s", st.median);
    cJSON_AddNumberToObject(r, "tflops", rate / 1e12);
    cJSON_AddNumberToObject(r, "cv", st.cv);
    cJSON_AddNumberToObject(r, "samples", st.n); /* not "n": that key is the shape's n */
    cJSON_AddItemToArray(rows, r);
    if (rate > best[s->prec]) best[s->prec] = rate;
    done++;
    if (o->progress && (done % 25 == 0 || i == n - 1))
      fprintf(stderr, "calibrate: gemm %-16s %d of %d shapes timed\n", lib, done, n);
  }
  free(shapes);
  if (rc) return rc;
  cJSON *ceil_o = cJSON_AddObjectToObject(g, "ceiling_FLOPs");
  for (int p = 0; p < PF_NPREC; p++)
    if (best[p] > 0) cJSON_AddNumberToObject(ceil_o, pfcal_prec_name((pf_precision)p), best[p]);
  if (o->progress)
    fprintf(stderr, "calibrate: gemm: %d shapes timed, %d unsupported; bf16 ceiling %.0f TFLOP/s, fp8 %.0f\n", done,
            skipped, best[PF_BF16] / 1e12, best[PF_FP8] / 1e12);
  return 0;
}
