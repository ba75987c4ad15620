/* pfcal.h - the calibration harness: one measurement protocol, three back-ends
 * (cpu, cuda, hip) behind one function table, one JSON document.
 *
 * A back-end only knows how to take ONE sample of a measurement (one timed
 * stream pass, one FMA burst, one batch of copies).  The harness owns the
 * protocol of shared/research/energy-and-calibration.md section 4.2: warm-up,
 * repeat until the coefficient of variation is small or a time cap is reached,
 * keep every sample, report median (what the simulator uses), best (capability)
 * and cv, compare with a curated datasheet table (sanity band [0.5, 1.05] x
 * datasheet, section 2.5), read power counters around each measurement, and
 * write the schema-versioned calibration JSON (docs/calibration.md).  The
 * design follows nccl-tests (one harness, the vendor library behind one
 * interface) and BabelStream (one driver, one "model" per programming model).
 *
 * This header is C and is included from the CUDA/HIP source (C++) too.
 */
#ifndef PFCAL_H
#define PFCAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "core/core.h"       /* pf_output, pf_error_set */
#include "machine/machine.h" /* pf_precision */

struct cJSON;

enum {
  PFCAL_MAX_SAMPLES = 256,
  PFCAL_MAX_DEVICES = 16,
  PFCAL_MAX_SIZES = 16,
  PFCAL_MAX_THREADS = 1024,
};

#define PFCAL_SCHEMA_VERSION 1

typedef enum { PFCAL_READ, PFCAL_WRITE, PFCAL_COPY, PFCAL_TRIAD, PFCAL_MEMCPY, PFCAL_NSTREAM } pfcal_stream;

/* "read", "write", "copy", "triad", "memcpy"; static. */
const char *pfcal_stream_name(pfcal_stream k);
/* "fp64", "fp32", "tf32", "fp16", "bf16", "fp8"; static (the harness does not
 * link device.c, so it keeps its own table, identical to pf_precision_name). */
const char *pfcal_prec_name(pf_precision p);

typedef struct pfcal_opts {
  bool quick;         /* quick mode (< 2 min per node) instead of full (< 15 min) */
  unsigned long seed; /* seeds the input data of every kernel */
  int threads;        /* cpu back-end: worker threads, 0 = every online core */
  int device;         /* GPU back-ends: device for single-device measurements */
  bool progress;      /* one line per measurement on stderr */
  bool skip_vector, skip_tensor, skip_stream, skip_copies, skip_launch; /* for tests */
  bool gemm;               /* also time the vendor library's GEMMs (results.gemm) */
  const char *gemm_shapes; /* CSV of shapes to time (m,n,k,layout,dtype); NULL = the standard grid */
} pfcal_opts;

/* One matrix product C[m,n] = A[m,k] B[k,n] as a training step issues it:
 * layout "NN" forward, "NT" data gradient, "TN" weight gradient. */
typedef struct pfcal_gemm_shape {
  double m, n, k;
  char layout[3];
  pf_precision prec;
} pfcal_gemm_shape;

/* What probe() and setup() found.  Strings are empty and numbers 0 when unknown. */
typedef struct pfcal_info {
  char name[PF_NAME_MAX];
  char vendor[16];  /* "nvidia", "amd", "intel", "arm" */
  char arch[64];    /* "sm_90", "gfx90a", "x86_64-avx512" */
  int count;        /* devices of this kind in the node */
  int units;        /* SMs, CUs or cores used */
  double clock_MHz; /* SM / core clock (max or current) */
  double mem_clock_MHz;
  double power_cap_W;                     /* 0 = not readable */
  double memory_B;                        /* device memory (host RAM for cpu) */
  double llc_B;                           /* last-level cache, all instances together */
  size_t array_B;                         /* stream array size chosen by setup() */
  char driver[64];                        /* driver version */
  char runtime[64];                       /* runtime version (CUDA/HIP/libc) */
  char pci_bus_id[PFCAL_MAX_DEVICES][32]; /* per device, for the power library */
} pfcal_info;

/* The function table.  Every measuring function takes one sample and returns
 * 0, or PF_EINVAL when the device lacks the feature (the harness records the
 * entry as unsupported and goes on), or another negative PF_E* code with a
 * detail set by pf_error_set() (the harness stops). */
typedef struct pfcal_backend {
  const char *name;         /* "cpu", "cuda", "hip" */
  const char *power_source; /* "rapl", "nvml", "rsmi" (pfcal_power_open) */
  /* Find the devices and fill info.  PF_ENODEV with a detail saying what was
   * looked for (library, device) and what to do. Must not create a GPU context
   * (so the harness can read bare idle power first). */
  int (*probe)(const pfcal_opts *o, pfcal_info *info);
  /* Create the context, allocate and initialise buffers (arrays >= 4x LLC). */
  int (*setup)(const pfcal_opts *o, pfcal_info *info);
  /* Seconds per launch of an empty kernel, back to back (cpu: one dispatch of
   * the worker pool and the join). */
  int (*launch)(double *s);
  /* Bandwidth of one pass of a stream kernel, counting the bytes the kernel
   * names (STREAM convention; no write-allocate traffic). */
  int (*stream)(pfcal_stream k, double *Bps);
  /* Non-tensor FMA throughput over all units. */
  int (*vector_fma)(pf_precision p, double *flops);
  /* Tensor / matrix-core instruction throughput over all units. NULL on cpu. */
  int (*tensor)(pf_precision p, double *flops);
  /* Seconds to move `bytes` from src to dst once (-1 = host memory, pinned).
   * Device count is info->count.  NULL on cpu. */
  int (*copy)(int src, int dst, size_t bytes, double *s);
  /* Open the vendor GEMM library at run time (dlopen: cuBLASLt, rocBLAS) and
   * write its name and version into lib.  PF_ENODEV with what was looked
   * for when it is missing.  NULL on cpu. */
  int (*gemm_open)(char *lib, size_t len);
  /* Seconds per call of the library GEMM of that shape, calls back to back
   * (kernel time; no host dispatch in it).  PF_EINVAL: shape or type not
   * supported on this device. */
  int (*gemm)(const pfcal_gemm_shape *s, double *seconds);
  /* Release everything; safe to call after a failed setup. */
  void (*teardown)(void);
} pfcal_backend;

/* The cpu back-end (calibrate/cpu/cpu_backend.c); GPU back-ends live in their
 * own executables (calibrate/gpu/kernels.cu). */
extern const pfcal_backend pfcal_cpu_backend;

/* ---- statistics (stats.c) --------------------------------------------- */

typedef struct pfcal_protocol {
  int warmup; /* untimed runs before the first sample */
  int min_samples;
  int max_samples;   /* <= PFCAL_MAX_SAMPLES */
  double target_cv;  /* stop when cv <= this after min_samples */
  double time_cap_s; /* stop when this much time has been spent sampling */
} pfcal_protocol;

/* The protocol for a mode: quick or full. */
pfcal_protocol pfcal_protocol_for(bool quick);

typedef struct pfcal_stat {
  const char *unit;     /* "FLOP/s", "B/s", "s"; static */
  bool lower_is_better; /* times: best = min; rates: best = max */
  bool measured;        /* false: unsupported or skipped */
  int n;
  double samples[PFCAL_MAX_SAMPLES];
  double median, best, mean, cv;
  double datasheet; /* 0 = no datasheet value */
  double power_W;   /* mean power while sampling, 0 = not readable */
  double clock_MHz; /* clock read after sampling, 0 = not readable */
  const char *flag; /* "ok", "below_band", "above_band", "high_cv", "unsupported"; static */
} pfcal_stat;

/* One sample of something; returns 0, PF_EINVAL (unsupported) or an error. */
typedef int (*pfcal_sample_fn)(void *ctx, double *value);

/* Run the protocol on fn: warm-up, samples until cv or cap. Fills st (unit and
 * lower_is_better must be set by the caller) and computes its statistics. */
int pfcal_measure(const pfcal_protocol *pr, pfcal_sample_fn fn, void *ctx, pfcal_stat *st);

/* Median, best, mean, cv and flag of st->samples[0..n). The flag compares the
 * median with st->datasheet when set (band [0.5, 1.05]), else flags a cv above
 * cv_flag. */
void pfcal_stat_finish(pfcal_stat *st, double cv_flag);

/* Median of v[0..n) (v is not modified); 0 when n == 0. */
double pfcal_median(const double *v, int n);

/* Fit t = alpha + bytes / beta to (bytes[i], t[i]) by least squares on the
 * relative error (weights 1/t^2), so small sizes fix alpha and large sizes
 * beta. Returns 0, or PF_EINVAL when fewer than 2 distinct sizes or the fit is
 * not physical (beta <= 0); alpha is clamped at 0. */
int pfcal_fit_alpha_beta(const double *bytes, const double *t, int n, double *alpha_s, double *beta_Bps);

/* ---- datasheet table (datasheet.c) ------------------------------------- */

/* Curated dense peaks of the target accelerators, matched by device name
 * (section 2.5: do not trust driver-derived peaks). */
typedef struct pfcal_datasheet {
  const char *match[4];      /* lower-case substrings; all must appear */
  double mem_lo_B, mem_hi_B; /* device memory range this entry is for; 0 = any */
  const char *label;
  double vector_flops[PF_NPREC]; /* 0 = unknown */
  double tensor_flops[PF_NPREC];
  double memory_bw_Bps;
  int units; /* SMs or CUs of one logical device, to tell parts of one marketing name apart; 0 = any */
  int dies;  /* logical devices in one package (2: an MI250/MI250X OAM's GCDs); 0 = 1 */
} pfcal_datasheet;

/* The entry for a device name, its memory and its SM/CU count (0: unknown), or NULL (cpu, unknown GPUs). Static. */
const pfcal_datasheet *pfcal_datasheet_find(const char *device_name, double memory_B, int units);

/* ---- power counters (power.c) ------------------------------------------ */

typedef struct pfcal_power pfcal_power;

/* Open a power source by name: "nvml" (dlopen libnvidia-ml.so.1), "rsmi"
 * (dlopen librocm_smi64.so), "rapl" (/sys/class/powercap).  pci_bus_id maps
 * device i to the library's device (may be NULL: index order); dies is the
 * datasheet's logical devices per package (2 lets rsmi pair an OAM's GCDs).
 * Returns NULL when the source cannot be read; never an error. Free with
 * pfcal_power_close. */
pfcal_power *pfcal_power_open(const char *source, int ndev, char (*pci_bus_id)[32], int dies);
void pfcal_power_close(pfcal_power *p);
const char *pfcal_power_source(const pfcal_power *p); /* "nvml", ... ; static */
/* How many logical devices device dev's readings cover: 2 for a GCD of an
 * MI250/MI250X OAM read through ROCm SMI (the package, on its primary die), else 1. */
int pfcal_power_share(const pfcal_power *p, int dev);
/* Where a dual-die device's power is read, from its energy count and its
 * partner's (< 0: no partner): its own counter alone, its own for the pair,
 * or the partner's for the pair (power.c). */
typedef enum { PFCAL_READ_OWN, PFCAL_READ_OWN_PAIR, PFCAL_READ_PARTNER_PAIR } pfcal_power_pair;
pfcal_power_pair pfcal_rsmi_pair(int64_t self, int64_t partner);
/* One device's share of a package reading: the package less its other dies
 * at their share of the package's bare idle (share - 1 of share parts). */
double pfcal_per_device_W(double package_W, double package_idle_W, int share);
/* Cumulative energy of device dev in J (all packages for rapl); 0 ok, <0 absent. */
int pfcal_power_energy_J(pfcal_power *p, int dev, double *J);
/* Instantaneous (or driver-averaged) power in W. */
int pfcal_power_W(pfcal_power *p, int dev, double *W);
int pfcal_power_cap_W(pfcal_power *p, int dev, double *W);
int pfcal_power_clock_MHz(pfcal_power *p, int dev, double *MHz);
/* Throttle / clock-event reason bit mask (nvml); <0 when not readable. */
int pfcal_power_throttle(pfcal_power *p, int dev, unsigned long long *mask);
int pfcal_power_driver(pfcal_power *p, char *buf, size_t len);

/* ---- the power model (powerfit.c) ------------------------------------- */

/* One operating point: mean power over a metered window and the utilisations
 * its achieved rate implies (fractions of the datasheet peaks). */
typedef struct pfcal_power_point {
  const char *name; /* static */
  double power_W;
  double u_tensor, u_hbm, u_vector;
  double rate;           /* achieved rate over the window */
  const char *rate_unit; /* "FLOP/s", "B/s"; static */
  bool in_fit;           /* used by the coefficient fit (known utilisation, not the register-only mma loop) */
} pfcal_power_point;

/* P = base + tensor_W u_tensor + hbm_W u_hbm + vector_W u_vector. */
typedef struct pfcal_power_coef {
  double tensor_W, hbm_W, vector_W;
  double rms_rel; /* root-mean-square relative error of the fit over its points */
} pfcal_power_coef;

/* Non-negative least-squares fit of the coefficients to n points over base_W
 * (the context power).  PF_EINVAL when no subset has a non-negative solution. */
int pfcal_power_fit(const pfcal_power_point *pts, int n, double base_W, pfcal_power_coef *out);
/* Run fn back to back for `warm` seconds, then `seconds` more metered by the
 * energy counter (else averaged power readings): *watts the mean power (0
 * when not readable), *mean_v the mean of fn's values over the window. */
int pfcal_power_window(pfcal_power *pw, int dev, pfcal_sample_fn fn, void *ctx, double warm, double seconds,
                       double *watts, double *mean_v);
/* Measure the operating points (library GEMM when have_gemm, triad stream,
 * FP32 vector, tensor mma), add "points" and the fitted "coefficients" to the
 * power_model object pm; *max_W is the highest point.  Where a reading covers
 * a package (pfcal_power_share > 1), each point is the device's share of it
 * (pfcal_per_device_W with the package's bare idle).  Unsupported points are
 * skipped; returns the back-end's error otherwise. */
int pfcal_power_points(const pfcal_backend *be, pfcal_power *pw, int dev, const pfcal_datasheet *ds, bool have_gemm,
                       double context_W, double package_idle_W, struct cJSON *pm, double *max_W);

/* ---- library GEMM table (gemm.c) --------------------------------------- */

/* The standard grid (transformer-layer shapes over hidden 1024-8192 and 2k-32k
 * tokens, square sizes for the ceiling) for the precisions in precs[0..np):
 * fills up to max shapes, returns how many.  Quick mode: fewer shapes, NN only. */
int pfcal_gemm_grid(bool quick, const pf_precision *precs, int np, pfcal_gemm_shape *out, int max);
/* Read shapes from a CSV file with the columns m,n,k,layout,dtype ('#'
 * comments allowed).  Caller frees *out.  Errors name file:line. */
int pfcal_gemm_read_shapes(const char *path, pfcal_gemm_shape **out, int *n);
/* Time every shape with the protocol and add results.gemm to results: rows
 * {m, n, k, layout, dtype, time_s, tflops, cv, n}, the library, and per
 * precision the best rate ("ceiling", the library GEMM ceiling).  Unsupported
 * shapes are listed in unsupported. */
int pfcal_run_gemm(const pfcal_backend *be, const pfcal_opts *o, const pfcal_protocol *pr, struct cJSON *results,
                   struct cJSON *unsupported);

/* ---- run and output (harness.c, output.c) ------------------------------ */

/* Run every measurement of be and build the calibration JSON document.
 * Caller frees *doc with cJSON_Delete().  Errors: the back-end's (PF_ENODEV
 * when no device), PF_ENOMEM. */
int pfcal_run(const pfcal_backend *be, const pfcal_opts *o, struct cJSON **doc);

/* Check before a long run that path can be written (model/core/file.c's rules:
 * read-only files and unwritable folders are refused, symlinks followed,
 * FIFOs streamed).  "-" and NULL mean stdout. */
int pfcal_output_check(const char *path, pf_output *o);

/* Write text to the checked output: through a temporary file beside it, then
 * renamed over it, so it is either the old file or the complete new one. */
int pfcal_output_write(pf_output *o, const char *text);

/* The UTC date for the document: $PF_FAKE_DATE when set (tests), else now in
 * ISO 8601 ("2025-01-31T12:00:00Z"). */
void pfcal_date(char *buf, size_t len);

/* Options shared by `preflight calibrate` and the back-end executables, from
 * one typed table (model/core/opts.h) that also prints the help. */
typedef struct pfcal_args {
  pfcal_opts o;
  const char *out;     /* -o FILE; NULL or "-" = stdout (borrowed from argv) */
  const char *backend; /* --backend NAME (borrowed), NULL when not given */
  const char *for_scenario; /* --for SCENARIO.cfg (borrowed; `preflight calibrate` only), NULL when not given */
  bool help;           /* --help was given */
  bool full, quiet;    /* --full (excludes --quick), --quiet (o.progress off) were given */
} pfcal_args;

/* Parse argv[first..argc).  with_backend: accept --backend.  Returns 0 or
 * PF_EINVAL with a detail naming the option. */
int pfcal_parse_args(int argc, char **argv, int first, bool with_backend, pfcal_args *a);

/* Print the usage of prog (the option table, then copy-pasteable examples). */
void pfcal_usage(FILE *f, const char *prog, bool with_backend);
/* `preflight calibrate`'s option table, ended by PF_OPT_END (for its man page and completion). */
const pf_opt *pfcal_options(void);

/* The whole command line of a GPU back-end executable (pfcal_parse_args,
 * pfcal_run, pfcal_output_write).  Returns the process exit status: 0, 2
 * usage or output error, 3 no device or no driver. */
int pfcal_main(int argc, char **argv, const pfcal_backend *be);

#ifdef __cplusplus
}
#endif
#endif
