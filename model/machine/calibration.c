/* calibration.c - load calibration JSON (the overlay on a machine: calapply.c).
 *
 * The file is what `preflight calibrate` writes (schema in docs/calibration.md,
 * protocol in shared/research/energy-and-calibration.md sections 4.1-4.2), or
 * what `validate --fit` writes (a "fit" section only).  The loader is strict
 * about what it uses: every field it reads must have the right type and a
 * physical value, and a message names the file and the field; fields it does
 * not know are ignored so that newer writers stay readable.  Parsed files are
 * kept by content, so that loops of predictions parse a file once.
 */
#include "calibration.h"

#include "core/core.h"
#include "io/io.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FILE_B (64L << 20)

static const char *const prec_key[PF_NPREC] = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"};

typedef struct ctx {
  const char *path;
} ctx;

/* Read a number at obj[key].  Missing: 0 and *found false (an error when
 * required).  Not a number, not finite or negative: PF_EPARSE naming the field. */
static int get_num(const ctx *c, const cJSON *obj, const char *key, const char *field, bool required, double *out,
                   bool *found) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (found) *found = false;
  *out = 0.0;
  if (!it || cJSON_IsNull(it)) {
    if (required) return pf_error_set(PF_EPARSE, "%s: field %s: missing", c->path, field);
    return 0;
  }
  if (!cJSON_IsNumber(it)) return pf_error_set(PF_EPARSE, "%s: field %s: expected a number", c->path, field);
  double v = it->valuedouble;
  if (!isfinite(v)) return pf_error_set(PF_EPARSE, "%s: field %s: %g is not finite", c->path, field, v);
  if (v < 0) return pf_error_set(PF_EPARSE, "%s: field %s: %g is negative", c->path, field, v);
  *out = v;
  if (found) *found = true;
  return 0;
}

/* A measured statistic: {"median": x, ...} or a bare number. */
static int get_stat(const ctx *c, const cJSON *obj, const char *key, const char *parent, double *median) {
  char field[192];
  snprintf(field, sizeof field, "%s.%s", parent, key);
  *median = 0.0;
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it || cJSON_IsNull(it)) return 0;
  if (cJSON_IsNumber(it)) {
    int rc = get_num(c, obj, key, field, true, median, NULL);
    if (rc == 0 && !(*median > 0))
      return pf_error_set(PF_EPARSE, "%s: field %s: a measured value of 0 is not a measurement (leave the entry "
                          "out)", c->path, field);
    return rc;
  }
  if (!cJSON_IsObject(it))
    return pf_error_set(PF_EPARSE, "%s: field %s: expected an object with \"median\" or a number", c->path, field);
  char mfield[224];
  snprintf(mfield, sizeof mfield, "%s.median", field);
  int rc = get_num(c, it, "median", mfield, true, median, NULL);
  if (rc == 0 && !(*median > 0))
    return pf_error_set(PF_EPARSE, "%s: field %s: a measured median of 0 is not a measurement (leave the entry "
                        "out, or list it under results.unsupported)", c->path, mfield);
  return rc;
}

static int get_object(const ctx *c, const cJSON *obj, const char *key, const char *field, const cJSON **out) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  *out = NULL;
  if (!it || cJSON_IsNull(it)) return 0;
  if (!cJSON_IsObject(it)) return pf_error_set(PF_EPARSE, "%s: field %s: expected an object", c->path, field);
  *out = it;
  return 0;
}

static int get_string(const ctx *c, const cJSON *obj, const char *key, const char *field, char *buf, size_t len) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(obj, key);
  if (!it || cJSON_IsNull(it)) return 0;
  if (!cJSON_IsString(it)) return pf_error_set(PF_EPARSE, "%s: field %s: expected a string", c->path, field);
  snprintf(buf, len, "%s", it->valuestring);
  return 0;
}

static int load_d2d(const ctx *c, const cJSON *results, pf_calibration *out) {
  const cJSON *arr = cJSON_GetObjectItemCaseSensitive(results, "d2d");
  if (!arr || cJSON_IsNull(arr)) return 0;
  if (!cJSON_IsArray(arr)) return pf_error_set(PF_EPARSE, "%s: field results.d2d: expected an array", c->path);
  int n = cJSON_GetArraySize(arr);
  if (n == 0) return 0;
  double *bw = calloc((size_t)n, sizeof *bw), *al = calloc((size_t)n, sizeof *al), *be = calloc((size_t)n, sizeof *be);
  if (!bw || !al || !be) {
    free(bw);
    free(al);
    free(be);
    return pf_error_set(PF_ENOMEM, "%s: out of memory", c->path);
  }
  int k = 0, rc = 0;
  const cJSON *link;
  cJSON_ArrayForEach(link, arr) {
    char field[96];
    if (!cJSON_IsObject(link)) {
      rc = pf_error_set(PF_EPARSE, "%s: field results.d2d[%d]: expected an object", c->path, k);
      break;
    }
    snprintf(field, sizeof field, "results.d2d[%d].alpha_s", k);
    if ((rc = get_num(c, link, "alpha_s", field, true, &al[k], NULL))) break;
    snprintf(field, sizeof field, "results.d2d[%d].beta_Bps", k);
    if ((rc = get_num(c, link, "beta_Bps", field, true, &be[k], NULL))) break;
    bool has_bw;
    snprintf(field, sizeof field, "results.d2d[%d].bw_Bps", k);
    if ((rc = get_num(c, link, "bw_Bps", field, false, &bw[k], &has_bw))) break;
    if (!has_bw) bw[k] = be[k];
    k++;
  }
  if (!rc) { /* k == n > 0: every link was read */
    out->d2d_Bps = pf_median(bw, k);
    out->link_alpha_s = pf_median(al, k);
    out->link_beta_Bps = pf_median(be, k);
  }
  free(bw);
  free(al);
  free(be);
  return rc;
}

/* Samples of every calibration that had a GEMM table: kept until exit, since
 * pf_calibration copies point at them (reachable from here). */
typedef struct kept_samples {
  pf_gemm_sample *s;
  struct kept_samples *next;
} kept_samples;
static kept_samples *kept;

/* results.gemm = {"library": "...", "overhead_s": x, "rows": [{"m", "n", "k",
 * "layout", "dtype", "time_s" | "tflops"}, ...]} */
static int load_gemm(const ctx *c, const cJSON *results, pf_calibration *out) {
  const cJSON *g;
  int rc;
  if ((rc = get_object(c, results, "gemm", "results.gemm", &g)) || !g) return rc;
  if ((rc = get_string(c, g, "library", "results.gemm.library", out->gemm_library, sizeof out->gemm_library)))
    return rc;
  if ((rc = get_num(c, g, "overhead_s", "results.gemm.overhead_s", false, &out->gemm_overhead_s, NULL))) return rc;
  const cJSON *rows = cJSON_GetObjectItemCaseSensitive(g, "rows");
  if (!cJSON_IsArray(rows)) return pf_error_set(PF_EPARSE, "%s: field results.gemm.rows: expected an array", c->path);
  int n = cJSON_GetArraySize(rows);
  if (n == 0) return 0;
  pf_gemm_sample *smp = calloc((size_t)n, sizeof *smp);
  kept_samples *k = malloc(sizeof *k);
  if (!smp || !k) {
    free(smp);
    free(k);
    return pf_error_set(PF_ENOMEM, "%s: out of memory", c->path);
  }
  int i = 0;
  const cJSON *row;
  cJSON_ArrayForEach(row, rows) {
    char field[96], str[16] = "";
    pf_gemm_sample *x = &smp[i];
    double tflops = 0;
    bool has_t = false, has_f = false;
    if (!cJSON_IsObject(row)) {
      rc = pf_error_set(PF_EPARSE, "%s: field results.gemm.rows[%d]: expected an object", c->path, i);
      break;
    }
    static const char *dims[] = {"m", "n", "k"};
    double *dst[] = {&x->m, &x->n, &x->k};
    for (int d = 0; d < 3 && !rc; d++) {
      snprintf(field, sizeof field, "results.gemm.rows[%d].%s", i, dims[d]);
      if (!(rc = get_num(c, row, dims[d], field, true, dst[d], NULL)) && !(*dst[d] >= 1))
        rc = pf_error_set(PF_EPARSE, "%s: field %s: must be at least 1", c->path, field);
    }
    if (rc) break;
    snprintf(field, sizeof field, "results.gemm.rows[%d].layout", i);
    if ((rc = get_string(c, row, "layout", field, str, sizeof str))) break;
    if (pf_gemm_layout_parse(str, &x->layout) < 0) {
      rc = pf_error_set(PF_EPARSE, "%s: field %s: \"%s\" is not NN, NT or TN", c->path, field, str);
      break;
    }
    snprintf(field, sizeof field, "results.gemm.rows[%d].dtype", i);
    str[0] = '\0';
    if ((rc = get_string(c, row, "dtype", field, str, sizeof str))) break;
    if (pf_precision_parse(str, &x->prec) < 0) {
      rc = pf_error_set(PF_EPARSE, "%s: field %s: \"%s\" is not fp64, fp32, tf32, fp16, bf16 or fp8", c->path, field,
                        str);
      break;
    }
    snprintf(field, sizeof field, "results.gemm.rows[%d].time_s", i);
    if ((rc = get_num(c, row, "time_s", field, false, &x->time_s, &has_t))) break;
    snprintf(field, sizeof field, "results.gemm.rows[%d].tflops", i);
    if ((rc = get_num(c, row, "tflops", field, false, &tflops, &has_f))) break;
    if (!has_t && has_f && tflops > 0) x->time_s = 2.0 * x->m * x->n * x->k / (tflops * 1e12);
    if (!(x->time_s > 0)) {
      rc = pf_error_set(PF_EPARSE, "%s: field results.gemm.rows[%d]: needs a positive time_s (or tflops)", c->path, i);
      break;
    }
    i++;
  }
  if (rc) {
    free(smp);
    free(k);
    return rc;
  }
  k->s = smp;
  k->next = kept;
  kept = k;
  out->gemm = smp;
  out->gemm_n = i;
  return 0;
}

/* results.host: per-operator host costs, each in (0, 10 ms] when present */
static int load_host(const ctx *c, const cJSON *results, pf_calibration *out) {
  const cJSON *o;
  int rc;
  if ((rc = get_object(c, results, "host", "results.host", &o)) || !o) return rc;
  const char *keys[] = {"torch_fwd_op_s", "torch_bwd_op_s"};
  double *dst[] = {&out->host_fwd_op_s, &out->host_bwd_op_s};
  for (int i = 0; i < 2; i++) {
    bool found;
    double v;
    char field[64];
    snprintf(field, sizeof field, "results.host.%s", keys[i]);
    if ((rc = get_num(c, o, keys[i], field, false, &v, &found))) return rc;
    if (found && !(v > 0 && v <= 10e-3))
      return pf_error_set(PF_EPARSE, "%s: field results.host.%s: %g s is outside (0, 0.01]", c->path, keys[i], v);
    if (found) *dst[i] = v;
  }
  return 0;
}

static int load_results(const ctx *c, const cJSON *results, pf_calibration *out) {
  int rc;
  const cJSON *o;
  if ((rc = get_object(c, results, "vector_flops", "results.vector_flops", &o))) return rc;
  for (int p = 0; o && p < PF_NPREC; p++)
    if ((rc = get_stat(c, o, prec_key[p], "results.vector_flops", &out->vector_flops[p]))) return rc;
  if ((rc = get_object(c, results, "tensor_flops", "results.tensor_flops", &o))) return rc;
  for (int p = 0; o && p < PF_NPREC; p++)
    if ((rc = get_stat(c, o, prec_key[p], "results.tensor_flops", &out->tensor_flops[p]))) return rc;
  if ((rc = get_object(c, results, "memory_bw", "results.memory_bw", &o))) return rc;
  if (o) {
    if ((rc = get_stat(c, o, "read", "results.memory_bw", &out->hbm_read_Bps))) return rc;
    if ((rc = get_stat(c, o, "write", "results.memory_bw", &out->hbm_write_Bps))) return rc;
    if ((rc = get_stat(c, o, "copy", "results.memory_bw", &out->hbm_copy_Bps))) return rc;
    if ((rc = get_stat(c, o, "triad", "results.memory_bw", &out->hbm_triad_Bps))) return rc;
  }
  if ((rc = get_stat(c, results, "launch_latency_s", "results", &out->launch_s))) return rc;
  if ((rc = get_num(c, results, "h2d_Bps", "results.h2d_Bps", false, &out->h2d_Bps, NULL))) return rc;
  if ((rc = get_num(c, results, "d2h_Bps", "results.d2h_Bps", false, &out->d2h_Bps, NULL))) return rc;
  if ((rc = load_gemm(c, results, out))) return rc;
  if ((rc = load_host(c, results, out))) return rc;
  return load_d2d(c, results, out);
}

static int load_fit(const ctx *c, const cJSON *fit, pf_calibration *out) {
  int rc;
  bool found;
  out->has_fit = true;
  out->fit_compute_eff = out->fit_comm_eff = 1.0;
  double v;
  /* each within its bound of the one table (core/bounds.c): a fitted factor on the device's rates, an
   * overhead, an input rate */
  static const struct { const char *key; pf_plaus_id b; } k[] = {
    {"compute_eff", PF_PLAUS_FIT_FACTOR}, {"comm_eff", PF_PLAUS_FIT_FACTOR},
    {"step_overhead_s", PF_PLAUS_OVERHEAD}, {"input_rate_Bps", PF_PLAUS_BANDWIDTH}};
  double *dst[] = {&out->fit_compute_eff, &out->fit_comm_eff, &out->fit_step_overhead_s, &out->fit_input_rate_Bps};
  for (size_t i = 0; i < sizeof k / sizeof k[0]; i++) {
    char field[64];
    snprintf(field, sizeof field, "fit.%s", k[i].key);
    if ((rc = get_num(c, fit, k[i].key, field, false, &v, &found))) return rc;
    if (!found) continue; /* absent: no factor, no overhead, no input term */
    char where[PF_PATH_MAX + 80];
    snprintf(where, sizeof where, "%s: field %s", c->path, field);
    if ((rc = pf_plaus_check(pf_plaus_get(k[i].b), v, where)) < 0) return rc;
    *dst[i] = v;
  }
  if ((rc = get_num(c, fit, "max_nodes", "fit.max_nodes", false, &out->fit_max_nodes, NULL))) return rc;
  if (out->fit_max_nodes < 0 || out->fit_max_nodes > 1e6)
    return pf_error_set(PF_EPARSE, "%s: field fit.max_nodes: %g is outside [0, 1e6]", c->path, out->fit_max_nodes);
  return get_num(c, fit, "rel_sigma", "fit.rel_sigma", false, &out->fit_rel_sigma, NULL);
}

/* The power model: idle, context and maximum power, and the activity coefficients when measured (powerfit.c). */
static int load_power_model(const ctx *c, const cJSON *pm, pf_calibration *out) {
  int rc;
  if ((rc = get_num(c, pm, "idle_W", "power_model.idle_W", false, &out->idle_W, NULL))) return rc;
  if ((rc = get_num(c, pm, "context_W", "power_model.context_W", false, &out->context_W, NULL))) return rc;
  if ((rc = get_num(c, pm, "max_W", "power_model.max_W", false, &out->max_W, NULL))) return rc;
  /* a device below a few kW (the largest packages draw ~1.2 kW); idle at most the maximum */
  const char *bad = out->max_W > 3000 ? "max_W above 3000 W per device"
                    : out->idle_W > 3000 || out->context_W > 3000 ? "idle_W or context_W above 3000 W per device"
                    : out->max_W > 0 && out->idle_W > out->max_W   ? "idle_W above max_W"
                    : out->max_W > 0 && out->context_W > out->max_W ? "context_W above max_W"
                                                                   : NULL;
  if (bad) return pf_error_set(PF_EPARSE, "%s: field power_model: %s", c->path, bad);
  const cJSON *co;
  if ((rc = get_object(c, pm, "coefficients", "power_model.coefficients", &co))) return rc;
  if (co) {
    static const char *const key[] = {"tensor_W", "hbm_W", "vector_W"};
    double *dst[] = {&out->power_tensor_W, &out->power_hbm_W, &out->power_vector_W};
    for (int i = 0; i < 3; i++) {
      char field[64];
      snprintf(field, sizeof field, "power_model.coefficients.%s", key[i]);
      if ((rc = get_num(c, co, key[i], field, i < 2, dst[i], NULL))) return rc;
      if (*dst[i] > 5000)
        return pf_error_set(PF_EPARSE, "%s: field %s: %g W above 5000 W per device", c->path, field, *dst[i]);
    }
    out->has_power_coef = true;
  }
  return 0;
}

static int parse_doc(const ctx *c, const char *text, size_t len, pf_calibration *out) {
  cJSON *root = pf_json_parse_strict(c->path, text, len); /* one document, no key twice */
  if (!root) return PF_EPARSE;
  int rc = 0;
  if (!cJSON_IsObject(root)) {
    rc = pf_error_set(PF_EPARSE, "%s: the top level is not a JSON object", c->path);
    goto done;
  }
  const cJSON *sv = cJSON_GetObjectItemCaseSensitive(root, "schema_version");
  if (!sv) {
    rc = pf_error_set(PF_EPARSE, "%s: field schema_version: missing (is this a preflight calibration file?)", c->path);
    goto done;
  }
  if (!cJSON_IsNumber(sv)) {
    rc = pf_error_set(PF_EPARSE, "%s: field schema_version: expected a number", c->path);
    goto done;
  }
  if (sv->valuedouble != (double)PF_CALIBRATION_SCHEMA) {
    rc = pf_error_set(PF_EINVAL, "%s: field schema_version: %g is not supported (this preflight reads %d)", c->path,
                      sv->valuedouble, PF_CALIBRATION_SCHEMA);
    goto done;
  }
  out->schema_version = PF_CALIBRATION_SCHEMA;

  snprintf(out->backend, sizeof out->backend, "unknown");
  if ((rc = get_string(c, root, "backend", "backend", out->backend, sizeof out->backend))) goto done;
  if (strcmp(out->backend, "cpu") && strcmp(out->backend, "cuda") && strcmp(out->backend, "hip") &&
      strcmp(out->backend, "fit") && strcmp(out->backend, "unknown")) {
    rc = pf_error_set(PF_EPARSE, "%s: field backend: \"%s\" is not one of cpu, cuda, hip, fit", c->path, out->backend);
    goto done;
  }
  const cJSON *dev, *results, *pm, *fit;
  if ((rc = get_object(c, root, "device", "device", &dev))) goto done;
  if (dev && (rc = get_string(c, dev, "name", "device.name", out->device_name, sizeof out->device_name))) goto done;
  if (dev) {
    double units = 0;
    if ((rc = get_num(c, dev, "units", "device.units", false, &units, NULL))) goto done;
    out->units = units >= 1 && units < 1e6 ? (int)units : 0;
    if ((rc = get_string(c, dev, "arch", "device.arch", out->arch, sizeof out->arch))) goto done;
    if ((rc = get_num(c, dev, "memory_B", "device.memory_B", false, &out->memory_B, NULL))) goto done;
    if ((rc = get_num(c, dev, "power_cap_W", "device.power_cap_W", false, &out->power_cap_W, NULL))) goto done;
    if (out->power_cap_W > 3000) {
      rc = pf_error_set(PF_EPARSE, "%s: field device.power_cap_W: %g W is above 3000 W per device", c->path,
                        out->power_cap_W);
      goto done;
    }
  }
  if ((rc = get_object(c, root, "results", "results", &results))) goto done;
  if (results && (rc = load_results(c, results, out))) goto done;
  if ((rc = get_object(c, root, "power_model", "power_model", &pm))) goto done;
  if (pm && (rc = load_power_model(c, pm, out))) goto done;
  const cJSON *prov = cJSON_GetObjectItemCaseSensitive(root, "provenance");
  const cJSON *mach = cJSON_GetObjectItemCaseSensitive(prov, "machines");
  if (cJSON_IsString(mach)) snprintf(out->fit_machines, sizeof out->fit_machines, "%s", mach->valuestring);
  if ((rc = get_object(c, root, "fit", "fit", &fit))) goto done;
  if (fit && (rc = load_fit(c, fit, out))) goto done;
  if (!results && !pm && !fit)
    rc = pf_error_set(PF_EPARSE, "%s: no \"results\", \"power_model\" or \"fit\" section: nothing to apply", c->path);
done:
  cJSON_Delete(root);
  return rc;
}

/* Parsed files by content, so that predict loops (tune, sweep, validate) with
 * --calibration read the file but parse it once. */
#define CAL_CACHE 8
static struct {
  uint64_t hash;
  size_t len;
  pf_calibration cal;
} cal_cache[CAL_CACHE];
static int cal_cache_next;

int pf_calibration_load(const char *path, pf_calibration *out) {
  memset(out, 0, sizeof *out);
  if (!path || !*path) return pf_error_set(PF_EINVAL, "calibration: empty file name");
  snprintf(out->path, sizeof out->path, "%s", path);
  ctx c = {path};
  char *buf = NULL;
  size_t len = 0;
  int rc = pf_read_file(path, (size_t)MAX_FILE_B, &buf, &len);
  if (!rc) {
    if (len == 0)
      rc = pf_error_set(PF_EPARSE, "%s: empty file, expected calibration JSON", path);
    else if (memchr(buf, '\0', len))
      rc = pf_error_set(PF_EPARSE, "%s: binary data, expected calibration JSON", path);
    else {
      uint64_t h = pf_fnv1a(PF_FNV1A_OFFSET, buf, len);
      int hit = -1;
      for (int i = 0; i < CAL_CACHE && hit < 0; i++)
        if (cal_cache[i].len == len && cal_cache[i].hash == h) hit = i;
      if (hit >= 0) {
        *out = cal_cache[hit].cal;
        snprintf(out->path, sizeof out->path, "%s", path);
      } else if (!(rc = parse_doc(&c, buf, len, out))) {
        cal_cache[cal_cache_next].hash = h;
        cal_cache[cal_cache_next].len = len;
        cal_cache[cal_cache_next].cal = *out;
        cal_cache_next = (cal_cache_next + 1) % CAL_CACHE;
      }
    }
  }
  free(buf);
  if (rc) {
    char keep[PF_PATH_MAX];
    snprintf(keep, sizeof keep, "%s", out->path);
    memset(out, 0, sizeof *out);
    snprintf(out->path, sizeof out->path, "%s", keep);
  }
  return rc;
}
