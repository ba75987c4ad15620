/* calapply.c - overlay a loaded calibration (calibration.c) on a machine.
 *
 * The overlay keeps the datasheet peaks (so MFU stays against the datasheet,
 * as Megatron and the EPICURE reports count it) and overlays only what was
 * measured like for like (docs/calibration.md, "What the overlay changes"):
 *   GEMMs     library rows (calibrate --gemm): over the device's table, each
 *             table row moves by the measured/predicted ratio near its shape;
 *             without a table the rows become the table
 *   ceilings  the harness's peak tensor kernels cap every product of their
 *             class, where that kernel is the full-rate path (not sm_90+)
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

#include "core/core.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
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
  /* the same model in another memory configuration is another part: H100 SXM 64, 80 and 94 GB differ in HBM
   * stacks, type and bandwidth (1.63, 3.35, 2.45 TB/s in their device files); 10 % covers what the driver
   * reserves (80 GiB reads 79.2 GiB) */
  double r = c->memory_B > 0 && m->dev.memory_B > 0 ? c->memory_B / m->dev.memory_B : 1.0;
  if (r < 0.9 || r > 1.1) {
    snprintf(why, whylen, "%s was measured on a %.0f GiB \"%s\"; %s's device %s has %.0f GiB: another variant "
             "(HBM stacks and bandwidth differ); calibrate on %s or pick a machine with that part", c->path,
             c->memory_B / 1073741824.0, c->device_name, m->id, m->dev.id, m->dev.memory_B / 1073741824.0, m->id);
    return false;
  }
  return true;
}

/* A measured rate as a fraction of the datasheet: above it by more than the
 * 5 % a boost clock or a rounded datasheet figure explains, or below a tenth
 * of it (PF_PLAUS_RATE_RATIO), the measurement (or the device it is applied
 * to) is wrong: PF_EINVAL.  Up to 5 % above: 1. */
static int measured_eff(const pf_calibration *c, const pf_device *d, const char *what, double eff, double *out) {
  if (eff > 1.05)
    return pf_error_set(PF_EINVAL, "%s: measured %s is %.0f %% of %s's datasheet peak: a rate above the peak is not "
                        "physical (a wrong device, unit or FLOP count in the file)", c->path, what, 100.0 * eff, d->id);
  if (eff > 1.0) {
    pf_warn("%s: measured %s is %.1f %% of the datasheet; using 100 %%", c->path, what, 100.0 * eff);
    eff = 1.0;
  }
  const pf_plaus *ratio = pf_plaus_get(PF_PLAUS_RATE_RATIO); /* within 0.1x-10x of the datasheet (core/bounds.c) */
  if (eff < ratio->lo) {
    char why[512];
    return pf_error_set(PF_EINVAL, "%s: measured %s against %s's datasheet: %s", c->path, what, d->id,
                        pf_plaus_why(ratio, eff, why, sizeof why));
  }
  *out = eff;
  return 0;
}

/* Library GEMM rows measured on this part.  Without a table on d they become d's table (its reference
 * efficiency, the best row, becomes d's large-GEMM efficiency).  Over d's table they overlay like for like:
 * each table row moves by the measured/predicted ratio of the calibration rows near its shape
 * (pf_gemm_table_corrected), so a table-backed prediction moves by no more than what was measured. */
static int apply_gemm(const pf_calibration *c, pf_device *d) {
  uint64_t h = PF_FNV1A_OFFSET;
  for (int i = 0; i < c->gemm_n; i++) h = pf_fnv1a(PF_FNV1A_OFFSET, &c->gemm[i], sizeof c->gemm[i]) ^ (h * 31);
  char key[PF_PATH_MAX + 256];
  double overhead = c->gemm_overhead_s > 0 ? c->gemm_overhead_s : d->kernel_launch_s, per_class[PF_NPREC];
  for (int p = 0; p < PF_NPREC; p++) per_class[p] = overhead;
  snprintf(key, sizeof key, "calibration|%016llx|%s|%.17g|%d|%.17g|%.17g|%.17g|%.17g", (unsigned long long)h,
           d->id, overhead, d->units, d->gemm_half_dim, d->peak_flops[PF_BF16], d->peak_flops[PF_FP8],
           d->peak_flops[PF_TF32]);
  const pf_gemm_table *t = pf_gemm_table_find(key);
  if (!t) {
    pf_gemm_table *nt;
    int rc = pf_gemm_table_build(c->path, c->gemm, c->gemm_n, per_class, d->peak_flops, d->units, d->gemm_half_dim,
                                  NULL, &nt);
    if (rc < 0) return rc;
    if (!(t = pf_gemm_table_intern(key, nt))) return PF_ENOMEM;
  }
  const pf_gemm_table *base = d->gemm_table;
  bool over = base != NULL;
  if (over) {
    char okey[sizeof key + PF_PATH_MAX + 32];
    if (snprintf(okey, sizeof okey, "%s|over|%s|%.17g|%.17g", key, base->name, d->gemm_eff, d->gemm_eff_fp8) >=
        (int)sizeof okey)
      return pf_error_set(PF_EINVAL, "%s: path too long", c->path);
    const pf_gemm_table *o = pf_gemm_table_find(okey);
    if (!o) {
      double *ratio = malloc((size_t)t->n * sizeof *ratio);
      if (!ratio) return pf_error_set(PF_ENOMEM, "out of memory");
      /* measured / what the table measured at the same shape (on d: times the transfer gemm_eff / ref_eff),
       * else / what d predicts there; kernel rates, without the launch floor */
      for (int j = 0; j < t->n; j++) {
        const pf_gemm_row *r = &t->row[j];
        double b = pf_gemm_table_measured(base, r->prec, r->layout, r->m, r->n, r->k);
        double was = b > 0 && base->ref_eff[r->prec] > 0 ? fmin(1.0, b * pf_gemm_top(d, r->prec) / base->ref_eff[r->prec])
                                                         : pf_gemm_eff_batched(d, r->prec, r->layout, r->m, r->n, r->k, 1);
        ratio[j] = r->eff / was;
      }
      char name[PF_PATH_MAX];
      if (snprintf(name, sizeof name, "%s over %s", c->path, base->name) >= (int)sizeof name)
        name[sizeof name - 1] = '\0'; /* a label only */
      pf_gemm_table *nt;
      int rc = pf_gemm_table_corrected(name, base, t, ratio, &nt);
      free(ratio);
      if (rc < 0) return rc;
      if (!(o = pf_gemm_table_intern(okey, nt))) return PF_ENOMEM;
    }
    d->gemm_table = o;
  } else {
    d->gemm_table = t;
  }
  int rc;
  if (!(over && base->top[PF_BF16] > 0) && t->ref_eff[PF_BF16] > 0 &&
      (rc = measured_eff(c, d, "bf16 library GEMM rate", t->ref_eff[PF_BF16], &d->gemm_eff)) < 0)
    return rc;
  if (!(over && base->top[PF_FP8] > 0) && t->ref_eff[PF_FP8] > 0 &&
      (rc = measured_eff(c, d, "fp8 library GEMM rate", t->ref_eff[PF_FP8], &d->gemm_eff_fp8)) < 0)
    return rc;
  return 0;
}

/* Is the harness's tensor kernel (mma.sync, MFMA) the part's full-rate path?  Not on sm_90 and later, where
 * the full rate needs wgmma (Hopper) or tcgen05 (Blackwell) and mma.sync issues at ~2/3 of the dense peak
 * (654 of 989 TFLOP/s on an H100 SXM against cuBLAS's 770-794, data/h100-calibrate; docs/calibration.md):
 * there it bounds the peak from below and caps nothing. */
static bool tensor_kernel_is_ceiling(const char *arch) {
  int sm;
  return !(arch && sscanf(arch, "sm_%d", &sm) == 1 && sm >= 90);
}

/* The harness's peak tensor kernels as ceilings: no product of that class runs faster than the instruction
 * kernel measured on the part (a lower clock, a power cap), wherever that kernel is the full-rate path.  The
 * GEMM efficiency itself stays the table's or the device's: an instruction loop is not a library GEMM. */
static int apply_tensor_ceilings(const pf_calibration *c, pf_device *d) {
  bool ceiling = tensor_kernel_is_ceiling(c->arch[0] ? c->arch : d->arch);
  static const pf_precision cls[] = {PF_BF16, PF_TF32, PF_FP8, PF_FP64};
  for (size_t i = 0; i < sizeof cls / sizeof cls[0]; i++) {
    pf_precision p = cls[i];
    double f = c->tensor_flops[p] > 0 ? c->tensor_flops[p] : p == PF_BF16 ? c->tensor_flops[PF_FP16] : 0;
    /* on sm_90 the fp8 mma.sync is emulated (docs/calibration.md: files before the fix report 118 %) */
    if (!(f > 0 && d->peak_flops[p] > 0) || (!ceiling && p == PF_FP8)) continue;
    char what[48];
    double eff;
    snprintf(what, sizeof what, "%s tensor rate", pf_precision_name(p == PF_BF16 && !(c->tensor_flops[p] > 0) ? PF_FP16 : p));
    int rc = measured_eff(c, d, what, f / d->peak_flops[p], &eff); /* a rate above the peak is refused anyway */
    if (rc < 0) return rc;
    if (ceiling) d->gemm_ceiling[p] = eff;
  }
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
  int rc;
  if (c->gemm_n > 0 && (rc = apply_gemm(c, d)) < 0) return rc;
  if ((rc = apply_tensor_ceilings(c, d)) < 0) return rc;
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
