/* fuzz_scenario.c - a scenario file (scenarios/NAME.cfg, the positional argument of predict, sweep, tune,
 * plan) through the CLI's own reader: the options it sets, then the scenario they resolve to (machine,
 * model, plan). */
#include "fuzz.h"
#include "cli/options.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = pf_fuzz_file(data, size, ".cfg");
  static pf_scenario sc;
  if (path) (void)pf_opts_scenario_file(path, &sc);
  return 0;
}
