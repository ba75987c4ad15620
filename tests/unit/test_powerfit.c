/* test_powerfit.c - the calibration's power-model fit (calibrate/harness/
 * powerfit.c): coefficients recovered from points made with known ones, kept
 * non-negative when a point sits below the context power, and the metered
 * window's mean of the sampled values (no power source: 0 W), and a dual-die
 * package's reading split to one device (an MI250/MI250X OAM's GCD). */
#include "check.h"
#include "pfcal.h"

static double model(double base, const pfcal_power_coef *c, double ut, double uh, double uv) {
  return base + c->tensor_W * ut + c->hbm_W * uh + c->vector_W * uv;
}

static int counter;
static int fake_sample(void *ctx, double *v) {
  (void)ctx;
  *v = (double)(++counter % 2 ? 10 : 20);
  return 0;
}

int main(void) {
  /* H100-like truth: context 120 W; a GEMM at 75 % of the tensor peak and 5 % of HBM near 690 W */
  const pfcal_power_coef truth = {.tensor_W = 700, .hbm_W = 140, .vector_W = 180};
  const double base = 120;
  pfcal_power_point pts[] = {
      {.name = "gemm", .u_tensor = 0.75, .u_hbm = 0.05},
      {.name = "gemm-thin", .u_tensor = 0.45, .u_hbm = 0.35},
      {.name = "triad", .u_hbm = 0.86},
      {.name = "vector-fp32", .u_vector = 0.95},
      {.name = "mma-bf16", .u_tensor = 0.66},
  };
  int n = (int)(sizeof pts / sizeof pts[0]);
  for (int i = 0; i < n; i++) pts[i].power_W = model(base, &truth, pts[i].u_tensor, pts[i].u_hbm, pts[i].u_vector);
  pfcal_power_coef c;
  CHECK_INT(pfcal_power_fit(pts, n, base, &c), 0);
  CHECK_NEAR(c.tensor_W, truth.tensor_W, 1e-9);
  CHECK_NEAR(c.hbm_W, truth.hbm_W, 1e-9);
  CHECK_NEAR(c.vector_W, truth.vector_W, 1e-9);
  CHECK(c.rms_rel < 1e-9);

  /* +-2 % noise on the readings: coefficients within 10 %, residual about the noise */
  static const double noise[] = {0.02, -0.02, 0.015, -0.01, -0.02};
  for (int i = 0; i < n; i++) pts[i].power_W *= 1 + noise[i];
  CHECK_INT(pfcal_power_fit(pts, n, base, &c), 0);
  CHECK_NEAR(c.tensor_W, truth.tensor_W, 0.10);
  CHECK_NEAR(c.vector_W, truth.vector_W, 0.10);
  CHECK(c.rms_rel > 0.005 && c.rms_rel < 0.03);

  /* a vector point below the context power would want a negative coefficient: kept at 0 */
  pfcal_power_point low[] = {
      {.name = "gemm", .u_tensor = 0.8, .power_W = 660},
      {.name = "triad", .u_hbm = 0.9, .power_W = 300},
      {.name = "vector-fp32", .u_vector = 0.9, .power_W = 100},
  };
  CHECK_INT(pfcal_power_fit(low, 3, base, &c), 0);
  CHECK(c.tensor_W > 0 && c.hbm_W > 0);
  CHECK_NEAR(c.vector_W, 0, 1e-12);
  CHECK_NEAR(c.tensor_W, 540 / 0.8, 1e-9);
  CHECK_NEAR(c.hbm_W, 180 / 0.9, 1e-9);

  /* a metered window without a power source: no watts, the mean of the samples */
  double w = -1, mean = -1;
  CHECK_INT(pfcal_power_window(NULL, 0, fake_sample, NULL, 0.0, 0.02, &w, &mean), 0);
  CHECK_NEAR(w, 0, 1e-12);
  CHECK(mean >= 10 && mean <= 20);

  /* an MI250/MI250X OAM read once, on its even GCD (the odd reads 0): each GCD reads the pair's primary */
  CHECK_INT(pfcal_rsmi_pair(5000, 0), PFCAL_READ_OWN_PAIR);
  CHECK_INT(pfcal_rsmi_pair(0, 5000), PFCAL_READ_PARTNER_PAIR);
  CHECK_INT(pfcal_rsmi_pair(5000, 7000), PFCAL_READ_OWN); /* two live counters: two packages */
  CHECK_INT(pfcal_rsmi_pair(5000, -1), PFCAL_READ_OWN);   /* no partner */
  CHECK_INT(pfcal_rsmi_pair(0, 0), PFCAL_READ_OWN);       /* nothing counts: nothing to pair */
  CHECK_INT(pfcal_power_share(NULL, 0), 1);
  /* a package read at 90 W bare idle (45 W a GCD): a GCD's context and GEMM are the package less 45 W */
  CHECK_NEAR(pfcal_per_device_W(90, 90, 2), 45, 1e-12);
  CHECK_NEAR(pfcal_per_device_W(130, 90, 2), 85, 1e-12);
  CHECK_NEAR(pfcal_per_device_W(560, 90, 2), 515, 1e-12);
  CHECK_NEAR(pfcal_per_device_W(560, 90, 1), 560, 1e-12); /* a reading of the device alone */
  CHECK_NEAR(pfcal_per_device_W(0, 90, 2), 0, 1e-12);     /* nothing read stays nothing */

  printf("%d passed, %d failed\n", pf_check_pass, pf_check_fail);
  return pf_check_fail != 0;
}
