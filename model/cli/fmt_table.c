/* fmt_table.c - the table format (--format table, the default): aligned
 * columns and short paragraphs for a reader, one renderer per document kind
 * (formats.h).  The prediction's own table is report's
 * (pf_report_prediction_table); collective's columns are nccl-tests'. */
#include "formats.h"
#include "plan.h"
#include "results.h"

#include "core/core.h"
#include "report/report.h"
#include "workload/workload.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static void prediction(FILE *f, const pf_scenario *sc, const pf_prediction *p, const char *nofit) {
  if (nofit) pf_report_nofit_table(f, sc, p, nofit);
  else pf_report_prediction_table(f, sc, p);
}

/* ---- compare ---- */

static void compare_begin(pf_doc *d) {
  fprintf(d->out, "%-18s %6s %6s %11s %12s %10s %6s %9s %10s %s\n", "machine", "nodes", "GPUs", "iter (s)", "tokens/s",
          "TFLOP/s/G", "MFU", "mem GiB", "kJ/iter", "note");
}

static void compare_row(pf_doc *d, const pf_compare_row *r) {
  const pf_scenario *sc = r->sc;
  const pf_prediction *p = r->p;
  if (r->rc < 0) {
    fprintf(d->out, "%-18s %6s %6s %11s %12s %10s %6s %9s %10s %s\n", r->id, "-", "-", "-", "-", "-", "-", "-", "-",
            r->note);
    return;
  }
  double gib = p->memory.total_B / (1024.0 * 1024 * 1024);
  fprintf(d->out, "%-18s %6d %6d %11.4g %12.4g %10.1f %5.1f%% %9.1f %10.4g %s\n", sc->machine.id, sc->nodes, sc->gpus,
          p->iteration_time_s, p->tokens_per_s, p->tflops_per_gpu, 100 * p->mfu, gib, p->energy.facility_J / 1e3,
          r->note);
}

static void compare_end(pf_doc *d) { (void)d; }

/* ---- models ---- */

static void models(FILE *f) {
  int wi = 12, wn = 34; /* columns as wide as the longest id and name */
  for (int i = 0; i < pf_workload_builtin_count(); i++) {
    int li = (int)strlen(pf_workload_builtin_at(i)->id), ln = (int)strlen(pf_workload_builtin_at(i)->name);
    wi = li > wi ? li : wi, wn = ln > wn ? ln : wn;
  }
  fprintf(f, "%-*s %-*s %12s %14s\n", wi, "id", wn, "name", "params", "FLOPs/sample");
  for (int i = 0; i < pf_workload_builtin_count(); i++) {
    pf_workload w;
    pf_workload_builtin(pf_workload_builtin_at(i)->id, &w);
    fprintf(f, "%-*s %-*s %12.4g %14.4g\n", wi, w.id, wn, w.name, pf_workload_params(&w, 1),
            pf_workload_model_flops_per_sample(&w, 1));
  }
}

static void model(FILE *f, const pf_workload *w) {
  fprintf(f, "%s: %s\n", w->id, w->name);
  fprintf(f, "  parameters       %.4g\n", pf_workload_params(w, 1));
  fprintf(f, "  model FLOPs      %.4g per sample (forward + backward%s)\n",
          pf_workload_model_flops_per_sample(w, 1),
          w->kind == PF_WL_LAYERS ? ", every network's passes of a step" : ", Megatron's count");
  if (w->kind == PF_WL_TRANSFORMER)
    fprintf(f, "  shape            %d layers, hidden %d, %d heads (%d KV), FFN %d%s, seq %d, vocab %d\n", w->layers,
            w->hidden, w->heads, w->kv_heads, w->ffn_hidden, w->swiglu ? " SwiGLU" : "", w->seq, w->vocab);
  if (w->kind == PF_WL_LAYERS) {
    pf_layers_totals t;
    if (pf_layers_summary(w, &t) == 0)
      fprintf(f, "  layers           %d (after repeats), %.4g non-trainable parameters, %.4g FLOPs per forward, "
              "%.4g MB of fp32 activations per sample, %.4g framework operators per forward\n", t.layers, t.nontrainable,
              t.fwd_flops, t.act_bytes / 1e6, t.fwd_ops);
    for (const pf_net *n = w->nets; n && n->name; n++)
      fprintf(f, "  network %-8s input %dx%dx%d; per step %g forward, %g data-gradient, %g weight-gradient passes, "
              "%g optimizer steps\n", n->name, n->h, n->w, n->c, n->fwd, n->dgrad, n->wgrad, n->opt);
  }
  fprintf(f, "  source           %s\n", w->source);
}

/* ---- tune ---- */

static void tune(FILE *out, const cJSON *ctx, const pf_tune_result *r, const pf_tune_config *o) {
  const cJSON *m = cJSON_GetObjectItemCaseSensitive(ctx, "machine"), *w = cJSON_GetObjectItemCaseSensitive(ctx, "model");
  int gpus = cJSON_GetObjectItemCaseSensitive(ctx, "gpus")->valueint;
  int gbs = cJSON_GetObjectItemCaseSensitive(ctx, "gbs")->valueint;
  int top = o->top < r->nfinal ? o->top : r->nfinal;
  fprintf(out, "%s on %d GPUs of %s, global batch %d, objective %s: %ld plans, %ld pruned (invalid or do not fit), "
               "%ld evaluated, %d simulated; best %d:\n",
          w->valuestring, gpus, m->valuestring, gbs, pf_objective_name(o->objective), r->enumerated, r->pruned,
          r->evaluated, r->nfinal, top);
  fprintf(out, "%4s %5s %11s %12s %10s %8s %10s  %-40s %s\n", "rank", "DP", "iter (s)", "tokens/s", "TFLOP/s/G",
          "mem GiB", "kJ/iter", "why not first", "options");
  char txt[192], why[160];
  for (int i = 0; i < top; i++) {
    const pf_tune_cand *c = &r->final[i];
    pf_tune_plan_text(&c->plan, txt, sizeof txt);
    pf_tune_why(c, &r->final[0], o->objective, why, sizeof why);
    fprintf(out, "%4d %5d %11.4g %12.4g %10.1f %8.1f %10.1f  %-40s %s\n", i + 1, c->plan.dp, c->t_iter_s,
            c->tokens_per_s, c->tflops_per_gpu, c->memory_GiB, c->energy_J / 1e3, why, txt);
  }
}

/* ---- collective: nccl-tests' columns and comment lines ---- */

static void collective(FILE *f, const pf_coll_doc *d) {
  const pf_machine *m = d->m;
  pf_coll_kind op = d->op;
  int reduce = op == PF_ALLREDUCE || op == PF_REDUCE_SCATTER;
  for (int i = 0; i < d->nr; i++) {
    const pf_coll_run *u = &d->runs[i];
    fprintf(f, "# preflight collective: %s_perf model on %s (%s), library %s, placement %s\n", pf_coll_kind_id(op), m->id,
            m->name, pf_ccl_lib_name(m->ccl), pf_placement_name(d->pl));
    fprintf(f, "# nodes %d, GPUs per node %d, ranks %d, %s %s\n#\n", u->nodes, u->gpn, u->ranks,
            pf_fabric_kind_name(m->fabric), m->net.tech[0] ? m->net.tech : pf_topology_kind_name(m->net.kind));
    fprintf(f, "#%12s %13s %9s %7s %7s %10s %8s %8s  %-12s %s\n", "size", "count", "type", "redop", "root", "time",
            "algbw", "busbw", "algorithm", "protocol");
    fprintf(f, "#%12s %13s %9s %7s %7s %10s %8s %8s\n", "(B)", "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)");
    for (int k = 0; k < u->n; k++) {
      const pf_coll_result *r = &u->r[k];
      fprintf(f, " %12.0f %13.0f %9s %7s %7d %10.2f %8.2f %8.2f  %-12s %s\n", u->size[k], floor(u->size[k] / d->dtype_size),
              d->dtype, reduce ? "sum" : "none", -1, r->time_s * 1e6, r->alg_bw_Bps / 1e9, r->bus_bw_Bps / 1e9,
              pf_coll_algo_name(r->algo), pf_coll_proto_name(r->proto));
    }
    fprintf(f, "# Avg bus bandwidth    : %.4g\n%s", u->avg_busbw / 1e9, i + 1 < d->nr ? "#\n" : "");
  }
}

const pf_doc_renderers pf_fmt_table_renderers = {
    .prediction = prediction,
    .compare_begin = compare_begin,
    .compare_row = compare_row,
    .compare_end = compare_end,
    .models = models,
    .model = model,
    .tune = tune,
    .collective = collective,
    .sweep = pf_sweep_table,
    .plan = pf_plan_table,
};
