/* validate_out.h - the output of `preflight validate`, row by row.
 *
 * Rows are emitted as they are predicted (the CSV is streamed), and a compact
 * summary (|error| per predicted row with its metric, tag, use and machine;
 * the five worst rows; plot points) is kept for the statistics that end the
 * output.  Sections that the formats print before the rows although they
 * depend on all of them (the table's header counts, markdown's summary) are
 * written at the end, with the rows kept in an unnamed temporary file
 * meanwhile, so memory stays constant whatever the file's size.
 */
#ifndef PREFLIGHT_CLI_VALIDATE_OUT_H
#define PREFLIGHT_CLI_VALIDATE_OUT_H

#include "options.h"

#include "study/study.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

/* The summary of the rows seen so far. */
typedef struct pf_vrec {
  double abs_pct, pct;          /* |error| and signed error, percent */
  int metric;
  short group[4];               /* tag, use, machine, machine x application (names[3]: "machine model") index */
  short scope;                  /* metering scope (pf_scope) */
} pf_vrec;
typedef struct pf_vpoint { double measured, measured_hi, predicted; int line, metric, bound; } pf_vpoint;

typedef struct pf_vsum {
  int rows, not_predicted;
  int incomplete;               /* of those, rows whose input is invalid or incomplete (an exit-2 error) */
  pf_vrec *rec;                 /* predicted rows; owned */
  int nrec, cap;
  char names[4][64][64];        /* distinct tags, uses, machines, "machine model" pairs in order of appearance */
  int nnames[4];
  pf_vrow worst[5];             /* largest |error| first (earlier rows first among equals) */
  int nworst;
  int np_line[12], np_metric[12]; /* the first not-predicted rows (markdown) */
  bool want_points;
  pf_vpoint *pts;               /* predicted rows with positive values, for --plot; owned */
  int npts, ptcap;
} pf_vsum;

void pf_vsum_add(pf_vsum *s, const pf_vrow *r);
/* group -1: all; 0-2: names; 3: metric; 4: metering scope of energy and power rows (index a pf_scope) */
pf_vstats pf_vsum_stats(const pf_vsum *s, int group, int index);
/* The judged energy and power rows of one machine x application pair: their number, the mean of their signed
 * errors (percent) and the median of their |errors|. */
typedef struct pf_vgroup { const char *name; int rows; double signed_mean_pct, median_abs_pct; } pf_vgroup;
/* The pairs (names[3]) that have such rows, in order of appearance, into out[64]; returns how many. */
int pf_vsum_energy_groups(const pf_vsum *s, pf_vgroup out[64]);
/* A pair's signed mean beyond this (percent) is named in the summary: issue 27's acceptance bound. */
#define PF_VGROUP_BOUND_PCT 15.0
/* Predicted rows that are reported but not judged (tagged "regression"). */
int pf_vsum_unjudged(const pf_vsum *s);
/* Is the row judged (not tagged "regression": a known software regression, docs/validation.md)? */
bool pf_vrow_judged(const pf_vrow *r);
void pf_vsum_free(pf_vsum *s);

/* One validation report being written. */
typedef struct pf_vemit {
  pf_format fmt;
  bool rows, fit;
  FILE *out;                    /* borrowed */
  FILE *body, *np;              /* deferred sections (unnamed temporary files) */
  char path[PF_PATH_MAX];       /* the validated file, for the header lines */
  int njson;                    /* JSON rows written */
  pf_vsum sum;
} pf_vemit;

/* head (JSON only; deleted here): the members printed before "rows". */
int pf_vemit_begin(pf_vemit *e, FILE *out, pf_format fmt, const char *path, bool rows, bool fit, cJSON *head);
int pf_vemit_row(pf_vemit *e, const pf_vrow *r);
int pf_vemit_end(pf_vemit *e);  /* writes the rest and frees e's temporary files (not sum) */
void pf_vemit_abort(pf_vemit *e);

/* Parity plot (SVG) of the points, written to path (checked before). */
int pf_vplot_write(const pf_vsum *s, const char *title, const char *path);

/* ---- for the formats' validate renderers (fmt_*.c) ---- */

/* Open e's deferred sections (body, np): the formats that print a section
 * before the rows that depends on all of them (table, markdown). */
int pf_vemit_defer(pf_vemit *e);
/* Copy a deferred section from its start to `to`. */
int pf_vcopy_file(FILE *from, FILE *to);

/* Display helpers shared by the formats and the Megatron-log table. */
double pf_vdisp(const pf_vrow *r, double x);  /* scaling efficiency in percent, the rest as measured */
const char *pf_vstatus_name(pf_row_status s);
const char *pf_vmodel_name(const pf_vrow *r); /* the model, or custom / custom-tf */
void pf_vfmt_measured(const pf_vrow *r, char *b, size_t n);
void pf_vfmt_value(const pf_vrow *r, double x, char *b, size_t n);
const char *pf_vfmt_err(double e, char *b, size_t n);
void pf_vfmt_size(double b, char *buf, size_t n); /* a collective's size: "4 MiB" */
cJSON *pf_vstats_json(pf_vstats st);

/* Collective rows of this size and larger are summarized apart (bandwidth, not latency, decides). */
#define PF_CV_LARGE_B 1048576.0

#endif
