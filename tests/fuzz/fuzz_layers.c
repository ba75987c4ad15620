/* fuzz_layers.c - a layer-list model file (scenarios/models/NAME.cfg, `--model FILE.cfg`) through the
 * workload lookup the CLI calls, then the workload check every command runs on it. */
#include "fuzz.h"
#include "workload/workload.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = pf_fuzz_file(data, size, ".cfg");
  static pf_workload w;
  if (path && pf_workload_get(path, &w) == 0) (void)pf_workload_check(&w);
  return 0;
}
