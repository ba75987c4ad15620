/* kernel.h - the kernels a training step launches, what each costs on a
 * device, and the step they make together with the host that dispatches them
 * (DESIGN 5.2).
 *
 * A step is an ordered list of kernels (pf_kernel_list), built per layer kind
 * (compute.c for transformers, layers.c for layer-list workloads).  One launch
 * of a kernel costs
 *   t = max(FLOPs / achieved rate(shape, dtype), bytes / achieved HBM bandwidth) + floor
 * where the achieved rate comes from the device's GEMM table or its fallback
 * curve (kernel.c) and the floor is the kernel's minimum duration on the GPU.
 * Each framework operator also costs the host a dispatch time (host_op_s of
 * the environment: eager framework, CUDA graphs, compiled).  The host runs
 * ahead of the GPU asynchronously, so the step is the later of two chains,
 * never their sum:
 *   H_i = H_{i-1} + h_i                 host has issued kernel i
 *   G_i = max(G_{i-1}, H_i) + t_i       GPU ends kernel i (issued, previous done)
 * A kernel the host waits for (sync: a device-to-host copy it reads) sets H_i = max(H_i, G_i), so the
 * host's lead is lost and the kernels after it wait for their dispatch.
 * The GPU is idle (host-bound) for G - sum(t).  pf_step accumulates this
 * timeline plus what the energy model needs: sum of t x utilisation of the
 * tensor units, the vector units and HBM over the step.
 */
#ifndef PREFLIGHT_KERNEL_H
#define PREFLIGHT_KERNEL_H

#include "machine/machine.h"
#include "workload/workload.h"

/* What bounds a kernel (or what the GPU waits for). */
typedef enum { PF_LIMIT_COMPUTE, PF_LIMIT_MEMORY, PF_LIMIT_FLOOR, PF_LIMIT_FIXED, PF_LIMIT_N } pf_limit;
const char *pf_limit_name(pf_limit l); /* "compute", "memory", "launch", "fixed"; static */

typedef struct pf_kernel_cost {
  double time_s;        /* one launch on the GPU */
  double compute_s, memory_s, floor_s;
  double rate_flops;    /* achieved FLOP/s of the math (0 for memory kernels) */
  double u_tensor, u_vector, u_hbm; /* utilisation over time_s: achieved / datasheet peak, 0..1 */
  pf_limit limit;
} pf_kernel_cost;

/* Everything a kernel's price depends on besides the kernel itself. */
typedef struct pf_kernel_env {
  const pf_device *dev; /* borrowed */
  double host_op_s;     /* host dispatch time per framework operator (forward) */
  double host_bwd_op_s; /* per autograd backward node (the backward lists are run with it as host_op_s) */
  double eff_scale;     /* fit overlay: achieved rates x eff_scale (1 = none; 0 is taken as 1) */
  double clock_ratio;   /* SM clock / full clock under a power cap: the math of a kernel runs at x
                           clock_ratio, its HBM stream does not (0 is taken as 1; energy.c) */
} pf_kernel_env;

/* Cost of one launch of k.  Returns 0, or PF_EINVAL for a kernel the device
 * cannot run (detail names it). */
int pf_kernel_cost_eval(const pf_kernel_env *env, const pf_kernel *k, pf_kernel_cost *c);

/* Achievable fraction of the device's dense peak for one GEMM of that shape
 * and layout (table, else the fallback curve; machine/gemmtab.h).  Convolutions use it
 * for their implicit GEMM, times the device's conv_eff. */
double pf_gemm_eff(const pf_device *d, pf_precision p, pf_gemm_layout layout, double m, double n, double k);
/* Achievable fraction of the dense peak for a fused attention kernel of that
 * pass: m query and n key positions, head dim dh (the mean of the keys' and values' widths where they
 * differ), batch = b x heads (kernel.c). */
double pf_attention_eff(const pf_device *d, pf_precision p, pf_pass pass, double m, double n, double dh,
                        double batch);
/* Dense peak FLOP/s the math of precision p runs at on d (falls back to fp16,
 * then fp32 vector, when the precision has no tensor path; fp8 never falls
 * back: 0 on a device without fp8). */
double pf_kernel_peak(const pf_device *d, pf_precision p);
/* 0 when d can train in precision p; PF_EINVAL naming the device when it
 * cannot (fp8 on a part without fp8 tensor cores: A100, MI250X, ...), rather
 * than running it at another precision's rate. */
int pf_device_precision_check(const pf_device *d, pf_precision p);
/* Time to stream bytes through HBM at the achievable bandwidth, with the
 * memory-latency ramp of one kernel (0 for no bytes). */
double pf_mem_time(const pf_device *d, double bytes);

/* Observer of every kernel pf_step_add prices (NULL: none), e.g. to list the
 * GEMM shapes of a scenario's step for `calibrate --for`.  Process-wide and
 * not thread-safe: set it, run, clear it. */
typedef void (*pf_kernel_observer)(void *ctx, const pf_kernel *k);
void pf_kernel_observe(pf_kernel_observer fn, void *ctx);

/* ---- the step timeline ---- */

typedef struct pf_step {
  double host_s;        /* H: when the host has issued the last kernel */
  double end_s;         /* G: when the GPU has finished the last kernel */
  double busy_s;        /* sum of kernel times */
  double dispatch_s;    /* sum of host dispatch times */
  double limit_s[PF_LIMIT_N]; /* busy time split: the bodies of compute-, memory-bound and fixed kernels,
                                 and every launch's floor under PF_LIMIT_FLOOR (sum = busy_s) */
  double flops, bytes;
  double fp8_math_s, fp8_scaling_s; /* busy time of FP8 math kernels and of FP8 scaling kernels (memory kernels
                                       tagged fp8: casts, transposes, amax; compute/fp8.c) */
  double tensor_util_s, vector_util_s, hbm_util_s; /* sum of time x utilisation */
  double kernels, ops;
  double comm_s;        /* of busy_s, the communication kernels' (pf_kernel.comm) */
  double python_s;      /* host time besides the operators' dispatch (host_s: framework Python of layers, optimizer) */
} pf_step;

/* Advance the timeline by k (count launches).  Returns 0 or the error of
 * pf_kernel_cost_eval. */
int pf_step_add(pf_step *s, const pf_kernel_env *env, const pf_kernel *k);
/* Run the list `repeat` times (e.g. the layers of a stage); exact: the
 * timeline is stepped for the first repetitions and then extended by the
 * periodic increment, which the max-plus recurrence reaches after one period. */
int pf_step_run(pf_step *s, const pf_kernel_env *env, const pf_kernel_list *l, int repeat);
/* Time of the step (G); the GPU is idle for pf_step_time - busy_s waiting on the host. */
static inline double pf_step_time(const pf_step *s) { return s->end_s; }
static inline double pf_step_host_bound_s(const pf_step *s) {
  return s->end_s > s->busy_s ? s->end_s - s->busy_s : 0.0;
}
/* Add b's totals to a (a's timeline is extended by b's, as if b ran after a
 * with the host caught up). */
void pf_step_append(pf_step *a, const pf_step *b);
/* Multiply every total by f (f identical steps back to back, host caught up between them). */
void pf_step_scale(pf_step *s, double f);

#endif
