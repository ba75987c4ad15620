/* stats.c - the measurement protocol and its statistics.
 *
 * Protocol of shared/research/energy-and-calibration.md section 4.2 (the
 * synthesis of BabelStream, nvbandwidth, gpu-benches and nccl-tests practice):
 * untimed warm-up runs, then samples until the coefficient of variation drops
 * below a target after a minimum count, or a time cap is reached; every sample
 * is kept.  The simulator uses the median (robust against the odd preempted
 * sample); best is the capability (max rate or min time); cv = stddev / mean.
 * A median outside [0.5, 1.05] x datasheet is flagged (section 2.5 sanity
 * band); without a datasheet only a large cv is flagged.
 *
 * Link fits follow the alpha-beta (Hockney) model t = alpha + bytes / beta used
 * by nccl-tests and the simulator's links, fitted on relative error so that the
 * small sizes set alpha and the large sizes set beta.
 */
#include "pfcal.h"

#include "core/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *pfcal_stream_name(pfcal_stream k) {
  static const char *const names[PFCAL_NSTREAM] = {"read", "write", "copy", "triad", "memcpy"};
  return (k >= 0 && k < PFCAL_NSTREAM) ? names[k] : "?";
}

const char *pfcal_prec_name(pf_precision p) {
  static const char *const names[PF_NPREC] = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"};
  return (p >= 0 && p < PF_NPREC) ? names[p] : "?";
}

pfcal_protocol pfcal_protocol_for(bool quick) {
  pfcal_protocol p;
  if (quick) {
    p.warmup = 2;
    p.min_samples = 5;
    p.max_samples = 40;
    p.target_cv = 0.02;
    p.time_cap_s = 1.0;
  } else {
    p.warmup = 3;
    p.min_samples = 10;
    p.max_samples = 100;
    p.target_cv = 0.01;
    p.time_cap_s = 6.0;
  }
  return p;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* The samples stay in the order measured: the median (core/stats.c) sorts a copy. */
double pfcal_median(const double *v, int n) {
  if (n <= 0) return 0.0;
  double tmp[PFCAL_MAX_SAMPLES];
  if (n > PFCAL_MAX_SAMPLES) n = PFCAL_MAX_SAMPLES;
  memcpy(tmp, v, (size_t)n * sizeof *tmp);
  return pf_median(tmp, n);
}

static double cv_of(const double *v, int n, double *mean_out) {
  double sum = 0.0;
  for (int i = 0; i < n; i++)
    sum += v[i];
  double mean = n ? sum / n : 0.0;
  double ss = 0.0;
  for (int i = 0; i < n; i++)
    ss += (v[i] - mean) * (v[i] - mean);
  if (mean_out) *mean_out = mean;
  if (n < 2 || mean == 0.0) return 0.0;
  return sqrt(ss / (n - 1)) / fabs(mean);
}

void pfcal_stat_finish(pfcal_stat *st, double cv_flag) {
  if (st->n <= 0) {
    st->measured = false;
    st->median = st->best = st->mean = st->cv = 0.0;
    st->flag = "unsupported";
    return;
  }
  st->measured = true;
  st->median = pfcal_median(st->samples, st->n);
  st->cv = cv_of(st->samples, st->n, &st->mean);
  st->best = st->samples[0];
  for (int i = 1; i < st->n; i++) {
    double v = st->samples[i];
    if (st->lower_is_better ? v < st->best : v > st->best) st->best = v;
  }
  st->flag = "ok";
  if (st->datasheet > 0.0) {
    double f = st->median / st->datasheet;
    if (f < 0.5)
      st->flag = "below_band";
    else if (f > 1.05)
      st->flag = "above_band";
  }
  if (strcmp(st->flag, "ok") == 0 && st->cv > cv_flag) st->flag = "high_cv";
}

int pfcal_measure(const pfcal_protocol *pr, pfcal_sample_fn fn, void *ctx, pfcal_stat *st) {
  double v;
  st->n = 0;
  for (int i = 0; i < pr->warmup; i++) {
    int rc = fn(ctx, &v);
    if (rc) {
      pfcal_stat_finish(st, 1.0);
      return rc;
    }
  }
  int max = pr->max_samples < PFCAL_MAX_SAMPLES ? pr->max_samples : PFCAL_MAX_SAMPLES;
  double t0 = now_s();
  while (st->n < max) {
    int rc = fn(ctx, &v);
    if (rc) {
      pfcal_stat_finish(st, 1.0);
      return rc;
    }
    if (!(v > 0.0) || !isfinite(v)) {
      pfcal_stat_finish(st, 1.0);
      return pf_error_set(PF_EIO, "a sample returned %g (not a positive finite number)", v);
    }
    st->samples[st->n++] = v;
    double elapsed = now_s() - t0;
    if (st->n >= pr->min_samples) {
      if (cv_of(st->samples, st->n, NULL) <= pr->target_cv) break;
      if (elapsed >= pr->time_cap_s) break;
    } else if (st->n >= 3 && elapsed >= 3.0 * pr->time_cap_s) {
      break; /* samples are too long for the minimum count: keep what we have */
    }
  }
  pfcal_stat_finish(st, 0.05);
  return 0;
}

int pfcal_fit_alpha_beta(const double *bytes, const double *t, int n, double *alpha_s, double *beta_Bps) {
  double sw = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  double xmin = INFINITY, xmax = -INFINITY;
  for (int i = 0; i < n; i++) {
    if (!(t[i] > 0.0) || !(bytes[i] > 0.0)) continue;
    double w = 1.0 / (t[i] * t[i]);
    sw += w;
    sx += w * bytes[i];
    sy += w * t[i];
    sxx += w * bytes[i] * bytes[i];
    sxy += w * bytes[i] * t[i];
    if (bytes[i] < xmin) xmin = bytes[i];
    if (bytes[i] > xmax) xmax = bytes[i];
  }
  if (sw == 0.0 || !(xmax > xmin))
    return pf_error_set(PF_EINVAL, "alpha-beta fit needs at least two distinct positive sizes");
  double det = sw * sxx - sx * sx;
  if (!(det > 0.0)) return pf_error_set(PF_EINVAL, "alpha-beta fit is degenerate");
  double gamma = (sw * sxy - sx * sy) / det; /* seconds per byte */
  double alpha = (sy - gamma * sx) / sw;
  if (alpha < 0.0) { /* refit through the origin */
    alpha = 0.0;
    gamma = sxy / sxx;
  }
  if (!(gamma > 0.0)) return pf_error_set(PF_EINVAL, "alpha-beta fit gives a non-positive bandwidth");
  *alpha_s = alpha;
  *beta_Bps = 1.0 / gamma;
  return 0;
}
