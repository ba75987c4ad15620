/* file.h - files in and out: reading with size limits, and output that never
 * harms a user's file.
 *
 * Output goes through a pf_output, checked before any work starts
 * (pf_output_check) and written when the work is done:
 *   - "-" or no path: standard output;
 *   - a FIFO or a character device (also through a symlink): streamed to it;
 *   - a regular file, new or with one link: written to a temporary file beside
 *     the real target (through a symlink: beside the file it points to, so the
 *     link stays a link), given the existing file's mode (a new file: 0666 less
 *     the umask) and renamed over the target on success;
 *   - refused up front: a regular file with several hard links (a rename
 *     would split it from its other names, rewriting in place can be cut
 *     half-way by a full disk or a signal), a read-only file, a folder that does not exist or
 *     cannot be written, a directory, a socket or block device.
 * An interrupted or failed run removes its temporary file (interrupt.c) and
 * leaves the previous output as it was.
 */
#ifndef PREFLIGHT_IO_H
#define PREFLIGHT_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#ifndef PF_PATH_MAX
#define PF_PATH_MAX 1024
#endif

/* Read a whole file into a NUL-terminated buffer (caller frees *buf); *len
 * excludes the terminator.  "-" reads standard input.  A file larger than
 * max_bytes (0: no limit) is PF_EPARSE, refused before reading when its size
 * is known; a directory is PF_EIO; PF_ENOENT / PF_EIO / PF_ENOMEM name path. */
int pf_read_file(const char *path, size_t max_bytes, char **buf, size_t *len);
/* Read a descriptor (a pipe from a back-end) to its end the same way; what
 * names it in messages; more than about max_bytes (0: no limit) is PF_EIO. */
int pf_read_fd(int fd, const char *what, size_t max_bytes, char **buf, size_t *len);

/* Open a file for streaming reads ("-": standard input).  *size_B is its size
 * when it is a regular file, else -1.  Close with fclose(). */
int pf_input_open(const char *path, FILE **f, long long *size_B);

typedef enum { PF_OUT_STDOUT, PF_OUT_STREAM, PF_OUT_REPLACE } pf_out_kind;

typedef struct pf_output {
  pf_out_kind kind;
  char path[PF_PATH_MAX];   /* as the user gave it (messages) */
  char target[PF_PATH_MAX]; /* the file written: symlinks followed */
  char tmp[PF_PATH_MAX];    /* the temporary file while open, else "" */
  unsigned mode;            /* permission bits the result gets */
  bool exists;              /* the target existed at the check */
  long uid, gid;            /* its owner (kept when we may) */
  FILE *f;                  /* while open; owned */
} pf_output;

/* Decide how path will be written and refuse what cannot be (see above).
 * `what` names the option in messages ("-o", "--plot", "--trace").  NULL or
 * "-": standard output.  Returns 0 or PF_EIO / PF_EINVAL with the reason. */
int pf_output_check(const char *path, const char *what, pf_output *o);
/* a and b name the same regular file (same device and inode: through
 * symbolic links and hard links alike); false when either is missing. */
bool pf_same_file(const char *a, const char *b);
/* Start writing; *f is valid until commit or abort. */
int pf_output_open(pf_output *o, FILE **f);
/* Finish: flush and rename / copy in place / close the stream.  On failure the
 * temporary file is removed and the target is unchanged (except a stream or
 * an in-place rewrite that failed half-way, which the message says). */
int pf_output_commit(pf_output *o);
/* Give up: remove the temporary file; the target is unchanged. */
void pf_output_abort(pf_output *o);
/* open + write len bytes + commit. */
int pf_output_write(pf_output *o, const char *text, size_t len);

/* A temporary file in $TMPDIR (else /tmp) named stem-XXXXXXXX, created
 * exclusively and registered for removal on a signal (interrupt.c); for the
 * simulation engines' platform files.  Remove with pf_temp_remove(). */
int pf_temp_create(const char *stem, char *path, size_t n, FILE **f);

/* Write / read exactly n bytes of a file descriptor, retrying on EINTR (0 or
 * -1): the worker pipes (workers.c) and the in-place rewrite
 * of an output (copy_in_place) alike. */
int pf_write_all(int fd, const void *src, size_t n);
int pf_read_all(int fd, void *dst, size_t n);
void pf_temp_remove(const char *path);

/* The names in folder dir, those starting with '.' left out, in strcmp order (a folder read the same way
 * whatever order the file system lists it in); free with pf_dir_names_free.  0, PF_ENOENT naming dir, or
 * PF_ENOMEM. */
int pf_dir_names(const char *dir, char ***names, int *n);
void pf_dir_names_free(char **names, int n);
/* A file of the program's own (a cache entry, never a user's output): len bytes to a private temporary file
 * beside path (0600, registered with interrupt.c), renamed over path; 0 or PF_EIO.  No test hook and no
 * owner or mode kept, which pf_output_write does for the user's files. */
int pf_write_private(const char *path, const char *buf, size_t len);
/* check + write in one step, for outputs the library writes itself (traces). */
int pf_write_file_atomic(const char *path, const char *text);
/* The same for len bytes (figures: PDF and PNG hold zero bytes); `what` names the option in messages. */
int pf_write_bytes_atomic(const char *path, const char *what, const char *buf, size_t len);

#endif
