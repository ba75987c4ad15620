/* gemm.c - achieved GEMM rate: measured tables interpolated in log space over
 * a fallback curve (formulas and fit in gemm.h and docs/model.md).
 *
 * Tables are built once per (file or calibration, device) and kept in a
 * process-wide registry, so a device copied by value carries a pointer, no
 * lookup ever reads a file, and interpolated residuals are memoised per table
 * (tune and sweep ask for the same few shapes thousands of times).
 */
#include "gemmtab.h"

#include "core/core.h"
#include "io/io.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define KNN 8
/* residuals fade with exp(-(d/FADE_LN)^2), d the log-distance to the nearest row; KNN and FADE_LN chosen by
 * leave-one-hidden-size-out cross-validation on the shipped rows (docs/model.md) */
#define FADE_LN 0.3
#define MEMO_SLOTS 4096  /* power of two */
#define SPLITK_MIN_K 32.0 /* one k step of a CUTLASS/cuBLAS tile (BK = 32 for 16-bit types) */

static const char *layout_names[] = {"NN", "NT", "TN"};

const char *pf_gemm_layout_name(pf_gemm_layout l) { return l >= 0 && l <= PF_GEMM_TN ? layout_names[l] : "?"; }

int pf_gemm_layout_parse(const char *s, pf_gemm_layout *out) {
  for (int i = 0; i <= PF_GEMM_TN; i++)
    if (s && strlen(s) == 2 && toupper((unsigned char)s[0]) == layout_names[i][0] &&
        toupper((unsigned char)s[1]) == layout_names[i][1]) {
      *out = (pf_gemm_layout)i;
      return 0;
    }
  return pf_error_set(PF_EINVAL, "unknown GEMM layout \"%s\"; valid: NN, NT, TN", s ? s : "");
}

pf_precision pf_gemm_class(pf_precision p) { return p == PF_FP16 ? PF_BF16 : p; }

double pf_gemm_top(const pf_device *d, pf_precision p) {
  if (p == PF_FP8 && d->gemm_eff_fp8 > 0) return d->gemm_eff_fp8;
  return d->gemm_eff;
}

/* ---- the curve ---- */

double pf_gemm_shape(int units, double k_half, pf_precision p, double m, double n, double k, double batch) {
  static const double tiles[][2] = {{128, 256}, {256, 128}, {128, 128}, {64, 128}, {128, 64}};
  if (!(m > 0 && n > 0 && k > 0)) return 0.0;
  if (!(batch > 0)) batch = 1.0;
  double kh = (k_half > 0 ? k_half : PF_GEMM_K_HALF) * (p == PF_FP8 ? 2.0 : 1.0);
  double best = 0.0;
  for (size_t i = 0; i < sizeof tiles / sizeof tiles[0]; i++) {
    double tm = tiles[i][0], tn = tiles[i][1];
    double t = ceil(m / tm) * ceil(n / tn) * batch;
    /* split-K: fewer output tiles than SMs split the reduction into s slices of k/s (cuBLAS and CUTLASS
     * split-K / stream-K), up to one full wave and slices of one BK = 32 step; the k term prices each
     * slice's shorter loop against its prologue/epilogue */
    double smax = units > 0 && t < units ? fmin(floor(units / t), floor(k / SPLITK_MIN_K)) : 1.0;
    for (double sp = 1.0; sp <= fmax(smax, 1.0); sp += 1.0) {
      double slots = units > 0 ? ceil(t * sp / units) * units : t * sp; /* waves x SMs */
      double kc = k / sp;
      double u = m * n * batch * sp / (slots * tm * tn) * kc / (kc + kh);
      if (u > best) best = u;
    }
  }
  return best;
}

/* ---- memo: interpolated residuals by shape ---- */

typedef struct pf_gemm_memo {
  struct { double m, n, k; int key; double r; bool used; } slot[MEMO_SLOTS];
} pf_gemm_memo;

static uint64_t mix(uint64_t h, double v) {
  uint64_t b;
  memcpy(&b, &v, sizeof b);
  h ^= b + 0x9E3779B97F4A7C15ull + (h << 6) + (h >> 2);
  return h;
}

/* splitmix64's finalizer: every input bit reaches the low bits the slot is taken from.  Without it the slot
 * was the low 16 bits of mix(), which for whole-number dimensions (a double's low mantissa bits all zero) were
 * one value: every shape fell in one slot and the memo missed nearly always (DeepSeek-V3 at TP 2, PP 8 on 1,024
 * JUPITER Booster nodes: 1.5 million interpolations of 64 distinct shapes in one tune). */
static uint64_t finish(uint64_t h) {
  h ^= h >> 30;
  h *= 0xBF58476D1CE4E5B9ull;
  h ^= h >> 27;
  h *= 0x94D049BB133111EBull;
  return h ^ (h >> 31);
}

/* ---- table ---- */

static void fit_classes(pf_gemm_table *t, double *ratio, const double ref_eff[PF_NPREC]);

void pf_gemm_table_free(pf_gemm_table *t) {
  if (!t) return;
  free(t->row);
  free(t->corr);
  free(t->memo);
  free(t);
}

int pf_gemm_table_build(const char *name, const pf_gemm_sample *s, int n, const double overhead_s[PF_NPREC],
                        const double peak[PF_NPREC], int units, double k_half, const double ref_eff[PF_NPREC],
                        pf_gemm_table **out) {
  *out = NULL;
  if (n <= 0) return pf_error_set(PF_EINVAL, "%s: GEMM table has no rows", name);
  pf_gemm_table *t = calloc(1, sizeof *t);
  double *ratio = malloc((size_t)n * sizeof *ratio);
  if (!t || !ratio || !(t->row = calloc((size_t)n, sizeof *t->row)) || !(t->memo = calloc(1, sizeof *t->memo))) {
    free(ratio);
    pf_gemm_table_free(t);
    return pf_error_set(PF_ENOMEM, "out of memory");
  }
  snprintf(t->name, sizeof t->name, "%s", name);
  t->n = n;
  t->units = units;
  t->k_half = k_half;
  memcpy(t->overhead_s, overhead_s, sizeof t->overhead_s);
  for (int i = 0; i < n; i++) {
    const pf_gemm_sample *x = &s[i];
    pf_precision c = pf_gemm_class(x->prec);
    double pk = peak[x->prec] > 0 ? peak[x->prec] : peak[c];
    if (!(x->m >= 1 && x->n >= 1 && x->k >= 1 && x->time_s > 0 && isfinite(x->time_s))) {
      pf_gemm_table_free(t);
      free(ratio);
      return pf_error_set(PF_EINVAL, "%s: row %d: shape and time must be positive", name, i + 1);
    }
    if (!(pk > 0)) {
      pf_gemm_table_free(t);
      free(ratio);
      return pf_error_set(PF_EINVAL, "%s: row %d: the device has no %s peak", name, i + 1,
                          pf_precision_name(x->prec));
    }
    double flops = 2.0 * x->m * x->n * x->k;
    double body = x->time_s - overhead_s[c];
    if (body < flops / pk) body = flops / pk; /* never above the dense peak */
    pf_gemm_row *r = &t->row[i];
    r->m = x->m;
    r->n = x->n;
    r->k = x->k;
    r->lm = log(x->m);
    r->ln = log(x->n);
    r->lk = log(x->k);
    r->layout = x->layout;
    r->prec = c;
    r->eff = flops / (pk * body);
  }
  fit_classes(t, ratio, ref_eff);
  free(ratio);
  *out = t;
  return 0;
}

/* Per class: top = median of eff / shape, residual = ln(eff / (top shape)); ref_eff[c] (0: the class's best
 * row).  ratio: scratch of t->n doubles. */
static void fit_classes(pf_gemm_table *t, double *ratio, const double ref_eff[PF_NPREC]) {
  int n = t->n, units = t->units;
  double kh = t->k_half;
  for (int c = 0; c < PF_NPREC; c++) {
    int m = 0;
    double best = 0;
    for (int i = 0; i < n; i++) {
      pf_gemm_row *r = &t->row[i];
      if (r->prec != (pf_precision)c) continue;
      ratio[m++] = r->eff / pf_gemm_shape(units, kh, r->prec, r->m, r->n, r->k, 1);
      if (r->eff > best) best = r->eff;
    }
    if (m == 0) continue;
    t->top[c] = pf_median(ratio, m);
    t->ref_eff[c] = ref_eff && ref_eff[c] > 0 ? ref_eff[c] : best;
    for (int i = 0; i < n; i++) {
      pf_gemm_row *r = &t->row[i];
      if (r->prec != (pf_precision)c) continue;
      r->r = log(r->eff / (t->top[c] * pf_gemm_shape(units, kh, r->prec, r->m, r->n, r->k, 1)));
    }
  }
}

/* Inverse squared log-distance mean of val[i] over the KNN rows of class c and layout l nearest to
 * (lm, ln, lk) (all layouts when there is none of l); *d2 the squared distance to the nearest.  0 and
 * *d2 = inf without rows of c. */
static double knn_mean(const pf_gemm_row *row, const double *val, int n, pf_precision c, pf_gemm_layout l,
                       double qm, double qn, double qk, double *d2min) {
  double bd[KNN], br[KNN];
  int nb = 0;
  for (int pass = 0; pass < 2 && nb == 0; pass++)
    for (int i = 0; i < n; i++) {
      const pf_gemm_row *r = &row[i];
      if (r->prec != c || (pass == 0 && r->layout != l)) continue;
      double dm = r->lm - qm, dn = r->ln - qn, dk = r->lk - qk;
      double d2 = dm * dm + dn * dn + dk * dk;
      if (nb == KNN && d2 >= bd[KNN - 1]) continue;
      int j = nb < KNN ? nb++ : KNN - 1;
      while (j > 0 && bd[j - 1] > d2) {
        bd[j] = bd[j - 1];
        br[j] = br[j - 1];
        j--;
      }
      bd[j] = d2;
      br[j] = val ? val[i] : r->r;
    }
  *d2min = nb ? bd[0] : INFINITY;
  if (nb == 0) return 0.0;
  double sw = 0, swr = 0;
  for (int j = 0; j < nb; j++) {
    double w = 1.0 / (bd[j] + 1e-4);
    sw += w;
    swr += w * br[j];
  }
  return swr / sw;
}

/* Interpolated residual of class c, layout l at (m, n, k), faded by the distance to the nearest row. */
static double residual(const pf_gemm_table *t, pf_precision c, pf_gemm_layout l, double m, double n, double k) {
  double d2;
  double r = knn_mean(t->row, NULL, t->n, c, l, log(m), log(n), log(k), &d2);
  return isfinite(d2) ? r * exp(-d2 / (FADE_LN * FADE_LN)) : 0.0;
}

int pf_gemm_table_corrected(const char *name, const pf_gemm_table *base, const pf_gemm_table *meas,
                            const double *meas_ratio, pf_gemm_table **out) {
  *out = NULL;
  int n = base->n, nc = 0;
  for (int j = 0; j < meas->n; j++) {
    if (base->top[meas->row[j].prec] > 0)
      nc++;
    else
      n++; /* a class the base lacks: the measured rows join as rows */
  }
  pf_gemm_table *t = calloc(1, sizeof *t);
  double *lr = malloc((size_t)(meas->n + n + 1) * sizeof *lr);
  if (!t || !lr || !(t->row = calloc((size_t)n, sizeof *t->row)) || !(t->memo = calloc(1, sizeof *t->memo)) ||
      !(t->corr = calloc((size_t)nc + 1, sizeof *t->corr))) {
    free(lr);
    pf_gemm_table_free(t);
    return pf_error_set(PF_ENOMEM, "out of memory");
  }
  snprintf(t->name, sizeof t->name, "%s", name);
  t->units = base->units;
  t->k_half = base->k_half;
  memcpy(t->overhead_s, base->overhead_s, sizeof t->overhead_s);
  double ref[PF_NPREC];
  for (int c = 0; c < PF_NPREC; c++) {
    ref[c] = base->top[c] > 0 ? base->ref_eff[c] : meas->ref_eff[c];
    int m = 0; /* far from every measured shape the class moves by its median measured ratio */
    for (int j = 0; j < meas->n; j++)
      if (meas->row[j].prec == (pf_precision)c && base->top[c] > 0) lr[m++] = log(meas_ratio[j]);
    t->corr_med[c] = m ? pf_median(lr, m) : 0.0;
  }
  for (int i = 0; i < base->n; i++) t->row[t->n++] = base->row[i];
  for (int j = 0; j < meas->n; j++) {
    pf_gemm_row r = meas->row[j];
    if (base->top[r.prec] > 0) {
      r.r = log(meas_ratio[j]);
      t->corr[t->ncorr++] = r;
    } else {
      t->row[t->n++] = r;
    }
  }
  fit_classes(t, lr, ref);
  free(lr);
  *out = t;
  return 0;
}

double pf_gemm_table_measured(const pf_gemm_table *t, pf_precision p, pf_gemm_layout l, double m, double n,
                              double k) {
  pf_precision c = pf_gemm_class(p);
  double s = 0;
  int hits = 0;
  for (int i = 0; t && i < t->n; i++) {
    const pf_gemm_row *r = &t->row[i];
    if (r->prec == c && r->layout == l && r->m == m && r->n == n && r->k == k) {
      s += log(r->eff);
      hits++;
    }
  }
  return hits ? exp(s / hits) : 0.0;
}

/* The measured correction of a corrected table at (m, n, k): the nearest measured log ratios, fading with
 * distance to the class's median (0 for a class without corrections). */
static double correction(const pf_gemm_table *t, pf_precision c, pf_gemm_layout l, double m, double n, double k) {
  if (t->ncorr == 0) return 0.0;
  double d2, loc = knn_mean(t->corr, NULL, t->ncorr, c, l, log(m), log(n), log(k), &d2);
  return isfinite(d2) ? t->corr_med[c] + (loc - t->corr_med[c]) * exp(-d2 / (FADE_LN * FADE_LN)) : 0.0;
}

static double residual_memo(const pf_gemm_table *t, pf_precision c, pf_gemm_layout l, double m, double n, double k) {
  int key = (int)c * 4 + (int)l;
  uint64_t h = finish(mix(mix(mix((uint64_t)key, m), n), k));
  pf_gemm_memo *mm = t->memo;
  size_t i = (size_t)(h & (MEMO_SLOTS - 1));
  if (mm->slot[i].used && mm->slot[i].key == key && mm->slot[i].m == m && mm->slot[i].n == n && mm->slot[i].k == k)
    return mm->slot[i].r;
  double r = residual(t, c, l, m, n, k) + correction(t, c, l, m, n, k);
  mm->slot[i].used = true;
  mm->slot[i].key = key;
  mm->slot[i].m = m;
  mm->slot[i].n = n;
  mm->slot[i].k = k;
  mm->slot[i].r = r;
  return r;
}

double pf_gemm_eff_batched(const pf_device *d, pf_precision p, pf_gemm_layout layout, double m, double n, double k,
                           double batch) {
  pf_precision c = pf_gemm_class(p);
  /* on the FMA units (fp32/fp64 without matrix units) the math runs at a fraction r of the tensor rate, so
   * the k-loop's fixed prologue and epilogue weigh r times less: the curve's k ramp shrinks by r */
  double r = d->peak_flops[PF_BF16] > 0 && (p == PF_FP32 || p == PF_FP64) ? pf_device_peak(d, p) / d->peak_flops[PF_BF16]
                                                                          : 1.0;
  double shape = pf_gemm_shape(d->units, d->gemm_half_dim, p, m, n, r > 0 && r < 1 ? k / r : k, batch);
  double top = pf_gemm_top(d, p), eff;
  const pf_gemm_table *t = d->gemm_table;
  if (t && t->top[c] > 0 && t->ref_eff[c] > 0)
    eff = t->top[c] * (top / t->ref_eff[c]) * shape * exp(residual_memo(t, c, layout, m, n, k));
  else
    eff = top * PF_GEMM_SHAPE_TOP * shape;
  double cap = d->gemm_ceiling[c] > 0 ? d->gemm_ceiling[c] : 1.0; /* a measured peak kernel (calapply.c) */
  return eff < cap ? eff : cap;
}

/* ---- CSV samples ---- */

static int col_of(const pf_csv_row *h, const char *name) {
  for (int i = 0; i < h->nfields; i++)
    if (strcmp(h->fields[i], name) == 0) return i;
  return -1;
}

static int num_field(const char *path, int line, const char *col, const char *s, double *v) {
  char *end;
  *v = strtod(s, &end);
  if (end == s || *end != '\0' || !isfinite(*v) || *v <= 0)
    return pf_error_set(PF_EPARSE, "%s:%d: %s: expected a positive number, got \"%s\"", path, line, col, s);
  char where[PF_PATH_MAX + 64];
  snprintf(where, sizeof where, "%s:%d: %s", path, line, col);
  /* a timing within the time bound (core/bounds.c); a dimension at most 2^31 (a GEMM's int size) */
  if (strcmp(col, "time_s") == 0) return pf_plaus_check(pf_plaus_get(PF_PLAUS_TIME), *v, where);
  if (*v > 2147483647.0)
    return pf_error_set(PF_EPARSE, "%s: %s is more than 2147483647 (a GEMM dimension is an int)", where, s);
  return 0;
}

int pf_gemm_samples_read(const char *path, pf_gemm_sample **s, int *n) {
  *s = NULL;
  *n = 0;
  pf_csv csv;
  int rc = pf_csv_read(path, &csv);
  if (rc < 0) return rc;
  static const char *need[] = {"m", "n", "k", "layout", "dtype", "time_s"};
  int col[6];
  if (csv.nrows < 2) {
    pf_csv_free(&csv);
    return pf_error_set(PF_EPARSE, "%s: no GEMM rows (header m,n,k,layout,dtype,time_s)", path);
  }
  for (int i = 0; i < 6; i++)
    if ((col[i] = col_of(&csv.rows[0], need[i])) < 0) {
      rc = pf_error_set(PF_EPARSE, "%s:%d: missing column \"%s\" (header m,n,k,layout,dtype,time_s)", path,
                        csv.rows[0].line, need[i]);
      pf_csv_free(&csv);
      return rc;
    }
  pf_gemm_sample *out = calloc((size_t)csv.nrows, sizeof *out);
  if (!out) {
    pf_csv_free(&csv);
    return pf_error_set(PF_ENOMEM, "out of memory");
  }
  int k = 0;
  for (int r = 1; r < csv.nrows && rc == 0; r++) {
    const pf_csv_row *row = &csv.rows[r];
    if (row->nfields != csv.rows[0].nfields) {
      rc = pf_error_set(PF_EPARSE, "%s:%d: %d fields, the header has %d", path, row->line, row->nfields,
                        csv.rows[0].nfields);
      break;
    }
    pf_gemm_sample *x = &out[k];
    if ((rc = num_field(path, row->line, "m", row->fields[col[0]], &x->m)) < 0 ||
        (rc = num_field(path, row->line, "n", row->fields[col[1]], &x->n)) < 0 ||
        (rc = num_field(path, row->line, "k", row->fields[col[2]], &x->k)) < 0 ||
        (rc = num_field(path, row->line, "time_s", row->fields[col[5]], &x->time_s)) < 0)
      break;
    if (pf_gemm_layout_parse(row->fields[col[3]], &x->layout) < 0) {
      rc = pf_error_set(PF_EPARSE, "%s:%d: layout: \"%s\" is not NN, NT or TN", path, row->line, row->fields[col[3]]);
      break;
    }
    if (pf_precision_parse(row->fields[col[4]], &x->prec) < 0) {
      rc = pf_error_set(PF_EPARSE, "%s:%d: dtype: \"%s\" is not one of fp64, fp32, tf32, fp16, bf16, fp8", path,
                        row->line, row->fields[col[4]]);
      break;
    }
    k++;
  }
  pf_csv_free(&csv);
  if (rc < 0) {
    free(out);
    return rc;
  }
  *s = out;
  *n = k;
  return 0;
}

/* ---- registry ---- */

typedef struct reg_entry {
  char *key;
  pf_gemm_table *t;
  struct reg_entry *next;
} reg_entry;
static reg_entry *registry;

const pf_gemm_table *pf_gemm_table_find(const char *key) {
  for (reg_entry *e = registry; e; e = e->next)
    if (strcmp(e->key, key) == 0) return e->t;
  return NULL;
}

const pf_gemm_table *pf_gemm_table_intern(const char *key, pf_gemm_table *t) {
  const pf_gemm_table *old = pf_gemm_table_find(key);
  if (old) {
    pf_gemm_table_free(t);
    return old;
  }
  reg_entry *e = malloc(sizeof *e);
  char *k = e ? strdup(key) : NULL;
  if (!e || !k) {
    free(e);
    pf_gemm_table_free(t);
    pf_error_set(PF_ENOMEM, "out of memory");
    return NULL;
  }
  e->key = k;
  e->t = t;
  e->next = registry;
  registry = e;
  return t;
}
