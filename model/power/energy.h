/* energy.h - device, package, node, job and facility power from what each
 * device does (DESIGN 5.5; formulas and sources in docs/energy.md).  What a
 * used device draws while its kernels run is its power model's (pmodel.h);
 * everything else (context and communication power, idle devices, packages,
 * nodes, switches, PUE, the cap and the clock it leaves) is here.
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

#include "compute/compute.h"
#include "job/job.h"

/* What one used device does over a window (averages over the job's devices). */
typedef struct pf_energy_use {
  double window_s;        /* wall time of the window */
  double busy_s;          /* compute kernels (incl. launch floors) */
  double tensor_util_s, vector_util_s, hbm_util_s; /* sums of time x utilisation over those kernels */
  double compute_bound_s; /* busy time whose length follows the SM clock (compute-bound bodies) */
  double comm_s;          /* communication kernels on no compute's shadow (exposed); hidden ones are
                             charged once, inside the compute they overlap */
  double clock_ratio;     /* SM clock / full clock the kernels ran at (0 = 1) */
  double loop_s;          /* time inside the step loop (iterations, evaluation passes): what of it no kernel
                             fills is waiting between kernels, at wait_W; the rest of the window (start-up,
                             data loading, checkpoints) at context_W; 0 = no loop (all gaps at context) */
} pf_energy_use;

/* Energy of one window (an iteration in a prediction), whole job, by metering scope (energy.h):
 *   gpu        the devices the job uses (device sensors: NVML, amd-smi per GCD share)
 *   package    the packages holding them: both GCDs of an MI250X, a GH200 module with Grace and LPDDR5X
 *   node_gpus  every device of the job's nodes, unused ones at idle (GPU sensors of whole nodes)
 *   node       whole nodes: all packages, CPUs, host memory, NICs, board (node_base)
 *   facility   (node + the job's share of switches) x PUE */
typedef struct pf_energy {
  double gpu_J, node_J, network_J, facility_J;   /* per iteration, whole job */
  double package_J, node_gpus_J;
  double avg_power_per_node_W, avg_power_per_gpu_W;
  double avg_power_per_package_W;                /* per package (MI250X OAM, GH200 module) */
  double per_iteration_J;                        /* = facility_J */
  double gpu_busy_W;                             /* mean power of a used device while its kernels run */
  double cap_W;                                  /* the cap in force (device + package share) */
  double clock_ratio;                            /* SM clock under that cap / full clock (1 = not capped) */
  double per_sample_J, per_token_J;              /* facility energy per sample / token */
  double action_Js;                              /* facility energy x iteration time (MAELSTROM's Action) */
  pf_energy_use use;                             /* the window it came from (validate rescales it to a job) */
  /* ranges (pf_energy_range): the nominal 80 % interval of the mean GPU power, and of the GPU and facility
   * energy of the window with the time interval the caller gives */
  double avg_power_per_gpu_W_low, avg_power_per_gpu_W_high;
  double gpu_J_low, gpu_J_high, facility_J_low, facility_J_high;
} pf_energy;


/* Core voltage over full-clock voltage at clock ratio r: the DVFS curve of
 * d's power model (the utilisation model's: v_floor at and below half the
 * clock, linear up to 1 at r = 1; pm_util.c); 1 for a model without one. */
double pf_energy_voltage(const pf_device *d, double r);

/* Busy time at clock ratio r of a window measured at u->clock_ratio: its
 * compute-bound time stretched to the clock (x r0 / r), the rest unchanged. */
double pf_energy_busy_s(const pf_energy_use *u, double r);

/* Mean power of one used device (without its package share) while its
 * compute kernels run, at clock ratio r, over pf_energy_busy_s(u, r):
 * context_W plus the dynamic energy of d's power model over that time. */
double pf_energy_busy_W(const pf_device *d, const pf_energy_use *u, double r);

/* The device's effective cap (with its package share): the scenario's
 * --power-cap when given, else the device's. */
double pf_energy_cap_W(const pf_scenario *sc);

/* Clock ratio (0.2 .. 1] at which the mean power of the step loop (u->loop_s:
 * kernels, exposed communication, the gaps between them; the busy time alone
 * where u has no loop) plus the package share stays at or below the cap; 1
 * when it already does.  u describes the window at u->clock_ratio. */
double pf_energy_clock_for_cap(const pf_scenario *sc, const pf_energy_use *u);

/* Energy of the window at every scope (sc after pf_plan_check: nodes, gpus;
 * its device after pf_power_check, which the scenario's reader runs).
 * Fills every field of *e that depends on the window; per-token/sample and
 * action fields are left to the caller (pf_energy_rates). */
void pf_energy_window(const pf_scenario *sc, const pf_energy_use *u, pf_energy *e);

/* Add f times the kernels' sums of step k (busy time, utilisation sums, compute-bound time) to u: f = M / P
 * for a stage's microbatches averaged over the stages. */
void pf_energy_use_add_step(pf_energy_use *u, const pf_step *k, double f);
/* Add f times v's sums (busy, utilisation, compute-bound and exposed communication time) to u: a window
 * holding f such windows' work; u's own window and clock are kept. */
void pf_energy_use_add(pf_energy_use *u, const pf_energy_use *v, double f);

/* The ranges of e (docs/energy.md "Ranges"), nominal 80 %: [p_lo, p_hi] the interval of measured / predicted
 * mean power with the time held (the validation's energy rows, study/interval.h), [t_lo, t_hi] that of
 * measured / predicted iteration time.  Sets the *_low / *_high fields of e: the mean GPU power times the
 * power interval (at most the cap), and the window's GPU and facility energy with both intervals combined in
 * log space as independent errors.  1, 1, 1, 1: every range is the value itself. */
void pf_energy_range(pf_energy *e, double t_lo, double t_hi, double p_lo, double p_hi);

/* Per-sample, per-token energy and action (facility J x s) of an iteration
 * of t_iter_s carrying `samples` samples and `tokens` tokens. */
void pf_energy_rates(pf_energy *e, double t_iter_s, double samples, double tokens);

#endif
