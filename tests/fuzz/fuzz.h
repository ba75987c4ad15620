/* fuzz.h - the fuzz targets' common entry point (libFuzzer's signature) and a
 * helper to hand a parser that reads files a file with the fuzzed bytes. */
#ifndef PF_FUZZ_H
#define PF_FUZZ_H
#include <stddef.h>
#include <stdint.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Write data to a private temporary file named with `suffix`; returns its path
 * (static buffer) or NULL. */
const char *pf_fuzz_file(const uint8_t *data, size_t size, const char *suffix);
/* The same for a second file at once (another path). */
const char *pf_fuzz_file2(const uint8_t *data, size_t size, const char *suffix);
/* A calibration overlay (calibration or fit JSON): the bytes loaded with the loader the CLI calls, then
 * applied to a copy of machine `machine_id` (loaded once; needs PREFLIGHT_MACHINES). */
void pf_fuzz_overlay(const uint8_t *data, size_t size, const char *machine_id);
#endif
