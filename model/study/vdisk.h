/* vdisk.h - the predictions of a validation file's rows kept on disk between
 * runs, for the pool behind the prediction intervals (intpool.c): every
 * predict, sweep and plan that prints a range predicts the same rows again,
 * and the large ones (hundreds of pipeline stages x microbatches) cost
 * seconds.  Internal to the study module.
 *
 * Content-addressed: a file's entry is named by a 64-bit FNV-1a hash of
 * everything its predictions depend on (the program's GNU build id, else its
 * bytes; the SimGrid library's version; every file of the machine folder; the
 * CSV itself and any file a row names by path; the validation options), so a
 * rebuilt program, an edited machine or row never reads an old entry.  Values
 * are stored as hexadecimal floats: a hit gives the same bytes of output as a
 * miss.  The folder is $PREFLIGHT_CACHE, else $XDG_CACHE_HOME/preflight, else
 * $HOME/.cache/preflight; PREFLIGHT_CACHE=off (or no such folder that can be
 * made) turns it off.  Every failure here only costs time: nothing is reported.
 * docs/validation.md, "Prediction intervals".
 */
#ifndef PREFLIGHT_VDISK_H
#define PREFLIGHT_VDISK_H

#include "validate.h"

#include <stdbool.h>
#include <stdint.h>

/* The key of the CSV at path read into s under options vo; false when this file is not cached (the cache
 * is off, a file it depends on cannot be read, or a test hook is set). */
bool pf_vdisk_key(const char *path, const pf_vset *s, const pf_validate_opts *vo, uint64_t *key);
/* Fill the results (status, fail_code, reason, predicted, error) of the rows whose line the entry holds and
 * set done[i] for them; rows and done are parallel arrays of n.  Returns how many were filled (0 on a miss
 * or an unreadable entry). */
int pf_vdisk_load(uint64_t key, pf_vrow *const *rows, bool *done, int n);
/* Write the entry: the rows with done[i] set, replacing what was there (atomically). */
void pf_vdisk_store(uint64_t key, pf_vrow *const *rows, const bool *done, int n);

#endif
