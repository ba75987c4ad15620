/* cpu_host.c - the host side of the cpu calibration back-end (cpu_backend.c):
 * what probe() reports and the worker pool the kernels run on.
 *
 *   - probe: the model name and vendor from /proc/cpuinfo, the widest FMA
 *     path (cpu_fma.c), the cores this process may use (cgroups, taskset,
 *     Slurm: sched_getaffinity), the maximum clock from cpufreq (else
 *     /proc/cpuinfo), the memory, and the last-level cache summed over all
 *     its instances (sysfs; Zen/EPYC L3 is per CCX), which sizes the stream
 *     arrays.
 *   - pool: one thread per allowed core (or --threads), each pinned to its
 *     core; the caller is thread 0.  A task wakes every thread on a barrier
 *     and joins on a second one, so one dispatch is the CPU analogue of a
 *     kernel launch.  Results land in one cache line per thread (no false
 *     sharing).
 */
#define _GNU_SOURCE
#include "cpu.h"

#include "../harness/pfcal.h"
#include "core/core.h"

#include <gnu/libc-version.h>
#include <pthread.h>
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <unistd.h>

/* ---- worker pool ----------------------------------------------------------- */

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
  pfcal_cpu_task fn;
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

void pfcal_cpu_pool_run(pfcal_cpu_task fn, void *arg) {
  pool.fn = fn;
  pool.arg = arg;
  pthread_barrier_wait(&pool.start);
  fn(0, pool.n, arg);
  pthread_barrier_wait(&pool.done);
}

int pfcal_cpu_pool_size(void) { return pool.n; }

void pfcal_cpu_sink_add(int tid, double v) { pool.sink[tid].v += v; }

void pfcal_cpu_pool_stop(void) {
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

int pfcal_cpu_pool_start(int want) {
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

int pfcal_cpu_probe(const pfcal_opts *o, pfcal_info *in) {
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
