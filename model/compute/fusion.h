/* fusion.h - element-wise kernel fusion of a compiled framework (torch.compile / XLA): fusion.c. */
#ifndef PREFLIGHT_COMPUTE_FUSION_H
#define PREFLIGHT_COMPUTE_FUSION_H

#include "kernel.h"

/* Merge each run of consecutive memory-bound kernels of list l (in execution order, the same launch count)
 * into one launch moving their bytes less each intermediate's write and read (fusion.c).  In place. */
int pf_fuse_elementwise(pf_kernel_list *l);

#endif
