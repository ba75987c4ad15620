/* csv.c - a small, strict CSV reader (RFC 4180) for validation files.
 *
 * Fields are separated by commas; a field may be quoted with '"', inside
 * which commas, newlines and doubled quotes ("") are literal.  CRLF and LF
 * line ends are accepted.  Outside quotes, a line whose first character is
 * '#' is a comment and blank lines are skipped, so validation files can carry
 * a provenance header.  Every record remembers the line it starts on, so
 * later checks can name file:line:field.  A UTF-8 byte-order mark is skipped.
 *
 * The reader streams: pf_csv_next() returns one record at a time from a FILE,
 * so a file of any size is read in constant memory (a field is limited to
 * 1 MiB and a record to 4096 fields, so a malformed file cannot exhaust it).
 * pf_csv_parse() runs the same reader over a buffer.
 */
#include "core/core.h"
#include "csv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MAX_FIELD_B (1 << 20)
#define MAX_FIELDS 4096
/* A record (one row, its fields together) at most 4 MiB: the streamed reader holds one record, so a file
 * of any size costs at most this (MAX_FIELDS fields of MAX_FIELD_B would be 4 GiB); a validation row
 * is about 300 bytes, a GEMM table row 50 (docs/bounds.md). */
#define MAX_RECORD_B (4 << 20)

typedef struct {
  char *buf;
  size_t len, cap;
} sbuf;

struct pf_csv_reader {
  FILE *f;
  bool own;                 /* close f at the end */
  char name[PF_PATH_MAX];
  int line;                 /* current line (1-based) */
  long long pos, size;      /* bytes consumed; file size or -1 */
  int pend[4], npend;       /* pushed-back characters (a stack) */
  bool started;
  sbuf b;
  size_t record_B;          /* bytes of the record being read */
};

static int sb_put(sbuf *b, char c) {
  if (b->len + 1 >= b->cap) {
    size_t cap = b->cap ? 2 * b->cap : 64;
    char *n = realloc(b->buf, cap);
    if (!n) return PF_ENOMEM;
    b->buf = n;
    b->cap = cap;
  }
  b->buf[b->len++] = c;
  b->buf[b->len] = '\0';
  return 0;
}

static int get(pf_csv_reader *r) {
  if (r->npend > 0) return r->pend[--r->npend];
  int c = getc(r->f);
  if (c != EOF) r->pos++;
  return c;
}

static void unget(pf_csv_reader *r, int c) {
  if (c != EOF && r->npend < 4) r->pend[r->npend++] = c;
}

static int peek(pf_csv_reader *r) {
  int c = get(r);
  unget(r, c);
  return c;
}

/* The character after the next one, without consuming either. */
static int peek2(pf_csv_reader *r) {
  int a = get(r), b = get(r);
  unget(r, b);
  unget(r, a);
  return b;
}

static int row_add_field(pf_csv_row *row, sbuf *b, int *cap) {
  if (row->nfields == *cap) {
    int nc = *cap ? 2 * *cap : 16;
    char **n = realloc(row->fields, (size_t)nc * sizeof *n);
    if (!n) return PF_ENOMEM;
    row->fields = n;
    *cap = nc;
  }
  char *s = strdup(b->buf ? b->buf : "");
  if (!s) return PF_ENOMEM;
  row->fields[row->nfields++] = s;
  b->len = 0;
  if (b->buf) b->buf[0] = '\0';
  return 0;
}

void pf_csv_row_free(pf_csv_row *r) {
  for (int i = 0; i < r->nfields; i++) free(r->fields[i]);
  free(r->fields);
  r->fields = NULL;
  r->nfields = 0;
}

void pf_csv_free(pf_csv *c) {
  for (int i = 0; i < c->nrows; i++) pf_csv_row_free(&c->rows[i]);
  free(c->rows);
  c->rows = NULL;
  c->nrows = 0;
}

static int reader_init(pf_csv_reader *r, FILE *f, bool own, const char *name, long long size) {
  memset(r, 0, sizeof *r);
  r->f = f;
  r->own = own;
  r->line = 1;
  r->size = size;
  snprintf(r->name, sizeof r->name, "%s", name);
  return 0;
}

int pf_csv_open(const char *path, pf_csv_reader **out) {
  *out = NULL;
  FILE *f;
  long long size;
  int rc = pf_input_open(path, &f, &size);
  if (rc < 0) return rc;
  pf_csv_reader *r = malloc(sizeof *r);
  if (!r) {
    if (f != stdin) fclose(f);
    return pf_error_set(PF_ENOMEM, "out of memory");
  }
  reader_init(r, f, f != stdin, path, size);
  *out = r;
  return 0;
}

void pf_csv_close(pf_csv_reader *r) {
  if (!r) return;
  if (r->own && r->f) fclose(r->f);
  free(r->b.buf);
  free(r);
}

long long pf_csv_pos(const pf_csv_reader *r) { return r->pos; }
long long pf_csv_size(const pf_csv_reader *r) { return r->size; }
const char *pf_csv_name(const pf_csv_reader *r) { return r->name; }

/* A field character: NUL bytes mean the file is not text. */
static int put(pf_csv_reader *r, int c, int field) {
  if (c == '\0') return pf_error_set(PF_EPARSE, "%s:%d: binary data (NUL byte) in a CSV file", r->name, r->line);
  if (r->b.len >= MAX_FIELD_B)
    return pf_error_set(PF_EPARSE, "%s:%d: field %d: longer than %d bytes", r->name, r->line, field, MAX_FIELD_B);
  if (++r->record_B > MAX_RECORD_B)
    return pf_error_set(PF_EPARSE, "%s:%d: a record longer than %d bytes, the most a CSV row may hold", r->name,
                        r->line, MAX_RECORD_B);
  return sb_put(&r->b, (char)c) < 0 ? pf_error_set(PF_ENOMEM, "%s: out of memory", r->name) : 0;
}

int pf_csv_next(pf_csv_reader *r, pf_csv_row *row) {
  memset(row, 0, sizeof *row);
  if (ferror(r->f)) return pf_error_set(PF_EIO, "%s: read error", r->name);
  if (!r->started) { /* a UTF-8 byte-order mark, as spreadsheet programs write */
    r->started = true;
    int a = get(r), b = a == 0xEF ? get(r) : EOF, c = b == 0xBB ? get(r) : EOF;
    if (!(a == 0xEF && b == 0xBB && c == 0xBF)) {
      unget(r, c);
      unget(r, b);
      unget(r, a);
    }
  }
  for (;;) { /* start of a record: skip comments and blank lines */
    int c = peek(r);
    if (c == EOF) return ferror(r->f) ? pf_error_set(PF_EIO, "%s: read error", r->name) : 0;
    if (c == '#' || c == '\n' || (c == '\r' && peek2(r) == '\n')) {
      while ((c = get(r)) != EOF && c != '\n') {
        if (c == '\0') return pf_error_set(PF_EPARSE, "%s:%d: binary data (NUL byte) in a CSV file", r->name, r->line);
      }
      r->line++;
      continue;
    }
    break;
  }
  row->line = r->line;
  r->record_B = 0;
  int cap = 0, rc = 0;
  for (;;) { /* one field */
    int field = row->nfields + 1, c = peek(r);
    if (field > MAX_FIELDS) {
      rc = pf_error_set(PF_EPARSE, "%s:%d: more than %d fields", r->name, row->line, MAX_FIELDS);
      break;
    }
    if (c == '"') {
      int qline = r->line;
      get(r);
      for (;;) {
        c = get(r);
        if (c == EOF) {
          rc = pf_error_set(PF_EPARSE, "%s:%d: field %d: unterminated quoted field", r->name, qline, field);
          break;
        }
        if (c == '"') {
          if (peek(r) == '"') {
            get(r);
            if ((rc = put(r, '"', field)) < 0) break;
            continue;
          }
          break;
        }
        if (c == '\n') r->line++;
        if ((rc = put(r, c, field)) < 0) break;
      }
      if (rc < 0) break;
      c = peek(r);
      if (c != EOF && c != ',' && c != '\n' && c != '\r') {
        rc = pf_error_set(PF_EPARSE, "%s:%d: field %d: characters after a closing quote", r->name, r->line, field);
        break;
      }
    } else {
      while ((c = peek(r)) != EOF && c != ',' && c != '\n') {
        if (c == '\r') {
          int n2 = peek2(r);
          if (n2 == EOF || n2 == '\n') break;
        }
        if (c == '"') {
          rc = pf_error_set(PF_EPARSE, "%s:%d: field %d: quote inside an unquoted field", r->name, r->line, field);
          break;
        }
        get(r);
        if ((rc = put(r, c, field)) < 0) break;
      }
      if (rc < 0) break;
    }
    if (row_add_field(row, &r->b, &cap) < 0) {
      rc = pf_error_set(PF_ENOMEM, "%s: out of memory", r->name);
      break;
    }
    c = get(r);
    if (c == EOF) break;
    if (c == ',') continue;
    if (c == '\r' && peek(r) == '\n') get(r);
    r->line++;
    break;
  }
  if (rc < 0) {
    pf_csv_row_free(row);
    return rc;
  }
  if (ferror(r->f)) {
    pf_csv_row_free(row);
    return pf_error_set(PF_EIO, "%s: read error", r->name);
  }
  return 1;
}

int pf_csv_parse(const char *text, size_t len, const char *name, pf_csv *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->path, sizeof out->path, "%s", name);
  if (len == 0) return 0;
  FILE *f = fmemopen((void *)text, len, "r");
  if (!f) return pf_error_set(PF_ENOMEM, "%s: out of memory", name);
  pf_csv_reader r;
  reader_init(&r, f, true, name, (long long)len);
  int rowcap = 0, rc;
  pf_csv_row row;
  while ((rc = pf_csv_next(&r, &row)) > 0) {
    if (out->nrows == rowcap) {
      int nc = rowcap ? 2 * rowcap : 64;
      pf_csv_row *n = realloc(out->rows, (size_t)nc * sizeof *n);
      if (!n) {
        pf_csv_row_free(&row);
        rc = pf_error_set(PF_ENOMEM, "%s: out of memory", name);
        break;
      }
      out->rows = n;
      rowcap = nc;
    }
    out->rows[out->nrows++] = row;
  }
  fclose(f);
  free(r.b.buf);
  if (rc < 0) pf_csv_free(out);
  return rc < 0 ? rc : 0;
}

int pf_csv_read(const char *path, pf_csv *out) {
  memset(out, 0, sizeof *out);
  char *buf;
  size_t len;
  int rc0 = pf_read_file(path, (size_t)256 << 20, &buf, &len); /* larger files: pf_csv_open streams */
  if (rc0 < 0) return rc0;
  if (memchr(buf, '\0', len)) { free(buf); return pf_error_set(PF_EPARSE, "%s: binary data (NUL byte) in a CSV file", path); }
  int rc = pf_csv_parse(buf, len, path, out);
  free(buf);
  return rc;
}

void pf_csv_put(FILE *f, const char *s) {
  if (!s) s = "";
  if (!strpbrk(s, ",\"\n\r")) { fputs(s, f); return; }
  fputc('"', f);
  for (const char *p = s; *p; p++) {
    if (*p == '"') fputc('"', f);
    fputc(*p, f);
  }
  fputc('"', f);
}
