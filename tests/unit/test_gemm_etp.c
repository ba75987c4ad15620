/* test_gemm_etp.c - a routed expert's products split by expert tensor parallelism, priced against what one H200
 * measured (calibrate/results/vm-h200-141-2026-11-27-torch-gemm-etp-graph.csv: scripts/gemm-fp8-torch.py with
 * PF_EXPERT_ETP=1,4, the six built-in MoE models' SwiGLU expert products, 16-1024 rows, forward and both
 * gradients, BF16 and FP8, each the kernel alone: 20 calls in one CUDA graph).
 *
 * tune searches ETP 1 against Megatron's default ETP = TP (study/tune.c), so the products of an expert split 4
 * ways (its hidden size a quarter: fc1 [h -> f/2], fc2 [f/4 -> h]) must be priced as consistently as whole ones:
 * per precision the priced-over-measured ratio of the summed times at ETP 4 within 10 % of the ratio at ETP 1, and
 * the median error of every (precision, ETP) within 25 %.  Not fitted to this file: kernel.c's curve and operands'
 * floor with the device file's own rates (machines/devices/h200-141.cfg). */
#include "check.h"
#include "compute/compute.h"
#include "core/core.h"
#include "io/csv.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static int cmpd(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static int col(const pf_csv_row *h, const char *name) {
  for (int i = 0; i < h->nfields; i++)
    if (strcmp(h->fields[i], name) == 0) return i;
  return -1;
}

enum { NCLS = 4 }; /* bf16 / fp8 x ETP 1 / 4 */

int main(void) {
  const char *src = getenv("PF_SRC");
  char path[1024];
  snprintf(path, sizeof path, "%s/calibrate/results/vm-h200-141-2026-11-27-torch-gemm-etp-graph.csv",
           src ? src : ".");
  pf_device h200;
  CHECK_INT(pf_device_load("h200-141", &h200), 0);
  pf_csv csv;
  CHECK_INT(pf_csv_read(path, &csv), 0);
  const pf_csv_row *h = &csv.rows[0];
  int cm = col(h, "m"), cn = col(h, "n"), ck = col(h, "k"), cl = col(h, "layout"), cd = col(h, "dtype"),
      ct = col(h, "graph_s"), ce = col(h, "etp");
  CHECK(cm >= 0 && cn >= 0 && ck >= 0 && cl >= 0 && cd >= 0 && ct >= 0 && ce >= 0);
  double meas[NCLS] = {0}, pred[NCLS] = {0}, *err[NCLS];
  int n[NCLS] = {0};
  for (int c = 0; c < NCLS; c++) err[c] = calloc((size_t)csv.nrows, sizeof **err);
  for (int i = 1; i < csv.nrows; i++) {
    const pf_csv_row *r = &csv.rows[i];
    if (r->nfields <= ct || !r->fields[ct][0]) continue; /* a product that failed to run: its error kept */
    bool fp8 = strcmp(r->fields[cd], "fp8") == 0;
    int etp = atoi(r->fields[ce]), c = 2 * fp8 + (etp == 4);
    CHECK(etp == 1 || etp == 4);
    const char *lay = r->fields[cl];
    pf_kernel k = {.kind = PF_KERNEL_GEMM, .name = "gemm", .prec = fp8 ? PF_FP8 : PF_BF16,
                   .layout = !strcmp(lay, "NN") ? PF_GEMM_NN : !strcmp(lay, "NT") ? PF_GEMM_NT : PF_GEMM_TN,
                   .m = atof(r->fields[cm]), .n = atof(r->fields[cn]), .k = atof(r->fields[ck])};
    pf_kernel_env env = {.dev = &h200, .host_op_s = 0, .eff_scale = 1};
    pf_kernel_cost cost;
    CHECK_INT(pf_kernel_cost_eval(&env, &k, &cost), 0);
    double t = atof(r->fields[ct]);
    meas[c] += t, pred[c] += cost.time_s;
    err[c][n[c]++] = fabs(cost.time_s / t - 1);
  }
  const char *name[NCLS] = {"BF16 ETP 1", "BF16 ETP 4", "FP8 ETP 1", "FP8 ETP 4"};
  for (int c = 0; c < NCLS; c++) {
    CHECK(n[c] == 252); /* 6 models x 7 row counts x 6 products */
    qsort(err[c], (size_t)n[c], sizeof **err, cmpd);
    double med = 0.5 * (err[c][(n[c] - 1) / 2] + err[c][n[c] / 2]);
    printf("%s: %d products, priced / measured %.3f (summed), median error %.1f %%\n", name[c], n[c],
           pred[c] / meas[c], 100 * med);
    CHECK(med < 0.25);
    free(err[c]);
  }
  for (int p = 0; p < 2; p++) {
    double r1 = pred[2 * p] / meas[2 * p], r4 = pred[2 * p + 1] / meas[2 * p + 1];
    CHECK(fabs(r4 / r1 - 1) < 0.10);
  }
  pf_csv_free(&csv);
  return pf_check_done();
}
