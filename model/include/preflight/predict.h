/* predict.h - one prediction: the simulated iteration and what follows from it.
 *
 * pf_predict() checks the plan and memory, computes per-stage work, runs the
 * pipeline engine (SimGrid DES of one representative pipeline by default),
 * adds data-parallel collectives started when the DES says their gradient
 * buckets are ready, the optimizer step, and the energy over the timeline.
 */
#ifndef PREFLIGHT_PREDICT_H
#define PREFLIGHT_PREDICT_H

#include "preflight/memory.h"
#include "preflight/plan.h"

#define PF_MAX_WARNINGS 8

/* The iteration, split (sums to iteration_time_s): tp_comm is the exposed TP/SP/CP time on the critical
 * stage (with what overlapped TP collectives cost the GEMMs they hide behind); dp_interference what the DP
 * collectives hidden behind backward / forward cost that compute. */
typedef struct pf_breakdown {
  double compute, tp_comm, pp_bubble, pp_comm, dp_comm_exposed, optimizer, overhead, dp_interference;
  double input;                  /* the step waits for the input pipeline (prefetching hides the rest) */
} pf_breakdown;

/* The breakdown's terms in the order every report prints them (prediction JSON and table, tune's why-not):
 * name ("compute", "tp_comm", ...; static) and value of term i < PF_BREAKDOWN_N. */
enum { PF_BREAKDOWN_N = 9 };
const char *pf_breakdown_name(int i);
double pf_breakdown_get(const pf_breakdown *b, int i);

/* What one used device does over a window (averages over the job's devices). */
typedef struct pf_energy_use {
  double window_s;        /* wall time of the window */
  double busy_s;          /* compute kernels (incl. launch floors) */
  double tensor_util_s, vector_util_s, hbm_util_s; /* sums of time x utilisation over those kernels */
  double compute_bound_s; /* busy time whose length follows the SM clock (compute-bound bodies) */
  double comm_s;          /* communication kernels on no compute's shadow (exposed); hidden ones are
                             charged once, inside the compute they overlap */
  double clock_ratio;     /* SM clock / full clock the kernels ran at (0 = 1) */
} pf_energy_use;

/* Energy of one window (an iteration in a prediction), whole job, by metering scope (energy.h):
 *   gpu        the devices the job uses (device sensors: NVML, amd-smi per GCD share)
 *   package    the packages holding them: both GCDs of an MI250X, a GH200 module with Grace and LPDDR5X
 *   node_gpus  every device of the job's nodes, unused ones at idle (GPU sensors of whole nodes)
 *   node       whole nodes: all packages, CPUs, host memory, NICs, board (node_base)
 *   facility   (node + the job's share of switches) x PUE */
/* The compute of the critical stage per iteration split by what bounds it
 * (kernel.h): kernel bodies bound by math or by memory, launch floors, and the
 * time the GPU waits for the host to dispatch (host-bound); host_op_s is the
 * dispatch cost per framework operator the prediction used. */
typedef struct pf_compute_split {
  double compute_bound, memory_bound, launch, host_bound, host_op_s, ops;
} pf_compute_split;

/* Input pipeline time per iteration (0 when off), the longer of the node's read and a GPU's loader work. */
struct pf_scenario;
double pf_input_time(const struct pf_scenario *sc);

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
} pf_energy;

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
} pf_comm_summary;

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
} pf_prediction;

/* Predict one scenario (pf_plan_check() is called). Returns 0, or PF_EPLAN /
 * PF_ENOFIT / PF_ESIM with detail; on PF_ENOFIT *out is filled (memory, fits
 * = false) so callers can print the numbers. */
int pf_predict(pf_scenario *sc, pf_prediction *out);

/* Add a warning (truncated to fit). */
void pf_prediction_warn(pf_prediction *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

#endif
