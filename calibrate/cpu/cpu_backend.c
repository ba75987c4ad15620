/* cpu_backend.c - the cpu calibration back-end: the same harness, run for real
 * on the host CPU with POSIX threads.
 *
 * It exists so that the harness, the JSON and the whole calibrate -> predict
 * path are exercised on every machine (CI has no GPU), and so that a user can
 * see what their host delivers.  Measurements:
 *   - launch: one dispatch of the worker pool (every thread wakes on a
 *     barrier, runs an empty task, joins on a second barrier), back to back;
 *     the CPU analogue of a kernel launch.
 *   - streams: McCalpin's STREAM / BabelStream kernels read (sum), write
 *     (fill), copy (c = a), triad (a = b + s * c), plus glibc memcpy, over
 *     three arrays of doubles, each thread owning (and first-touching) a
 *     contiguous block, threads pinned to cores.  Array size is at least 4x
 *     the last-level cache summed over all its instances (sysfs), capped at
 *     256 MiB for all three arrays in quick mode (Zen/EPYC L3 is per CCX, so
 *     "4x L3" is 4x the sum).  Bytes counted are the ones the kernel names
 *     (no write-allocate traffic), as STREAM does; with write-allocate the
 *     DRAM traffic of write/copy/triad is 2x/1.5x/1.33x the counted bytes,
 *     so those read lower than read and memcpy (which streams its stores).
 *   - vector FMA: cpu_fma.c on every thread at once (fp64, fp32).
 * No tensor units and no copies: the cpu back-end leaves those out.  Power:
 * RAPL package energy when /sys/class/powercap is readable (power.c).
 *
 * Expected: streams 60-90 % of the DIMMs' theoretical bandwidth on bare metal
 * (less in VMs); FMA 90-100 % of cores x clock x SIMD FMA rate.
 *
 * The probe (what the host is) and the pinned worker pool: cpu_host.c.
 */
#define _GNU_SOURCE
#include "cpu.h"

#include "../harness/pfcal.h"
#include "core/core.h"

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/* ---- buffers and stream kernels ---------------------------------------------------- */

static struct {
  double *a, *b, *c;
  size_t n;     /* doubles per array */
  size_t bytes; /* allocated bytes per array */
  double scalar;
  unsigned long seed;
  long fma_iters[PF_NPREC];
  double fma_x;
  bool quick;
} st;

static void range(int tid, int nth, size_t n, size_t *lo, size_t *hi) {
  size_t chunk = n / (size_t)nth;
  *lo = (size_t)tid * chunk;
  *hi = tid == nth - 1 ? n : *lo + chunk;
}

static void *alloc_array(size_t bytes) {
  const size_t align = 2u << 20; /* 2 MiB: lets transparent huge pages back the arrays */
  size_t rounded = (bytes + align - 1) / align * align;
  void *p = aligned_alloc(align, rounded);
#ifdef MADV_HUGEPAGE
  if (p) madvise(p, rounded, MADV_HUGEPAGE);
#endif
  return p;
}

static void task_init(int tid, int nth, void *arg) {
  (void)arg;
  size_t lo, hi;
  range(tid, nth, st.n, &lo, &hi);
  /* first touch by the owning thread; values from a cheap seeded hash */
  uint64_t h = 0x9E3779B97F4A7C15ull * (st.seed + 1);
  for (size_t i = lo; i < hi; i++) {
    uint64_t x = (h ^ i) * 0xBF58476D1CE4E5B9ull;
    double r = (double)(x >> 40) * (1.0 / 16777216.0); /* [0, 1) */
    st.a[i] = 1.0 + r;
    st.b[i] = 2.0 - r;
    st.c[i] = 0.5 + 0.25 * r;
  }
}

static void task_empty(int tid, int nth, void *arg) {
  (void)tid;
  (void)nth;
  (void)arg;
}

static void task_read(int tid, int nth, void *arg) {
  (void)arg;
  size_t lo, hi;
  range(tid, nth, st.n, &lo, &hi);
  const double *restrict a = st.a;
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  size_t i = lo;
  for (; i + 4 <= hi; i += 4) {
    s0 += a[i];
    s1 += a[i + 1];
    s2 += a[i + 2];
    s3 += a[i + 3];
  }
  for (; i < hi; i++)
    s0 += a[i];
  pfcal_cpu_sink_add(tid, s0 + s1 + s2 + s3);
}

static void task_write(int tid, int nth, void *arg) {
  (void)arg;
  size_t lo, hi;
  range(tid, nth, st.n, &lo, &hi);
  double *restrict a = st.a;
  const double v = st.scalar;
  for (size_t i = lo; i < hi; i++)
    a[i] = v;
}

static void task_copy(int tid, int nth, void *arg) {
  (void)arg;
  size_t lo, hi;
  range(tid, nth, st.n, &lo, &hi);
  double *restrict c = st.c;
  const double *restrict a = st.a;
  for (size_t i = lo; i < hi; i++)
    c[i] = a[i];
}

static void task_triad(int tid, int nth, void *arg) {
  (void)arg;
  size_t lo, hi;
  range(tid, nth, st.n, &lo, &hi);
  double *restrict a = st.a;
  const double *restrict b = st.b, *restrict c = st.c;
  const double s = st.scalar;
  for (size_t i = lo; i < hi; i++)
    a[i] = b[i] + s * c[i];
}

static void task_memcpy(int tid, int nth, void *arg) {
  (void)arg;
  size_t lo, hi;
  range(tid, nth, st.n, &lo, &hi);
  memcpy(st.b + lo, st.c + lo, (hi - lo) * sizeof(double));
}

typedef struct {
  pf_precision p;
  long iters;
  double flop; /* per thread */
} fma_arg;

static void task_fma(int tid, int nth, void *arg) {
  (void)nth;
  fma_arg *f = arg;
  double flop;
  pfcal_cpu_sink_add(tid, pfcal_cpu_fma(f->p, f->iters, st.fma_x + 0.001 * tid, &flop));
  if (tid == 0) f->flop = flop;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

static int cpu_setup(const pfcal_opts *o, pfcal_info *in) {
  memset(&st, 0, sizeof st);
  st.seed = o->seed;
  st.quick = o->quick;
  st.scalar = 0.4 + 1e-3 * (double)(o->seed % 97);
  st.fma_x = 1.0 + 1e-3 * (double)(o->seed % 89);
  int rc = pfcal_cpu_pool_start(o->threads);
  if (rc) return rc;
  in->units = pfcal_cpu_pool_size();
  /* each array >= 4x LLC (all instances), quick: all three <= 256 MiB */
  const double MiB = 1024.0 * 1024.0;
  double per = 4.0 * in->llc_B;
  double lo = o->quick ? 16 * MiB : 128 * MiB;
  if (per < lo) per = lo;
  double cap = o->quick ? 256 * MiB / 3.0 : 2048 * MiB;
  if (in->memory_B > 0 && cap > in->memory_B / 12.0) cap = in->memory_B / 12.0;
  if (per > cap) per = cap;
  size_t n = (size_t)(per / sizeof(double));
  size_t nth = (size_t)pfcal_cpu_pool_size();
  n = n / (nth * 512) * (nth * 512); /* whole 4 KiB pages per thread */
  if (n == 0) n = nth * 512;
  st.n = n;
  st.bytes = n * sizeof(double);
  st.a = alloc_array(st.bytes);
  st.b = alloc_array(st.bytes);
  st.c = alloc_array(st.bytes);
  if (!st.a || !st.b || !st.c)
    return pf_error_set(PF_ENOMEM, "cannot allocate 3 x %.0f MiB for the stream arrays", st.bytes / MiB);
  in->array_B = st.bytes;
  pfcal_cpu_pool_run(task_init, NULL);
  return 0;
}

static int cpu_launch(double *s) {
  const int k = 200;
  double t0 = now_s();
  for (int i = 0; i < k; i++)
    pfcal_cpu_pool_run(task_empty, NULL);
  *s = (now_s() - t0) / k;
  return 0;
}

static int cpu_stream(pfcal_stream k, double *Bps) {
  static const pfcal_cpu_task fns[PFCAL_NSTREAM] = {task_read, task_write, task_copy, task_triad, task_memcpy};
  static const double arrays[PFCAL_NSTREAM] = {1, 1, 2, 3, 2};
  if (k < 0 || k >= PFCAL_NSTREAM) return pf_error_set(PF_EINVAL, "no such stream kernel");
  double t0 = now_s();
  pfcal_cpu_pool_run(fns[k], NULL);
  double t = now_s() - t0;
  *Bps = arrays[k] * (double)st.bytes / t;
  return 0;
}

static int cpu_vector(pf_precision p, double *flops) {
  if (p != PF_FP64 && p != PF_FP32)
    return pf_error_set(PF_EINVAL, "the cpu back-end measures fp64 and fp32 vector FMA only");
  fma_arg f = {.p = p};
  if (st.fma_iters[p] == 0) {
    /* size one sample to ~30 ms (quick) or ~100 ms (full) */
    double target = st.quick ? 0.03 : 0.1;
    long it = 4096;
    for (;;) {
      f.iters = it;
      double t0 = now_s();
      pfcal_cpu_pool_run(task_fma, &f);
      double t = now_s() - t0;
      if (t >= 0.005 || it > (1L << 40)) {
        double scaled = (double)it * target / (t > 0 ? t : 1e-9);
        st.fma_iters[p] = scaled < 1024 ? 1024 : (long)scaled;
        break;
      }
      it *= 4;
    }
  }
  f.iters = st.fma_iters[p];
  double t0 = now_s();
  pfcal_cpu_pool_run(task_fma, &f);
  double t = now_s() - t0;
  *flops = f.flop * pfcal_cpu_pool_size() / t;
  return 0;
}

static void cpu_teardown(void) {
  pfcal_cpu_pool_stop();
  free(st.a);
  free(st.b);
  free(st.c);
  st.a = st.b = st.c = NULL;
}

const pfcal_backend pfcal_cpu_backend = {
    .name = "cpu",
    .power_source = "rapl",
    .probe = pfcal_cpu_probe,
    .setup = cpu_setup,
    .launch = cpu_launch,
    .stream = cpu_stream,
    .vector_fma = cpu_vector,
    .tensor = NULL,
    .copy = NULL,
    .teardown = cpu_teardown,
};
