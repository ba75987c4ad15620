/* blas.h - the vendor GEMM library behind the GPU back-ends (blas.cu):
 * cuBLASLt (CUDA) or rocBLAS (HIP), opened with dlopen at run time. */
#ifndef PFCAL_BLAS_H
#define PFCAL_BLAS_H

#include "gpu.h"
#include "pfcal.h"

/* Open the library; its name and version go to lib.  PF_ENODEV with what was
 * looked for when it is missing. */
int pfcal_blas_open(char *lib, size_t len);
/* Seconds per call of the library GEMM of shape s on random operands drawn
 * from seed, calls back to back on stream st.  PF_EINVAL: not supported
 * (type, shape, memory) on this device. */
int pfcal_blas_gemm(const pfcal_gemm_shape *s, gpuStream_t st, unsigned long long seed, double *seconds);
/* Release the handle, workspace and library; safe when never opened. */
void pfcal_blas_close(void);

#endif
