/* driver.c - replay driver for the fuzz targets when libFuzzer is not used.
 *
 * For each seed file given on the command line it runs the target on the seed
 * and on PF_FUZZ_RUNS (default 400) mutations of it: bit flips, random bytes,
 * insertions of tokens that parsers care about, deletions, duplications and
 * truncations, drawn from a xorshift generator with a fixed seed (printed), so
 * every run is the same and a failure can be replayed.  Built with the
 * sanitizers, this turns every target into a deterministic regression test;
 * built with clang's -fsanitize=fuzzer (cmake -DPF_FUZZ=ON) the targets run
 * under libFuzzer instead and this file is not linked.
 */
#include "fuzz.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static unsigned long long state;
static unsigned long long next(void) {
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return state;
}

static const char *tokens[] = {"\"", "=", ";", "{", "}", "[", "]", "(", ")", ",", "\n", "\r\n", ":", "#",
                               "e999", "-1", "0", "nan", "inf", "1e308", "\xc2\xb5", " GB/s", " TFLOPS",
                               "\"schema_version\": 1", "iteration", "|", "elapsed time per iteration (ms):",
                               "........", "\\", "\t", "null", "true", "-", "9999999999999999999"};
#define NTOK (sizeof tokens / sizeof tokens[0])

static size_t mutate(unsigned char *b, size_t n, size_t cap) {
  int kind = (int)(next() % 7);
  size_t at = n ? (size_t)(next() % n) : 0;
  switch (kind) {
  case 0: if (n) b[at] ^= (unsigned char)(1u << (next() % 8)); break;
  case 1: if (n) b[at] = (unsigned char)next(); break;
  case 2: { /* insert a token */
    const char *t = tokens[next() % NTOK];
    size_t k = strlen(t);
    if (n + k <= cap) { memmove(b + at + k, b + at, n - at); memcpy(b + at, t, k); n += k; }
    break;
  }
  case 3: { /* delete a range */
    size_t k = n ? (size_t)(next() % (n - at + 1)) % 64 : 0;
    memmove(b + at, b + at + k, n - at - k);
    n -= k;
    break;
  }
  case 4: { /* duplicate a range */
    size_t k = n ? (size_t)(next() % (n - at + 1)) % 64 : 0;
    if (n + k <= cap) { memmove(b + at + k, b + at, n - at); n += k; }
    break;
  }
  case 5: n = at; break; /* truncate */
  default: if (n) b[at] = (unsigned char)"\0\xff\n\"0"[next() % 5]; break;
  }
  return n;
}

int main(int argc, char **argv) {
  const char *e = getenv("PF_FUZZ_RUNS");
  long runs = e ? strtol(e, NULL, 10) : 400;
  unsigned long long seed = 0x9E3779B97F4A7C15ull;
  printf("fuzz replay: seed 0x%llx, %ld mutations per seed file\n", seed, runs);
  int files = 0;
  long total = 0;
  for (int i = 1; i < argc; i++) {
    FILE *f = fopen(argv[i], "rb");
    if (!f) { fprintf(stderr, "%s: cannot open seed\n", argv[i]); return 2; }
    size_t cap = 1 << 20, n = 0;
    unsigned char *seedbuf = malloc(cap);
    n = fread(seedbuf, 1, cap, f);
    fclose(f);
    state = seed ^ (unsigned long long)(i * 7919);
    (void)LLVMFuzzerTestOneInput(seedbuf, n);
    for (long r = 0; r < runs; r++) {
      size_t mcap = n + 4096, m = n;
      unsigned char *b = malloc(mcap);
      memcpy(b, seedbuf, n);
      int steps = 1 + (int)(next() % 4);
      for (int s = 0; s < steps; s++) m = mutate(b, m, mcap);
      unsigned char *exact = malloc(m ? m : 1); /* exact size so ASan sees any over-read */
      memcpy(exact, b, m);
      (void)LLVMFuzzerTestOneInput(exact, m);
      free(exact);
      free(b);
      total++;
    }
    free(seedbuf);
    files++;
  }
  printf("%ld passed, 0 failed\n", total + files);
  return 0;
}
