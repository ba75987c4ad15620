/* csv.c - a small, strict CSV reader (RFC 4180) for validation files.
 *
 * Fields are separated by commas; a field may be quoted with '"', inside
 * which commas, newlines and doubled quotes ("") are literal.  CRLF and LF
 * line ends are accepted.  Outside quotes, a line whose first character is
 * '#' is a comment and blank lines are skipped, so validation files can carry
 * a provenance header.  Every record remembers the line it starts on, so
 * later checks can name file:line:field.  A UTF-8 byte-order mark is skipped.
 */
#include "preflight/error.h"
#include "preflight/report.h"
#include "preflight/validate.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  char *buf;
  size_t len, cap;
} sbuf;

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

static int row_add_field(pf_csv_row *r, sbuf *b, int *cap) {
  if (r->nfields == *cap) {
    int nc = *cap ? 2 * *cap : 16;
    char **n = realloc(r->fields, (size_t)nc * sizeof *n);
    if (!n) return PF_ENOMEM;
    r->fields = n;
    *cap = nc;
  }
  char *s = strdup(b->buf ? b->buf : "");
  if (!s) return PF_ENOMEM;
  r->fields[r->nfields++] = s;
  b->len = 0;
  if (b->buf) b->buf[0] = '\0';
  return 0;
}

static void row_free(pf_csv_row *r) {
  for (int i = 0; i < r->nfields; i++) free(r->fields[i]);
  free(r->fields);
  r->fields = NULL;
  r->nfields = 0;
}

void pf_csv_free(pf_csv *c) {
  for (int i = 0; i < c->nrows; i++) row_free(&c->rows[i]);
  free(c->rows);
  c->rows = NULL;
  c->nrows = 0;
}

int pf_csv_parse(const char *text, size_t len, const char *name, pf_csv *out) {
  memset(out, 0, sizeof *out);
  snprintf(out->path, sizeof out->path, "%s", name);
  sbuf b = {0};
  int rowcap = 0, fieldcap = 0, rc = 0;
  size_t i = 0;
  int line = 1;
  if (len >= 3 && (unsigned char)text[0] == 0xEF && (unsigned char)text[1] == 0xBB && (unsigned char)text[2] == 0xBF)
    i = 3; /* a UTF-8 byte-order mark, as spreadsheet programs write */
  while (i < len && rc == 0) {
    /* start of a record: skip comments and blank lines */
    if (text[i] == '#' || text[i] == '\n' || (text[i] == '\r' && i + 1 < len && text[i + 1] == '\n')) {
      while (i < len && text[i] != '\n') i++;
      if (i < len) i++;
      line++;
      continue;
    }
    pf_csv_row r = {.line = line};
    fieldcap = 0;
    bool end_of_record = false;
    while (!end_of_record && rc == 0) {
      /* one field */
      if (i < len && text[i] == '"') {
        int qline = line;
        i++;
        for (;;) {
          if (i >= len) {
            rc = pf_error_set(PF_EPARSE, "%s:%d: field %d: unterminated quoted field", name, qline, r.nfields + 1);
            break;
          }
          char c = text[i++];
          if (c == '"') {
            if (i < len && text[i] == '"') { if ((rc = sb_put(&b, '"')) < 0) break; i++; continue; }
            break;
          }
          if (c == '\n') line++;
          if ((rc = sb_put(&b, c)) < 0) break;
        }
        if (rc < 0) break;
        if (i < len && text[i] != ',' && text[i] != '\n' && text[i] != '\r') {
          rc = pf_error_set(PF_EPARSE, "%s:%d: field %d: characters after a closing quote", name, line, r.nfields + 1);
          break;
        }
      } else {
        while (i < len && text[i] != ',' && text[i] != '\n' && !(text[i] == '\r' && (i + 1 >= len || text[i + 1] == '\n'))) {
          if (text[i] == '"') {
            rc = pf_error_set(PF_EPARSE, "%s:%d: field %d: quote inside an unquoted field", name, line, r.nfields + 1);
            break;
          }
          if ((rc = sb_put(&b, text[i])) < 0) break;
          i++;
        }
        if (rc < 0) break;
      }
      if ((rc = row_add_field(&r, &b, &fieldcap)) < 0) break;
      if (i >= len) { end_of_record = true; break; }
      if (text[i] == ',') { i++; continue; }
      if (text[i] == '\r') i++;
      if (i < len && text[i] == '\n') i++;
      line++;
      end_of_record = true;
    }
    if (rc < 0) { row_free(&r); break; }
    if (out->nrows == rowcap) {
      int nc = rowcap ? 2 * rowcap : 64;
      pf_csv_row *n = realloc(out->rows, (size_t)nc * sizeof *n);
      if (!n) { row_free(&r); rc = pf_error_set(PF_ENOMEM, "out of memory"); break; }
      out->rows = n;
      rowcap = nc;
    }
    out->rows[out->nrows++] = r;
  }
  free(b.buf);
  if (rc == PF_ENOMEM) pf_error_set(PF_ENOMEM, "%s: out of memory", name);
  if (rc < 0) pf_csv_free(out);
  return rc;
}

int pf_csv_read(const char *path, pf_csv *out) {
  memset(out, 0, sizeof *out);
  char *buf;
  size_t len;
  int rc0 = pf_read_file(path, 0, &buf, &len);
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
