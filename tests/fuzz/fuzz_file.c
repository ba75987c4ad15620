/* fuzz_file.c - temporary files for the fuzz targets whose parsers read paths. */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

const char *pf_fuzz_file(const uint8_t *data, size_t size, const char *suffix) {
  static char path[256];
  static int made;
  if (!made) {
    const char *t = getenv("TMPDIR");
    snprintf(path, sizeof path, "%s/pf-fuzz-%ld%s", t && *t ? t : "/tmp", (long)getpid(), suffix);
    made = 1;
  }
  FILE *f = fopen(path, "wb");
  if (!f) return NULL;
  if (size && fwrite(data, 1, size, f) != size) { fclose(f); return NULL; }
  if (fclose(f) != 0) return NULL;
  return path;
}
