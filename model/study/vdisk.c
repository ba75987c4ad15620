/* vdisk.c - validation-row predictions kept on disk between runs (vdisk.h). */
#define _GNU_SOURCE /* dl_iterate_phdr */
#include "vdisk.h"

#include "core/core.h"
#include "machine/machine.h"

#include <elf.h>
#include <errno.h>
#include <link.h>
#include <math.h>
#include <xbt/base.h> /* SG_BEGIN_DECL, which simgrid/version.h needs */
#include <simgrid/version.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define VDISK_MAGIC "preflight validation predictions 1"
#define VDISK_FILE_MAX (64u << 20) /* a machine or validation file read into the key */
#define VDISK_KEEP 256             /* entries kept in the folder; the oldest beyond are removed */

static uint64_t fnv_str(uint64_t h, const char *s) { return pf_fnv1a(h, s, strlen(s) + 1); }

/* ---- the folder ---- */

static int make_dir(const char *d) { return mkdir(d, 0700) == 0 || errno == EEXIST ? 0 : -1; }

/* snprintf that says whether all of it fit. */
static bool fits(int w, size_t n) { return w >= 0 && (size_t)w < n; }

/* The cache folder, made if missing; false when the cache is off. */
static bool find_dir(char *dir, size_t n) {
  const char *e = getenv("PREFLIGHT_CACHE");
  if (e && !strcmp(e, "off")) return false;
  if (e && *e) return fits(snprintf(dir, n, "%s", e), n) && make_dir(dir) == 0;
  if ((e = getenv("XDG_CACHE_HOME")) && *e == '/')
    return fits(snprintf(dir, n, "%s/preflight", e), n) && make_dir(dir) == 0;
  if (!(e = getenv("HOME")) || *e != '/' || !fits(snprintf(dir, n, "%s/.cache", e), n) || make_dir(dir) < 0)
    return false;
  size_t w = strlen(dir);
  return fits(snprintf(dir + w, n - w, "/preflight"), n - w) && make_dir(dir) == 0;
}

/* The folder, found once a process (every key, load and store asks); NULL when the cache is off. */
static const char *cache_dir(void) {
  static char dir[PF_PATH_MAX];
  static int state; /* 0: not looked for, 1: found, -1: off */
  if (!state) state = find_dir(dir, sizeof dir) ? 1 : -1;
  return state > 0 ? dir : NULL;
}

/* ---- the key ---- */

/* The GNU build id of the running program (the main object's PT_NOTE), hashed into *h; 1 when found. */
static int build_id_cb(struct dl_phdr_info *info, size_t size, void *arg) {
  (void)size;
  uint64_t *h = arg;
  for (int i = 0; i < info->dlpi_phnum; i++) {
    const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
    if (ph->p_type != PT_NOTE) continue;
    const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr), *end = p + ph->p_memsz;
    while (p + sizeof(ElfW(Nhdr)) <= end) {
      const ElfW(Nhdr) *nh = (const ElfW(Nhdr) *)p;
      size_t name = (nh->n_namesz + 3u) & ~3u, desc = (nh->n_descsz + 3u) & ~3u;
      const char *d = p + sizeof *nh + name;
      if (d + nh->n_descsz > end) break;
      if (nh->n_type == NT_GNU_BUILD_ID && nh->n_namesz == 4 && !memcmp(p + sizeof *nh, "GNU", 4)) {
        *h = pf_fnv1a(*h, d, nh->n_descsz);
        return 1;
      }
      p = d + desc;
    }
  }
  return 2; /* the main program is the first object: stop after it */
}

static bool hash_program(uint64_t *h) {
  if (dl_iterate_phdr(build_id_cb, h) == 1) return true;
  char *buf = NULL;
  size_t len = 0;
  if (pf_read_file("/proc/self/exe", VDISK_FILE_MAX, &buf, &len) < 0) return false;
  *h = pf_fnv1a(*h, buf, len);
  free(buf);
  return true;
}

static bool hash_file(uint64_t *h, const char *path) {
  char *buf = NULL;
  size_t len = 0;
  if (pf_read_file(path, VDISK_FILE_MAX, &buf, &len) < 0) return false;
  *h = pf_fnv1a(fnv_str(*h, path), buf, len);
  free(buf);
  return true;
}

/* Every regular file under dir (depth-limited), in name order: names and contents. */
static bool hash_tree(uint64_t *h, const char *dir, int depth) {
  char **names;
  int n;
  bool ok = pf_dir_names(dir, &names, &n) == 0;
  for (int i = 0; ok && i < n; i++) {
    char path[PF_PATH_MAX];
    struct stat st;
    if (!fits(snprintf(path, sizeof path, "%s/%s", dir, names[i]), sizeof path)) ok = false;
    else if (stat(path, &st) == 0) {
      if (S_ISDIR(st.st_mode)) ok = depth > 0 && hash_tree(h, path, depth - 1);
      else if (S_ISREG(st.st_mode)) ok = hash_file(h, path);
    }
  }
  pf_dir_names_free(names, n);
  return ok;
}

static bool ends_with(const char *v, size_t n, const char *suffix) {
  size_t k = strlen(suffix);
  return n > k && !strcmp(v + n - k, suffix);
}

static bool names_a_file(const char *v) {
  size_t n = strlen(v);
  return strchr(v, '/') || ends_with(v, n, ".cfg") || ends_with(v, n, ".csv") || ends_with(v, n, ".json");
}

/* What every file's key starts from: the format, SimGrid's version, the program and the machine folder, hashed
 * once a process (the pool asks once per validation file). */
static bool base_key(uint64_t *key) {
  static uint64_t h;
  static int state; /* 0: not computed, 1: done, -1: something could not be read */
  if (!state) {
    h = fnv_str(PF_FNV1A_OFFSET, VDISK_MAGIC);
    int v[3] = {0, 0, 0};
    sg_version_get(&v[0], &v[1], &v[2]);
    h = pf_fnv1a(h, v, sizeof v);
    state = hash_program(&h) && hash_tree(&h, pf_machines_dir(), 3) ? 1 : -1;
    pf_error_clear();
  }
  *key = h;
  return state > 0;
}

bool pf_vdisk_key(const char *path, const pf_vset *s, const pf_validate_opts *vo, uint64_t *key) {
  if (!cache_dir()) return false;
  /* the engine's test hooks change what a prediction does */
  if (getenv("PREFLIGHT_TEST_SIMGRID_DEADLOCK") || getenv("PREFLIGHT_TEST_BREAK_ENGINE")) return false;
  uint64_t h;
  bool ok = base_key(&h) && hash_file(&h, path);
  for (int i = 0; ok && i < s->n; i++) { /* files a row names: a machine or model file, a calibration */
    const pf_vrow *r = &s->rows[i];
    if (names_a_file(r->machine)) ok = hash_file(&h, r->machine);
    if (ok && names_a_file(r->model)) ok = hash_file(&h, r->model);
    for (int j = 0; ok && j < r->nopt; j++)
      if (names_a_file(r->opt_value[j])) ok = hash_file(&h, r->opt_value[j]);
  }
  if (ok && vo) {
    if (vo->calibration) ok = hash_file(&h, vo->calibration);
    if (vo->fit) {
      double f[4] = {vo->fit->compute_eff, vo->fit->comm_eff, vo->fit->step_overhead_s, vo->fit->input_rate_Bps};
      h = pf_fnv1a(h, f, sizeof f);
    }
    unsigned char flags[2] = {vo->hold_training, vo->build != NULL};
    h = pf_fnv1a(h, flags, sizeof flags);
  }
  pf_error_clear();
  *key = h;
  return ok;
}

/* ---- an entry ---- */

static void entry_path(uint64_t key, char *path, size_t n) {
  const char *dir = cache_dir();
  if (!dir || !fits(snprintf(path, n, "%s/rows-%016llx.tsv", dir, (unsigned long long)key), n)) path[0] = '\0';
}

/* A reason with tab, newline, carriage return and backslash escaped, and back. */
static void escape(const char *s, char *out, size_t n) {
  size_t w = 0;
  for (; *s && w + 3 < n; s++) {
    char c = *s == '\t' ? 't' : *s == '\n' ? 'n' : *s == '\r' ? 'r' : *s == '\\' ? '\\' : 0;
    if (c) { out[w++] = '\\'; out[w++] = c; }
    else out[w++] = *s;
  }
  out[w] = '\0';
}

static void unescape(const char *s, char *out, size_t n) {
  size_t w = 0;
  for (; *s && w + 1 < n; s++) {
    if (*s == '\\' && s[1]) {
      s++;
      out[w++] = *s == 't' ? '\t' : *s == 'n' ? '\n' : *s == 'r' ? '\r' : *s;
    } else out[w++] = *s;
  }
  out[w] = '\0';
}

/* One line of an entry: line \t status \t fail_code \t predicted \t error \t reason (escaped); 0 or -1. */
static int parse_line(char *p, long *line, long *st, long *code, double *pred, double *err, char **reason) {
  char *f[6], *q = p, *e[5];
  int nf = 0;
  for (; nf < 6; nf++) {
    f[nf] = q;
    char *t = strchr(q, '\t');
    if (!t) { nf++; break; }
    *t = '\0';
    q = t + 1;
  }
  if (nf != 6) return -1;
  *line = strtol(f[0], &e[0], 10);
  *st = strtol(f[1], &e[1], 10);
  *code = strtol(f[2], &e[2], 10);
  *pred = strtod(f[3], &e[3]);
  *err = strtod(f[4], &e[4]);
  for (int k = 0; k < 5; k++)
    if (e[k] == f[k] || *e[k]) return -1;
  *reason = f[5];
  return *st >= 0 && *st <= PF_ROW_FAILED ? 0 : -1;
}

int pf_vdisk_load(uint64_t key, pf_vrow *const *rows, bool *done, int n) {
  char path[PF_PATH_MAX], head[64], *buf = NULL;
  size_t len = 0;
  entry_path(key, path, sizeof path);
  if (!path[0] || pf_read_file(path, VDISK_FILE_MAX, &buf, &len) < 0) { pf_error_clear(); return 0; }
  snprintf(head, sizeof head, VDISK_MAGIC "\t%016llx\n", (unsigned long long)key);
  size_t hl = strlen(head);
  /* every line is read and checked before any row takes a value: a malformed entry is a miss, whole */
  int *at = malloc(sizeof *at * (size_t)(n ? n : 1)), filled = 0;
  struct got { long st, code; double pred, err; char *reason; } *g = calloc((size_t)(n ? n : 1), sizeof *g);
  bool bad = !at || !g || len < hl || strncmp(buf, head, hl);
  for (int i = 0; i < n && !bad; i++) at[i] = -1;
  for (char *p = buf + (bad ? 0 : hl); !bad && *p;) {
    char *nl = strchr(p, '\n'), *reason;
    long line, st, code;
    double pred, err;
    if (!nl) { bad = true; break; }
    *nl = '\0';
    if (parse_line(p, &line, &st, &code, &pred, &err, &reason) < 0) { bad = true; break; }
    for (int i = 0; i < n; i++)
      if (rows[i]->line == line && at[i] < 0) {
        at[i] = i;
        g[i] = (struct got){st, code, pred, err, reason};
        break;
      }
    p = nl + 1;
  }
  for (int i = 0; i < n && !bad; i++) {
    if (at[i] < 0) continue;
    rows[i]->status = (pf_row_status)g[i].st;
    rows[i]->fail_code = (int)g[i].code;
    rows[i]->predicted = g[i].pred;
    rows[i]->error = g[i].err;
    unescape(g[i].reason, rows[i]->reason, sizeof rows[i]->reason);
    done[i] = true;
    filled++;
  }
  free(at);
  free(g);
  free(buf);
  return filled;
}

/* Keep the folder small: beyond VDISK_KEEP entries, the least recently written go. */
static void prune(const char *dir) {
  char **names;
  int n;
  if (pf_dir_names(dir, &names, &n) < 0) { pf_error_clear(); return; }
  time_t *t = malloc(sizeof *t * (size_t)(n ? n : 1));
  int m = 0; /* the entries (and temporary files beside them), compacted to the front of names */
  for (int i = 0; t && i < n; i++) {
    char path[PF_PATH_MAX];
    struct stat st;
    if (!strncmp(names[i], "rows-", 5) && fits(snprintf(path, sizeof path, "%s/%s", dir, names[i]), sizeof path) &&
        stat(path, &st) == 0) {
      char *keep = names[i];
      names[i] = names[m];
      names[m] = keep;
      t[m++] = st.st_mtime;
    }
  }
  while (t && m > VDISK_KEEP) { /* remove the oldest, one at a time (rare: m is small) */
    int o = 0;
    for (int i = 1; i < m; i++)
      if (t[i] < t[o] || (t[i] == t[o] && strcmp(names[i], names[o]) < 0)) o = i;
    char path[PF_PATH_MAX];
    if (fits(snprintf(path, sizeof path, "%s/%s", dir, names[o]), sizeof path)) remove(path);
    m--;
    char *gone = names[o];
    names[o] = names[m], t[o] = t[m];
    names[m] = gone;
  }
  free(t);
  pf_dir_names_free(names, n);
}

void pf_vdisk_store(uint64_t key, pf_vrow *const *rows, const bool *done, int n) {
  char path[PF_PATH_MAX];
  entry_path(key, path, sizeof path);
  if (!path[0]) return;
  size_t cap = 256 + (size_t)n * (64 + 2 * PF_VTEXT), w = 0;
  char *text = malloc(cap), reason[2 * PF_VTEXT];
  if (!text) return;
  w += (size_t)snprintf(text, cap, VDISK_MAGIC "\t%016llx\n", (unsigned long long)key);
  for (int i = 0; i < n && w < cap; i++) {
    if (!done[i]) continue;
    escape(rows[i]->reason, reason, sizeof reason);
    w += (size_t)snprintf(text + w, cap - w, "%d\t%d\t%d\t%a\t%a\t%s\n", rows[i]->line, (int)rows[i]->status,
                          rows[i]->fail_code, rows[i]->predicted, rows[i]->error, reason);
  }
  /* a private temporary file beside the entry, renamed over it: a reader sees the old entry or the new one */
  if (w < cap && pf_write_private(path, text, w) == 0) {
    char *slash = strrchr(path, '/');
    if (slash) { *slash = '\0'; prune(path); }
  }
  pf_error_clear();
  free(text);
}
