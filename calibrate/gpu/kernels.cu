/* kernels.cu - the CUDA and HIP calibration back-ends: one source, built by
 * nvcc into preflight-cal-cuda and by hipcc into preflight-cal-hip.
 *
 * What each measurement is, and which benchmark its design follows (see
 * shared/research/energy-and-calibration.md sections 2.1-2.6 and 4.1):
 *
 *  launch   1000 empty kernels back to back on one stream, host wall clock
 *           around launch-all + synchronize, divided by 1000: the per-kernel
 *           overhead a framework pays between dependent kernels (gpu-benches'
 *           launch-overhead test).  Expected a few microseconds.
 *  streams  BabelStream kernels read (sum), write, copy, triad on doubles with
 *           16-byte (double2) accesses, grid-stride, a full-occupancy grid from
 *           the occupancy API, arrays >= 4x L2 and >= 256 MiB each (quick) or
 *           >= 1 GiB (full, as gpu-benches), several launches between two
 *           events per sample; plus the runtime's device-local memcpy
 *           (nvbandwidth's device_local_copy).  Expected 85-92 % of HBM datasheet on A100/H100,
 *           78-88 % on an MI250X GCD (section 2.5).
 *  vector   peakperf/mixbench register-only FMA: 8 independent chains per
 *           thread, unrolled 16x, c = c * a + b with run-time a, b (fixed point
 *           at 1, no denormals), fp64, fp32 (packed float2 on CDNA, whose
 *           datasheet FP32 is the packed rate) and fp16 (half2 __hfma2).
 *           Expected 90-99 % of the clock-adjusted peak, 70-95 % of datasheet.
 *  tensor   register-resident matrix instructions, 4 independent accumulators
 *           per warp, full-occupancy grid: mma.sync m8n8k4 (fp64), m16n8k8
 *           (tf32), m16n8k16 (fp16, bf16), m16n8k32 e4m3 (fp8, sm_89 only:
 *           on sm_90 it is emulated and the timing loop lost its products, see
 *           gpu.h; Hopper's fp8 ceiling is the library GEMM, --gemm) on
 *           NVIDIA; MFMA 16x16x4 f64, 32x32x2 f32, 32x32x8 f16 and bf16_1k on
 *           gfx90a.  Expected >= 85 % of the clock-adjusted peak on A100 and
 *           MI250X.  On H100 mma.sync issues at most ~60-70 % of the dense peak
 *           (the full rate needs sm_90a wgmma from shared memory, Luo et al.
 *           arXiv 2402.13499), so H100 tensor ceilings here are a lower bound;
 *           the ceiling the simulator takes is the library GEMM (--gemm, blas.cu).
 *  copies   nvbandwidth / p2pBandwidthLatencyTest style: copy-engine
 *           cudaMemcpyAsync / cudaMemcpyPeerAsync from pinned host memory or
 *           device buffers, a batch of copies between two events per sample,
 *           sizes 64 KiB-128 MiB (quick) or 4 KiB-512 MiB (full), alpha-beta fit
 *           per link by the harness.  Expected PCIe 4/5 80-88 %, C2C ~77-85 %,
 *           NVLink 80-88 %, xGMI ~75 % of per-direction line rate.  No spin
 *           kernel: enqueue cost is part of alpha, as a framework sees it.
 *
 * The harness (calibrate/harness) runs the protocol and writes the JSON; this
 * file only takes samples.  When the driver is missing or there is no device,
 * probe() returns PF_ENODEV and the executable exits 3 with what it looked for.
 */
#include "blas.h"
#include "gpu.h"
#include "pfcal.h"
extern "C" {
#include "core/core.h"
}

#include <chrono>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstring>

/* ---- device code ------------------------------------------------------------ */

#define ILP 4     /* independent tensor accumulators per warp */
#define BLOCK 256 /* threads per block: 8 warps (NVIDIA) or 4 waves (AMD) */

__global__ void k_init(double *a, double *b, double *c, size_t n, unsigned long long seed) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    double r = (double)(pfcal_mix64(i ^ (seed * 0x9E3779B97F4A7C15ull)) >> 11) * (1.0 / 9007199254740992.0);
    a[i] = 1.0 + r;
    b[i] = 2.0 - r;
    c[i] = 0.5 + 0.25 * r;
  }
}

__global__ void k_empty(void) {}

__global__ void k_read(const double2 *__restrict__ a, size_t n2, double *out, double never) {
  double sx = 0.0, sy = 0.0;
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += (size_t)gridDim.x * blockDim.x) {
    double2 v = a[i];
    sx += v.x;
    sy += v.y;
  }
  if (sx + sy == never) out[0] = sx; /* never true: keeps the loads */
}

__global__ void k_write(double2 *__restrict__ a, size_t n2, double v) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += (size_t)gridDim.x * blockDim.x)
    a[i] = make_double2(v, v);
}

__global__ void k_copy(const double2 *__restrict__ a, double2 *__restrict__ c, size_t n2) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n2; i += (size_t)gridDim.x * blockDim.x)
    c[i] = a[i];
}

__global__ void k_triad(double2 *__restrict__ a, const double2 *__restrict__ b, const double2 *__restrict__ c,
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

template <typename T> __global__ void k_fma(float *out, int iters, T a, T b, float never) {
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

__global__ void k_fma_h2(float *out, int iters, float af, float bf, float never) {
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

__global__ void k_tensor_fp16(float *out, int iters, float never, int *flag) {
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

__global__ void k_tensor_bf16(float *out, int iters, float never, int *flag) {
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

__global__ void k_tensor_tf32(float *out, int iters, float never, int *flag) {
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

__global__ void k_tensor_fp64(float *out, int iters, float never, int *flag) {
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
__global__ void k_tensor_fp32(float *out, int iters, float never, int *flag) {
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

__global__ void k_tensor_fp8(float *out, int iters, float never, int *flag) {
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

/* ---- host side ------------------------------------------------------------------ */

typedef struct devbuf {
  bool ready;
  gpuStream_t stream;
  gpuEvent_t e0, e1;
  void *buf; /* copy buffer of copy_max bytes */
} devbuf;

static struct {
  int dev, count, sms;
  bool quick;
  unsigned long seed;
  double *a, *b, *c;
  size_t n; /* doubles per array */
  float *out;
  int *flag;
  gpuStream_t stream;
  gpuEvent_t e0, e1;
  int stream_blocks;
  int vec_iters[PF_NPREC];
  int ten_iters[PF_NPREC];
  int ten_supported[PF_NPREC]; /* 0 unknown, 1 yes, -1 no */
  void *host;                  /* pinned host buffer */
  size_t copy_max;
  devbuf d[PFCAL_MAX_DEVICES];
  bool setup_done;
} g;

static int fail(const char *what, gpuError_t e) {
  return pf_error_set(PF_EIO, PFCAL_GPU_BACKEND " back-end: %s failed: %s", what, gpuGetErrorString(e));
}

#define TRY(call)                                                                                                      \
  do {                                                                                                                 \
    gpuError_t e_ = (call);                                                                                            \
    if (e_ != gpuSuccess) return fail(#call, e_);                                                                      \
  } while (0)

static double now_s(void) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

static void version_string(int v, char *buf, size_t len) {
#if defined(__HIPCC__)
  /* HIP_VERSION = major * 10^7 + minor * 10^5 + patch */
  snprintf(buf, len, "%d.%d.%d", v / 10000000, (v / 100000) % 100, v % 100000);
#else
  snprintf(buf, len, "%d.%d", v / 1000, (v % 1000) / 10);
#endif
}

static int gpu_probe(const pfcal_opts *o, pfcal_info *in) {
  memset(in, 0, sizeof *in);
  int n = 0;
  gpuError_t e = gpuGetDeviceCount(&n);
  if (e != gpuSuccess)
    return pf_error_set(PF_ENODEV,
                        PFCAL_GPU_BACKEND " back-end unavailable: getting the device count failed (%s). "
                                          "Looked for " PFCAL_DRIVER_LIB " and a device. Install or load the "
                                          "driver, run on a GPU node (inside the job allocation), or use "
                                          "--backend cpu.",
                        gpuGetErrorString(e));
  if (n <= 0)
    return pf_error_set(PF_ENODEV, PFCAL_GPU_BACKEND " back-end unavailable: the driver sees no device "
                                                     "(check CUDA_VISIBLE_DEVICES / ROCR_VISIBLE_DEVICES / "
                                                     "HIP_VISIBLE_DEVICES). Run on a GPU node or use --backend cpu.");
  in->count = n < PFCAL_MAX_DEVICES ? n : PFCAL_MAX_DEVICES;
  int dev = o->device;
  if (dev < 0 || dev >= n) return 0; /* the harness reports the bad --device */
  gpuDeviceProp p;
  TRY(gpuGetDeviceProperties(&p, dev));
  snprintf(in->name, sizeof in->name, "%s", p.name);
  snprintf(in->vendor, sizeof in->vendor, PFCAL_GPU_VENDOR);
#if defined(__HIPCC__)
  char arch[64];
  snprintf(arch, sizeof arch, "%s", p.gcnArchName);
  arch[strcspn(arch, ":")] = '\0';
  snprintf(in->arch, sizeof in->arch, "%s", arch);
  if (!in->name[0]) snprintf(in->name, sizeof in->name, "AMD %s", arch);
#else
  snprintf(in->arch, sizeof in->arch, "sm_%d%d", p.major, p.minor);
#endif
  in->units = p.multiProcessorCount;
  in->memory_B = (double)p.totalGlobalMem;
  in->llc_B = (double)p.l2CacheSize;
  int khz = 0;
  if (gpuDeviceGetAttribute(&khz, gpuAttrClockRate, dev) == gpuSuccess) in->clock_MHz = khz / 1000.0;
  if (gpuDeviceGetAttribute(&khz, gpuAttrMemoryClockRate, dev) == gpuSuccess) in->mem_clock_MHz = khz / 1000.0;
  /* the kernel driver's own version (e.g. NVIDIA 550.54) comes from NVML / ROCm SMI in the harness */
  int v = 0;
  char rt[32] = "?", drv[32] = "?";
  if (gpuRuntimeGetVersion(&v) == gpuSuccess) version_string(v, rt, sizeof rt);
  if (gpuDriverGetVersion(&v) == gpuSuccess) version_string(v, drv, sizeof drv);
  snprintf(in->runtime, sizeof in->runtime, PFCAL_GPU_BACKEND " runtime %s, driver API %s", rt, drv);
  for (int i = 0; i < in->count; i++)
    if (gpuDeviceGetPCIBusId(in->pci_bus_id[i], (int)sizeof in->pci_bus_id[i], i) != gpuSuccess)
      in->pci_bus_id[i][0] = '\0';
  return 0;
}

/* A grid that fills every SM/CU with `occ` resident blocks. */
static int grid_for(int occ) {
  int b = g.sms * (occ > 0 ? occ : 1);
  return b > 0 ? b : 1;
}

static int gpu_setup(const pfcal_opts *o, pfcal_info *in) {
  memset(&g, 0, sizeof g);
  g.dev = o->device;
  g.count = in->count;
  g.sms = in->units > 0 ? in->units : 1;
  g.quick = o->quick;
  g.seed = o->seed;
  TRY(gpuSetDevice(g.dev));
  gpuError_t e = gpuFree(0); /* creates the context */
  if (e != gpuSuccess)
    return pf_error_set(PF_ENODEV,
                        PFCAL_GPU_BACKEND " back-end: cannot create a context on "
                                          "device %d: %s",
                        g.dev, gpuGetErrorString(e));
  g.setup_done = true; /* from here teardown() frees what exists */
  size_t free_B = 0, total_B = 0;
  TRY(gpuMemGetInfo(&free_B, &total_B));
  const double MiB = 1024.0 * 1024.0;
  double per = 4.0 * in->llc_B;
  double lo = (o->quick ? 256 : 1024) * MiB;
  if (per < lo) per = lo;
  g.copy_max = (size_t)(o->quick ? 128 : 512) << 20;
  double cap = ((double)free_B - 2.0 * (double)g.copy_max) / 4.0;
  if (per > cap) per = cap;
  if (per < 16 * MiB)
    return pf_error_set(PF_ENOMEM, PFCAL_GPU_BACKEND " back-end: only %.0f MiB free on device %d", free_B / MiB, g.dev);
  g.n = (size_t)(per / sizeof(double)) / (2 * BLOCK) * (2 * BLOCK);
  TRY(gpuMalloc((void **)&g.a, g.n * sizeof(double)));
  TRY(gpuMalloc((void **)&g.b, g.n * sizeof(double)));
  TRY(gpuMalloc((void **)&g.c, g.n * sizeof(double)));
  TRY(gpuMalloc((void **)&g.out, (size_t)g.sms * 64 * BLOCK * sizeof(float)));
  TRY(gpuMalloc((void **)&g.flag, sizeof(int)));
  TRY(gpuStreamCreate(&g.stream));
  TRY(gpuEventCreate(&g.e0));
  TRY(gpuEventCreate(&g.e1));
  in->array_B = g.n * sizeof(double);
  /* the first calls that need this device's code: a binary built for another
   * architecture fails here, which is "unavailable" (exit 3), not an I/O error */
  int occ = 0;
  e = gpuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k_triad, BLOCK, 0);
  if (e == gpuSuccess) {
    g.stream_blocks = grid_for(occ);
    k_init<<<g.stream_blocks, BLOCK, 0, g.stream>>>(g.a, g.b, g.c, g.n, (unsigned long long)g.seed);
    e = gpuGetLastError();
  }
  if (e == gpuSuccess) e = gpuStreamSynchronize(g.stream);
  if (e != gpuSuccess)
    return pf_error_set(PF_ENODEV,
                        PFCAL_GPU_BACKEND " back-end: the first kernel failed on %s (%s): %s. This executable "
                                          "has device code for "
#if defined(__HIPCC__)
                                          "the --offload-arch it was built with (PFCAL_HIP_ARCH, default gfx90a)"
#else
                                          "sm_80 and sm_90 (CMAKE_CUDA_ARCHITECTURES)"
#endif
                                          "; rebuild for this device.",
                        in->name, in->arch, gpuGetErrorString(e));
  return 0;
}

/* Time `reps` launches of body between the events; returns seconds. */
template <typename F> static int timed(int reps, F body, double *s) {
  TRY(gpuEventRecord(g.e0, g.stream));
  for (int r = 0; r < reps; r++)
    body();
  TRY(gpuGetLastError());
  TRY(gpuEventRecord(g.e1, g.stream));
  TRY(gpuEventSynchronize(g.e1));
  float ms = 0;
  TRY(gpuEventElapsedTime(&ms, g.e0, g.e1));
  *s = 1e-3 * ms;
  return 0;
}

static int gpu_launch(double *s) {
  const int k = 1000;
  TRY(gpuStreamSynchronize(g.stream));
  double t0 = now_s();
  for (int i = 0; i < k; i++)
    k_empty<<<1, PFCAL_WARP, 0, g.stream>>>();
  TRY(gpuGetLastError());
  TRY(gpuStreamSynchronize(g.stream));
  *s = (now_s() - t0) / k;
  return 0;
}

static int gpu_stream(pfcal_stream k, double *Bps) {
  static const double arrays[PFCAL_NSTREAM] = {1, 1, 2, 3, 2};
  if (k < 0 || k >= PFCAL_NSTREAM) return pf_error_set(PF_EINVAL, "no such stream kernel");
  size_t n2 = g.n / 2;
  double moved = arrays[k] * (double)g.n * sizeof(double);
  int reps = (int)(4.0 * 1024 * 1024 * 1024 / moved);
  if (reps < 1) reps = 1;
  if (reps > 20) reps = 20;
  double2 *a = (double2 *)g.a, *b = (double2 *)g.b, *c = (double2 *)g.c;
  double s = 0;
  int rc;
  switch (k) {
  case PFCAL_READ:
    rc = timed(
        reps, [&] { k_read<<<g.stream_blocks, BLOCK, 0, g.stream>>>(a, n2, (double *)g.out, -1.0); }, &s);
    break;
  case PFCAL_WRITE:
    rc = timed(
        reps, [&] { k_write<<<g.stream_blocks, BLOCK, 0, g.stream>>>(c, n2, 0.25); }, &s);
    break;
  case PFCAL_COPY:
    rc = timed(
        reps, [&] { k_copy<<<g.stream_blocks, BLOCK, 0, g.stream>>>(a, c, n2); }, &s);
    break;
  case PFCAL_TRIAD:
    rc = timed(
        reps, [&] { k_triad<<<g.stream_blocks, BLOCK, 0, g.stream>>>(a, b, c, n2, 0.4); }, &s);
    break;
  default: { /* the runtime's device-local memcpy (nvbandwidth's device_local_copy) */
    gpuError_t err = gpuSuccess;
    rc = timed(
        reps,
        [&] {
          gpuError_t e2 = gpuMemcpyAsync(g.b, g.c, g.n * sizeof(double), gpuMemcpyDeviceToDevice, g.stream);
          if (e2 != gpuSuccess) err = e2;
        },
        &s);
    if (!rc && err != gpuSuccess) rc = fail("device-local memcpy", err);
    break;
  }
  }
  if (rc) return rc;
  *Bps = moved * reps / s;
  return 0;
}

/* Launch an FMA or tensor kernel once with `iters`; seconds in *s. */
static int run_vector(pf_precision p, int iters, int blocks, double *s) {
  switch (p) {
  case PF_FP64:
    return timed(
        1, [&] { k_fma<double><<<blocks, BLOCK, 0, g.stream>>>(g.out, iters, 0.5, 0.5, -1.0f); }, s);
  case PF_FP32:
#if defined(__HIPCC__)
  {
    vf2 a = {0.5f, 0.5f};
    return timed(
        1, [&] { k_fma<vf2><<<blocks, BLOCK, 0, g.stream>>>(g.out, iters, a, a, -1.0f); }, s);
  }
#else
    return timed(
        1, [&] { k_fma<float><<<blocks, BLOCK, 0, g.stream>>>(g.out, iters, 0.5f, 0.5f, -1.0f); }, s);
#endif
  case PF_FP16:
    return timed(
        1, [&] { k_fma_h2<<<blocks, BLOCK, 0, g.stream>>>(g.out, iters, 0.5f, 0.5f, -1.0f); }, s);
  default:
    return pf_error_set(PF_EINVAL, "no %s vector FMA kernel", pfcal_prec_name(p));
  }
}

static int vector_blocks(pf_precision p) {
  int occ = 0;
  gpuError_t e = gpuSuccess;
  if (p == PF_FP64) e = gpuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k_fma<double>, BLOCK, 0);
#if defined(__HIPCC__)
  else if (p == PF_FP32)
    e = gpuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k_fma<vf2>, BLOCK, 0);
#else
  else if (p == PF_FP32)
    e = gpuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k_fma<float>, BLOCK, 0);
#endif
  else
    e = gpuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, k_fma_h2, BLOCK, 0);
  if (e != gpuSuccess) occ = 1;
  if (occ > 64) occ = 64;
  return grid_for(occ);
}

/* Grow iters until one launch lasts ~10 ms (quick) or ~40 ms (full). */
template <typename F> static int calibrate_iters(F launch_with, int *iters_out) {
  double target = g.quick ? 0.01 : 0.04, s = 0;
  int it = 64;
  for (;;) {
    int rc = launch_with(it, &s);
    if (rc) return rc;
    if (s >= 0.002 || it >= (1 << 28)) break;
    it *= 4;
  }
  double scaled = it * target / (s > 0 ? s : 1e-6);
  *iters_out = scaled < 16 ? 16 : scaled > (double)(INT_MAX / 2) ? INT_MAX / 2 : (int)scaled;
  return 0;
}

static int gpu_vector(pf_precision p, double *flops) {
  if (p != PF_FP64 && p != PF_FP32 && p != PF_FP16)
    return pf_error_set(PF_EINVAL, "no %s vector FMA kernel", pfcal_prec_name(p));
  int blocks = vector_blocks(p);
  if (g.vec_iters[p] == 0) {
    int rc = calibrate_iters([&](int it, double *s) { return run_vector(p, it, blocks, s); }, &g.vec_iters[p]);
    if (rc) return rc;
  }
  double s = 0;
  int rc = run_vector(p, g.vec_iters[p], blocks, &s);
  if (rc) return rc;
  double lanes = (p == PF_FP16) ? 2.0 : 1.0;
#if defined(__HIPCC__)
  if (p == PF_FP32) lanes = 2.0;
#endif
  double flop = 2.0 * 8 * 16 * lanes * (double)g.vec_iters[p] * (double)blocks * BLOCK;
  *flops = flop / s;
  return 0;
}

static int tensor_blocks(pf_precision p) {
  int occ = 0;
  if (gpuOccupancyMaxActiveBlocksPerMultiprocessor(&occ, tensor_kernels[p], BLOCK, 0) != gpuSuccess) occ = 1;
  if (occ > 8) occ = 8;
  return grid_for(occ);
}

static int run_tensor(pf_precision p, int iters, int blocks, double *s) {
  tensor_kernel k = tensor_kernels[p];
  return timed(
      1, [&] { k<<<blocks, BLOCK, 0, g.stream>>>(g.out, iters, -1.0f, g.flag); }, s);
}

static int gpu_tensor(pf_precision p, double *flops) {
  if (p < 0 || p >= PF_NPREC || tensor_flop[p] == 0)
    return pf_error_set(PF_EINVAL, "no %s tensor instruction on %s devices", pfcal_prec_name(p), PFCAL_GPU_VENDOR);
  int blocks = tensor_blocks(p);
  if (g.ten_supported[p] == 0) {
    int f = 0;
    TRY(gpuMemset(g.flag, 0, sizeof(int)));
    double s;
    int rc = run_tensor(p, 1, 1, &s);
    if (rc) return rc;
    TRY(gpuMemcpy(&f, g.flag, sizeof(int), gpuMemcpyDeviceToHost));
    g.ten_supported[p] = f > 0 ? 1 : -1;
  }
  if (g.ten_supported[p] < 0)
    return pf_error_set(PF_EINVAL, "no %s tensor instruction in this device's code", pfcal_prec_name(p));
  if (g.ten_iters[p] == 0) {
    int rc = calibrate_iters([&](int it, double *s) { return run_tensor(p, it, blocks, s); }, &g.ten_iters[p]);
    if (rc) return rc;
  }
  double s = 0;
  int rc = run_tensor(p, g.ten_iters[p], blocks, &s);
  if (rc) return rc;
  double warps = (double)blocks * BLOCK / PFCAL_WARP;
  *flops = warps * (double)g.ten_iters[p] * ILP * tensor_flop[p] / s;
  return 0;
}

static int devbuf_ready(int d) {
  if (d < 0 || d >= g.count) return pf_error_set(PF_EINVAL, "no device %d", d);
  devbuf *b = &g.d[d];
  if (b->ready) return 0;
  TRY(gpuSetDevice(d));
  TRY(gpuStreamCreate(&b->stream));
  TRY(gpuEventCreate(&b->e0));
  TRY(gpuEventCreate(&b->e1));
  TRY(gpuMalloc(&b->buf, g.copy_max));
  TRY(gpuMemset(b->buf, 0, g.copy_max));
  b->ready = true;
  TRY(gpuSetDevice(g.dev));
  return 0;
}

static int gpu_copy(int src, int dst, size_t bytes, double *s) {
  if (bytes > g.copy_max) bytes = g.copy_max;
  if (!g.host) {
    TRY(gpuMallocHost(&g.host, g.copy_max));
    memset(g.host, 1, g.copy_max);
  }
  int rc;
  if (src >= 0 && (rc = devbuf_ready(src))) return rc;
  if (dst >= 0 && (rc = devbuf_ready(dst))) return rc;
  if (src >= 0 && dst >= 0) {
    int can = 0;
    TRY(gpuDeviceCanAccessPeer(&can, src, dst));
    if (can) {
      TRY(gpuSetDevice(src));
      gpuError_t e = gpuDeviceEnablePeerAccess(dst, 0);
      if (e != gpuSuccess && e != gpuErrorPeerAccessAlreadyEnabled) return fail("enabling peer access", e);
      (void)gpuGetLastError(); /* clear "already enabled" */
    }
  }
  int on = src >= 0 ? src : dst; /* the stream and events of the device that drives the copy */
  devbuf *b = &g.d[on];
  int reps = bytes >= (16u << 20) ? 4 : bytes >= (1u << 20) ? 16 : 32;
  TRY(gpuSetDevice(on));
  TRY(gpuEventRecord(b->e0, b->stream));
  for (int r = 0; r < reps; r++) {
    if (src < 0)
      TRY(gpuMemcpyAsync(g.d[dst].buf, g.host, bytes, gpuMemcpyHostToDevice, b->stream));
    else if (dst < 0)
      TRY(gpuMemcpyAsync(g.host, g.d[src].buf, bytes, gpuMemcpyDeviceToHost, b->stream));
    else
      TRY(gpuMemcpyPeerAsync(g.d[dst].buf, dst, g.d[src].buf, src, bytes, b->stream));
  }
  TRY(gpuEventRecord(b->e1, b->stream));
  TRY(gpuEventSynchronize(b->e1));
  float ms = 0;
  TRY(gpuEventElapsedTime(&ms, b->e0, b->e1));
  TRY(gpuSetDevice(g.dev));
  *s = 1e-3 * ms / reps;
  return 0;
}

static void gpu_teardown(void) {
  pfcal_blas_close();
  for (int d = 0; d < PFCAL_MAX_DEVICES; d++) {
    devbuf *b = &g.d[d];
    if (!b->ready) continue;
    (void)gpuSetDevice(d);
    (void)gpuFree(b->buf);
    (void)gpuEventDestroy(b->e0);
    (void)gpuEventDestroy(b->e1);
    (void)gpuStreamDestroy(b->stream);
    b->ready = false;
  }
  if (!g.setup_done) return;
  (void)gpuSetDevice(g.dev);
  if (g.host) (void)gpuFreeHost(g.host);
  (void)gpuFree(g.a);
  (void)gpuFree(g.b);
  (void)gpuFree(g.c);
  (void)gpuFree(g.out);
  (void)gpuFree(g.flag);
  if (g.e0) (void)gpuEventDestroy(g.e0);
  if (g.e1) (void)gpuEventDestroy(g.e1);
  if (g.stream) (void)gpuStreamDestroy(g.stream);
  g.setup_done = false;
}

static int gpu_gemm_open(char *lib, size_t len) { return pfcal_blas_open(lib, len); }
static int gpu_gemm(const pfcal_gemm_shape *s, double *seconds) { return pfcal_blas_gemm(s, g.stream, (unsigned long long)g.seed, seconds); }

static const pfcal_backend gpu_backend = {
    PFCAL_GPU_BACKEND, PFCAL_POWER_SOURCE, gpu_probe, gpu_setup, gpu_launch,    gpu_stream,
    gpu_vector,        gpu_tensor,         gpu_copy,  gpu_gemm_open, gpu_gemm, gpu_teardown,
};

int main(int argc, char **argv) { return pfcal_main(argc, argv, &gpu_backend); }
