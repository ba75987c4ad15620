/* workers.h - the one fork/pipe worker runner.
 *
 * SimGrid keeps its engine in global state, so every simulation runs in a
 * fork()ed process; batches of predictions (sweep, tune, compare, plan,
 * validate) run in forked workers over all cores.  Both go through
 * pf_workers_run(): item i runs in a child that calls work(ctx, i, fd) and
 * writes its result to the pipe fd; the parent calls collect(ctx, i, fd) to
 * read it, in input order of completion but into the caller's slot i, so the
 * output does not depend on the number of workers.  A worker that dies or
 * writes a short result is reported through failed(ctx, i, why).
 *
 * Workers are registered with interrupt.c: SIGINT / SIGTERM to the main
 * process stops them within half a second, and they die with their parent.
 * While items complete, the progress bar (progress.h) advances when the
 * caller asked for it.
 */
#ifndef PREFLIGHT_WORKERS_H
#define PREFLIGHT_WORKERS_H

#include <stdbool.h>
#include <stddef.h>

typedef struct pf_workers_spec {
  int n;                      /* items */
  int jobs;                   /* concurrent workers; <= 0: pf_workers_default_jobs() */
  /* in the child: compute item i and write its result to fd; nonzero = failure */
  int (*work)(void *ctx, int i, int fd);
  /* in the parent: read item i's result from fd (blocking reads are fine);
   * nonzero = short or malformed result */
  int (*collect)(void *ctx, int i, int fd);
  /* in the parent: item i has no result (the worker died, exited nonzero or
   * wrote a short result); why says which */
  void (*failed)(void *ctx, int i, const char *why);
  void *ctx;
  bool progress;              /* advance the progress bar by one per finished item */
} pf_workers_spec;

/* Run every item.  Returns 0 (per-item failures go to failed()) or PF_ESIM
 * when pipe or fork fails (items not started are reported through failed()). */
int pf_workers_run(const pf_workers_spec *spec);

/* $PREFLIGHT_JOBS (1..256) or the online CPUs, at most 64. */
int pf_workers_default_jobs(void);

/* Run exe with argv args (args[0] = exe, NULL-terminated), its standard output
 * captured into *out (NUL-terminated, at most about max_bytes; caller frees)
 * and its standard error passed through; SIGINT/SIGTERM stop it too
 * (interrupt.h).  Returns 0 with *status as waitpid() gives it and *read_rc
 * the capture's code (0, or PF_EIO / PF_ENOMEM naming `what`; *out is NULL
 * then); -1 when it could not be started (*spawn_err: the errno value), or a
 * PF_E* code when it could not be waited for. */
int pf_spawn_capture(const char *exe, char *const *args, const char *what, size_t max_bytes, char **out, size_t *len,
                     int *status, int *read_rc, int *spawn_err);

/* pf_write_all / pf_read_all (exactly n bytes through a pipe): file.h. */

#endif
