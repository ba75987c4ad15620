/* csv.h - a small, strict CSV reader (RFC 4180, csv.c): whole files or one
 * record at a time; errors name file:line:field. */
#ifndef PREFLIGHT_CSV_H
#define PREFLIGHT_CSV_H

#include "core/core.h"

#include <stdio.h>

/* ---- CSV reader (csv.c): RFC 4180 with '#' comment lines ---- */

typedef struct pf_csv_row {
  int line;          /* 1-based line where the record starts */
  int nfields;
  char **fields;     /* owned; unquoted */
} pf_csv_row;

typedef struct pf_csv {
  char path[PF_PATH_MAX];
  int nrows;         /* records, header included */
  pf_csv_row *rows;
} pf_csv;

/* Parse text (name is used in messages). Records may span lines inside quotes;
 * lines starting with '#' outside quotes and blank lines are skipped.
 * PF_EPARSE names name:line (unterminated quote, stray quote). Caller frees
 * with pf_csv_free(). */
int pf_csv_parse(const char *text, size_t len, const char *name, pf_csv *out);
int pf_csv_read(const char *path, pf_csv *out);
void pf_csv_free(pf_csv *c);

/* Streaming: one record at a time in constant memory ("-" reads stdin). */
typedef struct pf_csv_reader pf_csv_reader;
int pf_csv_open(const char *path, pf_csv_reader **r);
/* 1: *row holds the next record (free with pf_csv_row_free), 0: end of
 * file, < 0: malformed (PF_EPARSE naming file:line:field) or unreadable. */
int pf_csv_next(pf_csv_reader *r, pf_csv_row *row);
void pf_csv_row_free(pf_csv_row *row);
long long pf_csv_pos(const pf_csv_reader *r);  /* bytes consumed */
long long pf_csv_size(const pf_csv_reader *r); /* file size, -1 for a pipe */
const char *pf_csv_name(const pf_csv_reader *r);
void pf_csv_close(pf_csv_reader *r);
/* Write one field, quoted when it holds a comma, quote or newline. */
void pf_csv_put(FILE *f, const char *s);

#endif
