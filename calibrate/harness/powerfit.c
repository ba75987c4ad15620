/* powerfit.c - the device power model measured in one calibration run.
 *
 * The simulator prices a GPU's power from what its kernels do (issue 11,
 * docs/calibration.md section 5):
 *   P = context_W + tensor_W u_tensor + hbm_W u_hbm + vector_W u_vector
 * with u the achieved fraction of the datasheet peak of the tensor units, of
 * HBM bandwidth and of the vector units over the interval.  Calibration
 * measures the three coefficients at a few operating points whose
 * utilisations are known from their own achieved rates:
 *   gemm        the vendor library's large BF16 GEMM (8192^3): the full-load
 *               point.  A register-only mma loop does not reach the power of
 *               a real GEMM (412 W against ~700 W on the H100 of
 *               data/h100-calibrate/: no shared-memory or HBM traffic), so the
 *               maximum is taken from the library GEMM when one is present.
 *   gemm-thin   the library GEMM with k = 256 (8192 x 8192 x 256): lower tensor
 *               utilisation, several times the HBM traffic per FLOP - the mixed
 *               point that separates the tensor and HBM coefficients.
 *   triad       the triad stream: HBM only.
 *   vector      FP32 FMA chains: vector units only.
 *   mma         the register-only tensor kernel: recorded for comparison, left out
 *               of the fit (no data movement: it draws far less per FLOP).
 * Every point is a window of back-to-back launches, 2 s of warm-up then 5 s
 * metered by the energy counter (NVML's GetPowerUsage is a one-second average
 * on H100-class parts and the counter updates every 20-100 ms, research
 * energy-and-calibration.md 1.5, so a window of several seconds is needed; the
 * short timing measurements before carry no reliable power of their own).
 * The coefficients are the non-negative least-squares fit of P - context_W
 * over the points (all subsets of the three coefficients tried, the feasible
 * one with the least squared error kept).
 */
#include "pfcal.h"

#include "core/core.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <string.h>
#include <time.h>

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Solve the k x k system a x = b (k <= 3) by Gaussian elimination with partial
 * pivoting; 0, or -1 when singular. */
static int solve(int k, double a[3][3], double b[3], double x[3]) {
  for (int c = 0; c < k; c++) {
    int piv = c;
    for (int r = c + 1; r < k; r++)
      if (fabs(a[r][c]) > fabs(a[piv][c])) piv = r;
    if (fabs(a[piv][c]) < 1e-12) return -1;
    if (piv != c) {
      for (int j = 0; j < k; j++) {
        double t = a[c][j];
        a[c][j] = a[piv][j];
        a[piv][j] = t;
      }
      double t = b[c];
      b[c] = b[piv];
      b[piv] = t;
    }
    for (int r = c + 1; r < k; r++) {
      double f = a[r][c] / a[c][c];
      for (int j = c; j < k; j++) a[r][j] -= f * a[c][j];
      b[r] -= f * b[c];
    }
  }
  for (int r = k - 1; r >= 0; r--) {
    double s = b[r];
    for (int j = r + 1; j < k; j++) s -= a[r][j] * x[j];
    x[r] = s / a[r][r];
  }
  return 0;
}

static double util(const pfcal_power_point *p, int j) {
  return j == 0 ? p->u_tensor : j == 1 ? p->u_hbm : p->u_vector;
}

int pfcal_power_fit(const pfcal_power_point *pts, int n, double base_W, pfcal_power_coef *out) {
  memset(out, 0, sizeof *out);
  double best_sse = INFINITY, best[3] = {0};
  for (int mask = 1; mask < 8; mask++) {
    int idx[3], k = 0;
    for (int j = 0; j < 3; j++)
      if (mask & (1 << j)) idx[k++] = j;
    /* normal equations over the chosen coefficients */
    double a[3][3] = {{0}}, b[3] = {0}, x[3] = {0};
    for (int i = 0; i < n; i++) {
      double y = pts[i].power_W - base_W;
      for (int r = 0; r < k; r++) {
        b[r] += util(&pts[i], idx[r]) * y;
        for (int c = 0; c < k; c++) a[r][c] += util(&pts[i], idx[r]) * util(&pts[i], idx[c]);
      }
    }
    if (solve(k, a, b, x)) continue;
    bool ok = true;
    for (int r = 0; r < k; r++)
      if (!(x[r] >= 0) || !isfinite(x[r])) ok = false;
    if (!ok) continue;
    double full[3] = {0};
    for (int r = 0; r < k; r++) full[idx[r]] = x[r];
    double sse = 0;
    for (int i = 0; i < n; i++) {
      double e = base_W + full[0] * pts[i].u_tensor + full[1] * pts[i].u_hbm + full[2] * pts[i].u_vector -
                 pts[i].power_W;
      sse += e * e;
    }
    if (sse < best_sse - 1e-9) {
      best_sse = sse;
      memcpy(best, full, sizeof best);
    }
  }
  if (!isfinite(best_sse)) return pf_error_set(PF_EINVAL, "power fit: no non-negative solution over %d points", n);
  out->tensor_W = best[0];
  out->hbm_W = best[1];
  out->vector_W = best[2];
  double rel = 0;
  for (int i = 0; i < n; i++) {
    double pred = base_W + best[0] * pts[i].u_tensor + best[1] * pts[i].u_hbm + best[2] * pts[i].u_vector;
    double e = (pred - pts[i].power_W) / pts[i].power_W;
    rel += e * e;
  }
  out->rms_rel = n ? sqrt(rel / n) : 0;
  return 0;
}

int pfcal_power_window(pfcal_power *pw, int dev, pfcal_sample_fn fn, void *ctx, double warm, double seconds,
                       double *watts, double *mean_v) {
  double v, t = now_s();
  *watts = 0;
  *mean_v = 0;
  while (now_s() - t < warm) {
    int rc = fn(ctx, &v);
    if (rc) return rc;
  }
  double e0, e1, psum = 0, vsum = 0;
  int np = 0, nv = 0;
  bool energy = pfcal_power_energy_J(pw, dev, &e0) == 0;
  double t0 = now_s();
  while (now_s() - t0 < seconds) {
    int rc = fn(ctx, &v);
    if (rc) return rc;
    vsum += v;
    nv++;
    double w;
    if (!energy && pfcal_power_W(pw, dev, &w) == 0) {
      psum += w;
      np++;
    }
  }
  double t1 = now_s();
  if (energy && pfcal_power_energy_J(pw, dev, &e1) == 0 && e1 > e0) *watts = (e1 - e0) / (t1 - t0);
  else if (np) *watts = psum / np;
  *mean_v = nv ? vsum / nv : 0;
  return 0;
}

/* ---- the operating points ---------------------------------------------- */

typedef struct point_ctx {
  const pfcal_backend *be;
  pfcal_gemm_shape s;
  pfcal_stream stream;
  pf_precision p;
  int kind; /* 0 gemm, 1 stream, 2 vector, 3 tensor */
} point_ctx;

static int sample(void *c, double *v) {
  point_ctx *x = c;
  switch (x->kind) {
  case 0: return x->be->gemm(&x->s, v);
  case 1: return x->be->stream(x->stream, v);
  case 2: return x->be->vector_fma(x->p, v);
  default: return x->be->tensor(x->p, v);
  }
}

static cJSON *point_json(const pfcal_power_point *p) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "name", p->name);
  cJSON_AddNumberToObject(j, "power_W", p->power_W);
  cJSON_AddNumberToObject(j, "u_tensor", p->u_tensor);
  cJSON_AddNumberToObject(j, "u_hbm", p->u_hbm);
  cJSON_AddNumberToObject(j, "u_vector", p->u_vector);
  cJSON_AddNumberToObject(j, "rate", p->rate);
  cJSON_AddStringToObject(j, "rate_unit", p->rate_unit);
  cJSON_AddBoolToObject(j, "in_fit", p->in_fit);
  return j;
}

/* One operating point: kind and arguments, and how its achieved rate turns into utilisation. */
typedef struct point_spec {
  const char *name;
  point_ctx c;
  double tensor_peak, hbm_peak, vector_peak; /* the peak its rate is a share of (0: not that unit) */
  bool in_fit;
} point_spec;

/* Measure one point; 1 with *out filled, 0 when the back-end does not support it or no power was read. */
static int measure_point(pfcal_power *pw, int dev, point_spec *sp, pfcal_power_point *out, double pkg_idle_W,
                         int share) {
  double w, v;
  int rc = pfcal_power_window(pw, dev, sample, &sp->c, 2.0, 5.0, &w, &v);
  if (rc == PF_EINVAL) {
    pf_error_clear();
    return 0;
  }
  if (rc) return rc;
  w = pfcal_per_device_W(w, pkg_idle_W, share); /* one device's share where the reading is its package's */
  if (w <= 0 || (sp->c.kind == 0 && v <= 0)) return 0; /* a GEMM's rate is FLOPs over its time */
  *out = (pfcal_power_point){.name = sp->name, .power_W = w, .in_fit = sp->in_fit};
  if (sp->c.kind == 0) { /* a GEMM sample is seconds per call; its bf16 operands in and C out cross HBM once */
    const pfcal_gemm_shape *g = &sp->c.s;
    out->rate = 2.0 * g->m * g->n * g->k / v;
    out->u_tensor = out->rate / sp->tensor_peak;
    out->u_hbm = sp->hbm_peak > 0 ? 2.0 * (g->m * g->k + g->k * g->n + g->m * g->n) / v / sp->hbm_peak : 0;
  } else {
    out->rate = v;
    out->u_tensor = sp->tensor_peak > 0 ? v / sp->tensor_peak : 0;
    out->u_hbm = sp->hbm_peak > 0 ? v / sp->hbm_peak : 0;
    out->u_vector = sp->vector_peak > 0 ? v / sp->vector_peak : 0;
  }
  out->rate_unit = sp->c.kind == 1 ? "B/s" : "FLOP/s";
  out->in_fit = out->in_fit && out->u_tensor + out->u_hbm + out->u_vector > 0;
  return 1;
}

int pfcal_power_points(const pfcal_backend *be, pfcal_power *pw, int dev, const pfcal_datasheet *ds, bool have_gemm,
                       double context_W, double package_idle_W, struct cJSON *pm, double *max_W) {
  int share = pfcal_power_share(pw, dev);
  double tensor_peak = ds ? ds->tensor_flops[PF_BF16] : 0, hbm = ds ? ds->memory_bw_Bps : 0;
  double vec_peak = ds ? ds->vector_flops[PF_FP32] : 0;
  bool gemm = have_gemm && be->gemm && tensor_peak > 0;
  /* the register-only mma loop is recorded but not fitted: it moves no data through shared memory, L2 or HBM,
   * so it draws far less per FLOP than a real GEMM (385 W at 66 % of the bf16 peak on the H100 of
   * data/h100-calibrate, where library GEMMs near 80 % draw ~700 W) and would pull the tensor coefficient below
   * what training kernels draw.  Without a datasheet (cpu) the vector point still gives the maximum. */
  point_spec specs[] = {
      {"gemm", {.be = be, .kind = 0, .s = {.m = 8192, .n = 8192, .k = 8192, .layout = "NN", .prec = PF_BF16}},
       tensor_peak, hbm, 0, true},
      {"gemm-thin", {.be = be, .kind = 0, .s = {.m = 8192, .n = 8192, .k = 256, .layout = "NN", .prec = PF_BF16}},
       tensor_peak, hbm, 0, true},
      {"triad", {.be = be, .kind = 1, .stream = PFCAL_TRIAD}, 0, hbm, 0, true},
      {vec_peak > 0 ? "vector-fp32" : "vector-fp64", {.be = be, .kind = 2, .p = vec_peak > 0 ? PF_FP32 : PF_FP64}, 0,
       0, vec_peak, true},
      {"mma-bf16", {.be = be, .kind = 3, .p = PF_BF16}, tensor_peak, 0, 0, false},
  };
  bool run[] = {gemm, gemm, be->stream && hbm > 0, be->vector_fma != NULL, be->tensor && tensor_peak > 0};
  pfcal_power_point pts[5], fit[5];
  int n = 0, nf = 0;
  *max_W = 0;
  for (int i = 0; i < 5; i++) {
    if (!run[i]) continue;
    int rc = measure_point(pw, dev, &specs[i], &pts[n], package_idle_W, share);
    if (rc < 0) return rc;
    n += rc;
  }
  if (n == 0) return 0;
  cJSON *arr = cJSON_AddArrayToObject(pm, "points");
  for (int i = 0; i < n; i++) {
    cJSON_AddItemToArray(arr, point_json(&pts[i]));
    if (pts[i].power_W > *max_W) *max_W = pts[i].power_W;
    if (pts[i].in_fit) fit[nf++] = pts[i];
  }
  pfcal_power_coef co;
  if (nf >= 2 && pfcal_power_fit(fit, nf, context_W, &co) == 0) {
    cJSON *f = cJSON_AddObjectToObject(pm, "coefficients");
    cJSON_AddNumberToObject(f, "tensor_W", co.tensor_W);
    cJSON_AddNumberToObject(f, "hbm_W", co.hbm_W);
    cJSON_AddNumberToObject(f, "vector_W", co.vector_W);
    cJSON_AddNumberToObject(f, "rms_rel_error", co.rms_rel);
    cJSON_AddStringToObject(f, "model", "P = context_W + tensor_W u_tensor + hbm_W u_hbm + vector_W u_vector");
  }
  pf_error_clear();
  return 0;
}
