/* error.h - one table of error codes with names, messages and process exit codes.
 *
 * Functions in libpreflight return 0 on success or a negative PF_E* code.  The
 * human-readable detail (file, line, field, what would be valid) is kept in a
 * per-thread buffer set by pf_error_set() where the error is detected, and read
 * by the caller with pf_error_detail().  Only main() turns codes into exits
 * (pf_error_exit_code()), following libuv's UV_ERRNO_MAP idea.
 */
#ifndef PREFLIGHT_ERROR_H
#define PREFLIGHT_ERROR_H

#include <stddef.h>

/* X(name, value, exit code, message) */
#define PF_ERRNO_MAP(X)                                                              \
  X(EINVAL, -1, 2, "invalid argument or option")                                     \
  X(ENOENT, -2, 2, "unknown id or missing file")                                     \
  X(EPARSE, -3, 2, "malformed input file")                                           \
  X(EUNIT, -4, 2, "malformed quantity or unit")                                      \
  X(EPLAN, -5, 1, "invalid parallel plan")                                           \
  X(ENOFIT, -6, 1, "does not fit in device memory")                                  \
  X(ENODEV, -7, 3, "calibration back-end unavailable")                               \
  X(ENOMEM, -8, 2, "out of memory")                                                  \
  X(EIO, -9, 2, "input/output error")                                                \
  X(ESIM, -10, 2, "simulation engine error")

typedef enum {
  PF_OK = 0,
#define PF_X_ENUM(name, val, exit_code, msg) PF_##name = val,
  PF_ERRNO_MAP(PF_X_ENUM)
#undef PF_X_ENUM
} pf_err;

/* Static strings: the code's short name ("EPARSE") and generic message. */
const char *pf_err_name(int code);
const char *pf_strerror(int code);
/* Exit status main() should use for this code (0, 1, 2 or 3). */
int pf_error_exit_code(int code);
/* The run itself failed (a simulation engine failure, a killed worker, out of memory, an I/O error), as
 * opposed to a question with an answer (a plan that does not fit) or a bad input: a loop over many
 * predictions (sweep, tune, plan, validate) stops with it (exit 2), never shows it as a row. */
int pf_error_is_failure(int code);

/* Record a detailed message for the current thread; returns code so callers can
 * write `return pf_error_set(PF_EPARSE, "%s:%d: ...", file, line);`. */
int pf_error_set(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Borrowed, valid until the next pf_error_set() on this thread. "" if none. */
const char *pf_error_detail(void);
void pf_error_clear(void);

/* Warnings the library finds (an unknown key under --lenient, a calibration
 * that looks like another device): printed to stderr as "preflight: warning: ...". */
void pf_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The candidate closest to word by edit distance, when close enough to be a
 * likely typo (at most 1 edit for words up to 4 letters, 2 up to 8, then a
 * third of the length); NULL otherwise.  For "did you mean" messages. */
const char *pf_closest(const char *word, const char *const *candidates, int n);

/* The candidates nearest to word, for "did you mean" messages about ids and
 * commands: those that word is a prefix of ("lumi" for "lumi-g"), else those
 * at the smallest edit distance within pf_closest's limit ("sweeep" for
 * "sweep"); at most four, in the candidates' order.  Writes "did you mean
 * lumi-g?" or "did you mean a, b or c?" into buf and returns how many were
 * named; 0 (buf "") when none is near. */
int pf_suggest(const char *word, const char *const *candidates, int n, char *buf, size_t len);

#endif
