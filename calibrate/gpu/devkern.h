/* devkern.h - the calibration kernels and their launchers: stream and vector FMA kernels (devstream.cu), matrix
 * instructions (devtensor.cu).  The host side that times them is kernels.cu; each launcher enqueues one kernel on
 * stream s and returns, the caller reads the launch's error (gpuGetLastError) and times it with events. */
#ifndef PFCAL_DEVKERN_H
#define PFCAL_DEVKERN_H

#include "gpu.h"
#include "pfcal.h"

#define PFCAL_BLOCK 256 /* threads per block: 8 warps (NVIDIA) or 4 waves (AMD) */

/* ---- devstream.cu ---- */

/* a, b, c filled with random-like doubles from (element, seed): 1 + r, 2 - r, 0.5 + r / 4, r in [0, 1) */
void pfk_init(int blocks, gpuStream_t s, double *a, double *b, double *c, size_t n, unsigned long long seed);
void pfk_empty(gpuStream_t s); /* one warp, no work: the launch overhead */
/* BabelStream's kernels over n2 16-byte pairs: read (sums into out only if never equal), write, copy, triad */
void pfk_read(int blocks, gpuStream_t s, const double *a, size_t n2, double *out);
void pfk_write(int blocks, gpuStream_t s, double *a, size_t n2, double v);
void pfk_copy(int blocks, gpuStream_t s, const double *a, double *c, size_t n2);
void pfk_triad(int blocks, gpuStream_t s, double *a, const double *b, const double *c, size_t n2, double scalar);
gpuError_t pfk_stream_occupancy(int *occ); /* resident triad blocks per SM/CU */

/* Register-only FMA chains in fp64, fp32 (packed on CDNA) or fp16 (half2); other precisions launch nothing. */
void pfk_fma(pf_precision p, int blocks, gpuStream_t s, float *out, int iters);
gpuError_t pfk_fma_occupancy(pf_precision p, int *occ);
double pfk_fma_thread_flop(pf_precision p); /* FLOP one thread does per loop iteration (0: no kernel) */

/* ---- devtensor.cu ---- */

/* Matrix instructions back to back from registers; *flag = 1 where this binary's device code has the
 * instruction for p, -1 where it does not. */
void pfk_tensor(pf_precision p, int blocks, gpuStream_t s, float *out, int iters, int *flag);
gpuError_t pfk_tensor_occupancy(pf_precision p, int *occ);
double pfk_tensor_warp_flop(pf_precision p); /* FLOP one warp (wave) does per loop iteration (0: no kernel) */

#endif
