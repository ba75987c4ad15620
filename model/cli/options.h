/* options.h - one option table drives parsing, scenario files and --help.
 *
 * Options are collected as (name, value) pairs; a scenario file (libconfig)
 * contributes the same pairs from its keys first, so the command line
 * overrides the file.  Each command then reads the pairs it knows.
 */
#ifndef PREFLIGHT_CLI_OPTIONS_H
#define PREFLIGHT_CLI_OPTIONS_H

#include "preflight/plan.h"
#include <stdbool.h>
#include <stdio.h>

typedef struct pf_opt {
  const char *name;  /* long name without dashes; "o" for -o */
  const char *arg;   /* argument placeholder, NULL for flags */
  const char *help;
} pf_opt;

#define PF_MAXVALS 96
#define PF_MAXPOSITIONAL 4096 /* `preflight merge` takes every shard file of a study */
typedef struct pf_optvals {
  int n;
  const char *name[PF_MAXVALS];
  char *value[PF_MAXVALS];     /* owned; "1" for flags */
  char source[PF_MAXVALS][PF_PATH_MAX]; /* "command line" or "file:line" */
  const char *positional[PF_MAXPOSITIONAL];
  int npositional;
  bool help;
} pf_optvals;

extern const pf_opt pf_scenario_opts[]; /* shared by predict, sweep, ... (NULL-terminated) */
extern const pf_opt pf_output_opts[];
/* Each command's own options; a scenario file may hold any of them, and a
 * command skips the settings that belong to another one. */
extern const pf_opt pf_sweep_opts[], pf_plan_opts[], pf_tune_opts[], pf_compare_opts[];

/* Parse argv (after the command name) against the NULL-terminated tables.
 * Returns 0 or PF_EINVAL naming the option (and listing near names). */
int pf_opts_parse(int argc, char **argv, const pf_opt *const *tables, pf_optvals *v);
void pf_opts_free(pf_optvals *v);
/* Give name the value (replacing every earlier value; "command line" as its
 * source), or remove it when value is NULL (a flag switched off).  Returns 0
 * or PF_EINVAL / PF_ENOMEM. */
int pf_opts_set(pf_optvals *v, const char *name, const char *value);
/* The same with the source named in messages ("file.csv:12"). */
int pf_opts_set_from(pf_optvals *v, const char *name, const char *value, const char *source);
/* The option row for name in the scenario options (NULL if there is none). */
const pf_opt *pf_opts_find_scenario(const char *name);
/* Last value given for name, or NULL. */
const char *pf_opts_get(const pf_optvals *v, const char *name);
const char *pf_opts_source(const pf_optvals *v, const char *name);

/* Read a scenario file's settings as option pairs placed before the command
 * line's, so the command line overrides them. */
int pf_opts_load_scenario(const char *path, const pf_opt *const *tables, pf_optvals *v);

/* Build a scenario from the pairs: machine, model or custom shape, plan. */
int pf_opts_scenario(const pf_optvals *v, pf_scenario *sc);

/* Integer / double option with strict parsing; returns 0 if absent (leaves *out). */
int pf_opts_int(const pf_optvals *v, const char *name, int *out);
int pf_opts_double(const pf_optvals *v, const char *name, double *out);

/* Output format: table (default), json or csv; from --format or -o suffix. */
typedef enum { PF_FMT_TABLE, PF_FMT_JSON, PF_FMT_CSV } pf_format;
int pf_opts_format(const pf_optvals *v, pf_format *fmt);

void pf_opts_help(FILE *f, const char *usage, const pf_opt *const *tables, const char *examples);

/* Parse a command's arguments with the scenario options plus its own table
 * `extra` (NULL: none), and read the positional SCENARIO.cfg if given, so the
 * command line overrides it (cmd_predict.c). */
int pf_cli_scenario_args(const char *cmd, int argc, char **argv, const pf_opt *extra, pf_optvals *v);

/* "16,32,64" or "1..64" (doubling) into out[0..*n) (cmd_sweep.c). */
int pf_cli_parse_nodes(const char *s, int *out, int max, int *n);

/* Emit text to -o FILE (atomically) or stdout. */
int pf_opts_emit(const pf_optvals *v, const char *text);

#endif
