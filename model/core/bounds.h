/* bounds.h - the one table of plausible values (issue 30): every physical
 * quantity a file or an option gives has a lower and an upper bound with the
 * reason, and every reader checks its values against this table, so a missing
 * unit prefix ("989.4 FLOPS"), a denormal rate ("1e-307 Gbps") or an
 * efficiency of 1e-310 is refused with the file, line and field instead of
 * predicting an absurd number.  The table and its reasons: bounds.c, listed
 * in docs/bounds.md.
 *
 * A quantity of a kind (PF_UNIT_*) has the kind's bounds unless a named bound
 * is more specific (an efficiency, a calibrated rate against its datasheet
 * figure, a link rate).  Zero is not in any bound: a reader that takes zero
 * as "none" checks x > 0 first.
 */
#ifndef PREFLIGHT_BOUNDS_H
#define PREFLIGHT_BOUNDS_H

#include "units.h"

#include <stdbool.h>
#include <stddef.h>

typedef enum pf_plaus_id {
  PF_PLAUS_BYTES,       /* a size: memory, cache, message, sample */
  PF_PLAUS_BANDWIDTH,   /* a memory, fabric, host-link or input bandwidth */
  PF_PLAUS_FLOPS,       /* a compute rate: peak, vector, calibrated or fitted */
  PF_PLAUS_POWER,       /* a device's, node's, switch's or host's draw */
  PF_PLAUS_TIME,        /* a latency or per-call cost (s) */
  PF_PLAUS_ENERGY,      /* energy (J) */
  PF_PLAUS_FREQUENCY,   /* a clock (Hz) */
  PF_PLAUS_LINK_RATE,   /* a NIC or network link rate (B/s) */
  PF_PLAUS_EFFICIENCY,  /* a fraction of a peak: GEMM, HBM, attention, collective, fitted */
  PF_PLAUS_RATE_RATIO,  /* a calibrated or fitted rate / the datasheet figure in the same device file */
  PF_PLAUS_OVERHEAD,    /* a fitted per-step or per-call overhead (s) */
  PF_PLAUS_FIT_FACTOR,  /* a fitted factor on a device's achievable rates (fit.compute_eff, fit.comm_eff) */
  /* measured values of a validation row (study/vmetric.c) */
  PF_PLAUS_ITERATION,   /* a measured training iteration (s); time_s per iteration */
  PF_PLAUS_GPU_RATE,    /* achieved model FLOP/s per GPU (tflops_per_gpu) */
  PF_PLAUS_ITEM_RATE,   /* tokens or samples per second of a job */
  PF_PLAUS_SCALING,     /* a scaling efficiency (fraction) */
  PF_PLAUS_BATCH_RATIO, /* samples/s at one batch over samples/s at another */
  PF_PLAUS_DEVICE_POWER, /* a metered mean power per device of the scope (W) */
  PF_PLAUS_MEASURED_ENERGY, /* a metered energy (J) */
  /* the totals of a layer-list model (workload/layers.c) */
  PF_PLAUS_PARAMS,      /* trainable parameters */
  PF_PLAUS_SAMPLE_FLOPS, /* FLOPs of one training step per sample */
  PF_PLAUS_SAMPLE_ACT,  /* activation bytes kept per sample */
  PF_PLAUS_TENSOR,      /* elements of one layer's output per sample */
  PF_PLAUS_COUNT
} pf_plaus_id;

typedef struct pf_plaus {
  const char *name;  /* "efficiency" */
  pf_unit_kind unit; /* the kind the limits are in (SI); PF_UNIT_NONE: a plain number */
  double lo, hi;     /* lo < x (lo_open) or lo <= x; x <= hi */
  bool lo_open;
  const char *why;   /* the reason, with its source */
} pf_plaus;

const pf_plaus *pf_plaus_get(pf_plaus_id id);
/* The bound of a quantity of a kind (PF_UNIT_BYTES -> PF_PLAUS_BYTES ...); NULL for PF_UNIT_NONE. */
const pf_plaus *pf_plaus_of_unit(pf_unit_kind kind);
/* x within b: finite, lo < x (or lo <= x), x <= hi. */
bool pf_plaus_ok(const pf_plaus *b, double x);
/* Why x is refused, into why: "1e-307 is below 1e+09 FLOP/s (the bound of compute rate: REASON)"; returns why. */
const char *pf_plaus_why(const pf_plaus *b, double x, char *why, size_t n);
/* pf_plaus_ok, else PF_EPARSE with "WHERE: " and pf_plaus_why (WHERE is file:line: field or --option). */
int pf_plaus_check(const pf_plaus *b, double x, const char *where);

#endif
