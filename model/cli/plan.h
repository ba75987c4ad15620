/* plan.h - `preflight plan`'s rows and their rendering (cmd_plan.c computes,
 * plan_render.c formats: table, CSV, JSON, Markdown for a proposal, and the
 * cost-versus-scale plot). */
#ifndef PREFLIGHT_CLI_PLAN_H
#define PREFLIGHT_CLI_PLAN_H

#include "options.h"

#include "study/study.h"

#include <stdbool.h>
#include <stdio.h>

typedef struct plan_row {
  int nodes, gpus, ok;           /* ok: a valid plan that fits */
  int within_limit;              /* nodes <= the site's per-job node limit */
  pf_plan plan;
  double t_iter_s, tflops, eff, tokens_per_s;
  double eval_iter_s;          /* one forward-only pass of the global batch (evaluation) */
  pf_budget b;
  pf_pred_interval iv;           /* the row's prediction interval (study/interval.h) */
  pf_budget lo, hi;              /* the budget at the interval's fast and slow ends (time x time_lo, x time_hi) */
  double eff_lo, eff_hi;         /* the efficiency's range (the smallest scale: 1, 1 by definition) */
  double mwh_lo, mwh_hi;         /* the energy's range: the power interval with the time interval (docs/energy.md) */
  char why[256];                 /* when !ok */
} plan_row;

typedef struct plan_doc {
  char machine[64], machine_name[160], model[64], model_name[160], precision[16];
  char unit[32], devh[32], billing_note[160], limits_note[160];
  double per_node_hour;
  int gpn, dies_per_package, billing_per_device, max_job_nodes, tuned;
  double walltime_limit_s;
  pf_budget_opts bo;
  char run[128];                 /* "3e+11 tokens" / "90 epochs of 1.28e+06 samples" */
  int nrows;
  plan_row rows[64];
  int base, fastest, cheapest, greenest, recommended; /* row indexes, -1 if none */
  double min_eff;
  bool anchored;                   /* the ranges are anchored on a fit overlay (--calibration) */
  char validation[PF_PATH_MAX];
  char machine_file[PF_PATH_MAX];  /* the machine file read (its provenance holds its sources) */
  double storage_bw_Bps;           /* the machine file's file-system bandwidth; 0: not given */
} plan_doc;

/* ---- the parts every format prints the same way (plan_render.c, plan_notes.c) ---- */

/* One of plan's tables for the document formats: headers, alignment ('l' or 'r') and cells; a row
 * that does not run has its reason in span instead of cells past the first two. */
#define PLAN_MAXCOL 8
typedef struct plan_table {
  int ncol, nrow;
  char head[PLAN_MAXCOL][40];
  char align[PLAN_MAXCOL];
  char cell[64][PLAN_MAXCOL][48];
  char span[64][272];
} plan_table;
/* The first table (at most 8 columns: what a proposal's reader needs) and the second (the details). */
void plan_tables(const plan_doc *d, plan_table *first, plan_table *second);
/* The evidence paragraph: every number in it is a cell of the tables. */
void plan_paragraph(FILE *out, const plan_doc *d);
/* The ranges of every row (wall time, node-hours, device-hours, efficiency) and the rows they come from. */
void plan_ranges(FILE *out, const plan_doc *d, bool md);

/* Sources and assumptions: each value's source, or "assumption", listed once. */
#define PLAN_MAXNOTES 16
typedef struct plan_note {
  const char *what;   /* "checkpoints", "failures", ... */
  bool assumed;       /* an assumption (else every value in text names its source) */
  char text[768];
} plan_note;
int plan_notes(const plan_doc *d, plan_note *notes);
/* A file named without the machine's folders: "machines/x.cfg" for a shipped file, else its name. */
const char *plan_file_label(const char *path, char *buf, size_t n);

/* The proposal as text in fmt, through the format table's plan renderer; NULL when out of memory. */
char *plan_render(const plan_doc *d, pf_format fmt, const char *plot_path);
/* The renderers the format table points to (plan_render.c; plot used by Markdown only). */
void pf_plan_table(FILE *out, const struct plan_doc *d, const char *plot);
void pf_plan_json(FILE *out, const struct plan_doc *d, const char *plot);
void pf_plan_csv(FILE *out, const struct plan_doc *d, const char *plot);
void pf_plan_markdown(FILE *out, const struct plan_doc *d, const char *plot);
void pf_plan_tex(FILE *out, const struct plan_doc *d, const char *plot);
int plan_plot(const plan_doc *d, const char *path);

#endif
