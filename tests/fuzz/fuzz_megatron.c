/* fuzz_megatron.c - the Megatron-LM log parser on any bytes. */
#include "fuzz.h"
#include "study/study.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  pf_megatron_log l;
  if (pf_megatron_parse((const char *)data, size, "fuzz.log", &l) == 0) pf_megatron_free(&l);
  return 0;
}
