/* stats.h - the statistics every module shares, written once: the ascending
 * order of doubles for qsort, the median, the summary of absolute errors that
 * validations report, and scaling efficiency.
 *
 * The median of n sorted values is the middle one (n odd) or the mean of the
 * two middle ones (n even).  Scaling efficiency follows the EPICURE guide
 * (000_ff12095d05d26000.txt:843-847, DESIGN 5.6): e(n) = TFLOP/s per GPU at n
 * over TFLOP/s per GPU at the baseline (the smallest scale), so 1 is perfect
 * scaling.  The calibration harness keeps its own measurement statistics
 * (spread, best sample; calibrate/harness/stats.c) on top of these.
 */
#ifndef PREFLIGHT_STATS_H
#define PREFLIGHT_STATS_H

/* qsort comparison of two doubles, ascending: -1, 0 or 1.  A NaN compares
 * equal to everything (where a NaN ends up is unspecified). */
int pf_cmp_double(const void *a, const void *b);

/* Median of x[0..n); sorts x in place (ascending).  NAN when n <= 0. */
double pf_median(double *x, int n);

/* n, median, mean and max of absolute percentage errors (validation files, the
 * collective validation, leave-one-out fits); NAN where n == 0. */
typedef struct pf_vstats {
  int n;
  double median_abs_pct, mean_abs_pct, max_abs_pct;
} pf_vstats;

/* The summary of the |error| percentages x[0..n): the mean and max in the order
 * given, then the median (which sorts x in place). */
pf_vstats pf_vstats_of(double *x, int n);

/* The p-quantile (0 <= p <= 1) of x[0..n) sorted ascending, Hyndman & Fan's
 * definition 6 ("Sample quantiles in statistical packages", The American
 * Statistician 50(4), 1996; R's type = 6, Minitab's and SPSS's): position
 * h = p (n + 1) in the 1-based order statistics, linear between x[floor(h)]
 * and x[floor(h) + 1], clamped to x[0] and x[n-1] outside [1, n].  With it the
 * 10th and 90th percentiles of n exchangeable values hold a new value of the
 * same distribution with probability 0.8 on average (E F(x_(k)) = k / (n + 1)),
 * for n >= 9 (the positions 0.1 (n + 1) >= 1); below that the clamped interval
 * [min, max] covers (n - 1) / (n + 1).  NAN when n <= 0. */
double pf_quantile_sorted(const double *x, int n, double p);

/* Scaling efficiency of a run against its baseline: tflops_per_gpu /
 * base_tflops_per_gpu (EPICURE; 1 = perfect scaling). */
double pf_scaling_efficiency(double tflops_per_gpu, double base_tflops_per_gpu);

#endif
