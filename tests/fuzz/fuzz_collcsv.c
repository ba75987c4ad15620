/* fuzz_collcsv.c - a collective CSV (`preflight validate collectives.csv`): the reader the CLI calls. */
#include "fuzz.h"
#include "study/study.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = pf_fuzz_file(data, size, ".csv");
  pf_cvset s;
  if (path && pf_collval_read_csv(path, &s) == 0) pf_cvset_free(&s);
  return 0;
}
