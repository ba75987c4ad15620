/* options.h - `preflight`'s options: one typed table per command drives
 * parsing, scenario files, the values' types and ranges and --help
 * (core/opts.h, the engine the calibration executables use too); one
 * prologue (pf_cli_begin) starts every sub-command.
 *
 * Options are collected as (name, value) pairs; a scenario file (libconfig)
 * contributes the same pairs from its keys first, so the command line
 * overrides the file, and a sweep sets them point by point.  Each command
 * then reads the pairs it knows: pf_opts_fill stores every entry that has a
 * destination, converted and checked by its type (finite, inside the
 * option's range), pf_opts_int_range and friends read one by name; messages
 * name the option or the scenario file's file:line.
 */
#ifndef PREFLIGHT_CLI_OPTIONS_H
#define PREFLIGHT_CLI_OPTIONS_H

#include "core/core.h"
#include "job/job.h"
#include "formats.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

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

/* The shared tables (opt_tables.c). */
extern const pf_opt pf_scenario_opts[]; /* shared by predict, sweep, ...; destinations in pf_scenario */
/* The groups of pf_scenario_opts: the steps of pf_opts_scenario that fill them, in this order. */
enum { PF_SCG_CUSTOM = 1, PF_SCG_SHAPE, PF_SCG_PLAN, PF_SCG_RUN };
extern const pf_opt pf_output_opts[]; /* --format, -o, --lenient, --help: every command */
/* Each command's own options; a scenario file may hold any of them, and a
 * command skips the settings that belong to another one. */
extern const pf_opt pf_sweep_opts[], pf_plan_opts[], pf_tune_opts[], pf_compare_opts[], pf_collective_opts[];

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
/* The settings of a scenario file on its own (scenario and output options). */
int pf_opts_load_scenario_file(const char *path, pf_optvals *v);

/* Build a scenario from the pairs: machine, model or custom shape, plan. */
int pf_opts_scenario(const pf_optvals *v, pf_scenario *sc);
/* The scenario of a scenario file alone (its keys as if given on the command
 * line, nothing else), built as pf_opts_scenario() builds one. */
int pf_opts_scenario_file(const char *path, pf_scenario *sc);

/* The PF_SET_* settings (job/plan.h) given either way, as --X or --no-X (a row's column, a scenario file's key). */
unsigned pf_opts_settings_given(const pf_optvals *v);
/* What the options fix in a tune search (study/tune.h PF_FIX_*): each dimension given, each setting given
 * either way.  tune, sweep --tune-each and plan read it. */
unsigned pf_opts_tune_fixed(const pf_optvals *v);
/* Set a flag on or off: on gives NAME and removes no-NAME, off gives no-NAME where the table has it (a
 * setting on by default) and otherwise removes NAME.  Returns 0 or PF_EINVAL / PF_ENOMEM. */
int pf_opts_set_flag(pf_optvals *v, const char *name, bool on, const char *source);

/* Append a (name, value) pair (value copied); source says where it came from. */
int pf_opts_add(pf_optvals *v, const char *name, const char *value, const char *source);

/* Store every entry of table in group (0: every group) that has a destination
 * and a value in v into base, converted and checked as its type says (an
 * alias before the entry it stands for).  Returns 0, or the first error,
 * naming the option, or file:line of the scenario file it came from. */
int pf_opts_fill(const pf_optvals *v, const pf_opt *table, int group, void *base);

/* Integer / double option with strict parsing; returns 0 if absent (leaves
 * *out), 1 if read, or PF_EINVAL / PF_EPARSE naming the option (or file:line
 * of the scenario file) for text that is not a number, a list, inf or NaN. */
int pf_opts_int(const pf_optvals *v, const char *name, int *out);
int pf_opts_double(const pf_optvals *v, const char *name, double *out);
/* The same, and the value must lie in [lo, hi] (the message names the range). */
int pf_opts_int_range(const pf_optvals *v, const char *name, int lo, int hi, int *out);
/* lo_open: the value must be > lo, not >= lo. */
int pf_opts_num_range(const pf_optvals *v, const char *name, double lo, bool lo_open, double hi, double *out);

void pf_opts_help(FILE *f, const char *usage, const pf_opt *const *tables, const char *examples);
/* text[0..len) into out with each @DATA@ replaced by root: help examples name the shipped sample files
 * (scenarios/examples/ ...) as @DATA@/scenarios/..., printed as the data folder the program uses
 * (core/datadir.h), so a pasted example runs from any folder. */
void pf_cli_expand_data(const char *text, size_t len, const char *root, char *out, size_t outlen);

/* "16,32,64" or "1..64" (doubling) into out[0..*n) (cmd_sweep.c). */
int pf_cli_parse_nodes(const char *s, int *out, int max, int *n);

/* ---- the prologue of every sub-command (except calibrate, whose options are
 * shared with its GPU back-end executables: calibrate/harness/output.c) ---- */

typedef struct pf_cli_spec {
  const char *cmd;               /* "predict" (messages) */
  const char *usage;             /* first lines of --help */
  const pf_opt *const *tables;   /* the command's tables, NULL-terminated; pf_output_opts is added */
  bool scenario;                 /* the first positional argument is a SCENARIO.cfg; --precision=help */
  int max_positional;            /* positional arguments allowed (the scenario file counts) */
  bool markdown;                 /* the opt-in formats (markdown, tex) are valid; a command that writes
                                    one of them only checks for its renderer (validate) */
  const char *examples;          /* copy-pasteable examples that end --help (each runs in `make test`) */
  bool many_predictions;         /* the command predicts many configurations: --trace (one iteration's
                                    timeline, one file) is refused */
  size_t doc;                    /* PF_DOC(kind): the renderer of the document the command prints; the
                                    formats that have one are offered (--format, -o's suffix), the others
                                    refused with the list */
  const char *o_own;             /* a word ("new") or option ("fit") that makes -o a file of the command's
                                    own (machines new's .cfg, validate --fit's overlay): no format suffix */
} pf_cli_spec;

/* Each command's spec (its cmd_*.c): --help, the man page and the bash completion read the same one. */
extern const pf_cli_spec *const pf_cli_spec_machines, *const pf_cli_spec_models, *const pf_cli_spec_predict,
    *const pf_cli_spec_sweep, *const pf_cli_spec_tune, *const pf_cli_spec_compare, *const pf_cli_spec_plan,
    *const pf_cli_spec_validate, *const pf_cli_spec_collective, *const pf_cli_spec_merge, *const pf_cli_spec_kernels;
/* calibrate's option table (calibrate/harness/output.c, shared with its GPU back-ends); NULL in a build
 * without calibrate/ (cmd_calibrate.c). */
const pf_opt *pf_cli_calibrate_options(void);

/* One command of `preflight` (main.c's table): its name, summary and spec (NULL: calibrate). */
typedef struct pf_cli_command {
  const char *name;
  int (*fn)(int, char **);
  const char *summary;
  const pf_cli_spec *const *spec;
} pf_cli_command;

/* The man page (roff) and the bash completion script of the commands, from their option tables and
 * specs (gendoc.c; `preflight --man`, `preflight --completion bash`, generated at build time). */
void pf_cli_man(FILE *f, const pf_cli_command *cmds, int n);
int pf_cli_completion(FILE *f, const char *shell, const pf_cli_command *cmds, int n);

/* The document kind of a pf_cli_spec: a member of pf_doc_renderers (formats.h). */
#define PF_DOC(kind) (offsetof(pf_doc_renderers, kind) + 1)

/* Output format: a row of the format table (formats.h) that has the spec's
 * document renderer, from --format or -o's suffix (docs/exit-codes.md, "Output formats and -o":
 * a known suffix gives the format, one that contradicts --format is refused,
 * an unknown suffix needs --format); table by default. */
int pf_opts_format(const pf_optvals *v, const pf_cli_spec *spec, pf_format *fmt);

typedef struct pf_cli {
  const pf_cli_spec *spec;
  pf_optvals v;
  pf_format fmt;
  pf_output out;                 /* -o (or stdout), checked before any work */
} pf_cli;

/* Parse argv (after the command name), print --help, read the scenario file,
 * decide the format, check -o and the other output files (--trace, --plot)
 * so that a typo in a folder fails before the work starts.  Returns 0 (run
 * the command), 1 (help printed: exit 0) or a negative PF_E* code (report with
 * pf_cli_fail).  Call pf_cli_end() in every case. */
int pf_cli_begin(const pf_cli_spec *spec, int argc, char **argv, pf_cli *cli);
/* Write the result (the whole text) to -o or stdout. */
int pf_cli_emit(pf_cli *cli, const char *text);
/* Free the options; returns status. */
int pf_cli_end(pf_cli *cli, int status);

#endif
