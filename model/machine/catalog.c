/* catalog.c - the machine catalogue: machine files in pf_machines_dir()
 * (PREFLIGHT_MACHINES, default the machines/ of the shipped data: core/datadir.h) and device files in
 * its devices/ folder, listed, found by id (or taken as a path) and read with
 * the id inside checked against the file name.  An unknown id is reported with
 * the valid ones.  (Reading a device: device.c; a machine: machine.c.)
 */
#include "catalog.h"

#include "core/core.h"
#include "hardware.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

const char *pf_machines_dir(void) {
  const char *e = getenv("PREFLIGHT_MACHINES");
  if (e && *e) return e;
  static char dir[4300];
  if (!dir[0]) snprintf(dir, sizeof dir, "%s/machines", pf_data_dir()); /* core/datadir.c: installed or source tree */
  return dir;
}

static int is_path(const char *s) {
  size_t n = strlen(s);
  return strchr(s, '/') != NULL || (n > 4 && strcmp(s + n - 4, ".cfg") == 0);
}

static const char *base_name(const char *path, char *buf, size_t n) {
  const char *b = strrchr(path, '/');
  snprintf(buf, n, "%s", b ? b + 1 : path);
  char *dot = strrchr(buf, '.');
  if (dot && strcmp(dot, ".cfg") == 0) *dot = '\0';
  return buf;
}

/* The ids of dir's machine or device files (the .cfg names less the suffix, dot-files left out), in id order. */
static int list_cfg(const char *dir, char ***ids, int *n) {
  int rc = pf_dir_names(dir, ids, n);
  if (rc == PF_ENOENT)
    return pf_error_set(PF_ENOENT, "%s: cannot open machine directory (set PREFLIGHT_MACHINES)", dir);
  if (rc < 0) return rc;
  int kept = 0;
  for (int i = 0; i < *n; i++) {
    char *name = (*ids)[i];
    size_t len = strlen(name);
    if (len > 4 && strcmp(name + len - 4, ".cfg") == 0) {
      name[len - 4] = '\0';
      (*ids)[kept++] = name;
    } else {
      free(name);
    }
  }
  *n = kept;
  for (int i = 1; i < *n; i++) /* by id, not by file name ("a" before "a-b", whose file sorts first) */
    for (int j = i; j > 0 && strcmp((*ids)[j - 1], (*ids)[j]) > 0; j--) {
      char *t = (*ids)[j]; (*ids)[j] = (*ids)[j - 1]; (*ids)[j - 1] = t;
    }
  return 0;
}

void pf_strlist_free(char **ids, int n) { pf_dir_names_free(ids, n); }

int pf_machine_list(char ***ids, int *n) { return list_cfg(pf_machines_dir(), ids, n); }

int pf_device_list(char ***ids, int *n) {
  char dir[PF_PATH_MAX];
  snprintf(dir, sizeof dir, "%s/devices", pf_machines_dir());
  return list_cfg(dir, ids, n);
}

/* "unknown machine id \"lumi\"; did you mean lumi-g? (run `preflight machines` for the list)": the
 * nearest ids (core's pf_suggest), the whole list on request. */
static int unknown_id(const char *what, const char *id, int (*lister)(char ***, int *)) {
  char **ids; int n;
  char near[512] = "";
  if (lister(&ids, &n) == 0) {
    pf_suggest(id, (const char *const *)ids, n, near, sizeof near);
    pf_strlist_free(ids, n);
  }
  if (strcmp(what, "machine") == 0)
    return pf_error_set(PF_ENOENT, "unknown machine id \"%s\"%s%s (run `preflight machines` for the list)", id,
                        *near ? "; " : "", near);
  return pf_error_set(PF_ENOENT, "unknown %s id \"%s\"%s%s (the ids are the file names in %s/devices)", what, id,
                      *near ? "; " : "", near, pf_machines_dir());
}

static int resolve(const char *id_or_path, const char *sub, char *path, size_t n) {
  if (is_path(id_or_path)) { snprintf(path, n, "%s", id_or_path); return 1; }
  for (const char *c = id_or_path; *c; c++)
    if (!(isalnum((unsigned char)*c) || *c == '-' || *c == '_' || *c == '.')) return 0;
  if (*id_or_path == '\0') return 0;
  snprintf(path, n, "%s%s/%s.cfg", pf_machines_dir(), sub, id_or_path);
  struct stat st;
  return stat(path, &st) == 0;
}

int pf_catalog_load(const char *id_or_path, const char *what, pf_cfg_read_fn read, void *out, const char *id) {
  int device = strcmp(what, "device") == 0;
  char path[PF_PATH_MAX];
  if (!resolve(id_or_path, device ? "/devices" : "", path, sizeof path))
    return unknown_id(what, id_or_path, device ? pf_device_list : pf_machine_list);
  int rc = pf_cfg_read_file(path, what, read, out);
  if (rc == 0 && !is_path(id_or_path)) {
    char b[PF_PATH_MAX];
    if (strcmp(id, base_name(path, b, sizeof b)) != 0)
      return pf_error_set(PF_EPARSE, "%s: %s.id \"%s\" differs from the file name", path, what, id);
  }
  return rc;
}
