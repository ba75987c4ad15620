/* predict.h - one prediction: the simulated iteration and what follows from it.
 *
 * pf_predict() checks the plan and memory, computes per-stage work, runs the
 * pipeline engine (SimGrid DES of one representative pipeline by default),
 * adds data-parallel collectives started when the DES says their gradient
 * buckets are ready, the optimizer step, and the energy over the timeline.
 */
#ifndef PREFLIGHT_PREDICT_H
#define PREFLIGHT_PREDICT_H

#include "job/job.h"
#include "power/power.h"
#include "engine/engine.h"
#include "breakdown.h"

#define PF_MAX_WARNINGS 8

/* The compute of the critical stage per iteration split by what bounds it
 * (kernel.h): kernel bodies bound by math or by memory, launch floors, and the
 * time the GPU waits for the host to dispatch (host-bound); host_op_s is the
 * dispatch cost per framework operator the prediction used. */
typedef struct pf_compute_split {
  double compute_bound, memory_bound, launch, host_bound, host_op_s, ops;
  double host_python;           /* host time of the framework's own Python per layer (compute/hostqueue.c), of the
                                   forward and backward passes; part of the host's work, not of host_bound */
  double fp8_math, fp8_scaling; /* of the busy time: FP8 products, FP8 scaling passes (compute/fp8.c); 0 unless fp8 */
  pf_moe_split moe;             /* of the busy time: the MoE layers' kernels (compute/moelayer.c); 0 unless MoE */
} pf_compute_split;

/* Input pipeline time per iteration (0 when off), the longer of the node's read and a GPU's loader work. */
struct pf_scenario;
double pf_input_time(const struct pf_scenario *sc);
/* Whether the scenario prices its input pipeline (--input-rate, --input-sample-time or a fit's rate). */
bool pf_input_priced(const struct pf_scenario *sc);
/* Bytes of one sample: --sample-bytes, else the workload's (0: the workload reads nothing the model knows). */
double pf_sample_bytes(const struct pf_scenario *sc);
/* The rate one node's GPUs consume input at when each step takes step_s (B/s; 0 without sample bytes): what a
 * data pipeline must deliver for the step not to wait on it, priced or not. */
double pf_input_need_Bps(const struct pf_scenario *sc, double step_s);


/* Communication per GPU and iteration, averaged over the pipeline stages
 * (comm.h, dpsync.h): what communication kernels run, where, and what they
 * cost the compute they hide behind. */
typedef struct pf_comm_summary {
  double exposed_s;              /* on the critical path: tp_comm + pp_comm + dp_comm_exposed of the breakdown */
  double hidden_s;               /* under compute: TP/CP behind GEMMs and attention, DP behind backward / forward */
  double tp_hidden_s, dp_hidden_s;
  double interference_s;         /* compute slowed by the hidden collectives' kernels (part of the iteration) */
  double tp_s, pp_s, dp_s;       /* time communication kernels run, by kind (TP includes CP) */
  double intra_s, inter_s;       /* the same, inside the node / across nodes */
  double fabric_bytes, nic_bytes;/* bytes one GPU sends over the node's fabric / through its NIC */
  double dp_busbw_Bps;           /* bus bandwidth of stage 0's gradient collective (nccl-tests' definition) */
  char tp_algorithm[16], dp_protocol[16], placement[16];
  /* MoE EP all-to-alls of the critical stage per iteration (comm/epa2a.c): hidden behind another microbatch's
   * compute with --overlap-moe-expert-parallel-comm, and that compute's slowdown by the SMs they hold (part of
   * breakdown_s.ep_a2a, which is the exposed time plus this) */
  double ep_hidden_s, ep_sm_s;
  /* the routed experts' gradient (and parameter) collectives over the expert-data-parallel group, alone, on the
   * stage where they take longest (engine/dpsync.c; within dp_s); edp: that group's size (0: not apart) */
  double dp_expert_s;
  int edp;
} pf_comm_summary;

/* A prediction interval (study/interval.c; docs/validation.md, "Prediction intervals"): the nominal 80 %
 * range of what a run would measure, as factors on the predicted iteration time and scaling efficiency,
 * from the errors of the validation rows nearest to the prediction's regime.  n_time == 0: not computed
 * (renderers then print no range). */
typedef struct pf_pred_interval {
  int n_time, n_eff;            /* validation rows the time and the efficiency factors come from */
  double time_lo, time_hi;      /* measured time / predicted time: 10th and 90th percentile */
  double eff_lo, eff_hi;        /* measured / predicted scaling efficiency: 10th and 90th percentile */
  bool anchored;                /* a fit overlay's residual spread with the scale-extrapolation spread */
  char time_regime[320], eff_regime[160]; /* the regime the rows were drawn from, in words */
  int n_power;                  /* energy and power rows the power factors come from (0: no power range) */
  double power_lo, power_hi;    /* measured / predicted mean power, the time held: 10th and 90th percentile */
  char power_regime[160];
} pf_pred_interval;

typedef struct pf_prediction {
  double iteration_time_s, tokens_per_s, samples_per_s;
  double tflops_per_gpu, mfu;                    /* model FLOPs (Megatron's count) */
  double hw_tflops_per_gpu;                      /* including recomputation */
  double model_flops_per_iter;
  pf_breakdown breakdown_s;
  pf_compute_split compute_split_s;
  pf_memory memory;
  bool fits;
  pf_energy energy;
  double pipeline_s;                             /* DES makespan of the representative pipeline */
  double eval_iteration_s;                       /* one forward-only pass of the global batch (evaluation: the
                                                    microbatch schedule without backward, DP sync or optimizer) */
  pf_energy eval_energy;                         /* that pass's energy at every scope (its forward kernels) */
  double dp_comm_s;                              /* total DP collective time (before overlap) */
  char dp_algorithm[32];
  pf_comm_summary comm;
  char engine[16];
  int des_events;                                /* simulated activities (0 for analytic) */
  int nwarnings;
  char warnings[PF_MAX_WARNINGS][256];
  pf_pred_interval interval;                     /* filled by pf_interval_of (the commands), not by pf_predict */
} pf_prediction;

/* Predict one scenario (pf_plan_check() is called). Returns 0, or PF_EPLAN /
 * PF_ENOFIT / PF_ESIM with detail; on PF_ENOFIT *out is filled (memory, fits
 * = false) so callers can print the numbers. */
int pf_predict(const pf_scenario *job, pf_prediction *out);
/* pf_predict, and the iteration's timeline as data in *trace (the pipeline's
 * intervals, the DP collectives and optimizer of each stage) for a Chrome /
 * Perfetto trace (report/trace.c writes it).  Free with pf_trace_free(). */
int pf_predict_traced(const pf_scenario *job, pf_prediction *out, pf_trace *trace);
/* A prediction a command may print (sanity.c): iteration, throughput, MFU, power and energy finite and
 * positive, MFU at most 100 %, no negative breakdown term; else PF_ESIM naming the value (an engine failure). */
int pf_prediction_check(const pf_prediction *p);

/* A scenario made into the job pf_predict() reads (resolve.c), in two steps:
 * pf_scenario_apply_calibration() reads the calibration overlay sc names
 * (once, where the scenario is built: its machine then holds the measured
 * rates; sc->calibration_note keeps a --force-calibration mismatch, which
 * every prediction repeats as a warning), and pf_job_resolve() checks every
 * constraint that crosses fields (the power cap against the device's context
 * draw, the precision on the device, the parallel plan, deriving its free
 * fields, the engine against the overlap options) in the order a prediction
 * meets them.  Call pf_job_resolve() again after changing the plan (tune,
 * sweep).  0 or a negative PF_E* code with the message. */
int pf_scenario_apply_calibration(pf_scenario *sc);
int pf_job_resolve(pf_scenario *sc);
/* pf_job_resolve(sc), then pf_predict(sc, out) (out zeroed first): for a
 * caller that builds a scenario, predicts it once and prints the resolved
 * plan beside the prediction. */
int pf_resolve_predict(pf_scenario *sc, pf_prediction *out);

/* Add a warning (truncated to fit). */
void pf_prediction_warn(pf_prediction *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
