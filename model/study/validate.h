/* validate.h - predicted vs measured: validation CSVs, Megatron-LM logs, and
 * fitting the model's efficiency parameters to a user's own runs.
 *
 * A validation CSV (DESIGN 4.3, docs/validation.md) holds one measured run per
 * row: machine, workload, parallel plan, metric, value, unit and provenance.
 * pf_validate_read() parses and checks it (errors name file:line:field);
 * pf_validate_run() predicts what each row measures and fills its error:
 *   exact value m:   e = (p - m) / m
 *   lower bound m:   e = 0 if p >= m, else (p - m) / m
 *   upper bound m:   e = 0 if p <= m, else (p - m) / m
 *   range [a, b]:    e = 0 inside, else the relative distance to the nearer end
 * Scaling efficiency follows the EPICURE guide (000_ff12095d05d26000.txt:843-847,
 * DESIGN 5.6): e(n) = TFLOP/s per GPU at n / TFLOP/s per GPU at baseline_nodes;
 * weak scaling keeps the gradient-accumulation steps per replica, strong
 * scaling keeps the global batch.
 *
 * pf_fit() fits compute_eff, comm_eff and step_overhead_s by nonlinear least
 * squares (GSL trust-region Levenberg-Marquardt) on time-like rows, with
 * residuals log(t_pred / t_meas); see fit.c.
 */
#ifndef PREFLIGHT_VALIDATE_H
#define PREFLIGHT_VALIDATE_H

#include "predict.h"
#include "core/core.h"
#include "io/io.h"

#include <stdbool.h>
#include <stdio.h>

/* ---- validation rows ---- */

typedef enum {
  PF_MET_ITER_TIME,   /* iteration_time_s */
  PF_MET_TIME,        /* time_s: iteration time x iterations (e.g. an epoch) */
  PF_MET_TFLOPS,      /* tflops_per_gpu (model FLOPs, Megatron's count) */
  PF_MET_TOKENS,      /* tokens_per_s */
  PF_MET_SAMPLES,     /* samples_per_s */
  PF_MET_SCALING,     /* scaling_efficiency */
  PF_MET_ENERGY,      /* energy_J */
  PF_MET_POWER,       /* avg_power_W */
  PF_MET_BATCH_RATIO, /* throughput_ratio: samples/s at the row's batch over samples/s at baseline_mbs */
  PF_MET_COUNT
} pf_metric;

typedef enum { PF_BOUND_EXACT, PF_BOUND_LOWER, PF_BOUND_UPPER, PF_BOUND_RANGE } pf_bound;
typedef enum { PF_SCALING_NONE, PF_SCALING_WEAK, PF_SCALING_STRONG } pf_scaling;
/* what an energy or power measurement covers */
typedef enum {
  PF_SCOPE_NONE,        /* not an energy/power row */
  PF_SCOPE_GPU,         /* all GPUs of the job, training iterations only */
  PF_SCOPE_GPU_PER_GPU, /* one GPU, training iterations only (Megatron's J/iter/GPU) */
  PF_SCOPE_GPU_JOB,     /* all GPUs over the whole job (I/O, evaluation, start-up) */
  PF_SCOPE_NODE,        /* whole nodes, training iterations only */
  PF_SCOPE_NODE_JOB,    /* whole nodes over the whole job (PDU) */
  PF_SCOPE_NODE_GPUS_JOB, /* every device of the job's nodes, used or not, over the whole job (GPU sensors) */
  PF_SCOPE_PACKAGE_JOB  /* the packages holding the job's devices over the whole job: an MI250/MI250X OAM
                           (both GCDs, an unused one at idle; amd-smi/rocm-smi read per OAM), a GH200 module
                           (GPU + Grace + LPDDR5X) */
} pf_scope;

typedef enum { PF_ROW_PREDICTED, PF_ROW_NOT_PREDICTED, PF_ROW_FAILED } pf_row_status;

#define PF_VTEXT 512
#define PF_VMAXOPT 40   /* scenario-option columns of one row */
#define PF_VOPTNAME 48  /* an option column's name, NUL included (overlap_moe_expert_parallel_comm is 32) */
#define PF_VOPTLEN 96

typedef struct pf_vrow {
  int line;
  /* configuration; 0 / "" = unset (the model's own, or derived) */
  char machine[PF_ID_MAX], model[PF_ID_MAX];
  int layers, hidden, heads, seq, vocab;
  double params, flops_per_sample;
  int nodes, gpus, tp, pp, dp, mbs, gbs, grad_accum;
  char precision[16], recompute[16], schedule[24];
  bool sp, dist_opt;
  /* measurement */
  pf_metric metric;
  double value, value_hi;     /* as written, in unit */
  char unit[24];
  double measured, measured_hi; /* canonical: s, TFLOP/s, 1/s, fraction, J, W */
  pf_bound bound;
  int baseline_nodes;
  int baseline_mbs;           /* throughput_ratio: the micro-batch of the reference run (same configuration) */
  pf_scaling scaling;
  double iterations;          /* for time_s and energy rows; 0 = 1 */
  double duration_s;          /* energy rows of a whole job: the measured runtime of what was metered; 0 = none */
  double train_s;             /* the measured time of its training iterations (within duration_s); 0 = not given */
  double eval_iterations;     /* forward-only passes of the global batch within duration_s (evaluation); 0 = none */
  pf_scope scope;
  char use[8];                /* "fit", "check" or "" */
  char tag[32];
  char source[PF_VTEXT];
  char notes[PF_VTEXT];
  /* every non-empty column that is a scenario option (machine, model, nodes, tp, ..., flash_attn,
   * overlap_grad_reduce, cp, ...), as written: the preflight command builds the row's scenario from
   * these and its own options (pf_validate_opts.build) */
  int nopt;
  char opt_name[PF_VMAXOPT][PF_VOPTNAME], opt_value[PF_VMAXOPT][PF_VOPTLEN];
  /* results */
  pf_row_status status;
  int fail_code;              /* PF_ROW_FAILED: the error code (an input error, or a plan that cannot run) */
  char reason[PF_VTEXT];
  double predicted;           /* canonical unit */
  double error;               /* signed relative error, 0 inside a bound */
  double band_lo, band_hi;    /* fit band, 0 if none */
  double loo_predicted, loo_error; /* leave-one-out, NAN if none */
  int group;                  /* rows with the same configuration share a group (fit) */
} pf_vrow;

typedef struct pf_vset {
  char path[PF_PATH_MAX];
  int nextra;                 /* columns beyond the core ones (scenario options), as named in the header */
  char extra[PF_VMAXOPT][PF_VOPTNAME];
  int header_line;
  int n;
  pf_vrow *rows;              /* owned */
} pf_vset;

/* Efficiency overrides applied to every prediction (the fit's parameters). */
typedef struct pf_fitparams {
  double compute_eff, comm_eff, step_overhead_s; /* 1, 1, 0 = model defaults */
  double input_rate_Bps;      /* bytes/s one node's loaders deliver (pf_input_time); 0 = the scenario's own */
} pf_fitparams;

/* The fit's parameters by index (0 compute_eff, 1 comm_eff, 2 step_overhead_s,
 * 3 input_rate_Bps): name and value. */
#define PF_FIT_NPAR 4
const char *pf_fit_param_name(int k);
double pf_fit_param_value(const pf_fitparams *p, int k);
/* Put fp's parameters into sc (compute and communication scales, step
 * overhead, and the input rate where fp has one). NULL fp: nothing. */
void pf_fitparams_apply(const pf_fitparams *fp, pf_scenario *sc);

/* Builds a row's scenario: 0, 1 (cannot be predicted; why says so) or a
 * negative PF_E* code. */
typedef int (*pf_vrow_builder)(const pf_vrow *r, void *arg, pf_scenario *sc, char *why, size_t whylen);

typedef struct pf_validate_opts {
  const char *calibration;    /* --calibration FILE.json for every row, or NULL */
  const pf_fitparams *fit;    /* NULL = defaults */
  pf_vrow_builder build;      /* NULL: the core columns only (rows with option columns are refused) */
  void *build_arg;
  bool hold_training;         /* whole-job energy rows with train_s: the predicted iteration stretched to the
                                 measured training time (validate --hold-time training; docs/energy.md) */
} pf_validate_opts;

/* Metric names, canonical units and parsing. */
const char *pf_metric_name(pf_metric m);
const char *pf_metric_unit(pf_metric m);      /* canonical unit for display */
int pf_metric_parse(const char *s, pf_metric *out);
const char *pf_scope_name(pf_scope s);
const char *pf_bound_name(pf_bound b);
/* Scale from a written unit to the metric's canonical unit; PF_EINVAL if the
 * unit does not fit the metric. */
int pf_metric_unit_scale(pf_metric m, const char *unit, double *scale);
/* Is the row's measured value (and value_hi of a range) plausible for its metric (core/bounds.h: a measured
 * iteration, an achieved rate per GPU, a mean power per device of the scope on machine m, ...)?  0 when it
 * is; else 1 (value) or 2 (value_hi) with the reason in why. */
int pf_vrow_plausible(const pf_vrow *r, const pf_machine *m, char *why, size_t n);

/* Read and check a validation CSV. Malformed input (unknown or missing column,
 * wrong field count, non-numeric value, unknown machine or model id, unit that
 * does not fit the metric) is PF_EPARSE / PF_ENOENT naming file:line:field.
 * Caller frees with pf_vset_free(). */
int pf_validate_read(const char *path, pf_vset *out);
int pf_validate_parse(const pf_csv *csv, pf_vset *out);
void pf_vset_free(pf_vset *s);

/* The same row by row, in constant memory (validate streams its CSV). */
typedef struct pf_vreader pf_vreader;
int pf_vreader_open(const char *path, pf_vreader **out); /* reads and checks the header */
/* 1: *row is the next run, 0: end of file, < 0: malformed row (file:line:field). */
int pf_vreader_next(pf_vreader *r, pf_vrow *row);
/* Is a column name one of the core columns that are scenario options (machine, tp, ...)? */
bool pf_validate_core_option(const char *name);
/* The file's path, header line and option columns (n = 0, no rows; borrowed). */
const pf_vset *pf_vreader_columns(const pf_vreader *r);
long long pf_vreader_pos(const pf_vreader *r);
long long pf_vreader_size(const pf_vreader *r);
void pf_vreader_close(pf_vreader *r);

/* A machine by id or path, loaded once per process (borrowed, valid for the
 * process's lifetime; validate.c keeps the last 48). */
int pf_validate_machine(const char *id, const pf_machine **out);

/* Build the scenario a row describes (at its own node count). Returns 0, 1
 * when the row names no workload (reason in why), or a negative PF_E* code. */
int pf_vrow_scenario(const pf_vrow *r, const pf_validate_opts *o, pf_scenario *sc, char *why, size_t whylen);

/* Predict what row r measures, given its scenario sc (not modified); fills
 * *value in the canonical unit. Returns 0, 1 when the row cannot be predicted
 * (reason in why), or a negative PF_E* code (prediction failed: plan or
 * memory). pred (may be NULL) receives the prediction at the row's node count. */
int pf_vrow_predict(const pf_vrow *r, const pf_scenario *sc, const pf_fitparams *fp, double *value,
                    pf_prediction *pred, char *why, size_t whylen);

/* Signed relative error of prediction p against the row's measurement. */
/* Signed relative error of a prediction p against a measurement m (exact,
 * lower or upper bound, or the range [m, hi]): 0 inside what was measured. */
double pf_bound_error(pf_bound b, double m, double hi, double p);
double pf_vrow_error(const pf_vrow *r, double p);

/* Predict every row: status, predicted, error, reason. Returns 0 (rows that
 * fail are marked, not fatal) or PF_ENOMEM. */
int pf_validate_run(pf_vset *s, const pf_validate_opts *o);
/* The same, with a cache of predictions kept across calls (each distinct
 * configuration predicted once when a file is validated in chunks). */
typedef struct pf_vcache pf_vcache;
pf_vcache *pf_vcache_new(void); /* NULL when out of memory */
void pf_vcache_free(pf_vcache *c);
int pf_validate_run_cached(pf_vset *s, const pf_validate_opts *o, pf_vcache *c);

/* ---- summary ---- */

/* Statistics of |error| x 100 over predicted rows for which keep(row, arg) is
 * true (keep NULL = all); pf_vstats, pf_vstats_of and pf_median: core/stats.h. */
pf_vstats pf_validate_stats(const pf_vset *s, bool (*keep)(const pf_vrow *, const void *), const void *arg);

/* ---- fit (fit.c, fit_lm.c, fit_json.c) ---- */

/* Leave-one-out folds: nothing, each configuration (its repeats together), or every configuration of one
 * machine (the rest, other machines, refitted: what a machine the fit has never seen would get). */
typedef enum { PF_LOO_NONE = 0, PF_LOO_CONFIG = 1, PF_LOO_MACHINE = 2 } pf_loo;
const char *pf_loo_name(pf_loo l); /* "configuration", "machine" */

typedef struct pf_fit_result {
  pf_fitparams p;
  bool fixed[PF_FIT_NPAR];    /* parameter not constrained by the rows: kept at its default */
  int at_bound[PF_FIT_NPAR];  /* -1 at the lower, +1 at the upper end of its range, 0 inside */
  /* the input rate: rows whose workload has sample bytes (those that constrain it), rows whose step it
   * bounds at the fit (0 with p.input_rate_Bps 0: it binds on none, the input term is left off), and
   * the start the kept fit came from ("off", "min", "median", "max", "full fit"; fit_lm.c) */
  int input_rows, input_binding;
  char input_start[16];
  double rel_sigma;           /* RMS of log residuals, n - free parameters degrees of freedom */
  int dof;                    /* rows - free parameters; rel_sigma is 0 (unknown) when <= 0 */
  int rows_used, groups, iterations;
  int max_nodes;              /* the largest node count of the rows used (how far the fit reaches) */
  double rms_before, rms_after;  /* RMS log residual at defaults and at the fit */
  bool loo_done;
  pf_loo loo_by;              /* what each left-out fold held */
  pf_vstats loo;              /* leave-one-out |error| statistics */
  char status[128];           /* GSL's stop reason */
} pf_fit_result;

/* A row the fit can use: predicted, exact, time-like (iteration_time_s,
 * time_s, tflops_per_gpu, tokens_per_s, samples_per_s) and use != "check"
 * when any row says "fit". */
bool pf_fit_row_usable(const pf_vrow *r, bool any_fit_marked);

/* Fit on s's usable rows (pf_validate_run() must have run). With fewer
 * configurations than free parameters, comm_eff, then step_overhead_s, then
 * input_rate_Bps keep their defaults (reported as not constrained); the input
 * rate is constrained only by rows whose workload has sample bytes. Fills each row's
 * band, and with loo, its leave-one-out prediction and error (folds: pf_loo; a
 * machine fold needs rows of another machine to refit on, else it is skipped).
 * Returns 0, PF_EINVAL (no usable rows) or PF_ESIM (GSL failure). */
int pf_fit(pf_vset *s, const pf_validate_opts *o, pf_loo loo, pf_fit_result *out);

/* The calibration overlay (schema_version 1, backend "fit") as JSON text;
 * date from $PF_FAKE_DATE when set. Caller frees. */
char *pf_fit_json(const pf_fit_result *f, const char *input_path, const char *machine_hint);

/* ---- Megatron-LM logs (megatron.c) ---- */

#define PF_MEGATRON_MAXARGS 512

typedef struct pf_megatron_log {
  char path[PF_PATH_MAX];
  /* argument dump ("---- arguments ----" ... "---- end of arguments ----") */
  int nargs;
  char arg_name[PF_MEGATRON_MAXARGS][64];
  char arg_value[PF_MEGATRON_MAXARGS][128];
  int arg_line[PF_MEGATRON_MAXARGS];
  /* per-iteration lines */
  int niter;
  int *iteration, *line;       /* owned */
  double *time_s, *tflops, *energy_J, *power_W; /* NAN where not logged */
  int *gbs;                    /* 0 where not logged */
  int total_iters;
  /* medians over the iterations after the first (warm-up) */
  double med_time_s, med_tflops, med_energy_J, med_power_W;
  int used;                    /* iterations in the medians */
  char format[16];             /* "ms" (current) or "s" (older) */
} pf_megatron_log;

/* Parse a Megatron-LM training log. Malformed iteration lines (number or value
 * that does not parse) and logs without iteration lines are PF_EPARSE naming
 * file:line. Caller frees with pf_megatron_free(). */
int pf_megatron_read(const char *path, pf_megatron_log *out);
int pf_megatron_parse(const char *text, size_t len, const char *name, pf_megatron_log *out);
void pf_megatron_free(pf_megatron_log *l);
/* Value of a dumped argument, or NULL. */
const char *pf_megatron_arg(const pf_megatron_log *l, const char *name);
int pf_megatron_arg_line(const pf_megatron_log *l, const char *name);

#endif
