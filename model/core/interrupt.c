/* interrupt.c - SIGINT / SIGTERM handling: workers stopped, temporary files
 * removed, outputs untouched (see interrupt.h).
 *
 * The registries are fixed arrays written by the main flow and read by the
 * handler: a slot is filled first and published last (a volatile flag), so the
 * handler never sees half a path.  The handler blocks the other stop signals
 * while it runs (sa_mask) and ends with _exit(), never returning into code it
 * interrupted.
 */
#define _DEFAULT_SOURCE /* nanosleep, prctl */
#include "interrupt.h"

#include "error.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#define NFILES 16
#define NKIDS 256
#define PATHLEN 4096

static char files[NFILES][PATHLEN];
static volatile sig_atomic_t file_used[NFILES];
static volatile pid_t kids[NKIDS];
static volatile sig_atomic_t line_drawn;

void pf_interrupt_line_drawn(int drawn) { line_drawn = drawn; }

int pf_interrupt_add_file(const char *path) {
  if (strlen(path) >= PATHLEN) return pf_error_set(PF_EIO, "%s: path too long for a temporary file", path);
  for (int i = 0; i < NFILES; i++)
    if (!file_used[i]) {
      snprintf(files[i], PATHLEN, "%s", path);
      file_used[i] = 1;
      return 0;
    }
  return pf_error_set(PF_EIO, "%s: more than %d temporary files at once", path, NFILES);
}

void pf_interrupt_remove_file(const char *path) {
  for (int i = 0; i < NFILES; i++)
    if (file_used[i] && strcmp(files[i], path) == 0) { file_used[i] = 0; return; }
}

int pf_interrupt_add_child(pid_t pid) {
  for (int i = 0; i < NKIDS; i++)
    if (kids[i] == 0) { kids[i] = pid; return 0; }
  return pf_error_set(PF_EIO, "more than %d worker processes at once", NKIDS);
}

void pf_interrupt_remove_child(pid_t pid) {
  for (int i = 0; i < NKIDS; i++)
    if (kids[i] == pid) { kids[i] = 0; return; }
}


static int any_kid(void) {
  for (int i = 0; i < NKIDS; i++)
    if (kids[i] > 0) return 1;
  return 0;
}

static void on_stop(int sig) {
  /* workers first: they remove their own temporary files when they stop */
  for (int i = 0; i < NKIDS; i++)
    if (kids[i] > 0) kill(kids[i], SIGTERM);
  struct timespec tick = {0, 10 * 1000 * 1000}; /* 10 ms, 50 times: half a second */
  for (int round = 0; round < 50 && any_kid(); round++) {
    for (int i = 0; i < NKIDS; i++)
      if (kids[i] > 0 && waitpid(kids[i], NULL, WNOHANG) != 0) kids[i] = 0;
    if (any_kid()) nanosleep(&tick, NULL);
  }
  for (int i = 0; i < NKIDS; i++)
    if (kids[i] > 0) {
      kill(kids[i], SIGKILL);
      waitpid(kids[i], NULL, 0);
      kids[i] = 0;
    }
  for (int i = 0; i < NFILES; i++)
    if (file_used[i]) unlink(files[i]);
  if (line_drawn) {
    static const char erase[] = "\r\033[K";
    if (write(STDERR_FILENO, erase, sizeof erase - 1) < 0) {}
  }
  _exit(128 + sig);
}

int pf_interrupt_install(void) {
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_stop;
  sigemptyset(&sa.sa_mask);
  sigaddset(&sa.sa_mask, SIGINT);
  sigaddset(&sa.sa_mask, SIGTERM);
  sigaddset(&sa.sa_mask, SIGHUP);
  static const int sigs[] = {SIGINT, SIGTERM, SIGHUP};
  for (size_t i = 0; i < sizeof sigs / sizeof sigs[0]; i++) {
    struct sigaction old;
    if (sigaction(sigs[i], NULL, &old) == 0 && old.sa_handler == SIG_IGN) continue; /* nohup keeps SIGHUP ignored */
    if (sigaction(sigs[i], &sa, NULL) != 0) return pf_error_set(PF_EIO, "sigaction: %s", strerror(errno));
  }
  return 0;
}

void pf_interrupt_child_setup(void) {
  for (int i = 0; i < NFILES; i++) file_used[i] = 0;
  for (int i = 0; i < NKIDS; i++) kids[i] = 0;
  pid_t parent = getppid();
  setpgid(0, 0);
#ifdef __linux__
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(128 + SIGTERM); /* the parent died before prctl */
#else
  (void)parent;
#endif
}
