/* cmd_validate.c - `preflight validate`: predicted vs measured.
 *
 *   validate RUNS.csv [--format table|json|csv|markdown] [--plot FILE.svg] [--max-error P]
 *   validate --megatron-log FILE --machine ID [scenario options]
 *   validate --fit RUNS.csv [-o fitted.json] [--no-loo]
 *
 * Rows, errors and statistics come from the library (validate.c, fit.c,
 * megatron.c); this file formats them.  The parity plot is hand-written SVG:
 * predicted against measured on log axes with the +-10 % band (no plotting
 * dependency).  Exit codes: 0 done; 1 --max-error exceeded (median absolute
 * percentage error above P); 2 malformed input or usage.
 */
#include "cli.h"
#include "options.h"
#include "validate_cli.h"

#include "preflight/error.h"
#include "preflight/report.h"
#include "preflight/validate.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pf_opt validate_opts[] = {
    {"megatron-log", "FILE", "compare a Megatron-LM training log with the prediction for its configuration"},
    {"fit", "RUNS.csv", "fit compute_eff, comm_eff, step_overhead_s to the runs; -o writes the calibration overlay"},
    {"no-loo", NULL, "with --fit: skip the leave-one-configuration-out errors"},
    {"fit-group", "COLUMN", "with --fit: one fit per value of this column (default machine; \"all\" for one fit)"},
    {"plot", "FILE.svg", "parity plot: predicted vs measured, log axes, +-10 % band"},
    {"max-error", "P", "exit 1 when the median absolute error exceeds P percent (for CI)"},
    {"summary-only", NULL, "print the summary without the per-row table"},
    {NULL, NULL, NULL}};

static const char *examples =
    "  preflight validate scenarios/validation/epicure.csv\n"
    "  preflight validate scenarios/validation/maelstrom.csv --format json --plot parity.svg\n"
    "  preflight validate runs.csv --max-error 15          # exit 1 if the median error exceeds 15 %\n"
    "  preflight validate --megatron-log train.log --machine leonardo-booster\n"
    "  preflight validate --fit my-runs.csv -o fitted.json\n"
    "  preflight predict --machine lumi-g --model llama2-7b --nodes 64 --tp 2 --gbs 1024 --calibration fitted.json\n";


static int get_format(const pf_optvals *v, vfmt *f, bool fit_mode) {
  const char *s = pf_opts_get(v, "format");
  const char *o = fit_mode ? NULL : pf_opts_get(v, "o");
  *f = FMT_TABLE;
  if (!s && o) {
    size_t n = strlen(o);
    if (n > 5 && !strcmp(o + n - 5, ".json")) s = "json";
    else if (n > 4 && !strcmp(o + n - 4, ".csv")) s = "csv";
    else if (n > 3 && !strcmp(o + n - 3, ".md")) s = "markdown";
  }
  if (!s || !strcmp(s, "table")) return 0;
  if (!strcmp(s, "json")) { *f = FMT_JSON; return 0; }
  if (!strcmp(s, "csv")) { *f = FMT_CSV; return 0; }
  if (!strcmp(s, "markdown") || !strcmp(s, "md")) { *f = FMT_MD; return 0; }
  return pf_error_set(PF_EINVAL, "--format \"%s\": valid: table, json, csv, markdown", s);
}

/* ---- emit text to -o or stdout ---- */

static int emit(const char *out_path, char *buf) {
  if (!out_path) { fputs(buf, stdout); return 0; }
  return pf_write_file_atomic(out_path, buf);
}

static int render(const pf_vset *s, vfmt fmt, bool rows, bool fit, char **text) {
  size_t len = 0;
  FILE *f = open_memstream(text, &len);
  if (!f) return pf_error_set(PF_ENOMEM, "out of memory");
  if (fmt == FMT_JSON) {
    cJSON *root = pf_report_root_json();
    cJSON_AddStringToObject(root, "file", s->path);
    cJSON *arr = cJSON_AddArrayToObject(root, "rows");
    for (int i = 0; i < s->n; i++) cJSON_AddItemToArray(arr, pf_vreport_row_json(&s->rows[i], fit));
    cJSON_AddItemToObject(root, "summary", pf_vreport_summary_json(s));
    pf_report_json_print(f, root);
  } else if (fmt == FMT_CSV) pf_vreport_csv(f, s, fit);
  else if (fmt == FMT_MD) pf_vreport_markdown(f, s, rows);
  else pf_vreport_table(f, s, rows, fit);
  fclose(f);
  return 0;
}

/* ---- validate RUNS.csv ---- */

static int check_max_error(const pf_optvals *v, const pf_vset *s, int *status) {
  double p;
  int rc = pf_opts_double(v, "max-error", &p);
  if (rc <= 0) return rc;
  pf_vstats st = pf_validate_stats(s, NULL, NULL);
  if (st.n == 0) {
    fprintf(stderr, "preflight validate: --max-error %g: no row could be predicted\n", p);
    *status = 1;
  } else if (st.median_abs_pct > p) {
    fprintf(stderr, "preflight validate: median |error| %.2f %% exceeds --max-error %g %%\n", st.median_abs_pct, p);
    *status = 1;
  }
  return 0;
}

static int cmd_csv(const pf_optvals *v, const char *path, vfmt fmt) {
  pf_vset s;
  int rc = pf_validate_read(path, &s);
  if (rc == 0 && (rc = pf_cli_vset_check(&s)) < 0) pf_vset_free(&s);
  if (rc < 0) return pf_cli_fail("validate", rc);
  pf_vrow_defaults d;
  pf_validate_opts o = pf_cli_validate_opts(v, &d, path);
  double me;
  if ((rc = pf_opts_double(v, "max-error", &me)) < 0) { pf_vset_free(&s); return pf_cli_fail("validate", rc); }
  if ((rc = pf_validate_run(&s, &o)) < 0) { pf_vset_free(&s); return pf_cli_fail("validate", rc); }
  char *text = NULL;
  int status = 0;
  if ((rc = render(&s, fmt, !pf_opts_get(v, "summary-only"), false, &text)) < 0 ||
      (rc = emit(pf_opts_get(v, "o"), text)) < 0)
    status = pf_cli_fail("validate", rc);
  free(text);
  const char *plot = pf_opts_get(v, "plot");
  if (status == 0 && plot && (rc = pf_vreport_plot(&s, plot)) < 0) status = pf_cli_fail("validate", rc);
  if (status == 0 && (rc = check_max_error(v, &s, &status)) < 0) status = pf_cli_fail("validate", rc);
  pf_vset_free(&s);
  return status;
}

/* ---- validate --megatron-log FILE ---- */

static int opt_add(pf_optvals *v, const char *name, const char *value, const char *src) {
  if (v->n >= PF_MAXVALS) return pf_error_set(PF_EINVAL, "too many options");
  v->name[v->n] = name;
  v->value[v->n] = strdup(value);
  if (!v->value[v->n]) return pf_error_set(PF_ENOMEM, "out of memory");
  snprintf(v->source[v->n], sizeof v->source[0], "%s", src);
  v->n++;
  return 0;
}

static bool is_true(const char *s) { return s && (!strcmp(s, "True") || !strcmp(s, "true") || !strcmp(s, "1")); }
static bool is_set(const char *s) { return s && *s && strcmp(s, "None") && strcmp(s, "null"); }

/* Option pairs from the log's argument dump (Megatron names -> preflight options). */
static int log_options(const pf_megatron_log *l, const pf_optvals *cli, pf_optvals *v, char *notes, size_t nlen) {
  static const struct { const char *arg, *opt; bool shape; } map[] = {
      {"tensor_model_parallel_size", "tp", false}, {"pipeline_model_parallel_size", "pp", false},
      {"context_parallel_size", "cp", false},      {"micro_batch_size", "mbs", false},
      {"global_batch_size", "gbs", false},         {"seq_length", "seq", false},
      {"num_layers", "layers", true},              {"hidden_size", "hidden", true},
      {"num_attention_heads", "heads", true},      {"ffn_hidden_size", "ffn-hidden", true}};
  bool user_model = pf_opts_get(cli, "model") || pf_opts_get(cli, "params") || pf_opts_get(cli, "flops-per-sample");
  int rc = 0;
  char src[PF_PATH_MAX + 16];
  for (size_t i = 0; i < sizeof map / sizeof map[0] && rc == 0; i++) {
    const char *a = pf_megatron_arg(l, map[i].arg);
    if (!is_set(a) || (map[i].shape && user_model)) continue;
    snprintf(src, sizeof src, "%s:%d", l->path, pf_megatron_arg_line(l, map[i].arg));
    rc = opt_add(v, map[i].opt, a, src);
  }
  if (rc < 0) return rc;
  const char *a;
  if (!user_model) {
    if (is_true(pf_megatron_arg(l, "group_query_attention")) && is_set(a = pf_megatron_arg(l, "num_query_groups")))
      if ((rc = opt_add(v, "kv-heads", a, l->path)) < 0) return rc;
    if (is_true(pf_megatron_arg(l, "swiglu")) && (rc = opt_add(v, "swiglu", "1", l->path)) < 0) return rc;
    const char *voc = pf_megatron_arg(l, "padded_vocab_size");
    if (!is_set(voc)) voc = pf_megatron_arg(l, "vocab_size");
    if (!is_set(voc) && (a = pf_megatron_arg(l, "tokenizer_type")) && !strcmp(a, "GPT2BPETokenizer")) {
      voc = "50257";
      strncat(notes, "vocabulary 50257 (GPT2BPETokenizer)", nlen - strlen(notes) - 1);
    }
    if (is_set(voc) && (rc = opt_add(v, "vocab", voc, l->path)) < 0) return rc;
  }
  if (is_true(pf_megatron_arg(l, "sequence_parallel")) && (rc = opt_add(v, "sp", "1", l->path)) < 0) return rc;
  if (is_true(pf_megatron_arg(l, "use_distributed_optimizer")) && (rc = opt_add(v, "dist-opt", "1", l->path)) < 0)
    return rc;
  if (is_true(pf_megatron_arg(l, "overlap_grad_reduce")) && (rc = opt_add(v, "overlap-grad-reduce", "1", l->path)) < 0)
    return rc;
  if (is_true(pf_megatron_arg(l, "overlap_param_gather")) && (rc = opt_add(v, "overlap-param-gather", "1", l->path)) < 0)
    return rc;
  if (is_set(a = pf_megatron_arg(l, "ddp_bucket_size")) && (rc = opt_add(v, "ddp-bucket-size", a, l->path)) < 0) return rc;
  const char *prec = is_true(pf_megatron_arg(l, "fp16")) ? "fp16" : is_true(pf_megatron_arg(l, "bf16")) ? "bf16"
                     : l->nargs > 0 ? "fp32" : NULL;
  if (prec && (rc = opt_add(v, "precision", prec, l->path)) < 0) return rc;
  a = pf_megatron_arg(l, "recompute_granularity");
  if (is_set(a) && (!strcmp(a, "selective") || !strcmp(a, "full"))) rc = opt_add(v, "recompute", a, l->path);
  else if (is_true(pf_megatron_arg(l, "recompute_activations"))) rc = opt_add(v, "recompute", "selective", l->path);
  if (rc < 0) return rc;
  if (is_set(a = pf_megatron_arg(l, "virtual_pipeline_model_parallel_size"))) {
    char sch[40];
    snprintf(sch, sizeof sch, "interleaved:%s", a);
    if ((rc = opt_add(v, "schedule", sch, l->path)) < 0) return rc;
  }
  if (!pf_opts_get(cli, "nodes") && !pf_opts_get(cli, "gpus") && is_set(a = pf_megatron_arg(l, "world_size")))
    if ((rc = opt_add(v, "gpus", a, l->path)) < 0) return rc;
  /* the global batch from the iteration lines when the dump does not give it */
  if (!is_set(pf_megatron_arg(l, "global_batch_size")) && l->niter > 0 && l->gbs[l->niter - 1] > 0) {
    char g[32];
    snprintf(g, sizeof g, "%d", l->gbs[l->niter - 1]);
    if ((rc = opt_add(v, "gbs", g, l->path)) < 0) return rc;
  }
  return 0;
}

/* The log as validation-CSV rows (--format csv): every option the run used is an explicit column, so the
 * rows can be appended to a validation CSV as they are (docs/validation.md). */
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

static int cmd_megatron(const pf_optvals *cli, const char *path, vfmt fmt) {
  pf_megatron_log *l = malloc(sizeof *l);
  if (!l) return pf_cli_fail("validate", pf_error_set(PF_ENOMEM, "out of memory"));
  int rc = pf_megatron_read(path, l);
  if (rc < 0) { free(l); return pf_cli_fail("validate", rc); }
  pf_optvals v = {0};
  char notes[256] = "";
  rc = log_options(l, cli, &v, notes, sizeof notes);
  for (int i = 0; rc == 0 && i < cli->n; i++) rc = opt_add(&v, cli->name[i], cli->value[i], cli->source[i]);
  pf_scenario *sc = malloc(sizeof *sc);
  int status = 0;
  if (!sc) rc = pf_error_set(PF_ENOMEM, "out of memory");
  if (rc == 0 && !pf_opts_get(&v, "machine"))
    rc = pf_error_set(PF_EINVAL, "--machine is required: a Megatron log does not say which machine it ran on");
  if (rc == 0 && !pf_opts_get(&v, "model") && !pf_opts_get(&v, "layers") && !pf_opts_get(&v, "params"))
    rc = pf_error_set(PF_EINVAL, "%s: no argument dump (\"---- arguments ----\"): give the model (--model or "
                      "--layers/--hidden/--heads/--seq/--vocab) and the plan as options", path);
  if (rc == 0 && !pf_opts_get(&v, "nodes") && !pf_opts_get(&v, "gpus"))
    rc = pf_error_set(PF_EINVAL, "%s: the log does not state world_size: give --nodes or --gpus", path);
  if (rc == 0) rc = pf_opts_scenario(&v, sc);
  if (rc < 0) { status = pf_cli_fail("validate", rc); goto done; }

  pf_vset s = {0};
  snprintf(s.path, sizeof s.path, "%s", path);
  s.rows = calloc(4, sizeof *s.rows);
  if (!s.rows) { status = pf_cli_fail("validate", pf_error_set(PF_ENOMEM, "out of memory")); goto done; }
  int first = l->line[0], last = l->line[l->niter - 1];
  struct { pf_metric m; double v; pf_scope scope; } meas[4] = {
      {PF_MET_ITER_TIME, l->med_time_s, PF_SCOPE_NONE}, {PF_MET_TFLOPS, l->med_tflops, PF_SCOPE_NONE},
      {PF_MET_ENERGY, l->med_energy_J, PF_SCOPE_GPU_PER_GPU}, {PF_MET_POWER, l->med_power_W, PF_SCOPE_GPU_PER_GPU}};
  pf_prediction *pred = malloc(sizeof *pred);
  pf_scenario *chk = malloc(sizeof *chk);
  if (!pred || !chk) { free(pred); free(chk); free(s.rows); status = pf_cli_fail("validate", pf_error_set(PF_ENOMEM, "out of memory")); goto done; }
  *chk = *sc;
  pf_plan_check(chk);
  for (int k = 0; k < 4; k++) {
    if (isnan(meas[k].v)) continue;
    pf_vrow *r = &s.rows[s.n++];
    r->line = l->line[l->niter > 1 ? 1 : 0];
    snprintf(r->machine, sizeof r->machine, "%s", sc->machine.id);
    snprintf(r->model, sizeof r->model, "%s", sc->workload.id);
    r->nodes = chk->nodes;
    r->gpus = chk->gpus;
    r->metric = meas[k].m;
    r->scope = meas[k].scope;
    r->measured = r->value = meas[k].v;
    snprintf(r->unit, sizeof r->unit, "%s", pf_metric_unit(r->metric));
    r->loo_error = r->loo_predicted = NAN;
    snprintf(r->source, sizeof r->source, "%s:%d-%d (median of %d logged iterations after the first)", path, first,
             last, l->used);
    rc = pf_vrow_predict(r, sc, NULL, &r->predicted, pred, r->reason, sizeof r->reason);
    if (rc == 0) { r->status = PF_ROW_PREDICTED; r->error = pf_vrow_error(r, r->predicted); }
    else r->status = rc > 0 ? PF_ROW_NOT_PREDICTED : PF_ROW_FAILED;
  }
  free(pred);
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (fmt == FMT_JSON) {
    cJSON *root = pf_report_root_json();
    cJSON *mg = cJSON_AddObjectToObject(root, "megatron_log");
    cJSON_AddStringToObject(mg, "file", path);
    cJSON_AddStringToObject(mg, "time_format", l->format);
    cJSON_AddNumberToObject(mg, "iterations_logged", l->niter);
    cJSON_AddNumberToObject(mg, "iterations_used", l->used);
    cJSON_AddNumberToObject(mg, "arguments", l->nargs);
    pf_vreport_num_or_null(mg, "median_iteration_time_s", l->med_time_s);
    pf_vreport_num_or_null(mg, "median_tflops_per_gpu", l->med_tflops);
    pf_vreport_num_or_null(mg, "median_energy_J_per_iter_per_gpu", l->med_energy_J);
    pf_vreport_num_or_null(mg, "median_power_W_per_gpu", l->med_power_W);
    cJSON *cfg = cJSON_AddObjectToObject(root, "configuration");
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
    cJSON *arr = cJSON_AddArrayToObject(root, "rows");
    for (int i = 0; i < s.n; i++) cJSON_AddItemToArray(arr, pf_vreport_row_json(&s.rows[i], false));
    cJSON_AddItemToObject(root, "summary", pf_vreport_summary_json(&s));
    pf_report_json_print(f, root);
  } else if (fmt == FMT_CSV) {
    megatron_rows(f, &v, &s);
  } else {
    fprintf(f, "Megatron-LM log %s: %d iteration lines (time in %s), %d used (first skipped as warm-up), %d "
               "arguments\n", path, l->niter, l->format, l->used, l->nargs);
    fprintf(f, "configuration: %s on %s, %d nodes, %d GPUs, TP %d x PP %d x DP %d, mbs %d, gbs %d, %s%s%s\n",
            chk->workload.id, chk->machine.id, chk->nodes, chk->gpus, chk->plan.tp, chk->plan.pp, chk->plan.dp,
            chk->plan.mbs, chk->plan.gbs, pf_precision_name(chk->precision), notes[0] ? "; " : "", notes);
    fprintf(f, "%-26s %14s %14s %9s\n", "metric", "measured", "predicted", "error");
    for (int i = 0; i < s.n; i++) {
      const pf_vrow *r = &s.rows[i];
      char m[48], p[48];
      pf_vreport_fmt_measured(r, m, sizeof m);
      pf_vreport_fmt_value(r, r->predicted, p, sizeof p);
      char label[48], e[16];
      snprintf(label, sizeof label, "%s%s", pf_metric_name(r->metric),
               r->scope == PF_SCOPE_GPU_PER_GPU ? " (per GPU)" : "");
      if (r->status == PF_ROW_PREDICTED) fprintf(f, "%-26s %14s %14s %9s\n", label, m, p, pf_vreport_fmt_err(r->error, e, sizeof e));
      else fprintf(f, "%-26s %14s %14s  %s\n", label, m, "-", r->reason);
    }
  }
  fclose(f);
  if ((rc = emit(pf_opts_get(cli, "o"), text)) < 0) status = pf_cli_fail("validate", rc);
  free(text);
  if (status == 0 && (rc = check_max_error(cli, &s, &status)) < 0) status = pf_cli_fail("validate", rc);
  free(s.rows);
  free(chk);
done:
  pf_opts_free(&v);
  free(sc);
  pf_megatron_free(l);
  free(l);
  return status;
}

int pf_cmd_validate(int argc, char **argv) {
  pf_optvals v = {0};
  const pf_opt *const tables[] = {validate_opts, pf_scenario_opts, pf_output_opts, NULL};
  int rc = pf_opts_parse(argc, argv, tables, &v);
  if (rc < 0) { pf_opts_free(&v); return pf_cli_fail("validate", rc); }
  if (v.help) {
    pf_opts_help(stdout,
                 "usage: preflight validate RUNS.csv [--format table|json|csv|markdown] [--plot FILE.svg] [--max-error P]\n"
                 "       preflight validate --megatron-log FILE --machine ID [scenario options]\n"
                 "       preflight validate --fit RUNS.csv [-o fitted.json] [--no-loo]\n\n"
                 "Predicts every measured run, prints the relative errors and their median and mean; rows the model\n"
                 "cannot predict (no workload, energy measured over whole jobs or nodes) are listed with the reason.\n"
                 "The CSV columns are described in docs/validation.md.",
                 tables, examples);
    pf_opts_free(&v);
    return 0;
  }
  const char *mlog = pf_opts_get(&v, "megatron-log"), *fit = pf_opts_get(&v, "fit");
  vfmt fmt;
  int status;
  if ((rc = get_format(&v, &fmt, fit != NULL)) < 0) status = pf_cli_fail("validate", rc);
  else if (mlog && fit) status = pf_cli_fail("validate", pf_error_set(PF_EINVAL, "--megatron-log and --fit: give one"));
  else if ((mlog || fit) && v.npositional > 0)
    status = pf_cli_fail("validate", pf_error_set(PF_EINVAL, "\"%s\": no RUNS.csv argument with --%s", v.positional[0],
                                                  mlog ? "megatron-log" : "fit"));
  else if (!mlog && !fit && v.npositional != 1)
    status = pf_cli_fail("validate", pf_error_set(PF_EINVAL, "give one RUNS.csv, --megatron-log FILE or --fit RUNS.csv "
                                                  "(see preflight validate --help)"));
  else if (mlog) {
    /* scenario options only: drop validate's own */
    pf_optvals sv = {0};
    rc = 0;
    for (int i = 0; i < v.n && rc == 0; i++) {
      bool own = false;
      for (const pf_opt *o = validate_opts; o->name; o++) if (!strcmp(o->name, v.name[i])) own = true;
      if (!own && strcmp(v.name[i], "format") && strcmp(v.name[i], "o")) rc = opt_add(&sv, v.name[i], v.value[i], v.source[i]);
    }
    if (rc < 0) status = pf_cli_fail("validate", rc);
    else {
      /* cmd_megatron reads --o and --max-error from v, scenario pairs from sv */
      for (int i = 0; i < v.n && rc == 0; i++)
        if (!strcmp(v.name[i], "o") || !strcmp(v.name[i], "max-error")) rc = opt_add(&sv, v.name[i], v.value[i], v.source[i]);
      status = rc < 0 ? pf_cli_fail("validate", rc) : cmd_megatron(&sv, mlog, fmt);
    }
    pf_opts_free(&sv);
  } else if (fit) status = pf_cli_validate_fit(&v, fit, fmt);
  else status = cmd_csv(&v, v.positional[0], fmt);
  pf_opts_free(&v);
  return status;
}
