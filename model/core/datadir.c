/* datadir.c - the running program's folder and the root of the data it
 * ships (datadir.h): the installed layout beside the binary, else the
 * source tree it was built from, else the configured install folder. */
#define _DEFAULT_SOURCE
#include "datadir.h"

#include "error.h"

#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef PF_SOURCE_DIR
#define PF_SOURCE_DIR "."
#endif
#ifndef PF_INSTALL_DATA_DIR
#define PF_INSTALL_DATA_DIR "/usr/local/share/preflight"
#endif

int pf_exe_dir(char *dir, size_t len) {
  char self[4096];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return pf_error_set(PF_ENODEV, "cannot find this program's directory (/proc/self/exe): %s", strerror(errno));
  self[n] = '\0';
  char *slash = strrchr(self, '/');
  if (slash) *slash = '\0';
  snprintf(dir, len, "%s", self);
  return 0;
}

/* Does root hold the data (its machines/ folder)?  Then root becomes its canonical name (no "bin/.."), as
 * the help examples print it. */
static int holds_data(char *root, size_t len) {
  char p[4300], canon[PATH_MAX];
  struct stat st;
  snprintf(p, sizeof p, "%s/machines", root);
  if (stat(p, &st) != 0 || !S_ISDIR(st.st_mode)) return 0;
  if (realpath(root, canon)) snprintf(root, len, "%s", canon);
  return 1;
}

const char *pf_data_dir(void) {
  static char root[4200];
  if (root[0]) return root;
  char exe[4096];
  if (pf_exe_dir(exe, sizeof exe) == 0) {
    snprintf(root, sizeof root, "%s/../share/preflight", exe);
    if (holds_data(root, sizeof root)) return root;
  }
  const char *const fallback[] = {PF_SOURCE_DIR, PF_INSTALL_DATA_DIR};
  for (size_t i = 0; i < sizeof fallback / sizeof fallback[0]; i++) {
    snprintf(root, sizeof root, "%s", fallback[i]);
    if (holds_data(root, sizeof root)) return root;
  }
  snprintf(root, sizeof root, "%s", PF_SOURCE_DIR); /* nothing found: messages name the source tree's files */
  return root;
}

const char *pf_install_data_dir(void) { return PF_INSTALL_DATA_DIR; }
