/* plan_render.c - `preflight plan`'s output: a table, CSV, JSON, the two
 * tables and the paragraph of the document formats (plan_doc.c writes them
 * as Markdown and LaTeX; the paragraph cites only numbers that are in the
 * tables), and the cost-versus-scale plot.  The sources and assumptions are
 * plan_notes.c's.  Every number is formatted by one helper per quantity so the
 * paragraph and the table print it the same way. */
#include "plan.h"

#include "io/io.h"
#include "report/report.h"
#include "study/study.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef char cell[48];

static void f_int(cell c, double x) { snprintf(c, sizeof(cell), "%.0f", x); }
static void f_h(cell c, double s) { snprintf(c, sizeof(cell), "%.1f", s / 3600.0); }
static void f_eff(cell c, double e) { snprintf(c, sizeof(cell), "%.0f %%", 100 * e); }
static void f_tf(cell c, double t) { snprintf(c, sizeof(cell), "%.1f", t); }
static void f_mwh(cell c, double m) { snprintf(c, sizeof(cell), "%.3g", m); }
static void f_it(cell c, double t) { snprintf(c, sizeof(cell), "%.4g", t); }

/* TP x PP x DP, and in parentheses CP and the experts' EP where they split further (a MoE plan's EP is as much
 * part of the request as its TP) */
static void f_split(cell c, const pf_plan *p) {
  int ep = pf_plan_ep(p);
  if (p->cp > 1 && ep > 1) snprintf(c, sizeof(cell), "%d x %d x %d (CP %d, EP %d)", p->tp, p->pp, p->dp, p->cp, ep);
  else if (p->cp > 1) snprintf(c, sizeof(cell), "%d x %d x %d (CP %d)", p->tp, p->pp, p->dp, p->cp);
  else if (ep > 1) snprintf(c, sizeof(cell), "%d x %d x %d (EP %d)", p->tp, p->pp, p->dp, ep);
  else snprintf(c, sizeof(cell), "%d x %d x %d", p->tp, p->pp, p->dp);
}

static void f_sched(cell c, const pf_plan *p) {
  if (p->schedule == PF_SCHED_INTERLEAVED) snprintf(c, sizeof(cell), "interleaved:%d", p->vstages);
  else snprintf(c, sizeof(cell), "%s", pf_schedule_name(p->schedule));
}

static void f_range(cell c, const plan_row *r) { snprintf(c, sizeof(cell), "%.0f-%.0f", r->lo.node_h, r->hi.node_h); }

static const char *flags(const pf_plan *p, char *buf, size_t n) {
  /* the sharding chosen: ZeRO-0 to 3 (1 = the distributed optimizer), hybrid-shard for HYBRID_SHARD */
  static const char *zero[] = {" zero-0", " zero-1", " zero-2", " zero-3"};
  int z = pf_plan_zero(p);
  snprintf(buf, n, "%s%s%s%s%s%s%s", p->sp ? " SP" : "", zero[z],
           z >= 2 && p->shard_group == PF_SHARD_NODE ? " hybrid-shard" : "",
           p->overlap_grad_reduce ? " overlap-grad" : "", p->overlap_param_gather ? " overlap-param" : "",
           p->flash_attn ? " flash-attn" : "", p->tp_comm_overlap ? " tp-comm-overlap" : "");
  return buf;
}

/* The ranges of every row: wall time, node-hours, device-hours, efficiency, and the rows they come from. */
void plan_ranges(FILE *out, const plan_doc *d, bool md) {
  if (md)
    fprintf(out, "Ranges (nominal 80 %%):\n\n| nodes | wall time (h) | node-hours | %s | MWh | efficiency | from |\n"
                 "|---:|---|---|---|---|---|---|\n", d->devh);
  else fprintf(out, "ranges (nominal 80 %%):\n");
  for (int i = 0; i < d->nrows; i++) {
    const plan_row *r = &d->rows[i];
    if (!r->ok) continue;
    cell wl, wh, gl, gh, el, eh, nh, ml, mh;
    f_h(wl, r->lo.wall_s); f_h(wh, r->hi.wall_s); f_int(gl, r->lo.gpu_h); f_int(gh, r->hi.gpu_h);
    f_eff(el, r->eff_lo); f_eff(eh, r->eff_hi); f_range(nh, r); f_mwh(ml, r->mwh_lo); f_mwh(mh, r->mwh_hi);
    if (md)
      fprintf(out, "| %d | %s-%s | %s | %s-%s | %s-%s | %s-%s | time: %s (%d rows); efficiency: %s (%d rows); power: %s "
                   "(%d rows) |\n", r->nodes, wl, wh, nh, gl, gh, ml, mh, el, eh, r->iv.time_regime, r->iv.n_time,
              r->iv.eff_regime, r->iv.n_eff, r->iv.power_regime, r->iv.n_power);
    else
      fprintf(out, "%6d nodes: wall %s-%s h, node-hours %s, %s %s-%s, MWh %s-%s, efficiency %s-%s; time from %s (%d rows), "
                   "efficiency from %s (%d rows), power from %s (%d rows)\n", r->nodes, wl, wh, nh, d->devh, gl, gh,
              ml, mh, el, eh, r->iv.time_regime, r->iv.n_time, r->iv.eff_regime, r->iv.n_eff, r->iv.power_regime,
              r->iv.n_power);
  }
  fprintf(out, "\n");
}

static void table(FILE *out, const plan_doc *d) {
  fprintf(out, "%s on %s: %s, %s%s\n", d->model, d->machine, d->run, d->precision,
          d->tuned & 1 ? ", parallel split tuned at each scale" : "");
  if (d->tuned & 2) fprintf(out, "global batch: the model's published batch (--gbs to change)\n");
  char units[40];
  snprintf(units, sizeof units, "%ss", d->unit);
  int ws = 15; /* the split column: as wide as its widest cell (CP and EP in parentheses) */
  for (int i = 0; i < d->nrows; i++) {
    cell sp;
    f_split(sp, &d->rows[i].plan);
    if (d->rows[i].ok && (int)strlen(sp) > ws) ws = (int)strlen(sp);
  }
  fprintf(out, "%6s %6s %-*s %4s %-14s %9s %9s %5s %9s %5s %11s %11s %14s %8s %17s  %s\n", "nodes", "GPUs", ws,
          "TP x PP x DP", "mbs", "schedule", "iter (s)", "TFLOP/s/G", "eff", "wall (h)", "jobs", d->devh, "node-hours",
          units, "MWh", "range (node-h)", "flags");
  for (int i = 0; i < d->nrows; i++) {
    const plan_row *r = &d->rows[i];
    if (!r->ok) { fprintf(out, "%6d %6d  (%s)\n", r->nodes, r->gpus, r->why); continue; }
    cell sp, sc, it, tf, ef, wh, jb, gh, nh, un, mw, rg;
    char fl[96];
    f_split(sp, &r->plan); f_sched(sc, &r->plan); f_it(it, r->t_iter_s); f_tf(tf, r->tflops); f_eff(ef, r->eff);
    f_h(wh, r->b.wall_s); f_int(jb, r->b.jobs); f_int(gh, r->b.gpu_h); f_int(nh, r->b.node_h); f_int(un, r->b.units);
    f_mwh(mw, r->b.energy_MWh); f_range(rg, r);
    fprintf(out, "%6d %6d %-*s %4d %-14s %9s %9s %5s %9s %5s %11s %11s %14s %8s %17s %s%s\n", r->nodes, r->gpus, ws, sp,
            r->plan.mbs, sc, it, tf, ef, wh, jb, gh, nh, un, mw, rg, flags(&r->plan, fl, sizeof fl),
            r->within_limit ? "" : " (above the per-job node limit)");
  }
  fprintf(out, "\n");
  plan_ranges(out, d, false);
  const plan_row *rec = d->recommended >= 0 ? &d->rows[d->recommended] : &d->rows[d->base];
  fprintf(out, "sources and assumptions (overheads at %d nodes):\n", rec->nodes);
  plan_note notes[PLAN_MAXNOTES];
  int nn = plan_notes(d, notes);
  for (int i = 0; i < nn; i++)
    fprintf(out, "  %s%s: %s\n", notes[i].what, notes[i].assumed ? " (assumption)" : "", notes[i].text);
  if (d->fastest >= 0)
    fprintf(out, "recommended: fastest %d nodes, cheapest %d nodes, best time x energy %d nodes", d->rows[d->fastest].nodes,
            d->rows[d->cheapest].nodes, d->rows[d->greenest].nodes);
  if (d->min_eff > 0) {
    if (d->recommended >= 0)
      fprintf(out, ", largest with efficiency >= %.0f %%: %d nodes", 100 * d->min_eff, d->rows[d->recommended].nodes);
    else fprintf(out, "; no scale reaches efficiency %.0f %%", 100 * d->min_eff);
  }
  fprintf(out, "\n");
}

void plan_paragraph(FILE *out, const plan_doc *d) {
  const plan_row *b = &d->rows[d->base];
  const plan_row *r = d->recommended >= 0 ? &d->rows[d->recommended] : b;
  cell rn, rg, ef, tf, tb, wh, jb, nh, un, mw, bn;
  snprintf(rn, sizeof rn, "%d", r->nodes);
  snprintf(rg, sizeof rg, "%d", r->gpus);
  snprintf(bn, sizeof bn, "%d", b->nodes);
  f_eff(ef, r->eff); f_tf(tf, r->tflops); f_tf(tb, b->tflops); f_h(wh, r->b.wall_s); f_int(jb, r->b.jobs);
  f_int(nh, r->b.node_h); f_int(un, r->b.units); f_mwh(mw, r->b.energy_MWh);
  fprintf(out, "We request the run at %s nodes (%s GPUs) of %s. The model fits from %s nodes on; at %s nodes "
               "preflight predicts %s TFLOP/s per GPU against %s TFLOP/s at %s nodes, a parallel efficiency of %s "
               "relative to the smallest configuration that fits. The training takes %s hours of wall time in %s "
               "job(s), %s node-hours, i.e. %s %ss, and %s MWh of facility energy",
          rn, rg, d->machine_name, bn, rn, tf, tb, bn, ef, wh, jb, nh, un, d->unit, mw);
  if (r->eff > 1.005) /* a reviewer's first question: say where a super-linear figure comes from */
    fprintf(out, " (above 100 %% because the smallest scale holds the model only with a slower split: compare the "
                 "TP x PP x DP and micro-batch columns)");
  cell rr;
  f_range(rr, r);
  fprintf(out, "; from preflight's %svalidation errors, the node-hours lie in %s (the ranges below)",
          d->anchored ? "fit and " : "", rr);
  fprintf(out, ".\n");
}

static void head(plan_table *t, const char *h, char align) {
  snprintf(t->head[t->ncol], sizeof t->head[0], "%s", h);
  t->align[t->ncol++] = align;
}

void plan_tables(const plan_doc *d, plan_table *t1, plan_table *t2) {
  memset(t1, 0, sizeof *t1);
  memset(t2, 0, sizeof *t2);
  char units[40];
  snprintf(units, sizeof units, "%ss", d->unit);
  head(t1, "nodes", 'r'); head(t1, "GPUs", 'r'); head(t1, "TP x PP x DP", 'l'); head(t1, "TFLOP/s per GPU", 'r');
  head(t1, "efficiency", 'r'); head(t1, "wall time (h)", 'r'); head(t1, "node-hours", 'r');
  head(t1, "node-hours range", 'r');
  head(t2, "nodes", 'r'); head(t2, "micro-batch", 'r'); head(t2, "schedule", 'l'); head(t2, "iteration (s)", 'r');
  head(t2, "jobs", 'r'); head(t2, d->devh, 'r'); head(t2, units, 'r'); head(t2, "MWh", 'r');
  for (int i = 0; i < d->nrows; i++) {
    const plan_row *r = &d->rows[i];
    char (*a)[48] = t1->cell[t1->nrow];
    snprintf(a[0], sizeof a[0], "%d%s", r->nodes, r->within_limit ? "" : " (above job limit)");
    snprintf(a[1], sizeof a[1], "%d", r->gpus);
    if (!r->ok) { snprintf(t1->span[t1->nrow++], sizeof t1->span[0], "does not run: %s", r->why); continue; }
    f_split(a[2], &r->plan); f_tf(a[3], r->tflops); f_eff(a[4], r->eff); f_h(a[5], r->b.wall_s);
    f_int(a[6], r->b.node_h); f_range(a[7], r);
    t1->nrow++;
    char (*b)[48] = t2->cell[t2->nrow++];
    snprintf(b[0], sizeof b[0], "%d", r->nodes);
    snprintf(b[1], sizeof b[1], "%d", r->plan.mbs);
    f_sched(b[2], &r->plan); f_it(b[3], r->t_iter_s); f_int(b[4], r->b.jobs); f_int(b[5], r->b.gpu_h);
    f_int(b[6], r->b.units); f_mwh(b[7], r->b.energy_MWh);
  }
}

/* name, name_low, name_high: a value and its range. */
static void ranged(cJSON *o, const char *name, double v, double lo, double hi) {
  char k[64];
  cJSON_AddNumberToObject(o, name, v);
  snprintf(k, sizeof k, "%s_low", name);
  cJSON_AddNumberToObject(o, k, lo);
  snprintf(k, sizeof k, "%s_high", name);
  cJSON_AddNumberToObject(o, k, hi);
}

static cJSON *row_json(const plan_doc *d, const plan_row *r) {
  cJSON *o = cJSON_CreateObject();
  cJSON_AddNumberToObject(o, "nodes", r->nodes);
  cJSON_AddNumberToObject(o, "gpus", r->gpus);
  cJSON_AddBoolToObject(o, "fits", r->ok);
  if (!r->ok) { cJSON_AddStringToObject(o, "reason", r->why); return o; }
  char txt[192 + PF_PP_LAYOUT_MAX];
  pf_tune_plan_text(&r->plan, txt, sizeof txt);
  cJSON *par = pf_plan_json_parallel(o, &r->plan, PF_PLAN_FORM_SHAPE);
  cJSON_AddStringToObject(par, "options", txt);
  const pf_budget *b = &r->b;
  cJSON_AddNumberToObject(o, "iterations", b->iterations);
  const pf_pred_interval *iv = &r->iv;
  ranged(o, "iteration_time_s", r->t_iter_s, r->t_iter_s * iv->time_lo, r->t_iter_s * iv->time_hi);
  ranged(o, "tflops_per_gpu", r->tflops, iv->time_hi > 0 ? r->tflops / iv->time_hi : 0,
         iv->time_lo > 0 ? r->tflops / iv->time_lo : 0); /* no interval: 0, as the time's bounds */
  ranged(o, "scaling_efficiency", r->eff, r->eff_lo, r->eff_hi);
  ranged(o, "wall_time_h", b->wall_s / 3600, r->lo.wall_s / 3600, r->hi.wall_s / 3600);
  cJSON_AddNumberToObject(o, "jobs", b->jobs);
  cJSON *ck = cJSON_AddObjectToObject(o, "checkpoint");
  cJSON_AddNumberToObject(ck, "size_B", b->checkpoint_B);
  cJSON_AddNumberToObject(ck, "write_s", b->checkpoint_s);
  cJSON_AddNumberToObject(ck, "interval_h", b->interval_s / 3600);
  cJSON_AddNumberToObject(ck, "overhead_fraction", b->checkpoint_frac);
  cJSON *fl = cJSON_AddObjectToObject(o, "failures");
  cJSON_AddNumberToObject(fl, "expected", b->failures);
  cJSON_AddNumberToObject(fl, "lost_h", b->failure_s / 3600);
  if (isfinite(b->mtbf_s)) cJSON_AddNumberToObject(fl, "system_mtbf_h", b->mtbf_s / 3600);
  ranged(o, "gpu_hours", b->gpu_h, r->lo.gpu_h, r->hi.gpu_h);
  ranged(o, "node_hours", b->node_h, r->lo.node_h, r->hi.node_h);
  cJSON *bu = cJSON_AddObjectToObject(o, "billing_units");
  cJSON_AddNumberToObject(bu, "value", b->units);
  cJSON_AddStringToObject(bu, "unit", d->unit);
  ranged(o, "energy_MWh", b->energy_MWh, r->mwh_lo, r->mwh_hi);
  if (b->evaluations > 0) {
    cJSON *ev = cJSON_AddObjectToObject(o, "evaluation");
    cJSON_AddNumberToObject(ev, "interval", d->bo.eval_interval);
    cJSON_AddNumberToObject(ev, "iters", d->bo.eval_iters);
    cJSON_AddNumberToObject(ev, "evaluations", b->evaluations);
    cJSON_AddNumberToObject(ev, "eval_iteration_s", r->eval_iter_s);
    cJSON_AddNumberToObject(ev, "time_h", b->eval_s / 3600);
    cJSON_AddNumberToObject(ev, "energy_MWh", b->energy_eval_MWh);
  }
  cJSON *ep = cJSON_AddObjectToObject(o, "energy_phases");
  cJSON_AddNumberToObject(ep, "computing_h", b->busy_s / 3600);
  cJSON_AddNumberToObject(ep, "computing_MWh", b->energy_busy_MWh);
  cJSON_AddNumberToObject(ep, "waiting_h", b->waiting_s / 3600);
  cJSON_AddNumberToObject(ep, "waiting_MWh", b->energy_waiting_MWh);
  cJSON_AddBoolToObject(o, "within_job_limit", r->within_limit);
  cJSON *rg = cJSON_AddObjectToObject(o, "range");
  cJSON_AddStringToObject(rg, "time_regime", iv->time_regime);
  cJSON_AddNumberToObject(rg, "time_rows", iv->n_time);
  cJSON_AddStringToObject(rg, "efficiency_regime", iv->eff_regime);
  cJSON_AddNumberToObject(rg, "efficiency_rows", iv->n_eff);
  cJSON_AddStringToObject(rg, "power_regime", iv->power_regime);
  cJSON_AddNumberToObject(rg, "power_rows", iv->n_power);
  cJSON_AddNumberToObject(rg, "power_factor_low", iv->power_lo);
  cJSON_AddNumberToObject(rg, "power_factor_high", iv->power_hi);
  return o;
}

static void json(FILE *out, const plan_doc *d) {
  cJSON *root = pf_report_root_json();
  cJSON_AddStringToObject(root, "machine", d->machine);
  cJSON_AddStringToObject(root, "model", d->model);
  cJSON_AddStringToObject(root, "precision", d->precision);
  cJSON_AddStringToObject(root, "run", d->run);
  if (d->bo.tokens > 0) cJSON_AddNumberToObject(root, "tokens", d->bo.tokens);
  else { cJSON_AddNumberToObject(root, "epochs", d->bo.epochs); cJSON_AddNumberToObject(root, "samples", d->bo.samples); }
  cJSON_AddBoolToObject(root, "tuned", d->tuned & 1);
  cJSON *as = cJSON_AddObjectToObject(root, "assumptions");
  cJSON_AddNumberToObject(as, "gpu_mtbf_h", d->bo.gpu_mtbf_s / 3600);
  cJSON_AddNumberToObject(as, "restart_s", d->bo.restart_s);
  cJSON_AddNumberToObject(as, "job_startup_s", d->bo.startup_s);
  cJSON_AddNumberToObject(as, "walltime_limit_h", d->walltime_limit_s / 3600);
  cJSON_AddNumberToObject(as, "other_fraction", d->bo.other_fraction);
  cJSON_AddStringToObject(as, "billing", d->billing_note);
  cJSON *rg = cJSON_AddObjectToObject(root, "range");
  cJSON_AddNumberToObject(rg, "nominal_coverage", PF_INTERVAL_P_HI - PF_INTERVAL_P_LO);
  cJSON_AddBoolToObject(rg, "anchored", d->anchored);
  cJSON_AddNumberToObject(rg, "minimum_rows", PF_INTERVAL_MIN_ROWS);
  cJSON *arr = cJSON_AddArrayToObject(root, "rows");
  for (int i = 0; i < d->nrows; i++) cJSON_AddItemToArray(arr, row_json(d, &d->rows[i]));
  cJSON *rec = cJSON_AddObjectToObject(root, "recommended");
  if (d->fastest >= 0) {
    cJSON_AddNumberToObject(rec, "fastest_nodes", d->rows[d->fastest].nodes);
    cJSON_AddNumberToObject(rec, "cheapest_nodes", d->rows[d->cheapest].nodes);
    cJSON_AddNumberToObject(rec, "best_time_x_energy_nodes", d->rows[d->greenest].nodes);
  }
  if (d->min_eff > 0) {
    cJSON_AddNumberToObject(rec, "min_efficiency", d->min_eff);
    if (d->recommended >= 0) cJSON_AddNumberToObject(rec, "largest_above_min_efficiency_nodes", d->rows[d->recommended].nodes);
  }
  pf_report_json_print(out, root);
}

static void csv(FILE *out, const plan_doc *d) {
  fprintf(out, "nodes,gpus,tp,pp,dp,cp,mbs,iterations,iteration_time_s,tflops_per_gpu,scaling_efficiency,wall_time_h,"
               "jobs,gpu_hours,node_hours,billing_units,billing_unit,energy_MWh,within_job_limit,fits,"
               "node_hours_low,node_hours_high,gpu_hours_low,gpu_hours_high,wall_time_h_low,wall_time_h_high,"
               "scaling_efficiency_low,scaling_efficiency_high,energy_MWh_low,energy_MWh_high\n");
  for (int i = 0; i < d->nrows; i++) {
    const plan_row *r = &d->rows[i];
    if (!r->ok) { fprintf(out, "%d,%d,,,,,,,,,,,,,,,,,,false,,,,,,,,,,\n", r->nodes, r->gpus); continue; }
    fprintf(out, "%d,%d,%d,%d,%d,%d,%d,%.0f,%.6g,%.6g,%.6g,%.6g,%.0f,%.6g,%.6g,%.6g,%s,%.6g,%s,true,", r->nodes,
            r->gpus, r->plan.tp, r->plan.pp, r->plan.dp, r->plan.cp, r->plan.mbs, r->b.iterations, r->t_iter_s,
            r->tflops, r->eff, r->b.wall_s / 3600, r->b.jobs, r->b.gpu_h, r->b.node_h, r->b.units, d->unit,
            r->b.energy_MWh, r->within_limit ? "true" : "false");
    fprintf(out, "%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g,%.6g\n", r->lo.node_h, r->hi.node_h, r->lo.gpu_h,
            r->hi.gpu_h, r->lo.wall_s / 3600, r->hi.wall_s / 3600, r->eff_lo, r->eff_hi, r->mwh_lo, r->mwh_hi);
  }
}

void pf_plan_table(FILE *out, const plan_doc *d, const char *plot) {
  (void)plot;
  table(out, d);
  fprintf(out, "\nScaling evidence (predicted by preflight %s): ", pf_version());
  plan_paragraph(out, d);
}

void pf_plan_json(FILE *out, const plan_doc *d, const char *plot) { (void)plot; json(out, d); }
void pf_plan_csv(FILE *out, const plan_doc *d, const char *plot) { (void)plot; csv(out, d); }

char *plan_render(const plan_doc *d, pf_format fmt, const char *plot) {
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  if (!out) return NULL;
  pf_fmt(fmt)->plan(out, d, plot);
  if (fclose(out) != 0) { free(buf); return NULL; }
  return buf;
}

int plan_plot(const plan_doc *d, const char *path) {
  pf_plot fig;
  pf_plot_init(&fig);
  pf_plot_panel *cost = pf_plot_panel_add(&fig, "Cost of the run against its scale", "nodes", "node-hours", true, false);
  pf_plot_panel *wall = pf_plot_panel_add(&fig, "Wall time of the run", "nodes", "wall time (h)", true, true);
  double x[64], nh[64], lo[64], hi[64], wh[64];
  int n = 0;
  for (int i = 0; i < d->nrows; i++) {
    const plan_row *r = &d->rows[i];
    if (!r->ok) continue;
    x[n] = r->nodes;
    nh[n] = r->b.node_h;
    wh[n] = r->b.wall_s / 3600;
    lo[n] = r->lo.node_h;
    hi[n] = r->hi.node_h;
    n++;
  }
  /* one series, the run, in one colour in both panels; its range dashed in the same colour */
  int rc = pf_plot_add(cost, "predicted", PF_PLOT_LINES, n, x, nh);
  if (rc == 0) {
    rc = pf_plot_add_like(cost, "range", "predicted", PF_PLOT_DASHED, n, x, lo);
    if (rc == 0) rc = pf_plot_add_like(cost, "range", "predicted", PF_PLOT_DASHED, n, x, hi);
  }
  if (rc == 0) rc = pf_plot_add(wall, "predicted", PF_PLOT_LINES, n, x, wh);
  if (rc == 0 && d->walltime_limit_s > 0) {
    wall->ref_y = d->walltime_limit_s / 3600;
    snprintf(wall->ref_label, sizeof wall->ref_label, "one job (%.0f h limit)", d->walltime_limit_s / 3600);
  }
  snprintf(fig.caption, sizeof fig.caption,
           "Predicted by preflight %s: %s on %s for %s. Node-hours include checkpoints, expected failures and job "
           "start-ups (assumptions in the plan output); 1 node-hour = %g %s%s on %s; dashed: the nominal 80 %% range "
           "from preflight's validation errors; wall time excludes queueing.",
           pf_version(), d->model, d->machine, d->run, d->per_node_hour, d->unit, d->per_node_hour == 1 ? "" : "s",
           d->machine);
  if (rc == 0) rc = pf_plot_write(&fig, path);
  pf_plot_free(&fig);
  return rc;
}
