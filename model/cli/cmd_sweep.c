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
#include "preflight/report.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const pf_opt pf_sweep_opts[] = {
    {"scaling", "weak|strong", "weak: fixed microbatches per replica; strong: fixed global batch (default)"},
    {NULL, NULL, NULL}};

/* "16,32,64" or "1..64" (powers of two) */
int pf_cli_parse_nodes(const char *s, int *out, int max, int *n) {
  *n = 0;
  const char *dots = strstr(s, "..");
  if (dots) {
    char *end;
    long a = strtol(s, &end, 10), b;
    if (end != dots || a < 1) goto bad;
    b = strtol(dots + 2, &end, 10);
    if (*end || b < a) goto bad;
    for (long x = a; x <= b && *n < max; x *= 2) out[(*n)++] = (int)x;
    return 0;
  }
  const char *p = s;
  while (*p) {
    char *end;
    errno = 0;
    long x = strtol(p, &end, 10);
    if (end == p || x < 1 || errno) goto bad;
    if (*n >= max) return pf_error_set(PF_EINVAL, "--nodes: at most %d values", max);
    out[(*n)++] = (int)x;
    if (*end == ',') p = end + 1;
    else if (*end == '\0') break;
    else goto bad;
  }
  if (*n > 0) return 0;
bad:
  return pf_error_set(PF_EINVAL, "--nodes \"%s\": expected a list like 16,32,64 or a range like 1..64", s);
}

int pf_cmd_sweep(int argc, char **argv) {
  pf_optvals v = {0};
  int rc = pf_cli_scenario_args("sweep", argc, argv, pf_sweep_opts, &v);
  if (rc < 0) { pf_opts_free(&v); return pf_cli_fail("sweep", rc); }
  if (v.help) {
    const pf_opt *const tables[] = {pf_scenario_opts, pf_sweep_opts, pf_output_opts, NULL};
    pf_opts_help(stdout, "usage: preflight sweep [SCENARIO.cfg] --nodes LIST [--scaling weak|strong] [options]", tables,
                 "  preflight sweep --machine lumi-g --model gpt3-175b --tp 4 --pp 32 --sp --dist-opt \\\n"
                 "      --recompute selective --precision fp16 --nodes 16,32,64,128,256,512 --scaling weak --grad-accum 192\n"
                 "  preflight sweep --machine mn5-acc --model gpt3-175b --tp 4 --pp 32 --gbs 1536 --nodes 32..128 --format csv\n");
    pf_opts_free(&v);
    return 0;
  }
  int nodes[64], nn = 0;
  const char *nl = pf_opts_get(&v, "nodes");
  if (!nl) { pf_opts_free(&v); fprintf(stderr, "preflight sweep: --nodes LIST is required\n"); return 2; }
  char *nodes_list = strdup(nl);
  rc = pf_cli_parse_nodes(nodes_list, nodes, 64, &nn);
  free(nodes_list);
  const char *scaling = pf_opts_get(&v, "scaling");
  int weak = scaling && strcmp(scaling, "weak") == 0;
  if (rc == 0 && scaling && !weak && strcmp(scaling, "strong") != 0)
    rc = pf_error_set(PF_EINVAL, "--scaling \"%s\": valid: weak, strong", scaling);
  pf_format fmt;
  if (rc == 0) rc = pf_opts_format(&v, &fmt);
  if (rc < 0) { pf_opts_free(&v); return pf_cli_fail("sweep", rc); }

  /* the node option in v is a list; give each row its own value */
  int idx = -1;
  for (int i = 0; i < v.n; i++) if (strcmp(v.name[i], "nodes") == 0) idx = i;
  cJSON *rows = cJSON_CreateArray();
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  if (fmt == PF_FMT_TABLE)
    fprintf(out, "%6s %7s %4s %4s %5s %6s %8s %11s %12s %10s %8s %8s %9s\n", "nodes", "GPUs", "TP", "PP", "DP", "GBS",
            "microb", "iter (s)", "tokens/s", "TFLOP/s/G", "speedup", "eff", "mem GiB");
  if (fmt == PF_FMT_CSV)
    fprintf(out, "nodes,gpus,tp,pp,dp,gbs,microbatches,iteration_time_s,tokens_per_s,tflops_per_gpu,speedup,scaling_efficiency,memory_GiB,fits\n");
  double base_tflops = 0, base_tput = 0;
  int status = 0;
  pf_scenario *scs = calloc((size_t)nn, sizeof *scs);
  pf_batch_item *items = calloc((size_t)nn, sizeof *items);
  int built = 0;
  for (int i = 0; i < nn && scs && items; i++, built++) {
    char val[32];
    snprintf(val, sizeof val, "%d", nodes[i]);
    free(v.value[idx]);
    v.value[idx] = strdup(val);
    if ((rc = pf_opts_scenario(&v, &scs[i])) < 0) { status = pf_cli_fail("sweep", rc); break; }
    items[i].sc = &scs[i];
  }
  if (!scs || !items) status = pf_cli_fail("sweep", pf_error_set(PF_ENOMEM, "out of memory"));
  if (status == 0 && weak) {
    /* weak scaling: the microbatches per replica of the first node count stay fixed */
    pf_scenario *first = malloc(sizeof *first);
    *first = scs[0];
    if ((rc = pf_plan_check(first)) < 0) status = pf_cli_fail("sweep", rc);
    for (int i = 1; i < nn && status == 0; i++) { scs[i].plan.gbs = 0; scs[i].plan.grad_accum = first->plan.grad_accum; }
    free(first);
  }
  if (status == 0 && (rc = pf_predict_batch(items, nn, 0)) < 0) status = pf_cli_fail("sweep", rc);
  for (int i = 0; i < nn && status == 0; i++) {
    pf_scenario *sc = &scs[i];
    pf_prediction *p = &items[i].pred;
    if (items[i].rc < 0) {
      fprintf(stderr, "preflight sweep: %d nodes: %s\n", nodes[i], items[i].detail);
      if (fmt == PF_FMT_TABLE) fprintf(out, "%6d  (%s)\n", nodes[i], items[i].rc == PF_ENOFIT ? "does not fit" : "invalid plan");
      if (i == 0) status = pf_error_exit_code(items[i].rc);
      continue;
    }
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
      fprintf(out, "%d,%d,%d,%d,%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%.6g,%.4g,%s\n", sc->nodes, sc->gpus, sc->plan.tp,
              sc->plan.pp, sc->plan.dp, sc->plan.gbs, sc->plan.grad_accum, p->iteration_time_s, p->tokens_per_s,
              p->tflops_per_gpu, speedup, eff, p->memory.total_B / (1024.0 * 1024 * 1024), p->fits ? "true" : "false");
    else {
      cJSON *row = pf_report_prediction_json(sc, p);
      cJSON_AddNumberToObject(row, "scaling_efficiency", eff);
      cJSON_AddNumberToObject(row, "speedup", speedup);
      cJSON_AddItemToArray(rows, row);
    }
  }
  (void)built;
  free(items);
  free(scs);
  if (fmt == PF_FMT_JSON) {
    cJSON *root = pf_report_root_json();
    cJSON_AddStringToObject(root, "scaling", weak ? "weak" : "strong");
    cJSON_AddItemToObject(root, "rows", rows);
    pf_report_json_print(out, root);
  } else cJSON_Delete(rows);
  fclose(out);
  if (status == 0 && (rc = pf_opts_emit(&v, buf)) < 0) status = pf_cli_fail("sweep", rc);
  free(buf);
  pf_opts_free(&v);
  return status;
}
