/* calapply.c - overlay a loaded calibration (calibration.c) on a machine.
 *
 * The overlay keeps the datasheet peaks (so MFU stays against the datasheet,
 * as Megatron and the EPICURE reports count it) and replaces the efficiencies:
 *   gemm_eff  = measured tensor median (bf16, else fp16) / datasheet peak
 *   hbm_eff   = measured triad (else copy) median / datasheet HBM bandwidth
 *   kernel_launch_s, idle_W, context_W from the file; device.power_cap_W (the
 *   driver's cap) replaces tdp_W and the cap; power_model.coefficients replace
 *   the utilisation coefficients (tensor_W, hbm_W, vector_W; docs/energy.md).
 *   max_W, the highest point the harness reached, is kept but not applied.
 * The efficiencies fitted by validate --fit stay in the struct (fit_*) for the
 * predictor, which applies them on top.  Link rates (h2d, d2h, d2d alpha-beta)
 * are loaded but not overlaid here: the predictor decides how they combine
 * with its own fabric efficiency.  Before the overlay, pf_calibration_matches()
 * checks that the file was measured (or fitted) on the machine's device.
 */
#include "calibration.h"

#include "calibration_int.h"
#include "core/core.h"

#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

/* Model tokens of a device name: lower-case alphanumeric words that mix
 * letters and digits ("h100", "mi250x", "gh200", "a100"), except memory
 * sizes ("80gb") and generations ("sxm5", "hbm3", "pcie4"). */
static int model_tokens(const char *s, char tok[][24], int max) {
  int n = 0;
  while (*s && n < max) {
    while (*s && !isalnum((unsigned char)*s))
      s++;
    char w[24];
    int k = 0;
    bool alpha = false, digit = false;
    while (*s && isalnum((unsigned char)*s)) {
      if (k < 23) w[k++] = (char)tolower((unsigned char)*s);
      if (isalpha((unsigned char)*s))
        alpha = true;
      else
        digit = true;
      s++;
    }
    w[k] = '\0';
    if (!alpha || !digit || k < 3) continue;
    size_t L = strlen(w);
    if (L > 2 && (strcmp(w + L - 2, "gb") == 0 || strcmp(w + L - 3, "gib") == 0)) continue;
    if (strncmp(w, "sxm", 3) == 0 || strncmp(w, "hbm", 3) == 0 || strncmp(w, "pcie", 4) == 0 ||
        strncmp(w, "sm", 2) == 0 || strncmp(w, "gfx", 3) == 0)
      continue;
    snprintf(tok[n++], 24, "%s", w);
  }
  return n;
}

/* Does the measured device name look like the machine's device? Unknown
 * (either name has no model token) counts as a match. */
static bool names_match(const char *measured, const pf_device *d) {
  char a[16][24], b[32][24];
  int na = model_tokens(measured, a, 16);
  if (na == 0) return true;
  int nb = model_tokens(d->name, b, 16);
  nb += model_tokens(d->id, b + nb, 16);
  if (nb == 0) return true;
  for (int i = 0; i < na; i++)
    for (int j = 0; j < nb; j++)
      if (strcmp(a[i], b[j]) == 0) return true;
  return false;
}

bool pf_calibration_matches(const pf_calibration *c, const pf_machine *m, char *why, size_t whylen) {
  if (c->has_fit && c->fit_machines[0]) {
    char list[sizeof c->fit_machines];
    snprintf(list, sizeof list, "%s", c->fit_machines);
    char *save = NULL;
    for (char *t = strtok_r(list, ",", &save); t; t = strtok_r(NULL, ",", &save))
      if (!strcmp(t, m->id)) return true;
    snprintf(why, whylen, "%s was fitted on %s, not on %s", c->path, c->fit_machines, m->id);
    return false;
  }
  if (c->device_name[0] && !names_match(c->device_name, &m->dev)) {
    snprintf(why, whylen, "%s was measured on \"%s\", which is not %s's device \"%s\"", c->path, c->device_name,
             m->id, m->dev.name);
    return false;
  }
  return true;
}

/* A measured rate as a fraction of the datasheet: above it by more than the
 * 5 % a boost clock or a rounded datasheet figure explains, the measurement
 * (or the device it is applied to) is wrong: PF_EINVAL.  Up to 5 % above: 1. */
static int measured_eff(const pf_calibration *c, const pf_device *d, const char *what, double eff, double *out) {
  if (eff > 1.05)
    return pf_error_set(PF_EINVAL, "%s: measured %s is %.0f %% of %s's datasheet peak: a rate above the peak is not "
                        "physical (a wrong device, unit or FLOP count in the file)", c->path, what, 100.0 * eff, d->id);
  if (eff > 1.0) {
    pf_warn("%s: measured %s is %.1f %% of the datasheet; using 100 %%", c->path, what, 100.0 * eff);
    eff = 1.0;
  }
  if (eff < 0.05) pf_warn("%s: measured %s is only %.1f %% of the datasheet; check the file", c->path, what, 100.0 * eff);
  *out = eff;
  return 0;
}

/* The library GEMM table of c becomes d's table (measured on this part: the
 * table's reference efficiency is its best row, which also becomes d's
 * large-GEMM efficiency), built once per file content and device. */
static int apply_gemm(const pf_calibration *c, pf_device *d) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (int i = 0; i < c->gemm_n; i++) h = pf_cal_fnv1a((const char *)&c->gemm[i], sizeof c->gemm[i]) ^ (h * 31);
  char key[PF_PATH_MAX + 256];
  double overhead = c->gemm_overhead_s > 0 ? c->gemm_overhead_s : d->kernel_launch_s;
  snprintf(key, sizeof key, "calibration|%016llx|%s|%.17g|%d|%.17g|%.17g|%.17g", (unsigned long long)h, d->id,
           overhead, d->units, d->peak_flops[PF_BF16], d->peak_flops[PF_FP8], d->peak_flops[PF_TF32]);
  const pf_gemm_table *t = pf_gemm_table_find(key);
  if (!t) {
    pf_gemm_table *nt;
    int rc = pf_gemm_table_build(c->path, c->gemm, c->gemm_n, overhead, d->peak_flops, d->units, NULL, &nt);
    if (rc < 0) return rc;
    if (!(t = pf_gemm_table_intern(key, nt))) return PF_ENOMEM;
  }
  d->gemm_table = t;
  int rc;
  if (t->ref_eff[PF_BF16] > 0 && (rc = measured_eff(c, d, "bf16 library GEMM rate", t->ref_eff[PF_BF16], &d->gemm_eff)) < 0)
    return rc;
  if (t->ref_eff[PF_FP8] > 0 &&
      (rc = measured_eff(c, d, "fp8 library GEMM rate", t->ref_eff[PF_FP8], &d->gemm_eff_fp8)) < 0)
    return rc;
  return 0;
}

int pf_calibration_apply(const pf_calibration *c, pf_machine *m) {
  pf_device *d = &m->dev;
  if (strcmp(c->backend, "cpu") == 0)
    return pf_error_set(PF_EINVAL,
                        "%s: a cpu calibration measures the host CPU, not %s's %s; run `preflight calibrate "
                        "--backend cuda|hip` on a node of that machine",
                        c->path, m->id, d->name);

  if (c->units > 0) d->units = c->units;
  pf_precision gp = c->tensor_flops[PF_BF16] > 0 ? PF_BF16 : PF_FP16;
  int rc;
  if (c->gemm_n > 0) {
    if ((rc = apply_gemm(c, d)) < 0) return rc;
  } else if (c->tensor_flops[gp] > 0 && d->peak_flops[gp] > 0 &&
             (rc = measured_eff(c, d, gp == PF_BF16 ? "bf16 tensor rate" : "fp16 tensor rate",
                                c->tensor_flops[gp] / d->peak_flops[gp], &d->gemm_eff)) < 0)
    return rc;
  double bw = c->hbm_triad_Bps > 0 ? c->hbm_triad_Bps : c->hbm_copy_Bps;
  if (bw > 0 && d->memory_bw_Bps > 0 &&
      (rc = measured_eff(c, d, c->hbm_triad_Bps > 0 ? "triad bandwidth" : "copy bandwidth", bw / d->memory_bw_Bps,
                         &d->hbm_eff)) < 0)
    return rc;
  if (c->launch_s > 0) d->kernel_launch_s = c->launch_s;
  if (c->idle_W > 0) d->idle_W = c->idle_W;
  if (c->context_W > 0) d->context_W = c->context_W;
  /* the cap is what the driver reported, not the highest point the harness reached (a register-only tensor
   * kernel stays far below what GEMM-heavy training draws: 412 of 700 W on an H100, data/h100-calibrate) */
  if (c->power_cap_W > 0) {
    d->tdp_W = c->power_cap_W;
    d->cap_W = c->power_cap_W + d->package_W;
  }
  if (c->has_power_coef) {
    d->tensor_W = c->power_tensor_W;
    d->hbm_W = c->power_hbm_W;
    d->vector_W = c->power_vector_W > 0 ? c->power_vector_W : 0.9 * c->power_tensor_W;
  }
  if (d->idle_W > d->tdp_W)
    return pf_error_set(PF_EINVAL, "%s: idle power %.0f W above the maximum %.0f W once applied to %s", c->path,
                        d->idle_W, d->tdp_W, d->id);
  /* a fitted compute efficiency scales the achieved rates: they stay at or below the peak */
  if (c->has_fit && d->gemm_eff * c->fit_compute_eff > 1.05)
    return pf_error_set(PF_EINVAL, "%s: fit.compute_eff %g x %s's GEMM efficiency %.3g = %.2f: an achieved rate "
                        "%.0f %% of the peak is not physical", c->path, c->fit_compute_eff, d->id, d->gemm_eff,
                        d->gemm_eff * c->fit_compute_eff, 100 * d->gemm_eff * c->fit_compute_eff);
  d->calibrated = true;
  snprintf(d->calibration_source, sizeof d->calibration_source, "%s", c->path);
  return 0;
}
