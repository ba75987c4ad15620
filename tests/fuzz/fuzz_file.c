/* fuzz_file.c - what the fuzz targets share: temporary files for the parsers that read paths, and the
 * calibration overlay that calibration and fit files go through. */
#include "fuzz.h"
#include "machine/machine.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* slot 0 and 1: two files at once (merge reads two shards) */
static const char *write_slot(int slot, const uint8_t *data, size_t size, const char *suffix) {
  static char path[2][256];
  const char *t = getenv("TMPDIR");
  snprintf(path[slot], sizeof path[slot], "%s/pf-fuzz-%ld-%d%s", t && *t ? t : "/tmp", (long)getpid(), slot, suffix);
  FILE *f = fopen(path[slot], "wb");
  if (!f) return NULL;
  if (size && fwrite(data, 1, size, f) != size) { fclose(f); return NULL; }
  if (fclose(f) != 0) return NULL;
  return path[slot];
}

const char *pf_fuzz_file(const uint8_t *data, size_t size, const char *suffix) {
  return write_slot(0, data, size, suffix);
}

const char *pf_fuzz_file2(const uint8_t *data, size_t size, const char *suffix) {
  return write_slot(1, data, size, suffix);
}

void pf_fuzz_overlay(const uint8_t *data, size_t size, const char *machine_id) {
  static pf_machine base, m;
  static pf_calibration c;
  static int have;
  if (!have) have = pf_machine_load(machine_id, &base) == 0 ? 1 : -1;
  const char *path = pf_fuzz_file(data, size, ".json");
  if (path && pf_calibration_load(path, &c) == 0 && have == 1) {
    m = base;
    (void)pf_calibration_apply(&c, &m);
  }
}
