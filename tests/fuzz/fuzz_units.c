/* fuzz_units.c - the quantity parser never crashes and accepts only finite values. */
#include "fuzz.h"
#include "core/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  char *s = malloc(size + 1);
  if (!s) return 0;
  memcpy(s, data, size);
  s[size] = '\0';
  for (int k = PF_UNIT_NONE; k <= PF_UNIT_FREQUENCY; k++) {
    double v = 0;
    if (pf_units_parse(s, (pf_unit_kind)k, &v) == 0 && !isfinite(v)) abort();
  }
  free(s);
  return 0;
}
