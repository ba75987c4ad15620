/* compute.h - the work of one GPU per pipeline stage and microbatch: the
 * kernels of each layer kind (compute.c), priced and laid on the host/GPU
 * timeline by kernel.h.
 */
#ifndef PREFLIGHT_COMPUTE_H
#define PREFLIGHT_COMPUTE_H

#include "kernel.h"
#include "job/job.h"

#include <string.h>

/* The time of a MoE layer's own kernels (moelayer.c) per microbatch, forward and backward, at their
 * standalone price (the host/GPU timeline's waits not included): the router GEMM and its score/top-k
 * kernel, the host synchronisation, permute, the routed experts' grouped GEMMs and activation,
 * unpermute, the shared experts. */
typedef struct pf_moe_split {
  double router, host_sync, permute, experts, unpermute, shared;
} pf_moe_split;

typedef struct pf_stage_work {
  double fwd_s, bwd_s;           /* per microbatch, compute only (incl. recompute in bwd) */
  double fwd_tp_s, bwd_tp_s;     /* per microbatch, exposed TP/CP collectives (filled by comm.c) */
  double fwd_ep_s, bwd_ep_s;     /* per microbatch, the MoE dispatch/combine all-to-alls (comm/epa2a.c;
                                  * included in fwd_tp_s, bwd_tp_s, which the engines put on the critical path;
                                  * with --overlap-moe-expert-parallel-comm their exposed part and what the hidden
                                  * part costs the compute) */
  double ep_hidden_s, ep_sm_s;   /* per microbatch, of the all-to-alls: hidden behind another microbatch's compute,
                                    and that compute's slowdown by the SMs they hold (in fwd_ep_s + bwd_ep_s) */
  double gemm_s, mem_s, launch_s;/* breakdown of fwd+bwd compute per microbatch */
  double fwd_flops, bwd_flops;   /* hardware FLOPs per microbatch (incl. recompute) */
  double p2p_bytes;              /* activation bytes sent to the next stage per microbatch (comm.c) */
  double params;                 /* parameters held by one GPU of this stage */
  double expert_params;          /* of params: the routed experts' (sharded over EP x ETP), whose gradients are
                                    reduced over the expert-data-parallel group (engine/dpsync.c) */
  double optimizer_s;            /* optimizer step */
  double opt_params;             /* parameter updates per iteration (0 = params; a GAN's critic steps count) */
  int layers;
  double ends_fwd_s, ends_bwd_s; /* of fwd_s and bwd_s: the embedding (stage 0) and logits and loss (last stage),
                                    which sit on one chunk of an interleaved stage (engine/pipeline.c) */
  pf_step fwd, bwd;              /* kernel timelines of one microbatch (transformers; zero otherwise) */
  pf_step work;                  /* fwd + bwd of one microbatch for every workload kind (the energy model's
                                    utilisation sums; pf_stage_work_compute fills it from fwd and bwd) */
  pf_step opt;                   /* the optimizer step */
  pf_moe_split moe;              /* MoE layers' kernels per microbatch (zero for a dense model) */
  pf_step eval;                  /* one forward-only pass of one microbatch (evaluation): the forward kernels of
                                    a transformer, one forward of each network of a layer list (a GAN's critic
                                    steps are training's), the forward third of a FLOP-count workload */
} pf_stage_work;

/* Host CPU time per framework operator (hostqueue.c): forward operators,
 * autograd backward nodes (both times the replicas one interpreter drives
 * under single-process DataParallel) and the step's optimizer operators, for
 * the scenario's framework, --host-overhead mode and calibration. */
typedef struct pf_host_costs {
  double fwd_op_s, bwd_op_s, opt_op_s;
  double cpu_scale;              /* the node's eager host cost over the default (1; a calibration's ratio; 0 under
                                    graphs): scales host work that is not one operator per kernel */
  double replicas;               /* GPUs whose operators one host thread issues in turn (1: one process per GPU) */
  bool eager;                    /* operators dispatched one by one from Python (not graphs, compiled or TF graph mode) */
} pf_host_costs;
void pf_host_costs_get(const pf_scenario *sc, pf_host_costs *h);
/* The device-to-host copy of a few bytes the host then waits for (a MoE layer's tokens per expert). */
double pf_host_sync_s(const pf_scenario *sc);
/* Megatron-Core's own Python per layer pass (forward or backward), beyond its operators' dispatch, on the host
 * (measured; hostqueue.c): 0 for other frameworks and under CUDA graphs or torch.compile. */
double pf_host_layer_python_s(const pf_scenario *sc, bool moe, bool backward);
/* The host-only entry of a layer's framework Python (compute.c layer_forward; hostqueue.c). */
static inline bool pf_kernel_is_layer_python(const pf_kernel *k) {
  return k->kind == PF_KERNEL_FIXED && k->name && strcmp(k->name, "layer-python") == 0;
}
/* The share of a dropless MoE layer's Python that runs after its tokens-per-expert synchronisation
 * (pf_moe_python_after_sync). */
static inline bool pf_kernel_is_moe_python(const pf_kernel *k) {
  return k->kind == PF_KERNEL_FIXED && k->name && strcmp(k->name, "moe-python") == 0;
}
/* Partial CUDA graphs (--cuda-graph-modules; graphs.c).  pf_graph_mark tags the kernels of a layer's forward
 * (lf, and its attention core) with the captured module they belong to, scales the layer's Python in lf by the
 * share left eager and returns that share (1: nothing captured, or the host is not eager); pf_graph_launches
 * leaves each captured module of a list one host operator, its replay, on its first kernel. */
double pf_graph_mark(const pf_scenario *sc, bool moe, pf_kernel_list *lf, pf_kernel_list *core);
void pf_graph_launches(pf_kernel_list *l);
/* A dropless MoE layer's forward: the eager Python of its dispatcher and experts moved from the layer's start to
 * just after its tokens-per-expert synchronisation, where the host runs it with the GPU's queue empty (graphs.c;
 * after pf_graph_mark). */
int pf_moe_python_after_sync(const pf_scenario *sc, bool moe, pf_kernel_list *lf, const pf_kernel_list *core);
/* The forward cost (what reports print as host_op_s). */
double pf_host_op_s(const pf_scenario *sc);

/* The kernel lists of one microbatch on pipeline stage `stage` of a
 * transformer (compute.c): a dense layer's forward and backward, run dense
 * times, a MoE layer's (moelayer.c), run moe times, and the ends (embedding;
 * logits and loss, MTP's projections and heads), run once.  lps: the
 * model's layers on the stage (dense + moe less the MTP modules' layers). */
typedef struct pf_stage_lists {
  pf_kernel_list fwd, bwd, moe_fwd, moe_bwd, ends_f, ends_b;
  int lps, dense, moe;
} pf_stage_lists;
int pf_transformer_lists(const pf_scenario *sc, int stage, pf_stage_lists *L);
void pf_stage_lists_free(pf_stage_lists *L);


/* The kernels of one step after the last backward of the stage whose
 * forward and backward w holds (its params, opt_params and layers), for the
 * scenario's framework (stepkernels.c).  Appended to *l; 0 or PF_ENOMEM. */
int pf_step_tail_kernels(const pf_scenario *sc, const pf_stage_work *w, pf_kernel_list *l);

/* The kernels a forward-only pass (evaluation) adds to the stage's forward:
 * single-process DataParallel replicates the module before every forward,
 * in evaluation as in training (stepkernels.c); nothing otherwise.  Appended
 * to *l; 0 or PF_ENOMEM. */
int pf_step_eval_kernels(const pf_scenario *sc, const pf_stage_work *w, pf_kernel_list *l);

/* The copy of one microbatch's inputs from the host (stepkernels.c), on the
 * first stage before its forward; nothing when the inputs or the host link
 * are unknown.  Appended to *l; 0 or PF_ENOMEM. */
int pf_step_input_kernels(const pf_scenario *sc, pf_kernel_list *l);

/* Work of pipeline stage s (0..pp-1) for one microbatch at full clock, or
 * (pf_stage_work_at) with the SM clock at clock_ratio of full under a power
 * cap (the math of each kernel slows, its HBM stream does not: kernel.h).
 * Returns 0 or a negative PF_E* code (a kernel the device cannot run, out of
 * memory). */
int pf_stage_work_compute(const pf_scenario *sc, int stage, pf_stage_work *w);
int pf_stage_work_at(const pf_scenario *sc, double clock_ratio, int stage, pf_stage_work *w);

/* Kernels of one training step of a layer-list workload on one GPU (mbs
 * samples) priced on the host/GPU timeline; fills fwd_s, bwd_s, the
 * compute/memory/launch split, the FLOPs, params and opt_params of *out
 * (layerwork.c). */
int pf_layers_work(const pf_scenario *sc, const pf_kernel_env *env, pf_stage_work *out);

/* The kernel lists of a layer-list workload's step (layerwork.c): lists[4 n
 * + 0..3] forward, data gradient, weight gradient and second order of network
 * n (PF_LAYERS_PASSES), each run times[] per step; *n lists (4 x networks).
 * The caller frees each list. */
int pf_layers_kernel_lists(const pf_scenario *sc, pf_kernel_list *lists, double *times, int *n);

/* Every kernel of one iteration on one GPU of pipeline stage `stage`
 * (kernlist.c), merged by phase and name: launches per iteration, time of one
 * launch, total, what bounds it and where its price comes from; plus, per
 * phase, the time the GPU waits for the host (name "(host-bound wait)"). */
typedef struct pf_kernel_row {
  char name[48];
  const char *phase;             /* "forward", "backward", "step"; static */
  double launches, time_s, total_s;
  pf_limit limit;
  char source[160];
} pf_kernel_row;
typedef struct pf_kernel_rows {
  int n, cap;
  pf_kernel_row *r;              /* owned */
} pf_kernel_rows;
int pf_stage_kernel_rows(const pf_scenario *sc, int stage, pf_kernel_rows *out);
void pf_kernel_rows_free(pf_kernel_rows *r);
/* Where the price of a step kernel of stepkernels.c comes from (static; NULL: not one of them). */
const char *pf_step_kernel_source(const char *name);

/* The compute that communication hides behind (overlapgemm.c), at the
 * stage's achieved rate of compute-bound kernels (pf_stage_gemm_rate, FLOP/s):
 * per layer and microbatch on one GPU, the GEMMs --tp-comm-overlap hides the
 * TP all-gathers (QKV, FC1) and reduce-scatters (projection, FC2) behind, and
 * the attention core of the chunks context parallelism's ring exchange
 * hides behind. */
typedef struct pf_tp_gemms {
  double qkv_s, proj_s, fc1_s, fc2_s;
} pf_tp_gemms;
double pf_stage_gemm_rate(const pf_scenario *sc, const pf_stage_work *w);
void pf_stage_tp_gemms(const pf_scenario *sc, const pf_stage_work *w, pf_tp_gemms *g);
double pf_stage_cp_attention_s(const pf_scenario *sc, const pf_stage_work *w);

/* The rest of the module's public API (docs/architecture.md). */
#include "gemm.h"
#include "fp8.h"

#endif
