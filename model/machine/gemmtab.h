/* gemmtab.h - the rate a matrix product achieves on a device: a measured table
 * (m, n, k, layout, dtype -> time), interpolated in log space, over a fallback
 * curve whose shape is physical (docs/model.md, "Compute rates").
 *
 * Fallback curve, as a fraction of the dense peak of the precision:
 *   eff(m, n, k) = top x util(m, n, units) x k / (k + k_half)
 *   util = best over the tile shapes cuBLAS/hipBLASLt pick (128x256, 256x128,
 *          128x128, 64x128, 128x64) of  m n / (waves x units x tm x tn),
 *          waves = ceil(ceil(m/tm) ceil(n/tn) / units)  (tile padding and wave
 *          quantization over the device's SMs/CUs)
 *   k / (k + k_half): the fixed prologue/epilogue of each output tile against
 *          its reduction loop.
 *   With fewer output tiles than units the reduction splits (split-K) into s
 *   slices of k/s, up to one wave: util and the k term are taken per slice
 *   and the best s kept (cuBLAS/CUTLASS split-K, rocBLAS GlobalSplitU).
 * `top` is the device's large-GEMM efficiency (efficiency.gemm, MAMF) times
 * PF_GEMM_SHAPE_TOP, the share of that best-shape figure that transformer
 * shapes reach at size.  Both constants (0.889, k_half 101) were fitted to the
 * 470 shipped rows of data/h100-gemm-bf16.csv (the held-out families were not
 * used); the fit found no extra m or n term beyond util.  k_half is the
 * device's (efficiency.gemm_half_dim, default 101): the ramp scales with one
 * SM's tensor rate, so Blackwell parts take 202 (docs/model.md, "k_half per
 * device").
 *
 * A table holds measured rows.  Each row's residual against the curve,
 *   r_i = ln(eff_i / (top_table x util_i x k_i/(k_i + k_half))),
 * is interpolated at a query by inverse squared distance over the 8 nearest
 * rows of the same precision class and layout in (ln m, ln n, ln k), and
 * fades with the distance to the nearest row (exp(-(d/0.3)^2)), so far from
 * the data the curve alone speaks.  A table measured on one part carries to
 * another of the same architecture by its SM count (util uses the target's
 * units) and by the ratio of the two parts' large-GEMM efficiencies (the
 * transfer rule, docs/model.md).
 */
#ifndef PREFLIGHT_GEMMTAB_H
#define PREFLIGHT_GEMMTAB_H

#include "hardware.h"
#include "core/core.h"

/* GEMM operand layout as cuBLAS sees a training step's products (data/h100-gemm-bf16.csv):
 * NN forward (activations x weight), NT data gradient, TN weight gradient. */
typedef enum { PF_GEMM_NN, PF_GEMM_NT, PF_GEMM_TN } pf_gemm_layout;

/* Fitted constants (docs/model.md): the transformer-shape top relative to the
 * best-shape (MAMF) efficiency, and k_half for 16-bit types (fp8 tiles reduce
 * twice the elements per unit time, so its k_half is twice this). */
#define PF_GEMM_SHAPE_TOP 0.889
#define PF_GEMM_K_HALF 101.0

/* One measured product. */
typedef struct pf_gemm_sample {
  double m, n, k;
  pf_gemm_layout layout;
  pf_precision prec;
  double time_s; /* one call as measured (may include a per-call overhead, see pf_gemm_table_build) */
} pf_gemm_sample;

typedef struct pf_gemm_row {
  double m, n, k;    /* the shape */
  double lm, ln, lk; /* its natural logs */
  double r;          /* residual against the table's curve */
  double eff;        /* kernel-only fraction of the dense peak, as measured */
  pf_gemm_layout layout;
  pf_precision prec; /* precision class: fp16 rows are stored as bf16 (same tensor rate) */
} pf_gemm_row;

struct pf_gemm_memo;

typedef struct pf_gemm_table {
  char name[PF_PATH_MAX];    /* file (or calibration) it came from */
  int n;
  pf_gemm_row *row;          /* owned */
  int units;                 /* SMs/CUs of the part that was measured (0 = unknown: no wave term) */
  double k_half;             /* the curve's 16-bit k_half the residuals were fitted against */
  double top[PF_NPREC];      /* median of eff / shape over the class's rows; 0 = no rows */
  double ref_eff[PF_NPREC];  /* large-GEMM efficiency of the measured part (transfer reference) */
  int ncorr;                 /* measured corrections (pf_gemm_table_corrected), 0 = none */
  pf_gemm_row *corr;         /* owned: their shapes, r = ln(measured / the base table's prediction) */
  double corr_med[PF_NPREC]; /* per class: the median r, what a shape far from every correction moves by */
  double overhead_s[PF_NPREC]; /* per class: the per-call time removed from each measured time (host dispatch +
                                 * launch floor; an FP8 product's eager call dispatches longer than a BF16 one) */
  struct pf_gemm_memo *memo; /* owned: residuals already interpolated */
} pf_gemm_table;

/* Precision whose table rows and efficiency a product of precision p uses
 * (fp16 -> bf16: same tensor-core rate on every target part). */
pf_precision pf_gemm_class(pf_precision p);

/* The curve's shape factor util x k/(k + k_half) for `batch` products of
 * m x n x k on a device with `units` SMs/CUs (0: no wave quantization);
 * k_half is the device's 16-bit efficiency.gemm_half_dim (fp8: twice it). */
double pf_gemm_shape(int units, double k_half, pf_precision p, double m, double n, double k, double batch);

/* Large-GEMM efficiency of d for precision p (efficiency.gemm, or
 * efficiency.gemm_fp8 for fp8 when given). */
double pf_gemm_top(const pf_device *d, pf_precision p);

/* Build a table from samples.  Each sample's kernel time is
 * time_s - overhead_s[its class] (the host dispatch and launch floor its
 * timing includes), clamped at the dense peak; peak[] are the measured part's dense
 * peaks, units its SM/CU count, k_half its curve's (efficiency.gemm_half_dim),
 * ref_eff[] its large-GEMM efficiencies (0 =
 * the class's largest measured efficiency).  Rows of a precision with no peak
 * are an error (PF_EINVAL naming the sample).  On success *out is owned by
 * the caller (pf_gemm_table_free) unless handed to pf_gemm_table_intern. */
int pf_gemm_table_build(const char *name, const pf_gemm_sample *s, int n, const double overhead_s[PF_NPREC],
                        const double peak[PF_NPREC], int units, double k_half, const double ref_eff[PF_NPREC],
                        pf_gemm_table **out);
void pf_gemm_table_free(pf_gemm_table *t);

/* A table measured on this part (meas) overlaid on the device's table (base), like for like: base's rows
 * stay, and a prediction of a class base has moves by the measured ratios meas_ratio[j] (measured
 * efficiency / base's prediction at meas row j) interpolated at its shape as residuals are, fading with the
 * distance to the nearest measured shape to the class's median ratio: no prediction moves by more than
 * the measured differences.  Measured rows of a class base lacks join as rows.  ref_eff: base's per class,
 * else meas's.  Owned by the caller. */
int pf_gemm_table_corrected(const char *name, const pf_gemm_table *base, const pf_gemm_table *meas,
                            const double *meas_ratio, pf_gemm_table **out);

/* The efficiency t measured at exactly this shape, layout and precision class (the geometric mean of its
 * repeated rows: the shipped table holds some shapes twice, up to 10 % apart), or 0. */
double pf_gemm_table_measured(const pf_gemm_table *t, pf_precision p, pf_gemm_layout l, double m, double n,
                              double k);

/* Read samples from a CSV file with the columns m,n,k,layout,dtype,time_s
 * (more columns are ignored; '#' lines are comments), as in
 * data/h100-gemm-bf16.csv.  Errors name file:line and the column.  Caller
 * frees *s with free(). */
int pf_gemm_samples_read(const char *path, pf_gemm_sample **s, int *n);

/* The process-wide registry: tables live until exit, so devices (which are
 * copied by value) can point at them.  pf_gemm_table_find returns the table
 * registered under key, or NULL; pf_gemm_table_intern registers t under key
 * and takes ownership. */
const pf_gemm_table *pf_gemm_table_find(const char *key);
const pf_gemm_table *pf_gemm_table_intern(const char *key, pf_gemm_table *t);

/* Fraction of the dense peak of p that `batch` products of m x n x k reach on
 * d: the table when d has one with rows of p's class, else the curve; at most
 * 1.  (pf_gemm_eff in kernel.h is this with batch 1.) */
double pf_gemm_eff_batched(const pf_device *d, pf_precision p, pf_gemm_layout layout, double m, double n, double k,
                           double batch);

/* Parse "NN", "NT", "TN" (also lower case); returns 0 or PF_EINVAL. */
int pf_gemm_layout_parse(const char *s, pf_gemm_layout *out);
const char *pf_gemm_layout_name(pf_gemm_layout l); /* static */

#endif
