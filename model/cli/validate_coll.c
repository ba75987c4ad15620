/* validate_coll.c - `preflight validate` on measured collectives: a
 * collective CSV (scenarios/validation/collectives.csv) or a nccl-tests /
 * rccl-tests output file (collval.h).  Prints each row's measurement,
 * prediction and relative error, then the median and mean absolute error
 * (all rows, and rows of 1 MiB and more, where bandwidth rather than
 * latency decides).  Exit 1 with --max-error P when the median exceeds P. */
#include "cli.h"
#include "options.h"

#include "study/study.h"
#include "core/core.h"
#include "report/report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LARGE_B 1048576.0

static void size_text(double b, char *buf, size_t n) {
  if (b >= 1073741824.0) snprintf(buf, n, "%.4g GiB", b / 1073741824.0);
  else if (b >= 1048576.0) snprintf(buf, n, "%.4g MiB", b / 1048576.0);
  else if (b >= 1024.0) snprintf(buf, n, "%.4g KiB", b / 1024.0);
  else snprintf(buf, n, "%.0f B", b);
}

static void print_table(FILE *f, const pf_cvset *s, bool rows) {
  fprintf(f, "validation: %s (%d collective rows)\n", s->path, s->n);
  if (rows) {
    fprintf(f, "%5s  %-16s %-14s %5s %4s %10s  %-8s %10s %10s %8s  %-15s %s\n", "line", "machine", "op", "nodes", "gpn",
            "size", "metric", "measured", "predicted", "error", "model", "use");
    for (int i = 0; i < s->n; i++) {
      const pf_cvrow *r = &s->rows[i];
      char sz[32], model[40], meas[32];
      size_text(r->size_B, sz, sizeof sz);
      if (r->bound == PF_BOUND_RANGE) snprintf(meas, sizeof meas, "%g-%g", r->measured, r->measured_hi);
      else snprintf(meas, sizeof meas, "%s%g", r->bound == PF_BOUND_LOWER ? ">= " : r->bound == PF_BOUND_UPPER ? "<= " : "",
                    r->measured);
      if (!r->ok) {
        fprintf(f, "%5d  %-16s %-14s %5d %4d %10s  %-8s %10s  not predicted: %s\n", r->line, r->machine,
                pf_coll_kind_id(r->op), r->nodes, r->gpn, sz, pf_cmetric_name(r->metric), meas, r->reason);
        continue;
      }
      snprintf(model, sizeof model, "%s/%s", pf_coll_algo_name(r->pred_algo), pf_coll_proto_name(r->pred_proto));
      fprintf(f, "%5d  %-16s %-14s %5d %4d %10s  %-8s %10s %10.4g %+7.1f%%  %-15s %s\n", r->line, r->machine,
              pf_coll_kind_id(r->op), r->nodes, r->gpn, sz, pf_cmetric_name(r->metric), meas, r->predicted,
              100 * r->error, model, r->use);
    }
  }
  pf_vstats all = pf_collval_stats(s, 0), big = pf_collval_stats(s, LARGE_B);
  fprintf(f, "\nsummary: median |error| %.1f %%, mean %.1f %%, max %.1f %% over %d predicted rows\n",
          all.median_abs_pct, all.mean_abs_pct, all.max_abs_pct, all.n);
  if (big.n > 0 && big.n < all.n)
    fprintf(f, "rows >= 1 MiB: median |error| %.1f %%, mean %.1f %%, max %.1f %% over %d rows\n", big.median_abs_pct,
            big.mean_abs_pct, big.max_abs_pct, big.n);
}

static void md_stats(FILE *f, const char *label, pf_vstats st) {
  if (st.n == 0) return;
  fprintf(f, "| %s | %d | %.1f %% | %.1f %% | %.1f %% |\n", label, st.n, st.median_abs_pct, st.mean_abs_pct,
          st.max_abs_pct);
}

static void print_markdown(FILE *f, const pf_cvset *s, bool rows) {
  fprintf(f, "`%s`: %d collective rows (busbw, algbw or time as nccl-tests prints them).\n\n", s->path, s->n);
  fprintf(f, "| rows | n | median \\|error\\| | mean \\|error\\| | max \\|error\\| |\n|---|---:|---:|---:|---:|\n");
  md_stats(f, "all predicted", pf_collval_stats(s, 0));
  md_stats(f, "size >= 1 MiB", pf_collval_stats(s, LARGE_B));
  if (!rows) return;
  fprintf(f, "\n| line | machine | op | nodes x GPUs | size | metric | measured | predicted | error | model | use | source |\n"
             "|---:|---|---|---|---:|---|---:|---:|---:|---|---|---|\n");
  for (int i = 0; i < s->n; i++) {
    const pf_cvrow *r = &s->rows[i];
    char sz[32];
    size_text(r->size_B, sz, sizeof sz);
    if (r->ok)
      fprintf(f, "| %d | %s | %s | %d x %d | %s | %s | %g | %.4g | %+.1f %% | %s/%s | %s | %s |\n", r->line, r->machine,
              pf_coll_kind_id(r->op), r->nodes, r->gpn, sz, pf_cmetric_name(r->metric), r->measured, r->predicted,
              100 * r->error, pf_coll_algo_name(r->pred_algo), pf_coll_proto_name(r->pred_proto), r->use, r->source);
    else
      fprintf(f, "| %d | %s | %s | %d x %d | %s | %s | %g | not predicted | | | %s | %s |\n", r->line, r->machine,
              pf_coll_kind_id(r->op), r->nodes, r->gpn, sz, pf_cmetric_name(r->metric), r->measured, r->use, r->source);
  }
}

static cJSON *to_json(const pf_cvset *s) {
  cJSON *j = pf_report_root_json();
  cJSON_AddStringToObject(j, "input", s->path);
  cJSON *arr = cJSON_AddArrayToObject(j, "rows");
  for (int i = 0; i < s->n; i++) {
    const pf_cvrow *r = &s->rows[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "line", r->line);
    cJSON_AddStringToObject(o, "machine", r->machine);
    cJSON_AddStringToObject(o, "op", pf_coll_kind_id(r->op));
    cJSON_AddNumberToObject(o, "nodes", r->nodes);
    cJSON_AddNumberToObject(o, "gpus_per_node", r->gpn);
    cJSON_AddNumberToObject(o, "size_B", r->size_B);
    cJSON_AddStringToObject(o, "metric", pf_cmetric_name(r->metric));
    cJSON_AddNumberToObject(o, "measured", r->measured);
    if (r->bound == PF_BOUND_RANGE) cJSON_AddNumberToObject(o, "measured_hi", r->measured_hi);
    cJSON_AddStringToObject(o, "bound", pf_bound_name(r->bound));
    cJSON_AddStringToObject(o, "status", r->ok ? "predicted" : "not predicted");
    if (r->ok) {
      cJSON_AddNumberToObject(o, "predicted", round(r->predicted * 1e4) / 1e4);
      cJSON_AddNumberToObject(o, "error", round(r->error * 1e6) / 1e6);
      cJSON_AddStringToObject(o, "algorithm", pf_coll_algo_name(r->pred_algo));
      cJSON_AddStringToObject(o, "protocol", pf_coll_proto_name(r->pred_proto));
    } else {
      cJSON_AddStringToObject(o, "reason", r->reason);
    }
    cJSON_AddStringToObject(o, "use", r->use);
    cJSON_AddStringToObject(o, "source", r->source);
    cJSON_AddItemToArray(arr, o);
  }
  pf_vstats all = pf_collval_stats(s, 0), big = pf_collval_stats(s, LARGE_B);
  cJSON *sm = cJSON_AddObjectToObject(j, "summary");
  cJSON_AddNumberToObject(sm, "predicted", all.n);
  cJSON_AddNumberToObject(sm, "median_abs_pct_error", round(all.median_abs_pct * 100) / 100);
  cJSON_AddNumberToObject(sm, "mean_abs_pct_error", round(all.mean_abs_pct * 100) / 100);
  cJSON_AddNumberToObject(sm, "max_abs_pct_error", round(all.max_abs_pct * 100) / 100);
  cJSON_AddNumberToObject(sm, "large_rows", big.n);
  cJSON_AddNumberToObject(sm, "large_median_abs_pct_error", round(big.median_abs_pct * 100) / 100);
  return j;
}

int pf_cli_validate_collectives(pf_cli *cli, const char *path, int kind) {
  const pf_optvals *v = &cli->v;
  pf_cvset s;
  int rc, nodes = 0, gpn = 0;
  if ((rc = pf_opts_int(v, "nodes", &nodes)) < 0 || (rc = pf_opts_int(v, "gpus-per-node", &gpn)) < 0)
    return pf_cli_fail("validate", rc);
  rc = kind == 1 ? pf_collval_read_csv(path, &s)
                 : pf_collval_read_nccltests(path, pf_opts_get(v, "machine"), nodes, gpn, &s);
  if (rc < 0) return pf_cli_fail("validate", rc);
  pf_collval_run(&s);
  char *text = NULL;
  size_t len = 0;
  if (cli->fmt == PF_FMT_JSON) {
    text = pf_report_json_text(to_json(&s));
  } else if (cli->fmt == PF_FMT_TABLE || cli->fmt == PF_FMT_MARKDOWN) {
    FILE *mf = open_memstream(&text, &len);
    if (mf) {
      if (cli->fmt == PF_FMT_MARKDOWN) print_markdown(mf, &s, !pf_opts_get(v, "summary-only"));
      else print_table(mf, &s, !pf_opts_get(v, "summary-only"));
      fclose(mf);
    }
  } else {
    pf_cvset_free(&s);
    return pf_cli_fail("validate", pf_error_set(PF_EINVAL, "--format csv: collective rows print as table, json or "
                                                "markdown"));
  }
  if (!text) { pf_cvset_free(&s); return pf_cli_fail("validate", pf_error_set(PF_ENOMEM, "out of memory")); }
  int status = 0;
  if ((rc = pf_cli_emit(cli, text)) < 0) status = pf_cli_fail("validate", rc);
  free(text);
  double maxe;
  if (status == 0 && (rc = pf_opts_double(v, "max-error", &maxe)) < 0) status = pf_cli_fail("validate", rc);
  else if (status == 0 && rc > 0) {
    pf_vstats st = pf_collval_stats(&s, 0);
    if (st.n == 0 || st.median_abs_pct > maxe) {
      fprintf(stderr, "preflight validate: median |error| %.2f %% exceeds --max-error %g %%\n", st.median_abs_pct, maxe);
      status = 1;
    }
  }
  pf_cvset_free(&s);
  return status;
}
