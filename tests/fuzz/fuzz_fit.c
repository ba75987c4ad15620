/* fuzz_fit.c - a fit file (`validate --fit -o FIT.json`, read back with --calibration FIT.json): the
 * calibration loader the CLI calls, then its overlay on a machine, seeded with fit files. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pf_fuzz_overlay(data, size, "lumi-g");
  return 0;
}
