/* cmd_validate.c - `preflight validate`: predicted vs measured.
 *
 *   validate RUNS.csv [--format table|json|csv|markdown] [--plot FILE.svg] [--max-error P]
 *   validate --megatron-log FILE --machine ID [scenario options]
 *   validate --fit RUNS.csv [-o fitted.json] [--no-loo]
 *
 * Rows, errors and statistics come from the library (validate.c, fit.c,
 * megatron.c); validate_out.c formats them.  RUNS.csv is streamed: checked in
 * a first pass (so a malformed row fails before any output), then read again
 * in chunks of rows that are predicted over all cores and written at once, so
 * a file of any size validates in constant memory.  Exit codes: 0 done; 1
 * --max-error exceeded (median absolute percentage error above P); 2
 * malformed input or usage (docs/exit-codes.md).
 */
#include "cli.h"
#include "options.h"
#include "validate_cli.h"
#include "validate_out.h"

#include "study/study.h"
#include "core/core.h"
#include "report/report.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const pf_opt validate_opts[] = {
    {"megatron-log", "FILE", "compare a Megatron-LM training log with the prediction for its configuration"},
    {"fit", "RUNS.csv", "fit compute_eff, comm_eff, step_overhead_s, input_rate_Bps per machine; -o writes the calibration overlay"},
    {"no-loo", NULL, "with --fit: skip the leave-one-out errors"},
    {"loo", "WHAT", "with --fit: leave out each configuration (default) or each machine (with --fit-group all: a machine the fit never saw)"},
    {"fit-group", "COLUMN", "with --fit: one fit per value of this column (default machine; \"all\" for one fit)"},
    {"plot", "FILE.svg", "parity plot: predicted vs measured, log axes, +-10 % band"},
    {"max-error", "P", "exit 1 when the median absolute error exceeds P percent (for CI)"},
    {"gpus-per-node", "K", "nccl-tests / rccl-tests output: ranks per node (default: from its \"# Rank\" lines)"},
    {"summary-only", NULL, "print the summary without the per-row table"},
    {"hold-time", "WHAT", "whole-job energy rows: job (default: the predicted kernels over the measured duration_s) | "
                          "training (the predicted iteration stretched to the measured train_s; docs/energy.md)"},
    {NULL, NULL, NULL}};

static const pf_opt *const tables[] = {validate_opts, pf_scenario_opts, NULL};

/* Examples that need the user's own file say so ("# your ..."); `make test`
 * runs them against a fixture of the same name (tests/cli/examples.sh). */
static const pf_cli_spec spec = {
    "validate",
    "usage: preflight validate RUNS.csv [--format table|json|csv|markdown] [--plot FILE.svg] [--max-error P]\n"
    "       preflight validate --megatron-log FILE --machine ID [scenario options]\n"
    "       preflight validate --fit RUNS.csv [-o fitted.json] [--no-loo | --loo configuration|machine]\n\n"
    "Predicts every measured run, prints the relative errors and their median and mean; rows the model\n"
    "cannot predict (no workload, energy measured over whole jobs or nodes) are listed with the reason.\n"
    "The CSV columns are described in docs/validation.md.",
    tables, false, 1, true,
    "  preflight validate scenarios/validation/epicure.csv\n"
    "  preflight validate scenarios/validation/maelstrom.csv --format json --plot parity.svg\n"
    "  preflight validate runs.csv --max-error 15      # your runs; exit 1 if the median error exceeds 15 %\n"
    "  preflight validate --megatron-log train.log --machine leonardo-booster      # your Megatron-LM log\n"
    "  preflight validate --fit my-runs.csv -o fitted.json                        # your runs\n"
    "  preflight predict --machine lumi-g --model llama2-7b --nodes 64 --tp 2 --gbs 1024 --dist-opt --flash-attn \\\n"
    "      --calibration fitted.json                                              # your fitted overlay\n"};

/* ---- --max-error ---- */

static int check_max_error(const pf_optvals *v, const pf_vsum *s, int *status) {
  double p;
  int rc = pf_opts_num_range(v, "max-error", 0, false, 1e9, &p);
  if (rc <= 0) return rc;
  pf_vstats st = pf_vsum_stats(s, -1, 0);
  if (st.n == 0) {
    fprintf(stderr, "preflight validate: --max-error %g: no row could be predicted\n", p);
    *status = 1;
  } else if (st.median_abs_pct > p) {
    fprintf(stderr, "preflight validate: median |error| %.2f %% exceeds --max-error %g %%\n", st.median_abs_pct, p);
    *status = 1;
  }
  return 0;
}

/* ---- validate RUNS.csv, streamed ---- */

#define CHUNK 256

/* Pass 1: every row parses (so a malformed row stops before any output). */
static int check_all(const char *path) {
  pf_vreader *r;
  int rc = pf_vreader_open(path, &r);
  if (rc < 0) return rc;
  pf_vrow *row = malloc(sizeof *row);
  if (!row) rc = pf_error_set(PF_ENOMEM, "out of memory");
  if (rc == 0) rc = pf_cli_vset_check(pf_vreader_columns(r));
  while (rc >= 0 && (rc = pf_vreader_next(r, row)) > 0) {}
  free(row);
  pf_vreader_close(r);
  return rc < 0 ? rc : 0;
}

static cJSON *report_head(const char *path) {
  cJSON *root = pf_report_root_json();
  cJSON_AddStringToObject(root, "file", path);
  return root;
}

/* Pass 2: predict chunk by chunk, emitting rows as they come. */
static int stream_rows(const char *path, const pf_validate_opts *o, pf_vemit *e) {
  pf_vreader *r;
  int rc = pf_vreader_open(path, &r);
  if (rc < 0) return rc;
  if ((rc = pf_cli_vset_check(pf_vreader_columns(r))) < 0) {
    pf_vreader_close(r);
    return rc;
  }
  pf_vset chunk = {.n = 0, .rows = malloc(CHUNK * sizeof(pf_vrow))};
  snprintf(chunk.path, sizeof chunk.path, "%s", path);
  pf_vcache *cache = pf_vcache_new();
  if (!chunk.rows || !cache) rc = pf_error_set(PF_ENOMEM, "out of memory");
  pf_progress_begin("validate", pf_vreader_size(r), true);
  bool done = false;
  while (rc >= 0 && !done) {
    int k = 0;
    while (chunk.n < CHUNK && (k = pf_vreader_next(r, &chunk.rows[chunk.n])) > 0) chunk.n++;
    if (k < 0) { rc = k; break; }
    done = k == 0;
    if (chunk.n == 0) break;
    if ((rc = pf_validate_run_cached(&chunk, o, cache)) < 0) break;
    for (int i = 0; i < chunk.n && rc >= 0; i++) rc = pf_vemit_row(e, &chunk.rows[i]);
    chunk.n = 0;
    pf_progress_set(pf_vreader_pos(r));
  }
  pf_progress_end();
  pf_vcache_free(cache);
  free(chunk.rows);
  pf_vreader_close(r);
  return rc < 0 ? rc : 0;
}

static int copy_out(FILE *from, FILE *to) {
  if (fflush(from) != 0 || fseek(from, 0, SEEK_SET) != 0) return pf_error_set(PF_EIO, "temporary file: %s", strerror(errno));
  char buf[65536];
  size_t k;
  while ((k = fread(buf, 1, sizeof buf, from)) > 0)
    if (fwrite(buf, 1, k, to) != k) return pf_error_set(PF_EIO, "write failed: %s", strerror(errno));
  return ferror(from) ? pf_error_set(PF_EIO, "temporary file: read error") : 0;
}

static int cmd_csv(pf_cli *cli, const char *path) {
  const pf_optvals *v = &cli->v;
  pf_vrow_defaults d;
  pf_validate_opts o = pf_cli_validate_opts(v, &d, path); /* a row's scenario as the command line builds one */
  double me;
  int rc;
  const char *held = pf_opts_get(v, "hold-time");
  if (held && strcmp(held, "job") && strcmp(held, "training"))
    return pf_cli_fail("validate", pf_error_set(PF_EINVAL, "--hold-time \"%s\": valid: job, training", held));
  o.hold_training = held && !strcmp(held, "training");
  static const char *const fit_only[] = {"loo", "no-loo", "fit-group"};
  for (size_t i = 0; i < sizeof fit_only / sizeof *fit_only; i++)
    if (pf_opts_get(v, fit_only[i]))
      return pf_cli_fail("validate", pf_error_set(PF_EINVAL, "--%s: only with --fit RUNS.csv", fit_only[i]));
  if ((rc = pf_opts_num_range(v, "max-error", 0, false, 1e9, &me)) < 0) return pf_cli_fail("validate", rc);
  /* a regular file (it can be read twice) is checked whole before any output;
   * a pipe is read once, into a temporary file when the output is a stream, so
   * that a malformed row found late still leaves nothing on standard output */
  struct stat st;
  bool regular = strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISREG(st.st_mode);
  if (regular && (rc = check_all(path)) < 0) return pf_cli_fail("validate", rc);
  FILE *out, *hold = NULL;
  pf_vemit e;
  memset(&e, 0, sizeof e);
  if ((rc = pf_output_open(&cli->out, &out)) < 0) return pf_cli_fail("validate", rc);
  if (!regular && (cli->out.kind == PF_OUT_STDOUT || cli->out.kind == PF_OUT_STREAM) && !(hold = tmpfile()))
    rc = pf_error_set(PF_EIO, "cannot create a temporary file: %s", strerror(errno));
  if (rc == 0)
    rc = pf_vemit_begin(&e, hold ? hold : out, cli->fmt, path, !pf_opts_get(v, "summary-only"), false,
                        report_head(path));
  e.sum.want_points = pf_opts_get(v, "plot") != NULL;
  if (rc == 0) rc = stream_rows(path, &o, &e);
  if (rc == 0) rc = pf_vemit_end(&e);
  else pf_vemit_abort(&e);
  if (rc == 0 && hold) rc = copy_out(hold, out);
  if (hold) fclose(hold);
  if (rc == 0) rc = pf_output_commit(&cli->out);
  else pf_output_abort(&cli->out);
  int status = rc < 0 ? pf_cli_fail("validate", rc) : 0;
  const char *plot = pf_opts_get(v, "plot");
  if (status == 0 && plot && (rc = pf_vplot_write(&e.sum, path, plot)) < 0) status = pf_cli_fail("validate", rc);
  if (status == 0 && (rc = check_max_error(v, &e.sum, &status)) < 0) status = pf_cli_fail("validate", rc);
  pf_vsum_free(&e.sum);
  return status;
}

/* ---- validate --megatron-log FILE ---- */

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
    rc = pf_opts_add(v, map[i].opt, a, src);
  }
  if (rc < 0) return rc;
  const char *a;
  if (!user_model) {
    if (is_true(pf_megatron_arg(l, "group_query_attention")) && is_set(a = pf_megatron_arg(l, "num_query_groups")))
      if ((rc = pf_opts_add(v, "kv-heads", a, l->path)) < 0) return rc;
    if (is_true(pf_megatron_arg(l, "swiglu")) && (rc = pf_opts_add(v, "swiglu", "1", l->path)) < 0) return rc;
    const char *voc = pf_megatron_arg(l, "padded_vocab_size");
    if (!is_set(voc)) voc = pf_megatron_arg(l, "vocab_size");
    if (!is_set(voc) && (a = pf_megatron_arg(l, "tokenizer_type")) && !strcmp(a, "GPT2BPETokenizer")) {
      voc = "50257";
      strncat(notes, "vocabulary 50257 (GPT2BPETokenizer)", nlen - strlen(notes) - 1);
    }
    if (is_set(voc) && (rc = pf_opts_add(v, "vocab", voc, l->path)) < 0) return rc;
  }
  if (is_true(pf_megatron_arg(l, "sequence_parallel")) && (rc = pf_opts_add(v, "sp", "1", l->path)) < 0) return rc;
  if (is_true(pf_megatron_arg(l, "use_distributed_optimizer")) && (rc = pf_opts_add(v, "dist-opt", "1", l->path)) < 0)
    return rc;
  if (is_true(pf_megatron_arg(l, "overlap_grad_reduce")) && (rc = pf_opts_add(v, "overlap-grad-reduce", "1", l->path)) < 0)
    return rc;
  if (is_true(pf_megatron_arg(l, "overlap_param_gather")) && (rc = pf_opts_add(v, "overlap-param-gather", "1", l->path)) < 0)
    return rc;
  if (is_set(a = pf_megatron_arg(l, "ddp_bucket_size")) && (rc = pf_opts_add(v, "ddp-bucket-size", a, l->path)) < 0) return rc;
  const char *prec = is_true(pf_megatron_arg(l, "fp16")) ? "fp16" : is_true(pf_megatron_arg(l, "bf16")) ? "bf16"
                     : l->nargs > 0 ? "fp32" : NULL;
  if (prec && (rc = pf_opts_add(v, "precision", prec, l->path)) < 0) return rc;
  a = pf_megatron_arg(l, "recompute_granularity");
  if (is_set(a) && (!strcmp(a, "selective") || !strcmp(a, "full"))) rc = pf_opts_add(v, "recompute", a, l->path);
  else if (is_true(pf_megatron_arg(l, "recompute_activations"))) rc = pf_opts_add(v, "recompute", "selective", l->path);
  if (rc < 0) return rc;
  if (is_set(a = pf_megatron_arg(l, "virtual_pipeline_model_parallel_size"))) {
    char sch[40];
    snprintf(sch, sizeof sch, "interleaved:%s", a);
    if ((rc = pf_opts_add(v, "schedule", sch, l->path)) < 0) return rc;
  }
  if (!pf_opts_get(cli, "nodes") && !pf_opts_get(cli, "gpus") && is_set(a = pf_megatron_arg(l, "world_size")))
    if ((rc = pf_opts_add(v, "gpus", a, l->path)) < 0) return rc;
  /* the global batch from the iteration lines when the dump does not give it */
  if (!is_set(pf_megatron_arg(l, "global_batch_size")) && l->niter > 0 && l->gbs[l->niter - 1] > 0) {
    char g[32];
    snprintf(g, sizeof g, "%d", l->gbs[l->niter - 1]);
    if ((rc = pf_opts_add(v, "gbs", g, l->path)) < 0) return rc;
  }
  return 0;
}

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

static int cmd_megatron(pf_cli *cli, const pf_optvals *scen, const char *path) {
  pf_megatron_log *l = malloc(sizeof *l);
  if (!l) return pf_cli_fail("validate", pf_error_set(PF_ENOMEM, "out of memory"));
  int rc = pf_megatron_read(path, l);
  if (rc < 0) { free(l); return pf_cli_fail("validate", rc); }
  pf_optvals v = {0};
  char notes[256] = "";
  rc = log_options(l, scen, &v, notes, sizeof notes);
  for (int i = 0; rc == 0 && i < scen->n; i++) rc = pf_opts_add(&v, scen->name[i], scen->value[i], scen->source[i]);
  pf_scenario *sc = malloc(sizeof *sc);
  pf_vset s = {0};
  pf_prediction *pred = malloc(sizeof *pred);
  pf_scenario *chk = malloc(sizeof *chk);
  int status = 0;
  if (!sc || !pred || !chk) rc = pf_error_set(PF_ENOMEM, "out of memory");
  if (rc == 0 && !pf_opts_get(&v, "machine"))
    rc = pf_error_set(PF_EINVAL, "--machine is required: a Megatron log does not say which machine it ran on");
  if (rc == 0 && !pf_opts_get(&v, "model") && !pf_opts_get(&v, "layers") && !pf_opts_get(&v, "params"))
    rc = pf_error_set(PF_EINVAL, "%s: no argument dump (\"---- arguments ----\"): give the model (--model or "
                      "--layers/--hidden/--heads/--seq/--vocab) and the plan as options", path);
  if (rc == 0 && !pf_opts_get(&v, "nodes") && !pf_opts_get(&v, "gpus"))
    rc = pf_error_set(PF_EINVAL, "%s: the log does not state world_size: give --nodes or --gpus", path);
  if (rc == 0) rc = pf_opts_scenario(&v, sc);
  if (rc == 0 && !(s.rows = calloc(4, sizeof *s.rows))) rc = pf_error_set(PF_ENOMEM, "out of memory");
  if (rc < 0) { status = pf_cli_fail("validate", rc); goto done; }

  snprintf(s.path, sizeof s.path, "%s", path);
  int first = l->line[0], last = l->line[l->niter - 1];
  struct { pf_metric m; double v; pf_scope scope; } meas[4] = {
      {PF_MET_ITER_TIME, l->med_time_s, PF_SCOPE_NONE}, {PF_MET_TFLOPS, l->med_tflops, PF_SCOPE_NONE},
      {PF_MET_ENERGY, l->med_energy_J, PF_SCOPE_GPU_PER_GPU}, {PF_MET_POWER, l->med_power_W, PF_SCOPE_GPU_PER_GPU}};
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
  FILE *f;
  if ((rc = pf_output_open(&cli->out, &f)) < 0) { status = pf_cli_fail("validate", rc); goto done; }
  pf_vemit e;
  memset(&e, 0, sizeof e);
  if (cli->fmt == PF_FMT_CSV) {
    megatron_rows(f, &v, &s); /* the log as validation rows (docs/validation.md) */
  } else if (cli->fmt == PF_FMT_JSON) {
    cJSON *head = NULL;
    if (cli->fmt == PF_FMT_JSON) {
      head = pf_report_root_json();
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
    }
    rc = pf_vemit_begin(&e, f, cli->fmt, path, true, false, head);
    for (int i = 0; i < s.n && rc == 0; i++) rc = pf_vemit_row(&e, &s.rows[i]);
    if (rc == 0) rc = pf_vemit_end(&e);
    else pf_vemit_abort(&e);
  } else {
    fprintf(f, "Megatron-LM log %s: %d iteration lines (time in %s), %d used (first skipped as warm-up), %d "
               "arguments\n", path, l->niter, l->format, l->used, l->nargs);
    fprintf(f, "configuration: %s on %s, %d nodes, %d GPUs, TP %d x PP %d x DP %d, mbs %d, gbs %d, %s%s%s\n",
            chk->workload.id, chk->machine.id, chk->nodes, chk->gpus, chk->plan.tp, chk->plan.pp, chk->plan.dp,
            chk->plan.mbs, chk->plan.gbs, pf_precision_name(chk->precision), notes[0] ? "; " : "", notes);
    fprintf(f, "%-26s %14s %14s %9s\n", "metric", "measured", "predicted", "error");
    for (int i = 0; i < s.n; i++) {
      const pf_vrow *r = &s.rows[i];
      pf_vsum_add(&e.sum, r);
      char m[48], p[48], label[48], er[16];
      pf_vfmt_measured(r, m, sizeof m);
      pf_vfmt_value(r, r->predicted, p, sizeof p);
      snprintf(label, sizeof label, "%s%s", pf_metric_name(r->metric),
               r->scope == PF_SCOPE_GPU_PER_GPU ? " (per GPU)" : "");
      if (r->status == PF_ROW_PREDICTED) fprintf(f, "%-26s %14s %14s %9s\n", label, m, p, pf_vfmt_err(r->error, er, sizeof er));
      else fprintf(f, "%-26s %14s %14s  %s\n", label, m, "-", r->reason);
    }
  }
  if (rc == 0) rc = pf_output_commit(&cli->out);
  else pf_output_abort(&cli->out);
  if (rc < 0) status = pf_cli_fail("validate", rc);
  if (status == 0 && (rc = check_max_error(&cli->v, &e.sum, &status)) < 0) status = pf_cli_fail("validate", rc);
  pf_vsum_free(&e.sum);
done:
  free(s.rows);
  free(chk);
  free(pred);
  pf_opts_free(&v);
  free(sc);
  pf_megatron_free(l);
  free(l);
  return status;
}

int pf_cmd_validate(int argc, char **argv) {
  pf_cli cli;
  int rc = pf_cli_begin(&spec, argc, argv, &cli);
  if (rc != 0) return pf_cli_end(&cli, rc > 0 ? 0 : pf_cli_fail("validate", rc));
  const pf_optvals *v = &cli.v;
  const char *mlog = pf_opts_get(v, "megatron-log"), *fit = pf_opts_get(v, "fit");
  pf_format fmt = cli.fmt;
  if (fit && !pf_opts_get(v, "format")) fmt = PF_FMT_TABLE; /* with --fit, -o is the overlay, not the report */
  if (fit && fmt == PF_FMT_MARKDOWN) rc = pf_error_set(PF_EINVAL, "--fit: valid formats: table, json, csv");
  else if (mlog && fmt == PF_FMT_MARKDOWN) rc = pf_error_set(PF_EINVAL, "--megatron-log: valid formats: table, json, csv");
  else if (mlog && fit) rc = pf_error_set(PF_EINVAL, "--megatron-log and --fit: give one");
  else if ((mlog || fit) && v->npositional > 0)
    rc = pf_error_set(PF_EINVAL, "\"%s\": no RUNS.csv argument with --%s", v->positional[0],
                      mlog ? "megatron-log" : "fit");
  else if (!mlog && !fit && v->npositional != 1)
    rc = pf_error_set(PF_EINVAL, "give one RUNS.csv, --megatron-log FILE or --fit RUNS.csv (see preflight validate --help)");
  if (rc < 0) return pf_cli_end(&cli, pf_cli_fail("validate", rc));
  int status;
  if (mlog) {
    /* scenario options only: drop validate's own and the output options */
    pf_optvals sv = {0};
    for (int i = 0; i < v->n && rc == 0; i++) {
      bool own = !strcmp(v->name[i], "format") || !strcmp(v->name[i], "o") || !strcmp(v->name[i], "lenient");
      for (const pf_opt *o = validate_opts; o->name; o++) if (!strcmp(o->name, v->name[i])) own = true;
      if (!own) rc = pf_opts_add(&sv, v->name[i], v->value[i], v->source[i]);
    }
    status = rc < 0 ? pf_cli_fail("validate", rc) : cmd_megatron(&cli, &sv, mlog);
    pf_opts_free(&sv);
  } else if (fit) {
    status = pf_cli_validate_fit(&cli, fit, fmt);
  } else if (pf_collval_kind(v->positional[0]) > 0) { /* measured collectives: CSV rows or nccl-tests output */
    status = pf_cli_validate_collectives(&cli, v->positional[0], pf_collval_kind(v->positional[0]));
  } else {
    status = cmd_csv(&cli, v->positional[0]);
  }
  return pf_cli_end(&cli, status);
}
