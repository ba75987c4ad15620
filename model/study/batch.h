/* batch.h - many predictions at once, spread over the machine's cores.
 *
 * Each prediction runs in a worker process (workers.h) that sends the
 * pf_prediction back through a pipe, at most `jobs` at a time; results land in
 * input order, so the output is the same whatever the number of jobs.  With a
 * label, the batch draws its own progress bar (progress.h; inside the bar of
 * the loop that runs it, if any), one item per prediction; with NULL it
 * draws none, so its items never count in another loop's bar.
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

/* jobs <= 0: one per online CPU ($PREFLIGHT_JOBS overrides); progress: the
 * bar's label, or NULL for none. Returns 0 or a system error (fork/pipe);
 * per-item errors are in items[i].rc. */
int pf_predict_batch(pf_batch_item *items, int n, int jobs, const char *progress);

#endif
