/* fmt_csv.c - the CSV format (--format csv): a header line and one line per
 * row, numbers with %.6g, text quoted as RFC 4180 asks (pf_csv_put), one
 * renderer per document kind (formats.h). */
#include "formats.h"
#include "plan.h"
#include "results.h"
#include "validate_out.h"

#include "core/core.h"
#include "machine/machine.h"
#include "report/report.h"
#include "workload/workload.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void prediction(FILE *f, const pf_scenario *sc, const pf_prediction *p, const char *nofit) {
  fprintf(f, "machine,model,nodes,gpus,tp,pp,dp,mbs,gbs,iteration_time_s,tokens_per_s,tflops_per_gpu,mfu,memory_GiB,"
             "fits,energy_J\n%s,%s,%d,%d,%d,%d,%d,%d,%d,",
          sc->machine.id, sc->workload.id, sc->nodes, sc->gpus, sc->plan.tp, sc->plan.pp, sc->plan.dp, sc->plan.mbs,
          sc->plan.gbs);
  double gib = p->memory.total_B / (1024.0 * 1024 * 1024);
  if (nofit) fprintf(f, ",,,,%.4g,false,\n", gib);
  else
    fprintf(f, "%.6g,%.6g,%.6g,%.6g,%.4g,%s,%.6g\n", p->iteration_time_s, p->tokens_per_s, p->tflops_per_gpu, p->mfu,
            gib, p->fits ? "true" : "false", p->energy.facility_J);
}

/* ---- compare ---- */

static void compare_begin(pf_doc *d) {
  fprintf(d->out, "machine,nodes,gpus,iteration_time_s,tokens_per_s,tflops_per_gpu,mfu,memory_GiB,energy_J,note\n");
}

static void compare_row(pf_doc *d, const pf_compare_row *r) {
  FILE *out = d->out;
  if (r->rc < 0) {
    fprintf(out, "%s,,,,,,,,,", r->id);
  } else {
    const pf_scenario *sc = r->sc;
    const pf_prediction *p = r->p;
    double gib = p->memory.total_B / (1024.0 * 1024 * 1024);
    fprintf(out, "%s,%d,%d,%.6g,%.6g,%.6g,%.6g,%.4g,%.6g,", sc->machine.id, sc->nodes, sc->gpus, p->iteration_time_s,
            p->tokens_per_s, p->tflops_per_gpu, p->mfu, gib, p->energy.facility_J);
  }
  pf_csv_put(out, r->note);
  fputc('\n', out);
}

static void compare_end(pf_doc *d) { (void)d; }

/* ---- models ---- */

static void models(FILE *f) {
  fprintf(f, "id,name,params,active_params,flops_per_sample\n");
  for (int i = 0; i < pf_workload_builtin_count(); i++) {
    pf_workload w;
    pf_workload_builtin(pf_workload_builtin_at(i)->id, &w);
    fprintf(f, "%s,\"%s\",%.6g,%.6g,%.6g\n", w.id, w.name, pf_workload_params(&w, 1),
            pf_workload_active_params(&w, 1), pf_workload_model_flops_per_sample(&w, 1));
  }
}

static void model(FILE *f, const pf_workload *w) {
  fprintf(f, "id,name,params,active_params,flops_per_sample\n%s,\"%s\",%.6g,%.6g,%.6g\n", w->id, w->name,
          pf_workload_params(w, 1), pf_workload_active_params(w, 1), pf_workload_model_flops_per_sample(w, 1));
}

/* ---- machines: the list, and one machine shown ---- */

static void machines(FILE *f, const pf_machine *ms, int n) {
  fprintf(f, "id,name,nodes,gpus_per_node,device,network,nics_per_node,nic_Gbps\n");
  for (int i = 0; i < n; i++) {
    const pf_machine *m = &ms[i];
    fprintf(f, "%s,\"%s\",%d,%d,%s,%s,%d,%.0f\n", m->id, m->name, m->nodes, m->gpus_per_node, m->dev.id,
            pf_topology_kind_name(m->net.kind), m->nics_per_node, m->nic_bw_Bps * 8 / 1e9);
  }
}

/* The members of a JSON document as "field,value" rows, nested names joined
 * by '.' and array items by [i] ("device_spec.peak_TFLOPS.bf16,191.5"). */
static void flatten(FILE *f, const char *prefix, const cJSON *j) {
  char name[256];
  int i = 0;
  for (const cJSON *c = j->child; c; c = c->next, i++) {
    if (cJSON_IsArray(j)) snprintf(name, sizeof name, "%s[%d]", prefix, i);
    else snprintf(name, sizeof name, "%s%s%s", prefix, *prefix ? "." : "", c->string ? c->string : "");
    if (cJSON_IsObject(c) || cJSON_IsArray(c)) { flatten(f, name, c); continue; }
    pf_csv_put(f, name);
    fputc(',', f);
    if (cJSON_IsString(c)) pf_csv_put(f, c->valuestring);
    else if (cJSON_IsBool(c)) fputs(cJSON_IsTrue(c) ? "true" : "false", f);
    else if (cJSON_IsNumber(c)) fprintf(f, "%.6g", c->valuedouble);
    fputc('\n', f);
  }
}

/* machines show ID: the JSON document's members (fmt_json_machines.c, the one
 * place a shown machine's fields are chosen), one "field,value" row each. */
static void machine(FILE *f, const pf_machine *m, const pf_machine *measured) {
  char *buf = NULL;
  size_t len = 0;
  FILE *mf = open_memstream(&buf, &len);
  if (!mf) return;
  pf_fmt_json_machine(mf, m, measured);
  fclose(mf);
  cJSON *doc = cJSON_Parse(buf);
  free(buf);
  fprintf(f, "field,value\n");
  if (doc) flatten(f, "", doc);
  cJSON_Delete(doc);
}

/* ---- tune ---- */

static void tune(FILE *out, const cJSON *ctx, const pf_tune_result *r, const pf_tune_config *o) {
  (void)ctx;
  int top = o->top < r->nfinal ? o->top : r->nfinal;
  fprintf(out, "rank,tp,pp,dp,cp,mbs,recompute,schedule,vstages,sp,dist_opt,overlap_grad_reduce,overlap_param_gather,"
               "iteration_time_s,tokens_per_s,tflops_per_gpu,memory_GiB,energy_J,score\n");
  for (int i = 0; i < top; i++) {
    const pf_tune_cand *c = &r->final[i];
    const pf_plan *p = &c->plan;
    fprintf(out, "%d,%d,%d,%d,%d,%d,%s,%s,%d,%d,%d,%d,%d,%.6g,%.6g,%.6g,%.4g,%.6g,%.6g\n", i + 1, p->tp, p->pp, p->dp,
            p->cp, p->mbs, pf_recompute_name(p->recompute), pf_schedule_name(p->schedule), p->vstages, p->sp,
            p->dist_opt, p->overlap_grad_reduce, p->overlap_param_gather, c->t_iter_s, c->tokens_per_s,
            c->tflops_per_gpu, c->memory_GiB, c->energy_J, c->score);
  }
}

/* ---- collective ---- */

static void collective(FILE *f, const pf_coll_doc *d) {
  const pf_machine *m = d->m;
  fprintf(f, "machine,op,nodes,gpus_per_node,ranks,size_B,count,time_us,algbw_GBps,busbw_GBps,algorithm,protocol\n");
  for (int i = 0; i < d->nr; i++) {
    const pf_coll_run *u = &d->runs[i];
    for (int k = 0; k < u->n; k++) {
      const pf_coll_result *r = &u->r[k];
      fprintf(f, "%s,%s,%d,%d,%d,%.0f,%.0f,%.2f,%.2f,%.2f,%s,%s\n", m->id, pf_coll_kind_id(d->op), u->nodes, u->gpn,
              u->ranks, u->size[k], pf_coll_count(d->op, u->size[k], d->dtype_size, u->ranks), r->time_s * 1e6, r->alg_bw_Bps / 1e9, r->bus_bw_Bps / 1e9,
              pf_coll_algo_name(r->algo), pf_coll_proto_name(r->proto));
    }
  }
}

/* ---- validate: streamed, a line per row as it is predicted; no summary ---- */

static void vcsv_header(FILE *f, bool fit) {
  fprintf(f, "line,machine,model,nodes,gpus,metric,unit,bound,measured,measured_hi,status,predicted,error_pct%s,use,tag,"
             "reason,source\n", fit ? ",band_lo,band_hi,loo_predicted,loo_error_pct" : "");
}

static void vcsv_row(FILE *f, const pf_vrow *r, bool fit) {
  bool ok = r->status == PF_ROW_PREDICTED;
  fprintf(f, "%d,%s,%s,%d,%d,%s,%s,%s,%.6g,", r->line, r->machine, pf_vmodel_name(r), r->nodes, r->gpus,
          pf_metric_name(r->metric), pf_metric_unit(r->metric), pf_bound_name(r->bound), pf_vdisp(r, r->measured));
  if (r->bound == PF_BOUND_RANGE) fprintf(f, "%.6g", pf_vdisp(r, r->measured_hi));
  fprintf(f, ",%s,", pf_vstatus_name(r->status));
  if (ok) fprintf(f, "%.6g,%.4f", pf_vdisp(r, r->predicted), 100 * r->error);
  else fprintf(f, ",");
  if (fit) {
    if (ok) fprintf(f, ",%.6g,%.6g", pf_vdisp(r, r->band_lo), pf_vdisp(r, r->band_hi));
    else fprintf(f, ",,");
    if (!isnan(r->loo_error)) fprintf(f, ",%.6g,%.4f", pf_vdisp(r, r->loo_predicted), 100 * r->loo_error);
    else fprintf(f, ",,");
  }
  fprintf(f, ",%s,%s,", r->use, r->tag);
  pf_csv_put(f, r->reason); /* why it was not predicted, or a note on the prediction */
  fputc(',', f);
  pf_csv_put(f, r->source);
  fputc('\n', f);
}

static int validate_begin(pf_vemit *e, cJSON *head) {
  cJSON_Delete(head); /* only JSON prints a head */
  vcsv_header(e->out, e->fit);
  return 0;
}

static int validate_row(pf_vemit *e, const pf_vrow *r) {
  vcsv_row(e->out, r, e->fit);
  return 0;
}

static int validate_end(pf_vemit *e) {
  (void)e;
  return 0;
}

/* ---- validate on measured collectives (collval.h): one line per row ---- */

static void collval(FILE *f, const pf_cvset *s, bool rows) {
  (void)rows; /* CSV is the rows */
  fprintf(f, "line,machine,op,nodes,gpus_per_node,size_B,metric,measured,predicted,error_pct,algorithm,protocol,use,"
             "source,reason\n");
  for (int i = 0; i < s->n; i++) {
    const pf_cvrow *r = &s->rows[i];
    fprintf(f, "%d,", r->line);
    pf_csv_put(f, r->machine);
    fprintf(f, ",%s,%d,%d,%.0f,%s,%.6g,", pf_coll_kind_id(r->op), r->nodes, r->gpn, r->size_B,
            pf_cmetric_name(r->metric), r->measured);
    if (r->ok)
      fprintf(f, "%.6g,%.4g,%s,%s,", r->predicted, 100 * r->error, pf_coll_algo_name(r->pred_algo),
              pf_coll_proto_name(r->pred_proto));
    else
      fprintf(f, ",,,,");
    pf_csv_put(f, r->use);
    fputc(',', f);
    pf_csv_put(f, r->source);
    fputc(',', f);
    pf_csv_put(f, r->ok ? "" : r->reason);
    fputc('\n', f);
  }
}

/* ---- validate --megatron-log: the log as validation rows (docs/validation.md) ---- */

static void megatron_rows(FILE *f, const pf_optvals *v, const pf_vset *s) {
  static const char *core[] = {"machine", "model", "layers", "hidden", "heads", "seq", "vocab", "nodes", "gpus",
                               "tp", "pp", "dp", "mbs", "gbs", "precision", "sp", "dist_opt", "recompute",
                               "schedule"};
  int ncore = (int)(sizeof core / sizeof *core);
  const char *extra[PF_MAXVALS];
  int nextra = 0;
  for (int i = 0; i < v->n; i++) {
    const pf_opt *o = pf_opts_find_scenario(v->name[i]);
    if (!o || !strcmp(o->name, "calibration") || !strcmp(o->name, "trace") || !strcmp(o->name, "o")) continue;
    char col[64];
    snprintf(col, sizeof col, "%s", o->name);
    for (char *c = col; *c; c++) if (*c == '-') *c = '_';
    bool known = false;
    for (int k = 0; k < ncore; k++) known |= !strcmp(core[k], col);
    for (int k = 0; k < nextra; k++) known |= !strcmp(extra[k], o->name);
    if (!known) extra[nextra++] = o->name;
  }
  for (int k = 0; k < ncore; k++) fprintf(f, "%s,", core[k]);
  fprintf(f, "metric,value,unit,baseline_nodes,source,scope,use");
  for (int k = 0; k < nextra; k++) {
    fputc(',', f);
    for (const char *c = extra[k]; *c; c++) fputc(*c == '-' ? '_' : *c, f);
  }
  fputc('\n', f);
  for (int i = 0; i < s->n; i++) {
    const pf_vrow *r = &s->rows[i];
    for (int k = 0; k < ncore; k++) {
      char opt[64];
      snprintf(opt, sizeof opt, "%s", core[k]);
      for (char *c = opt; *c; c++) if (*c == '_') *c = '-';
      const pf_opt *o = pf_opts_find_scenario(opt);
      const char *val = pf_opts_get(v, opt);
      if (o && !o->arg) val = val ? "true" : "false";
      pf_csv_put(f, val ? val : "");
      fputc(',', f);
    }
    fprintf(f, "%s,%.9g,%s,,", pf_metric_name(r->metric), r->value, r->unit);
    pf_csv_put(f, r->source);
    fprintf(f, ",%s,check", pf_scope_name(r->scope));
    for (int k = 0; k < nextra; k++) {
      const pf_opt *o = pf_opts_find_scenario(extra[k]);
      fputc(',', f);
      pf_csv_put(f, o && !o->arg ? "true" : pf_opts_get(v, extra[k]));
    }
    fputc('\n', f);
  }
}

static int megatron(FILE *f, const pf_megatron_doc *d, pf_vemit *e) {
  (void)e; /* rows to validate later: no errors yet */
  megatron_rows(f, d->v, d->s);
  return 0;
}

/* ---- validate --fit: no fit section, the rows alone ---- */

static cJSON *fit_begin(const char *path, const char *col) {
  (void)path, (void)col;
  return NULL;
}

static void fit_group(FILE *f, cJSON *head, const pf_fit_doc *d) { (void)f, (void)head, (void)d; }

static void fit_loo_all(FILE *f, cJSON *head, pf_loo by, int ngroups, pf_vstats t) {
  (void)f, (void)head, (void)by, (void)ngroups, (void)t;
}

const pf_doc_renderers pf_fmt_csv_renderers = {
    .prediction = prediction,
    .compare_begin = compare_begin,
    .compare_row = compare_row,
    .compare_end = compare_end,
    .models = models,
    .model = model,
    .machines = machines,
    .machine = machine,
    .tune = tune,
    .collective = collective,
    .sweep = pf_sweep_csv,
    .kernels = pf_kernels_csv,
    .plan = pf_plan_csv,
    .validate_begin = validate_begin,
    .validate_row = validate_row,
    .validate_end = validate_end,
    .megatron = megatron,
    .fit_begin = fit_begin,
    .fit_group = fit_group,
    .fit_loo_all = fit_loo_all,
    .collval = collval,
};
