/* formats.h - `preflight`'s output formats: one row per format in one table
 * (formats.c), and one renderer per document kind and format behind it.
 *
 * A row names the format (--format NAME, an alias such as "md"), the -o
 * suffixes that imply it, and the format's renderers (fmt_table.c,
 * fmt_json.c, fmt_csv.c, fmt_markdown.c, fmt_tex.c: one file per format).  Parsing
 * --format, inferring it from -o FILE.suffix and the "valid: ..." messages
 * read the table, so a format's names are written once.  A command hands its
 * document (a prediction, compare rows, a tune ranking, ...) to the renderer
 * of its kind for the asked format; a NULL renderer means the format does not
 * write that document, and the command says so.
 */
#ifndef PREFLIGHT_CLI_FORMATS_H
#define PREFLIGHT_CLI_FORMATS_H

#include "comm/comm.h"
#include "compute/compute.h"
#include "machine/machine.h"
#include "study/study.h"

#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdio.h>

/* The formats, by their row in the table (formats.c); PF_FMT_TABLE is the default. */
typedef enum { PF_FMT_TABLE, PF_FMT_JSON, PF_FMT_CSV, PF_FMT_MARKDOWN, PF_FMT_TEX, PF_FMT_COUNT } pf_format;
/* A set of formats, for the opt-in formats a command offers. */
#define PF_FMT_BIT(f) (1u << (f))

/* ---- the documents a renderer is handed ---- */

/* compare: one machine's row; rc 0 (predicted) or the PF_E* code that is its
 * answer (PF_ENOFIT: does not fit; other: invalid plan); note is the warning
 * (rc 0) or the reason. */
typedef struct pf_compare_row {
  const char *id;          /* the machine as given in --machines */
  const pf_scenario *sc;   /* borrowed */
  const pf_prediction *p;  /* borrowed */
  int rc;
  const char *note;
} pf_compare_row;

/* collective: one collective priced over sizes on each node count (cmd_collective.c). */
#define PF_COLL_DOC_MAX_SIZES 128
typedef struct pf_coll_run {
  int nodes, gpn, ranks;
  int n;
  double size[PF_COLL_DOC_MAX_SIZES];
  pf_coll_result r[PF_COLL_DOC_MAX_SIZES];
  double avg_busbw;
} pf_coll_run;
typedef struct pf_coll_doc {
  const pf_machine *m;          /* borrowed */
  pf_coll_kind op;
  const char *dtype;            /* nccl-tests' name: float, half, ... */
  double dtype_size;            /* B per element */
  pf_placement pl;
  unsigned long seed;
  const pf_coll_run *runs;      /* borrowed, nr of them */
  int nr;
} pf_coll_doc;

/* validate --fit: one group's fit (validate_fit.c). */
typedef struct pf_fit_doc {
  const char *path, *group;     /* the runs; the group (its value of --fit-group) */
  const pf_fit_result *fr;      /* borrowed */
  pf_vstats before, after;      /* |error| of the group's predicted rows before and after the fit */
  const char *overlay;          /* the overlay written, or NULL */
} pf_fit_doc;

/* A document written row by row: out is where it goes; items holds the JSON
 * renderer's rows until its end function prints them (owned by the document). */
typedef struct pf_doc {
  FILE *out;
  cJSON *items;
} pf_doc;

struct plan_doc; /* plan.h */
struct pf_vemit; /* validate_out.h: a validation report being written */
struct pf_optvals; /* options.h */

/* validate --megatron-log: the log, its configuration and its rows (validate_megatron.c). */
typedef struct pf_megatron_doc {
  const pf_megatron_log *log;   /* borrowed, as every member */
  const pf_scenario *chk;       /* the configuration, checked */
  const pf_vset *s;             /* the log's metrics as predicted validation rows */
  const struct pf_optvals *v;   /* the scenario's options: the CSV rows' columns */
  const char *notes, *path;     /* what was read from the log; the log */
} pf_megatron_doc;

/* One format's renderers, one per document kind; NULL: this format does not write it. */
typedef struct pf_doc_renderers {
  /* predict: a prediction, or (nofit != NULL) a plan that does not fit and why */
  void (*prediction)(FILE *f, const pf_scenario *sc, const pf_prediction *p, const char *nofit);
  /* compare: begin, one call per machine, end */
  void (*compare_begin)(pf_doc *d);
  void (*compare_row)(pf_doc *d, const pf_compare_row *r);
  void (*compare_end)(pf_doc *d);
  /* models: the built-in list; models show ID */
  void (*models)(FILE *f);
  void (*model)(FILE *f, const pf_workload *w);
  /* machines: the list (ms: its n machines, loaded in list order); machines show ID
   * (measured: m with --calibration's rates applied, or NULL without it) */
  void (*machines)(FILE *f, const pf_machine *ms, int n);
  void (*machine)(FILE *f, const pf_machine *m, const pf_machine *measured);
  /* tune: the ranking (ctx: the study's context object) */
  void (*tune)(FILE *f, const cJSON *ctx, const pf_tune_result *r, const pf_tune_config *o);
  /* collective: nccl-tests' columns */
  void (*collective)(FILE *f, const pf_coll_doc *d);
  /* sweep: ctx the study's description, rows with scaling efficiency added (results.h) */
  void (*sweep)(FILE *f, const cJSON *ctx, const cJSON *rows);
  /* kernels: every kernel of one GPU's iteration, priced (compute.h, pf_stage_kernel_rows) */
  void (*kernels)(FILE *f, const pf_scenario *sc, const pf_kernel_rows *R);
  /* plan: the proposal's scales (plan.h); plot: the SVG the Markdown section shows, or NULL */
  void (*plan)(FILE *f, const struct plan_doc *d, const char *plot);
  /* validate RUNS.csv: the report streamed row by row (validate_out.c keeps the
   * summary in e->sum before each row); begin takes head (the JSON members
   * before "rows", deleted by the other formats); each returns 0 or a PF_E* code */
  int (*validate_begin)(struct pf_vemit *e, cJSON *head);
  int (*validate_row)(struct pf_vemit *e, const pf_vrow *r);
  int (*validate_end)(struct pf_vemit *e);
  /* validate on measured collectives (validate_coll.c); rows: false with --summary-only */
  void (*collval)(FILE *f, const pf_cvset *s, bool rows);
  /* validate --megatron-log: the report; the rows' errors into e->sum for --max-error
   * (e zeroed by the caller); 0 or a PF_E* code */
  int (*megatron)(FILE *f, const pf_megatron_doc *d, struct pf_vemit *e);
  /* validate --fit, before its rows (validate_*): fit_begin returns the JSON
   * document the fits go in (caller owns it; NULL for the text formats), then
   * one fit_group per group and, with several, fit_loo_all (every group's
   * left-out rows together); text to f, JSON into head */
  cJSON *(*fit_begin)(const char *path, const char *col);
  void (*fit_group)(FILE *f, cJSON *head, const pf_fit_doc *d);
  void (*fit_loo_all)(FILE *f, cJSON *head, pf_loo by, int ngroups, pf_vstats t);
} pf_doc_renderers;

/* One row of the format table. */
typedef struct pf_format_desc {
  pf_format id;
  const char *name;            /* --format NAME */
  const char *alias;           /* another name, or NULL ("md") */
  const char *suffix;          /* -o FILE.suffix implies the format, or NULL */
  bool opt_in;                 /* valid only where the command allows it (markdown, tex) */
  bool text;                   /* a text table for a reader (not a machine format) */
  const pf_doc_renderers *r;   /* its renderers */
} pf_format_desc;

/* The row of a format (never NULL for a pf_format). */
const pf_format_desc *pf_format_get(pf_format id);
/* The renderers of a format. */
const pf_doc_renderers *pf_fmt(pf_format id);
/* The format a name (or alias) asks for; -1 when unknown or not allowed
 * (an opt_in format needs its PF_FMT_BIT in allow_opt_in). */
int pf_format_named(const char *name, unsigned allow_opt_in);
/* The name of the format -o's suffix implies, or NULL. */
const char *pf_format_of_suffix(const char *path, unsigned allow_opt_in);
/* Does the format write the document kind at doc (PF_DOC(kind) of options.h;
 * 0: any), opt-in formats only with allow_opt_in? */
bool pf_format_offers(pf_format id, size_t doc, bool allow_opt_in);
/* The formats that write doc, ", "-separated, into buf; with_suffix adds
 * each one's -o suffix ("table, json (.json), csv (.csv)"). */
const char *pf_format_list_for(char *buf, size_t size, size_t doc, bool allow_opt_in, bool with_suffix);
/* The format whose -o suffix is sfx ("json"), whatever a command offers; -1 when none. */
int pf_format_of_ext(const char *sfx);

/* The network kind's parameters in one line (its describe function,
 * machine/network.h), "?" without a kind; returns buf. */
const char *pf_fmt_net_params(const pf_machine *m, char *buf, size_t n);

/* The formats' renderers (one file each). */
extern const pf_doc_renderers pf_fmt_table_renderers, pf_fmt_json_renderers, pf_fmt_csv_renderers,
    pf_fmt_markdown_renderers, pf_fmt_tex_renderers;
/* JSON renderers kept in a file of their own by document kind (fmt_json_machines.c, fmt_json_models.c). */
void pf_fmt_json_machines(FILE *f, const pf_machine *ms, int n);
void pf_fmt_json_machine(FILE *f, const pf_machine *m, const pf_machine *measured);
void pf_fmt_json_models(FILE *f);
void pf_fmt_json_model(FILE *f, const pf_workload *w);
/* Table renderers kept in a file of their own by document kind (fmt_table_coll.c). */
void pf_fmt_table_collective(FILE *f, const pf_coll_doc *d);
void pf_fmt_table_collval(FILE *f, const pf_cvset *s, bool rows);

#endif
