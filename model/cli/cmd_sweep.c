/* cmd_sweep.c - `preflight sweep --nodes LIST [--scaling weak|strong]`.
 *
 * Scaling efficiency as the EPICURE guide defines it (DESIGN 5.6): TFLOP/s per
 * GPU at n over TFLOP/s per GPU at the first (smallest) node count.  Weak
 * scaling keeps the gradient-accumulation steps per model replica fixed (the
 * global batch grows with DP); strong scaling keeps the global batch fixed.
 */
#include "cli.h"
#include "options.h"

#include "preflight/batch.h"
#include "preflight/error.h"
#include "preflight/predict.h"
#include "preflight/progress.h"
#include "preflight/report.h"
#include "preflight/validate.h" /* pf_csv_put */

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const pf_opt pf_sweep_opts[] = {
    {"scaling", "weak|strong", "weak: fixed microbatches per replica; strong: fixed global batch (default)"},
    {NULL, NULL, NULL}};

/* "16,32,64" or "1..64" (powers of two); every count in [1, 2^20]. */
int pf_cli_parse_nodes(const char *s, int *out, int max, int *n) {
  const long top = 1L << 20;
  *n = 0;
  const char *dots = strstr(s, "..");
  if (dots) {
    char *end;
    errno = 0;
    long a = strtol(s, &end, 10), b;
    if (end != dots || a < 1 || errno) goto bad;
    b = strtol(dots + 2, &end, 10);
    if (*end || b < a || errno) goto bad;
    if (b > top) goto range;
    for (long x = a; x <= b; x *= 2) {
      if (*n >= max) return pf_error_set(PF_EINVAL, "--nodes \"%s\": at most %d values", s, max);
      out[(*n)++] = (int)x;
    }
    return 0;
  }
  const char *p = s;
  while (*p) {
    char *end;
    errno = 0;
    long x = strtol(p, &end, 10);
    if (end == p || x < 1 || errno) goto bad;
    if (x > top) goto range;
    if (*n >= max) return pf_error_set(PF_EINVAL, "--nodes \"%s\": at most %d values", s, max);
    out[(*n)++] = (int)x;
    if (*end == ',') p = end + 1;
    else if (*end == '\0') break;
    else goto bad;
  }
  if (*n > 0) return 0;
bad:
  return pf_error_set(PF_EINVAL, "--nodes \"%s\": expected a list like 16,32,64 or a range like 1..64", s);
range:
  return pf_error_set(PF_EINVAL, "--nodes \"%s\": node counts must be at most %ld", s, top);
}

static const pf_opt *const tables[] = {pf_scenario_opts, pf_sweep_opts, NULL};

static const pf_cli_spec spec = {
    "sweep", "usage: preflight sweep [SCENARIO.cfg] --nodes LIST [--scaling weak|strong] [options]", tables, true, 1,
    false,
    "  preflight sweep --machine lumi-g --model gpt3-175b --tp 4 --pp 32 --sp --dist-opt \\\n"
    "      --recompute selective --precision fp16 --nodes 16,32,64,128,256,512 --scaling weak --grad-accum 192\n"
    "  preflight sweep --machine mn5-acc --model gpt3-175b --tp 4 --pp 32 --mbs 1 --gbs 1536 --sp --dist-opt \\\n"
    "      --recompute selective --precision fp16 --nodes 32..128 --format csv\n"};

/* A point that has no prediction: a plan that does not fit (an answer) or an
 * invalid plan, shown as a row marked so. */
static void unpredicted_row(FILE *out, pf_format fmt, cJSON *rows, const pf_batch_item *it, int nodes) {
  const pf_scenario *sc = it->sc;
  bool nofit = it->rc == PF_ENOFIT;
  if (fmt == PF_FMT_TABLE)
    fprintf(out, "%6d  %s%s\n", nodes, nofit ? "" : "invalid plan: ", it->detail); /* nofit: "does not fit: ..." */
  else if (fmt == PF_FMT_CSV) {
    fprintf(out, "%d,%d,%d,%d,%d,%d,%d,,,,,,", nodes, nofit ? sc->gpus : 0, sc->plan.tp, sc->plan.pp,
            nofit ? sc->plan.dp : 0, sc->plan.gbs, nofit ? sc->plan.grad_accum : 0);
    if (nofit) fprintf(out, "%.4g,false,", it->pred.memory.total_B / (1024.0 * 1024 * 1024));
    else fprintf(out, ",,");
    pf_csv_put(out, it->detail);
    fputc('\n', out);
  } else {
    cJSON_AddItemToArray(rows, nofit ? pf_report_nofit_json(sc, &it->pred, it->detail)
                                     : pf_report_invalid_json(sc, nodes, it->detail));
  }
}

int pf_cmd_sweep(int argc, char **argv) {
  pf_cli cli;
  int rc = pf_cli_begin(&spec, argc, argv, &cli);
  if (rc != 0) return pf_cli_end(&cli, rc > 0 ? 0 : pf_cli_fail("sweep", rc));
  pf_optvals *v = &cli.v;
  pf_format fmt = cli.fmt;
  int nodes[64], nn = 0;
  const char *nl = pf_opts_get(v, "nodes");
  if (!nl) return pf_cli_end(&cli, pf_cli_fail("sweep", pf_error_set(PF_EINVAL, "--nodes LIST is required")));
  rc = pf_cli_parse_nodes(nl, nodes, 64, &nn);
  const char *scaling = pf_opts_get(v, "scaling");
  int weak = scaling && strcmp(scaling, "weak") == 0;
  if (rc == 0 && scaling && !weak && strcmp(scaling, "strong") != 0)
    rc = pf_error_set(PF_EINVAL, "--scaling \"%s\": valid: weak, strong", scaling);
  if (rc < 0) return pf_cli_end(&cli, pf_cli_fail("sweep", rc));

  /* the node option in v is a list; give each row its own value */
  int idx = -1;
  for (int i = 0; i < v->n; i++) if (strcmp(v->name[i], "nodes") == 0) idx = i;
  int status = 0;
  pf_scenario *scs = calloc((size_t)nn, sizeof *scs);
  pf_batch_item *items = calloc((size_t)nn, sizeof *items);
  if (!scs || !items) status = pf_cli_fail("sweep", pf_error_set(PF_ENOMEM, "out of memory"));
  for (int i = 0; i < nn && status == 0; i++) {
    char val[32];
    snprintf(val, sizeof val, "%d", nodes[i]);
    free(v->value[idx]);
    v->value[idx] = strdup(val);
    if ((rc = pf_opts_scenario(v, &scs[i])) < 0) status = pf_cli_fail("sweep", rc);
    items[i].sc = &scs[i];
  }
  if (status == 0 && weak) {
    /* weak scaling: the microbatches per replica of the first node count stay fixed */
    pf_scenario *first = malloc(sizeof *first);
    if (!first) rc = pf_error_set(PF_ENOMEM, "out of memory");
    else {
      *first = scs[0];
      rc = pf_plan_check(first);
    }
    if (rc < 0) status = pf_cli_fail("sweep", rc);
    for (int i = 1; i < nn && status == 0; i++) { scs[i].plan.gbs = 0; scs[i].plan.grad_accum = first->plan.grad_accum; }
    free(first);
  }
  if (status == 0) {
    pf_progress_begin("sweep", nn, false);
    rc = pf_predict_batch(items, nn, 0);
    pf_progress_end();
    if (rc < 0) status = pf_cli_fail("sweep", rc);
  }
  /* a failure that is neither an answer (does not fit) nor an invalid point: no result at all */
  for (int i = 0; i < nn && status == 0; i++)
    if (items[i].rc < 0 && items[i].rc != PF_ENOFIT && items[i].rc != PF_EPLAN) {
      pf_error_set(items[i].rc, "%d nodes: %s", nodes[i], items[i].detail);
      status = pf_cli_fail("sweep", items[i].rc);
    }
  cJSON *rows = cJSON_CreateArray();
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  if (fmt == PF_FMT_TABLE)
    fprintf(out, "%6s %7s %4s %4s %5s %6s %8s %11s %12s %10s %8s %8s %9s\n", "nodes", "GPUs", "TP", "PP", "DP", "GBS",
            "microb", "iter (s)", "tokens/s", "TFLOP/s/G", "speedup", "eff", "mem GiB");
  if (fmt == PF_FMT_CSV)
    fprintf(out, "nodes,gpus,tp,pp,dp,gbs,microbatches,iteration_time_s,tokens_per_s,tflops_per_gpu,speedup,"
                 "scaling_efficiency,memory_GiB,fits,note\n");
  double base_tflops = 0, base_tput = 0;
  int predicted = 0;
  for (int i = 0; i < nn && status == 0; i++) {
    pf_scenario *sc = &scs[i];
    pf_prediction *p = &items[i].pred;
    if (items[i].rc < 0) {
      unpredicted_row(out, fmt, rows, &items[i], nodes[i]);
      continue;
    }
    predicted++;
    if (base_tflops == 0) {
      base_tflops = p->tflops_per_gpu;
      base_tput = p->tokens_per_s;
    }
    double eff = p->tflops_per_gpu / base_tflops, speedup = p->tokens_per_s / base_tput;
    if (fmt == PF_FMT_TABLE)
      fprintf(out, "%6d %7d %4d %4d %5d %6d %8d %11.4g %12.4g %10.1f %8.2f %7.1f%% %9.1f\n", sc->nodes, sc->gpus,
              sc->plan.tp, sc->plan.pp, sc->plan.dp, sc->plan.gbs, sc->plan.grad_accum, p->iteration_time_s,
              p->tokens_per_s, p->tflops_per_gpu, speedup, 100 * eff, p->memory.total_B / (1024.0 * 1024 * 1024));
    else if (fmt == PF_FMT_CSV)
      fprintf(out, "%d,%d,%d,%d,%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.4g,%s,\n", sc->nodes, sc->gpus, sc->plan.tp,
              sc->plan.pp, sc->plan.dp, sc->plan.gbs, sc->plan.grad_accum, p->iteration_time_s, p->tokens_per_s,
              p->tflops_per_gpu, speedup, eff, p->memory.total_B / (1024.0 * 1024 * 1024), p->fits ? "true" : "false");
    else {
      cJSON *row = pf_report_prediction_json(sc, p);
      cJSON_AddNumberToObject(row, "scaling_efficiency", eff);
      cJSON_AddNumberToObject(row, "speedup", speedup);
      cJSON_AddItemToArray(rows, row);
    }
  }
  /* the warnings of each point, below the table (JSON rows carry their own) */
  for (int i = 0; i < nn && status == 0 && fmt == PF_FMT_TABLE; i++)
    for (int k = 0; items[i].rc == 0 && k < items[i].pred.nwarnings; k++)
      fprintf(out, "warning: %d nodes: %s\n", nodes[i], items[i].pred.warnings[k]);
  if (fmt == PF_FMT_JSON) {
    cJSON *root = pf_report_root_json();
    cJSON_AddStringToObject(root, "scaling", weak ? "weak" : "strong");
    cJSON_AddItemToObject(root, "rows", rows);
    pf_report_json_print(out, root);
  } else cJSON_Delete(rows);
  fclose(out);
  if (status == 0 && (rc = pf_cli_emit(&cli, buf)) < 0) status = pf_cli_fail("sweep", rc);
  if (status == 0 && predicted == 0) { /* no point can run as asked: the rows say why */
    pf_error_set(PF_ENOFIT, "no node count of the sweep can run this job as asked (see the rows)");
    status = pf_cli_fail("sweep", PF_ENOFIT);
  }
  free(buf);
  free(items);
  free(scs);
  return pf_cli_end(&cli, status);
}
