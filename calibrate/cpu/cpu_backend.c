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
 */
#define _GNU_SOURCE
#include "cpu.h"

#include "../harness/pfcal.h"
#include "core/core.h"

#include <errno.h>
#include <gnu/libc-version.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

/* ---- worker pool ----------------------------------------------------------- */

typedef void (*task_fn)(int tid, int nth, void *arg);

typedef struct {
  double v;
  char pad[56]; /* one cache line per thread: no false sharing of results */
} sink_t;

static struct {
  int n; /* threads including the caller (tid 0) */
  bool up, quit;
  pthread_t th[PFCAL_MAX_THREADS];
  int cpu[PFCAL_MAX_THREADS]; /* core each thread is pinned to, -1 = none */
  pthread_barrier_t start, done;
  task_fn fn;
  void *arg;
  sink_t sink[PFCAL_MAX_THREADS];
} pool;

static void pin(int cpu) {
  if (cpu < 0) return;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  pthread_setaffinity_np(pthread_self(), sizeof set, &set); /* best effort */
}

/* Workers wait at this gate until every thread exists (gate 1) or creating
 * one failed (gate -1: leave without touching the barriers). */
static pthread_mutex_t gate_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gate_cv = PTHREAD_COND_INITIALIZER;
static int gate;

static void set_gate(int v) {
  pthread_mutex_lock(&gate_mu);
  gate = v;
  pthread_cond_broadcast(&gate_cv);
  pthread_mutex_unlock(&gate_mu);
}

static void *worker(void *p) {
  int tid = (int)(intptr_t)p;
  pin(pool.cpu[tid]);
  pthread_mutex_lock(&gate_mu);
  while (gate == 0)
    pthread_cond_wait(&gate_cv, &gate_mu);
  int g = gate;
  pthread_mutex_unlock(&gate_mu);
  if (g < 0) return NULL;
  for (;;) {
    pthread_barrier_wait(&pool.start);
    if (pool.quit) break;
    pool.fn(tid, pool.n, pool.arg);
    pthread_barrier_wait(&pool.done);
  }
  return NULL;
}

static void pool_run(task_fn fn, void *arg) {
  pool.fn = fn;
  pool.arg = arg;
  pthread_barrier_wait(&pool.start);
  fn(0, pool.n, arg);
  pthread_barrier_wait(&pool.done);
}

static void pool_stop(void) {
  if (!pool.up) return;
  pool.quit = true;
  pthread_barrier_wait(&pool.start);
  for (int i = 1; i < pool.n; i++)
    pthread_join(pool.th[i], NULL);
  pthread_barrier_destroy(&pool.start);
  pthread_barrier_destroy(&pool.done);
  pool.up = false;
  pool.quit = false;
}

/* The cores this process may run on (cgroups, taskset, Slurm). */
static int allowed_cpus(int *list, int max) {
  cpu_set_t set;
  int n = 0;
  if (sched_getaffinity(0, sizeof set, &set) == 0) {
    for (int c = 0; c < CPU_SETSIZE && n < max; c++)
      if (CPU_ISSET(c, &set)) list[n++] = c;
  }
  if (n == 0) {
    long k = sysconf(_SC_NPROCESSORS_ONLN);
    for (int c = 0; c < k && n < max; c++)
      list[n++] = -1;
  }
  return n > 0 ? n : 1;
}

static int pool_start(int want) {
  int cpus[PFCAL_MAX_THREADS];
  int avail = allowed_cpus(cpus, PFCAL_MAX_THREADS);
  int n = want > 0 ? want : avail;
  if (n > PFCAL_MAX_THREADS) n = PFCAL_MAX_THREADS;
  for (int i = 0; i < n; i++)
    pool.cpu[i] = i < avail ? cpus[i] : -1;
  pool.n = n;
  pool.quit = false;
  gate = 0;
  if (pthread_barrier_init(&pool.start, NULL, (unsigned)n)) return pf_error_set(PF_ENOMEM, "cannot create a barrier");
  if (pthread_barrier_init(&pool.done, NULL, (unsigned)n)) {
    pthread_barrier_destroy(&pool.start);
    return pf_error_set(PF_ENOMEM, "cannot create a barrier");
  }
  pin(pool.cpu[0]);
  for (int i = 1; i < n; i++) {
    int rc = pthread_create(&pool.th[i], NULL, worker, (void *)(intptr_t)i);
    if (rc) {
      set_gate(-1);
      for (int k = 1; k < i; k++)
        pthread_join(pool.th[k], NULL);
      pthread_barrier_destroy(&pool.start);
      pthread_barrier_destroy(&pool.done);
      return pf_error_set(PF_ENOMEM, "cannot start worker thread %d of %d: %s (try --threads %d)", i, n, strerror(rc),
                          i);
    }
  }
  set_gate(1);
  pool.up = true;
  return 0;
}

/* ---- probe --------------------------------------------------------------------- */

static bool read_line(const char *path, char *buf, size_t len) {
  FILE *f = fopen(path, "r");
  if (!f) return false;
  bool ok = fgets(buf, (int)len, f) != NULL;
  fclose(f);
  if (ok) buf[strcspn(buf, "\n")] = '\0';
  return ok;
}

/* "32768K" -> bytes */
static double parse_cache_size(const char *s) {
  char *end;
  double v = strtod(s, &end);
  if (end == s) return 0;
  if (*end == 'K')
    v *= 1024;
  else if (*end == 'M')
    v *= 1024 * 1024;
  else if (*end == 'G')
    v *= 1024.0 * 1024 * 1024;
  return v;
}

/* Last-level cache summed over its distinct instances (per CCX on EPYC). */
static double llc_total(int ncpu_all) {
  char seen[64][64];
  int nseen = 0, best_level = 0;
  double total = 0;
  for (int cpu = 0; cpu < ncpu_all; cpu++) {
    for (int idx = 0; idx < 8; idx++) {
      char path[128], buf[64], shared[64], size[32];
      snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/level", cpu, idx);
      if (!read_line(path, buf, sizeof buf)) break;
      char *end;
      long level = strtol(buf, &end, 10);
      if (end == buf) continue;
      snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/type", cpu, idx);
      if (read_line(path, buf, sizeof buf) && strcmp(buf, "Instruction") == 0) continue;
      if (level < best_level) continue;
      snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/size", cpu, idx);
      if (!read_line(path, size, sizeof size)) continue;
      snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu%d/cache/index%d/shared_cpu_list", cpu, idx);
      if (!read_line(path, shared, sizeof shared)) snprintf(shared, sizeof shared, "cpu%d", cpu);
      if (level > best_level) { /* a higher level: start over */
        best_level = (int)level;
        nseen = 0;
        total = 0;
      }
      bool dup = false;
      for (int k = 0; k < nseen; k++)
        if (strcmp(seen[k], shared) == 0) dup = true;
      if (dup) continue;
      if (nseen < 64) snprintf(seen[nseen++], sizeof seen[0], "%s", shared);
      total += parse_cache_size(size);
    }
  }
  return total;
}

static void cpuinfo_field(const char *key, char *out, size_t len) {
  FILE *f = fopen("/proc/cpuinfo", "r");
  if (!f) return;
  char line[512];
  size_t klen = strlen(key);
  while (fgets(line, sizeof line, f)) {
    if (strncmp(line, key, klen) != 0) continue;
    char *colon = strchr(line, ':');
    if (!colon) continue;
    colon++;
    while (*colon == ' ' || *colon == '\t')
      colon++;
    colon[strcspn(colon, "\n")] = '\0';
    snprintf(out, len, "%s", colon);
    break;
  }
  fclose(f);
}

static int cpu_probe(const pfcal_opts *o, pfcal_info *in) {
  memset(in, 0, sizeof *in);
  char model[PF_NAME_MAX] = "", vendor[64] = "";
  cpuinfo_field("model name", model, sizeof model);
  cpuinfo_field("vendor_id", vendor, sizeof vendor);
  struct utsname u;
  bool have_uname = uname(&u) == 0;
  if (!model[0]) snprintf(model, sizeof model, "%s CPU", have_uname ? u.machine : "unknown");
  snprintf(in->name, sizeof in->name, "%s", model);
  if (strstr(vendor, "AMD"))
    snprintf(in->vendor, sizeof in->vendor, "amd");
  else if (strstr(vendor, "Intel"))
    snprintf(in->vendor, sizeof in->vendor, "intel");
  else if (have_uname && strcmp(u.machine, "aarch64") == 0)
    snprintf(in->vendor, sizeof in->vendor, "arm");
  else
    snprintf(in->vendor, sizeof in->vendor, "unknown");
  snprintf(in->arch, sizeof in->arch, "%.32s-%s", have_uname ? u.machine : "cpu", pfcal_cpu_isa());
  in->count = 1;
  int cpus[PFCAL_MAX_THREADS];
  int avail = allowed_cpus(cpus, PFCAL_MAX_THREADS);
  in->units = o->threads > 0 ? o->threads : avail;
  char buf[64];
  if (read_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_max_freq", buf, sizeof buf)) {
    char *end;
    double khz = strtod(buf, &end);
    if (end != buf) in->clock_MHz = khz / 1000.0;
  }
  if (in->clock_MHz <= 0) {
    char mhz[64] = "";
    cpuinfo_field("cpu MHz", mhz, sizeof mhz);
    char *end;
    double v = strtod(mhz, &end);
    if (end != mhz) in->clock_MHz = v;
  }
  long pages = sysconf(_SC_PHYS_PAGES), psize = sysconf(_SC_PAGESIZE);
  if (pages > 0 && psize > 0) in->memory_B = (double)pages * (double)psize;
  long nconf = sysconf(_SC_NPROCESSORS_CONF);
  in->llc_B = llc_total(nconf > 0 ? (int)nconf : avail);
  snprintf(in->driver, sizeof in->driver, "none");
#if defined(__clang__)
  snprintf(in->runtime, sizeof in->runtime, "glibc %s, clang %d.%d", gnu_get_libc_version(), __clang_major__,
           __clang_minor__);
#elif defined(__GNUC__)
  snprintf(in->runtime, sizeof in->runtime, "glibc %s, gcc %d.%d", gnu_get_libc_version(), __GNUC__, __GNUC_MINOR__);
#else
  snprintf(in->runtime, sizeof in->runtime, "glibc %s", gnu_get_libc_version());
#endif
  return 0;
}

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
  pool.sink[tid].v += s0 + s1 + s2 + s3;
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
  pool.sink[tid].v += pfcal_cpu_fma(f->p, f->iters, st.fma_x + 0.001 * tid, &flop);
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
  int rc = pool_start(o->threads);
  if (rc) return rc;
  in->units = pool.n;
  /* each array >= 4x LLC (all instances), quick: all three <= 256 MiB */
  const double MiB = 1024.0 * 1024.0;
  double per = 4.0 * in->llc_B;
  double lo = o->quick ? 16 * MiB : 128 * MiB;
  if (per < lo) per = lo;
  double cap = o->quick ? 256 * MiB / 3.0 : 2048 * MiB;
  if (in->memory_B > 0 && cap > in->memory_B / 12.0) cap = in->memory_B / 12.0;
  if (per > cap) per = cap;
  size_t n = (size_t)(per / sizeof(double));
  n = n / ((size_t)pool.n * 512) * ((size_t)pool.n * 512); /* whole 4 KiB pages per thread */
  if (n == 0) n = (size_t)pool.n * 512;
  st.n = n;
  st.bytes = n * sizeof(double);
  st.a = alloc_array(st.bytes);
  st.b = alloc_array(st.bytes);
  st.c = alloc_array(st.bytes);
  if (!st.a || !st.b || !st.c)
    return pf_error_set(PF_ENOMEM, "cannot allocate 3 x %.0f MiB for the stream arrays", st.bytes / MiB);
  in->array_B = st.bytes;
  pool_run(task_init, NULL);
  return 0;
}

static int cpu_launch(double *s) {
  const int k = 200;
  double t0 = now_s();
  for (int i = 0; i < k; i++)
    pool_run(task_empty, NULL);
  *s = (now_s() - t0) / k;
  return 0;
}

static int cpu_stream(pfcal_stream k, double *Bps) {
  static const task_fn fns[PFCAL_NSTREAM] = {task_read, task_write, task_copy, task_triad, task_memcpy};
  static const double arrays[PFCAL_NSTREAM] = {1, 1, 2, 3, 2};
  if (k < 0 || k >= PFCAL_NSTREAM) return pf_error_set(PF_EINVAL, "no such stream kernel");
  double t0 = now_s();
  pool_run(fns[k], NULL);
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
      pool_run(task_fma, &f);
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
  pool_run(task_fma, &f);
  double t = now_s() - t0;
  *flops = f.flop * pool.n / t;
  return 0;
}

static void cpu_teardown(void) {
  pool_stop();
  free(st.a);
  free(st.b);
  free(st.c);
  st.a = st.b = st.c = NULL;
}

const pfcal_backend pfcal_cpu_backend = {
    .name = "cpu",
    .power_source = "rapl",
    .probe = cpu_probe,
    .setup = cpu_setup,
    .launch = cpu_launch,
    .stream = cpu_stream,
    .vector_fma = cpu_vector,
    .tensor = NULL,
    .copy = NULL,
    .teardown = cpu_teardown,
};
