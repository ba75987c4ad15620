/* energy.h - device, package, node, job and facility power from what each
 * device does (DESIGN 5.5; formulas and sources in docs/energy.md).
 *
 * A window (one iteration, or the measured duration of a validation row) is
 * described per used device, averaged over the job's devices: its length,
 * the time compute kernels run and the sums of time x utilisation of the
 * tensor units, vector units and HBM they reach (kernel.h's pf_step), and
 * the communication-kernel time that no compute hides.  pf_energy_window()
 * turns that into energy at every metering scope.
 */
#ifndef PREFLIGHT_ENERGY_H
#define PREFLIGHT_ENERGY_H

#include "preflight/kernel.h"
#include "preflight/predict.h"

/* pf_energy_use (what one used device does over a window) is declared in predict.h. */

/* Core voltage over full-clock voltage at clock ratio r (the DVFS curve;
 * energy.c): v_floor at and below half the clock, linear up to 1 at r = 1. */
double pf_energy_voltage(const pf_device *d, double r);

/* Mean power of one used device (without its package share) while its
 * compute kernels run, at clock ratio r, over busy_s stretched to the clock
 * (compute-bound time / r, the rest unchanged). */
double pf_energy_busy_W(const pf_device *d, const pf_energy_use *u, double r);

/* The device's effective cap (with its package share): the scenario's
 * --power-cap when given, else the device's. */
double pf_energy_cap_W(const pf_scenario *sc);

/* Clock ratio (0.2 .. 1] at which busy power plus the package share stays at
 * or below the cap; 1 when it already does.  u describes the window at full
 * clock. */
double pf_energy_clock_for_cap(const pf_scenario *sc, const pf_energy_use *u);

/* Energy of the window at every scope (sc after pf_plan_check: nodes, gpus).
 * Fills every field of *e that depends on the window; per-token/sample and
 * action fields are left to the caller (pf_energy_rates). */
void pf_energy_window(const pf_scenario *sc, const pf_energy_use *u, pf_energy *e);

/* Add f times the kernels' sums of step k (busy time, utilisation sums, compute-bound time) to u: f = M / P
 * for a stage's microbatches averaged over the stages. */
void pf_energy_use_add_step(pf_energy_use *u, const pf_step *k, double f);
/* Add f times v's sums (busy, utilisation, compute-bound and exposed communication time) to u: a window
 * holding f such windows' work; u's own window and clock are kept. */
void pf_energy_use_add(pf_energy_use *u, const pf_energy_use *v, double f);

/* Per-sample, per-token energy and action (facility J x s) of an iteration
 * of t_iter_s carrying `samples` samples and `tokens` tokens. */
void pf_energy_rates(pf_energy *e, double t_iter_s, double samples, double tokens);

#endif
