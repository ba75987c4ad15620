/* gemm.h - the GEMM shapes one training step runs (`preflight calibrate --for`). */
#ifndef PREFLIGHT_COMPUTE_GEMM_H
#define PREFLIGHT_COMPUTE_GEMM_H

#include "machine/machine.h"

struct pf_scenario;
/* The distinct GEMM (and implicit-GEMM convolution) shapes one training step
 * of the scenario launches on its first and last pipeline stage, with their
 * layout and precision (time_s 0), for `calibrate --for`.  Batched products
 * (attention without a fused kernel) are left out: the library times them
 * through another call.  Caller frees *out.  Errors: the plan's or the
 * compute model's. */
int pf_scenario_gemm_shapes(struct pf_scenario *sc, pf_gemm_sample **out, int *n);

#endif
