/* kernels.c - FLOPs of a described kernel and the kernel list (see kernels.h). */
#include "kernels.h"

#include "core/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

double pf_kernel_keys(const pf_kernel *k) {
  return k->window > 0 && k->window + PF_FLASH_BLOCK_N < k->n ? k->window + PF_FLASH_BLOCK_N : k->n;
}

double pf_kernel_dv(const pf_kernel *k) { return k->dv > 0 ? k->dv : k->k; }

double pf_attention_pair_flops(const pf_kernel *k) {
  double dv = pf_kernel_dv(k);
  return 2.0 * (k->pass == PF_PASS_BWD ? 3.0 * k->k + 2.0 * dv : k->k + dv);
}

double pf_kernel_flops(const pf_kernel *k) {
  if (k->flops > 0) return k->flops;
  double batch = k->batch > 0 ? k->batch : 1.0;
  switch (k->kind) {
  case PF_KERNEL_GEMM:
  case PF_KERNEL_CONV: return 2.0 * k->m * k->n * k->k * batch;
  case PF_KERNEL_ATTENTION: {
    double keys = pf_kernel_keys(k), f = k->m * keys * pf_attention_pair_flops(k) * batch;
    return k->causal && k->n > 0 ? f * fmin(1.0, (k->n + PF_FLASH_BLOCK_N) / (2.0 * keys)) : f;
  }
  default: return 0.0;
  }
}

int pf_kernel_list_add(pf_kernel_list *l, const pf_kernel *k) {
  if (l->n == l->cap) {
    int cap = l->cap ? 2 * l->cap : 32;
    pf_kernel *p = realloc(l->k, (size_t)cap * sizeof *p);
    if (!p) return pf_error_set(PF_ENOMEM, "out of memory");
    l->k = p;
    l->cap = cap;
  }
  l->k[l->n++] = *k;
  return 0;
}

void pf_kernel_list_free(pf_kernel_list *l) {
  free(l->k);
  memset(l, 0, sizeof *l);
}
