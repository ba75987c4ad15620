/* hash.h - FNV-1a, the content hash of the program's keys: a parsed calibration file and the GEMM table
 * built from it (machine/calibration.c, calapply.c), a validation file's on-disk predictions
 * (study/vdisk.c).  Byte by byte, so a key is the same on every host; chained by passing the previous value
 * as h (start from PF_FNV1A_OFFSET). */
#ifndef PREFLIGHT_HASH_H
#define PREFLIGHT_HASH_H

#include <stddef.h>
#include <stdint.h>

#define PF_FNV1A_OFFSET 0xcbf29ce484222325ull

static inline uint64_t pf_fnv1a(uint64_t h, const void *p, size_t n) {
  const unsigned char *b = (const unsigned char *)p; /* the cast: C++ translation units (calibrate/gpu) include it too */
  for (size_t i = 0; i < n; i++) h = (h ^ b[i]) * 0x100000001b3ull;
  return h;
}

#endif
