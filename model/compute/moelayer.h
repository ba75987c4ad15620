/* moelayer.h - the kernels of a mixture-of-experts FFN and of Multi-head Latent Attention (moelayer.c), and
 * the two kernel builders of a transformer layer they share with compute.c.  Internal to module compute. */
#ifndef PREFLIGHT_MOELAYER_H
#define PREFLIGHT_MOELAYER_H

#include "compute.h"
#include "job/job.h"
#include "workload/workload.h"

/* a GEMM of the layer at the scenario's precision (batch products per launch), and a bytes-bound kernel */
int pf_layer_gemm(pf_kernel_list *l, const pf_scenario *sc, const char *name, double m, double n, double k,
                  double batch);
int pf_layer_mem(pf_kernel_list *l, const char *name, double bytes);

/* The forward kernels of the FFN of one MoE layer for one microbatch on one GPU (router, permutation,
 * the experts' grouped GEMMs, the shared experts, the host synchronisation of the dropless path). */
int pf_moe_ffn_forward(const pf_scenario *sc, pf_kernel_list *f);
/* The forward projections of MLA (queries, the latent keys and values, their norms, the output) */
int pf_mla_forward(const pf_scenario *sc, pf_kernel_list *f);

/* Add the MoE kernels of l, each run `times` (count included), to *s at their standalone price. */
int pf_moe_split_add(const pf_kernel_env *env, const pf_kernel_list *l, double times, pf_moe_split *s);

#endif
