/* fuzz_calibration.c - calibration JSON: load and overlay any bytes without crashing. */
#include "fuzz.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pf_fuzz_overlay(data, size, "mn5-acc");
  return 0;
}
