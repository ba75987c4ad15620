/* datasheet.c - curated dense peaks of the accelerators preflight targets.
 *
 * Section 2.6 of shared/research/energy-and-calibration.md: theoretical peaks
 * derived from driver queries (SPs per SM, bus width) have been wrong
 * (mixbench#47, B200 bus width), so calibrate keeps its own table and prints
 * both measured and datasheet values.  Values are the vendors' dense (no
 * sparsity) numbers per logical device (per GCD for MI250X/MI250, whose
 * datasheet quotes the two-GCD package; halved here), at boost clock:
 * NVIDIA A100 and H100 datasheets/whitepapers, GH200 (H100 96 GB HBM3 4 TB/s,
 * 144 GB HBM3e 4.9 TB/s), AMD Instinct MI250X/MI250/MI210/MI300A datasheets.
 * fp32 vector on CDNA is the packed-FP32 rate (the kernels use packed float2).
 * ROCm names both CDNA2 OAMs "AMD Instinct MI250X/MI250" (rocminfo's marketing
 * name, ROCm/rocm_smi_lib#160), so their CU count tells them apart: 110 a GCD
 * on the MI250X, 104 on the MI250 (AMD's datasheets: 220 and 208 CUs an OAM);
 * the name alone picks MI250X before MI250 as before.
 * Used only for the sanity band [0.5, 1.05] and the fraction-of-datasheet
 * field; the simulator takes its peaks from the device files in machines/devices/.
 */
#include "pfcal.h"

#include <ctype.h>
#include <string.h>

#define T 1e12
#define GB 1e9

/* Order matters: the first entry whose substrings all appear wins. Precision
 * order: fp64, fp32, tf32, fp16, bf16, fp8. */
/* clang-format off */
static const pfcal_datasheet table[] = {
  /* match              mem range (B)      label                        vector fp64..fp8                              tensor fp64..fp8                                                  HBM B/s, CUs, dies */
  {{"gh200"},          0, 110 * GB,        "GH200 (H100 96 GB HBM3)",   {33.5 * T, 66.9 * T, 0, 133.8 * T, 0, 0},   {66.9 * T, 0, 494.7 * T, 989.4 * T, 989.4 * T, 1978.9 * T},   4.0e12, 0, 0},
  {{"gh200"},          110 * GB, 0,        "GH200 (H100 144 GB HBM3e)", {33.5 * T, 66.9 * T, 0, 133.8 * T, 0, 0},   {66.9 * T, 0, 494.7 * T, 989.4 * T, 989.4 * T, 1978.9 * T},   4.9e12, 0, 0},
  {{"h100", "pcie"},   0, 0,               "H100 PCIe",                 {25.6 * T, 51.2 * T, 0, 0, 0, 0},           {51.2 * T, 0, 378 * T, 756 * T, 756 * T, 1513 * T},           2.0e12, 0, 0},
  {{"h100"},           0, 0,               "H100 SXM5",                 {33.5 * T, 66.9 * T, 0, 133.8 * T, 0, 0},   {66.9 * T, 0, 494.7 * T, 989.4 * T, 989.4 * T, 1978.9 * T},   3.35e12, 0, 0},
  {{"h200"},           0, 0,               "H200 SXM",                  {33.5 * T, 66.9 * T, 0, 133.8 * T, 0, 0},   {66.9 * T, 0, 494.7 * T, 989.4 * T, 989.4 * T, 1978.9 * T},   4.8e12, 0, 0},
  {{"a100", "pcie"},   60 * GB, 0,         "A100 PCIe 80 GB",           {9.7 * T, 19.5 * T, 0, 78 * T, 0, 0},       {19.5 * T, 0, 156 * T, 312 * T, 312 * T, 0},                  1.935e12, 0, 0},
  {{"a100"},           60 * GB, 0,         "A100 SXM4 80 GB",           {9.7 * T, 19.5 * T, 0, 78 * T, 0, 0},       {19.5 * T, 0, 156 * T, 312 * T, 312 * T, 0},                  2.039e12, 0, 0},
  {{"a100"},           0, 60 * GB,         "A100 40 GB",                {9.7 * T, 19.5 * T, 0, 78 * T, 0, 0},       {19.5 * T, 0, 156 * T, 312 * T, 312 * T, 0},                  1.555e12, 0, 0},
  {{"mi250"},          0, 0,               "MI250X (one GCD)",          {23.95 * T, 47.9 * T, 0, 0, 0, 0},          {47.9 * T, 47.9 * T, 0, 191.5 * T, 191.5 * T, 0},             1.6384e12, 110, 2},
  {{"mi250"},          0, 0,               "MI250 (one GCD)",           {22.65 * T, 45.3 * T, 0, 0, 0, 0},          {45.3 * T, 45.3 * T, 0, 181.0 * T, 181.0 * T, 0},             1.6384e12, 104, 2},
  {{"mi250x"},         0, 0,               "MI250X (one GCD)",          {23.95 * T, 47.9 * T, 0, 0, 0, 0},          {47.9 * T, 47.9 * T, 0, 191.5 * T, 191.5 * T, 0},             1.6384e12, 0, 2},
  {{"mi250"},          0, 0,               "MI250 (one GCD)",           {22.65 * T, 45.3 * T, 0, 0, 0, 0},          {45.3 * T, 45.3 * T, 0, 181.0 * T, 181.0 * T, 0},             1.6384e12, 0, 2},
  {{"mi210"},          0, 0,               "MI210",                     {22.6 * T, 45.3 * T, 0, 0, 0, 0},           {45.3 * T, 45.3 * T, 0, 181.0 * T, 181.0 * T, 0},             1.6384e12, 0, 0},
  {{"mi300a"},         0, 0,               "MI300A",                    {61.3 * T, 122.6 * T, 0, 0, 0, 0},          {122.6 * T, 122.6 * T, 490.3 * T, 980.6 * T, 980.6 * T, 1961.2 * T}, 5.3e12, 0, 0},
};
/* clang-format on */

const pfcal_datasheet *pfcal_datasheet_find(const char *device_name, double memory_B, int units) {
  if (!device_name) return NULL;
  char low[PF_NAME_MAX];
  size_t n = strlen(device_name);
  if (n >= sizeof low) n = sizeof low - 1;
  for (size_t i = 0; i < n; i++)
    low[i] = (char)tolower((unsigned char)device_name[i]);
  low[n] = '\0';
  for (size_t e = 0; e < sizeof table / sizeof table[0]; e++) {
    const pfcal_datasheet *d = &table[e];
    bool all = true;
    for (int k = 0; k < 4 && d->match[k]; k++)
      if (!strstr(low, d->match[k])) all = false;
    if (!all) continue;
    if (d->mem_lo_B > 0 && memory_B > 0 && memory_B < d->mem_lo_B) continue;
    if (d->mem_hi_B > 0 && memory_B > 0 && memory_B >= d->mem_hi_B) continue;
    if (d->units > 0 && units != d->units) continue;
    return d;
  }
  return NULL;
}
