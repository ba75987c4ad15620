/* fuzz_validate.c - the rows of a validation CSV (`preflight validate RUNS.csv`) through the streaming
 * reader the CLI uses: header, then every row until the end or the first malformed one. */
#include "fuzz.h"
#include "study/study.h"

#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = pf_fuzz_file(data, size, ".csv");
  pf_vreader *r;
  if (!path || pf_vreader_open(path, &r) < 0) return 0;
  pf_vrow *row = calloc(1, sizeof *row);
  while (row && pf_vreader_next(r, row) > 0) {}
  free(row);
  pf_vreader_close(r);
  return 0;
}
