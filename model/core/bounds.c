/* bounds.c - the one table of plausible values (see bounds.h), each bound with
 * its reason.  The upper bounds of the kinds are a thousand times the largest
 * hardware built (a GB200 NVL72 rack: 1.4 EFLOP/s FP4, 576 TB/s HBM, NVIDIA
 * GB200 NVL72 datasheet 2024; 800 Gb/s NICs; a 1.2 kW device), so a wrong
 * prefix ("200 Pbps") is caught; the lower bounds sit well below the smallest
 * shipped part, so a missing prefix ("989.4 FLOPS") or a denormal is caught.
 */
#include "bounds.h"

#include "error.h"

#include <math.h>
#include <stdio.h>

static const pf_plaus table[PF_PLAUS_COUNT] = {
  [PF_PLAUS_BYTES] = {"size", PF_UNIT_BYTES, 1, 1e18, false,
                      "1 B to 1 EB: nothing smaller than a byte moves; 1 EB is a thousand times a rack's HBM"},
  [PF_PLAUS_BANDWIDTH] = {"bandwidth", PF_UNIT_BANDWIDTH, 1.25e5, 1e16, false,
                          "1 Mb/s to 10 PB/s: 10BASE-T Ethernet (IEEE 802.3i, 1990) moved 10 Mb/s; 10 PB/s is "
                          "twenty times a GB200 NVL72 rack's 576 TB/s of HBM"},
  [PF_PLAUS_FLOPS] = {"compute rate", PF_UNIT_FLOPS, 1e9, 1e19, false,
                      "1 GFLOP/s to 10 EFLOP/s: the slowest shipped rate is the A2's fp64, 0.07 TFLOPS (NVIDIA A2 "
                      "datasheet), seventy times the floor; 10 EFLOP/s is seven GB200 NVL72 racks at FP4"},
  [PF_PLAUS_POWER] = {"power", PF_UNIT_POWER, 1e-3, 1e7, false,
                      "1 mW to 10 MW: below a milliwatt no powered part of a node draws; 10 MW is a whole machine"},
  [PF_PLAUS_TIME] = {"time", PF_UNIT_TIME, 1e-12, 3600, false,
                     "1 ps to 1 h: a GPU clock cycle is about 0.5 ns; a latency or per-call cost above an hour is "
                     "a wrong unit"},
  [PF_PLAUS_ENERGY] = {"energy", PF_UNIT_ENERGY, 1e-12, 1e15, false, "1 pJ to 1 PJ (about 280 GWh)"},
  [PF_PLAUS_FREQUENCY] = {"frequency", PF_UNIT_FREQUENCY, 1e6, 1e12, false,
                          "1 MHz to 1 THz: accelerator clocks are 1-3 GHz"},
  [PF_PLAUS_LINK_RATE] = {"link rate", PF_UNIT_BANDWIDTH, 1.25e5, 1e16, false,
                          "above 1 Mb/s: no network slower than 10BASE-T Ethernet (10 Mb/s, IEEE 802.3i) carries a "
                          "training job; 1e-307 Gbps would make every transfer free or infinite"},
  [PF_PLAUS_EFFICIENCY] = {"efficiency", PF_UNIT_NONE, 0.01, 1, true,
                           "a fraction of a peak in (0.01, 1]: the weakest measured library kernel on a shipped "
                           "device reaches tens of percent (docs/model.md); above 1 is beyond the peak"},
  [PF_PLAUS_RATE_RATIO] = {"rate against the datasheet", PF_UNIT_NONE, 0.1, 10, false,
                           "a calibrated or fitted rate within 0.1x-10x of the datasheet figure in the same device "
                           "file: a wrong prefix or a broken measurement is further off"},
  [PF_PLAUS_OVERHEAD] = {"overhead", PF_UNIT_TIME, 0, 60, false,
                         "0 to 60 s: a fitted per-step or per-call overhead longer than a minute is not an overhead"},
  [PF_PLAUS_FIT_FACTOR] = {"fitted factor", PF_UNIT_NONE, 0.01, 10, false,
                           "a fitted factor on a device's achievable rates in [0.01, 10]: the fit itself keeps "
                           "compute_eff in [0.05, 4] and comm_eff in [0.02, 4] (study/fit_lm.c); a rate a "
                           "hundredth of the datasheet's is a broken measurement"},
  [PF_PLAUS_ITERATION] = {"measured iteration", PF_UNIT_TIME, 1e-6, 604800, false,
                          "1 us to 1 week: a training step launches kernels of microseconds each; a step of a "
                          "week is a wrong unit (ms read as s) or a whole run"},
  [PF_PLAUS_GPU_RATE] = {"achieved rate per GPU", PF_UNIT_FLOPS, 1e9, 1e16, false,
                         "1 GFLOP/s to 10 PFLOP/s: the compute-rate floor; above the densest peak of any shipped "
                         "device, the B200's 4.5 PFLOP/s FP8 (NVIDIA HGX B200 datasheet, devices/b200-180.cfg)"},
  [PF_PLAUS_ITEM_RATE] = {"tokens or samples per second", PF_UNIT_NONE, 1.0 / 604800, 1e12, false,
                          "one per week (one sample in the longest plausible step) to 1e12/s: Llama 3's whole "
                          "15.6 T-token pretraining (Llama 3 Herd of Models, 2024) in 16 s"},
  [PF_PLAUS_SCALING] = {"scaling efficiency", PF_UNIT_NONE, 0.01, 2, false,
                        "a fraction in [0.01, 2]: below 1 % is a percentage written with unit fraction's scale "
                        "(0.95 with unit %), above 2 a percentage with unit fraction (95) or a swapped baseline"},
  [PF_PLAUS_BATCH_RATIO] = {"throughput ratio", PF_UNIT_NONE, 0.01, 100, false,
                            "samples/s at one batch over another within a hundredfold: the measured ratios "
                            "(MAELSTROM AP5) are 0.97-1.43; further is a swapped baseline or a wrong unit"},
  [PF_PLAUS_DEVICE_POWER] = {"mean power per device", PF_UNIT_POWER, 1, 5000, false,
                             "1 W to 5 kW per device of the metering scope: the shipped devices idle at 8-137 W; "
                             "5 kW is five times the largest TDP shipped (B200 1 kW), room for a node's CPUs, "
                             "memory and fans on node scopes"},
  [PF_PLAUS_MEASURED_ENERGY] = {"metered energy", PF_UNIT_ENERGY, 1e-6, 1e15, false,
                                "1 uJ (the least power, 1 W, over the shortest step, 1 us) to 1 PJ (a 30 MW "
                                "machine for a year is 0.95 PJ)"},
  [PF_PLAUS_PARAMS] = {"parameter count", PF_UNIT_NONE, 1, 1e15, false,
                       "1 to 1e15: over a thousand times the largest built-in model (DeepSeek-V3, 671e9); 1e15 "
                       "bf16 weights are 2 PB"},
  [PF_PLAUS_SAMPLE_FLOPS] = {"FLOPs per sample of a step", PF_UNIT_NONE, 1, 1e20, false,
                             "at most 1e20: one sample would keep a 989 TFLOP/s H100 busy for over a day "
                             "(GPT-3 175B at 2,048 tokens costs 2.2e15)"},
  [PF_PLAUS_SAMPLE_ACT] = {"activation bytes per sample", PF_UNIT_BYTES, 0, 1e13, false,
                           "at most 10 TB: more than the HBM of six 8-GPU B200 nodes (180 GB each) for one "
                           "sample"},
  [PF_PLAUS_TENSOR] = {"elements of a layer's input or output per sample", PF_UNIT_NONE, 1, 1099511627776.0, false,
                       "at most 2^40: a 4 TiB fp32 tensor for one sample, twenty times the largest shipped "
                       "device's memory (GB200, 186 GB)"},
};

const pf_plaus *pf_plaus_get(pf_plaus_id id) {
  return (id >= 0 && id < PF_PLAUS_COUNT) ? &table[id] : NULL;
}

const pf_plaus *pf_plaus_of_unit(pf_unit_kind kind) {
  switch (kind) {
  case PF_UNIT_BYTES: return &table[PF_PLAUS_BYTES];
  case PF_UNIT_BANDWIDTH: return &table[PF_PLAUS_BANDWIDTH];
  case PF_UNIT_FLOPS: return &table[PF_PLAUS_FLOPS];
  case PF_UNIT_POWER: return &table[PF_PLAUS_POWER];
  case PF_UNIT_TIME: return &table[PF_PLAUS_TIME];
  case PF_UNIT_ENERGY: return &table[PF_PLAUS_ENERGY];
  case PF_UNIT_FREQUENCY: return &table[PF_PLAUS_FREQUENCY];
  case PF_UNIT_NONE: break;
  }
  return NULL;
}

bool pf_plaus_ok(const pf_plaus *b, double x) {
  if (!b) return isfinite(x);
  return isfinite(x) && (b->lo_open ? x > b->lo : x >= b->lo) && x <= b->hi;
}

static const char *unit_of(const pf_plaus *b) {
  switch (b->unit) {
  case PF_UNIT_BYTES: return " B";
  case PF_UNIT_BANDWIDTH: return " B/s";
  case PF_UNIT_FLOPS: return " FLOP/s";
  case PF_UNIT_POWER: return " W";
  case PF_UNIT_TIME: return " s";
  case PF_UNIT_ENERGY: return " J";
  case PF_UNIT_FREQUENCY: return " Hz";
  case PF_UNIT_NONE: break;
  }
  return "";
}

const char *pf_plaus_why(const pf_plaus *b, double x, char *why, size_t n) {
  const char *u = unit_of(b);
  if (!isfinite(x)) snprintf(why, n, "%g is not a finite number", x);
  else if (b->lo_open ? x <= b->lo : x < b->lo)
    snprintf(why, n, "%g%s is %s %g%s, the least plausible %s (%s)", x, u, b->lo_open ? "at or below" : "below",
             b->lo, u, b->name, b->why);
  else
    snprintf(why, n, "%g%s is above %g%s, the largest plausible %s (%s)", x, u, b->hi, u, b->name, b->why);
  return why;
}

int pf_plaus_check(const pf_plaus *b, double x, const char *where) {
  if (pf_plaus_ok(b, x)) return 0;
  char why[512];
  return pf_error_set(PF_EPARSE, "%s: %s", where, pf_plaus_why(b, x, why, sizeof why));
}
