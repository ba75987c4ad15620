/* blas.cu - the vendor GEMM library, opened at run time (dlopen), so that the
 * build needs only the CUDA / HIP runtime, as for NVML and ROCm SMI.
 *
 *  CUDA  cuBLASLt (libcublasLt.so.13, .12, .11): cublasLtMatmul with the
 *        heuristic's first algorithm and a 32 MiB workspace, fp32 accumulate;
 *        fp8 (e4m3) in the A-transposed form cuBLASLt requires for it on
 *        Hopper, bf16 output.  This is the path PyTorch's matmuls and
 *        Transformer Engine's fp8 GEMMs take on H100.
 *  HIP   rocBLAS (librocblas.so.4, .3, .0): rocblas_gemm_ex, fp32 compute.
 *        hipBLASLt (the issue names it) could not be used here: its enum and
 *        struct ABI cannot be checked without its headers, and no ROCm BLAS
 *        package exists in this environment; rocBLAS's gemm_ex ABI is stable
 *        across ROCm 5 and 6 and is what PyTorch's ROCm build calls for plain
 *        matmuls unless hipBLASLt is preferred.  No fp8 on gfx90a.
 *
 * The declarations below are the libraries' documented C ABI (cublasLt.h,
 * cublas_api.h, library_types.h of CUDA 12/13; rocblas-types.h, rocblas-
 * functions.h of ROCm 5/6), restated so no library header is needed.  The
 * CUDA values are checked at build time against cublasLt.h where the toolkit
 * has it (static_assert below), and were against CUDA 13.0's.
 *
 * One sample = `reps` calls back to back on the harness's stream between two
 * events, divided by reps: the kernel time a training step sees when the host
 * runs ahead (no host dispatch in it).
 */
#include "blas.h"

extern "C" {
#include "core/core.h"
}

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#define WORKSPACE_B ((size_t)32 << 20)

static struct {
  void *lib;
  void *handle;
  void *ws;
  gpuEvent_t e0, e1;
  bool events;
} b;

static int lib_open(const char *const *names, char *which, size_t len) {
  for (int i = 0; names[i]; i++)
    if ((b.lib = dlopen(names[i], RTLD_NOW | RTLD_LOCAL)) != NULL) {
      snprintf(which, len, "%s", names[i]);
      return 0;
    }
  return -1;
}

#define SYM(var, name)                                                                                                 \
  do {                                                                                                                 \
    *(void **)&var = dlsym(b.lib, name);                                                                               \
    if (!var) return pf_error_set(PF_ENODEV, "%s: symbol %s missing: not a usable GEMM library", lib, name);           \
  } while (0)

#if defined(__HIPCC__)
/* ---- rocBLAS ---- */
typedef int rb_status;
typedef void *rb_handle;
enum { RB_OP_N = 111, RB_OP_T = 112, RB_F16 = 150, RB_F32 = 151, RB_BF16 = 168, RB_ALGO_STANDARD = 0 };
static rb_status (*rb_create)(rb_handle *);
static rb_status (*rb_destroy)(rb_handle);
static rb_status (*rb_set_stream)(rb_handle, hipStream_t);
static rb_status (*rb_version)(char *, size_t);
static rb_status (*rb_gemm_ex)(rb_handle, int, int, int, int, int, const void *, const void *, int, int, const void *,
                               int, int, const void *, const void *, int, int, void *, int, int, int, int, int32_t,
                               uint32_t);

int pfcal_blas_open(char *lib_out, size_t len) {
  static const char *const names[] = {"librocblas.so.4", "librocblas.so.3", "librocblas.so.0", "librocblas.so", NULL};
  char lib[64];
  if (lib_open(names, lib, sizeof lib) < 0)
    return pf_error_set(PF_ENODEV, "--gemm: cannot open rocBLAS (looked for librocblas.so.4/.3/.0 on the loader "
                                   "path: %s); load the ROCm module or set LD_LIBRARY_PATH",
                        dlerror());
  SYM(rb_create, "rocblas_create_handle");
  SYM(rb_destroy, "rocblas_destroy_handle");
  SYM(rb_set_stream, "rocblas_set_stream");
  SYM(rb_gemm_ex, "rocblas_gemm_ex");
  *(void **)&rb_version = dlsym(b.lib, "rocblas_get_version_string");
  if (rb_create(&b.handle) != 0) return pf_error_set(PF_ENODEV, "%s: rocblas_create_handle failed", lib);
  char v[64] = "?";
  if (rb_version) rb_version(v, sizeof v);
  snprintf(lib_out, len, "rocblas %s", v);
  return 0;
}

static int lib_gemm(const pfcal_gemm_shape *s, gpuStream_t st, void *A, void *B, void *C) {
  int t;
  if (s->prec == PF_BF16) t = RB_BF16;
  else if (s->prec == PF_FP16) t = RB_F16;
  else if (s->prec == PF_FP32) t = RB_F32;
  else return PF_EINVAL; /* no fp8 / tf32 on gfx90a through gemm_ex */
  float one = 1.0f, zero = 0.0f;
  int m = (int)s->m, n = (int)s->n, k = (int)s->k;
  /* row-major C[m,n] = A[m,k] B[k,n] is column-major C^T = B^T A^T */
  int opb = s->layout[1] == 'T' ? RB_OP_T : RB_OP_N, opa = s->layout[0] == 'T' ? RB_OP_T : RB_OP_N;
  int ldb = opb == RB_OP_N ? n : k, lda = opa == RB_OP_N ? k : m;
  rb_set_stream(b.handle, st);
  return rb_gemm_ex(b.handle, opb, opa, n, m, k, &one, B, t, ldb, A, t, lda, &zero, C, t, n, C, t, n, RB_F32,
                    RB_ALGO_STANDARD, 0, 0) == 0
             ? 0
             : PF_EINVAL;
}

static void lib_close(void) {
  if (b.handle && rb_destroy) rb_destroy(b.handle);
}

#else
/* ---- cuBLASLt ---- */
typedef int lt_status;
typedef void *lt_ptr;
typedef struct {
  uint64_t data[8];
} lt_algo;
typedef struct {
  lt_algo algo;
  size_t workspaceSize;
  lt_status state;
  float wavesCount;
  int reserved[4];
} lt_heur;
enum {
  LT_R_32F = 0, LT_R_16F = 2, LT_R_16BF = 14, LT_R_8F_E4M3 = 28, /* cudaDataType */
  LT_COMPUTE_32F = 68, LT_COMPUTE_32F_FAST_TF32 = 77,            /* cublasComputeType_t */
  LT_OP_N = 0, LT_OP_T = 1,                                      /* cublasOperation_t */
  LT_DESC_TRANSA = 3, LT_DESC_TRANSB = 4,                        /* cublasLtMatmulDescAttributes_t */
  LT_PREF_MAX_WORKSPACE = 1                                      /* cublasLtMatmulPreferenceAttributes_t */
};
#if __has_include(<cublasLt.h>) /* where the toolkit has the header, check the restated ABI at build time */
#include <cublasLt.h>
static_assert((int)CUDA_R_32F == (int)LT_R_32F && (int)CUDA_R_16F == (int)LT_R_16F && (int)CUDA_R_16BF == (int)LT_R_16BF &&
                  (int)CUDA_R_8F_E4M3 == (int)LT_R_8F_E4M3,
              "cudaDataType values");
static_assert((int)CUBLAS_COMPUTE_32F == (int)LT_COMPUTE_32F && (int)CUBLAS_COMPUTE_32F_FAST_TF32 == (int)LT_COMPUTE_32F_FAST_TF32,
              "cublasComputeType_t values");
static_assert((int)CUBLAS_OP_N == (int)LT_OP_N && (int)CUBLAS_OP_T == (int)LT_OP_T, "cublasOperation_t values");
static_assert((int)CUBLASLT_MATMUL_DESC_TRANSA == (int)LT_DESC_TRANSA && (int)CUBLASLT_MATMUL_DESC_TRANSB == (int)LT_DESC_TRANSB,
              "cublasLtMatmulDescAttributes_t values");
static_assert((int)CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES == (int)LT_PREF_MAX_WORKSPACE, "preference attribute");
static_assert(sizeof(cublasLtMatmulHeuristicResult_t) == sizeof(lt_heur) &&
                  sizeof(cublasLtMatmulAlgo_t) == sizeof(lt_algo),
              "heuristic result layout");
#endif
static lt_status (*lt_create)(lt_ptr *);
static lt_status (*lt_destroy)(lt_ptr);
static size_t (*lt_version)(void);
static lt_status (*lt_desc_create)(lt_ptr *, int, int);
static lt_status (*lt_desc_destroy)(lt_ptr);
static lt_status (*lt_desc_set)(lt_ptr, int, const void *, size_t);
static lt_status (*lt_layout_create)(lt_ptr *, int, uint64_t, uint64_t, int64_t);
static lt_status (*lt_layout_destroy)(lt_ptr);
static lt_status (*lt_pref_create)(lt_ptr *);
static lt_status (*lt_pref_destroy)(lt_ptr);
static lt_status (*lt_pref_set)(lt_ptr, int, const void *, size_t);
static lt_status (*lt_heuristic)(lt_ptr, lt_ptr, lt_ptr, lt_ptr, lt_ptr, lt_ptr, lt_ptr, int, lt_heur *, int *);
static lt_status (*lt_matmul)(lt_ptr, lt_ptr, const void *, const void *, lt_ptr, const void *, lt_ptr, const void *,
                              const void *, lt_ptr, void *, lt_ptr, const lt_algo *, void *, size_t, cudaStream_t);

int pfcal_blas_open(char *lib_out, size_t len) {
  static const char *const names[] = {"libcublasLt.so.13", "libcublasLt.so.12", "libcublasLt.so.11", "libcublasLt.so",
                                      NULL};
  char lib[64];
  if (lib_open(names, lib, sizeof lib) < 0)
    return pf_error_set(PF_ENODEV, "--gemm: cannot open cuBLASLt (looked for libcublasLt.so.13/.12/.11 on the loader "
                                   "path: %s); load the CUDA module or set LD_LIBRARY_PATH",
                        dlerror());
  SYM(lt_create, "cublasLtCreate");
  SYM(lt_destroy, "cublasLtDestroy");
  SYM(lt_version, "cublasLtGetVersion");
  SYM(lt_desc_create, "cublasLtMatmulDescCreate");
  SYM(lt_desc_destroy, "cublasLtMatmulDescDestroy");
  SYM(lt_desc_set, "cublasLtMatmulDescSetAttribute");
  SYM(lt_layout_create, "cublasLtMatrixLayoutCreate");
  SYM(lt_layout_destroy, "cublasLtMatrixLayoutDestroy");
  SYM(lt_pref_create, "cublasLtMatmulPreferenceCreate");
  SYM(lt_pref_destroy, "cublasLtMatmulPreferenceDestroy");
  SYM(lt_pref_set, "cublasLtMatmulPreferenceSetAttribute");
  SYM(lt_heuristic, "cublasLtMatmulAlgoGetHeuristic");
  SYM(lt_matmul, "cublasLtMatmul");
  if (lt_create(&b.handle) != 0) return pf_error_set(PF_ENODEV, "%s: cublasLtCreate failed", lib);
  if (gpuMalloc(&b.ws, WORKSPACE_B) != gpuSuccess) return pf_error_set(PF_ENOMEM, "--gemm: no room for the workspace");
  size_t v = lt_version();
  snprintf(lib_out, len, "cublasLt %zu.%zu.%zu", v / 10000, (v / 100) % 100, v % 100);
  return 0;
}

static int lib_gemm(const pfcal_gemm_shape *s, gpuStream_t st, void *A, void *B, void *C) {
  int in, out, compute = LT_COMPUTE_32F;
  switch (s->prec) {
  case PF_BF16: in = out = LT_R_16BF; break;
  case PF_FP16: in = out = LT_R_16F; break;
  case PF_TF32: in = out = LT_R_32F; compute = LT_COMPUTE_32F_FAST_TF32; break;
  case PF_FP32: in = out = LT_R_32F; break;
  case PF_FP8: in = LT_R_8F_E4M3; out = LT_R_16BF; break;
  default: return PF_EINVAL;
  }
  /* row-major C[m,n] = A[m,k] B[k,n] is column-major C^T[n,m] = B^T A^T: the
   * library's first operand is B, its second A.  fp8 needs the first operand
   * transposed and the second not (cuBLASLt's fp8 rule), whatever the layout. */
  uint64_t m = (uint64_t)s->m, n = (uint64_t)s->n, k = (uint64_t)s->k;
  int opa = s->layout[1] == 'T' ? LT_OP_T : LT_OP_N, opb = s->layout[0] == 'T' ? LT_OP_T : LT_OP_N;
  if (s->prec == PF_FP8) opa = LT_OP_T, opb = LT_OP_N;
  lt_ptr desc = NULL, la = NULL, lb = NULL, lc = NULL, pref = NULL;
  int rc = PF_EINVAL, found = 0;
  lt_heur h;
  memset(&h, 0, sizeof h);
  size_t ws = WORKSPACE_B;
  float one = 1.0f, zero = 0.0f;
  if (lt_desc_create(&desc, compute, LT_R_32F) == 0 && lt_desc_set(desc, LT_DESC_TRANSA, &opa, sizeof opa) == 0 &&
      lt_desc_set(desc, LT_DESC_TRANSB, &opb, sizeof opb) == 0 &&
      lt_layout_create(&la, in, opa == LT_OP_N ? n : k, opa == LT_OP_N ? k : n, (int64_t)(opa == LT_OP_N ? n : k)) == 0 &&
      lt_layout_create(&lb, in, opb == LT_OP_N ? k : m, opb == LT_OP_N ? m : k, (int64_t)(opb == LT_OP_N ? k : m)) == 0 &&
      lt_layout_create(&lc, out, n, m, (int64_t)n) == 0 && lt_pref_create(&pref) == 0 &&
      lt_pref_set(pref, LT_PREF_MAX_WORKSPACE, &ws, sizeof ws) == 0 &&
      lt_heuristic(b.handle, desc, la, lb, lc, lc, pref, 1, &h, &found) == 0 && found > 0 &&
      lt_matmul(b.handle, desc, &one, B, la, A, lb, &zero, C, lc, C, lc, &h.algo, b.ws, WORKSPACE_B, st) == 0)
    rc = 0;
  if (pref) lt_pref_destroy(pref);
  if (lc) lt_layout_destroy(lc);
  if (lb) lt_layout_destroy(lb);
  if (la) lt_layout_destroy(la);
  if (desc) lt_desc_destroy(desc);
  return rc;
}

static void lib_close(void) {
  if (b.ws) (void)gpuFree(b.ws);
  if (b.handle && lt_destroy) lt_destroy(b.handle);
}
#endif

static double elem_bytes(pf_precision p) {
  return p == PF_FP8 ? 1.0 : (p == PF_FP32 || p == PF_TF32) ? 4.0 : 2.0;
}

/* Random finite operands.  A GEMM's power depends on its data: constant operands (the bytes 0x3c this
 * harness once wrote) toggle almost no bits in the multipliers and datapaths, and on an H200 the cuBLASLt
 * bf16 8192^3 GEMM then ran at 808 TFLOP/s drawing 445 W, while on random operands the same GPU's GEMM
 * reaches the 700 W cap and its clock falls to ~1470 MHz of 1980 (696 TFLOP/s; calibrate/results/README.md,
 * vm-h200-141-2026-11-26).  Training data are random-like, so the operands here are: each element gets a
 * random sign, a random mantissa and a magnitude in [2^-4, 1), built as a bit pattern of the element's
 * width so that no library type header is needed and no value is Inf or NaN (e4m3's NaN needs exponent
 * 15).  Widths: 1 e4m3, 2 bf16, 4 fp32/tf32; fp16 GEMMs read the 2-byte pattern as fp16, where its top
 * exponent bits make every value lie in [1, 2): finite, and a sum of 65536 such products with random
 * signs stays far below fp16's 65504. */
__global__ void k_fill(void *p, size_t n, int width, unsigned long long seed) {
  for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x) {
    unsigned long long r = pfcal_mix64(i ^ (seed * 0x9E3779B97F4A7C15ull));
    unsigned sign = (unsigned)(r & 1u), e = (unsigned)((r >> 1) & 3u), m = (unsigned)(r >> 8);
    if (width == 1) /* e4m3: bias 7, exponents 3..6 */
      ((uint8_t *)p)[i] = (uint8_t)(sign << 7 | (3u + e) << 3 | (m & 7u));
    else if (width == 2) /* bf16: bias 127, exponents 123..126 (read as fp16: exponent 15, values in [1, 2)) */
      ((uint16_t *)p)[i] = (uint16_t)(sign << 15 | (123u + e) << 7 | (m & 0x7fu));
    else /* fp32: bias 127, exponents 123..126 */
      ((uint32_t *)p)[i] = sign << 31 | (123u + e) << 23 | (m & 0x7fffffu);
  }
}

static void fill_random(void *p, size_t bytes, int width, unsigned long long seed, gpuStream_t st) {
  size_t n = bytes / (size_t)width;
  k_fill<<<1024, 256, 0, st>>>(p, n, width, seed);
}

int pfcal_blas_gemm(const pfcal_gemm_shape *s, gpuStream_t st, unsigned long long seed, double *seconds) {
  if (!b.handle) return pf_error_set(PF_EINVAL, "GEMM library not open");
  double ea = elem_bytes(s->prec), ec = s->prec == PF_FP8 ? 2.0 : ea;
  size_t sa = (size_t)(s->m * s->k * ea), sb = (size_t)(s->k * s->n * ea), sc = (size_t)(s->m * s->n * ec);
  void *A = NULL, *B = NULL, *C = NULL;
  if (!b.events) {
    if (gpuEventCreate(&b.e0) != gpuSuccess || gpuEventCreate(&b.e1) != gpuSuccess)
      return pf_error_set(PF_EIO, "--gemm: cannot create events");
    b.events = true;
  }
  if (gpuMalloc(&A, sa) != gpuSuccess || gpuMalloc(&B, sb) != gpuSuccess || gpuMalloc(&C, sc) != gpuSuccess) {
    if (A) (void)gpuFree(A);
    if (B) (void)gpuFree(B);
    (void)gpuGetLastError();
    return pf_error_set(PF_EINVAL, "--gemm: %.0fx%.0fx%.0f does not fit in device memory", s->m, s->n, s->k);
  }
  fill_random(A, sa, (int)ea, seed, st);
  fill_random(B, sb, (int)ea, seed ^ 0x5bd1e995ull, st);
  int rc = lib_gemm(s, st, A, B, C); /* warm-up, and is the shape supported? */
  int reps = 1;
  float ms = 0;
  if (rc == 0 && gpuStreamSynchronize(st) == gpuSuccess) {
    /* one timed call sets the repetitions for ~5 ms */
    for (int pass = 0; pass < 2 && rc == 0; pass++) {
      (void)gpuEventRecord(b.e0, st);
      for (int r = 0; r < reps && rc == 0; r++) rc = lib_gemm(s, st, A, B, C);
      (void)gpuEventRecord(b.e1, st);
      if (gpuEventSynchronize(b.e1) != gpuSuccess || gpuEventElapsedTime(&ms, b.e0, b.e1) != gpuSuccess) rc = PF_EIO;
      if (pass == 0 && rc == 0) {
        double per = ms > 0 ? 1e-3 * ms : 1e-6;
        reps = (int)(5e-3 / per) + 1;
        if (reps > 200) reps = 200;
      }
    }
  }
  (void)gpuFree(A);
  (void)gpuFree(B);
  (void)gpuFree(C);
  if (rc == PF_EIO) return pf_error_set(PF_EIO, "--gemm: timing failed");
  if (rc) return pf_error_set(PF_EINVAL, "--gemm: %s %.0fx%.0fx%.0f %s not supported by the library here",
                              pfcal_prec_name(s->prec), s->m, s->n, s->k, s->layout);
  *seconds = 1e-3 * ms / reps;
  return 0;
}

void pfcal_blas_close(void) {
  lib_close();
  if (b.events) {
    (void)gpuEventDestroy(b.e0);
    (void)gpuEventDestroy(b.e1);
  }
  if (b.lib) dlclose(b.lib);
  memset(&b, 0, sizeof b);
}
