/* fuzz_device.c - the device-file loader (machines/devices/ID.cfg, what `device = "ID"` and --device read)
 * rejects or loads any bytes, never crashes. */
#include "fuzz.h"
#include "machine/machine.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *path = pf_fuzz_file(data, size, ".cfg");
  static pf_device d;
  if (path) (void)pf_device_load(path, &d);
  return 0;
}
