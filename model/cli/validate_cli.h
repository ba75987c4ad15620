/* validate_cli.h - the command line's side of validation: how a row becomes a
 * scenario (validate_rows.c). */
#ifndef PREFLIGHT_CLI_VALIDATE_H
#define PREFLIGHT_CLI_VALIDATE_H

#include "options.h"

#include "preflight/validate.h"

#include <cjson/cJSON.h>
#include <stdio.h>

typedef struct pf_vrow_defaults {
  const pf_optvals *cli;   /* the command's options: defaults for the rows (borrowed) */
  const char *path;        /* the CSV, for messages */
} pf_vrow_defaults;

/* Every extra column of s names a scenario option, else PF_EPARSE with the file and header line. */
int pf_cli_vset_check(const pf_vset *s);
/* pf_vrow_builder: the command's options, overridden by the row's option columns. */
int pf_cli_vrow_build(const pf_vrow *r, void *arg, pf_scenario *sc, char *why, size_t whylen);
/* Validation options that build rows with pf_cli_vrow_build (d must outlive them). */
pf_validate_opts pf_cli_validate_opts(const pf_optvals *cli, pf_vrow_defaults *d, const char *path);

/* ---- formatting (validate_report.c) ---- */

typedef enum { FMT_TABLE, FMT_JSON, FMT_CSV, FMT_MD } vfmt;

void pf_vreport_fmt_measured(const pf_vrow *r, char *b, size_t n);
void pf_vreport_fmt_value(const pf_vrow *r, double x, char *b, size_t n);
const char *pf_vreport_fmt_err(double e, char *b, size_t n);
void pf_vreport_num_or_null(cJSON *o, const char *k, double x);
cJSON *pf_vreport_stats_json(pf_vstats st);
cJSON *pf_vreport_row_json(const pf_vrow *r, bool fit);
cJSON *pf_vreport_summary_json(const pf_vset *s);
void pf_vreport_table(FILE *f, const pf_vset *s, bool rows, bool fit);
void pf_vreport_markdown(FILE *f, const pf_vset *s, bool rows);
void pf_vreport_csv(FILE *f, const pf_vset *s, bool fit);
/* Parity plots, one panel per metric. */
int pf_vreport_plot(const pf_vset *s, const char *path);

/* ---- validate --fit (validate_fit.c) ---- */

int pf_cli_validate_fit(const pf_optvals *v, const char *path, vfmt fmt);

#endif
