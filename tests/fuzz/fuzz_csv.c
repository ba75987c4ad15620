/* fuzz_csv.c - the validation CSV parser on any bytes. */
#include "fuzz.h"
#include "study/study.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pf_csv c;
  if (pf_csv_parse((const char *)data, size, "fuzz.csv", &c) == 0) pf_csv_free(&c);
  return 0;
}
