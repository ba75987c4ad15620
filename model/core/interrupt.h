/* interrupt.h - what SIGINT and SIGTERM do: stop the workers, remove the
 * temporary files, leave every output file as it was, exit 130 / 143.
 *
 * Each process keeps two small registries: the temporary files it has created
 * and not yet renamed or removed (file.c), and the worker processes it has
 * forked and not yet reaped (workers.c).  pf_interrupt_install(), called by
 * main() only, sets handlers for SIGINT, SIGTERM and SIGHUP that send SIGTERM
 * to the registered workers, wait for them (at most half a second, then
 * SIGKILL), remove the registered files and _exit(128 + signal), the shell's
 * convention (130 for ^C, 143 for SIGTERM).  Workers run the same handler
 * with registries of their own, so a worker that is itself running a
 * simulation child stops it the same way.  Everything the handler calls is
 * async-signal-safe (kill, waitpid, nanosleep, unlink, write, _exit).
 *
 * A library user that does not call pf_interrupt_install() keeps its own
 * signal dispositions; the registries are then only bookkeeping.
 */
#ifndef PREFLIGHT_INTERRUPT_H
#define PREFLIGHT_INTERRUPT_H

#include <sys/types.h>

/* Install the handlers (main only).  Returns 0 or PF_EIO. */
int pf_interrupt_install(void);

/* A temporary file to remove if the process is interrupted.  PF_EIO when the
 * registry (16 files) is full: the caller then must not create the file. */
int pf_interrupt_add_file(const char *path);
void pf_interrupt_remove_file(const char *path);

/* A forked worker to stop if the process is interrupted (256 at most). */
int pf_interrupt_add_child(pid_t pid);
void pf_interrupt_remove_child(pid_t pid);

/* In a freshly forked worker, before anything else: forget the parent's
 * files and workers, leave the terminal's process group (a ^C reaches the
 * main process, which stops its workers), and ask the kernel for SIGTERM when
 * the parent dies (Linux), so that no worker outlives a killed parent. */
void pf_interrupt_child_setup(void);

/* The progress bar (progress.c) says when a partial line is on stderr, so a
 * stop signal erases it before exiting. */
void pf_interrupt_line_drawn(int drawn);

#endif
