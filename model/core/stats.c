/* stats.c - the statistics every module shares (see stats.h): median,
 * absolute-error summary, sample quantiles (Hyndman & Fan definition 6) and scaling efficiency (EPICURE's definition,
 * 000_ff12095d05d26000.txt:843-847, DESIGN 5.6). */
#include "stats.h"

#include <math.h>
#include <stdlib.h>

int pf_cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double pf_median(double *x, int n) {
  if (n <= 0) return NAN;
  qsort(x, (size_t)n, sizeof *x, pf_cmp_double); /* validation files may hold many thousands of rows */
  return n % 2 ? x[n / 2] : 0.5 * (x[n / 2 - 1] + x[n / 2]);
}

pf_vstats pf_vstats_of(double *x, int n) {
  pf_vstats st = {n, NAN, NAN, NAN};
  if (n <= 0) return st;
  double sum = 0, mx = 0;
  for (int i = 0; i < n; i++) {
    sum += x[i];
    if (x[i] > mx) mx = x[i];
  }
  st.mean_abs_pct = sum / n;
  st.max_abs_pct = mx;
  st.median_abs_pct = pf_median(x, n);
  return st;
}

double pf_quantile_sorted(const double *x, int n, double p) {
  if (n <= 0) return NAN;
  double h = p * (n + 1); /* 1-based position */
  if (h <= 1) return x[0];
  if (h >= n) return x[n - 1];
  int k = (int)floor(h);
  return x[k - 1] + (h - k) * (x[k] - x[k - 1]);
}

double pf_scaling_efficiency(double tflops_per_gpu, double base_tflops_per_gpu) {
  return tflops_per_gpu / base_tflops_per_gpu;
}
