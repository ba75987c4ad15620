/* batch.c - parallel predictions in forked workers (see batch.h). */
#include "preflight/batch.h"

#include "preflight/error.h"

#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct {
  pf_scenario sc;
  pf_prediction pred;
  int rc;
  char detail[512];
} wire;

static int default_jobs(void) {
  const char *e = getenv("PREFLIGHT_JOBS");
  if (e && *e) {
    char *end;
    long j = strtol(e, &end, 10);
    if (*end == '\0' && j >= 1 && j <= 256) return (int)j;
  }
  long n = sysconf(_SC_NPROCESSORS_ONLN);
  return n >= 1 ? (int)(n > 64 ? 64 : n) : 1;
}

static void run_one(pf_batch_item *it) {
  it->rc = pf_predict(it->sc, &it->pred);
  snprintf(it->detail, sizeof it->detail, "%s", it->rc < 0 ? pf_error_detail() : "");
}

static int write_all(int fd, const void *buf, size_t n) {
  const char *p = buf;
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k; n -= (size_t)k;
  }
  return 0;
}

int pf_predict_batch(pf_batch_item *items, int n, int jobs) {
  if (jobs <= 0) jobs = default_jobs();
  if (jobs == 1 || n <= 1) {
    for (int i = 0; i < n; i++) run_one(&items[i]);
    return 0;
  }
  wire *w = malloc(sizeof *w);
  if (!w) return pf_error_set(PF_ENOMEM, "out of memory");
  int next = 0, running = 0;
  pid_t pid[64];
  int fd[64], idx[64];
  size_t got[64];
  wire *buf[64];
  if (jobs > 64) jobs = 64;
  for (int k = 0; k < jobs; k++) { pid[k] = -1; buf[k] = NULL; }
  int rc = 0;
  while (next < n || running > 0) {
    for (int k = 0; k < jobs && next < n && rc == 0; k++) {
      if (pid[k] != -1) continue;
      int p[2];
      if (pipe(p) != 0) { rc = pf_error_set(PF_ESIM, "pipe: %s", strerror(errno)); break; }
      fflush(stdout);
      fflush(stderr);
      pid_t c = fork();
      if (c < 0) { close(p[0]); close(p[1]); rc = pf_error_set(PF_ESIM, "fork: %s", strerror(errno)); break; }
      if (c == 0) {
        close(p[0]);
        pf_batch_item *it = &items[next];
        run_one(it);
        w->sc = *it->sc;
        w->pred = it->pred;
        w->rc = it->rc;
        memcpy(w->detail, it->detail, sizeof w->detail);
        _exit(write_all(p[1], w, sizeof *w) == 0 ? 0 : 1);
      }
      close(p[1]);
      buf[k] = malloc(sizeof *w);
      if (!buf[k]) { rc = pf_error_set(PF_ENOMEM, "out of memory"); close(p[0]); kill(c, SIGKILL); waitpid(c, NULL, 0); break; }
      pid[k] = c; fd[k] = p[0]; idx[k] = next++; got[k] = 0;
      running++;
    }
    if (running == 0) break;
    struct pollfd pfd[64];
    int map[64], np = 0;
    for (int k = 0; k < jobs; k++)
      if (pid[k] != -1) { pfd[np] = (struct pollfd){.fd = fd[k], .events = POLLIN}; map[np++] = k; }
    if (poll(pfd, (nfds_t)np, -1) < 0) {
      if (errno == EINTR) continue;
      rc = pf_error_set(PF_ESIM, "poll: %s", strerror(errno));
      break;
    }
    for (int q = 0; q < np; q++) {
      if (!(pfd[q].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      int k = map[q];
      ssize_t r = read(fd[k], (char *)buf[k] + got[k], sizeof *w - got[k]);
      if (r < 0 && errno == EINTR) continue;
      if (r > 0) { got[k] += (size_t)r; if (got[k] < sizeof *w) continue; }
      /* complete, or the worker died */
      close(fd[k]);
      int status = 0;
      while (waitpid(pid[k], &status, 0) < 0 && errno == EINTR) {}
      pf_batch_item *it = &items[idx[k]];
      if (got[k] == sizeof *w && WIFEXITED(status) && WEXITSTATUS(status) == 0) {
        *it->sc = buf[k]->sc;
        it->pred = buf[k]->pred;
        it->rc = buf[k]->rc;
        memcpy(it->detail, buf[k]->detail, sizeof it->detail);
      } else {
        it->rc = PF_ESIM;
        snprintf(it->detail, sizeof it->detail, "prediction worker failed (status %d)", status);
      }
      free(buf[k]);
      buf[k] = NULL;
      pid[k] = -1;
      running--;
    }
  }
  for (int k = 0; k < jobs; k++)
    if (pid[k] != -1) { close(fd[k]); kill(pid[k], SIGKILL); waitpid(pid[k], NULL, 0); free(buf[k]); }
  free(w);
  return rc;
}
