/* fmt_table.c - the table format (--format table, the default): aligned
 * columns and short paragraphs for a reader, one renderer per document kind
 * (formats.h).  The prediction's own table is report's
 * (pf_report_prediction_table); collective's columns are nccl-tests'. */
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
#include <string.h>
#include <unistd.h>

#define GiB (1024.0 * 1024.0 * 1024.0)

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
  fprintf(f, "%-*s %-*s %12s %12s %14s\n", wi, "id", wn, "name", "params", "active", "FLOPs/sample");
  for (int i = 0; i < pf_workload_builtin_count(); i++) {
    pf_workload w;
    pf_workload_builtin(pf_workload_builtin_at(i)->id, &w);
    fprintf(f, "%-*s %-*s %12.4g %12.4g %14.4g\n", wi, w.id, wn, w.name, pf_workload_params(&w, 1),
            pf_workload_active_params(&w, 1), pf_workload_model_flops_per_sample(&w, 1));
  }
}

/* a mixture of experts: active parameters (MFU counts their FLOPs only) and the expert layout */
static void model_moe(FILE *f, const pf_workload *w) {
  fprintf(f, "  active           %.4g parameters a token (%.4g without the input embedding)\n",
          pf_workload_active_params(w, 1), pf_workload_active_params(w, 1) - pf_workload_embedding_params(w, 1));
  if (w->mtp_layers > 0)
    fprintf(f, "  MTP              %d module(s), %.4g parameters besides the ones above\n", w->mtp_layers,
            pf_workload_mtp_params(w));
  fprintf(f, "  experts          %d routed (top %d, FFN %d)%s%.0d, %d of %d layers MoE, %s router", w->experts, w->topk,
          w->moe_ffn_hidden, w->shared_ffn_hidden > 0 ? ", shared FFN " : "", w->shared_ffn_hidden,
          pf_workload_moe_layers_in(w, 0, w->layers), w->layers, w->router == PF_ROUTER_SIGMOID ? "sigmoid" : "softmax");
  if (w->router_groups > 0) fprintf(f, " over %d groups (%d a token)", w->router_groups, w->router_group_topk);
  if (w->capacity_factor > 0) fprintf(f, ", capacity factor %g (tokens over it dropped, experts padded)\n",
                                      w->capacity_factor);
  else fprintf(f, ", dropless, busiest expert %g x the balanced share\n", pf_workload_expert_load(w));
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
  if (pf_workload_is_moe(w)) model_moe(f, w);
  if (pf_workload_is_mla(w))
    fprintf(f, "  MLA              q_lora %d, kv_lora %d, qk nope %d + rope %d, v %d per head\n", w->q_lora_rank,
            w->kv_lora_rank, w->qk_nope_dim, w->qk_rope_dim, w->v_head_dim);
  if (pf_workload_windowed_layers(w) > 0)
    fprintf(f, "  attention        sliding window of %d keys on %d of %d layers, the rest the whole prefix\n",
            w->window, pf_workload_windowed_layers(w), w->layers);
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

/* ---- machines ---- */

static void machines(FILE *f, const pf_machine *ms, int n) {
  fprintf(f, "%-18s %-34s %6s %5s %-14s %-15s %s\n", "id", "name", "nodes", "GPUs", "device", "network", "NICs");
  for (int i = 0; i < n; i++) {
    const pf_machine *m = &ms[i];
    fprintf(f, "%-18s %-34.34s %6d %5d %-14s %-15s %dx%.0fG\n", m->id, m->name, m->nodes, m->gpus_per_node,
            m->dev.id, pf_topology_kind_name(m->net.kind), m->nics_per_node, m->nic_bw_Bps * 8 / 1e9);
  }
}

/* --calibration: the datasheet's rates beside the measured ones. */
static void machine_calibration(FILE *f, const pf_device *a, const pf_device *b) {
  fprintf(f, "\n  %-26s %14s %14s\n", "calibration", "datasheet", "measured");
  fprintf(f, "  %-26s %14.3f %14.3f\n", "GEMM efficiency", a->gemm_eff, b->gemm_eff);
  fprintf(f, "  %-26s %14.1f %14.1f\n", "GEMM bf16 TFLOP/s (large)", a->gemm_eff * a->peak_flops[PF_BF16] / 1e12,
          b->gemm_eff * b->peak_flops[PF_BF16] / 1e12);
  fprintf(f, "  %-26s %14.3f %14.3f\n", "HBM efficiency", a->hbm_eff, b->hbm_eff);
  fprintf(f, "  %-26s %14.1f %14.1f\n", "HBM GB/s (achievable)", a->hbm_eff * a->memory_bw_Bps / 1e9,
          b->hbm_eff * b->memory_bw_Bps / 1e9);
  fprintf(f, "  %-26s %14.2f %14.2f\n", "kernel launch (us)", a->kernel_launch_s * 1e6, b->kernel_launch_s * 1e6);
  /* a calibration's GEMM rows correct the device's table shape by shape (pf_gemm_table_corrected): how many,
   * and by how much the median bf16 shape moved */
  const pf_gemm_table *ta = a->gemm_table, *tb = b->gemm_table;
  fprintf(f, "  %-26s %14d %14d\n", "GEMM shapes measured", ta ? ta->ncorr : 0, tb ? tb->ncorr : 0);
  fprintf(f, "  %-26s %14.3f %14.3f\n", "GEMM bf16 measured/table", ta && ta->ncorr ? exp(ta->corr_med[PF_BF16]) : 1.0,
          tb && tb->ncorr ? exp(tb->corr_med[PF_BF16]) : 1.0);
  fprintf(f, "  %-26s %14.0f %14.0f\n", "idle power (W)", a->idle_W, b->idle_W);
  fprintf(f, "  %-26s %14.0f %14.0f\n", "context power (W)", a->context_W, b->context_W);
  fprintf(f, "  %-26s %14.0f %14.0f\n", "tensor power at peak (W)", a->tensor_W, b->tensor_W);
  fprintf(f, "  %-26s %14.0f %14.0f\n", "HBM power at full bw (W)", a->hbm_W, b->hbm_W);
  fprintf(f, "  %-26s %14.0f %14.0f\n", "max power (W)", a->tdp_W, b->tdp_W);
}

static void machine(FILE *f, const pf_machine *m, const pf_machine *measured) {
  char buf[256];
  fprintf(f, "%s: %s (%s)\n", m->id, m->name, m->site);
  fprintf(f, "  nodes            %d x %d %s = %ld devices\n", m->nodes, m->gpus_per_node, m->dev.id,
          (long)m->nodes * m->gpus_per_node);
  fprintf(f, "  device           %s, %.0f GiB at %.2f TB/s, %d per package\n", m->dev.name, m->dev.memory_B / GiB,
          m->dev.memory_bw_Bps / 1e12, m->dev.dies_per_package);
  fprintf(f, "  peak (dense)    ");
  for (int p = 0; p < PF_NPREC; p++)
    if (m->dev.peak_flops[p] > 0)
      fprintf(f, " %s %.1f", pf_precision_name((pf_precision)p), m->dev.peak_flops[p] / 1e12);
  fprintf(f, " TFLOP/s\n");
  fprintf(f, "  cpu              %d x %s, %d cores each\n", m->cpu_sockets, m->cpu_model, m->cpu_cores);
  fprintf(f, "  fabric           %s, %.0f GB/s per GPU, %.0f GB/s per pair (per direction)\n",
          pf_fabric_kind_name(m->fabric), m->fabric_bw_Bps / 1e9, m->fabric_pair_bw_Bps / 1e9);
  fprintf(f, "  nics             %d x %.0f Gb/s\n", m->nics_per_node, m->nic_bw_Bps * 8 / 1e9);
  fprintf(f, "  network          %s, %s (%s)\n", pf_topology_kind_name(m->net.kind),
          pf_fmt_net_params(m, buf, sizeof buf), m->net.tech);
  fprintf(f, "  power            node base %.0f W, device TDP %.0f W, PUE %.2f\n", m->node_base_W, m->dev.tdp_W,
          m->pue);
  fprintf(f, "  billing          %s, %.4g per node-hour%s%s\n", m->billing_unit, m->billing_per_node_hour,
          m->billing_note[0] ? "; " : "", m->billing_note);
  char cwd[PF_PATH_MAX];
  const char *shown = m->path;
  if (getcwd(cwd, sizeof cwd)) { /* relative to the working directory when below it */
    size_t n = strlen(cwd);
    if (strncmp(m->path, cwd, n) == 0 && m->path[n] == '/') shown = m->path + n + 1;
  }
  fprintf(f, "  file             %s\n", shown);
  if (measured) machine_calibration(f, &m->dev, &measured->dev);
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
  /* a mixture of experts: its expert-parallel and expert tensor-parallel sizes and the all-to-alls' share of the
   * iteration as columns */
  bool moe = cJSON_GetObjectItemCaseSensitive(ctx, "experts") != NULL;
  fprintf(out, "%4s %5s%s %11s %12s %10s %8s%s %10s  %-40s %s\n", "rank", "DP", moe ? "    EP   ETP" : "", "iter (s)",
          "tokens/s", "TFLOP/s/G", "mem GiB", moe ? "  a2a %" : "", "kJ/iter", "why not first", "options");
  char txt[192 + PF_PP_LAYOUT_MAX], why[160];
  for (int i = 0; i < top; i++) {
    const pf_tune_cand *c = &r->final[i];
    pf_tune_plan_text(&c->plan, txt, sizeof txt);
    pf_tune_why(c, &r->final[0], o->objective, why, sizeof why);
    char ep[32] = "", a2a[16] = "";
    if (moe) {
      snprintf(ep, sizeof ep, " %5d %5d", pf_plan_ep(&c->plan), pf_plan_etp(&c->plan));
      snprintf(a2a, sizeof a2a, " %6.1f", 100 * c->a2a_share);
    }
    fprintf(out, "%4d %5d%s %11.4g %12.4g %10.1f %8.1f%s %10.1f  %-40s %s\n", i + 1, c->plan.dp, ep, c->t_iter_s,
            c->tokens_per_s, c->tflops_per_gpu, c->memory_GiB, a2a, c->energy_J / 1e3, why, txt);
  }
  char sh[512 + PF_PP_LAYOUT_MAX];
  pf_tune_sharded_text(r, o->objective, sh, sizeof sh);
  if (sh[0]) fprintf(out, "%s\n", sh);
  const cJSON *dev = cJSON_GetObjectItemCaseSensitive(ctx, "device");
  char ep1[1536 + 2 * PF_PP_LAYOUT_MAX];
  pf_tune_ep1_text(r, o->objective, cJSON_IsString(dev) ? dev->valuestring : "the device", ep1, sizeof ep1);
  if (ep1[0]) fprintf(out, "%s\n", ep1);
}

/* ---- collective: nccl-tests' columns and comment lines ---- */

/* ---- validate: the rows (table_row; the not-predicted ones after them), then the summary ---- */

static void print_stats_line(FILE *f, const char *label, pf_vstats st) {
  if (st.n == 0) return;
  fprintf(f, "  %-24s %4d rows  median %6.1f %%  mean %6.1f %%  max %6.1f %%\n", label, st.n, st.median_abs_pct,
          st.mean_abs_pct, st.max_abs_pct);
}

/* Energy and power rows per machine x application: the signed mean says whether a group errs one way
 * (docs/energy.md, "Validation"); those beyond PF_VGROUP_BOUND_PCT are marked. */
static void print_energy_groups(FILE *f, const pf_vsum *s) {
  pf_vgroup g[64];
  int n = pf_vsum_energy_groups(s, g);
  if (n > 0) fprintf(f, "by machine x application (energy and power rows; signed mean error):\n");
  for (int k = 0; k < n; k++)
    fprintf(f, "  %-46s %4d rows  signed mean %+6.1f %%  median |error| %5.1f %%%s\n", g[k].name, g[k].rows,
            g[k].signed_mean_pct, g[k].median_abs_pct, fabs(g[k].signed_mean_pct) > PF_VGROUP_BOUND_PCT ? "  beyond 15 %" : "");
}

static void vtable_header(FILE *f, bool fit) {
  if (fit)
    fprintf(f, "%5s  %-17s %-12s %5s  %-18s %14s  %-26s %8s %8s  %-5s\n", "line", "machine", "model", "nodes", "metric",
            "measured", "predicted (fit) +- band", "error", "LOO", "use");
  else
    fprintf(f, "%5s  %-17s %-12s %5s  %-18s %16s %14s %8s  %-5s %s\n", "line", "machine", "model", "nodes", "metric",
            "measured", "predicted", "error", "use", "tag");
}

static void vtable_row(FILE *f, const pf_vrow *r, bool fit) {
  char m[48], p[48], e[16];
  pf_vfmt_measured(r, m, sizeof m);
  pf_vfmt_value(r, r->predicted, p, sizeof p);
  if (fit) {
    char band[64], loo[16];
    snprintf(band, sizeof band, "%s +- %.2g%%", p, 100 * (r->band_hi / r->predicted - 1));
    if (isnan(r->loo_error)) snprintf(loo, sizeof loo, "-");
    else snprintf(loo, sizeof loo, "%+.1f%%", 100 * r->loo_error);
    fprintf(f, "%5d  %-17s %-12s %5d  %-18s %14s  %-26s %8s %8s  %-5s\n", r->line, r->machine, pf_vmodel_name(r), r->nodes,
            pf_metric_name(r->metric), m, band, pf_vfmt_err(r->error, e, sizeof e), loo, r->use);
  } else {
    fprintf(f, "%5d  %-17s %-12s %5d  %-18s %16s %14s %8s  %-5s %s\n", r->line, r->machine, pf_vmodel_name(r), r->nodes,
            pf_metric_name(r->metric), m, p, pf_vfmt_err(r->error, e, sizeof e), r->use, r->tag);
  }
}

static void vtable_summary(FILE *f, const pf_vsum *s) {
  pf_vstats all = pf_vsum_stats(s, -1, 0);
  if (all.n == 0) {
    fprintf(f, "summary: no row could be predicted\n");
    return;
  }
  int nj = pf_vsum_unjudged(s);
  fprintf(f, "summary: median |error| %.1f %%, mean %.1f %%, max %.1f %% over %d predicted rows%s\n", all.median_abs_pct,
          all.mean_abs_pct, all.max_abs_pct, all.n, nj ? " (rows tagged regression are not judged)" : "");
  fprintf(f, "by metric:\n");
  for (int m = 0; m < PF_MET_COUNT; m++) print_stats_line(f, pf_metric_name((pf_metric)m), pf_vsum_stats(s, 3, m));
  bool any_scope = false;
  for (int k = PF_SCOPE_GPU; k <= PF_SCOPE_PACKAGE_JOB; k++) {
    pf_vstats st = pf_vsum_stats(s, 4, k);
    if (st.n == 0) continue;
    if (!any_scope) fprintf(f, "by metering scope (energy and power rows; a job's rows with the time held at duration_s):\n");
    any_scope = true;
    print_stats_line(f, pf_scope_name((pf_scope)k), st);
  }
  static const char *titles[] = {"by tag:", "by use:", "by machine:"};
  for (int g = 0; g < 3; g++) {
    if (s->nnames[g] == 0) continue;
    fprintf(f, "%s\n", titles[g]);
    for (int k = 0; k < s->nnames[g]; k++) print_stats_line(f, s->names[g][k], pf_vsum_stats(s, g, k));
  }
  print_energy_groups(f, s);
  fprintf(f, "worst rows:\n");
  for (int k = 0; k < s->nworst; k++) {
    const pf_vrow *r = &s->worst[k];
    char m[48], p[48], e[16];
    pf_vfmt_measured(r, m, sizeof m);
    pf_vfmt_value(r, r->predicted, p, sizeof p);
    fprintf(f, "  line %d: %s %s %d nodes %s: predicted %s, measured %s (%s)\n", r->line, r->machine, pf_vmodel_name(r),
            r->nodes, pf_metric_name(r->metric), p, m, pf_vfmt_err(r->error, e, sizeof e));
  }
}

static int validate_begin(pf_vemit *e, cJSON *head) {
  cJSON_Delete(head); /* only JSON prints a head */
  int rc = pf_vemit_defer(e);
  if (rc == 0) vtable_header(e->body, e->fit);
  return rc;
}

static int validate_row(pf_vemit *e, const pf_vrow *r) {
  if (!e->rows) return 0;
  if (r->status == PF_ROW_PREDICTED) {
    vtable_row(e->body, r, e->fit);
    if (r->reason[0]) fprintf(e->body, "       %s\n", r->reason); /* a note on the prediction (vpredict.c) */
  } else fprintf(e->np, "%5d  %-17s %-12s %-14s %s\n", r->line, r->machine, pf_vmodel_name(r), pf_metric_name(r->metric),
               r->reason);
  return 0;
}

static int validate_end(pf_vemit *e) {
  FILE *f = e->out;
  const pf_vsum *s = &e->sum;
  int rc = 0;
  fprintf(f, "validation: %s (%d rows: %d predicted, %d not predicted)\n", e->path, s->rows,
          s->rows - s->not_predicted, s->not_predicted);
  if (e->rows) {
    if ((rc = pf_vcopy_file(e->body, f)) == 0 && s->not_predicted) {
      fprintf(f, "\nnot predicted:\n");
      rc = pf_vcopy_file(e->np, f);
    }
    fprintf(f, "\n");
  }
  vtable_summary(f, s);
  return rc;
}

/* ---- validate --megatron-log ---- */

/* The table report: the log, the configuration, one line per metric (e->sum gathers the errors). */
static void megatron_table(FILE *f, const pf_megatron_log *l, const pf_scenario *chk, const pf_vset *s,
                           const char *notes, const char *path, pf_vemit *e) {
  fprintf(f, "Megatron-LM log %s: %d iteration lines (time in %s), %d used (first skipped as warm-up), %d "
             "arguments\n", path, l->niter, l->format, l->used, l->nargs);
  fprintf(f, "configuration: %s on %s, %d nodes, %d GPUs, TP %d x PP %d x DP %d, mbs %d, gbs %d, %s%s%s\n",
          chk->workload.id, chk->machine.id, chk->nodes, chk->gpus, chk->plan.tp, chk->plan.pp, chk->plan.dp,
          chk->plan.mbs, chk->plan.gbs, pf_precision_name(chk->precision), notes[0] ? "; " : "", notes);
  fprintf(f, "%-26s %14s %14s %9s\n", "metric", "measured", "predicted", "error");
  for (int i = 0; i < s->n; i++) {
    const pf_vrow *r = &s->rows[i];
    pf_vsum_add(&e->sum, r);
    char m[48], p[48], label[48], er[16];
    pf_vfmt_measured(r, m, sizeof m);
    pf_vfmt_value(r, r->predicted, p, sizeof p);
    snprintf(label, sizeof label, "%s%s", pf_metric_name(r->metric),
             r->scope == PF_SCOPE_GPU_PER_GPU ? " (per GPU)" : "");
    if (r->status == PF_ROW_PREDICTED) fprintf(f, "%-26s %14s %14s %9s\n", label, m, p, pf_vfmt_err(r->error, er, sizeof er));
    else fprintf(f, "%-26s %14s %14s  %s\n", label, m, "-", r->reason);
  }
}

static int megatron(FILE *f, const pf_megatron_doc *d, pf_vemit *e) {
  megatron_table(f, d->log, d->chk, d->s, d->notes, d->path, e);
  return 0;
}

/* ---- validate --fit: a paragraph per group's fit ---- */

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

static cJSON *fit_begin(const char *path, const char *col) {
  (void)path, (void)col;
  return NULL;
}

static void fit_group(FILE *f, cJSON *head, const pf_fit_doc *d) {
  (void)head;
  fit_text(f, d->path, d->group, d->fr, d->before, d->after, d->overlay);
}

static void fit_loo_all(FILE *f, cJSON *head, pf_loo by, int ngroups, pf_vstats t) {
  (void)head;
  fprintf(f, "leave-one-%s-out, the %d fits' rows together (regression rows not judged): median |error| %.1f %%, "
          "mean %.1f %%, max %.1f %% over %d rows\n\n",
          pf_loo_name(by), ngroups, t.median_abs_pct, t.mean_abs_pct, t.max_abs_pct, t.n);
}

const pf_doc_renderers pf_fmt_table_renderers = {
    .prediction = prediction,
    .compare_begin = compare_begin,
    .compare_row = compare_row,
    .compare_end = compare_end,
    .models = models,
    .model = model,
    .machines = machines,
    .machine = machine,
    .tune = tune,
    .collective = pf_fmt_table_collective,
    .sweep = pf_sweep_table,
    .kernels = pf_kernels_table,
    .plan = pf_plan_table,
    .validate_begin = validate_begin,
    .validate_row = validate_row,
    .validate_end = validate_end,
    .collval = pf_fmt_table_collval,
    .megatron = megatron,
    .fit_begin = fit_begin,
    .fit_group = fit_group,
    .fit_loo_all = fit_loo_all,
};
