/* memory.h - memory per GPU: weights, gradients, optimizer state, activations.
 *
 * Weights in the training precision (2 B for fp16/bf16), fp32 main gradients
 * (4 B, Megatron's DDP grad buffer), Adam with fp32 master weights and two
 * moments (12 B), divided over DP with the distributed optimizer (ZeRO-1); gradients and parameters
 * too at ZeRO-2 and ZeRO-3, plus the largest unit's unsharded working set (memory.c).
 * Activations per layer follow Korthikanti et al., "Reducing Activation
 * Recomputation in Large Transformer Models" (MLSys 2023), Table 2, generalised
 * for GQA and SwiGLU; the first pipeline stage keeps the most microbatches in
 * flight (1F1B: PP; interleaved: PP (1 + (PP-1)/(PP V)); GPipe: all).
 */
#ifndef PREFLIGHT_MEMORY_H
#define PREFLIGHT_MEMORY_H

#include "plan.h"

typedef struct pf_memory {
  double weights_B, gradients_B, optimizer_B, activations_B, overhead_B, total_B, capacity_B;
  double working_B;             /* ZeRO-2/3: the largest unit's unsharded gradient (and gathered parameters) */
  double act_per_layer_B;       /* one microbatch, one layer, on one GPU */
  double inflight_microbatches; /* on the worst stage */
  int worst_stage;
} pf_memory;

/* Fill *m for the worst (largest) pipeline stage. Does not fail. */
void pf_memory_estimate(const pf_scenario *sc, pf_memory *m);

/* 0 if it fits, else PF_ENOFIT with the numbers and a hint. */
int pf_memory_check(const pf_scenario *sc, const pf_memory *m);

/* Activation bytes of one transformer layer for one microbatch on one GPU. */
double pf_memory_act_per_layer(const pf_scenario *sc);

#endif
