/* fuzz_fit.c - a fit file (`validate --fit -o FIT.json`, read back with --calibration FIT.json): the
 * calibration loader the CLI calls, then its overlay on a machine, seeded with fit files. */
#include "fuzz.h"
#include "machine/machine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static pf_machine base;
  static int have;
  if (!have) have = pf_machine_load("lumi-g", &base) == 0 ? 1 : -1; /* needs PREFLIGHT_MACHINES */
  const char *path = pf_fuzz_file(data, size, ".json");
  static pf_calibration c;
  static pf_machine m;
  if (path && pf_calibration_load(path, &c) == 0 && have == 1) {
    m = base;
    (void)pf_calibration_apply(&c, &m);
  }
  return 0;
}
