/* results.h - the CLI's result documents that can be built in shards and
 * joined by `preflight merge` (sweep, tune), and their renderers.  A plain run
 * renders through the same functions as a merge, so the two are identical.
 */
#ifndef PREFLIGHT_CLI_RESULTS_H
#define PREFLIGHT_CLI_RESULTS_H

#include "options.h"

#include "compute/compute.h"
#include "study/study.h"

#include <cjson/cJSON.h>
#include <stdio.h>

/* What a JSON shard (`sweep` or `tune --shard I/N --format json`) can hold, so `preflight merge`, which
 * reads each whole, caps its read at what a shard can be (issue 30, docs/bounds.md):
 * - rows: at most PF_SHARD_JSON_ROWS (a tune shard keeps 2 x --top finalists, --top at most 10,000; a
 *   sweep refuses a JSON shard of more points before any work: CSV shards stream, any size);
 * - a row at most PF_SHARD_ROW_B as written: the largest measured was 4.4 KB (a sweep row of a MoE model
 *   with its breakdown, energy and intervals, tab-indented), a tune finalist 1.1 KB;
 * - the study's description (axes, machine, model, counts) at most PF_SHARD_HEAD_B. */
#define PF_SHARD_JSON_ROWS 20000
#define PF_SHARD_ROW_B 8192
#define PF_SHARD_HEAD_B 65536
#define PF_SHARD_JSON_MAX_B ((size_t)PF_SHARD_JSON_ROWS * PF_SHARD_ROW_B + PF_SHARD_HEAD_B) /* 156.3 MiB */
/* The most points one sweep has (cmd_sweep.c refuses more; merge checks a shard's count against it). */
#define PF_SWEEP_MAX_POINTS 100000000L
/* A line of a CSV shard (its study line included) at most this long: a row is about 300 bytes. */
#define PF_SHARD_CSV_LINE_B 65536

/* "I/N" with 1 <= I <= N: PF_EINVAL otherwise. */
int pf_cli_parse_shard(const char *s, int *shard, int *nshards);

/* Sweep: ctx holds the sweep's description ("command", "scaling", "axes",
 * "points", "min_efficiency"); rows the points in index order, each a
 * prediction document or an infeasible point ({"fits": false, "reason"}).
 * Render adds per row scaling_efficiency, speedup and baseline_nodes (the
 * smallest feasible node count of the row's group) and formats. */
char *pf_cli_sweep_render(const cJSON *ctx, cJSON *rows, pf_format fmt);
/* The renderers the format table points to (sweep_render.c): rows already
 * carry their scaling efficiency. */
/* kernels: every kernel of one GPU's iteration (kernels_render.c) */
void pf_kernels_table(FILE *f, const pf_scenario *sc, const pf_kernel_rows *R);
void pf_kernels_csv(FILE *f, const pf_scenario *sc, const pf_kernel_rows *R);
void pf_kernels_markdown(FILE *f, const pf_scenario *sc, const pf_kernel_rows *R);
void pf_kernels_json(FILE *f, const pf_scenario *sc, const pf_kernel_rows *R);
void pf_sweep_table(FILE *out, const cJSON *ctx, const cJSON *rows);
void pf_sweep_csv(FILE *out, const cJSON *ctx, const cJSON *rows);
void pf_sweep_json(FILE *out, const cJSON *ctx, const cJSON *rows);
/* SVG of a rendered sweep: throughput and efficiency against nodes, one series
 * per group, measured points (rows of a validation CSV, may be NULL) overlaid.
 * Returns 0 or a PF_E* code. */
int pf_cli_sweep_plot(const cJSON *ctx, const cJSON *rows, const char *measured_csv, const char *path);

/* CSV shards (--shard I/N --format csv): exact numbers, no prediction
 * documents, so that studies of millions of points merge by streaming. */
int pf_cli_sweep_raw(FILE *out, const cJSON *ctx, const cJSON *rows, int shard, int nshards);
int pf_cli_sweep_is_raw(const char *first_line);
/* in[i] is shard i + 1 of n; writes the table or CSV the unsharded sweep prints; *none_runs: the
 * verdict of pf_cli_sweep_verdict over the merged rows (0 or the error to exit with once written). */
int pf_cli_sweep_merge_raw(FILE *const *in, const char *const *paths, int n, pf_format fmt, FILE *out, int *none_runs);
/* The sweep's verdict over its rows (docs/exit-codes.md): 0 when some point runs, else PF_ENOFIT or
 * PF_EPLAN (exit 1) naming the first point's reason; the rows are printed either way.  The same for
 * a sweep, its merged shards (JSON or CSV) and the merged table. */
int pf_cli_sweep_verdict(const cJSON *rows);
/* The same, row by row (a streamed merge): add each row's status ("" or NULL: it ran) and reason. */
typedef struct pf_sweep_verdict {
  long runs;
  int first_rc;            /* the first failed point's class: PF_ENOFIT or PF_EPLAN */
  char first_reason[512];
} pf_sweep_verdict;
void pf_sweep_verdict_add(pf_sweep_verdict *v, const char *status, const char *reason);
int pf_sweep_verdict_end(const pf_sweep_verdict *v);

/* Tune: ctx holds "machine", "model", "gpus", "gbs", "top". */
cJSON *pf_cli_tune_json(const cJSON *ctx, const pf_tune_result *r, const pf_tune_config *o);
char *pf_cli_tune_render(const cJSON *ctx, const pf_tune_result *r, const pf_tune_config *o, pf_format fmt);

#endif
