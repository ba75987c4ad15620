/* fuzz_nccltests.c - nccl-tests / rccl-tests output (`preflight validate OUT.txt --machine M`): the
 * reader the CLI calls, with the node and GPU counts taken from the file as the CLI does by default. */
#include "fuzz.h"
#include "study/study.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = pf_fuzz_file(data, size, ".txt");
  pf_cvset s;
  if (path && pf_collval_read_nccltests(path, "mn5-acc", 0, 0, &s) == 0) pf_cvset_free(&s);
  return 0;
}
