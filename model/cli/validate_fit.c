/* validate_fit.c - `preflight validate --fit RUNS.csv`: the model's efficiency
 * parameters fitted to measured runs (fit.c), one fit per machine by default
 * (--fit-group COLUMN: per value of another column; "all": one fit), because
 * an efficiency fitted over several machines describes none of them.  With -o
 * each group's overlay is written (FILE.json for one group, FILE.GROUP.json
 * for several), naming the machines it was fitted on, so that --calibration
 * refuses it on another machine unless forced. */
#include "cli.h"
#include "options.h"
#include "validate_cli.h"
#include "validate_out.h"

#include "core/core.h"
#include "core/core.h"
#include "report/report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *key_of(const pf_vrow *r, const char *col) {
  if (!strcmp(col, "all")) return "all";
  if (!strcmp(col, "machine")) return r->machine;
  if (!strcmp(col, "model")) return r->model[0] ? r->model : "custom";
  if (!strcmp(col, "tag")) return r->tag;
  if (!strcmp(col, "use")) return r->use;
  for (int i = 0; i < r->nopt; i++) if (!strcmp(r->opt_name[i], col)) return r->opt_value[i];
  return "";
}

static void overlay_path(const char *out, const char *group, int ngroups, char *buf, size_t n) {
  if (ngroups == 1) { snprintf(buf, n, "%s", out); return; }
  size_t l = strlen(out);
  if (l > 5 && !strcmp(out + l - 5, ".json")) snprintf(buf, n, "%.*s.%s.json", (int)(l - 5), out, group);
  else snprintf(buf, n, "%s.%s", out, group);
}

/* The input rate's line: off, or the rate and the runs whose step it bounds. */
static void input_text(FILE *f, const pf_fit_result *fr) {
  const char *nm = pf_fit_param_name(3);
  if (fr->fixed[3] && fr->input_rows == 0)
    fprintf(f, "  %-16s off   (no run's workload has sample bytes: not constrained)\n", nm);
  else if (fr->fixed[3])
    fprintf(f, "  %-16s off   (not constrained by these runs: fewer configurations than parameters)\n", nm);
  else if (!(fr->p.input_rate_Bps > 0))
    fprintf(f, "  %-16s off   (binds on none of the %d runs with sample bytes: input term left off)\n", nm,
            fr->input_rows);
  else
    fprintf(f, "  %-16s %.6g   (%.4g GB/s per node; binds on %d of %d runs with sample bytes; start %s%s)\n", nm,
            fr->p.input_rate_Bps, fr->p.input_rate_Bps / 1e9, fr->input_binding, fr->input_rows, fr->input_start,
            fr->at_bound[3] > 0   ? "; at the upper end of its range"
            : fr->at_bound[3] < 0 ? "; at the lower end of its range" : "");
}

static void fit_text(FILE *f, const char *path, const char *group, const pf_fit_result *fr, pf_vstats before,
                     pf_vstats after, const char *overlay) {
  fprintf(f, "fit of %s, %s: %d rows in %d configurations, %d iterations (%s)\n", path, group, fr->rows_used,
          fr->groups, fr->iterations, fr->status);
  for (int k = 0; k < 3; k++)
    fprintf(f, "  %-16s %.6g%s\n", pf_fit_param_name(k), pf_fit_param_value(&fr->p, k),
            fr->fixed[k]            ? "   (not constrained by these runs: default kept)"
            : fr->at_bound[k] > 0   ? "   (at the upper end of its range)"
            : fr->at_bound[k] < 0   ? "   (at the lower end of its range)" : "");
  input_text(f, fr);
  if (fr->dof > 0) fprintf(f, "  %-16s %.4g (relative band of a prediction)\n", "rel_sigma", fr->rel_sigma);
  else fprintf(f, "  %-16s unknown: as many free parameters as runs, no residual left to estimate it\n", "rel_sigma");
  fprintf(f, "  RMS log residual %.4g -> %.4g; median |error| %.1f %% -> %.1f %% (predicted rows of the group)\n",
          fr->rms_before, fr->rms_after, before.median_abs_pct, after.median_abs_pct);
  if (fr->loo_done)
    fprintf(f, "  leave-one-%s-out: median |error| %.1f %%, mean %.1f %%, max %.1f %% over %d rows\n",
            pf_loo_name(fr->loo_by), fr->loo.median_abs_pct, fr->loo.mean_abs_pct, fr->loo.max_abs_pct, fr->loo.n);
  if (overlay) fprintf(f, "  overlay written to %s (use: --calibration %s)\n", overlay, overlay);
  fprintf(f, "\n");
}

/* Fit one group (rows of s whose key is g) into out's rows; returns the fit's code. */
static int fit_group(const pf_vset *s, const char *col, const char *g, const pf_validate_opts *o, pf_loo loo,
                     pf_vset *sub, pf_fit_result *fr, pf_vstats *before, pf_vstats *after) {
  memset(sub, 0, sizeof *sub);
  snprintf(sub->path, sizeof sub->path, "%s", s->path);
  sub->rows = calloc((size_t)(s->n ? s->n : 1), sizeof *sub->rows);
  if (!sub->rows) return pf_error_set(PF_ENOMEM, "out of memory");
  for (int i = 0; i < s->n; i++)
    if (!strcmp(key_of(&s->rows[i], col), g)) sub->rows[sub->n++] = s->rows[i];
  *before = pf_validate_stats(sub, NULL, NULL);
  int rc = pf_fit(sub, o, loo, fr);
  *after = pf_validate_stats(sub, NULL, NULL);
  return rc;
}

static cJSON *fit_json(const pf_fit_result *fr, const char *group, pf_vstats before, pf_vstats after,
                       const char *overlay) {
  cJSON *fo = cJSON_CreateObject();
  cJSON_AddStringToObject(fo, "group", group);
  for (int k = 0; k < 3; k++) cJSON_AddNumberToObject(fo, pf_fit_param_name(k), pf_fit_param_value(&fr->p, k));
  if (fr->p.input_rate_Bps > 0) cJSON_AddNumberToObject(fo, "input_rate_Bps", fr->p.input_rate_Bps);
  else cJSON_AddNullToObject(fo, "input_rate_Bps"); /* off */
  cJSON_AddNumberToObject(fo, "input_rows", fr->input_rows);
  cJSON_AddNumberToObject(fo, "input_binding_rows", fr->input_binding);
  cJSON_AddStringToObject(fo, "input_start", fr->input_start);
  cJSON_AddNumberToObject(fo, "rel_sigma", fr->rel_sigma);
  cJSON *nc = cJSON_AddArrayToObject(fo, "not_constrained");
  for (int k = 0; k < PF_FIT_NPAR; k++)
    if (fr->fixed[k]) cJSON_AddItemToArray(nc, cJSON_CreateString(pf_fit_param_name(k)));
  cJSON *ab = cJSON_AddArrayToObject(fo, "at_range_limit");
  for (int k = 0; k < PF_FIT_NPAR; k++)
    if (fr->at_bound[k]) cJSON_AddItemToArray(ab, cJSON_CreateString(pf_fit_param_name(k)));
  cJSON_AddNumberToObject(fo, "rows_used", fr->rows_used);
  cJSON_AddNumberToObject(fo, "configurations", fr->groups);
  cJSON_AddNumberToObject(fo, "iterations", fr->iterations);
  cJSON_AddStringToObject(fo, "status", fr->status);
  cJSON_AddItemToObject(fo, "before", pf_vstats_json(before));
  cJSON_AddItemToObject(fo, "after", pf_vstats_json(after));
  if (fr->loo_done) {
    cJSON_AddItemToObject(fo, "leave_one_out", pf_vstats_json(fr->loo));
    cJSON_AddStringToObject(fo, "leave_one_out_by", pf_loo_name(fr->loo_by));
  }
  if (overlay) cJSON_AddStringToObject(fo, "overlay", overlay);
  return fo;
}

int pf_cli_validate_fit(pf_cli *cli, const char *path, pf_format fmt) {
  const pf_optvals *v = &cli->v;
  pf_vset s;
  int rc = pf_validate_read(path, &s);
  if (rc == 0 && (rc = pf_cli_vset_check(&s)) < 0) pf_vset_free(&s);
  if (rc < 0) return pf_cli_fail("validate", rc);
  pf_vrow_defaults d;
  pf_validate_opts o = pf_cli_validate_opts(v, &d, path);
  const char *col = pf_opts_get(v, "fit-group");
  if (!col) col = "machine";
  const char *out = pf_opts_get(v, "o");
  const char *by = pf_opts_get(v, "loo");
  pf_loo loo = pf_opts_get(v, "no-loo")          ? PF_LOO_NONE
               : by && !strcmp(by, "machine") ? PF_LOO_MACHINE
                                              : PF_LOO_CONFIG;
  if (by && strcmp(by, "machine") && strcmp(by, "configuration"))
    rc = pf_error_set(PF_EINVAL, "--loo: \"%s\" is not configuration or machine", by);
  else if (by && pf_opts_get(v, "no-loo")) rc = pf_error_set(PF_EINVAL, "--loo and --no-loo: give one");
  else if (loo == PF_LOO_MACHINE && !strcmp(col, "machine"))
    rc = pf_error_set(PF_EINVAL, "--loo machine: each fit holds one machine (--fit-group machine, the default); give "
                      "--fit-group all (one fit over every machine) or another column");
  if (rc < 0) { pf_vset_free(&s); return pf_cli_fail("validate", rc); }
  pf_progress_begin("validate --fit", 0, false);
  rc = pf_validate_run(&s, &o);
  pf_progress_end();
  if (rc < 0) { pf_vset_free(&s); return pf_cli_fail("validate", rc); }
  /* the groups, in order of first appearance among the rows a fit can use */
  bool any_fit = false;
  for (int i = 0; i < s.n; i++) any_fit |= !strcmp(s.rows[i].use, "fit");
  const char *groups[256];
  int ng = 0;
  for (int i = 0; i < s.n && ng < 256; i++) {
    if (!pf_fit_row_usable(&s.rows[i], any_fit)) continue;
    const char *k = key_of(&s.rows[i], col);
    bool seen = false;
    for (int j = 0; j < ng; j++) seen |= !strcmp(groups[j], k);
    if (!seen) groups[ng++] = k;
  }
  if (ng == 0) {
    pf_vset_free(&s);
    return pf_cli_fail("validate", pf_error_set(PF_EINVAL, "%s: no row a fit can use (exact time or throughput rows, "
                                                "use = fit where any row says so)", path));
  }
  /* fit each group; its rows (with bands and leave-one-out values) replace the file's */
  pf_vset all = s;
  all.n = 0;
  all.rows = calloc((size_t)(s.n ? s.n : 1), sizeof *all.rows);
  char *text = NULL;
  size_t len = 0;
  FILE *f = all.rows ? open_memstream(&text, &len) : NULL;
  cJSON *head = fmt == PF_FMT_JSON ? pf_report_root_json() : NULL, *fits = NULL;
  if (head) {
    cJSON_AddStringToObject(head, "file", path);
    cJSON_AddStringToObject(head, "fit_group", col);
    fits = cJSON_AddArrayToObject(head, "fits");
  }
  int status = f ? 0 : pf_cli_fail("validate", pf_error_set(PF_ENOMEM, "out of memory"));
  for (int gi = 0; gi < ng && status == 0; gi++) {
    pf_vset sub;
    pf_fit_result fr;
    pf_vstats before, after;
    fprintf(stderr, "preflight validate: fitting %s, %s %s ...\n", path, col, groups[gi]);
    rc = fit_group(&s, col, groups[gi], &o, loo, &sub, &fr, &before, &after);
    if (rc < 0) { status = pf_cli_fail("validate", rc); pf_vset_free(&sub); break; }
    char machines[512] = "", opath[PF_PATH_MAX + 64] = "";
    for (int i = 0; i < sub.n; i++) {
      if (sub.rows[i].group < 0 || strstr(machines, sub.rows[i].machine)) continue;
      if (machines[0]) strncat(machines, ",", sizeof machines - strlen(machines) - 1);
      strncat(machines, sub.rows[i].machine, sizeof machines - strlen(machines) - 1);
    }
    if (out) { /* one group: -o as checked before the work; several: FILE.GROUP.json beside it */
      overlay_path(out, groups[gi], ng, opath, sizeof opath);
      char *overlay = pf_fit_json(&fr, path, machines);
      rc = !overlay ? pf_error_set(PF_ENOMEM, "out of memory")
           : ng == 1 ? pf_cli_emit(cli, overlay) : pf_write_file_atomic(opath, overlay);
      free(overlay);
      if (rc < 0) { status = pf_cli_fail("validate", rc); pf_vset_free(&sub); break; }
    }
    if (fits) cJSON_AddItemToArray(fits, fit_json(&fr, groups[gi], before, after, out ? opath : NULL));
    else if (fmt != PF_FMT_CSV) fit_text(f, path, groups[gi], &fr, before, after, out ? opath : NULL);
    for (int i = 0; i < sub.n; i++) all.rows[all.n++] = sub.rows[i];
    pf_vset_free(&sub);
  }
  if (status == 0 && ng > 1 && loo != PF_LOO_NONE) { /* every group's left-out judged rows together */
    double *x = malloc((size_t)(all.n ? all.n : 1) * sizeof *x);
    int nx = 0;
    for (int i = 0; x && i < all.n; i++)
      if (!isnan(all.rows[i].loo_error) && pf_vrow_judged(&all.rows[i])) x[nx++] = 100 * fabs(all.rows[i].loo_error);
    if (nx > 0) {
      pf_vstats t = pf_vstats_of(x, nx);
      if (head) {
        cJSON *l = pf_vstats_json(t);
        cJSON_AddStringToObject(l, "by", pf_loo_name(loo));
        cJSON_AddItemToObject(head, "leave_one_out_all_groups", l);
      } else if (fmt != PF_FMT_CSV) {
        fprintf(f, "leave-one-%s-out, the %d fits' rows together (regression rows not judged): median |error| %.1f %%, "
                "mean %.1f %%, max %.1f %% over %d rows\n\n",
                pf_loo_name(loo), ng, t.median_abs_pct, t.mean_abs_pct, t.max_abs_pct, t.n);
      }
    }
    free(x);
  }
  if (status == 0) { /* the rows of every group, in one report */
    fflush(f);
    pf_vemit e;
    rc = pf_vemit_begin(&e, f, fmt, path, !pf_opts_get(v, "summary-only"), true, head);
    head = NULL;
    for (int i = 0; i < all.n && rc == 0; i++) rc = pf_vemit_row(&e, &all.rows[i]);
    if (rc == 0) rc = pf_vemit_end(&e);
    else pf_vemit_abort(&e);
    pf_vsum_free(&e.sum);
    if (rc < 0) status = pf_cli_fail("validate", rc);
  }
  cJSON_Delete(head);
  if (f) fclose(f);
  if (status == 0 && text && (fputs(text, stdout) == EOF || fflush(stdout) != 0))
    status = pf_cli_fail("validate", pf_error_set(PF_EIO, "writing to standard output failed"));
  free(text);
  free(all.rows);
  pf_vset_free(&s);
  return status;
}
