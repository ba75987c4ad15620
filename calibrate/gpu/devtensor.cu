/* devtensor.cu - the calibration's matrix-instruction kernels (mma.sync on sm_80/sm_90, MFMA on gfx90a) and their
 * launcher (devkern.h): ILP independent accumulators per warp, operands in registers, so the loop is the
 * instruction's issue rate.  What each measures: kernels.cu's header. */
#include "devkern.h"

extern "C" {
#include "core/core.h"
}

#define ILP 4 /* independent tensor accumulators per warp */

/* Tensor ceilings.  flag: 1 = this device's code has the instruction, -1 = not. */
#define TENSOR_PROLOGUE const unsigned gid = blockIdx.x * blockDim.x + threadIdx.x;
#define TENSOR_UNSUPPORTED                                                                                             \
  if (gid == 0) *flag = -1;                                                                                            \
  (void)out;                                                                                                           \
  (void)iters;                                                                                                         \
  (void)never;
#define TENSOR_EPILOGUE(s)                                                                                             \
  if ((s) == never) out[gid] = (s);                                                                                    \
  if (gid == 0) *flag = 1;

#if defined(PFCAL_MFMA_CDNA2)
typedef _Float16 pf_h4 __attribute__((ext_vector_type(4)));
typedef short pf_s4 __attribute__((ext_vector_type(4)));
typedef float pf_f16 __attribute__((ext_vector_type(16)));
typedef double pf_d4 __attribute__((ext_vector_type(4)));
#endif

#if defined(PFCAL_MMA_SM80)
/* m16n8k16 with 32-bit A (4 regs), B (2 regs) fragments and fp32 C/D */
#define MMA_16816(type)                                                                                                \
  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32." type "." type ".f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "            \
               "{%8,%9}, {%0,%1,%2,%3};\n"                                                                             \
               : "+f"(c[k][0]), "+f"(c[k][1]), "+f"(c[k][2]), "+f"(c[k][3])                                            \
               : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1))
#endif

static __global__ void k_tensor_fp16(float *out, int iters, float never, int *flag) {
  TENSOR_PROLOGUE
#if defined(PFCAL_MMA_SM80)
  unsigned a0 = 0x1C001C00u, a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0; /* fp16 2^-8 pairs */
  float c[ILP][4] = {};
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int k = 0; k < ILP; k++)
      MMA_16816("f16");
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < ILP; k++)
    s += c[k][0] + c[k][3];
  TENSOR_EPILOGUE(s)
#elif defined(PFCAL_MFMA_CDNA2)
  const _Float16 h = (_Float16)0.00390625f;
  pf_h4 a = {h, h, h, h};
  pf_f16 c[ILP] = {};
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int k = 0; k < ILP; k++)
      c[k] = __builtin_amdgcn_mfma_f32_32x32x8f16(a, a, c[k], 0, 0, 0);
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < ILP; k++)
    s += c[k][0] + c[k][15];
  TENSOR_EPILOGUE(s)
#else
  TENSOR_UNSUPPORTED
#endif
}

static __global__ void k_tensor_bf16(float *out, int iters, float never, int *flag) {
  TENSOR_PROLOGUE
#if defined(PFCAL_MMA_SM80)
  unsigned a0 = 0x3C003C00u, a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0; /* bf16 2^-7 pairs */
  float c[ILP][4] = {};
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int k = 0; k < ILP; k++)
      MMA_16816("bf16");
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < ILP; k++)
    s += c[k][0] + c[k][3];
  TENSOR_EPILOGUE(s)
#elif defined(PFCAL_MFMA_CDNA2)
  pf_s4 a = {0x3C00, 0x3C00, 0x3C00, 0x3C00}; /* bf16 bit patterns, 2^-7 */
  pf_f16 c[ILP] = {};
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int k = 0; k < ILP; k++)
      c[k] = __builtin_amdgcn_mfma_f32_32x32x8bf16_1k(a, a, c[k], 0, 0, 0);
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < ILP; k++)
    s += c[k][0] + c[k][15];
  TENSOR_EPILOGUE(s)
#else
  TENSOR_UNSUPPORTED
#endif
}

static __global__ void k_tensor_tf32(float *out, int iters, float never, int *flag) {
  TENSOR_PROLOGUE
#if defined(PFCAL_MMA_SM80)
  unsigned a0 = 0x3C000000u, a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0; /* tf32 2^-7 */
  float c[ILP][4] = {};
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int k = 0; k < ILP; k++)
      asm volatile("mma.sync.aligned.m16n8k8.row.col.f32.tf32.tf32.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                   "{%8,%9}, {%0,%1,%2,%3};\n"
                   : "+f"(c[k][0]), "+f"(c[k][1]), "+f"(c[k][2]), "+f"(c[k][3])
                   : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < ILP; k++)
    s += c[k][0] + c[k][3];
  TENSOR_EPILOGUE(s)
#else
  TENSOR_UNSUPPORTED
#endif
}

static __global__ void k_tensor_fp64(float *out, int iters, float never, int *flag) {
  TENSOR_PROLOGUE
#if defined(PFCAL_MMA_SM80)
  double a = 1e-3, b = 1e-3;
  double c[ILP][2] = {};
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int k = 0; k < ILP; k++)
      asm volatile("mma.sync.aligned.m8n8k4.row.col.f64.f64.f64.f64 {%0,%1}, {%2}, {%3}, {%0,%1};\n"
                   : "+d"(c[k][0]), "+d"(c[k][1])
                   : "d"(a), "d"(b));
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < ILP; k++)
    s += (float)(c[k][0] + c[k][1]);
  TENSOR_EPILOGUE(s)
#elif defined(PFCAL_MFMA_CDNA2)
  double a = 1e-3;
  pf_d4 c[ILP] = {};
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int k = 0; k < ILP; k++)
      c[k] = __builtin_amdgcn_mfma_f64_16x16x4f64(a, a, c[k], 0, 0, 0);
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < ILP; k++)
    s += (float)(c[k][0] + c[k][3]);
  TENSOR_EPILOGUE(s)
#else
  TENSOR_UNSUPPORTED
#endif
}

/* FP32 matrix instructions exist on CDNA (MFMA f32) but not on NVIDIA (tf32 instead). */
static __global__ void k_tensor_fp32(float *out, int iters, float never, int *flag) {
  TENSOR_PROLOGUE
#if defined(PFCAL_MFMA_CDNA2)
  float a = 1e-3f;
  pf_f16 c[ILP] = {};
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int k = 0; k < ILP; k++)
      c[k] = __builtin_amdgcn_mfma_f32_32x32x2f32(a, a, c[k], 0, 0, 0);
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < ILP; k++)
    s += c[k][0] + c[k][15];
  TENSOR_EPILOGUE(s)
#else
  TENSOR_UNSUPPORTED
#endif
}

static __global__ void k_tensor_fp8(float *out, int iters, float never, int *flag) {
  TENSOR_PROLOGUE
#if defined(PFCAL_MMA_FP8)
  unsigned a0 = 0x18181818u, a1 = a0, a2 = a0, a3 = a0, b0 = a0, b1 = a0; /* e4m3 2^-4 */
  float c[ILP][4] = {};
  for (int i = 0; i < iters; i++) {
#pragma unroll
    for (int k = 0; k < ILP; k++)
      asm volatile("mma.sync.aligned.m16n8k32.row.col.f32.e4m3.e4m3.f32 {%0,%1,%2,%3}, {%4,%5,%6,%7}, "
                   "{%8,%9}, {%0,%1,%2,%3};\n"
                   : "+f"(c[k][0]), "+f"(c[k][1]), "+f"(c[k][2]), "+f"(c[k][3])
                   : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
  }
  float s = 0;
#pragma unroll
  for (int k = 0; k < ILP; k++)
    s += c[k][0] + c[k][3];
  TENSOR_EPILOGUE(s)
#else
  TENSOR_UNSUPPORTED
#endif
}

typedef void (*tensor_kernel)(float *, int, float, int *);

/* FLOP per warp (wave) per instruction, by precision (0 = no kernel). */
#if defined(__HIPCC__)
static const double tensor_flop[PF_NPREC] = {/* fp64 16x16x4 */ 2.0 * 16 * 16 * 4,
                                             /* fp32 32x32x2 */ 2.0 * 32 * 32 * 2,
                                             /* tf32 */ 0,
                                             /* fp16 32x32x8 */ 2.0 * 32 * 32 * 8,
                                             /* bf16 32x32x8 */ 2.0 * 32 * 32 * 8,
                                             /* fp8 */ 0};
#else
static const double tensor_flop[PF_NPREC] = {
    /* fp64 m8n8k4 */ 2.0 * 8 * 8 * 4,     /* fp32 */ 0,
    /* tf32 m16n8k8 */ 2.0 * 16 * 8 * 8,   /* fp16 m16n8k16 */ 2.0 * 16 * 8 * 16,
    /* bf16 m16n8k16 */ 2.0 * 16 * 8 * 16, /* fp8 m16n8k32 */ 2.0 * 16 * 8 * 32};
#endif
static const tensor_kernel tensor_kernels[PF_NPREC] = {k_tensor_fp64, k_tensor_fp32, k_tensor_tf32,
                                                       k_tensor_fp16, k_tensor_bf16, k_tensor_fp8};

void pfk_tensor(pf_precision p, int blocks, gpuStream_t s, float *out, int iters, int *flag) {
  if (p >= 0 && p < PF_NPREC) tensor_kernels[p]<<<blocks, PFCAL_BLOCK, 0, s>>>(out, iters, -1.0f, flag);
}

gpuError_t pfk_tensor_occupancy(pf_precision p, int *occ) {
  if (p < 0 || p >= PF_NPREC) return gpuErrorInvalidValue;
  return gpuOccupancyMaxActiveBlocksPerMultiprocessor(occ, tensor_kernels[p], PFCAL_BLOCK, 0);
}

double pfk_tensor_warp_flop(pf_precision p) { return p >= 0 && p < PF_NPREC ? ILP * tensor_flop[p] : 0.0; }
