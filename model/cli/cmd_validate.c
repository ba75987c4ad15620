/* cmd_validate.c - `preflight validate`: predicted vs measured.
 *
 *   validate RUNS.csv [--format table|json|csv|markdown] [--plot FILE.svg|.pdf|.png] [--max-error P]
 *   validate --megatron-log FILE --machine ID [scenario options]
 *   validate --fit RUNS.csv [-o fitted.json] [--no-loo]
 *
 * Rows, errors and statistics come from the library (validate.c, fit.c,
 * megatron.c); validate_out.c formats them; --megatron-log is
 * validate_megatron.c, --fit validate_fit.c.  RUNS.csv is streamed: checked in
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
    {"megatron-log", "FILE", "compare a Megatron-LM training log with the prediction for its configuration",
     .type = PF_OPT_TEXT},
    {"fit", "RUNS.csv", "fit compute_eff, comm_eff, step_overhead_s, input_rate_Bps per machine; -o writes the calibration overlay",
     .type = PF_OPT_TEXT},
    {"coverage", "DIR", "prediction intervals: leave each group (file x model family) out, count its rows inside the "
                        "nominal 80 % interval built from the rest (docs/validation.md)", .type = PF_OPT_TEXT},
    {"energy-coverage", "DIR", "the power interval of energy and power rows: leave each machine x application out, "
                               "count its rows inside the nominal 80 % interval built from the rest (docs/energy.md)",
     .type = PF_OPT_TEXT},
    {"no-loo", NULL, "with --fit: skip the leave-one-out errors", .type = PF_OPT_FLAG},
    {"loo", "WHAT", "with --fit: leave out each configuration (default) or each machine (with --fit-group all: a machine the fit never saw)",
     .type = PF_OPT_TEXT},
    {"fit-group", "COLUMN", "with --fit: one fit per value of this column (default machine; \"all\" for one fit)",
     .type = PF_OPT_TEXT},
    {"plot", "FILE", "parity plot: predicted vs measured, log axes, +-10 % band (FILE.svg, .pdf or .png)",
     .type = PF_OPT_TEXT},
    {"max-error", "P", "exit 1 when the median absolute error exceeds P percent (for CI)", .type = PF_OPT_TEXT},
    {"gpus-per-node", "K", "nccl-tests / rccl-tests output: ranks per node (default: from its \"# Rank\" lines)",
     .type = PF_OPT_TEXT},
    {"summary-only", NULL, "print the summary without the per-row table", .type = PF_OPT_FLAG},
    {"hold-time", "WHAT", "whole-job energy rows: job (default: the predicted kernels over the measured duration_s) | "
                          "training (the predicted iteration stretched to the measured train_s; docs/energy.md)", .type = PF_OPT_TEXT},
    PF_OPT_END};

static const pf_opt *const tables[] = {validate_opts, pf_scenario_opts, NULL};

/* Examples that need the user's own file say so ("# your ..."); `make test`
 * runs them against a fixture of the same name (tests/cli/examples.sh). */
static const pf_cli_spec spec = {
    "validate",
    "usage: preflight validate RUNS.csv [--format table|json|csv|markdown] [--plot FILE.svg|.pdf|.png]\n"
    "       [--max-error P]\n"
    "       preflight validate --megatron-log FILE --machine ID [scenario options]\n"
    "       preflight validate --fit RUNS.csv [-o fitted.json] [--no-loo | --loo configuration|machine]\n"
    "       preflight validate --coverage DIR [--format markdown|json]\n"
    "       preflight validate --energy-coverage DIR [--format markdown|json]\n\n"
    "Predicts every measured run, prints the relative errors and their median and mean; rows the model\n"
    "cannot predict (no workload, energy measured over whole jobs or nodes) are listed with the reason.\n"
    "The CSV columns are described in docs/validation.md.",
    tables, false, 1, true,
    "  preflight validate @DATA@/scenarios/validation/epicure.csv\n"
    "  preflight validate @DATA@/scenarios/validation/maelstrom.csv --format json --plot parity.svg\n"
    "  preflight validate @DATA@/scenarios/examples/runs.csv --max-error 20   # sample runs; exit 1 above 20 %\n"
    "  preflight validate --megatron-log @DATA@/scenarios/examples/train.log --machine leonardo-booster\n"
    "  preflight validate --fit @DATA@/scenarios/examples/runs.csv -o fitted.json\n"
    "  preflight validate --coverage @DATA@/scenarios/validation --format markdown\n"
    "  preflight predict --machine lumi-g --model llama2-7b --nodes 64 --tp 2 --gbs 1024 --dist-opt --flash-attn \\\n"
    "      --calibration @DATA@/scenarios/examples/fitted.json   # a sample overlay (--fit writes one)\n", false,
    .doc = PF_DOC(validate_row), .o_own = "fit"};
const pf_cli_spec *const pf_cli_spec_validate = &spec; /* for the man page and the completion (gendoc.c) */


/* ---- --max-error ---- */

int pf_cli_check_max_error(const pf_optvals *v, const pf_vsum *s, int *status) {
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

/* A file with rows none of which could be predicted validated nothing: the report lists each row with its
 * reason, and the status says so (exit 2 when some row's input is invalid or incomplete, as a malformed row
 * is; 1 when every row's plan cannot run on its machine, as a sweep with no point that runs). */
static int none_predicted(const char *path, const pf_vsum *s) {
  if (s->rows == 0 || s->nrec > 0) return 0;
  fprintf(stderr, "preflight validate: no row of %s could be predicted: %d with invalid or incomplete input, %d "
          "whose plan cannot run (each is listed with its reason)\n", path, s->incomplete, s->rows - s->incomplete);
  return s->incomplete > 0 ? 2 : 1;
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
  if (status == 0) status = none_predicted(path, &e.sum);
  if (status == 0 && (rc = pf_cli_check_max_error(v, &e.sum, &status)) < 0) status = pf_cli_fail("validate", rc);
  pf_vsum_free(&e.sum);
  return status;
}

int pf_cmd_validate(int argc, char **argv) {
  pf_cli cli;
  int rc = pf_cli_begin(&spec, argc, argv, &cli);
  if (rc != 0) return pf_cli_end(&cli, rc > 0 ? 0 : pf_cli_fail("validate", rc));
  const pf_optvals *v = &cli.v;
  const char *mlog = pf_opts_get(v, "megatron-log"), *fit = pf_opts_get(v, "fit");
  pf_format fmt = cli.fmt;
  const char *cover = pf_opts_get(v, "coverage"), *ecover = pf_opts_get(v, "energy-coverage");
  if (cover || ecover) {
    if (mlog || fit || v->npositional > 0 || (cover && ecover))
      return pf_cli_end(&cli, pf_cli_fail("validate", pf_error_set(PF_EINVAL, "--%scoverage DIR: give no RUNS.csv, "
                                                                   "--fit, --megatron-log or the other coverage with it",
                                                                   ecover ? "energy-" : "")));
    return pf_cli_end(&cli, pf_cli_validate_coverage(&cli, ecover ? ecover : cover, fmt, ecover != NULL));
  }
  if (fit && !pf_opts_get(v, "format")) fmt = PF_FMT_TABLE; /* with --fit, -o is the overlay, not the report */
  if (fit && !pf_fmt(fmt)->fit_group) rc = pf_error_set(PF_EINVAL, "--fit: valid formats: table, json, csv");
  else if (mlog && !pf_fmt(fmt)->megatron) rc = pf_error_set(PF_EINVAL, "--megatron-log: valid formats: table, json, csv");
  else if (!mlog && !fit && !pf_fmt(fmt)->validate_begin)
    rc = pf_error_set(PF_EINVAL, "--format %s: validate writes table, json, csv, markdown", pf_format_get(fmt)->name);
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
    status = rc < 0 ? pf_cli_fail("validate", rc) : pf_cli_validate_megatron(&cli, &sv, mlog);
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
