/* interval.h - prediction intervals from the project's own validation files
 * (docs/validation.md, "Prediction intervals").
 *
 * Every judged time, throughput and efficiency row of the validation CSVs (a
 * folder, read at run time, so later accuracy work moves the intervals) is a
 * measured error of the model: r = measured time / predicted time (a
 * throughput row inverted), or measured / predicted scaling efficiency
 * (efficiency and batch-ratio rows).  A prediction's regime is its workload
 * kind (transformer, CNN, other), device vendor and architecture, model size
 * class and scale class; the rows of the same regime give the interval, the
 * 10th and 90th percentiles of r (core/stats.h, pf_quantile_sorted), and where
 * fewer than PF_INTERVAL_MIN_ROWS are near, the regime widens (size, then
 * architecture, then scale, then vendor, then kind are let go) and the output
 * names the regime used.
 *
 * The energy and power rows (energy_J, avg_power_W; the time held at the
 * job's measured duration, as validate's default --hold-time job) give the
 * power interval, r = measured / predicted mean power, by the same percentiles
 * over every such row (no ladder: interval.c says why), rows of use "check" left out of it (docs/energy.md "Ranges");
 * pf_interval_energy() combines it with the time interval into the energy's.
 *
 * Rows are predicted lazily: only the rows of the regimes a command asks for,
 * each once per process (a pf_ipool), over all cores (pf_validate_run).
 *
 * Anchored (the scenario has a `validate --fit` overlay): the fit took out the
 * bias the unanchored interval is made of; what is left is the fit's residual
 * spread (its rel_sigma, an RMS log residual) and the error of carrying the
 * benchmark's scale to the prediction's, which the efficiency rows of the
 * regime measure (a scaling-efficiency row is the model's error between two
 * scales).  In log space, independent: ln t_hi = sqrt(ln(1/eff_lo)^2 +
 * (z sigma)^2), ln t_lo = -sqrt(ln(eff_hi)^2 + (z sigma)^2), z = 1.2816 (the
 * standard normal's 90th percentile).
 */
#ifndef PREFLIGHT_INTERVAL_H
#define PREFLIGHT_INTERVAL_H

#include "validate.h"

/* The smallest number of rows whose 10th and 90th percentiles are order statistics inside the sample
 * (Hyndman & Fan definition 6: 0.1 (n + 1) >= 1). */
#define PF_INTERVAL_MIN_ROWS 9
#define PF_INTERVAL_P_LO 0.10
#define PF_INTERVAL_P_HI 0.90

typedef struct pf_ipool pf_ipool;

/* The judged rows of the validation CSVs in dir_or_csv (files of measured collectives are not training
 * runs and are left out).  vo builds each row's scenario (borrowed until pf_ipool_free).  Returns 0 or a
 * negative code (unreadable folder, malformed CSV). */
int pf_ipool_open(const char *dir_or_csv, const pf_validate_opts *vo, pf_ipool **out);
void pf_ipool_free(pf_ipool *p);

/* The interval of scenario sc (its own node count, plan and calibration): the time factors, and with
 * efficiency (or when sc is anchored, which needs them) the efficiency factors (n_eff 0 without: their
 * rows are not predicted).  Returns 0 or PF_ENOMEM. */
int pf_interval_of(pf_ipool *p, const pf_scenario *sc, bool efficiency, pf_pred_interval *out);

/* The energy ranges of p (its energy and eval_energy, pf_energy_range) from p->interval: the power factors
 * with the time factors.  Nothing when the interval has no power rows. */
void pf_interval_energy(pf_prediction *p);

/* Apply an interval's time factors to a prediction's times and rates: lo (hi) = the fast (slow) end. */
void pf_interval_scale(const pf_prediction *p, double f, pf_prediction *out);

/* ---- leave one group out (docs/validation.md, the coverage table) ---- */

#define PF_ICOVER_MAX 64

typedef struct pf_icover_group {
  char source[64], family[136]; /* file name, model family (the model id without its size; of energy and
                                   power rows, "FAMILY on MACHINE") */
  int n[3], inside[3];          /* [0] time and throughput rows, [1] efficiency rows, [2] energy and power
                                   rows: judged, and inside */
  int bounds, bounds_inside;    /* of those, rows measured as a bound (counted inside when they overlap) */
  char regime[352];             /* the regime of the group's first row (time class, else efficiency) */
} pf_icover_group;

typedef struct pf_icover {
  int ngroups;
  pf_icover_group g[PF_ICOVER_MAX];
} pf_icover;

/* Each group (source file x model family) left out in turn: its rows' intervals built from the other
 * groups' rows, and counted inside when the measurement (or its bound) meets [predicted x lo, x hi]. */
int pf_interval_coverage(pf_ipool *p, pf_icover *out);

/* $PREFLIGHT_VALIDATION, else the source tree's scenarios/validation. */
const char *pf_validation_dir(void);

#endif
