/* fusion.c - torch.compile's fusion of element-wise kernels (docs/model.md, "Host dispatch").
 *
 * TorchInductor (Ansel et al. 2024, "PyTorch 2", ASPLOS, section 4: pointwise
 * and reduction kernels between library calls are fused into one generated
 * Triton kernel) launches one kernel for each run of memory-bound kernels
 * that follow each other without a matrix product between them, and its
 * min-cut partitioner recomputes such cheap intermediates in backward rather
 * than saving them (section 5).  So a fused run reads its inputs and writes
 * its outputs once: at each boundary inside the run the intermediate tensor
 * is neither written by the first kernel nor read again by the second.  A
 * kernel here knows only its total bytes; one that reads and writes a tensor
 * moves it at least twice, so the intermediate is taken as half the smaller
 * of the two kernels' traffic, saved twice (its write and its read):
 * min(b_i, b_i+1).  Norm (read twice, write once: 3 T) then activation
 * (2 T) saves 2 T, exactly the intermediate's write and read.
 */
#include "fusion.h"

#include <math.h>

int pf_fuse_elementwise(pf_kernel_list *l) {
  int out = 0;
  for (int i = 0; i < l->n; i++) {
    pf_kernel k = l->k[i];
    if (out > 0) {
      pf_kernel *prev = &l->k[out - 1];
      double cp = prev->count > 0 ? prev->count : 1.0, ck = k.count > 0 ? k.count : 1.0;
      if (prev->kind == PF_KERNEL_MEMORY && k.kind == PF_KERNEL_MEMORY && cp == ck && prev->bytes > 0 &&
          k.bytes > 0) {
        /* the run so far is one kernel: add k less the intermediate's write and read */
        double saved = fmin(prev->bytes, k.bytes);
        prev->bytes += k.bytes - saved;
        prev->name = "fused-elementwise";
        prev->host_ops = prev->host_ops > 0 || k.host_ops > 0 ? 1 : 0;
        continue;
      }
    }
    l->k[out++] = k;
  }
  l->n = out;
  return 0;
}
