/* fuzz_machine.c - the machine-file loader rejects or loads any bytes, never crashes. */
#include "fuzz.h"
#include "machine/machine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = pf_fuzz_file(data, size, ".cfg");
  static pf_machine m;
  if (path) (void)pf_machine_load(path, &m);
  return 0;
}
