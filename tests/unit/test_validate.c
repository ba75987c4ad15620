/* test_validate.c - CSV reader, validation rows (parsing, units, bounds,
 * errors naming file:line:field) and the predictions behind each metric. */
#include "check.h"

#include "core/core.h"
#include "study/study.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define HEADER                                                                                                     \
  "machine,model,layers,hidden,heads,seq,vocab,nodes,gpus,tp,pp,dp,mbs,gbs,precision,sp,dist_opt,recompute,"       \
  "schedule,metric,value,unit,baseline_nodes,source,notes,params,flops_per_sample,grad_accum,scaling,bound,"       \
  "value_hi,iterations,scope,use,tag\n"

static int parse_text(const char *text, pf_vset *s) {
  pf_csv csv;
  int rc = pf_csv_parse(text, strlen(text), "t.csv", &csv);
  if (rc < 0) return rc;
  rc = pf_validate_parse(&csv, s);
  pf_csv_free(&csv);
  return rc;
}

static void test_csv(void) {
  const char *t = "# comment\r\na,b,c\r\n\"x,1\",\"say \"\"hi\"\"\",\n\n\"two\nlines\",2,3\nlast,4,5";
  pf_csv c;
  CHECK_INT(pf_csv_parse(t, strlen(t), "t.csv", &c), 0);
  CHECK_INT(c.nrows, 4);
  CHECK_INT(c.rows[0].line, 2);
  CHECK_STR(c.rows[0].fields[2], "c");
  CHECK_INT(c.rows[1].line, 3);
  CHECK_INT(c.rows[1].nfields, 3);
  CHECK_STR(c.rows[1].fields[0], "x,1");
  CHECK_STR(c.rows[1].fields[1], "say \"hi\"");
  CHECK_STR(c.rows[1].fields[2], "");
  CHECK_INT(c.rows[2].line, 5);
  CHECK_STR(c.rows[2].fields[0], "two\nlines");
  CHECK_INT(c.rows[3].line, 7);
  CHECK_STR(c.rows[3].fields[2], "5");
  pf_csv_free(&c);

  const char *bad1 = "a,b\n1,\"open\n2,3\n";
  CHECK_INT(pf_csv_parse(bad1, strlen(bad1), "bad.csv", &c), PF_EPARSE);
  CHECK(strstr(pf_error_detail(), "bad.csv:2:") != NULL);
  const char *bad2 = "a,b\n1,2\n3,x\"y\n";
  CHECK_INT(pf_csv_parse(bad2, strlen(bad2), "bad.csv", &c), PF_EPARSE);
  CHECK(strstr(pf_error_detail(), "bad.csv:3:") != NULL);
}

static void test_parse(void) {
  pf_vset s;
  const char *ok = HEADER
      "juwels-booster,gpt3-1.3b,,,,,,2,,2,1,,4,256,bf16,true,false,selective,1f1b,energy_J,10,Wh,,doc:1,,,,,,,,5,gpu,fit,t1\n"
      "lumi-g,gpt-857m,,,,,,32,,1,1,,1,512,fp16,,,,,scaling_efficiency,75,%,1,doc:2,,,,,strong,range,80,,,check,t2\n";
  CHECK_INT(parse_text(ok, &s), 0);
  CHECK_INT(s.n, 2);
  CHECK_INT(s.rows[0].line, 2);
  CHECK_NEAR(s.rows[0].measured, 36000.0, 1e-12);
  CHECK_INT(s.rows[0].scope, PF_SCOPE_GPU);
  CHECK(s.rows[0].sp && !s.rows[0].dist_opt);
  CHECK_NEAR(s.rows[0].iterations, 5, 0);
  CHECK_INT(s.rows[1].bound, PF_BOUND_RANGE);
  CHECK_NEAR(s.rows[1].measured, 0.75, 1e-12);
  CHECK_NEAR(s.rows[1].measured_hi, 0.80, 1e-12);
  CHECK_INT(s.rows[1].scaling, PF_SCALING_STRONG);
  CHECK_STR(s.rows[1].use, "check");
  pf_vset_free(&s);

  /* wrong field count names the line */
  const char *cnt = HEADER "juwels-booster,gpt3-1.3b,,,,,,2,,2,1\n";
  CHECK_INT(parse_text(cnt, &s), PF_EPARSE);
  CHECK(strstr(pf_error_detail(), "t.csv:2:") != NULL);
  /* non-numeric value names line and field */
  const char *num = HEADER
      "juwels-booster,gpt3-1.3b,,,,,,2,,2,1,,4,256,bf16,,,,,iteration_time_s,12,s,,doc,,,,,,,,,,,\n"
      "juwels-booster,gpt3-1.3b,,,,,,2,,2,1,,4,256,bf16,,,,,iteration_time_s,>80,s,,doc,,,,,,,,,,,\n";
  CHECK_INT(parse_text(num, &s), PF_EPARSE);
  CHECK(strstr(pf_error_detail(), "t.csv:3: value") != NULL);
  const char *nodes = HEADER "juwels-booster,gpt3-1.3b,,,,,,two,,2,1,,4,256,bf16,,,,,iteration_time_s,12,s,,doc,,,,,,,,,,,\n";
  CHECK_INT(parse_text(nodes, &s), PF_EPARSE);
  CHECK(strstr(pf_error_detail(), "t.csv:2: nodes") != NULL);
  /* unknown machine and model ids */
  const char *mach = HEADER "no-such-machine,gpt3-1.3b,,,,,,2,,2,1,,4,256,bf16,,,,,iteration_time_s,12,s,,doc,,,,,,,,,,,\n";
  CHECK_INT(parse_text(mach, &s), PF_ENOENT);
  CHECK(strstr(pf_error_detail(), "t.csv:2: machine") != NULL);
  const char *model = HEADER "juwels-booster,gpt-9t,,,,,,2,,2,1,,4,256,bf16,,,,,iteration_time_s,12,s,,doc,,,,,,,,,,,\n";
  CHECK_INT(parse_text(model, &s), PF_ENOENT);
  CHECK(strstr(pf_error_detail(), "t.csv:2: model") != NULL);
  /* unit that does not fit the metric, unknown metric, missing source */
  const char *unit = HEADER "juwels-booster,gpt3-1.3b,,,,,,2,,2,1,,4,256,bf16,,,,,iteration_time_s,12,W,,doc,,,,,,,,,,,\n";
  CHECK_INT(parse_text(unit, &s), PF_EPARSE);
  CHECK(strstr(pf_error_detail(), "unit") != NULL);
  const char *met = HEADER "juwels-booster,gpt3-1.3b,,,,,,2,,2,1,,4,256,bf16,,,,,mfu,12,s,,doc,,,,,,,,,,,\n";
  CHECK_INT(parse_text(met, &s), PF_EPARSE);
  CHECK(strstr(pf_error_detail(), "t.csv:2: metric") != NULL);
  const char *src = HEADER "juwels-booster,gpt3-1.3b,,,,,,2,,2,1,,4,256,bf16,,,,,iteration_time_s,12,s,,,,,,,,,,,,,\n";
  CHECK_INT(parse_text(src, &s), PF_EPARSE);
  CHECK(strstr(pf_error_detail(), "source") != NULL);
  /* columns: unknown, missing */
  CHECK_INT(parse_text("machine,modell\n", &s), PF_EPARSE);
  CHECK(strstr(pf_error_detail(), "modell") != NULL);
  CHECK_INT(parse_text("machine,model\nlumi-g,gpt-857m\n", &s), PF_EPARSE);
  CHECK(strstr(pf_error_detail(), "missing column") != NULL);
  /* scaling rows need baseline and type */
  const char *scal = HEADER "lumi-g,gpt-857m,,,,,,32,,1,1,,1,512,fp16,,,,,scaling_efficiency,75,%,,doc,,,,,strong,,,,,,\n";
  CHECK_INT(parse_text(scal, &s), PF_EPARSE);
  CHECK(strstr(pf_error_detail(), "baseline_nodes") != NULL);
}

static void test_errors_and_units(void) {
  pf_vrow r;
  memset(&r, 0, sizeof r);
  r.measured = 100;
  r.bound = PF_BOUND_EXACT;
  CHECK_NEAR(pf_vrow_error(&r, 110), 0.10, 1e-12);
  CHECK_NEAR(pf_vrow_error(&r, 80), -0.20, 1e-12);
  r.bound = PF_BOUND_LOWER;
  CHECK_NEAR(pf_vrow_error(&r, 120), 0.0, 0);
  CHECK_NEAR(pf_vrow_error(&r, 90), -0.10, 1e-12);
  r.bound = PF_BOUND_UPPER;
  CHECK_NEAR(pf_vrow_error(&r, 90), 0.0, 0);
  CHECK_NEAR(pf_vrow_error(&r, 150), 0.5, 1e-12);
  r.bound = PF_BOUND_RANGE;
  r.measured_hi = 200;
  CHECK_NEAR(pf_vrow_error(&r, 150), 0.0, 0);
  CHECK_NEAR(pf_vrow_error(&r, 50), -0.5, 1e-12);
  CHECK_NEAR(pf_vrow_error(&r, 300), 0.5, 1e-12);

  double sc;
  CHECK_INT(pf_metric_unit_scale(PF_MET_ENERGY, "kWh", &sc), 0);
  CHECK_NEAR(sc, 3.6e6, 1e-12);
  CHECK_INT(pf_metric_unit_scale(PF_MET_ITER_TIME, "ms", &sc), 0);
  CHECK_NEAR(sc, 1e-3, 1e-12);
  CHECK_INT(pf_metric_unit_scale(PF_MET_SCALING, "%", &sc), 0);
  CHECK_NEAR(sc, 0.01, 1e-12);
  CHECK(pf_metric_unit_scale(PF_MET_TFLOPS, "s", &sc) < 0);

  double x[5] = {5, 1, 4, 2, 3};
  CHECK_NEAR(pf_median(x, 5), 3, 0);
  double y[4] = {4, 1, 3, 2};
  CHECK_NEAR(pf_median(y, 4), 2.5, 0);
  CHECK(isnan(pf_median(y, 0)));
}

/* Each metric against a direct prediction of the same scenario. */
static void test_predictions(void) {
  pf_vset s;
  const char *t = HEADER
      "juwels-booster,gpt3-1.3b,,,,,,2,,2,1,,4,256,bf16,,,,,tflops_per_gpu,100,TFLOP/s,,doc,,,,,,,,,,,\n"
      "juwels-booster,gpt3-1.3b,,,,,,2,,2,1,,4,256,bf16,,,,,time_s,1,h,,doc,,,,,,,,10,,,\n"
      "juwels-booster,gpt3-1.3b,,,,,,4,,2,1,,4,,bf16,,,,,scaling_efficiency,90,%,1,doc,,,,16,weak,,,,,,\n"
      "juwels-booster,gpt3-1.3b,,,,,,4,,2,1,,4,256,bf16,,,,,scaling_efficiency,90,%,1,doc,,,,,strong,lower,,,,,\n"
      "juwels-booster,gpt3-1.3b,,,,,,2,,2,1,,4,256,bf16,,,,,energy_J,1,kJ,,doc,,,,,,,,3,gpu,,\n"
      "juwels-booster,gpt3-1.3b,,,,,,2,,2,1,,4,256,bf16,,,,,energy_J,1,kJ,,doc,,,,,,,,3,gpu_job,,\n"
      "juwels-booster,,,,,,,1,1,1,1,,32,32,fp32,,,,,iteration_time_s,0.1,s,,doc,,1e6,1e10,,,,,,,,\n"
      "juwels-booster,,,,,,,1,1,1,1,,32,32,fp32,,,,,iteration_time_s,0.1,s,,doc,,,,,,,,,,,\n";
  CHECK_INT(parse_text(t, &s), 0);
  CHECK_INT(pf_validate_run(&s, NULL), 0);

  pf_scenario sc;
  pf_prediction p, pb;
  pf_scenario_init(&sc);
  CHECK_INT(pf_machine_load("juwels-booster", &sc.machine), 0);
  CHECK_INT(pf_workload_builtin("gpt3-1.3b", &sc.workload), 0);
  sc.nodes = 2;
  sc.plan.tp = 2;
  sc.plan.mbs = 4;
  sc.plan.gbs = 256;
  sc.precision = PF_BF16;
  pf_scenario a = sc;
  CHECK_INT(pf_resolve_predict(&a, &p), 0);
  CHECK_INT(s.rows[0].status, PF_ROW_PREDICTED);
  CHECK_NEAR(s.rows[0].predicted, p.tflops_per_gpu, 1e-12);
  CHECK_NEAR(s.rows[0].error, p.tflops_per_gpu / 100 - 1, 1e-9);
  CHECK_NEAR(s.rows[1].predicted, 10 * p.iteration_time_s, 1e-12);
  CHECK_NEAR(s.rows[4].predicted, 3 * p.energy.gpu_J, 1e-12);
  CHECK_INT(s.rows[5].status, PF_ROW_NOT_PREDICTED);
  CHECK(strstr(s.rows[5].reason, "whole job") != NULL);

  /* weak: 16 microbatches per replica at 4 nodes and at the 1-node baseline */
  pf_scenario w4 = sc, w1 = sc;
  w4.nodes = 4; w4.plan.gbs = 0; w4.plan.grad_accum = 16;
  w1.nodes = 1; w1.plan.gbs = 0; w1.plan.grad_accum = 16;
  CHECK_INT(pf_resolve_predict(&w4, &p), 0);
  CHECK_INT(pf_resolve_predict(&w1, &pb), 0);
  CHECK_INT(w4.plan.gbs, 16 * 4 * 8);
  CHECK_INT(w1.plan.gbs, 16 * 4 * 2);
  CHECK_NEAR(s.rows[2].predicted, p.tflops_per_gpu / pb.tflops_per_gpu, 1e-12);
  /* strong: GBS 256 at both */
  pf_scenario s4 = sc, s1 = sc;
  s4.nodes = 4;
  s1.nodes = 1;
  CHECK_INT(pf_resolve_predict(&s4, &p), 0);
  CHECK_INT(pf_resolve_predict(&s1, &pb), 0);
  CHECK_NEAR(s.rows[3].predicted, p.tflops_per_gpu / pb.tflops_per_gpu, 1e-12);
  CHECK(s.rows[3].predicted <= 1.0 + 1e-9);

  /* a custom model by params and FLOPs; a row without any model is listed, not predicted */
  CHECK_INT(s.rows[6].status, PF_ROW_PREDICTED);
  CHECK(s.rows[6].predicted > 0);
  CHECK_INT(s.rows[7].status, PF_ROW_NOT_PREDICTED);
  CHECK(strstr(s.rows[7].reason, "no model") != NULL);

  pf_vstats st = pf_validate_stats(&s, NULL, NULL);
  CHECK_INT(st.n, 6);
  CHECK(st.median_abs_pct >= 0 && st.mean_abs_pct >= 0);
  pf_vset_free(&s);
}

/* The shipped reference sets parse and every row names its source. */
static void test_reference_sets(void) {
  const char *src = getenv("PF_SRC");
  if (!src) src = ".";
  const char *files[] = {"scenarios/validation/epicure.csv", "scenarios/validation/maelstrom.csv"};
  for (int k = 0; k < 2; k++) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", src, files[k]);
    pf_vset s;
    int rc = pf_validate_read(path, &s);
    CHECK_INT(rc, 0);
    if (rc < 0) { fprintf(stderr, "%s\n", pf_error_detail()); continue; }
    CHECK(s.n > 10);
    int fit = 0, check = 0;
    for (int i = 0; i < s.n; i++) {
      CHECK(strstr(s.rows[i].source, "_") != NULL && strchr(s.rows[i].source, ':') != NULL);
      fit += !strcmp(s.rows[i].use, "fit");
      check += !strcmp(s.rows[i].use, "check");
    }
    CHECK(fit > 0 && check > 0);
    pf_vset_free(&s);
  }
}

int main(void) {
  test_csv();
  test_parse();
  test_errors_and_units();
  test_predictions();
  test_reference_sets();
  return pf_check_done();
}
