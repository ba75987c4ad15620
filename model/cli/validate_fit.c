/* validate_fit.c - `preflight validate --fit RUNS.csv`: the model's efficiency
 * parameters fitted to measured runs (fit.c), one fit per machine by default
 * (--fit-group COLUMN: per value of another column; "all": one fit), because
 * an efficiency fitted over several machines describes none of them.  With -o
 * each group's overlay is written (FILE.json for one group, FILE.GROUP.json
 * for several), naming the machines it was fitted on, so that --calibration
 * refuses it on another machine unless forced.  The report is the format
 * table's (fit_begin, fit_group, fit_loo_all: fmt_table.c, fmt_json.c,
 * fmt_csv.c), then every group's rows as validate prints them. */
#include "cli.h"
#include "options.h"
#include "validate_cli.h"
#include "validate_out.h"

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

/* --loo configuration|machine or --no-loo, checked against the grouping column. */
static int loo_option(const pf_optvals *v, const char *col, pf_loo *loo) {
  const char *by = pf_opts_get(v, "loo");
  *loo = pf_opts_get(v, "no-loo")          ? PF_LOO_NONE
         : by && !strcmp(by, "machine") ? PF_LOO_MACHINE
                                        : PF_LOO_CONFIG;
  if (by && strcmp(by, "machine") && strcmp(by, "configuration"))
    return pf_error_set(PF_EINVAL, "--loo: \"%s\" is not configuration or machine", by);
  if (by && pf_opts_get(v, "no-loo")) return pf_error_set(PF_EINVAL, "--loo and --no-loo: give one");
  if (*loo == PF_LOO_MACHINE && !strcmp(col, "machine"))
    return pf_error_set(PF_EINVAL, "--loo machine: each fit holds one machine (--fit-group machine, the default); give "
                        "--fit-group all (one fit over every machine) or another column");
  return 0;
}

/* The groups (values of col), in order of first appearance among the rows a fit can use; how many. */
static int group_keys(const pf_vset *s, const char *col, const char **groups, int max) {
  bool any_fit = false;
  for (int i = 0; i < s->n; i++) any_fit |= !strcmp(s->rows[i].use, "fit");
  int ng = 0;
  for (int i = 0; i < s->n && ng < max; i++) {
    if (!pf_fit_row_usable(&s->rows[i], any_fit)) continue;
    const char *k = key_of(&s->rows[i], col);
    bool seen = false;
    for (int j = 0; j < ng; j++) seen |= !strcmp(groups[j], k);
    if (!seen) groups[ng++] = k;
  }
  return ng;
}

/* One --fit run: its options, groups and reports. */
typedef struct {
  pf_cli *cli;
  const char *path, *col, *out; /* out: -o, the overlay (NULL: none) */
  pf_format fmt;
  pf_loo loo;
  const char *groups[256];
  int ng;
  FILE *f;                      /* the text report */
  cJSON *head;                  /* the JSON report (fmt json; the format's fit_begin) */
  pf_vset all;                  /* every group's rows, with bands and leave-one-out values */
} fit_run;

/* Fit group gi; its overlay to -o, its report, its rows into r->all.  Returns the exit status. */
static int fit_one(fit_run *r, const pf_vset *s, const pf_validate_opts *o, int gi) {
  pf_vset sub;
  pf_fit_result fr;
  pf_vstats before, after;
  const char *g = r->groups[gi];
  fprintf(stderr, "preflight validate: fitting %s, %s %s ...\n", r->path, r->col, g);
  int rc = fit_group(s, r->col, g, o, r->loo, &sub, &fr, &before, &after);
  if (rc < 0) { pf_vset_free(&sub); return pf_cli_fail("validate", rc); }
  char machines[512] = "", opath[PF_PATH_MAX + 64] = "";
  for (int i = 0; i < sub.n; i++) {
    if (sub.rows[i].group < 0 || strstr(machines, sub.rows[i].machine)) continue;
    if (machines[0]) strncat(machines, ",", sizeof machines - strlen(machines) - 1);
    strncat(machines, sub.rows[i].machine, sizeof machines - strlen(machines) - 1);
  }
  if (r->out) { /* one group: -o as checked before the work; several: FILE.GROUP.json beside it */
    overlay_path(r->out, g, r->ng, opath, sizeof opath);
    char *overlay = pf_fit_json(&fr, r->path, machines);
    rc = !overlay ? pf_error_set(PF_ENOMEM, "out of memory")
         : r->ng == 1 ? pf_cli_emit(r->cli, overlay) : pf_write_file_atomic(opath, overlay);
    free(overlay);
    if (rc < 0) { pf_vset_free(&sub); return pf_cli_fail("validate", rc); }
  }
  const pf_fit_doc doc = {.path = r->path, .group = g, .fr = &fr, .before = before, .after = after,
                         .overlay = r->out ? opath : NULL};
  pf_fmt(r->fmt)->fit_group(r->f, r->head, &doc); /* the format table's renderer */
  for (int i = 0; i < sub.n; i++) r->all.rows[r->all.n++] = sub.rows[i];
  pf_vset_free(&sub);
  return 0;
}

/* With several groups: every group's left-out judged rows together. */
static void loo_all_groups(fit_run *r) {
  const pf_vset *all = &r->all;
  double *x = malloc((size_t)(all->n ? all->n : 1) * sizeof *x);
  int nx = 0;
  for (int i = 0; x && i < all->n; i++)
    if (!isnan(all->rows[i].loo_error) && pf_vrow_judged(&all->rows[i])) x[nx++] = 100 * fabs(all->rows[i].loo_error);
  if (nx > 0) {
    pf_vstats t = pf_vstats_of(x, nx);
    pf_fmt(r->fmt)->fit_loo_all(r->f, r->head, r->loo, r->ng, t);
  }
  free(x);
}

/* The rows of every group, in one report after the fits' (takes r->head).  Returns the exit status. */
static int rows_report(fit_run *r) {
  fflush(r->f);
  pf_vemit e;
  int rc = pf_vemit_begin(&e, r->f, r->fmt, r->path, !pf_opts_get(&r->cli->v, "summary-only"), true, r->head);
  r->head = NULL;
  for (int i = 0; i < r->all.n && rc == 0; i++) rc = pf_vemit_row(&e, &r->all.rows[i]);
  if (rc == 0) rc = pf_vemit_end(&e);
  else pf_vemit_abort(&e);
  pf_vsum_free(&e.sum);
  return rc < 0 ? pf_cli_fail("validate", rc) : 0;
}

int pf_cli_validate_fit(pf_cli *cli, const char *path, pf_format fmt) {
  const pf_optvals *v = &cli->v;
  pf_vset s;
  int rc = pf_validate_read(path, &s);
  if (rc == 0 && (rc = pf_cli_vset_check(&s)) < 0) pf_vset_free(&s);
  if (rc < 0) return pf_cli_fail("validate", rc);
  pf_vrow_defaults d;
  pf_validate_opts o = pf_cli_validate_opts(v, &d, path);
  fit_run r = {.cli = cli, .path = path, .col = pf_opts_get(v, "fit-group"), .out = pf_opts_get(v, "o"), .fmt = fmt};
  if (!r.col) r.col = "machine";
  if ((rc = loo_option(v, r.col, &r.loo)) < 0) { pf_vset_free(&s); return pf_cli_fail("validate", rc); }
  pf_progress_begin("validate --fit", 0, false);
  rc = pf_validate_run(&s, &o);
  pf_progress_end();
  if (rc < 0) { pf_vset_free(&s); return pf_cli_fail("validate", rc); }
  r.ng = group_keys(&s, r.col, r.groups, 256);
  if (r.ng == 0) {
    pf_vset_free(&s);
    return pf_cli_fail("validate", pf_error_set(PF_EINVAL, "%s: no row a fit can use (exact time or throughput rows, "
                                                "use = fit where any row says so)", path));
  }
  /* fit each group; its rows (with bands and leave-one-out values) replace the file's */
  r.all = s;
  r.all.n = 0;
  r.all.rows = calloc((size_t)(s.n ? s.n : 1), sizeof *r.all.rows);
  char *text = NULL;
  size_t len = 0;
  r.f = r.all.rows ? open_memstream(&text, &len) : NULL;
  r.head = pf_fmt(fmt)->fit_begin(path, r.col);
  int status = r.f ? 0 : pf_cli_fail("validate", pf_error_set(PF_ENOMEM, "out of memory"));
  for (int gi = 0; gi < r.ng && status == 0; gi++) status = fit_one(&r, &s, &o, gi);
  if (status == 0 && r.ng > 1 && r.loo != PF_LOO_NONE) loo_all_groups(&r);
  if (status == 0) status = rows_report(&r);
  cJSON_Delete(r.head);
  if (r.f) fclose(r.f);
  if (status == 0 && text && (fputs(text, stdout) == EOF || fflush(stdout) != 0))
    status = pf_cli_fail("validate", pf_error_set(PF_EIO, "writing to standard output failed"));
  free(text);
  free(r.all.rows);
  pf_vset_free(&s);
  return status;
}
