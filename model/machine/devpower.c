/* devpower.c - the power model's keys of a device file and the device keys a
 * machine file may override per site (docs/machine-format.md, docs/energy.md).
 */
#include "devpower.h"

#include "core/core.h"

#include <math.h>
#include <string.h>

/* The utilisation power model (energy.c; docs/energy.md).  Defaults where a
 * file gives none: a large GEMM at the device's MAMF efficiency draws about
 * the cap (tensor-core GEMMs reach it: research notes 3.8, gpu-fryer#4, 8xH100
 * nodes at 8.4 of 10.2 kW), vector FMA 0.9 of that (H100 FP32 burn 580-650 W
 * at 77 % of the FP32 peak, same source), HBM 0.39 x tdp (H100 batch-1
 * decode ~300 W at ~70 % of HBM bandwidth, ML.ENERGY v3.0 anchors). */
int pf_read_power_model(const reader *r, pf_device *d) {
  d->tensor_W = fmax(0.0, (0.97 * d->tdp_W - d->context_W) / d->gemm_eff);
  d->vector_W = 0.9 * d->tensor_W;
  d->hbm_W = 0.39 * d->tdp_W;
  TRY(get_qty_in(r, "power.tensor", PF_UNIT_POWER, &d->tensor_W, 0, 0, false, 5000, NULL));
  TRY(get_qty_in(r, "power.vector", PF_UNIT_POWER, &d->vector_W, 0, 0, false, 5000, NULL));
  TRY(get_qty_in(r, "power.hbm", PF_UNIT_POWER, &d->hbm_W, 0, 0, false, 5000, NULL));
  TRY(get_qty_in(r, "power.package", PF_UNIT_POWER, &d->package_W, 0, 0, false, 3000, NULL));
  d->cap_W = d->tdp_W;
  TRY(get_qty_in(r, "power.cap", PF_UNIT_POWER, &d->cap_W, 0, 0, true, 3000, "a device draws less than 3 kW"));
  TRY(get_num_in(r, "power.voltage_floor", &d->v_floor, 0, 0, true, 1.0, "a share of the full-clock voltage"));
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
  TRY(get_num_in(r, "node.device_override.efficiency.gemm", &d->gemm_eff, 0, 0, true, 1.0, NULL));
  TRY(get_num_in(r, "node.device_override.efficiency.hbm", &d->hbm_eff, 0, 0, true, 1.05, NULL));
  TRY(get_qty_in(r, "node.device_override.power.tdp", PF_UNIT_POWER, &d->tdp_W, 0, 0, true, 3000, NULL));
  if (d->tdp_W != tdp0 && cap0 == tdp0) d->cap_W = d->tdp_W; /* the cap followed the tdp: it still does */
  static const char *const keys[] = {"idle", "context", "comm", "tensor", "vector", "hbm", "package", "cap"};
  double *dst[] = {&d->idle_W, &d->context_W, &d->comm_W, &d->tensor_W, &d->vector_W, &d->hbm_W, &d->package_W,
                   &d->cap_W};
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
