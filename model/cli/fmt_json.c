/* fmt_json.c - the JSON format (--format json): one versioned document per
 * run (schema_version and the tool's provenance from pf_report_root_json, or
 * schema_version alone for the catalogue lists), one renderer per document
 * kind (formats.h; the machines' two in fmt_json_machines.c, the models' two in
 * fmt_json_models.c).  The
 * prediction's own objects are report's. */
#include "formats.h"
#include "plan.h"
#include "results.h"
#include "validate_out.h"

#include "core/core.h"
#include "report/report.h"
#include "workload/workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void prediction(FILE *f, const pf_scenario *sc, const pf_prediction *p, const char *nofit) {
  pf_report_json_print(f, nofit ? pf_report_nofit_json(sc, p, nofit) : pf_report_prediction_json(sc, p));
}

/* ---- compare: {"rows": [prediction, not-fit or invalid documents]} ---- */

static void compare_begin(pf_doc *d) { d->items = cJSON_CreateArray(); }

static void compare_row(pf_doc *d, const pf_compare_row *r) {
  if (r->rc == 0) cJSON_AddItemToArray(d->items, pf_report_prediction_json(r->sc, r->p));
  else
    cJSON_AddItemToArray(d->items, r->rc == PF_ENOFIT ? pf_report_nofit_json(r->sc, r->p, r->note)
                                                      : pf_report_invalid_json(r->sc, r->sc->nodes, r->note));
}

static void compare_end(pf_doc *d) {
  cJSON *root = pf_report_root_json();
  cJSON_AddItemToObject(root, "rows", d->items);
  d->items = NULL;
  pf_report_json_print(d->out, root);
}

/* ---- tune ---- */

/* The result document; the same for a plain run and a merge of its shards. */
cJSON *pf_cli_tune_json(const cJSON *ctx, const pf_tune_result *r, const pf_tune_config *o) {
  cJSON *root = pf_report_root_json();
  cJSON *c;
  cJSON_ArrayForEach(c, ctx) cJSON_AddItemToObject(root, c->string, cJSON_Duplicate(c, 1));
  cJSON *t = pf_tune_json(r, o);
  cJSON *f = cJSON_DetachItemFromObjectCaseSensitive(t, "finalists");
  cJSON_ArrayForEach(c, t) cJSON_AddItemToObject(root, c->string, cJSON_Duplicate(c, 1));
  cJSON_Delete(t);
  int top = o->top < r->nfinal ? o->top : r->nfinal, i = 0;
  cJSON *rows = cJSON_AddArrayToObject(root, "rows");
  char why[160];
  cJSON *e;
  cJSON_ArrayForEach(e, f) {
    if (i >= top) break;
    pf_tune_why(&r->final[i], &r->final[0], o->objective, why, sizeof why);
    cJSON *row = cJSON_Duplicate(e, 1);
    cJSON_DeleteItemFromObjectCaseSensitive(row, "screen");
    cJSON_AddNumberToObject(row, "rank", i + 1);
    cJSON_AddStringToObject(row, "why", why);
    cJSON_AddItemToArray(rows, row);
    i++;
  }
  cJSON_Delete(f);
  return root;
}

static void tune(FILE *f, const cJSON *ctx, const pf_tune_result *r, const pf_tune_config *o) {
  pf_report_json_print(f, pf_cli_tune_json(ctx, r, o));
}

/* ---- collective ---- */

static void collective(FILE *f, const pf_coll_doc *d) {
  const pf_machine *m = d->m;
  cJSON *j = pf_report_root_json();
  cJSON_AddStringToObject(j, "machine", m->id);
  cJSON_AddStringToObject(j, "op", pf_coll_kind_id(d->op));
  cJSON_AddStringToObject(j, "library", pf_ccl_lib_name(m->ccl));
  cJSON_AddStringToObject(j, "library_version", m->ccl_version);
  char note[512];
  pf_ccl_tuner_note(m->ccl, m->ccl_version, note, sizeof note);
  cJSON_AddStringToObject(j, "tuner", pf_ccl_tuner_find(m->ccl, m->ccl_version, NULL)->name);
  cJSON_AddStringToObject(j, "tuner_note", note);
  cJSON_AddBoolToObject(j, "library_table", m->ccl_table.present);
  cJSON_AddStringToObject(j, "datatype", d->dtype);
  cJSON_AddStringToObject(j, "placement", pf_placement_name(d->pl));
  cJSON_AddNumberToObject(j, "seed", (double)d->seed);
  cJSON *arr = cJSON_AddArrayToObject(j, "runs");
  for (int i = 0; i < d->nr; i++) {
    const pf_coll_run *u = &d->runs[i];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "nodes", u->nodes);
    cJSON_AddNumberToObject(o, "gpus_per_node", u->gpn);
    cJSON_AddNumberToObject(o, "ranks", u->ranks);
    cJSON *rs = cJSON_AddArrayToObject(o, "results");
    for (int k = 0; k < u->n; k++) {
      const pf_coll_result *r = &u->r[k];
      cJSON *x = cJSON_CreateObject();
      cJSON_AddNumberToObject(x, "size_B", u->size[k]);
      cJSON_AddNumberToObject(x, "count", pf_coll_count(d->op, u->size[k], d->dtype_size, u->ranks));
      cJSON_AddNumberToObject(x, "time_us", round(r->time_s * 1e8) / 100);
      cJSON_AddNumberToObject(x, "algbw_GBps", round(r->alg_bw_Bps / 1e7) / 100);
      cJSON_AddNumberToObject(x, "busbw_GBps", round(r->bus_bw_Bps / 1e7) / 100);
      cJSON_AddStringToObject(x, "algorithm", pf_coll_algo_name(r->algo));
      cJSON_AddStringToObject(x, "protocol", pf_coll_proto_name(r->proto));
      cJSON_AddItemToArray(rs, x);
    }
    cJSON_AddNumberToObject(o, "avg_busbw_GBps", round(u->avg_busbw / 1e7) / 100);
    cJSON_AddItemToArray(arr, o);
  }
  pf_report_json_print(f, j);
}

/* ---- validate: streamed in cJSON's own layout, one row at a time ---- */

static void add_num_or_null(cJSON *o, const char *k, double x) {
  if (isfinite(x)) cJSON_AddNumberToObject(o, k, x);
  else cJSON_AddNullToObject(o, k);
}

static cJSON *row_json(const pf_vrow *r, bool fit) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "line", r->line);
  cJSON_AddStringToObject(o, "machine", r->machine);
  cJSON_AddStringToObject(o, "model", r->model[0] ? r->model : r->layers ? "custom-transformer" : "custom");
  cJSON_AddNumberToObject(o, "nodes", r->nodes);
  if (r->gpus) cJSON_AddNumberToObject(o, "gpus", r->gpus);
  cJSON_AddStringToObject(o, "metric", pf_metric_name(r->metric));
  cJSON_AddStringToObject(o, "unit", pf_metric_unit(r->metric) );
  cJSON_AddNumberToObject(o, "measured", pf_vdisp(r, r->measured));
  if (r->bound != PF_BOUND_EXACT) cJSON_AddStringToObject(o, "bound", pf_bound_name(r->bound));
  if (r->bound == PF_BOUND_RANGE) cJSON_AddNumberToObject(o, "measured_hi", pf_vdisp(r, r->measured_hi));
  if (r->scaling != PF_SCALING_NONE) cJSON_AddStringToObject(o, "scaling", r->scaling == PF_SCALING_WEAK ? "weak" : "strong");
  if (r->baseline_nodes) cJSON_AddNumberToObject(o, "baseline_nodes", r->baseline_nodes);
  if (r->baseline_mbs) cJSON_AddNumberToObject(o, "baseline_mbs", r->baseline_mbs);
  if (r->scope != PF_SCOPE_NONE) cJSON_AddStringToObject(o, "scope", pf_scope_name(r->scope));
  cJSON_AddStringToObject(o, "status", pf_vstatus_name(r->status));
  if (r->status == PF_ROW_PREDICTED) {
    cJSON_AddNumberToObject(o, "predicted", pf_vdisp(r, r->predicted));
    cJSON_AddNumberToObject(o, "error_pct", 100 * r->error);
    cJSON_AddNumberToObject(o, "abs_error_pct", 100 * fabs(r->error));
    if (fit) {
      cJSON_AddNumberToObject(o, "band_lo", pf_vdisp(r, r->band_lo));
      cJSON_AddNumberToObject(o, "band_hi", pf_vdisp(r, r->band_hi));
      if (!isnan(r->loo_error)) {
        cJSON_AddNumberToObject(o, "loo_predicted", pf_vdisp(r, r->loo_predicted));
        cJSON_AddNumberToObject(o, "loo_error_pct", 100 * r->loo_error);
      }
    }
    if (r->reason[0]) cJSON_AddStringToObject(o, "note", r->reason);
  } else {
    cJSON_AddStringToObject(o, "reason", r->reason);
  }
  if (r->use[0]) cJSON_AddStringToObject(o, "use", r->use);
  if (r->tag[0]) cJSON_AddStringToObject(o, "tag", r->tag);
  cJSON_AddStringToObject(o, "source", r->source);
  return o;
}

static cJSON *summary_json(const pf_vsum *s) {
  cJSON *sum = cJSON_CreateObject();
  pf_vstats all = pf_vsum_stats(s, -1, 0);
  cJSON_AddNumberToObject(sum, "rows", s->rows);
  cJSON_AddNumberToObject(sum, "predicted", all.n);
  cJSON_AddNumberToObject(sum, "not_predicted", s->not_predicted);
  add_num_or_null(sum, "median_abs_pct_error", all.median_abs_pct);
  add_num_or_null(sum, "mean_abs_pct_error", all.mean_abs_pct);
  add_num_or_null(sum, "max_abs_pct_error", all.max_abs_pct);
  cJSON *bm = cJSON_AddObjectToObject(sum, "by_metric");
  for (int m = 0; m < PF_MET_COUNT; m++) {
    pf_vstats st = pf_vsum_stats(s, 3, m);
    if (st.n > 0) cJSON_AddItemToObject(bm, pf_metric_name((pf_metric)m), pf_vstats_json(st));
  }
  cJSON *bs = cJSON_AddObjectToObject(sum, "by_scope");
  for (int k = PF_SCOPE_GPU; k <= PF_SCOPE_PACKAGE_JOB; k++) {
    pf_vstats st = pf_vsum_stats(s, 4, k);
    if (st.n > 0) cJSON_AddItemToObject(bs, pf_scope_name((pf_scope)k), pf_vstats_json(st));
  }
  static const char *groups[] = {"by_tag", "by_use", "by_machine"};
  for (int g = 0; g < 3; g++) {
    cJSON *o = cJSON_AddObjectToObject(sum, groups[g]);
    for (int k = 0; k < s->nnames[g]; k++) {
      pf_vstats st = pf_vsum_stats(s, g, k);
      if (st.n > 0) cJSON_AddItemToObject(o, s->names[g][k], pf_vstats_json(st));
    }
  }
  cJSON *eg = cJSON_AddArrayToObject(sum, "by_energy_group");
  pf_vgroup g[64];
  for (int k = 0, n = pf_vsum_energy_groups(s, g); k < n; k++) {
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "group", g[k].name);
    cJSON_AddNumberToObject(o, "rows", g[k].rows);
    cJSON_AddNumberToObject(o, "signed_mean_pct_error", g[k].signed_mean_pct);
    cJSON_AddNumberToObject(o, "median_abs_pct_error", g[k].median_abs_pct);
    cJSON_AddItemToArray(eg, o);
  }
  cJSON *w = cJSON_AddArrayToObject(sum, "worst");
  for (int k = 0; k < s->nworst; k++) {
    const pf_vrow *r = &s->worst[k];
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "line", r->line);
    cJSON_AddStringToObject(o, "machine", r->machine);
    cJSON_AddStringToObject(o, "metric", pf_metric_name(r->metric));
    cJSON_AddNumberToObject(o, "error_pct", 100 * r->error);
    cJSON_AddItemToArray(w, o);
  }
  return sum;
}

/* Print text (cJSON_Print output) `levels` deeper: tabs after each newline
 * (cJSON indents an object in an array of the root by two levels, an object
 * member of the root by one). */
static void put_indented(FILE *f, const char *text, int levels) {
  for (const char *c = text; *c; c++) {
    fputc(*c, f);
    if (*c == '\n')
      for (int k = 0; k < levels; k++) fputc('\t', f);
  }
}

static int validate_begin(pf_vemit *e, cJSON *head) {
  char *t = cJSON_Print(head);
  cJSON_Delete(head);
  if (!t) return pf_error_set(PF_ENOMEM, "out of memory");
  size_t n = strlen(t);
  if (n >= 2 && t[n - 1] == '}' && t[n - 2] == '\n') t[n - 2] = '\0';
  fputs(t, e->out);
  fputs(",\n\t\"rows\":\t[", e->out);
  free(t);
  return 0;
}

static int validate_row(pf_vemit *e, const pf_vrow *r) {
  cJSON *j = row_json(r, e->fit);
  char *s = cJSON_Print(j);
  cJSON_Delete(j);
  if (!s) return pf_error_set(PF_ENOMEM, "out of memory");
  if (e->njson++) fputs(", ", e->out);
  put_indented(e->out, s, 2);
  free(s);
  return 0;
}

static int validate_end(pf_vemit *e) {
  FILE *f = e->out;
  int rc = 0;
  fputs("],\n\t\"summary\":\t", f);
  cJSON *j = summary_json(&e->sum);
  char *txt = cJSON_Print(j);
  cJSON_Delete(j);
  if (!txt) rc = pf_error_set(PF_ENOMEM, "out of memory");
  else {
    put_indented(f, txt, 1);
    fputs("\n}\n", f);
    free(txt);
  }
  return rc;
}

/* ---- validate on measured collectives ---- */

static cJSON *collval_json(const pf_cvset *s) {
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
  pf_vstats all = pf_collval_stats(s, 0), big = pf_collval_stats(s, PF_CV_LARGE_B);
  cJSON *sm = cJSON_AddObjectToObject(j, "summary");
  cJSON_AddNumberToObject(sm, "predicted", all.n);
  cJSON_AddNumberToObject(sm, "median_abs_pct_error", round(all.median_abs_pct * 100) / 100);
  cJSON_AddNumberToObject(sm, "mean_abs_pct_error", round(all.mean_abs_pct * 100) / 100);
  cJSON_AddNumberToObject(sm, "max_abs_pct_error", round(all.max_abs_pct * 100) / 100);
  cJSON_AddNumberToObject(sm, "large_rows", big.n);
  cJSON_AddNumberToObject(sm, "large_median_abs_pct_error", round(big.median_abs_pct * 100) / 100);
  return j;
}

static void collval(FILE *f, const pf_cvset *s, bool rows) {
  (void)rows; /* the JSON has every row */
  pf_report_json_print(f, collval_json(s));
}

/* ---- validate --megatron-log ---- */

/* The head of the JSON report: the log and the configuration it was predicted with. */
static cJSON *megatron_head(const pf_megatron_log *l, const pf_scenario *chk, const char *path) {
  cJSON *head = pf_report_root_json();
  cJSON *mg = cJSON_AddObjectToObject(head, "megatron_log");
  cJSON_AddStringToObject(mg, "file", path);
  cJSON_AddStringToObject(mg, "time_format", l->format);
  cJSON_AddNumberToObject(mg, "iterations_logged", l->niter);
  cJSON_AddNumberToObject(mg, "iterations_used", l->used);
  cJSON_AddNumberToObject(mg, "arguments", l->nargs);
  static const char *mk[4] = {"median_iteration_time_s", "median_tflops_per_gpu",
                              "median_energy_J_per_iter_per_gpu", "median_power_W_per_gpu"};
  double mv[4] = {l->med_time_s, l->med_tflops, l->med_energy_J, l->med_power_W};
  for (int k = 0; k < 4; k++) {
    if (isfinite(mv[k])) cJSON_AddNumberToObject(mg, mk[k], mv[k]);
    else cJSON_AddNullToObject(mg, mk[k]);
  }
  cJSON *cfg = cJSON_AddObjectToObject(head, "configuration");
  cJSON_AddStringToObject(cfg, "machine", chk->machine.id);
  cJSON_AddStringToObject(cfg, "model", chk->workload.id);
  cJSON_AddNumberToObject(cfg, "nodes", chk->nodes);
  cJSON_AddNumberToObject(cfg, "gpus", chk->gpus);
  cJSON_AddNumberToObject(cfg, "tp", chk->plan.tp);
  cJSON_AddNumberToObject(cfg, "pp", chk->plan.pp);
  cJSON_AddNumberToObject(cfg, "dp", chk->plan.dp);
  cJSON_AddNumberToObject(cfg, "mbs", chk->plan.mbs);
  cJSON_AddNumberToObject(cfg, "gbs", chk->plan.gbs);
  cJSON_AddStringToObject(cfg, "precision", pf_precision_name(chk->precision));
  cJSON_AddBoolToObject(cfg, "sp", chk->plan.sp);
  cJSON_AddBoolToObject(cfg, "dist_opt", chk->plan.dist_opt);
  cJSON_AddStringToObject(cfg, "recompute", pf_recompute_name(chk->plan.recompute));
  cJSON_AddBoolToObject(cfg, "overlap_grad_reduce", chk->plan.overlap_grad_reduce);
  cJSON_AddBoolToObject(cfg, "overlap_param_gather", chk->plan.overlap_param_gather);
  return head;
}

/* The head, then the rows as validate prints them. */
static int megatron(FILE *f, const pf_megatron_doc *d, pf_vemit *e) {
  int rc = pf_vemit_begin(e, f, PF_FMT_JSON, d->path, true, false, megatron_head(d->log, d->chk, d->path));
  for (int i = 0; i < d->s->n && rc == 0; i++) rc = pf_vemit_row(e, &d->s->rows[i]);
  if (rc == 0) rc = pf_vemit_end(e);
  else pf_vemit_abort(e);
  return rc;
}

/* ---- validate --fit: {"file", "fit_group", "fits": [one per group], ...} before the rows ---- */

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

static cJSON *fit_begin(const char *path, const char *col) {
  cJSON *head = pf_report_root_json();
  cJSON_AddStringToObject(head, "file", path);
  cJSON_AddStringToObject(head, "fit_group", col);
  cJSON_AddArrayToObject(head, "fits");
  return head;
}

static void fit_group(FILE *f, cJSON *head, const pf_fit_doc *d) {
  (void)f;
  cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(head, "fits"),
                       fit_json(d->fr, d->group, d->before, d->after, d->overlay));
}

static void fit_loo_all(FILE *f, cJSON *head, pf_loo by, int ngroups, pf_vstats t) {
  (void)f, (void)ngroups;
  cJSON *l = pf_vstats_json(t);
  cJSON_AddStringToObject(l, "by", pf_loo_name(by));
  cJSON_AddItemToObject(head, "leave_one_out_all_groups", l);
}

const pf_doc_renderers pf_fmt_json_renderers = {
    .prediction = prediction,
    .compare_begin = compare_begin,
    .compare_row = compare_row,
    .compare_end = compare_end,
    .models = pf_fmt_json_models,
    .model = pf_fmt_json_model,
    .machines = pf_fmt_json_machines,
    .machine = pf_fmt_json_machine,
    .tune = tune,
    .collective = collective,
    .sweep = pf_sweep_json,
    .kernels = pf_kernels_json,
    .plan = pf_plan_json,
    .validate_begin = validate_begin,
    .validate_row = validate_row,
    .validate_end = validate_end,
    .collval = collval,
    .megatron = megatron,
    .fit_begin = fit_begin,
    .fit_group = fit_group,
    .fit_loo_all = fit_loo_all,
};
