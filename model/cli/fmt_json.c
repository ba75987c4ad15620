/* fmt_json.c - the JSON format (--format json): one versioned document per
 * run (schema_version and the tool's provenance from pf_report_root_json, or
 * schema_version alone for the catalogue lists), one renderer per document
 * kind (formats.h).  The prediction's own objects are report's. */
#include "formats.h"
#include "plan.h"
#include "results.h"

#include "core/core.h"
#include "report/report.h"
#include "workload/workload.h"

#include <math.h>
#include <stdio.h>

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

/* ---- models ---- */

static cJSON *model_json(const pf_workload *w) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "id", w->id);
  cJSON_AddStringToObject(j, "name", w->name);
  cJSON_AddStringToObject(j, "kind", w->kind == PF_WL_TRANSFORMER ? "transformer"
                                     : w->kind == PF_WL_LAYERS    ? "layers"
                                                                  : "generic");
  cJSON_AddNumberToObject(j, "params", pf_workload_params(w, 1));
  cJSON_AddNumberToObject(j, "flops_per_sample", pf_workload_model_flops_per_sample(w, 1));
  cJSON_AddNumberToObject(j, "tokens_per_sample", pf_workload_tokens_per_sample(w));
  if (w->kind == PF_WL_LAYERS) {
    pf_layers_totals t;
    if (pf_layers_summary(w, &t) == 0) {
      cJSON_AddNumberToObject(j, "nontrainable_params", t.nontrainable);
      cJSON_AddNumberToObject(j, "layer_count", t.layers);
      cJSON_AddNumberToObject(j, "forward_flops_per_sample", t.fwd_flops);
      cJSON_AddNumberToObject(j, "activation_bytes_per_sample_fp32", t.act_bytes);
      cJSON_AddNumberToObject(j, "operators_per_forward", t.fwd_ops);
    }
  }
  if (w->kind == PF_WL_TRANSFORMER) {
    cJSON_AddNumberToObject(j, "layers", w->layers);
    cJSON_AddNumberToObject(j, "hidden", w->hidden);
    cJSON_AddNumberToObject(j, "heads", w->heads);
    cJSON_AddNumberToObject(j, "kv_heads", w->kv_heads);
    cJSON_AddNumberToObject(j, "ffn_hidden", w->ffn_hidden);
    cJSON_AddNumberToObject(j, "seq", w->seq);
    cJSON_AddNumberToObject(j, "vocab", w->vocab);
    cJSON_AddBoolToObject(j, "swiglu", w->swiglu);
  }
  cJSON_AddStringToObject(j, "source", w->source ? w->source : "");
  return j;
}

static void models(FILE *f) {
  cJSON *arr = cJSON_CreateArray();
  for (int i = 0; i < pf_workload_builtin_count(); i++) {
    pf_workload w;
    pf_workload_builtin(pf_workload_builtin_at(i)->id, &w);
    cJSON_AddItemToArray(arr, model_json(&w));
  }
  cJSON *root = cJSON_CreateObject();
  cJSON_AddNumberToObject(root, "schema_version", PF_SCHEMA_VERSION);
  cJSON_AddItemToObject(root, "models", arr);
  pf_report_json_print(f, root);
}

static void model(FILE *f, const pf_workload *w) {
  cJSON *j = model_json(w);
  cJSON_AddNumberToObject(j, "schema_version", PF_SCHEMA_VERSION);
  pf_report_json_print(f, j);
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
      cJSON_AddNumberToObject(x, "count", floor(u->size[k] / d->dtype_size));
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

const pf_doc_renderers pf_fmt_json_renderers = {
    .prediction = prediction,
    .compare_begin = compare_begin,
    .compare_row = compare_row,
    .compare_end = compare_end,
    .models = models,
    .model = model,
    .tune = tune,
    .collective = collective,
    .sweep = pf_sweep_json,
    .plan = pf_plan_json,
};
