/* file.c - reading files with limits, and outputs that never harm a user's
 * file (see file.h).  The one place that renames a file into place.
 *
 * The temporary file of a replaced output is created beside the target with
 * O_CREAT|O_EXCL under a name registered with interrupt.c first, so a signal
 * at any moment leaves no stray file; it is fsync()ed before the rename so a
 * crash leaves either the old file or the complete new one (the rename(2)
 * guarantee on POSIX file systems).
 */
#define _DEFAULT_SOURCE /* fchown, fsync */
#include "file.h"

#include "error.h"
#include "interrupt.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* ---- reading ---- */

int pf_input_open(const char *path, FILE **f, long long *size_B) {
  *f = NULL;
  if (size_B) *size_B = -1;
  if (!path || !*path) return pf_error_set(PF_EINVAL, "empty file name");
  FILE *in = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
  if (!in) return pf_error_set(errno == ENOENT ? PF_ENOENT : PF_EIO, "%s: cannot open: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fileno(in), &st) == 0) {
    if (S_ISDIR(st.st_mode)) {
      if (in != stdin) fclose(in);
      return pf_error_set(PF_EIO, "%s: is a directory, not a file", path);
    }
    if (S_ISREG(st.st_mode) && size_B) *size_B = (long long)st.st_size;
  }
  *f = in;
  return 0;
}

int pf_read_fd(int fd, const char *what, size_t max_bytes, char **buf, size_t *len) {
  *buf = NULL;
  *len = 0;
  size_t cap = 65536, n = 0;
  char *b = malloc(cap);
  if (!b) return pf_error_set(PF_ENOMEM, "%s: out of memory", what);
  for (;;) {
    if (n + 1 >= cap) { /* grow, never past the cap's next byte */
      size_t want = max_bytes > 0 && 2 * cap > max_bytes + 2 ? max_bytes + 2 : 2 * cap;
      char *g = want <= cap ? NULL : realloc(b, want);
      if (!g) {
        free(b);
        return pf_error_set(PF_ENOMEM, "%s: out of memory", what);
      }
      b = g;
      cap = want;
    }
    ssize_t r = read(fd, b + n, cap - n - 1);
    if (r < 0 && errno == EINTR) continue;
    if (r < 0) {
      int e = errno;
      free(b);
      return pf_error_set(PF_EIO, "reading %s: %s", what, strerror(e));
    }
    if (r == 0) break;
    n += (size_t)r;
    if (max_bytes > 0 && n > max_bytes) {
      free(b);
      return pf_error_set(PF_EIO, "%s: more than the %zu bytes of output expected", what, max_bytes);
    }
  }
  b[n] = '\0';
  *buf = b;
  *len = n;
  return 0;
}

int pf_read_file(const char *path, size_t max_bytes, char **buf, size_t *len) {
  *buf = NULL;
  *len = 0;
  FILE *f;
  long long size;
  int rc = pf_input_open(path, &f, &size);
  if (rc < 0) return rc;
  if (max_bytes > 0 && size > (long long)max_bytes) {
    if (f != stdin) fclose(f);
    return pf_error_set(PF_EPARSE, "%s: %lld bytes, larger than the %zu this file may have", path, size, max_bytes);
  }
  size_t cap = size > 0 ? (size_t)size + 1 : 65536, n = 0;
  char *b = malloc(cap);
  if (!b) {
    if (f != stdin) fclose(f);
    return pf_error_set(PF_ENOMEM, "%s: out of memory", path);
  }
  for (;;) {
    if (n + 1 >= cap) { /* grow, never past the cap's next byte: /dev/zero costs the cap, not twice it */
      size_t want = max_bytes > 0 && 2 * cap > max_bytes + 2 ? max_bytes + 2 : 2 * cap;
      char *g = cap > ((size_t)1 << 40) || want <= cap ? NULL : realloc(b, want);
      if (!g) {
        free(b);
        if (f != stdin) fclose(f);
        return pf_error_set(PF_ENOMEM, "%s: out of memory", path);
      }
      b = g;
      cap = want;
    }
    size_t got = fread(b + n, 1, cap - n - 1, f);
    n += got;
    if (max_bytes > 0 && n > max_bytes) {
      free(b);
      if (f != stdin) fclose(f);
      return pf_error_set(PF_EPARSE, "%s: larger than the %zu bytes this file may have", path, max_bytes);
    }
    if (got == 0) break;
  }
  int err = ferror(f);
  if (f != stdin) fclose(f);
  if (err) {
    free(b);
    return pf_error_set(PF_EIO, "%s: read error", path);
  }
  b[n] = '\0';
  *buf = b;
  *len = n;
  return 0;
}

/* ---- output: checks ---- */

static void dir_of(const char *path, char *dir, size_t n) {
  const char *slash = strrchr(path, '/');
  if (!slash) snprintf(dir, n, ".");
  else if (slash == path) snprintf(dir, n, "/");
  else snprintf(dir, n, "%.*s", (int)(slash - path), path);
}

/* Follow symlinks from path to the file that would be written.  1 when it
 * exists (st filled), 0 when it does not, or a PF_E* code. */
static int resolve(const char *what, const char *path, char *target, size_t n, struct stat *st) {
  char cur[PF_PATH_MAX], link[PF_PATH_MAX];
  snprintf(cur, sizeof cur, "%s", path);
  for (int hops = 0; hops < 40; hops++) {
    struct stat lst;
    if (lstat(cur, &lst) != 0) {
      if (errno != ENOENT) return pf_error_set(PF_EIO, "%s %s: %s", what, path, strerror(errno));
      snprintf(target, n, "%s", cur);
      return 0;
    }
    if (!S_ISLNK(lst.st_mode)) {
      snprintf(target, n, "%s", cur);
      *st = lst;
      return 1;
    }
    ssize_t k = readlink(cur, link, sizeof link - 1);
    if (k < 0) return pf_error_set(PF_EIO, "%s %s: %s", what, path, strerror(errno));
    link[k] = '\0';
    if (link[0] == '/') snprintf(cur, sizeof cur, "%s", link);
    else {
      char dir[PF_PATH_MAX];
      dir_of(cur, dir, sizeof dir);
      int w = snprintf(cur, sizeof cur, "%s/%s", dir, link);
      if (w < 0 || (size_t)w >= sizeof cur) return pf_error_set(PF_EIO, "%s %s: path too long", what, path);
    }
  }
  return pf_error_set(PF_EIO, "%s %s: too many levels of symbolic links", what, path);
}

static unsigned umask_mode(void) {
  mode_t m = umask(0);
  umask(m);
  return 0666u & ~(unsigned)m;
}

int pf_output_check(const char *path, const char *what, pf_output *o) {
  memset(o, 0, sizeof *o);
  if (!what) what = "-o";
  if (!path || strcmp(path, "-") == 0) {
    o->kind = PF_OUT_STDOUT;
    snprintf(o->path, sizeof o->path, "-");
    return 0;
  }
  if (!*path) return pf_error_set(PF_EINVAL, "%s: empty file name", what);
  if (strlen(path) >= sizeof o->path - 32) return pf_error_set(PF_EINVAL, "%s %s: path too long", what, path);
  snprintf(o->path, sizeof o->path, "%s", path);
  struct stat st;
  memset(&st, 0, sizeof st);
  int ex = resolve(what, path, o->target, sizeof o->target, &st);
  if (ex < 0) return ex;
  const char *via = strcmp(o->target, path) ? " (the target of the symbolic link)" : "";
  if (ex) {
    o->exists = true;
    if (S_ISDIR(st.st_mode)) return pf_error_set(PF_EIO, "%s %s: is a directory; give a file name", what, path);
    if (S_ISFIFO(st.st_mode) || S_ISCHR(st.st_mode)) {
      if (access(o->target, W_OK) != 0)
        return pf_error_set(PF_EIO, "%s %s%s: cannot write: %s", what, o->target, via, strerror(errno));
      o->kind = PF_OUT_STREAM;
      return 0;
    }
    if (!S_ISREG(st.st_mode))
      return pf_error_set(PF_EIO, "%s %s%s: not a regular file, FIFO or character device; nothing was written",
                          what, o->target, via);
    if (access(o->target, W_OK) != 0 || !(st.st_mode & 0222))
      return pf_error_set(PF_EIO, "%s %s%s: the file is read-only and was left as it is (make it writable or "
                          "choose another name)", what, o->target, via);
    o->mode = (unsigned)(st.st_mode & 07777);
    o->uid = (long)st.st_uid;
    o->gid = (long)st.st_gid;
    if (st.st_nlink > 1) /* a rename would split the names; rewriting in place can be cut half-way */
      return pf_error_set(PF_EIO, "%s %s%s: the file has %lu hard links; preflight writes a new file and renames it "
                          "into place, which would split them, so it was left as it is (remove the other names "
                          "or choose another name)", what, o->target, via, (unsigned long)st.st_nlink);
  } else {
    o->mode = umask_mode();
  }
  char dir[PF_PATH_MAX];
  dir_of(o->target, dir, sizeof dir);
  struct stat ds;
  if (stat(dir, &ds) != 0 || !S_ISDIR(ds.st_mode))
    return pf_error_set(PF_EIO, "%s %s: the folder %s does not exist", what, path, dir);
  if (access(dir, W_OK | X_OK) != 0)
    return pf_error_set(PF_EIO, "%s %s: cannot create files in the folder %s: %s", what, path, dir, strerror(errno));
  o->kind = PF_OUT_REPLACE;
  return 0;
}

/* ---- output: writing ---- */

/* Create path (a unique name made from prefix) exclusively, registered with
 * interrupt.c before it exists, with mode bits `mode`. */
static int create_registered(const char *prefix, char *path, size_t n, unsigned mode, int *fd_out) {
  static unsigned counter;
  for (int attempt = 0; attempt < 100; attempt++) {
    unsigned r = (unsigned)getpid() * 2654435761u ^ (unsigned)time(NULL) ^ (++counter * 40503u);
    int w = snprintf(path, n, "%s%08x", prefix, r);
    if (w < 0 || (size_t)w >= n) return pf_error_set(PF_EIO, "%s: path too long", prefix);
    int rc = pf_interrupt_add_file(path);
    if (rc < 0) return rc;
    int fd = open(path, O_WRONLY | O_CREAT | O_EXCL, (mode_t)mode);
    if (fd >= 0) {
      *fd_out = fd;
      return 0;
    }
    int e = errno;
    pf_interrupt_remove_file(path);
    if (e != EEXIST) {
      path[0] = '\0';
      errno = e;
      return PF_EIO;
    }
  }
  path[0] = '\0';
  errno = EEXIST;
  return PF_EIO;
}

int pf_temp_create(const char *stem, char *path, size_t n, FILE **f) {
  const char *dir = getenv("TMPDIR");
  char prefix[PF_PATH_MAX];
  snprintf(prefix, sizeof prefix, "%s/%s-", dir && *dir ? dir : "/tmp", stem);
  int fd, rc = create_registered(prefix, path, n, 0600, &fd);
  if (rc < 0)
    return pf_error_set(PF_EIO, "cannot create a temporary file in %s: %s", dir && *dir ? dir : "/tmp",
                        strerror(errno));
  *f = fdopen(fd, "w");
  if (!*f) {
    close(fd);
    pf_temp_remove(path);
    return pf_error_set(PF_ENOMEM, "out of memory");
  }
  return 0;
}

void pf_temp_remove(const char *path) {
  if (!path[0]) return;
  unlink(path);
  pf_interrupt_remove_file(path);
}

int pf_write_private(const char *path, const char *buf, size_t len) {
  char tmp[PF_PATH_MAX], prefix[PF_PATH_MAX];
  int w = snprintf(prefix, sizeof prefix, "%s.", path), fd;
  if (w < 0 || (size_t)w >= sizeof prefix) return pf_error_set(PF_EIO, "%s: path too long", path);
  if (create_registered(prefix, tmp, sizeof tmp, 0600, &fd) < 0)
    return pf_error_set(PF_EIO, "%s: cannot create a temporary file beside it: %s", path, strerror(errno));
  int e = pf_write_all(fd, buf, len) == 0 ? 0 : errno;
  if (close(fd) != 0 && !e) e = errno;
  if (!e && rename(tmp, path) != 0) e = errno;
  if (e) {
    pf_temp_remove(tmp);
    return pf_error_set(PF_EIO, "%s: write failed: %s", path, strerror(e));
  }
  pf_interrupt_remove_file(tmp);
  return 0;
}

static int by_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int pf_dir_names(const char *dir, char ***names, int *n) {
  *names = NULL;
  *n = 0;
  DIR *d = opendir(dir);
  if (!d) return pf_error_set(PF_ENOENT, "%s: cannot open the folder: %s", dir, strerror(errno));
  int cap = 0;
  struct dirent *e;
  while ((e = readdir(d))) {
    if (e->d_name[0] == '.') continue;
    if (*n == cap) {
      char **g = realloc(*names, sizeof *g * (size_t)(cap = cap ? 2 * cap : 64));
      if (!g) break;
      *names = g;
    }
    if (!((*names)[*n] = strdup(e->d_name))) break;
    (*n)++;
  }
  bool short_of_memory = e != NULL;
  closedir(d);
  if (short_of_memory) {
    pf_dir_names_free(*names, *n);
    *names = NULL;
    *n = 0;
    return pf_error_set(PF_ENOMEM, "out of memory");
  }
  if (*n > 1) qsort(*names, (size_t)*n, sizeof **names, by_name);
  return 0;
}

void pf_dir_names_free(char **names, int n) {
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
}

static int open_tmp(pf_output *o) {
  char dir[PF_PATH_MAX], prefix[PF_PATH_MAX];
  dir_of(o->target, dir, sizeof dir);
  const char *base = strrchr(o->target, '/');
  base = base ? base + 1 : o->target;
  int w = snprintf(prefix, sizeof prefix, "%s/.%s.preflight-", dir, base);
  if (w < 0 || (size_t)w >= sizeof prefix) return pf_error_set(PF_EIO, "%s: path too long", o->path);
  int fd;
  if (create_registered(prefix, o->tmp, sizeof o->tmp, 0600, &fd) < 0)
    return pf_error_set(PF_EIO, "%s: cannot create a temporary file in %s: %s", o->path, dir, strerror(errno));
  if (fchmod(fd, (mode_t)o->mode) != 0) { /* keep going: the content matters more than its mode */ }
  if (o->exists && ((long)getuid() != o->uid || (long)getgid() != o->gid))
    if (fchown(fd, (uid_t)o->uid, (gid_t)o->gid) != 0) { /* only root may give files away */ }
  o->f = fdopen(fd, "w");
  if (o->f) return 0;
  close(fd);
  pf_temp_remove(o->tmp);
  o->tmp[0] = '\0';
  return pf_error_set(PF_ENOMEM, "out of memory");
}

int pf_output_open(pf_output *o, FILE **f) {
  *f = NULL;
  switch (o->kind) {
  case PF_OUT_STDOUT: o->f = stdout; break;
  case PF_OUT_STREAM:
    o->f = fopen(o->target, "w");
    if (!o->f) return pf_error_set(PF_EIO, "%s: cannot open: %s", o->target, strerror(errno));
    break;
  case PF_OUT_REPLACE: {
    int rc = open_tmp(o);
    if (rc < 0) return rc;
    break;
  }
  }
  *f = o->f;
  return 0;
}

static void drop_tmp(pf_output *o) {
  pf_temp_remove(o->tmp);
  o->tmp[0] = '\0';
}

void pf_output_abort(pf_output *o) {
  if (o->f && o->f != stdout) fclose(o->f);
  o->f = NULL;
  drop_tmp(o);
}

int pf_write_all(int fd, const void *src, size_t n) {
  const char *p = src;
  while (n > 0) {
    ssize_t k = write(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

int pf_read_all(int fd, void *dst, size_t n) {
  char *p = dst;
  while (n > 0) {
    ssize_t k = read(fd, p, n);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) return -1;
    p += k;
    n -= (size_t)k;
  }
  return 0;
}

bool pf_same_file(const char *a, const char *b) {
  struct stat sa, sb;
  if (!a || !b || stat(a, &sa) != 0 || stat(b, &sb) != 0) return false;
  return S_ISREG(sa.st_mode) && S_ISREG(sb.st_mode) && sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
}

int pf_output_commit(pf_output *o) {
  int rc = 0;
  switch (o->kind) {
  case PF_OUT_STDOUT:
    if (fflush(stdout) != 0 || ferror(stdout))
      rc = pf_error_set(PF_EIO, "writing to standard output: %s", strerror(errno));
    o->f = NULL;
    return rc;
  case PF_OUT_STREAM: {
    int bad = ferror(o->f) || fclose(o->f) != 0;
    o->f = NULL;
    if (bad) rc = pf_error_set(PF_EIO, "%s: write failed: %s", o->target, strerror(errno));
    return rc;
  }
  case PF_OUT_REPLACE: {
    int err = 0;
    if (fflush(o->f) != 0 || ferror(o->f)) err = errno ? errno : EIO;
    if (!err && fsync(fileno(o->f)) != 0 && errno != EINVAL) err = errno;
    if (fclose(o->f) != 0 && !err) err = errno;
    o->f = NULL;
    if (!err && rename(o->tmp, o->target) != 0) err = errno;
    if (err) {
      drop_tmp(o);
      return pf_error_set(PF_EIO, "%s: write failed: %s (the previous file, if any, is unchanged)", o->path,
                          strerror(err));
    }
    pf_interrupt_remove_file(o->tmp);
    o->tmp[0] = '\0';
    return 0;
  }
  }
  return 0;
}

/* Test hook (tests/robustness/cases.txt): PREFLIGHT_TEST_SIGNAL_IN_WRITE=N raises signal N once half the
 * bytes are written and flushed, as a ^C or a batch system's SIGTERM would land; the handler (interrupt.c)
 * must remove the temporary file and leave the target as it was.  (A full disk is tested without a hook:
 * `ulimit -f` makes write() fail with EFBIG as it fails with ENOSPC.) */
static void signal_in_write(FILE *f, const char *text, size_t len) {
  const char *sig = getenv("PREFLIGHT_TEST_SIGNAL_IN_WRITE");
  if (!sig || !*sig || len < 2) return;
  if (fwrite(text, 1, len / 2, f) == len / 2 && fflush(f) == 0) raise(atoi(sig));
  rewind(f); /* the signal was not fatal: write the whole text from the start */
}

int pf_output_write(pf_output *o, const char *text, size_t len) {
  FILE *f;
  int rc = pf_output_open(o, &f);
  if (rc < 0) return rc;
  signal_in_write(f, text, len);
  if (len > 0 && fwrite(text, 1, len, f) != len) {
    int e = errno;
    pf_output_abort(o);
    return pf_error_set(PF_EIO, "%s: write failed: %s (the previous file, if any, is unchanged)", o->path,
                        strerror(e));
  }
  return pf_output_commit(o);
}

int pf_write_bytes_atomic(const char *path, const char *what, const char *buf, size_t len) {
  pf_output o;
  int rc = pf_output_check(path, what, &o);
  if (rc < 0) return rc;
  return pf_output_write(&o, buf, len);
}

int pf_write_file_atomic(const char *path, const char *text) {
  return pf_write_bytes_atomic(path, "output", text, strlen(text));
}
