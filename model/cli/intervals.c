/* intervals.c - the prediction intervals of predict, sweep and plan
 * (study/interval.h): the validation folder's rows built as the measured
 * runs they are (no option of the command applied to them), one pool per
 * command, so each validation row is predicted at most once however many
 * predictions ask for an interval. */
#include "validate_cli.h"

#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int pf_cli_intervals_open(pf_cli_intervals *ci, const char *dir) {
  memset(ci, 0, sizeof *ci);
  snprintf(ci->dir, sizeof ci->dir, "%s", dir ? dir : pf_validation_dir());
  ci->vo = pf_cli_validate_opts(&ci->none, &ci->vd, ci->dir);
  return pf_ipool_open(ci->dir, &ci->vo, &ci->pool);
}

int pf_cli_intervals_of(pf_cli_intervals *ci, const pf_scenario *sc, bool efficiency, pf_prediction *p) {
  if (!ci->pool) return 0;
  int rc = pf_interval_of(ci->pool, sc, efficiency, &p->interval);
  if (rc == 0) pf_interval_energy(p);
  return rc;
}

void pf_cli_intervals_close(pf_cli_intervals *ci) {
  pf_ipool_free(ci->pool);
  ci->pool = NULL;
}
