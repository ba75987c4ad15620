/* ccl_main.c - preflight-cal-ccl: the collective back-end of `preflight calibrate --collectives`.
 *
 * Times NCCL (NVIDIA) or RCCL (AMD) all-reduce, all-gather, reduce-scatter and send/receive over a size
 * range, the way nccl-tests does (warm-up, then iterations timed on the host around stream synchronisation,
 * out-of-place buffers, algbw = size / time, busbw = algbw x the collective's factor: 2(n-1)/n all-reduce,
 * (n-1)/n all-gather and reduce-scatter, 1 send/receive; doc/PERFORMANCE.md of nccl-tests), and writes the
 * results as the "collectives" section of a calibration JSON document on stdout.
 *
 * Everything GPU-side is opened at run time with dlopen, like NVML in the harness: the collective library
 * (libnccl.so.2 or librccl.so.1) and the runtime (libcudart.so.12/.11 or libamdhip64.so.6/.5), so this
 * executable is plain C, builds everywhere and reports a missing library or device itself (exit 3).
 * Processes: one process over every GPU of the node (ncclCommInitAll), or, under Slurm with SLURM_NTASKS > 1,
 * one task per GPU (SLURM_LOCALID picks it) that meet through ncclCommInitRank with the unique id written by
 * rank 0 to a file on a shared file system (--id-file, default ./preflight-ccl-id.$SLURM_JOB_ID): then the
 * section covers the NIC path too.  Only rank 0 prints.
 *
 * Options are read here, not with the option table of model/core/opts.h: this program links cJSON only,
 * and --quick sets several defaults at its place on the command line.  Numbers are read to their end
 * (strtol / strtod) and checked; a bad one is refused naming the option.
 *
 * Exit: 0 done, 2 usage (or a malformed Slurm variable), 3 no library / runtime / device or a library call
 * failed.
 */
#define _GNU_SOURCE
#include <cjson/cJSON.h>
#include <dlfcn.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_DEV 16
#define MAX_SIZES 64

/* ---- the libraries, by dlopen ---- */

typedef int nres; /* ncclResult_t / cudaError_t / hipError_t: 0 = success */
typedef struct { char internal[128]; } ncclUniqueId; /* nccl.h: NCCL_UNIQUE_ID_BYTES 128 */
typedef void *ncclComm_t;
typedef void *stream_t;
enum { NCCL_FLOAT = 7, NCCL_SUM = 0 }; /* nccl.h: ncclFloat32 = 7, ncclSum = 0 (stable ABI) */

static struct {
  const char *lib_name, *rt_name;
  nres (*getVersion)(int *);
  nres (*getUniqueId)(ncclUniqueId *);
  nres (*commInitAll)(ncclComm_t *, int, const int *);
  nres (*commInitRank)(ncclComm_t *, int, ncclUniqueId, int);
  nres (*commDestroy)(ncclComm_t);
  nres (*groupStart)(void);
  nres (*groupEnd)(void);
  nres (*allReduce)(const void *, void *, size_t, int, int, ncclComm_t, stream_t);
  nres (*allGather)(const void *, void *, size_t, int, ncclComm_t, stream_t);
  nres (*reduceScatter)(const void *, void *, size_t, int, int, ncclComm_t, stream_t);
  nres (*send)(const void *, size_t, int, int, ncclComm_t, stream_t);
  nres (*recv)(void *, size_t, int, int, ncclComm_t, stream_t);
  const char *(*errorString)(nres);
  nres (*getDeviceCount)(int *);
  nres (*setDevice)(int);
  nres (*malloc_)(void **, size_t);
  nres (*free_)(void *);
  nres (*memset_)(void *, int, size_t);
  nres (*streamCreate)(stream_t *);
  nres (*streamSync)(stream_t);
} L;

static void *sym(void *h, const char *name, int *missing) {
  void *p = dlsym(h, name);
  if (!p) { fprintf(stderr, "preflight-cal-ccl: %s lacks %s\n", L.lib_name, name); (*missing)++; }
  return p;
}

/* Open NCCL or RCCL and the matching runtime; lib: "nccl", "rccl" or NULL (try both). */
static int open_libs(const char *lib) {
  static const char *ncclv[] = {"libnccl.so.2", "libnccl.so", NULL}, *rcclv[] = {"librccl.so.1", "librccl.so", NULL};
  static const char *cudav[] = {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so", NULL};
  static const char *hipv[] = {"libamdhip64.so.6", "libamdhip64.so.5", "libamdhip64.so", NULL};
  void *h = NULL, *rt = NULL;
  int amd = 0;
  for (int pass = 0; pass < 2 && !h; pass++) {
    amd = pass == 1;
    if (lib && strcmp(lib, amd ? "rccl" : "nccl")) continue;
    for (const char **n = amd ? rcclv : ncclv; *n && !h; n++)
      if ((h = dlopen(*n, RTLD_NOW | RTLD_GLOBAL))) L.lib_name = *n;
  }
  if (!h) {
    fprintf(stderr, "preflight-cal-ccl: cannot load %s (looked for libnccl.so.2 and librccl.so.1 on the library "
                    "path): load the NCCL or RCCL module of the site (e.g. `module load NCCL`) or set "
                    "LD_LIBRARY_PATH\n", lib ? lib : "NCCL or RCCL");
    return 3;
  }
  for (const char **n = amd ? hipv : cudav; *n && !rt; n++)
    if ((rt = dlopen(*n, RTLD_NOW | RTLD_GLOBAL))) L.rt_name = *n;
  if (!rt) {
    fprintf(stderr, "preflight-cal-ccl: cannot load the %s runtime (%s): load the CUDA / ROCm module\n",
            amd ? "HIP" : "CUDA", amd ? "libamdhip64.so" : "libcudart.so");
    return 3;
  }
  int miss = 0;
  /* dlsym returns an object pointer; copy its bits into the function pointer (POSIX guarantees they fit) */
#define LOAD(field, handle, name)                                                                                  \
  do {                                                                                                            \
    void *p_ = sym((handle), (name), &miss);                                                                      \
    memcpy(&L.field, &p_, sizeof p_);                                                                             \
  } while (0)
  LOAD(getVersion, h, "ncclGetVersion");
  LOAD(getUniqueId, h, "ncclGetUniqueId");
  LOAD(commInitAll, h, "ncclCommInitAll");
  LOAD(commInitRank, h, "ncclCommInitRank");
  LOAD(commDestroy, h, "ncclCommDestroy");
  LOAD(groupStart, h, "ncclGroupStart");
  LOAD(groupEnd, h, "ncclGroupEnd");
  LOAD(allReduce, h, "ncclAllReduce");
  LOAD(allGather, h, "ncclAllGather");
  LOAD(reduceScatter, h, "ncclReduceScatter");
  LOAD(send, h, "ncclSend");
  LOAD(recv, h, "ncclRecv");
  LOAD(errorString, h, "ncclGetErrorString");
  const char *pre = amd ? "hip" : "cuda";
  char nm[64];
#define RT(field, suffix) do { snprintf(nm, sizeof nm, "%s" suffix, pre); LOAD(field, rt, nm); } while (0)
  RT(getDeviceCount, "GetDeviceCount");
  RT(setDevice, "SetDevice");
  RT(malloc_, "Malloc");
  RT(free_, "Free");
  RT(memset_, "Memset");
  RT(streamCreate, "StreamCreate");
  RT(streamSync, "StreamSynchronize");
#undef RT
#undef LOAD
  return miss ? 3 : 0;
}

/* A failed library call: what failed, the code, NCCL's own words for NCCL calls; exit 3 (no device / driver /
 * working library: the calibration cannot run here). */
#define CK(call, what)                                                                                             \
  do {                                                                                                            \
    nres r_ = (call);                                                                                             \
    if (r_ != 0) {                                                                                                \
      if (strstr(what, "runtime"))                                                                                \
        fprintf(stderr, "preflight-cal-ccl: %s failed (error %d from %s): no usable GPU or driver here; run on a "  \
                        "GPU node\n", what, r_, L.rt_name);                                                       \
      else                                                                                                        \
        fprintf(stderr, "preflight-cal-ccl: %s failed (%d: %s)\n", what, r_, L.errorString(r_));                  \
      return 3;                                                                                                   \
    }                                                                                                             \
  } while (0)

/* ---- options ---- */

typedef struct opts {
  double b, e, f;
  int quick, iters, warmup;
  const char *lib, *id_file;
} opts;

/* A size in bytes: a number with an optional K, M or G (2^10, 2^20, 2^30), positive and finite. */
static double parse_size(const char *s, int *ok) {
  char *end;
  double x = strtod(s, &end);
  double m = *end == 'K' || *end == 'k' ? 1024.0 : *end == 'M' ? 1048576.0 : *end == 'G' ? 1073741824.0 : 1.0;
  if (m > 1) end++;
  *ok = end != s && *end == '\0' && x > 0 && isfinite(x * m);
  return x * m;
}

/* A number read to its end (strtod), finite. */
static double parse_number(const char *s, int *ok) {
  char *end;
  errno = 0;
  double x = strtod(s, &end);
  *ok = end != s && *end == '\0' && errno == 0 && isfinite(x);
  return x;
}

/* An integer read to its end (strtol, base 10) in [lo, hi]. */
static int parse_int(const char *s, long lo, long hi, int *ok) {
  char *end;
  errno = 0;
  long x = strtol(s, &end, 10);
  *ok = end != s && *end == '\0' && errno == 0 && x >= lo && x <= hi;
  return *ok ? (int)x : 0;
}

static int parse(int argc, char **argv, opts *o) {
  *o = (opts){8, 1073741824.0, 4, 0, 20, 5, NULL, NULL};
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
    int ok = 1;
    if (!strcmp(a, "--quick")) { o->quick = 1; o->e = 268435456.0; o->f = 8; o->iters = 10; o->warmup = 2; continue; }
    if (!strcmp(a, "--full")) continue;
    if (strcmp(a, "-b") && strcmp(a, "-e") && strcmp(a, "-f") && strcmp(a, "--iters") && strcmp(a, "--library") &&
        strcmp(a, "--id-file")) {
      fprintf(stderr, "preflight-cal-ccl: unknown option %s (valid: --quick, --full, -b, -e, -f, --iters, "
                      "--library nccl|rccl, --id-file PATH)\n", a);
      return 2;
    }
    if (!v) { fprintf(stderr, "preflight-cal-ccl: %s needs a value\n", a); return 2; }
    if (!strcmp(a, "-b")) o->b = parse_size(v, &ok);
    else if (!strcmp(a, "-e")) o->e = parse_size(v, &ok);
    else if (!strcmp(a, "-f")) { o->f = parse_number(v, &ok); ok = ok && o->f > 1; }
    else if (!strcmp(a, "--iters")) o->iters = parse_int(v, 1, INT_MAX, &ok);
    else if (!strcmp(a, "--library")) { o->lib = v; ok = !strcmp(v, "nccl") || !strcmp(v, "rccl"); }
    else if (!strcmp(a, "--id-file")) o->id_file = v;
    if (!ok) { fprintf(stderr, "preflight-cal-ccl: %s \"%s\": invalid\n", a, v); return 2; }
    i++;
  }
  if (o->e < o->b) { fprintf(stderr, "preflight-cal-ccl: -e below -b\n"); return 2; }
  return 0;
}

/* ---- ranks: one process over all GPUs, or one Slurm task per GPU ---- */

typedef struct ranks {
  int n, me, local, nodes, ndev; /* ndev: GPUs this process drives */
  ncclComm_t comm[MAX_DEV];
  stream_t stream[MAX_DEV];
  void *sbuf[MAX_DEV], *rbuf[MAX_DEV];
} ranks;

/* The integer in environment variable k (Slurm's task layout), dflt when unset or empty; 2 with a message
 * when it is not a non-negative integer. */
static int env_int(const char *k, int dflt, int *out) {
  const char *v = getenv(k);
  int ok = 1;
  *out = v && *v ? parse_int(v, 0, INT_MAX, &ok) : dflt;
  if (!ok) { fprintf(stderr, "preflight-cal-ccl: $%s \"%s\": expected a non-negative integer\n", k, v); return 2; }
  return 0;
}

static int exchange_id(const opts *o, ranks *R, ncclUniqueId *id) {
  char path[512];
  if (o->id_file) snprintf(path, sizeof path, "%s", o->id_file);
  else snprintf(path, sizeof path, "preflight-ccl-id.%s", getenv("SLURM_JOB_ID") ? getenv("SLURM_JOB_ID") : "0");
  if (R->me == 0) {
    CK(L.getUniqueId(id), "ncclGetUniqueId");
    char tmp[600];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "wb");
    if (!f || fwrite(id, sizeof *id, 1, f) != 1 || fclose(f) != 0 || rename(tmp, path) != 0) {
      fprintf(stderr, "preflight-cal-ccl: cannot write the NCCL id to %s: %s (give --id-file on a shared file "
                      "system)\n", path, strerror(errno));
      return 3;
    }
    return 0;
  }
  for (int t = 0; t < 600; t++) { /* 60 s */
    FILE *f = fopen(path, "rb");
    if (f) {
      size_t k = fread(id, sizeof *id, 1, f);
      fclose(f);
      if (k == 1) return 0;
    }
    struct timespec ts = {0, 100000000};
    nanosleep(&ts, NULL);
  }
  fprintf(stderr, "preflight-cal-ccl: rank %d: no NCCL id in %s after 60 s (is it on a shared file system?)\n", R->me,
          path);
  return 3;
}

static int setup(const opts *o, ranks *R, size_t bytes) {
  int count = 0;
  CK(L.getDeviceCount(&count), "the runtime's device count");
  if (count < 1) { fprintf(stderr, "preflight-cal-ccl: no GPU found\n"); return 3; }
  int rc = env_int("SLURM_NTASKS", 1, &R->n);
  if (rc) return rc;
  if (R->n > 1) { /* one task per GPU */
    if ((rc = env_int("SLURM_PROCID", 0, &R->me)) || (rc = env_int("SLURM_LOCALID", 0, &R->local)) ||
        (rc = env_int("SLURM_NNODES", 1, &R->nodes)))
      return rc;
    R->ndev = 1;
    if (R->local >= count) { fprintf(stderr, "preflight-cal-ccl: task %d has no GPU %d\n", R->me, R->local); return 3; }
    ncclUniqueId id;
    if ((rc = exchange_id(o, R, &id))) return rc;
    CK(L.setDevice(R->local), "the runtime's set-device");
    CK(L.commInitRank(&R->comm[0], R->n, id, R->me), "ncclCommInitRank");
  } else {
    R->ndev = R->n = count > MAX_DEV ? MAX_DEV : count;
    R->nodes = 1;
    CK(L.commInitAll(R->comm, R->ndev, NULL), "ncclCommInitAll");
  }
  for (int d = 0; d < R->ndev; d++) {
    CK(L.setDevice(R->ndev > 1 ? d : R->local), "the runtime's set-device");
    CK(L.streamCreate(&R->stream[d]), "the runtime's stream creation");
    CK(L.malloc_(&R->sbuf[d], bytes), "the runtime's device allocation");
    CK(L.malloc_(&R->rbuf[d], bytes), "the runtime's device allocation");
    CK(L.memset_(R->sbuf[d], 0, bytes), "the runtime's memset");
  }
  return 0;
}

enum { OP_AR, OP_AG, OP_RS, OP_SR, OP_N };
static const char *op_names[OP_N] = {"all_reduce", "all_gather", "reduce_scatter", "sendrecv"};

/* One call of op on every GPU this process drives; size = nccl-tests' size column. */
static int issue(const ranks *R, int op, size_t size) {
  size_t cnt = size / 4, part = cnt / (size_t)R->n;
  CK(L.groupStart(), "ncclGroupStart");
  for (int d = 0; d < R->ndev; d++) {
    int rank = R->ndev > 1 ? d : R->me;
    switch (op) {
    case OP_AR: CK(L.allReduce(R->sbuf[d], R->rbuf[d], cnt, NCCL_FLOAT, NCCL_SUM, R->comm[d], R->stream[d]), "ncclAllReduce"); break;
    case OP_AG: CK(L.allGather(R->sbuf[d], R->rbuf[d], part, NCCL_FLOAT, R->comm[d], R->stream[d]), "ncclAllGather"); break;
    case OP_RS: CK(L.reduceScatter(R->sbuf[d], R->rbuf[d], part, NCCL_FLOAT, NCCL_SUM, R->comm[d], R->stream[d]), "ncclReduceScatter"); break;
    default:
      CK(L.send(R->sbuf[d], cnt, NCCL_FLOAT, (rank + 1) % R->n, R->comm[d], R->stream[d]), "ncclSend");
      CK(L.recv(R->rbuf[d], cnt, NCCL_FLOAT, (rank - 1 + R->n) % R->n, R->comm[d], R->stream[d]), "ncclRecv");
    }
  }
  CK(L.groupEnd(), "ncclGroupEnd");
  return 0;
}

static int sync_all(const ranks *R) {
  for (int d = 0; d < R->ndev; d++) CK(L.streamSync(R->stream[d]), "the runtime's stream synchronisation");
  return 0;
}

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return ts.tv_sec + ts.tv_nsec * 1e-9;
}

int main(int argc, char **argv) {
  opts o;
  int rc = parse(argc, argv, &o);
  if (rc) return rc;
  if ((rc = open_libs(o.lib))) return rc;
  ranks R;
  memset(&R, 0, sizeof R);
  size_t maxb = (size_t)o.e;
  if ((rc = setup(&o, &R, maxb))) return rc;
  int version = 0;
  L.getVersion(&version);
  cJSON *doc = cJSON_CreateObject(), *sec = NULL, *res = NULL;
  if (R.me == 0) {
    cJSON_AddNumberToObject(doc, "schema_version", 1);
    cJSON_AddStringToObject(doc, "backend", "ccl");
    sec = cJSON_AddObjectToObject(doc, "collectives");
    cJSON_AddStringToObject(sec, "library", strstr(L.lib_name, "rccl") ? "rccl" : "nccl");
    cJSON_AddStringToObject(sec, "library_file", L.lib_name);
    cJSON_AddNumberToObject(sec, "library_version", version);
    cJSON_AddNumberToObject(sec, "nodes", R.nodes);
    cJSON_AddNumberToObject(sec, "gpus_per_node", R.n / (R.nodes > 0 ? R.nodes : 1));
    cJSON_AddNumberToObject(sec, "ranks", R.n);
    cJSON_AddNumberToObject(sec, "iterations", o.iters);
    res = cJSON_AddArrayToObject(sec, "results");
  }
  for (int op = 0; op < OP_N; op++)
    for (double sz = o.b; sz <= o.e * (1 + 1e-12); sz *= o.f) {
      size_t size = (size_t)sz / (4 * (size_t)R.n) * 4 * (size_t)R.n; /* whole elements per rank */
      if (size == 0) continue;
      for (int i = 0; i < o.warmup; i++)
        if ((rc = issue(&R, op, size))) return rc;
      if ((rc = sync_all(&R))) return rc;
      double t0 = now_s();
      for (int i = 0; i < o.iters; i++)
        if ((rc = issue(&R, op, size))) return rc;
      if ((rc = sync_all(&R))) return rc;
      double t = (now_s() - t0) / o.iters;
      if (R.me != 0) continue;
      double factor = op == OP_AR ? 2.0 * (R.n - 1) / R.n : op == OP_SR ? 1.0 : (double)(R.n - 1) / R.n;
      cJSON *x = cJSON_CreateObject();
      cJSON_AddStringToObject(x, "op", op_names[op]);
      cJSON_AddNumberToObject(x, "size_B", (double)size);
      cJSON_AddNumberToObject(x, "time_us", t * 1e6);
      cJSON_AddNumberToObject(x, "algbw_GBps", size / t / 1e9);
      cJSON_AddNumberToObject(x, "busbw_GBps", size / t / 1e9 * factor);
      cJSON_AddItemToArray(res, x);
    }
  for (int d = 0; d < R.ndev; d++) {
    L.free_(R.sbuf[d]);
    L.free_(R.rbuf[d]);
    L.commDestroy(R.comm[d]);
  }
  if (R.me == 0) {
    char *txt = cJSON_Print(doc);
    if (txt) printf("%s\n", txt);
    free(txt);
  }
  cJSON_Delete(doc);
  return 0;
}
