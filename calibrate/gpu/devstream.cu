/* devstream.cu - the calibration's memory-stream and vector-FMA kernels (CUDA and HIP from one source) and their
 * launchers (devkern.h).  What each measures and which benchmark it follows: kernels.cu's header. */
#include "devkern.h"

extern "C" {
#include "core/core.h"
}

static __global__ void k_init(double *a, double *b, double *c, size_t n, unsigned long long seed) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    double r = (double)(pfcal_mix64(i ^ (seed * 0x9E3779B97F4A7C15ull)) >> 11) * (1.0 / 9007199254740992.0);
    a[i] = 1.0 + r;
    b[i] = 2.0 - r;
    c[i] = 0.5 + 0.25 * r;
  }
}

static __global__ void k_empty(void) {}

static __global__ void k_read(const double2 *__restrict__ a, size_t n2, double *out, double never) {
  double sx = 0.0, sy = 0.0;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += (size_t)gridDim.x * blockDim.x) {
    double2 v = a[i];
    sx += v.x;
    sy += v.y;
  }
  if (sx + sy == never) out[0] = sx; /* never true: keeps the loads */
}

static __global__ void k_write(double2 *__restrict__ a, size_t n2, double v) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += (size_t)gridDim.x * blockDim.x)
    a[i] = make_double2(v, v);
}

static __global__ void k_copy(const double2 *__restrict__ a, double2 *__restrict__ c, size_t n2) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += (size_t)gridDim.x * blockDim.x)
    c[i] = a[i];
}

static __global__ void k_triad(double2 *__restrict__ a, const double2 *__restrict__ b, const double2 *__restrict__ c,
                               size_t n2, double s) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += (size_t)gridDim.x * blockDim.x) {
    double2 y = b[i], z = c[i];
    a[i] = make_double2(y.x + s * z.x, y.y + s * z.y);
  }
}

/* Vector FMA: 8 chains x 16 unrolled per iteration. */
#if defined(__HIPCC__)
typedef float vf2 __attribute__((ext_vector_type(2))); /* packed FP32 on CDNA */
__device__ __forceinline__ float first(vf2 v) { return v.x; }
#endif
__device__ __forceinline__ float first(float v) { return v; }
__device__ __forceinline__ float first(double v) { return (float)v; }

template <typename T> static __global__ void k_fma(float *out, int iters, T a, T b, float never) {
  T c0 = a, c1 = b, c2 = a + b, c3 = a * b, c4 = a + a, c5 = b + b, c6 = a - b, c7 = b - a;
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int u = 0; u < 16; u++) {
      c0 = c0 * a + b;
      c1 = c1 * a + b;
      c2 = c2 * a + b;
      c3 = c3 * a + b;
      c4 = c4 * a + b;
      c5 = c5 * a + b;
      c6 = c6 * a + b;
      c7 = c7 * a + b;
    }
  }
  T s = ((c0 + c1) + (c2 + c3)) + ((c4 + c5) + (c6 + c7));
  if (first(s) == never) out[blockIdx.x * blockDim.x + threadIdx.x] = first(s);
}

static __global__ void k_fma_h2(float *out, int iters, float af, float bf, float never) {
  __half2 a = __float2half2_rn(af), b = __float2half2_rn(bf);
  __half2 c0 = a, c1 = b, c2 = __hadd2(a, b), c3 = __hmul2(a, b), c4 = __hadd2(a, a), c5 = __hadd2(b, b),
          c6 = __hsub2(a, b), c7 = __hsub2(b, a);
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int u = 0; u < 16; u++) {
      c0 = __hfma2(c0, a, b);
      c1 = __hfma2(c1, a, b);
      c2 = __hfma2(c2, a, b);
      c3 = __hfma2(c3, a, b);
      c4 = __hfma2(c4, a, b);
      c5 = __hfma2(c5, a, b);
      c6 = __hfma2(c6, a, b);
      c7 = __hfma2(c7, a, b);
    }
  }
  float s = __low2float(c0) + __low2float(c1) + __low2float(c2) + __low2float(c3) + __low2float(c4) + __low2float(c5) +
            __low2float(c6) + __high2float(c7);
  if (s == never) out[blockIdx.x * blockDim.x + threadIdx.x] = s;
}

void pfk_init(int blocks, gpuStream_t s, double *a, double *b, double *c, size_t n, unsigned long long seed) {
  k_init<<<blocks, PFCAL_BLOCK, 0, s>>>(a, b, c, n, seed);
}

void pfk_empty(gpuStream_t s) { k_empty<<<1, PFCAL_WARP, 0, s>>>(); }

void pfk_read(int blocks, gpuStream_t s, const double *a, size_t n2, double *out) {
  k_read<<<blocks, PFCAL_BLOCK, 0, s>>>((const double2 *)a, n2, out, -1.0);
}

void pfk_write(int blocks, gpuStream_t s, double *a, size_t n2, double v) {
  k_write<<<blocks, PFCAL_BLOCK, 0, s>>>((double2 *)a, n2, v);
}

void pfk_copy(int blocks, gpuStream_t s, const double *a, double *c, size_t n2) {
  k_copy<<<blocks, PFCAL_BLOCK, 0, s>>>((const double2 *)a, (double2 *)c, n2);
}

void pfk_triad(int blocks, gpuStream_t s, double *a, const double *b, const double *c, size_t n2, double scalar) {
  k_triad<<<blocks, PFCAL_BLOCK, 0, s>>>((double2 *)a, (const double2 *)b, (const double2 *)c, n2, scalar);
}

gpuError_t pfk_stream_occupancy(int *occ) {
  return gpuOccupancyMaxActiveBlocksPerMultiprocessor(occ, k_triad, PFCAL_BLOCK, 0);
}

void pfk_fma(pf_precision p, int blocks, gpuStream_t s, float *out, int iters) {
  switch (p) {
  case PF_FP64:
    k_fma<double><<<blocks, PFCAL_BLOCK, 0, s>>>(out, iters, 0.5, 0.5, -1.0f);
    break;
#if defined(__HIPCC__)
  case PF_FP32: {
    vf2 a = {0.5f, 0.5f};
    k_fma<vf2><<<blocks, PFCAL_BLOCK, 0, s>>>(out, iters, a, a, -1.0f);
    break;
  }
#else
  case PF_FP32:
    k_fma<float><<<blocks, PFCAL_BLOCK, 0, s>>>(out, iters, 0.5f, 0.5f, -1.0f);
    break;
#endif
  case PF_FP16:
    k_fma_h2<<<blocks, PFCAL_BLOCK, 0, s>>>(out, iters, 0.5f, 0.5f, -1.0f);
    break;
  default:
    break;
  }
}

gpuError_t pfk_fma_occupancy(pf_precision p, int *occ) {
  switch (p) {
  case PF_FP64:
    return gpuOccupancyMaxActiveBlocksPerMultiprocessor(occ, k_fma<double>, PFCAL_BLOCK, 0);
#if defined(__HIPCC__)
  case PF_FP32:
    return gpuOccupancyMaxActiveBlocksPerMultiprocessor(occ, k_fma<vf2>, PFCAL_BLOCK, 0);
#else
  case PF_FP32:
    return gpuOccupancyMaxActiveBlocksPerMultiprocessor(occ, k_fma<float>, PFCAL_BLOCK, 0);
#endif
  default:
    return gpuOccupancyMaxActiveBlocksPerMultiprocessor(occ, k_fma_h2, PFCAL_BLOCK, 0);
  }
}

/* 8 chains x 16 unrolled FMAs (2 FLOP each) per iteration, on 2 lanes for half2 and CDNA's packed FP32 */
double pfk_fma_thread_flop(pf_precision p) {
  double lanes = p == PF_FP16 ? 2.0 : 1.0;
#if defined(__HIPCC__)
  if (p == PF_FP32) lanes = 2.0;
#endif
  return p == PF_FP64 || p == PF_FP32 || p == PF_FP16 ? 2.0 * 8 * 16 * lanes : 0.0;
}
