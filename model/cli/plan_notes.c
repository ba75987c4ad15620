/* plan_notes.c - the sources and assumptions of `preflight plan`: one note
 * per value that is not read from a table cell, each saying where its
 * numbers come from (a paper, the machine file, an option the user gave) or
 * that it is an assumption.  Every format prints the same notes once (the
 * table's "overheads", the Markdown and LaTeX "Sources and assumptions"), so
 * a proposal repeats no note and carries no machine path: files are named by
 * plan_file_label. */
#include "plan.h"

#include "report/report.h"
#include "study/study.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

const char *plan_file_label(const char *path, char *buf, size_t n) {
  const char *m = path ? strstr(path, "machines/") : NULL;
  const char *v = path ? strstr(path, "scenarios/validation") : NULL;
  if (m && (m == path || m[-1] == '/')) snprintf(buf, n, "%s", m);      /* a shipped machine file */
  else if (v && (v == path || v[-1] == '/')) snprintf(buf, n, "%s", v); /* the shipped validation files */
  else if (path && strrchr(path, '/')) snprintf(buf, n, "%s", strrchr(path, '/') + 1);
  else snprintf(buf, n, "%s", path ? path : "");
  return buf;
}

static plan_note *add(plan_note *n, int *k, const char *what, bool assumed) {
  plan_note *x = &n[(*k)++];
  x->what = what;
  x->assumed = assumed;
  x->text[0] = '\0';
  return x;
}

static void checkpoint_note(const plan_doc *d, const plan_row *r, plan_note *x) {
  const pf_budget *b = &r->b;
  char bw[200];
  if (d->bo.fs_bw_Bps > 0) snprintf(bw, sizeof bw, "--fs-bandwidth");
  else if (d->storage_bw_Bps > 0)
    snprintf(bw, sizeof bw, "one NIC per node, capped by the file system's %.3g GB/s of the machine file",
             d->storage_bw_Bps / 1e9);
  else snprintf(bw, sizeof bw, "one NIC per node, capped at 100 GB/s for one job: assumed, the machine file gives "
                               "no file-system bandwidth");
  x->assumed = d->bo.fs_bw_Bps <= 0 && d->storage_bw_Bps <= 0;
  snprintf(x->text, sizeof x->text,
           "%.3g GB (%s) written in %.0f s at %.3g GB/s (%s) every %.2f h, Young's optimal interval (CACM 1974): "
           "%.1f %% of the training time", b->checkpoint_B / 1e9,
           d->bo.checkpoint_B > 0 ? "--checkpoint-size" : "14 B per parameter: bf16 weights and fp32 Adam state, "
                                                          "ZeRO (SC20) section 3.1",
           b->checkpoint_s, b->checkpoint_B / b->checkpoint_s / 1e9, bw, b->interval_s / 3600, 100 * b->checkpoint_frac);
}

static void failure_note(const plan_doc *d, const plan_row *r, const pf_budget_opts *def, plan_note *x) {
  const pf_budget *b = &r->b;
  bool mtbf_default = d->bo.gpu_mtbf_s == def->gpu_mtbf_s, restart_default = d->bo.restart_s == def->restart_s;
  x->assumed = restart_default;
  if (!isfinite(b->mtbf_s)) { snprintf(x->text, sizeof x->text, "not counted (--gpu-mtbf 0)"); x->assumed = false; return; }
  snprintf(x->text, sizeof x->text,
           "system MTBF %.1f h at %d GPUs from a GPU MTBF of %.0f h (%s), %.1f expected, costing %.1f h: half an "
           "interval of work and %.0f min restart each (%s)%s", b->mtbf_s / 3600, r->gpus, d->bo.gpu_mtbf_s / 3600,
           mtbf_default ? "the Llama 3 run: 419 interruptions in 54 days on 16384 GPUs, Dubey et al. 2024, Table 5"
                        : "--gpu-mtbf",
           b->failures, b->failure_s / 3600, d->bo.restart_s / 60, restart_default ? "assumed" : "--restart-time",
           b->failures_dominate ? "; WARNING: failures come faster than checkpoints: shorten the checkpoint write or "
                                  "use fewer nodes" : "");
}

static void jobs_note(const plan_doc *d, const plan_row *r, const pf_budget_opts *def, plan_note *x) {
  const pf_budget *b = &r->b;
  bool startup_default = d->bo.startup_s == def->startup_s;
  x->assumed = startup_default || (d->bo.walltime_s <= 0 && strncmp(d->limits_note, "assum", 5) == 0);
  if (b->walltime_limit_s > 0)
    snprintf(x->text, sizeof x->text, "%.0f of at most %.0f h (%s), %.0f min start-up each (%s)", b->jobs,
             b->walltime_limit_s / 3600, d->bo.walltime_s > 0 ? "--job-walltime" : d->limits_note[0] ? d->limits_note
                                                                                                   : "the machine file",
             d->bo.startup_s / 60, startup_default ? "assumed: launch, NCCL start, loading the checkpoint" : "--job-startup");
  else {
    snprintf(x->text, sizeof x->text, "the machine file gives no wall-time limit (--job-walltime sets one): one job");
    x->assumed = true;
  }
}

static void energy_note(const plan_doc *d, const plan_row *r, plan_note *x) {
  const pf_budget *b = &r->b;
  char fn[PF_PATH_MAX];
  snprintf(x->text, sizeof x->text,
           "%.4g MWh over %.1f h of computing at the power of its kernels, %.3g MWh over %.1f h of checkpoint writes, "
           "restarts and start-ups with the GPUs waiting (the power model of the device file and the node, network "
           "and PUE figures of %s)", b->energy_busy_MWh, b->busy_s / 3600, b->energy_waiting_MWh, b->waiting_s / 3600,
           plan_file_label(d->machine_file, fn, sizeof fn));
}

static void range_note(const plan_doc *d, plan_note *x) {
  char fn[PF_PATH_MAX];
  if (d->range.n >= PF_RANGE_MIN_ROWS)
    snprintf(x->text, sizeof x->text, "node-hours x %.2f to x %.2f, the spread of measured/predicted time over %d "
             "similar measured runs (%s)", d->range.lo, d->range.hi, d->range.n, d->range.rows);
  else
    snprintf(x->text, sizeof x->text, "none can be given: %s in %s", d->range.why,
             plan_file_label(d->validation, fn, sizeof fn));
}

int plan_notes(const plan_doc *d, plan_note *n) {
  const plan_row *r = d->recommended >= 0 ? &d->rows[d->recommended] : &d->rows[d->base];
  pf_budget_opts def;
  pf_budget_opts_init(&def);
  int k = 0;
  char fn[PF_PATH_MAX];
  snprintf(add(n, &k, "prediction", false)->text, sizeof n->text,
           "iteration time, TFLOP/s per GPU and power: preflight %s for %s on %s, from %s (each value's source is in "
           "the file's provenance and docs/machine-sources.md)", pf_version(), d->model, d->machine,
           plan_file_label(d->machine_file, fn, sizeof fn));
  snprintf(add(n, &k, "efficiency", false)->text, sizeof n->text,
           "TFLOP/s per GPU relative to the smallest scale that fits in memory (EPICURE's definition)");
  checkpoint_note(d, r, add(n, &k, "checkpoints", false));
  failure_note(d, r, &def, add(n, &k, "failures", false));
  jobs_note(d, r, &def, add(n, &k, "jobs", false));
  if (d->bo.other_fraction > 0)
    snprintf(add(n, &k, "other phases", false)->text, sizeof n->text, "%.0f %% of the training time (--overhead)",
             100 * d->bo.other_fraction);
  if (r->b.evaluations > 0)
    snprintf(add(n, &k, "evaluation", false)->text, sizeof n->text,
             "%.0f evaluations of %.0f forward-only iterations (every %.0f; --eval-interval, --eval-iters) at %.3g s "
             "each: %.1f h (%.1f %% of the training time), %.3g MWh at the forward kernels' power", r->b.evaluations,
             d->bo.eval_iters, d->bo.eval_interval, r->eval_iter_s, r->b.eval_s / 3600,
             100 * r->b.eval_s / r->b.compute_s, r->b.energy_eval_MWh);
  energy_note(d, r, add(n, &k, "energy", false));
  plan_note *bl = add(n, &k, "billing", false);
  int w = snprintf(bl->text, sizeof bl->text, "1 node-hour = %g %s%s on %s; %s%s%s", d->per_node_hour, d->unit,
                   d->per_node_hour == 1 ? "" : "s", d->machine, d->billing_per_device ? "a partial node is billed per device" : "whole nodes are billed",
                   d->billing_note[0] ? "; " : "", d->billing_note);
  if (d->dies_per_package > 1 && w > 0 && (size_t)w < sizeof bl->text)
    snprintf(bl->text + w, sizeof bl->text - (size_t)w, "; %s count logical devices (%d per node, %d per package), "
             "the site's %ss count packages", d->devh, d->gpn, d->dies_per_package, d->unit);
  range_note(d, add(n, &k, "range", false));
  if (d->min_eff > 0)
    snprintf(add(n, &k, "requested scale", false)->text, sizeof n->text,
             "the largest whose efficiency is at least %.0f %% (--min-efficiency)", 100 * d->min_eff);
  snprintf(add(n, &k, "queueing", true)->text, sizeof n->text, "not counted: wall time starts when the job runs");
  return k;
}
