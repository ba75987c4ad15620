/* fp8.h - a transformer layer's kernels as they run under FP8 training
 * (Transformer Engine), per recipe (compute/fp8.c, docs/model.md "FP8"). */
#ifndef PREFLIGHT_COMPUTE_FP8_H
#define PREFLIGHT_COMPUTE_FP8_H

#include "kernel.h"

struct pf_scenario;

/* At --precision fp8, rewrite one layer's forward lists as they run: the
 * linear layers' GEMMs (in *lf) stay FP8, the attention core (*core) runs in
 * BF16 unless --fp8-attention, the output layer and everything else in
 * *ends in BF16; and add the scaling work of the recipe: to *fwd_q the
 * forward quantization of each FP8 GEMM's input, the per-step weight casts
 * (count 1 / grad_accum) and the amax/scale bookkeeping; to *bwd_q the
 * backward quantization (the gradient's cast and transpose, the input's
 * transpose).  layers: the stage's layers (bookkeeping runs once per stage).
 * No-op at other precisions.  Returns 0, PF_EINVAL (mxfp8 on a part before
 * Blackwell) or PF_ENOMEM. */
int pf_fp8_layer(const struct pf_scenario *sc, int layers, pf_kernel_list *lf, pf_kernel_list *core,
                 pf_kernel_list *ends, pf_kernel_list *fwd_q, pf_kernel_list *bwd_q);

/* Does kernel k run in FP8 (a kernel of the lists pf_fp8_layer rewrote)? */
static inline bool pf_kernel_is_fp8(const pf_kernel *k) { return k->prec == PF_FP8; }

#endif
