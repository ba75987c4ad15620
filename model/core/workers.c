/* workers.c - the one fork/pipe worker runner (see workers.h).
 *
 * The parent keeps at most `jobs` children; it polls their pipes (waking every
 * 200 ms to redraw the progress bar), collects a result as soon as its pipe
 * turns readable, reaps the child and starts the next item.  Children reset
 * the interrupt registries (interrupt.c), so a stop signal reaches every level
 * of workers, and leave with _exit() so no buffered output or atexit handler of
 * the parent runs twice.
 */
#include "workers.h"

#include "error.h"
#include "interrupt.h"
#include "file.h"
#include "progress.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAXJOBS 64

int pf_workers_default_jobs(void) {
  const char *e = getenv("PREFLIGHT_JOBS");
  if (e && *e) {
    char *end;
    long j = strtol(e, &end, 10);
    if (*end == '\0' && j >= 1 && j <= 256) return (int)(j > MAXJOBS ? MAXJOBS : j);
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n >= 1 ? (int)(n > MAXJOBS ? MAXJOBS : n) : 1;
}

typedef struct {
  pid_t pid; /* -1: free */
  int fd, item;
} slot;

/* Start item i in a child; fills s. */
static int spawn(const pf_workers_spec *sp, int i, slot *s) {
  int p[2];
  if (pipe(p) != 0) return pf_error_set(PF_ESIM, "pipe: %s", strerror(errno));
  fflush(stdout);
  fflush(stderr);
  pid_t c = fork();
  if (c < 0) {
    close(p[0]);
    close(p[1]);
    return pf_error_set(PF_ESIM, "fork: %s", strerror(errno));
  }
  if (c == 0) {
    pf_interrupt_child_setup();
    pf_progress_disable();
    close(p[0]);
    int rc = sp->work(sp->ctx, i, p[1]);
    close(p[1]);
    _exit(rc == 0 ? 0 : 1);
  }
  close(p[1]);
  if (pf_interrupt_add_child(c) < 0) { /* cannot be stopped on a signal: do not run it */
    close(p[0]);
    kill(c, SIGKILL);
    waitpid(c, NULL, 0);
    return PF_ESIM;
  }
  *s = (slot){c, p[0], i};
  return 0;
}

/* Collect slot s's result, reap the child and free the slot. */
static void finish(const pf_workers_spec *sp, slot *s) {
  int crc = sp->collect(sp->ctx, s->item, s->fd);
  close(s->fd);
  int status = 0;
  while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR) {}
  pf_interrupt_remove_child(s->pid);
  if (crc != 0 || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    char why[128];
    if (WIFSIGNALED(status)) snprintf(why, sizeof why, "worker killed by signal %d", WTERMSIG(status));
    else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
      snprintf(why, sizeof why, "worker exited with status %d", WEXITSTATUS(status));
    else snprintf(why, sizeof why, "worker wrote a short or malformed result");
    sp->failed(sp->ctx, s->item, why);
  }
  s->pid = -1;
  if (sp->progress) pf_progress_item();
}

int pf_workers_run(const pf_workers_spec *sp) {
  int jobs = sp->jobs > 0 ? sp->jobs : pf_workers_default_jobs();
  if (jobs > MAXJOBS) jobs = MAXJOBS;
  if (jobs > sp->n) jobs = sp->n;
  slot s[MAXJOBS];
  for (int k = 0; k < jobs; k++) s[k].pid = -1;
  int next = 0, running = 0, rc = 0;
  while ((next < sp->n && rc == 0) || running > 0) {
    for (int k = 0; k < jobs && next < sp->n && rc == 0; k++) {
      if (s[k].pid != -1) continue;
      if ((rc = spawn(sp, next, &s[k])) < 0) break;
      next++;
      running++;
    }
    if (running == 0) break;
    struct pollfd pfd[MAXJOBS];
    int map[MAXJOBS], np = 0;
    for (int k = 0; k < jobs; k++)
      if (s[k].pid != -1) {
        pfd[np] = (struct pollfd){.fd = s[k].fd, .events = POLLIN};
        map[np++] = k;
      }
    int ready = poll(pfd, (nfds_t)np, 200);
    if (ready < 0 && errno != EINTR) {
      rc = pf_error_set(PF_ESIM, "poll: %s", strerror(errno));
      break;
    }
    pf_progress_tick();
    for (int q = 0; q < np && ready > 0; q++)
      if (pfd[q].revents & (POLLIN | POLLHUP | POLLERR)) {
        finish(sp, &s[map[q]]);
        running--;
      }
  }
  /* an error above: stop what runs, report what never ran */
  char why[600];
  snprintf(why, sizeof why, "%s", pf_error_detail());
  for (int k = 0; k < jobs; k++)
    if (s[k].pid != -1) {
      close(s[k].fd);
      kill(s[k].pid, SIGKILL);
      waitpid(s[k].pid, NULL, 0);
      pf_interrupt_remove_child(s[k].pid);
      sp->failed(sp->ctx, s[k].item, why);
    }
  for (int i = next; i < sp->n && rc < 0; i++) sp->failed(sp->ctx, i, why);
  if (rc < 0) pf_error_set(rc, "%s", why);
  return rc;
}

extern char **environ;

int pf_spawn_capture(const char *exe, char *const *args, const char *what, size_t max_bytes, char **out, size_t *len,
                     int *status, int *read_rc, int *spawn_err) {
  *out = NULL;
  *len = 0;
  *status = 0;
  *read_rc = 0;
  *spawn_err = 0;
  int fds[2];
  if (pipe(fds) != 0) return pf_error_set(PF_EIO, "pipe: %s", strerror(errno));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  pid_t pid;
  int err = posix_spawn(&pid, exe, &fa, NULL, args, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (err != 0) {
    close(fds[0]);
    *spawn_err = err;
    return -1;
  }
  pf_interrupt_add_child(pid); /* ^C stops the child too */
  *read_rc = pf_read_fd(fds[0], what, max_bytes, out, len);
  close(fds[0]);
  int rc = 0;
  while (waitpid(pid, status, 0) < 0) {
    if (errno != EINTR) {
      rc = pf_error_set(PF_EIO, "waiting for %s: %s", exe, strerror(errno));
      break;
    }
  }
  pf_interrupt_remove_child(pid);
  if (rc < 0) {
    free(*out);
    *out = NULL;
  }
  return rc;
}
