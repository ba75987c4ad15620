/* devpower.c - the power keys of a device file and the device keys a machine
 * file may override per site (docs/machine-format.md, docs/energy.md).
 *
 * Which power model a device uses is module power's (power/pmodel.h), a layer
 * above this one: here power.model is read as a name, and a model's own
 * power.MODEL group as written (each value in SI with the kind of its unit,
 * or a plain number, with its line), so that a model in one new file of
 * model/power/ needs nothing here; pf_power_check() checks both against the
 * model table.  The utilisation model's flat keys are read here, as before.
 */
#include "devpower.h"

#include "core/core.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

bool pf_power_model_name_ok(const char *s) {
  if (!s || !((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z')) || strlen(s) >= PF_ID_MAX) return false;
  for (; *s; s++)
    if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') || (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
      return false;
  return true;
}

/* units a power model's coefficient may carry; a plain number is PF_UNIT_NONE */
static const pf_unit_kind param_units[] = {PF_UNIT_POWER, PF_UNIT_ENERGY,    PF_UNIT_TIME,  PF_UNIT_FREQUENCY,
                                           PF_UNIT_BYTES, PF_UNIT_BANDWIDTH, PF_UNIT_FLOPS};

/* One setting of the power.MODEL group at path into p. */
static int read_param(const reader *r, const char *path, const config_setting_t *c, pf_power_param *p) {
  const char *name = config_setting_name(c);
  if (strlen(name) >= sizeof p->key)
    return pf_error_set(PF_EPARSE, "%s:%d: device.%s.%s: a key of at most %d characters", r->file, line_of(c), path,
                        name, (int)sizeof p->key - 1);
  snprintf(p->key, sizeof p->key, "%s", name);
  p->line = line_of(c);
  char key[sizeof p->key + 80];
  snprintf(key, sizeof key, "%s.%s", path, name);
  const char *text = config_setting_get_string(c);
  if (!text) {
    p->unit = PF_UNIT_NONE;
    int rc = get_num(r, key, &p->value, 1);
    return rc < 0 ? rc : 0;
  }
  lookup(r, key); /* known to the unknown-key check */
  for (size_t i = 0; i < sizeof param_units / sizeof param_units[0]; i++)
    if (pf_units_parse(text, param_units[i], &p->value) == 0) {
      p->unit = param_units[i];
      return 0;
    }
  return pf_error_set(PF_EUNIT, "%s:%d: device.%s: \"%s\" is neither a number nor a quantity with its unit "
                      "(\"450 W\")", r->file, p->line, key, text);
}

/* power.model and the model's own group power.MODEL (pmodel.h): names and
 * values as written, checked by module power (pf_power_check). */
static int read_model_name(const reader *r, pf_device *d) {
  snprintf(d->power_file, sizeof d->power_file, "%s", r->file);
  int got = get_str(r, "power.model", d->power_model, sizeof d->power_model, 0);
  if (got <= 0) return got;
  d->power_model_line = line_of(lookup(r, "power.model"));
  if (!pf_power_model_name_ok(d->power_model))
    return pf_error_set(PF_EPARSE, "%s:%d: device.power.model: \"%s\" is not a model name (letters, digits, _ and -, "
                        "a letter first)", r->file, d->power_model_line, d->power_model);
  char path[PF_ID_MAX + 8];
  snprintf(path, sizeof path, "power.%s", d->power_model);
  const config_setting_t *g = lookup(r, path);
  if (!g) return 1;
  if (!config_setting_is_group(g))
    return pf_error_set(PF_EPARSE, "%s:%d: device.%s: expected a group { key = value; ... }", r->file, line_of(g),
                        path);
  int n = config_setting_length(g);
  if (n > PF_POWER_MAX_PARAMS)
    return pf_error_set(PF_EPARSE, "%s:%d: device.%s: %d keys, at most %d", r->file, line_of(g), path, n,
                        PF_POWER_MAX_PARAMS);
  for (d->power_nparams = 0; d->power_nparams < n; d->power_nparams++) {
    const config_setting_t *c = config_setting_get_elem(g, (unsigned)d->power_nparams);
    TRY(read_param(r, path, c, &d->power_params[d->power_nparams]));
  }
  return 1;
}

/* The utilisation power model (power/pm_util.c; docs/energy.md "Operating points").  Defaults where a
 * file gives none, measured on one NVIDIA H200 SXM (700 W cap) for this project unless named
 * (calibrate/results/vm-h200-141-2026-11-26*.json) and carried to other parts as a share of their budget B
 * or as energy per byte; a device file gives its own where a source has one:
 *   wait    context: a GPU waiting on the host (20 us kernel, synchronize, 2 ms sleep) drew 121 W against 122 W
 *           with its context alone: with no kernel in flight the SMs are clock-gated and the clocks stay up,
 *           whatever the host does (a collective's spinning kernels are comm, not wait)
 *   active  context + 0.003 B: tiny kernels back to back in a CUDA graph drew 124 W against 122 W (the
 *           earlier rule, context + 0.07 B from an inference decode, counted that decode's HBM traffic)
 *   tensor  a full-load library GEMM at efficiency.gemm demands GEMM_DEMAND x B: dense bf16 transformer
 *           layers on an H100 SXM run at the 700 W cap (measured for this project), which the model's own
 *           utilisation of such layers (u_tensor 0.646, u_hbm 0.061) reaches at 1.166 x B; the H200's library
 *           GEMM at the cap (693 W at u_tensor 0.703) bounds it from below, and the cap model then slows the
 *           clock where a window's mean exceeds the cap
 *   vector  0.9 x tensor (H100 FP32 burn 580-650 W at 77 % of the FP32 peak, gpu-fryer#4, research 3.8)
 *   hbm     HBM_J_PER_B x memory_bw: streams of random data (triad 637 W at 0.855 of 4.8 TB/s, copy 676 W at
 *           0.891) cost ~127 pJ a byte moved, DRAM and on-chip path together; a stream's power is that energy
 *           times its rate, so parts with less bandwidth draw less (the earlier rule, 0.29 B from an H100 batch-1
 *           decode, was a third of this measurement)
 * B is the device's own budget: tdp less package (a GH200 module's cap holds Grace and LPDDR5X). */
#define ACTIVE_SHARE 0.003
#define GEMM_DEMAND 1.166
#define HBM_J_PER_B 127e-12
int pf_read_power_model(const reader *r, pf_device *d) {
  TRY(get_qty_in(r, "power.package", PF_UNIT_POWER, &d->package_W, 0, 0, false, 3000, NULL));
  double gpu = d->tdp_W - d->package_W; /* the device's own budget: a GH200 module's cap holds Grace and LPDDR5X */
  if (gpu <= d->context_W)
    return pf_error_set(PF_EPARSE, "%s:%d: device.power: tdp less package leaves nothing above context", r->file,
                        line_of(lookup(r, "power")));
  d->active_W = d->context_W + ACTIVE_SHARE * gpu;
  d->wait_W = d->context_W;
  TRY(get_qty_in(r, "power.active", PF_UNIT_POWER, &d->active_W, 0, 0, true, 3000, NULL));
  TRY(get_qty_in(r, "power.wait", PF_UNIT_POWER, &d->wait_W, 0, 0, true, 3000, NULL));
  double demand = GEMM_DEMAND;
  TRY(get_num_in(r, "power.gemm_demand", &demand, 0, 0, true, 2.0, "a full-load GEMM's power over tdp"));
  d->tensor_W = fmax(0.0, (demand * gpu - d->active_W) / d->gemm_eff);
  d->vector_W = 0.9 * d->tensor_W;
  d->hbm_W = HBM_J_PER_B * d->memory_bw_Bps;
  TRY(get_qty_in(r, "power.tensor", PF_UNIT_POWER, &d->tensor_W, 0, 0, false, 5000, NULL));
  TRY(get_qty_in(r, "power.vector", PF_UNIT_POWER, &d->vector_W, 0, 0, false, 5000, NULL));
  TRY(get_qty_in(r, "power.hbm", PF_UNIT_POWER, &d->hbm_W, 0, 0, false, 5000, NULL));
  d->cap_W = d->tdp_W;
  TRY(get_qty_in(r, "power.cap", PF_UNIT_POWER, &d->cap_W, 0, 0, true, 3000, "a device draws less than 3 kW"));
  TRY(get_num_in(r, "power.voltage_floor", &d->v_floor, 0, 0, true, 1.0, "a share of the full-clock voltage"));
  TRY(read_model_name(r, d));
  if (d->active_W < d->context_W || d->wait_W < d->context_W || d->active_W > d->tdp_W || d->wait_W > d->tdp_W)
    return pf_error_set(PF_EPARSE, "%s:%d: device.power: active and wait lie between context and tdp", r->file,
                        line_of(lookup(r, "power")));
  if (d->package_W + d->idle_W > d->cap_W)
    return pf_error_set(PF_EPARSE, "%s:%d: device.power: idle + package exceed the cap", r->file,
                        line_of(lookup(r, "power")));
  return 0;
}

int pf_read_device_override(const reader *r, pf_device *d) {
  if (!lookup(r, "node.device_override")) return 0;
  double tdp0 = d->tdp_W, cap0 = d->cap_W;
  TRY(get_qty_in(r, "node.device_override.memory", PF_UNIT_BYTES, &d->memory_B, 0, 0, true, 1e15, "device memory"));
  TRY(get_qty_in(r, "node.device_override.memory_bw", PF_UNIT_BANDWIDTH, &d->memory_bw_Bps, 0, 0, true, 1e14, NULL));
  TRY(get_qty_in(r, "node.device_override.kernel_launch", PF_UNIT_TIME, &d->kernel_launch_s, 0, 0, true, 1e-3, NULL));
  TRY(get_num_b(r, "node.device_override.efficiency.gemm", PF_PLAUS_EFFICIENCY, &d->gemm_eff, 0));
  TRY(get_num_b(r, "node.device_override.efficiency.hbm", PF_PLAUS_EFFICIENCY, &d->hbm_eff, 0));
  TRY(get_qty_in(r, "node.device_override.power.tdp", PF_UNIT_POWER, &d->tdp_W, 0, 0, true, 3000, NULL));
  if (d->tdp_W != tdp0 && cap0 == tdp0) d->cap_W = d->tdp_W; /* the cap followed the tdp: it still does */
  static const char *const keys[] = {"idle", "context", "comm", "wait", "active", "tensor", "vector", "hbm",
                                     "package", "cap"};
  double *dst[] = {&d->idle_W, &d->context_W, &d->comm_W, &d->wait_W, &d->active_W, &d->tensor_W, &d->vector_W,
                   &d->hbm_W, &d->package_W, &d->cap_W};
  for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
    char key[64];
    snprintf(key, sizeof key, "node.device_override.power.%s", keys[i]);
    TRY(get_qty_in(r, key, PF_UNIT_POWER, dst[i], 0, 0, false, 5000, NULL));
  }
  if (d->idle_W + d->package_W > d->cap_W || d->context_W > d->tdp_W)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.node.device_override.power: idle + package above the cap, or context "
                        "above tdp", r->file, line_of(lookup(r, "node.device_override")));
  return 0;
}
