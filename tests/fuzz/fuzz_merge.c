/* fuzz_merge.c - `preflight merge SHARD...` on fuzzed shards: the input is one shard, or two separated
 * by a form feed (0x0c) line; the command runs as the CLI runs it (pf_cmd_merge), its result to /dev/null. */
#include "fuzz.h"
#include "cli/cli.h"

#include <stdio.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  static int quiet;
  if (!quiet) quiet = freopen("/dev/null", "w", stdout) ? 1 : -1;
  const uint8_t *ff = memchr(data, '\f', size);
  size_t n1 = ff ? (size_t)(ff - data) : size;
  char p1[256], p2[256];
  const char *a = pf_fuzz_file(data, n1, ".json");
  if (!a) return 0;
  snprintf(p1, sizeof p1, "%s", a);
  char *argv[4] = {p1, NULL, NULL, NULL};
  int argc = 1;
  if (ff) {
    const char *b = pf_fuzz_file2(ff + 1, size - n1 - 1, ".json");
    if (!b) return 0;
    snprintf(p2, sizeof p2, "%s", b);
    argv[argc++] = p2;
  }
  (void)pf_cmd_merge(argc, argv);
  return 0;
}
