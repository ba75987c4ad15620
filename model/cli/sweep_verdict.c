/* sweep_verdict.c - does any point of a sweep run?  The exit status of a
 * sweep whose every point fails (docs/exit-codes.md: 1, the job cannot run as
 * asked, with the rows printed), decided in one place for the sweep, its JSON
 * shards merged and its CSV shards merged. */
#include "results.h"

#include "core/core.h"

#include <stdio.h>
#include <string.h>

void pf_sweep_verdict_add(pf_sweep_verdict *v, const char *status, const char *reason) {
  if (!status || !*status) { v->runs++; return; }
  if (v->first_rc) return;
  v->first_rc = strcmp(status, "does not fit") == 0 ? PF_ENOFIT : PF_EPLAN;
  snprintf(v->first_reason, sizeof v->first_reason, "%s", reason && *reason ? reason : status);
}

int pf_sweep_verdict_end(const pf_sweep_verdict *v) {
  if (v->runs > 0 || !v->first_rc) return 0;
  return pf_error_set(v->first_rc, "no point of the sweep is a valid plan that fits (first: %s)", v->first_reason);
}

int pf_cli_sweep_verdict(const cJSON *rows) {
  pf_sweep_verdict v = {0};
  const cJSON *r;
  cJSON_ArrayForEach(r, rows) {
    const cJSON *st = cJSON_GetObjectItemCaseSensitive(r, "status");
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(r, "reason");
    pf_sweep_verdict_add(&v, cJSON_IsString(st) ? st->valuestring : NULL,
                         cJSON_IsString(why) ? why->valuestring : NULL);
  }
  return pf_sweep_verdict_end(&v);
}
