/* calibration_int.h - internal: what the calibration loader (calibration.c)
 * and the overlay onto a machine (calapply.c) share. */
#ifndef PREFLIGHT_CALIBRATION_INT_H
#define PREFLIGHT_CALIBRATION_INT_H

#include <stddef.h>
#include <stdint.h>

/* FNV-1a of n bytes: the key of a parsed file's content (calibration.c's
 * cache) and of a GEMM table built from it (calapply.c). */
static inline uint64_t pf_cal_fnv1a(const char *b, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull;
  for (size_t i = 0; i < n; i++) h = (h ^ (unsigned char)b[i]) * 0x100000001b3ull;
  return h;
}

#endif
