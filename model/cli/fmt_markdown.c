/* fmt_markdown.c - the Markdown format (--format markdown or md, -o FILE.md):
 * a report to paste into a proposal or a review, valid only for the commands
 * that write one (pf_cli_spec.markdown): plan's section for a proposal
 * (plan_render.c), and validate's report: the summary, then the predicted
 * rows (RUNS.csv), or the collectives' summary and rows (validate_coll.c).
 * --fit and --megatron-log have no Markdown (cmd_validate.c says so). */
#include "formats.h"
#include "results.h"
#include "plan.h"
#include "validate_out.h"

#include "study/study.h"

#include <math.h>
#include <stdio.h>

/* ---- validate: the summary, then the rows (md_row) and the not-predicted lines ---- */

static void md_escape(FILE *f, const char *s) {
  for (; *s; s++) {
    if (*s == '|') fputs("\\|", f);
    else if (*s == '\n') fputc(' ', f);
    else fputc(*s, f);
  }
}

static void md_stats_row(FILE *f, const char *label, pf_vstats st) {
  if (st.n == 0) return;
  fprintf(f, "| %s | %d | %.1f %% | %.1f %% | %.1f %% |\n", label, st.n, st.median_abs_pct, st.mean_abs_pct,
          st.max_abs_pct);
}

static void md_row(FILE *f, const pf_vrow *r) {
  char m[48], p[48], e[16];
  pf_vfmt_measured(r, m, sizeof m);
  pf_vfmt_value(r, r->predicted, p, sizeof p);
  fprintf(f, "| %d | %s | %s | %d | %s | %s | %s | %s | %s | ", r->line, r->machine, pf_vmodel_name(r), r->nodes,
          pf_metric_name(r->metric), m, p, pf_vfmt_err(r->error, e, sizeof e), r->use);
  md_escape(f, r->source);
  fprintf(f, " |\n");
}

static void md_summary(FILE *f, const pf_vsum *s, const char *path) {
  pf_vstats all = pf_vsum_stats(s, -1, 0);
  fprintf(f, "`%s`: %d rows, %d predicted, %d not predicted.\n\n", path, s->rows, s->rows - s->not_predicted,
          s->not_predicted);
  fprintf(f, "| rows | n | median \\|error\\| | mean \\|error\\| | max \\|error\\| |\n|---|---:|---:|---:|---:|\n");
  md_stats_row(f, "all predicted", all);
  for (int m = 0; m < PF_MET_COUNT; m++) {
    char label[64];
    snprintf(label, sizeof label, "metric `%s`", pf_metric_name((pf_metric)m));
    md_stats_row(f, label, pf_vsum_stats(s, 3, m));
  }
  for (int k = PF_SCOPE_GPU; k <= PF_SCOPE_PACKAGE_JOB; k++) { /* energy and power rows, time held fixed */
    char label[64];
    snprintf(label, sizeof label, "energy/power scope `%s`", pf_scope_name((pf_scope)k));
    md_stats_row(f, label, pf_vsum_stats(s, 4, k));
  }
  static const char *what[] = {"tag", "use", "machine"};
  for (int g = 0; g < 3; g++)
    for (int k = 0; k < s->nnames[g]; k++) {
      char label[96];
      snprintf(label, sizeof label, "%s `%s`", what[g], s->names[g][k]);
      md_stats_row(f, label, pf_vsum_stats(s, g, k));
    }
  pf_vgroup g[64]; /* energy and power rows per machine x application: the signed mean (docs/energy.md) */
  int n = pf_vsum_energy_groups(s, g);
  if (n > 0) fprintf(f, "\n| energy and power rows of | n | signed mean error | median \\|error\\| |\n|---|---:|---:|---:|\n");
  for (int k = 0; k < n; k++)
    fprintf(f, "| `%s`%s | %d | %+.1f %% | %.1f %% |\n", g[k].name,
            fabs(g[k].signed_mean_pct) > PF_VGROUP_BOUND_PCT ? " (beyond 15 %)" : "", g[k].rows, g[k].signed_mean_pct,
            g[k].median_abs_pct);
}

static void md_not_predicted(FILE *f, const pf_vsum *s, const char *path) {
  if (!s->not_predicted) return;
  fprintf(f, "\nNot predicted: ");
  int shown = s->not_predicted < 12 ? s->not_predicted : 12;
  for (int k = 0; k < shown; k++)
    fprintf(f, "%sline %d (%s)", k ? ", " : "", s->np_line[k], pf_metric_name((pf_metric)s->np_metric[k]));
  if (s->not_predicted > 12) fprintf(f, " and %d more", s->not_predicted - 12);
  fprintf(f, "; reasons in `preflight validate %s`.\n", path);
}

static int validate_begin(pf_vemit *e, cJSON *head) {
  cJSON_Delete(head); /* only JSON prints a head */
  int rc = pf_vemit_defer(e);
  if (rc == 0)
    fprintf(e->body, "\n| line | machine | model | nodes | metric | measured | predicted | error | use | source |\n"
                     "|---:|---|---|---:|---|---:|---:|---:|---|---|\n");
  return rc;
}

static int validate_row(pf_vemit *e, const pf_vrow *r) {
  if (e->rows && r->status == PF_ROW_PREDICTED) md_row(e->body, r);
  return 0;
}

static int validate_end(pf_vemit *e) {
  int rc = 0;
  md_summary(e->out, &e->sum, e->path);
  if (e->rows) {
    rc = pf_vcopy_file(e->body, e->out);
    md_not_predicted(e->out, &e->sum, e->path);
  }
  return rc;
}

/* ---- validate on measured collectives ---- */

static void md_stats(FILE *f, const char *label, pf_vstats st) {
  if (st.n == 0) return;
  fprintf(f, "| %s | %d | %.1f %% | %.1f %% | %.1f %% |\n", label, st.n, st.median_abs_pct, st.mean_abs_pct,
          st.max_abs_pct);
}

static void collval(FILE *f, const pf_cvset *s, bool rows) {
  fprintf(f, "`%s`: %d collective rows (busbw, algbw or time as nccl-tests prints them).\n\n", s->path, s->n);
  fprintf(f, "| rows | n | median \\|error\\| | mean \\|error\\| | max \\|error\\| |\n|---|---:|---:|---:|---:|\n");
  md_stats(f, "all predicted", pf_collval_stats(s, 0));
  md_stats(f, "size >= 1 MiB", pf_collval_stats(s, PF_CV_LARGE_B));
  if (!rows) return;
  fprintf(f, "\n| line | machine | op | nodes x GPUs | size | metric | measured | predicted | error | model | use | source |\n"
             "|---:|---|---|---|---:|---|---:|---:|---:|---|---|---|\n");
  for (int i = 0; i < s->n; i++) {
    const pf_cvrow *r = &s->rows[i];
    char sz[32];
    pf_vfmt_size(r->size_B, sz, sizeof sz);
    if (r->ok)
      fprintf(f, "| %d | %s | %s | %d x %d | %s | %s | %g | %.4g | %+.1f %% | %s/%s | %s | %s |\n", r->line, r->machine,
              pf_coll_kind_id(r->op), r->nodes, r->gpn, sz, pf_cmetric_name(r->metric), r->measured, r->predicted,
              100 * r->error, pf_coll_algo_name(r->pred_algo), pf_coll_proto_name(r->pred_proto), r->use, r->source);
    else
      fprintf(f, "| %d | %s | %s | %d x %d | %s | %s | %g | not predicted | | | %s | %s |\n", r->line, r->machine,
              pf_coll_kind_id(r->op), r->nodes, r->gpn, sz, pf_cmetric_name(r->metric), r->measured, r->use, r->source);
  }
}


const pf_doc_renderers pf_fmt_markdown_renderers = {
    .kernels = pf_kernels_markdown,
    .plan = pf_plan_markdown,
    .validate_begin = validate_begin,
    .validate_row = validate_row,
    .validate_end = validate_end,
    .collval = collval,
};
