/* harness_int.h - internal: one calibration run's state, shared by the run
 * and its document (harness.c) and the measurement groups (groups.c). */
#ifndef PFCAL_HARNESS_INT_H
#define PFCAL_HARNESS_INT_H

#include "pfcal.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <time.h>

static inline double pfcal_now_s(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* ---- one run's state --------------------------------------------------- */

typedef struct run {
  const pfcal_backend *be;
  const pfcal_opts *o;
  pfcal_info info;
  const pfcal_datasheet *ds;
  pfcal_power *pw;
  int share;             /* logical devices a power reading covers (pfcal_power_share) */
  double package_idle_W; /* the package's bare idle while share > 1, read before the context (else 0) */
  pfcal_protocol pr;
  cJSON *unsupported;
  char hostname[256];
} run;

/* The groups: each measures what the back-end and the options allow and adds
 * its results to `results` (kinds the back-end lacks go to r->unsupported).
 * Return 0 or the back-end's error. */
int pfcal_group_launch(run *r, cJSON *results);
int pfcal_group_streams(run *r, cJSON *results);
int pfcal_group_flops(run *r, cJSON *results, bool tensor);
int pfcal_group_copies(run *r, cJSON *results);
/* Mean power over `seconds` of idle (no work submitted), from the energy
 * counter, else from power readings every 100 ms. 0 when not readable. */
double pfcal_idle_power(run *r, double seconds);
/* How many measurements pfcal_run makes, for the progress bar. */
long pfcal_count_items(const run *r, bool fit_power);

#endif
