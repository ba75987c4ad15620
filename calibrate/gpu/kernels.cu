/* kernels.cu - the CUDA and HIP calibration back-ends: one set of sources (this
 * file, devstream.cu, devtensor.cu, blas.cu), built by nvcc into
 * preflight-cal-cuda and by hipcc into preflight-cal-hip.
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
 * file only takes samples: it sets the device up, launches the kernels of
 * devstream.cu and devtensor.cu through their launchers (devkern.h) and the
 * library GEMM of blas.cu, and times them.  When the driver is missing or
 * there is no device, probe() returns PF_ENODEV and the executable exits 3
 * with what it looked for.
 */
#include "blas.h"
#include "devkern.h"
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
  g.n = (size_t)(per / sizeof(double)) / (2 * PFCAL_BLOCK) * (2 * PFCAL_BLOCK);
  TRY(gpuMalloc((void **)&g.a, g.n * sizeof(double)));
  TRY(gpuMalloc((void **)&g.b, g.n * sizeof(double)));
  TRY(gpuMalloc((void **)&g.c, g.n * sizeof(double)));
  TRY(gpuMalloc((void **)&g.out, (size_t)g.sms * 64 * PFCAL_BLOCK * sizeof(float)));
  TRY(gpuMalloc((void **)&g.flag, sizeof(int)));
  TRY(gpuStreamCreate(&g.stream));
  TRY(gpuEventCreate(&g.e0));
  TRY(gpuEventCreate(&g.e1));
  in->array_B = g.n * sizeof(double);
  /* the first calls that need this device's code: a binary built for another
   * architecture fails here, which is "unavailable" (exit 3), not an I/O error */
  int occ = 0;
  e = pfk_stream_occupancy(&occ);
  if (e == gpuSuccess) {
    g.stream_blocks = grid_for(occ);
    pfk_init(g.stream_blocks, g.stream, g.a, g.b, g.c, g.n, (unsigned long long)g.seed);
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
    pfk_empty(g.stream);
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
  double s = 0;
  int rc;
  switch (k) {
  case PFCAL_READ:
    rc = timed(
        reps, [&] { pfk_read(g.stream_blocks, g.stream, g.a, n2, (double *)g.out); }, &s);
    break;
  case PFCAL_WRITE:
    rc = timed(
        reps, [&] { pfk_write(g.stream_blocks, g.stream, g.c, n2, 0.25); }, &s);
    break;
  case PFCAL_COPY:
    rc = timed(
        reps, [&] { pfk_copy(g.stream_blocks, g.stream, g.a, g.c, n2); }, &s);
    break;
  case PFCAL_TRIAD:
    rc = timed(
        reps, [&] { pfk_triad(g.stream_blocks, g.stream, g.a, g.b, g.c, n2, 0.4); }, &s);
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

/* Launch an FMA kernel once with `iters`; seconds in *s. */
static int run_vector(pf_precision p, int iters, int blocks, double *s) {
  return timed(
      1, [&] { pfk_fma(p, blocks, g.stream, g.out, iters); }, s);
}

static int vector_blocks(pf_precision p) {
  int occ = 0;
  gpuError_t e = pfk_fma_occupancy(p, &occ);
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
  double flop = pfk_fma_thread_flop(p) * (double)g.vec_iters[p] * (double)blocks * PFCAL_BLOCK;
  *flops = flop / s;
  return 0;
}

static int tensor_blocks(pf_precision p) {
  int occ = 0;
  if (pfk_tensor_occupancy(p, &occ) != gpuSuccess) occ = 1;
  if (occ > 8) occ = 8;
  return grid_for(occ);
}

static int run_tensor(pf_precision p, int iters, int blocks, double *s) {
  return timed(
      1, [&] { pfk_tensor(p, blocks, g.stream, g.out, iters, g.flag); }, s);
}

static int gpu_tensor(pf_precision p, double *flops) {
  if (pfk_tensor_warp_flop(p) == 0)
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
  double warps = (double)blocks * PFCAL_BLOCK / PFCAL_WARP;
  *flops = warps * (double)g.ten_iters[p] * pfk_tensor_warp_flop(p) / s;
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
static int gpu_gemm(const pfcal_gemm_shape *s, double *seconds) {
  return pfcal_blas_gemm(s, g.stream, (unsigned long long)g.seed, seconds);
}

static const pfcal_backend gpu_backend = {
    PFCAL_GPU_BACKEND, PFCAL_POWER_SOURCE, gpu_probe, gpu_setup,     gpu_launch, gpu_stream,
    gpu_vector,        gpu_tensor,         gpu_copy,  gpu_gemm_open, gpu_gemm,   gpu_teardown,
};

int main(int argc, char **argv) { return pfcal_main(argc, argv, &gpu_backend); }
