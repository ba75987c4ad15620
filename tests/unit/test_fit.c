/* test_fit.c - the fit recovers known efficiency parameters from runs the
 * model itself produced, flags parameters the runs cannot constrain, reports
 * leave-one-out errors, and writes the calibration overlay. */
#include "check.h"

#include "preflight/calibration.h"
#include "preflight/error.h"
#include "preflight/predict.h"
#include "preflight/validate.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HEADER                                                                                                     \
  "machine,model,layers,hidden,heads,seq,vocab,nodes,gpus,tp,pp,dp,mbs,gbs,precision,sp,dist_opt,recompute,"       \
  "schedule,metric,value,unit,baseline_nodes,source,notes,params,flops_per_sample,grad_accum,scaling,bound,"       \
  "value_hi,iterations,scope,use,tag\n"

/* Runs at 1-8 nodes (strong and weak batches), measured = the model with params tp. */
static int synth(const pf_fitparams *truth, const char *metric, pf_vset *s) {
  char *text = malloc(65536);
  size_t n = (size_t)snprintf(text, 65536, HEADER);
  static const int nodes[] = {1, 2, 4, 8};
  static const int gbs[] = {256, 1024};
  for (int i = 0; i < 4; i++)
    for (int j = 0; j < 2; j++)
      n += (size_t)snprintf(text + n, 65536 - n,
                            "juwels-booster,gpt3-1.3b,,,,,,%d,,2,1,,4,%d,bf16,,,,,%s,1,%s,,synthetic,,,,,,,,,,,\n",
                            nodes[i], gbs[j], metric, strcmp(metric, "tflops_per_gpu") ? "s" : "TFLOP/s");
  pf_csv csv;
  int rc = pf_csv_parse(text, n, "synthetic.csv", &csv);
  free(text);
  if (rc < 0) return rc;
  rc = pf_validate_parse(&csv, s);
  pf_csv_free(&csv);
  if (rc < 0) return rc;
  /* the measurements: predictions with the true parameters */
  pf_validate_opts o = {NULL, truth, NULL, NULL, false};
  if ((rc = pf_validate_run(s, &o)) < 0) return rc;
  for (int i = 0; i < s->n; i++) {
    pf_vrow *r = &s->rows[i];
    if (r->status != PF_ROW_PREDICTED) return PF_ESIM;
    r->measured = r->value = r->predicted;
  }
  return 0;
}

static void test_recovery(const char *metric) {
  pf_fitparams truth = {0.8, 0.6, 0.25};
  pf_vset s;
  CHECK_INT(synth(&truth, metric, &s), 0);
  CHECK_INT(pf_validate_run(&s, NULL), 0); /* errors at the model's defaults */
  pf_vstats before = pf_validate_stats(&s, NULL, NULL);
  CHECK(before.median_abs_pct > 5);
  pf_fit_result f;
  CHECK_INT(pf_fit(&s, NULL, true, &f), 0);
  CHECK_INT(f.rows_used, 8);
  CHECK_INT(f.groups, 8);
  CHECK(!f.fixed[0] && !f.fixed[1] && !f.fixed[2]);
  CHECK_NEAR(f.p.compute_eff, truth.compute_eff, 0.02);
  CHECK_NEAR(f.p.comm_eff, truth.comm_eff, 0.02);
  CHECK_NEAR(f.p.step_overhead_s, truth.step_overhead_s, 0.02);
  CHECK(f.rel_sigma < 1e-3);
  CHECK(f.loo_done);
  CHECK(f.loo.median_abs_pct < 1.0);
  pf_vstats after = pf_validate_stats(&s, NULL, NULL);
  CHECK(after.median_abs_pct < 0.1);
  for (int i = 0; i < s.n; i++) {
    CHECK(s.rows[i].band_lo <= s.rows[i].predicted && s.rows[i].predicted <= s.rows[i].band_hi);
    CHECK(!isnan(s.rows[i].loo_error));
  }
  pf_vset_free(&s);
}

/* Single-GPU runs carry no communication: comm_eff is reported as not constrained. */
static void test_unconstrained(void) {
  const char *t = HEADER
      "juwels-booster,,,,,,,1,1,1,1,,32,32,fp32,,,,,iteration_time_s,0.2,s,,synthetic,,1e6,2e10,,,,,,,fit,\n"
      "juwels-booster,,,,,,,1,1,1,1,,32,32,fp32,,,,,iteration_time_s,0.21,s,,synthetic,,1e6,2e10,,,,,,,fit,\n"
      "juwels-booster,,,,,,,1,1,1,1,,64,64,fp32,,,,,iteration_time_s,0.3,s,,synthetic,,1e6,2e10,,,,,,,fit,\n"
      "juwels-booster,,,,,,,1,1,1,1,,128,128,fp32,,,,,iteration_time_s,0.52,s,,synthetic,,1e6,2e10,,,,,,,fit,\n"
      "juwels-booster,,,,,,,1,1,1,1,,16,16,fp32,,,,,iteration_time_s,0.15,s,,synthetic,,1e6,2e10,,,,,,,check,\n";
  pf_csv csv;
  pf_vset s;
  CHECK_INT(pf_csv_parse(t, strlen(t), "single.csv", &csv), 0);
  CHECK_INT(pf_validate_parse(&csv, &s), 0);
  pf_csv_free(&csv);
  CHECK_INT(pf_validate_run(&s, NULL), 0);
  pf_fit_result f;
  CHECK_INT(pf_fit(&s, NULL, true, &f), 0);
  CHECK_INT(f.rows_used, 4);     /* the check row is held out */
  CHECK_INT(f.groups, 3);        /* the two 32-sample runs are one configuration */
  CHECK(f.fixed[1]);
  CHECK_NEAR(f.p.comm_eff, 1.0, 0);
  CHECK(!f.fixed[0] && !f.fixed[2]);
  CHECK(f.p.step_overhead_s > 0);
  CHECK(f.rel_sigma > 0);
  CHECK(f.loo_done && f.loo.n == 4);
  CHECK(isnan(s.rows[4].loo_error)); /* held-out rows get no leave-one-out value */
  CHECK(s.rows[4].status == PF_ROW_PREDICTED && s.rows[4].band_hi > s.rows[4].band_lo);

  /* the overlay round-trips through the calibration loader */
  setenv("PF_FAKE_DATE", "2026-01-01T00:00:00Z", 1);
  char *json = pf_fit_json(&f, "single.csv", "juwels-booster");
  CHECK(json != NULL);
  CHECK(strstr(json, "\"backend\":\t\"fit\"") != NULL);
  CHECK(strstr(json, "2026-01-01T00:00:00Z") != NULL);
  CHECK(strstr(json, "\"comm_eff\"") != NULL);
  const char *tmp = "test_fit_overlay.json";
  FILE *fo = fopen(tmp, "w");
  if (fo) { fputs(json, fo); fclose(fo); }
  pf_calibration cal;
  CHECK_INT(pf_calibration_load(tmp, &cal), 0);
  CHECK(cal.has_fit);
  CHECK_NEAR(cal.fit_compute_eff, f.p.compute_eff, 1e-12);
  CHECK_NEAR(cal.fit_step_overhead_s, f.p.step_overhead_s, 1e-12);
  CHECK_NEAR(cal.fit_rel_sigma, f.rel_sigma, 1e-12);
  remove(tmp);
  free(json);
  pf_vset_free(&s);
}

static void test_no_rows(void) {
  const char *t = HEADER
      "lumi-g,gpt-857m,,,,,,32,,1,1,,1,512,fp16,,,,,scaling_efficiency,75,%,1,doc,,,,,strong,,,,,,\n";
  pf_csv csv;
  pf_vset s;
  CHECK_INT(pf_csv_parse(t, strlen(t), "eff.csv", &csv), 0);
  CHECK_INT(pf_validate_parse(&csv, &s), 0);
  pf_csv_free(&csv);
  CHECK_INT(pf_validate_run(&s, NULL), 0);
  pf_fit_result f;
  CHECK_INT(pf_fit(&s, NULL, false, &f), PF_EINVAL);
  CHECK(strstr(pf_error_detail(), "no rows to fit") != NULL);
  pf_vset_free(&s);
}

int main(void) {
  test_recovery("iteration_time_s");
  test_recovery("tflops_per_gpu");
  test_unconstrained();
  test_no_rows();
  return pf_check_done();
}
