/* fit_json.c - the fit's parameters by name, and the calibration overlay
 * `validate --fit -o` writes (schema_version 1, backend "fit"; read back by
 * calibration.c, docs/calibration.md). */
#include "fit_int.h"

#include "io/io.h"

#include <cjson/cJSON.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *names[NPAR] = {"compute_eff", "comm_eff", "step_overhead_s", "input_rate_Bps"};

const char *pf_fit_param_name(int k) { return k >= 0 && k < NPAR ? names[k] : ""; }

double pf_fit_param_value(const pf_fitparams *p, int k) {
  switch (k) {
  case P_COMPUTE: return p->compute_eff;
  case P_COMM: return p->comm_eff;
  case P_OVERHEAD: return p->step_overhead_s;
  case P_INPUT: return p->input_rate_Bps;
  default: return 0;
  }
}

char *pf_fit_json(const pf_fit_result *f, const char *input_path, const char *machine_hint) {
  cJSON *root = cJSON_CreateObject();
  cJSON_AddNumberToObject(root, "schema_version", 1);
  cJSON_AddStringToObject(root, "backend", "fit");
  cJSON *fit = cJSON_AddObjectToObject(root, "fit");
  cJSON_AddNumberToObject(fit, "compute_eff", f->p.compute_eff);
  cJSON_AddNumberToObject(fit, "comm_eff", f->p.comm_eff);
  cJSON_AddNumberToObject(fit, "step_overhead_s", f->p.step_overhead_s);
  /* only a rate the fit found binding: absent, predictions keep the scenario's own (off unless given) */
  if (f->p.input_rate_Bps > 0) cJSON_AddNumberToObject(fit, "input_rate_Bps", f->p.input_rate_Bps);
  cJSON_AddNumberToObject(fit, "rel_sigma", f->rel_sigma);
  if (f->max_nodes > 0) cJSON_AddNumberToObject(fit, "max_nodes", f->max_nodes); /* the anchored range's start */
  cJSON *fixed = cJSON_AddArrayToObject(fit, "not_constrained");
  for (int k = 0; k < NPAR; k++) if (f->fixed[k]) cJSON_AddItemToArray(fixed, cJSON_CreateString(names[k]));
  cJSON_AddNumberToObject(fit, "rms_log_residual_before", f->rms_before);
  cJSON_AddNumberToObject(fit, "rms_log_residual_after", f->rms_after);
  if (f->loo_done) {
    cJSON *l = cJSON_AddObjectToObject(fit, "leave_one_out");
    cJSON_AddStringToObject(l, "by", pf_loo_name(f->loo_by));
    cJSON_AddNumberToObject(l, "rows", f->loo.n);
    cJSON_AddNumberToObject(l, "median_abs_pct_error", f->loo.median_abs_pct);
    cJSON_AddNumberToObject(l, "mean_abs_pct_error", f->loo.mean_abs_pct);
  }
  cJSON *prov = cJSON_AddObjectToObject(root, "provenance");
  cJSON_AddItemToObject(prov, "tool", pf_report_tool_json());
  cJSON_AddStringToObject(prov, "method", "validate --fit: GSL trust-region Levenberg-Marquardt on log(t_pred/t_meas)");
  cJSON_AddStringToObject(prov, "input", input_path ? input_path : "");
  if (machine_hint && *machine_hint) cJSON_AddStringToObject(prov, "machines", machine_hint);
  cJSON_AddNumberToObject(prov, "rows_used", f->rows_used);
  cJSON_AddNumberToObject(prov, "configurations", f->groups);
  cJSON_AddNumberToObject(prov, "input_rows", f->input_rows);
  cJSON_AddNumberToObject(prov, "input_binding_rows", f->input_binding);
  char date[64];
  const char *fake = getenv("PF_FAKE_DATE");
  if (fake && *fake) snprintf(date, sizeof date, "%s", fake);
  else {
    time_t t = time(NULL);
    struct tm tmv;
    gmtime_r(&t, &tmv);
    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", &tmv);
  }
  cJSON_AddStringToObject(prov, "date", date);
  char *s = cJSON_Print(root);
  cJSON_Delete(root);
  if (!s) return NULL;
  size_t n = strlen(s);
  char *t = malloc(n + 2);
  if (t) { memcpy(t, s, n); t[n] = '\n'; t[n + 1] = '\0'; }
  free(s);
  return t;
}
