/* test_stats.c - the shared statistics of core/stats.c: the median of odd,
 * even and empty samples (sorting in place), the qsort order of doubles, the
 * |error| summary and scaling efficiency; and the JSON of the shared objects
 * (job/plan_json.c, study/breakdown.c): the forms' keys in order, and tune's
 * form and the breakdown read back as written. */
#include <math.h>
#include "check.h"
#include "core/core.h"
#include "job/job.h"
#include "study/study.h"

#include <stdlib.h>

static void median(void) {
  double odd[] = {5, 1, 3};
  CHECK_NEAR(pf_median(odd, 3), 3, 0);
  CHECK(odd[0] == 1 && odd[1] == 3 && odd[2] == 5); /* sorted in place */
  double even[] = {4, -2, 10, 1};
  CHECK_NEAR(pf_median(even, 4), 2.5, 0);
  double one[] = {7};
  CHECK_NEAR(pf_median(one, 1), 7, 0);
  double none[] = {1};
  CHECK(isnan(pf_median(none, 0)));
  CHECK(isnan(pf_median(NULL, -1)));
}

static void order(void) {
  double a = 1, b = 2, c = 2;
  CHECK_INT(pf_cmp_double(&a, &b), -1);
  CHECK_INT(pf_cmp_double(&b, &a), 1);
  CHECK_INT(pf_cmp_double(&b, &c), 0);
  double v[] = {3.5, -1e300, 0, 1e-300, -0.0, 2, 1e300};
  qsort(v, 7, sizeof *v, pf_cmp_double);
  for (int i = 1; i < 7; i++) CHECK(v[i - 1] <= v[i]);
  CHECK(v[0] == -1e300 && v[6] == 1e300);
}

static void errors(void) {
  double x[] = {10, 2, 30, 4};
  pf_vstats st = pf_vstats_of(x, 4);
  CHECK_INT(st.n, 4);
  CHECK_NEAR(st.median_abs_pct, 7, 0);
  CHECK_NEAR(st.mean_abs_pct, 11.5, 1e-15);
  CHECK_NEAR(st.max_abs_pct, 30, 0);
  st = pf_vstats_of(x, 0);
  CHECK_INT(st.n, 0);
  CHECK(isnan(st.median_abs_pct) && isnan(st.mean_abs_pct) && isnan(st.max_abs_pct));
}

static void efficiency(void) {
  CHECK_NEAR(pf_scaling_efficiency(150, 200), 0.75, 1e-15);
  CHECK_NEAR(pf_scaling_efficiency(200, 200), 1, 0);
  CHECK(pf_scaling_efficiency(210, 200) > 1); /* super-linear: more cache or memory per GPU */
}

/* the keys of o, space-separated, in order */
static void keys(const cJSON *o, char *buf, size_t n) {
  buf[0] = 0;
  const cJSON *c;
  size_t w = 0;
  cJSON_ArrayForEach(c, o) w += (size_t)snprintf(buf + w, w < n ? n - w : 0, "%s%s", w ? " " : "", c->string);
}

static void plan_json(void) {
  pf_plan p = {.tp = 2, .pp = 4, .dp = 8, .cp = 1, .mbs = 1, .gbs = 512, .grad_accum = 64,
               .schedule = PF_SCHED_INTERLEAVED, .vstages = 2, .sp = true, .recompute = PF_RECOMPUTE_SELECTIVE};
  char k[512];
  cJSON *root = cJSON_CreateObject();
  cJSON *par = pf_plan_json_parallel(root, &p, PF_PLAN_FORM_FULL);
  CHECK(par == cJSON_GetObjectItemCaseSensitive(root, "parallel"));
  keys(par, k, sizeof k);
  CHECK_STR(k, "tp pp dp cp mbs gbs grad_accum microbatches schedule sp dist_opt zero overlap_grad_reduce "
               "overlap_param_gather recompute flash_attn tp_comm_overlap");
  CHECK_STR(cJSON_GetObjectItemCaseSensitive(par, "schedule")->valuestring, "interleaved:2");
  cJSON_Delete(root);

  p.overlap_grad_reduce = true;
  p.ddp_bucket_size = 4e7;
  root = cJSON_CreateObject();
  keys(pf_plan_json_parallel(root, &p, PF_PLAN_FORM_FULL), k, sizeof k);
  CHECK_STR(k, "tp pp dp cp mbs gbs grad_accum microbatches schedule sp dist_opt zero overlap_grad_reduce "
               "overlap_param_gather ddp_bucket_size recompute flash_attn tp_comm_overlap");
  cJSON_Delete(root);

  root = cJSON_CreateObject();
  keys(pf_plan_json_parallel(root, &p, PF_PLAN_FORM_SHAPE), k, sizeof k);
  CHECK_STR(k, "tp pp dp cp mbs gbs");
  cJSON_Delete(root);

  pf_plan asked = {.pp = 4, .gbs = 256};
  root = cJSON_CreateObject();
  keys(pf_plan_json_parallel(root, &asked, PF_PLAN_FORM_ASKED), k, sizeof k);
  CHECK_STR(k, "pp gbs");
  cJSON_Delete(root);

  cJSON *o = cJSON_CreateObject();
  pf_plan_json_fields(o, &p, PF_PLAN_FORM_TUNE);
  keys(o, k, sizeof k);
  CHECK_STR(k, "tp pp dp cp mbs gbs microbatches schedule vstages recompute sp dist_opt zero overlap_grad_reduce "
               "overlap_param_gather flash_attn tp_comm_overlap");
  pf_plan back;
  CHECK_INT(pf_plan_json_read(o, &back), 0);
  CHECK(back.tp == 2 && back.pp == 4 && back.dp == 8 && back.cp == 1 && back.mbs == 1 && back.gbs == 512);
  CHECK(back.grad_accum == 64 && back.schedule == PF_SCHED_INTERLEAVED && back.vstages == 2);
  CHECK(back.sp && !back.dist_opt && back.overlap_grad_reduce && !back.overlap_param_gather);
  CHECK(back.recompute == PF_RECOMPUTE_SELECTIVE);
  cJSON_DeleteItemFromObjectCaseSensitive(o, "vstages");
  CHECK_INT(pf_plan_json_read(o, &back), -1);
  cJSON_Delete(o);
}

static double twice(double x) { return 2 * x; }

static void breakdown_json(void) {
  pf_breakdown b = {.compute = 1, .tp_comm = 2, .pp_bubble = 3, .pp_comm = 4, .dp_comm_exposed = 5,
                    .optimizer = 6, .overhead = 7, .dp_interference = 8, .input = 9, .fp8_amax = 10, .ep_a2a = 11};
  char k[512];
  cJSON *root = cJSON_CreateObject();
  cJSON *o = pf_breakdown_json(root, &b, PF_BREAKDOWN_N, twice);
  keys(o, k, sizeof k);
  CHECK_STR(k, "compute tp_comm ep_a2a pp_bubble pp_comm dp_comm_exposed optimizer overhead dp_interference input fsdp_allgather fsdp_reduce_scatter fp8_amax");
  CHECK_NEAR(cJSON_GetObjectItemCaseSensitive(o, "fp8_amax")->valuedouble, 20, 0);
  CHECK_NEAR(cJSON_GetObjectItemCaseSensitive(o, "input")->valuedouble, 18, 0);
  CHECK_NEAR(cJSON_GetObjectItemCaseSensitive(o, "ep_a2a")->valuedouble, 22, 0);
  cJSON_Delete(root);

  root = cJSON_CreateObject();
  keys(pf_breakdown_json(root, &b, PF_BREAKDOWN_PLAN_N, NULL), k, sizeof k);
  CHECK_STR(k, "compute tp_comm ep_a2a pp_bubble pp_comm dp_comm_exposed optimizer");
  pf_breakdown back = {0};
  CHECK_INT(pf_breakdown_json_read(root, PF_BREAKDOWN_PLAN_N, &back), 0);
  CHECK(back.compute == 1 && back.tp_comm == 2 && back.pp_bubble == 3 && back.pp_comm == 4);
  CHECK(back.dp_comm_exposed == 5 && back.optimizer == 6 && back.overhead == 0 && back.input == 0);
  CHECK_INT(pf_breakdown_json_read(root, PF_BREAKDOWN_N, &back), -1); /* overhead ... input not written */
  cJSON_Delete(root);
}

/* Hyndman & Fan definition 6: position p (n + 1), linear between order statistics, clamped to the ends;
 * the 10th-90th percentile interval of n values spans (0.9 - 0.1)(n + 1) positions out of n + 1. */
static void quantile(void) {
  double x[19];
  for (int i = 0; i < 19; i++) x[i] = i + 1; /* 1 .. 19 */
  CHECK_NEAR(pf_quantile_sorted(x, 19, 0.10), 2.0, 1e-12);  /* h = 2 */
  CHECK_NEAR(pf_quantile_sorted(x, 19, 0.90), 18.0, 1e-12); /* h = 18 */
  CHECK_NEAR(pf_quantile_sorted(x, 19, 0.50), 10.0, 1e-12); /* the median */
  CHECK_NEAR(pf_quantile_sorted(x, 9, 0.10), 1.0, 1e-12);   /* h = 1: the smallest value */
  CHECK_NEAR(pf_quantile_sorted(x, 10, 0.10), 1.1, 1e-12);  /* h = 1.1 */
  CHECK_NEAR(pf_quantile_sorted(x, 10, 0.90), 9.9, 1e-12);  /* h = 9.9 */
  CHECK_NEAR(pf_quantile_sorted(x, 3, 0.10), 1.0, 1e-12);   /* below 1: clamped */
  CHECK_NEAR(pf_quantile_sorted(x, 3, 0.90), 3.0, 1e-12);   /* above n: clamped */
  CHECK(isnan(pf_quantile_sorted(x, 0, 0.5)));
}

int main(void) {
  median();
  quantile();
  order();
  errors();
  efficiency();
  plan_json();
  breakdown_json();
  return pf_check_done();
}
