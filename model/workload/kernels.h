/* kernels.h - the kernels a training step launches, described (kind, shape,
 * bytes, pass, host operators) but not priced: workloads build them
 * (layers.c here, the transformer's in compute/compute.c) and compute/kernel.c
 * prices them on a device (DESIGN 5.2). */
#ifndef PREFLIGHT_KERNELS_H
#define PREFLIGHT_KERNELS_H

#include "machine/machine.h"

#include <stdbool.h>

typedef enum {
  PF_KERNEL_GEMM,      /* dense matrix product C[m,n] = A[m,k] B[k,n]; `batch` of them per launch */
  PF_KERNEL_CONV,      /* convolution priced as its implicit GEMM (m = N Ho Wo, n = Cout, k = Cin kh kw / groups) */
  PF_KERNEL_ATTENTION, /* fused (flash) attention core: m = query length, n = key length, k = the queries' and keys'
                          head width, dv the values' (0: k), batch = b x heads */
  PF_KERNEL_MEMORY,    /* element-wise, normalisation, softmax, reductions, copies: bytes-bound */
  PF_KERNEL_OPTIMIZER, /* multi-tensor optimizer apply: bytes-bound */
  PF_KERNEL_FIXED,     /* a kernel whose time is known (fixed_s), e.g. a collective priced by the comm module */
  PF_KERNEL_NKINDS
} pf_kernel_kind;

/* Which pass a kernel belongs to (a fused attention backward is a different kernel from its forward). */
typedef enum { PF_PASS_FWD, PF_PASS_BWD, PF_PASS_OPT } pf_pass;

typedef struct pf_kernel {
  pf_kernel_kind kind;
  const char *name;     /* static label ("qkv", "fc1.dgrad", "softmax"); may be NULL */
  pf_precision prec;    /* data type of the math */
  pf_gemm_layout layout;
  pf_pass pass;
  double m, n, k;       /* shape of one product (GEMM, CONV, ATTENTION) */
  double dv;            /* ATTENTION: the values' head width where it differs from k (MLA's 128 against 192); 0: k */
  double window;        /* ATTENTION: keys before a query it sees at most (a sliding window); 0: all of them */
  double batch;         /* products per launch; 0 means 1 */
  double flops;         /* FLOPs of one launch; 0 = pf_kernel_flops() (2 m n k batch for GEMM and CONV; attention
                           2 m n (k + dv) batch forward, 2 m n (3 k + 2 dv) batch backward) */
  double bytes;         /* HBM bytes read + written by one launch */
  double count;         /* identical launches back to back; 0 means 1 */
  double host_ops;      /* framework operators the host dispatches per launch (0: fused into the previous one) */
  double host_s;        /* host time per launch besides its operators' dispatch (an optimizer's Python loop) */
  double fixed_s;       /* PF_KERNEL_FIXED: time of one launch */
  bool grouped;         /* GEMM: the batch products are one grouped GEMM of a MoE layer's experts, each
                           expert's rows padded to the kernel's M block (compute/kernel.c) */
  bool comm;            /* FIXED: a collective the framework runs on the compute stream (DataParallel's NCCL
                           broadcast and reduce): its kernels spin on every GPU it spans, at power.comm (energy.c) */
  bool sync;            /* the host waits for this kernel to end before it issues the next one (a
                           device-to-host copy the host reads, e.g. a MoE layer's tokens per expert) */
  double vec_flops;     /* FP32 operations on the CUDA cores per launch besides the kind's own count (an optimizer's
                           arithmetic): the power model's vector work, not time (compute/kernel.c) */
  bool causal;          /* ATTENTION under a causal mask: the key blocks wholly above the diagonal are skipped
                           (pf_kernel_flops counts what runs) */
  unsigned char graph;  /* the module of the layer that replays it as a CUDA graph (a PF_GRAPH_* bit of
                           --cuda-graph-modules; compute/graphs.c); 0: issued eagerly */
  double rate_scale;    /* GEMM: its math at rate_scale x the device's rate for the shape (0 = 1), e.g. an FP8
                           recipe's products slower than the per-tensor table's (compute/fp8.c) */
  double wgrad_scale;   /* GEMM: the rate scale of its weight-gradient copy in the backward (0 = rate_scale) */
} pf_kernel;

/* FLOPs of one launch of k (k->flops when set, else the kind's count).  A fused attention kernel computes
 * forward 2 m n (k + dv) per head (the scores, k wide, and their product with the values, dv wide), backward
 * 2 m n (3 k + 2 dv): the scores again, dV = P^T dO and dP = dO V^T (dv wide), dQ = dS K and dK = dS^T Q (k
 * wide), 2.5x the forward where k = dv (FlashAttention-2's count, Dao 2023 section 3); under a causal
 * mask FlashAttention skips the key blocks above the diagonal and computes the diagonal ones whole, so per
 * query row half the keys plus half a block run: (n + PF_FLASH_BLOCK_N) / 2n of the full count (with context
 * parallelism's load-balanced chunks, m = n / CP queries of n keys, the same share).  Under a sliding window
 * of W keys a block of queries runs the key blocks its band touches, (W + PF_FLASH_BLOCK_N) / n of the full
 * count (pf_kernel_keys). */
#define PF_FLASH_BLOCK_N 128.0 /* FlashAttention-3's key tile at head dim 128 under a causal mask (128 x 128:
                                  Dao-AILab/flash-attention hopper/tile_size.h, tile_size_fwd_sm90) */
double pf_kernel_flops(const pf_kernel *k);
/* The keys an attention kernel's query row runs against: n, or its sliding window's blocks. */
double pf_kernel_keys(const pf_kernel *k);
/* An attention kernel's values' head width: dv, or k where they are as wide as the queries and keys. */
double pf_kernel_dv(const pf_kernel *k);
/* An attention kernel's FLOPs per query-key pair of one head in its pass: 2 (k + dv) forward, 2 (3 k + 2 dv)
 * backward (pf_kernel_flops). */
double pf_attention_pair_flops(const pf_kernel *k);

/* ---- lists ---- */

typedef struct pf_kernel_list {
  int n, cap;
  pf_kernel *k;         /* owned */
} pf_kernel_list;

/* Append a copy of *k.  Returns 0 or PF_ENOMEM. */
int pf_kernel_list_add(pf_kernel_list *l, const pf_kernel *k);
void pf_kernel_list_free(pf_kernel_list *l);

#endif
