/* batch.h - many predictions at once, spread over the machine's cores.
 *
 * Each prediction runs in a worker process (workers.h) that sends the
 * pf_prediction back through a pipe, at most `jobs` at a time; results land in
 * input order, so the output is the same whatever the number of jobs.  Each
 * finished item advances the progress bar, when one is running.
 */
#ifndef PREFLIGHT_BATCH_H
#define PREFLIGHT_BATCH_H

#include "predict.h"

typedef struct pf_batch_item {
  pf_scenario *sc;        /* borrowed; updated as pf_predict() updates it (derived plan fields) */
  pf_prediction pred;     /* filled */
  int rc;                 /* pf_predict()'s return */
  char detail[512];       /* pf_error_detail() when rc < 0 */
} pf_batch_item;

/* jobs <= 0: one per online CPU ($PREFLIGHT_JOBS overrides). Returns 0 or a
 * system error (fork/pipe); per-item errors are in items[i].rc. */
int pf_predict_batch(pf_batch_item *items, int n, int jobs);

#endif
