/* test_calibration_cpu.c - the cpu back-end measures something physical.
 *
 * No timed assertions: the stream "copy" kernel of the cpu back-end and a
 * plain memcpy timed here, both on one thread, best of 7 each (the least
 * disturbed by other processes), must agree within a factor of 3: they move
 * the same bytes through the same memory system.  The sanitizer build (-O0,
 * every load and store of the copy loop checked, memcpy checked once per call)
 * measures the instrumentation instead, so there only the physical band is
 * checked (measured: 2.5 vs 18 GB/s under load). The FMA
 * and launch measurements must be positive and finite.  A short pfcal_run
 * (streams and launch skipped) checks the document's shape. */
#include "check.h"

#include "pfcal.h"
#include "core/core.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <time.h>

#if defined(__SANITIZE_ADDRESS__)
#define PF_SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PF_SANITIZED 1
#endif
#endif

static double now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Bandwidth of a plain single-threaded memcpy, counted like STREAM copy
 * (bytes read + bytes written), best of 7. */
static double memcpy_Bps(size_t bytes) {
  char *a = malloc(bytes), *b = malloc(bytes);
  if (!a || !b) {
    free(a);
    free(b);
    return 0;
  }
  memset(a, 1, bytes);
  memset(b, 2, bytes);
  double v[7];
  for (int i = 0; i < 7; i++) {
    double t0 = now_s();
    memcpy(b, a, bytes);
    double t = now_s() - t0;
    v[i] = 2.0 * (double)bytes / t;
    a[i] = b[bytes - 1 - i]; /* keep the copies observable */
  }
  free(a);
  free(b);
  double best = 0;
  for (int i = 0; i < 7; i++) best = v[i] > best ? v[i] : best;
  return best;
}

int main(void) {
  const pfcal_backend *be = &pfcal_cpu_backend;
  pfcal_opts o;
  memset(&o, 0, sizeof o);
  o.quick = true;
  o.seed = 3;
  o.threads = 1;
  pfcal_info in;
  int rc = be->probe(&o, &in);
  CHECK_INT(rc, 0);
  CHECK(in.name[0] != '\0');
  CHECK_INT(in.count, 1);
  CHECK(in.memory_B > 0);
  rc = be->setup(&o, &in);
  if (rc) fprintf(stderr, "setup: %s\n", pf_error_detail());
  CHECK_INT(rc, 0);
  CHECK_INT(in.units, 1);
  CHECK(in.array_B >= (16u << 20));

  double copy[7];
  for (int i = 0; i < 7; i++)
    CHECK_INT(be->stream(PFCAL_COPY, &copy[i]), 0);
  double stream_copy = 0;
  for (int i = 0; i < 7; i++) stream_copy = copy[i] > stream_copy ? copy[i] : stream_copy;
  double plain = memcpy_Bps(in.array_B);
  printf("cpu back-end copy %.2f GB/s, plain memcpy %.2f GB/s (one thread, %.0f MiB)\n", stream_copy * 1e-9,
         plain * 1e-9, in.array_B / 1048576.0);
  CHECK(plain > 0 && stream_copy > 0);
#ifndef PF_SANITIZED
  CHECK(stream_copy < 3.0 * plain && plain < 3.0 * stream_copy);
#endif

  for (int k = 0; k < PFCAL_NSTREAM; k++) {
    double bw = 0;
    CHECK_INT(be->stream((pfcal_stream)k, &bw), 0);
    CHECK(bw > 1e8 && bw < 1e13); /* 0.1 GB/s .. 10 TB/s: a physical band, not a timing */
  }
  double fl = 0;
  CHECK_INT(be->vector_fma(PF_FP64, &fl), 0);
  CHECK(fl > 1e8 && fl < 1e13);
  double fl32 = 0;
  CHECK_INT(be->vector_fma(PF_FP32, &fl32), 0);
  CHECK(fl32 > 1e8 && fl32 < 2e13);
  CHECK_INT(be->vector_fma(PF_FP16, &fl), PF_EINVAL);
  double lat = 0;
  CHECK_INT(be->launch(&lat), 0);
  CHECK(lat > 0 && lat < 1.0);
  be->teardown();

  /* the whole harness on the FMA kernels only: the document's shape */
  o.skip_stream = o.skip_launch = true;
  o.progress = false;
  setenv("PF_FAKE_DATE", "2000-01-01T00:00:00Z", 1);
  cJSON *doc = NULL;
  rc = pfcal_run(be, &o, &doc);
  if (rc) fprintf(stderr, "pfcal_run: %s\n", pf_error_detail());
  CHECK_INT(rc, 0);
  if (doc) {
    CHECK_INT(cJSON_GetObjectItem(doc, "schema_version")->valueint, 1);
    CHECK_STR(cJSON_GetObjectItem(doc, "backend")->valuestring, "cpu");
    CHECK_STR(cJSON_GetObjectItem(doc, "mode")->valuestring, "quick");
    CHECK_STR(cJSON_GetObjectItem(doc, "date")->valuestring, "2000-01-01T00:00:00Z");
    const cJSON *res = cJSON_GetObjectItem(doc, "results");
    const cJSON *fp64 = cJSON_GetObjectItem(cJSON_GetObjectItem(res, "vector_flops"), "fp64");
    CHECK(fp64 && cJSON_IsNumber(cJSON_GetObjectItem(fp64, "median")));
    CHECK(fp64 && cJSON_IsNumber(cJSON_GetObjectItem(fp64, "best")));
    CHECK(fp64 && cJSON_IsNumber(cJSON_GetObjectItem(fp64, "cv")));
    CHECK(fp64 && cJSON_GetArraySize(cJSON_GetObjectItem(fp64, "samples")) >= 5);
    CHECK(cJSON_GetObjectItem(res, "memory_bw") == NULL); /* skipped */
    const cJSON *uns = cJSON_GetObjectItem(res, "unsupported");
    CHECK(uns && cJSON_GetArraySize(uns) == 1 &&
          strcmp(cJSON_GetArrayItem(uns, 0)->valuestring, "vector_flops.fp16") == 0);
    CHECK(cJSON_GetObjectItem(doc, "provenance") != NULL);
    CHECK(cJSON_GetObjectItem(doc, "power_model") == NULL); /* quick mode fits no power model */
    cJSON_Delete(doc);
  }
  /* --device out of range is a usage error, not a crash */
  o.device = 5;
  CHECK_INT(pfcal_run(be, &o, &doc), PF_EINVAL);
  return pf_check_done();
}
