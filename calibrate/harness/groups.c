/* groups.c - the measurement groups of a calibration run (harness.c).
 *
 * Following the kernel list of shared/research/energy-and-calibration.md
 * section 4.1: launch overhead, memory streams (BabelStream's
 * read/write/copy/triad), vector FMA peak per precision (peakperf/mixbench
 * style register-only chains), tensor instruction ceilings per precision,
 * host<->device and device<->device copies with an alpha-beta fit per link
 * (nvbandwidth/p2pBandwidthLatencyTest style), and the idle power states
 * (idle, context) of full mode; each measurement follows the protocol of
 * stats.c and reads power and clock around it.  (The power model's operating
 * points: powerfit.c; the library GEMM table: gemm.c.)
 */
#include "harness_int.h"

#include "core/core.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

static void sleep_s(double s) {
  struct timespec ts;
  ts.tv_sec = (time_t)s;
  ts.tv_nsec = (long)((s - (double)ts.tv_sec) * 1e9);
  while (nanosleep(&ts, &ts) != 0) {
  }
}

typedef struct sample_ctx {
  const pfcal_backend *be;
  int what;
  pf_precision p;
  int src, dst;
  size_t bytes;
} sample_ctx;

static int s_launch(void *c, double *v) { return ((sample_ctx *)c)->be->launch(v); }
static int s_stream(void *c, double *v) {
  sample_ctx *x = c;
  return x->be->stream((pfcal_stream)x->what, v);
}
static int s_vector(void *c, double *v) {
  sample_ctx *x = c;
  return x->be->vector_fma(x->p, v);
}
static int s_tensor(void *c, double *v) {
  sample_ctx *x = c;
  return x->be->tensor(x->p, v);
}
static int s_copy(void *c, double *v) {
  sample_ctx *x = c;
  return x->be->copy(x->src, x->dst, x->bytes, v);
}

static void progress(const run *r, const char *what, const pfcal_stat *st) {
  pf_progress_item();
  if (!r->o->progress) return;
  pf_progress_pause();
  if (!st->measured) {
    fprintf(stderr, "calibrate: %-22s unsupported\n", what);
    return;
  }
  double v = st->median;
  const char *u = st->unit;
  char scaled[48];
  if (strcmp(u, "s") == 0)
    snprintf(scaled, sizeof scaled, "%.3g us", v * 1e6);
  else if (strcmp(u, "B/s") == 0)
    snprintf(scaled, sizeof scaled, "%.4g GB/s", v * 1e-9);
  else
    snprintf(scaled, sizeof scaled, "%.4g GFLOP/s", v * 1e-9);
  fprintf(stderr, "calibrate: %-22s %-16s cv %5.2f%%  n=%-3d %s\n", what, scaled, 100.0 * st->cv, st->n, st->flag);
}

/* Measure with the protocol and read power and clock around it. Returns 0,
 * or the back-end's error except PF_EINVAL (unsupported: st->measured false). */
static int measure(run *r, const char *what, pfcal_sample_fn fn, sample_ctx *c, pfcal_stat *st) {
  double e0 = 0, e1 = 0;
  int have_e = r->pw && pfcal_power_energy_J(r->pw, r->o->device, &e0) == 0;
  double t0 = pfcal_now_s();
  int rc = pfcal_measure(&r->pr, fn, c, st);
  double t1 = pfcal_now_s();
  if (rc == PF_EINVAL) {
    pf_error_clear();
    st->n = 0;
    pfcal_stat_finish(st, 1.0);
    cJSON_AddItemToArray(r->unsupported, cJSON_CreateString(what));
    progress(r, what, st);
    return 0;
  }
  if (rc) return rc;
  /* Power of the measurement itself only from the energy counter over at
   * least a second: NVML's power reading is a one-second average on H100-class
   * parts and the counter ticks every 20-100 ms, so a shorter window reports
   * whatever ran before (the four streams of data/h100-calibrate/ all read
   * 128.857 W that way).  The power model has its own long windows. */
  st->power_W = 0;
  if (have_e && pfcal_power_energy_J(r->pw, r->o->device, &e1) == 0 && t1 - t0 >= 1.0 && e1 > e0)
    st->power_W = pfcal_per_device_W((e1 - e0) / (t1 - t0), r->package_idle_W, r->share);
  double mhz;
  st->clock_MHz = (r->pw && pfcal_power_clock_MHz(r->pw, r->o->device, &mhz) == 0) ? mhz : 0;
  progress(r, what, st);
  return 0;
}

static cJSON *stat_json(const pfcal_stat *st) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddNumberToObject(j, "median", st->median);
  cJSON_AddNumberToObject(j, "best", st->best);
  cJSON_AddNumberToObject(j, "cv", st->cv);
  cJSON_AddNumberToObject(j, "n", st->n);
  cJSON_AddStringToObject(j, "unit", st->unit);
  cJSON_AddStringToObject(j, "flag", st->flag);
  if (st->datasheet > 0) {
    cJSON_AddNumberToObject(j, "datasheet", st->datasheet);
    cJSON_AddNumberToObject(j, "fraction_of_datasheet", st->median / st->datasheet);
  }
  if (st->power_W > 0) cJSON_AddNumberToObject(j, "power_W", st->power_W);
  if (st->clock_MHz > 0) cJSON_AddNumberToObject(j, "clock_MHz", st->clock_MHz);
  cJSON *s = cJSON_AddArrayToObject(j, "samples");
  for (int i = 0; i < st->n; i++)
    cJSON_AddItemToArray(s, cJSON_CreateNumber(st->samples[i]));
  return j;
}

static pfcal_stat new_stat(const char *unit, bool lower, double datasheet) {
  pfcal_stat st;
  memset(&st, 0, sizeof st);
  st.unit = unit;
  st.lower_is_better = lower;
  st.datasheet = datasheet;
  st.flag = "unsupported";
  return st;
}

/* Mean power over `seconds` of idle (no work submitted), from the energy
 * counter, else from power readings every 100 ms. 0 when not readable. */
/* One "sample" of idle: 100 ms with nothing submitted (the metered window's sampling period). */
static int idle_sample(void *ctx, double *v) {
  (void)ctx;
  sleep_s(0.1);
  *v = 0;
  return 0;
}

double pfcal_idle_power(run *r, double seconds) {
  double w, v;
  return pfcal_power_window(r->pw, r->o->device, idle_sample, NULL, 0.0, seconds, &w, &v) == 0 ? w : 0;
}

/* ---- the measurement groups -------------------------------------------- */

int pfcal_group_launch(run *r, cJSON *results) {
  if (!r->be->launch || r->o->skip_launch) return 0;
  sample_ctx c = {.be = r->be};
  pfcal_stat st = new_stat("s", true, 0);
  int rc = measure(r, "launch_latency", s_launch, &c, &st);
  if (rc) return rc;
  if (st.measured) cJSON_AddItemToObject(results, "launch_latency_s", stat_json(&st));
  return 0;
}

int pfcal_group_streams(run *r, cJSON *results) {
  if (!r->be->stream || r->o->skip_stream) return 0;
  cJSON *mem = cJSON_AddObjectToObject(results, "memory_bw");
  double ds = r->ds ? r->ds->memory_bw_Bps : 0;
  for (int k = 0; k < PFCAL_NSTREAM; k++) {
    sample_ctx c = {.be = r->be, .what = k};
    pfcal_stat st = new_stat("B/s", false, ds);
    char what[64];
    snprintf(what, sizeof what, "memory_bw.%s", pfcal_stream_name((pfcal_stream)k));
    int rc = measure(r, what, s_stream, &c, &st);
    if (rc) return rc;
    if (st.measured) cJSON_AddItemToObject(mem, pfcal_stream_name((pfcal_stream)k), stat_json(&st));
  }
  cJSON_AddNumberToObject(results, "stream_array_B", (double)r->info.array_B);
  return 0;
}

int pfcal_group_flops(run *r, cJSON *results, bool tensor) {
  if (tensor ? (!r->be->tensor || r->o->skip_tensor) : (!r->be->vector_fma || r->o->skip_vector)) return 0;
  static const pf_precision vec[] = {PF_FP64, PF_FP32, PF_FP16};
  static const pf_precision ten[] = {PF_FP64, PF_TF32, PF_FP32, PF_FP16, PF_BF16, PF_FP8};
  const pf_precision *list = tensor ? ten : vec;
  int n = tensor ? 6 : 3;
  cJSON *obj = cJSON_AddObjectToObject(results, tensor ? "tensor_flops" : "vector_flops");
  for (int i = 0; i < n; i++) {
    pf_precision p = list[i];
    double ds = r->ds ? (tensor ? r->ds->tensor_flops[p] : r->ds->vector_flops[p]) : 0;
    sample_ctx c = {.be = r->be, .p = p};
    pfcal_stat st = new_stat("FLOP/s", false, ds);
    char what[64];
    snprintf(what, sizeof what, "%s.%s", tensor ? "tensor_flops" : "vector_flops", pfcal_prec_name(p));
    int rc = measure(r, what, tensor ? s_tensor : s_vector, &c, &st);
    if (rc) return rc;
    if (st.measured) cJSON_AddItemToObject(obj, pfcal_prec_name(p), stat_json(&st));
  }
  return 0;
}

/* One link: times per size, alpha-beta fit, bandwidth at the largest size. */
static int run_link(run *r, int src, int dst, cJSON *arr, double *bw_out) {
  static const size_t quick_sizes[] = {64u << 10, 1u << 20, 16u << 20, 128u << 20};
  static const size_t full_sizes[] = {4u << 10,  32u << 10, 256u << 10, 2u << 20,
                                      16u << 20, 64u << 20, 256u << 20, 512u << 20};
  const size_t *sizes = r->o->quick ? quick_sizes : full_sizes;
  int ns = r->o->quick ? 4 : 8;
  pfcal_protocol pr = r->pr;
  pr.min_samples = 3;
  pr.max_samples = r->o->quick ? 10 : 30;
  pr.time_cap_s = r->o->quick ? 0.3 : 1.0;
  double bytes[PFCAL_MAX_SIZES], t[PFCAL_MAX_SIZES], cv[PFCAL_MAX_SIZES];
  int m = 0;
  for (int i = 0; i < ns; i++) {
    sample_ctx c = {.be = r->be, .src = src, .dst = dst, .bytes = sizes[i]};
    pfcal_stat st = new_stat("s", true, 0);
    int rc = pfcal_measure(&pr, s_copy, &c, &st);
    if (rc == PF_EINVAL) {
      pf_error_clear();
      pf_progress_item();
      return 0; /* no path between these two (no peer access) */
    }
    if (rc) return rc;
    bytes[m] = (double)sizes[i];
    t[m] = st.median;
    cv[m] = st.cv;
    m++;
  }
  pf_progress_item();
  double alpha = 0, beta = 0;
  if (pfcal_fit_alpha_beta(bytes, t, m, &alpha, &beta)) {
    pf_error_clear();
    alpha = 0;
    beta = bytes[m - 1] / t[m - 1];
  }
  double bw = bytes[m - 1] / t[m - 1];
  cJSON *j = cJSON_CreateObject();
  if (src < 0)
    cJSON_AddStringToObject(j, "from", "host");
  else
    cJSON_AddNumberToObject(j, "from", src);
  if (dst < 0)
    cJSON_AddStringToObject(j, "to", "host");
  else
    cJSON_AddNumberToObject(j, "to", dst);
  cJSON_AddNumberToObject(j, "alpha_s", alpha);
  cJSON_AddNumberToObject(j, "beta_Bps", beta);
  cJSON_AddNumberToObject(j, "bw_Bps", bw);
  cJSON_AddItemToObject(j, "sizes_B", cJSON_CreateDoubleArray(bytes, m));
  cJSON_AddItemToObject(j, "times_s", cJSON_CreateDoubleArray(t, m));
  cJSON_AddItemToObject(j, "cv", cJSON_CreateDoubleArray(cv, m));
  cJSON_AddItemToArray(arr, j);
  if (r->o->progress) {
    char a[16], b[16];
    snprintf(a, sizeof a, src < 0 ? "host" : "gpu%d", src);
    snprintf(b, sizeof b, dst < 0 ? "host" : "gpu%d", dst);
    fprintf(stderr, "calibrate: copy %s->%-12s %.4g GB/s  alpha %.3g us  beta %.4g GB/s\n", a, b, bw * 1e-9,
            alpha * 1e6, beta * 1e-9);
  }
  *bw_out = bw;
  return 0;
}

int pfcal_group_copies(run *r, cJSON *results) {
  if (!r->be->copy || r->o->skip_copies) return 0;
  int n = r->info.count < PFCAL_MAX_DEVICES ? r->info.count : PFCAL_MAX_DEVICES;
  cJSON *h2d = cJSON_AddArrayToObject(results, "h2d");
  cJSON *d2h = cJSON_AddArrayToObject(results, "d2h");
  cJSON *d2d = cJSON_AddArrayToObject(results, "d2d");
  double up[PFCAL_MAX_DEVICES], down[PFCAL_MAX_DEVICES];
  int nu = 0, nd = 0;
  for (int d = 0; d < n; d++) {
    double bw = 0;
    int rc = run_link(r, -1, d, h2d, &bw);
    if (rc) return rc;
    if (bw > 0) up[nu++] = bw;
    bw = 0;
    rc = run_link(r, d, -1, d2h, &bw);
    if (rc) return rc;
    if (bw > 0) down[nd++] = bw;
  }
  for (int s = 0; s < n; s++)
    for (int d = 0; d < n; d++) {
      if (s == d) continue;
      double bw = 0;
      int rc = run_link(r, s, d, d2d, &bw);
      if (rc) return rc;
    }
  if (nu) cJSON_AddNumberToObject(results, "h2d_Bps", pfcal_median(up, nu));
  if (nd) cJSON_AddNumberToObject(results, "d2h_Bps", pfcal_median(down, nd));
  return 0;
}

/* How many measurements pfcal_run makes, for the progress bar. */
long pfcal_count_items(const run *r, bool fit_power) {
  const pfcal_opts *o = r->o;
  long n = 0, d = r->info.count < PFCAL_MAX_DEVICES ? r->info.count : PFCAL_MAX_DEVICES;
  if (r->be->launch && !o->skip_launch) n += 1;
  if (r->be->stream && !o->skip_stream) n += PFCAL_NSTREAM;
  if (r->be->vector_fma && !o->skip_vector) n += 3;
  if (r->be->tensor && !o->skip_tensor) n += 6;
  if (r->be->copy && !o->skip_copies) n += 2 * d + d * (d - 1);
  if (fit_power) n += 3;
  return n;
}
