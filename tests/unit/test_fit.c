/* test_fit.c - the fit recovers known efficiency parameters (and an input
 * pipeline rate that binds on some runs only) from runs the model itself
 * produced, flags parameters the runs cannot constrain, reports leave-one-out
 * errors, and writes the calibration overlay that predict applies. */
#include "check.h"

#include "machine/machine.h"
#include "core/core.h"
#include "job/job.h"
#include "study/study.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HEADER                                                                                                     \
  "machine,model,layers,hidden,heads,seq,vocab,nodes,gpus,tp,pp,dp,mbs,gbs,precision,sp,dist_opt,recompute,"       \
  "schedule,metric,value,unit,baseline_nodes,source,notes,params,flops_per_sample,grad_accum,scaling,bound,"       \
  "value_hi,iterations,scope,use,tag\n"

/* Parse the CSV text (freed here) into s and make its measurements the model's predictions with the true
 * parameters. */
static int measured_at(char *text, size_t n, const char *name, const pf_fitparams *truth, pf_vset *s) {
  pf_csv csv;
  int rc = pf_csv_parse(text, n, name, &csv);
  free(text);
  if (rc < 0) return rc;
  rc = pf_validate_parse(&csv, s);
  pf_csv_free(&csv);
  if (rc < 0) return rc;
  pf_validate_opts o = {NULL, truth, NULL, NULL, false};
  if ((rc = pf_validate_run(s, &o)) < 0) return rc;
  for (int i = 0; i < s->n; i++) {
    pf_vrow *r = &s->rows[i];
    if (r->status != PF_ROW_PREDICTED) return PF_ESIM;
    r->measured = r->value = r->predicted;
  }
  return 0;
}

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
  return measured_at(text, n, "synthetic.csv", truth, s);
}

static void test_recovery(const char *metric) {
  pf_fitparams truth = {0.8, 0.6, 0.25, 0};
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
  CHECK(f.fixed[3] && f.input_rows == 0 && f.p.input_rate_Bps == 0); /* GPT-3 has no sample bytes */
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

/* AP5 (sample bytes) at 1, 2 and 4 GPUs of a node and two batches, AP2 (none) at 1, 2 and 4 GPUs, on
 * jureca-dc-a100: measured = the model with truth.  With truth's rate 0 the input term is off. */
static int synth_input(const pf_fitparams *truth, pf_vset *s) {
  char *text = malloc(65536);
  size_t n = (size_t)snprintf(text, 65536, HEADER);
  static const int gpus[] = {1, 2, 4};
  for (int i = 0; i < 3; i++) {
    for (int mbs = 16; mbs <= 32; mbs += 16)
      n += (size_t)snprintf(text + n, 65536 - n,
                            "jureca-dc-a100,maelstrom-ap5-wgan,,,,,,1,%d,1,1,,%d,%d,fp32,,,,,iteration_time_s,1,s,,"
                            "synthetic,,,,,,,,,,,\n", gpus[i], mbs, mbs * gpus[i]);
    n += (size_t)snprintf(text + n, 65536 - n,
                          "jureca-dc-a100,maelstrom-ap2-deberta-v3-small,,,,,,1,%d,1,1,,32,%d,fp32,,,,,"
                          "iteration_time_s,1,s,,synthetic,,,,,,,,,,,\n", gpus[i], 32 * gpus[i]);
  }
  return measured_at(text, n, "synthetic-input.csv", truth, s);
}

/* The rate at which AP5's input takes 1.5x its 4-GPU, 32-sample step at truth's efficiencies: it binds
 * there (and on the 4-GPU 16-sample run), not at one GPU. */
static double binding_rate(const pf_fitparams *truth) {
  pf_vset s;
  if (synth_input(truth, &s) < 0) return 0;
  double rate = 0;
  for (int i = 0; i < s.n; i++) {
    pf_vrow *r = &s.rows[i];
    if (r->gpus != 4 || r->mbs != 32 || strcmp(r->model, "maelstrom-ap5-wgan")) continue;
    pf_scenario sc;
    char why[256];
    if (pf_vrow_scenario(r, NULL, &sc, why, sizeof why) != 0 || pf_plan_check(&sc) != 0) break;
    sc.input_rate_Bps = 1;
    rate = pf_input_time(&sc) / (1.5 * r->measured); /* node bytes per step / time */
  }
  pf_vset_free(&s);
  return rate;
}

static void test_input_rate(void) {
  pf_fitparams truth = {0.7, 1.0, 0.01, 0};
  truth.input_rate_Bps = binding_rate(&truth);
  CHECK(truth.input_rate_Bps > 1e6);
  pf_vset s;
  CHECK_INT(synth_input(&truth, &s), 0);
  CHECK_INT(pf_validate_run(&s, NULL), 0);
  pf_fit_result f;
  CHECK_INT(pf_fit(&s, NULL, true, &f), 0);
  CHECK_INT(f.groups, 9);
  CHECK_INT(f.input_rows, 6); /* AP2 has no sample bytes */
  CHECK(!f.fixed[3]);
  CHECK(f.input_binding >= 1 && f.input_binding < f.input_rows); /* binds on some runs, not all */
  CHECK_NEAR(f.p.input_rate_Bps / truth.input_rate_Bps, 1.0, 0.02);
  CHECK_NEAR(f.p.compute_eff, truth.compute_eff, 0.02);
  CHECK(f.rel_sigma < 1e-2);
  CHECK(f.loo_done && f.loo.median_abs_pct < 1.0);
  pf_vstats after = pf_validate_stats(&s, NULL, NULL);
  CHECK(after.median_abs_pct < 0.5);

  /* the overlay carries the rate; predict applies it, an explicit --input-rate wins */
  char *json = pf_fit_json(&f, "synthetic-input.csv", "jureca-dc-a100");
  CHECK(json && strstr(json, "\"input_rate_Bps\"") != NULL);
  const char *tmp = "test_fit_input_overlay.json";
  FILE *fo = fopen(tmp, "w");
  if (fo) { fputs(json ? json : "", fo); fclose(fo); }
  pf_calibration cal;
  CHECK_INT(pf_calibration_load(tmp, &cal), 0);
  CHECK_NEAR(cal.fit_input_rate_Bps, f.p.input_rate_Bps, 1e-6 * f.p.input_rate_Bps);
  for (int i = 0; i < s.n; i++) {
    pf_vrow *r = &s.rows[i];
    if (r->gpus != 4 || r->mbs != 32 || strcmp(r->model, "maelstrom-ap5-wgan")) continue;
    pf_scenario sc;
    pf_prediction p;
    char why[256];
    CHECK_INT(pf_vrow_scenario(r, NULL, &sc, why, sizeof why), 0);
    snprintf(sc.calibration, sizeof sc.calibration, "%s", tmp);
    CHECK_INT(pf_scenario_apply_calibration(&sc), 0);
    pf_scenario sc2 = sc;
    CHECK_INT(pf_resolve_predict(&sc, &p), 0);
    CHECK(p.breakdown_s.input > 0);
    CHECK_NEAR(p.iteration_time_s / r->measured, 1.0, 0.02);
    sc2.input_rate_Bps = 1e12; /* the command's own rate: not replaced, does not bind */
    CHECK_INT(pf_resolve_predict(&sc2, &p), 0);
    CHECK(p.breakdown_s.input == 0);
  }
  remove(tmp);
  free(json);
  pf_vset_free(&s);

  /* the same runs without an input limit: the rows have sample bytes, the rate binds on none, left off */
  truth.input_rate_Bps = 0;
  CHECK_INT(synth_input(&truth, &s), 0);
  CHECK_INT(pf_validate_run(&s, NULL), 0);
  CHECK_INT(pf_fit(&s, NULL, false, &f), 0);
  CHECK(!f.fixed[3] && f.input_rows == 6);
  CHECK(f.p.input_rate_Bps == 0 && f.input_binding == 0);
  CHECK_NEAR(f.p.compute_eff, truth.compute_eff, 0.02);
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
  test_input_rate();
  test_no_rows();
  return pf_check_done();
}
