/* fuzz_file.c - temporary files for the fuzz targets whose parsers read paths. */
#include "fuzz.h"

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
