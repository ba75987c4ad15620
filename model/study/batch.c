/* batch.c - many predictions over all cores (see batch.h), through the one
 * worker runner (workers.c): each item's pf_scenario (updated by pf_predict:
 * derived plan fields) and pf_prediction travel back through the worker's pipe. */
#include "batch.h"

#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  pf_scenario sc;
  pf_prediction pred;
  int rc;
  char detail[512];
} wire;

static void run_one(pf_batch_item *it) {
  it->rc = pf_resolve_predict(it->sc, &it->pred);
  snprintf(it->detail, sizeof it->detail, "%s", it->rc < 0 ? pf_error_detail() : "");
}

static int batch_work(void *ctx, int i, int fd) {
  pf_batch_item *it = &((pf_batch_item *)ctx)[i];
  run_one(it);
  wire *w = malloc(sizeof *w);
  if (!w) return 1;
  w->sc = *it->sc;
  w->pred = it->pred;
  w->rc = it->rc;
  memcpy(w->detail, it->detail, sizeof w->detail);
  int rc = pf_write_all(fd, w, sizeof *w);
  free(w);
  return rc;
}

static int batch_collect(void *ctx, int i, int fd) {
  pf_batch_item *it = &((pf_batch_item *)ctx)[i];
  wire *w = malloc(sizeof *w);
  if (!w) return 1;
  int rc = pf_read_all(fd, w, sizeof *w);
  if (rc == 0) {
    *it->sc = w->sc;
    it->pred = w->pred;
    it->rc = w->rc;
    memcpy(it->detail, w->detail, sizeof it->detail);
  }
  free(w);
  return rc;
}

static void batch_failed(void *ctx, int i, const char *why) {
  pf_batch_item *it = &((pf_batch_item *)ctx)[i];
  it->rc = PF_ESIM;
  snprintf(it->detail, sizeof it->detail, "prediction worker failed: %s", why);
}

int pf_predict_batch(pf_batch_item *items, int n, int jobs, const char *progress) {
  if (jobs <= 0) jobs = pf_workers_default_jobs();
  if (progress) pf_progress_begin(progress, n, false);
  int rc = 0;
  if (jobs == 1 || n <= 1) {
    for (int i = 0; i < n; i++) {
      run_one(&items[i]);
      if (progress) pf_progress_item();
    }
  } else {
    pf_workers_spec spec = {.n = n, .jobs = jobs, .work = batch_work, .collect = batch_collect,
                            .failed = batch_failed, .ctx = items, .progress = progress != NULL};
    rc = pf_workers_run(&spec);
  }
  if (progress) pf_progress_end();
  return rc;
}
