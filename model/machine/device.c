/* device.c - precisions and device descriptions: read a device file
 * (machines/devices/ID.cfg, docs/machine-format.md): peaks per precision,
 * efficiencies, the kernel model's rates, a measured GEMM table, power.
 *
 * Errors and unknown keys as for machines (machine.c, cfgread.c): every error
 * names the file, the line and the setting; values are checked where they are
 * read (efficiencies in (0.01, 1], every quantity within its kind's bounds (core/bounds.c), a device below 3 kW, vector rates at most the
 * matrix units' peak).  The power model's keys: devpower.c.
 */
#include "hardware.h"

#include "catalog.h"
#include "cfgread.h"
#include "devpower.h"
#include "core/core.h"
#include "gemmtab.h"

#include <libconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *precision_names[PF_NPREC] = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"};

const char *pf_precision_name(pf_precision p) {
  return (p >= 0 && p < PF_NPREC) ? precision_names[p] : "?";
}

int pf_precision_parse(const char *s, pf_precision *out) {
  int i = pf_name_index(s, precision_names, PF_NPREC, false);
  if (i >= 0) { *out = (pf_precision)i; return 0; }
  return pf_error_set(PF_EINVAL, "unknown precision \"%s\"; valid: fp32, tf32, fp16, bf16, fp8, fp64",
                      s ? s : "");
}

double pf_precision_bytes(pf_precision p) {
  switch (p) {
  case PF_FP64: return 8.0;
  case PF_FP32: case PF_TF32: return 4.0;
  case PF_FP16: case PF_BF16: return 2.0;
  case PF_FP8: return 2.0; /* FP8 training keeps activations in bf16 between GEMMs (Transformer Engine) */
  case PF_NPREC: break;
  }
  return 2.0;
}

double pf_device_peak(const pf_device *d, pf_precision p) {
  if (p == PF_FP32) /* plain fp32 runs on the FMA units unless the device has fp32 matrix units */
    return d->peak_flops[PF_FP32] > 0 ? d->peak_flops[PF_FP32] : d->vector_flops[PF_FP32];
  return d->peak_flops[p];
}

/* Optional rate keys of the kernel model (docs/machine-format.md): units,
 * efficiency.gemm_fp8, efficiency.attention_fwd/_bwd, efficiency.conv; each a
 * fraction in (0.01, 1] (PF_PLAUS_EFFICIENCY, core/bounds.c). */
static int read_rate_keys(const reader *r, pf_device *d) {
  TRY(get_int(r, "units", &d->units, 0, 1));
  struct { const char *key; double *dst; } f[] = {
    {"efficiency.gemm_fp8", &d->gemm_eff_fp8}, {"efficiency.attention_fwd", &d->attn_eff_fwd},
    {"efficiency.attention_bwd", &d->attn_eff_bwd}, {"efficiency.conv", &d->conv_eff}};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) TRY(get_num_b(r, f[i].key, PF_PLAUS_EFFICIENCY, f[i].dst, 0));
  if (d->gemm_half_dim <= 0)
    return pf_error_set(PF_EPARSE, "%s:%d: device.efficiency.gemm_half_dim: must be positive", r->file,
                        line_of(lookup(r, "efficiency.gemm_half_dim")));
  return 0;
}

/* The path of the gemm_table file named at key, relative to the device file at path. */
static int gemm_path(const reader *r, const char *path, const char *key, char *full, size_t fullsz) {
  char file[PF_PATH_MAX];
  TRY(get_str(r, key, file, sizeof file, 1));
  const char *slash = strrchr(path, '/');
  if (file[0] == '/' || !slash) snprintf(full, fullsz, "%s", file);
  else snprintf(full, fullsz, "%.*s/%s", (int)(slash - path), path, file);
  return 0;
}

/* The samples of the gemm_table file `full` (named at key) appended to *s, *n; only: the one precision class
 * every row must be (PF_NPREC: any). */
static int read_gemm_file(const reader *r, const char *path, const char *key, const char *full, pf_precision only,
                          pf_gemm_sample **s, int *n) {
  char why[1024];
  pf_gemm_sample *x;
  int nx, rc = pf_gemm_samples_read(full, &x, &nx);
  if (rc < 0) {
    snprintf(why, sizeof why, "%s", pf_error_detail());
    return pf_error_set(rc, "%s:%d: device.%s: %s", path, line_of(lookup(r, key)), key, why);
  }
  for (int i = 0; i < nx && only != PF_NPREC; i++)
    if (pf_gemm_class(x[i].prec) != only) {
      rc = pf_error_set(PF_EPARSE, "%s:%d: device.%s: %s: row %d is %s; this file holds %s rows only", path,
                        line_of(lookup(r, key)), key, full, i + 1, pf_precision_name(x[i].prec),
                        pf_precision_name(only));
      free(x);
      return rc;
    }
  pf_gemm_sample *all = realloc(*s, (size_t)(*n + nx) * sizeof *all);
  if (!all) {
    free(x);
    return pf_error_set(PF_ENOMEM, "out of memory");
  }
  memcpy(all + *n, x, (size_t)nx * sizeof *x);
  free(x);
  *s = all;
  *n += nx;
  return 0;
}

/* gemm_table = { file = "tables/x.csv"; units = 132; peak = "989.4 TFLOPS";
 * reference_eff = 0.803; overhead = "22.4 us";
 * fp8 = { file = "tables/y.csv"; peak = "1978.9 TFLOPS"; reference_eff = 0.709; overhead = "25.0 us"; }; }:
 * a measured GEMM table (gemm.h).  Files are relative to the device file; units, peak (dense 16-bit) and
 * reference_eff (large-GEMM efficiency) describe the part it was measured on, so one table serves every part
 * it transfers to (docs/model.md); overhead is the per-call time its timings include (host dispatch and
 * launch), removed to get kernel rates.  The optional fp8 group adds FP8 rows measured on the same part with
 * their own peak, large-GEMM efficiency and per-call time (an FP8 product's eager call dispatches longer). */
static int read_gemm_table(const reader *r, const char *path, pf_device *d) {
  if (!lookup(r, "gemm_table")) return 0;
  char full[2 * PF_PATH_MAX + 2], full8[2 * PF_PATH_MAX + 2] = "";
  double overhead = 0, ref = 0, peak = 0, overhead8 = 0, ref8 = 0, peak8 = 0;
  int units = 0;
  bool fp8 = lookup(r, "gemm_table.fp8") != NULL;
  TRY(gemm_path(r, path, "gemm_table.file", full, sizeof full));
  if (fp8) TRY(gemm_path(r, path, "gemm_table.fp8.file", full8, sizeof full8));
  /* the group's other keys before the required peaks, so a missing peak does not leave them unread */
  TRY(get_qty(r, "gemm_table.overhead", PF_UNIT_TIME, &overhead, 0));
  TRY(get_int(r, "gemm_table.units", &units, 0, 1));
  TRY(get_num_b(r, "gemm_table.reference_eff", PF_PLAUS_EFFICIENCY, &ref, 1));
  if (fp8) {
    TRY(get_qty(r, "gemm_table.fp8.overhead", PF_UNIT_TIME, &overhead8, 0));
    TRY(get_num_b(r, "gemm_table.fp8.reference_eff", PF_PLAUS_EFFICIENCY, &ref8, 1));
  }
  TRY(get_qty(r, "gemm_table.peak", PF_UNIT_FLOPS, &peak, 1));
  if (fp8) TRY(get_qty(r, "gemm_table.fp8.peak", PF_UNIT_FLOPS, &peak8, 1));
  static const char *pk[] = {"gemm_table.peak", "gemm_table.fp8.peak"};
  for (int i = 0; i < 1 + fp8; i++)
    if ((i ? peak8 : peak) <= 0)
      return pf_error_set(PF_EPARSE, "%s:%d: device.%s: must be positive", path, line_of(lookup(r, pk[i])), pk[i]);
  char key[6 * PF_PATH_MAX];
  snprintf(key, sizeof key, "%s|%.17g|%d|%.17g|%.17g|%.17g|%s|%.17g|%.17g|%.17g", full, overhead, units,
           d->gemm_half_dim, ref, peak, full8, overhead8, ref8, peak8);
  const pf_gemm_table *t = pf_gemm_table_find(key);
  if (!t) {
    pf_gemm_sample *s = NULL;
    int n = 0, rc = read_gemm_file(r, path, "gemm_table.file", full, PF_NPREC, &s, &n);
    if (rc == 0 && fp8) rc = read_gemm_file(r, path, "gemm_table.fp8.file", full8, PF_FP8, &s, &n);
    double refs[PF_NPREC] = {0}, peaks[PF_NPREC] = {0}, over[PF_NPREC];
    for (int p = 0; p < PF_NPREC; p++) over[p] = overhead;
    refs[PF_BF16] = ref;
    peaks[PF_BF16] = peaks[PF_FP16] = peak;
    if (fp8) {
      refs[PF_FP8] = ref8;
      peaks[PF_FP8] = peak8;
      over[PF_FP8] = overhead8;
    }
    pf_gemm_table *nt = NULL;
    if (rc == 0 && (rc = pf_gemm_table_build(full, s, n, over, peaks, units, d->gemm_half_dim, refs, &nt)) < 0) {
      char why[1024];
      snprintf(why, sizeof why, "%s", pf_error_detail());
      rc = pf_error_set(rc, "%s:%d: device.gemm_table: %s", path, line_of(lookup(r, "gemm_table")), why);
    }
    free(s);
    if (rc < 0) return rc;
    if (!(t = pf_gemm_table_intern(key, nt))) return PF_ENOMEM;
  }
  d->gemm_table = t;
  return 0;
}

static int read_device(config_t *cfg, const char *path, pf_device *d) {
  memset(d, 0, sizeof *d);
  reader r = {path, config_lookup(cfg, "device"), "device"};
  if (!r.root)
    return pf_error_set(PF_EPARSE, "%s:1: missing top-level group \"device = { ... };\"", path);
  TRY(get_str(&r, "id", d->id, sizeof d->id, 1));
  TRY(get_str(&r, "name", d->name, sizeof d->name, 1));
  TRY(get_str(&r, "vendor", d->vendor, sizeof d->vendor, 1));
  TRY(get_str(&r, "arch", d->arch, sizeof d->arch, 0));
  TRY(get_qty_in(&r, "memory", PF_UNIT_BYTES, &d->memory_B, 1, 0, true, 1e15, "device memory"));
  TRY(get_qty_in(&r, "memory_bw", PF_UNIT_BANDWIDTH, &d->memory_bw_Bps, 1, 0, true, 1e14, "device memory bandwidth"));
  TRY(get_qty(&r, "l2", PF_UNIT_BYTES, &d->l2_B, 0));
  for (int p = 0; p < PF_NPREC; p++) {
    char key[32];
    snprintf(key, sizeof key, "peak.%s", precision_names[p]);
    TRY(get_qty(&r, key, PF_UNIT_FLOPS, &d->peak_flops[p], 0));
    snprintf(key, sizeof key, "vector.%s", precision_names[p]);
    TRY(get_qty(&r, key, PF_UNIT_FLOPS, &d->vector_flops[p], 0));
  }
  if (d->peak_flops[PF_FP16] <= 0 && d->peak_flops[PF_BF16] <= 0 && d->vector_flops[PF_FP32] <= 0)
    return pf_error_set(PF_EPARSE, "%s:%d: device.peak: needs at least fp16 or bf16 (or vector.fp32)", path,
                        line_of(r.root));
  d->gemm_eff = 0.8; d->gemm_half_dim = PF_GEMM_K_HALF; d->hbm_eff = 0.85; d->kernel_launch_s = 5e-6;
  d->conv_eff = 1.0;
  TRY(get_num_b(&r, "efficiency.gemm", PF_PLAUS_EFFICIENCY, &d->gemm_eff, 1));
  TRY(get_num_in(&r, "efficiency.gemm_half_dim", &d->gemm_half_dim, 0, 0, true, 1e6, NULL));
  TRY(get_num_b(&r, "efficiency.hbm", PF_PLAUS_EFFICIENCY, &d->hbm_eff, 1));
  TRY(read_rate_keys(&r, d));
  TRY(get_qty_in(&r, "kernel_launch", PF_UNIT_TIME, &d->kernel_launch_s, 0, 0, true, 1e-3, NULL));
  TRY(read_gemm_table(&r, path, d));
  /* a device below a few kW: the largest accelerator packages draw ~1.2 kW (B200) */
  TRY(get_qty_in(&r, "power.tdp", PF_UNIT_POWER, &d->tdp_W, 1, 0, true, 3000, "a device draws less than 3 kW"));
  TRY(get_qty(&r, "power.idle", PF_UNIT_POWER, &d->idle_W, 1));
  d->context_W = d->idle_W;
  TRY(get_qty(&r, "power.context", PF_UNIT_POWER, &d->context_W, 0));
  d->comm_W = 0.35 * d->tdp_W;
  TRY(get_qty(&r, "power.comm", PF_UNIT_POWER, &d->comm_W, 0));
  d->dies_per_package = 1;
  TRY(get_int_in(&r, "dies_per_package", &d->dies_per_package, 0, 1, 16));
  if (d->idle_W > d->tdp_W)
    return pf_error_set(PF_EPARSE, "%s:%d: device.power: idle exceeds tdp", path, line_of(lookup(&r, "power")));
  if (d->context_W > d->tdp_W || d->comm_W > d->tdp_W)
    return pf_error_set(PF_EPARSE, "%s:%d: device.power: %s exceeds tdp", path, line_of(lookup(&r, "power")),
                        d->context_W > d->tdp_W ? "context" : "comm");
  TRY(pf_read_power_model(&r, d));
  for (int p = 0; p < PF_NPREC; p++)
    if (d->vector_flops[p] > 0 && d->peak_flops[p] > 0 && d->vector_flops[p] > d->peak_flops[p] * 1.001)
      return pf_error_set(PF_EPARSE, "%s:%d: device.vector.%s: above peak.%s (the matrix units' rate bounds "
                          "every rate)", path, line_of(lookup(&r, "vector")), precision_names[p], precision_names[p]);
  TRY(get_provenance(&r, NULL, 0));
  return 0;
}

static int read_device_any(config_t *cfg, const char *path, void *out) { return read_device(cfg, path, out); }

int pf_device_load(const char *id_or_path, pf_device *out) {
  return pf_catalog_load(id_or_path, "device", read_device_any, out, out->id);
}
