/* validate_cli.h - the command line's side of validation: how a row becomes a
 * scenario (validate_rows.c), the per-machine fit (validate_fit.c) and a
 * Megatron-LM log (validate_megatron.c). */
#ifndef PREFLIGHT_CLI_VALIDATE_H
#define PREFLIGHT_CLI_VALIDATE_H

#include "options.h"
#include "validate_out.h"

#include "study/study.h"

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

/* The prediction intervals of a command (intervals.c): the pool of the validation folder's rows. */
typedef struct pf_cli_intervals {
  pf_optvals none;         /* the rows as measured: no option of the command */
  pf_vrow_defaults vd;
  pf_validate_opts vo;
  pf_ipool *pool;          /* NULL when not opened */
  char dir[PF_PATH_MAX];
} pf_cli_intervals;
/* Open the pool of dir (NULL: pf_validation_dir()).  0 or a negative code (unreadable folder or CSV). */
int pf_cli_intervals_open(pf_cli_intervals *ci, const char *dir);
/* p->interval for scenario sc, with its efficiency factors when asked (nothing when the pool is not open).
 * 0 or PF_ENOMEM. */
int pf_cli_intervals_of(pf_cli_intervals *ci, const pf_scenario *sc, bool efficiency, pf_prediction *p);
void pf_cli_intervals_close(pf_cli_intervals *ci);

/* validate --coverage DIR: the leave-one-group-out coverage of the prediction intervals
 * (validate_cover.c).  Returns the exit status (errors reported). */
int pf_cli_validate_coverage(pf_cli *cli, const char *dir, pf_format fmt, bool energy);

/* validate --fit RUNS.csv: one fit per machine (or --fit-group COLUMN); the
 * report in fmt on standard output, the overlays to -o. */
int pf_cli_validate_fit(pf_cli *cli, const char *path, pf_format fmt);

/* validate --megatron-log FILE: the log's iterations against the prediction
 * for its configuration (its argument dump, then scen: the scenario options
 * given).  Returns the exit status (errors reported). */
int pf_cli_validate_megatron(pf_cli *cli, const pf_optvals *scen, const char *path);

/* --max-error P (cmd_validate.c): *status 1 when the median absolute error of
 * s exceeds P percent or no row was predicted (said on stderr).  Returns 0 or
 * the option's error. */
int pf_cli_check_max_error(const pf_optvals *v, const pf_vsum *s, int *status);

#endif
