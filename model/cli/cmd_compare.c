/* cmd_compare.c - `preflight compare --machines a,b,c [options]`: the same job
 * (same model, plan and GPU or node count) on several machines, side by side. */
#include "cli.h"
#include "options.h"

#include "preflight/error.h"
#include "preflight/predict.h"
#include "preflight/report.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const pf_opt pf_compare_opts[] = {
    {"machines", "A,B,...", "machine ids or files to compare"},
    {NULL, NULL, NULL}};

int pf_cmd_compare(int argc, char **argv) {
  pf_optvals v = {0};
  int rc = pf_cli_scenario_args("compare", argc, argv, pf_compare_opts, &v);
  if (rc < 0) { pf_opts_free(&v); return pf_cli_fail("compare", rc); }
  if (v.help) {
    const pf_opt *const tables[] = {pf_scenario_opts, pf_compare_opts, pf_output_opts, NULL};
    pf_opts_help(stdout, "usage: preflight compare --machines A,B,... [options]", tables,
                 "  preflight compare --machines lumi-g,leonardo-booster,mn5-acc --model llama2-7b --gpus 64 --tp 2 \\\n"
                 "      --gbs 512 --dist-opt\n");
    pf_opts_free(&v);
    return 0;
  }
  const char *list = pf_opts_get(&v, "machines");
  pf_format fmt;
  if (!list) rc = pf_error_set(PF_EINVAL, "--machines A,B,... is required");
  else if (pf_opts_get(&v, "machine")) rc = pf_error_set(PF_EINVAL, "give --machines, not --machine");
  if (rc == 0) rc = pf_opts_format(&v, &fmt);
  if (rc < 0) { pf_opts_free(&v); return pf_cli_fail("compare", rc); }
  char *ids = strdup(list);
  /* a --machine pair to rewrite per machine */
  if (v.n >= PF_MAXVALS) { pf_opts_free(&v); free(ids); fprintf(stderr, "preflight compare: too many options\n"); return 2; }
  char *placeholder = strdup("x");
  v.name[v.n] = "machine";
  v.value[v.n] = placeholder;
  snprintf(v.source[v.n], sizeof v.source[0], "--machines");
  int idx = v.n++;
  pf_scenario *sc = malloc(sizeof *sc);
  pf_prediction *p = malloc(sizeof *p);
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  cJSON *rows = cJSON_CreateArray();
  if (fmt == PF_FMT_TABLE)
    fprintf(out, "%-18s %6s %6s %11s %12s %10s %6s %9s %10s %s\n", "machine", "nodes", "GPUs", "iter (s)", "tokens/s",
            "TFLOP/s/G", "MFU", "mem GiB", "kJ/iter", "note");
  if (fmt == PF_FMT_CSV) fprintf(out, "machine,nodes,gpus,iteration_time_s,tokens_per_s,tflops_per_gpu,mfu,memory_GiB,energy_J,note\n");
  int status = 0, ok = 0;
  char *save = NULL;
  for (char *id = strtok_r(ids, ",", &save); id; id = strtok_r(NULL, ",", &save)) {
    free(v.value[idx]);
    v.value[idx] = strdup(id);
    rc = pf_opts_scenario(&v, sc);
    if (rc == PF_ENOENT || rc == PF_EPARSE || rc == PF_EUNIT || rc == PF_EINVAL) { status = pf_cli_fail("compare", rc); break; }
    if (rc == 0) rc = pf_predict(sc, p);
    char note[200] = "";
    if (rc < 0) {
      snprintf(note, sizeof note, "%s", pf_error_detail());
      if (fmt == PF_FMT_TABLE) fprintf(out, "%-18s %6s %6s %11s %12s %10s %6s %9s %10s %.120s\n", id, "-", "-", "-", "-", "-", "-", "-", "-", note);
      else if (fmt == PF_FMT_CSV) fprintf(out, "%s,,,,,,,,,\"%s\"\n", id, note);
      else {
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, "machine", id);
        cJSON_AddStringToObject(row, "error", note);
        cJSON_AddItemToArray(rows, row);
      }
      continue;
    }
    ok++;
    double gib = p->memory.total_B / (1024.0 * 1024 * 1024);
    if (fmt == PF_FMT_TABLE)
      fprintf(out, "%-18s %6d %6d %11.4g %12.4g %10.1f %5.1f%% %9.1f %10.4g %s\n", sc->machine.id, sc->nodes, sc->gpus,
              p->iteration_time_s, p->tokens_per_s, p->tflops_per_gpu, 100 * p->mfu, gib, p->energy.facility_J / 1e3,
              p->nwarnings ? p->warnings[0] : "");
    else if (fmt == PF_FMT_CSV)
      fprintf(out, "%s,%d,%d,%.6g,%.6g,%.6g,%.6g,%.4g,%.6g,\n", sc->machine.id, sc->nodes, sc->gpus, p->iteration_time_s,
              p->tokens_per_s, p->tflops_per_gpu, p->mfu, gib, p->energy.facility_J);
    else cJSON_AddItemToArray(rows, pf_report_prediction_json(sc, p));
  }
  if (fmt == PF_FMT_JSON) {
    cJSON *root = pf_report_root_json();
    cJSON_AddItemToObject(root, "rows", rows);
    pf_report_json_print(out, root);
  } else cJSON_Delete(rows);
  fclose(out);
  if (status == 0) {
    if ((rc = pf_opts_emit(&v, buf)) < 0) status = pf_cli_fail("compare", rc);
    else if (ok == 0) status = 1; /* the job runs nowhere as asked */
  }
  free(buf);
  free(ids);
  free(sc); free(p);
  pf_opts_free(&v);
  return status;
}
