/* cmd_compare.c - `preflight compare --machines a,b,c [options]`: the same job
 * (same model, plan and GPU or node count) on several machines, side by side. */
#include "cli.h"
#include "options.h"

#include "core/core.h"
#include "study/study.h"
#include "report/report.h"
#include "study/study.h" /* pf_csv_put */

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const pf_opt pf_compare_opts[] = {
    {"machines", "A,B,...", "machine ids or files to compare", .type = PF_OPT_TEXT},
    PF_OPT_END};

static const pf_opt *const tables[] = {pf_scenario_opts, pf_compare_opts, NULL};

static const pf_cli_spec spec = {
    "compare", "usage: preflight compare --machines A,B,... [options]", tables, true, 1, false,
    "  preflight compare --machines lumi-g,leonardo-booster,mn5-acc --model llama2-7b --gpus 64 --tp 2 \\\n"
    "      --gbs 512 --dist-opt --recompute selective\n"};

int pf_cmd_compare(int argc, char **argv) {
  pf_cli cli;
  int rc = pf_cli_begin(&spec, argc, argv, &cli);
  if (rc != 0) return pf_cli_end(&cli, rc > 0 ? 0 : pf_cli_fail("compare", rc));
  pf_optvals *vp = &cli.v;
  const char *list = pf_opts_get(vp, "machines");
  pf_format fmt = cli.fmt;
  if (!list) rc = pf_error_set(PF_EINVAL, "--machines A,B,... is required");
  else if (pf_opts_get(vp, "machine")) rc = pf_error_set(PF_EINVAL, "give --machines, not --machine");
  /* a --machine pair to rewrite per machine */
  if (rc == 0) rc = pf_opts_add(vp, "machine", "x", "--machines");
  if (rc < 0) return pf_cli_end(&cli, pf_cli_fail("compare", rc));
  char *ids = strdup(list);
  int idx = vp->n - 1;
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
  int status = 0, ok = 0, nmach = 1;
  for (const char *c = list; *c; c++) nmach += *c == ',';
  pf_progress_begin("compare", nmach, false);
  char *save = NULL;
  for (char *id = strtok_r(ids, ",", &save); id; id = strtok_r(NULL, ",", &save)) {
    free(vp->value[idx]);
    vp->value[idx] = strdup(id);
    rc = pf_opts_scenario(vp, sc);
    if (rc == PF_ENOENT || rc == PF_EPARSE || rc == PF_EUNIT || rc == PF_EINVAL) { status = pf_cli_fail("compare", rc); break; }
    if (rc == 0) rc = pf_report_predict(sc, pf_opts_get(vp, "trace"), p);
    pf_progress_item();
    if (rc < 0 && rc != PF_ENOFIT && rc != PF_EPLAN) { status = pf_cli_fail("compare", rc); break; }
    if (rc < 0) { /* an answer: the plan does not fit, or is invalid, on this machine */
      char note[1024];
      snprintf(note, sizeof note, "%s", pf_error_detail());
      if (fmt == PF_FMT_TABLE)
        fprintf(out, "%-18s %6s %6s %11s %12s %10s %6s %9s %10s %s\n", id, "-", "-", "-", "-", "-", "-", "-", "-", note);
      else if (fmt == PF_FMT_CSV) {
        fprintf(out, "%s,,,,,,,,,", id);
        pf_csv_put(out, note);
        fputc('\n', out);
      } else
        cJSON_AddItemToArray(rows, rc == PF_ENOFIT ? pf_report_nofit_json(sc, p, note)
                                                   : pf_report_invalid_json(sc, sc->nodes, note));
      continue;
    }
    ok++;
    double gib = p->memory.total_B / (1024.0 * 1024 * 1024);
    char warn[1024] = "";
    for (int k = 0; k < p->nwarnings; k++) {
      strncat(warn, k ? "; " : "", sizeof warn - strlen(warn) - 1);
      strncat(warn, p->warnings[k], sizeof warn - strlen(warn) - 1);
    }
    if (fmt == PF_FMT_TABLE)
      fprintf(out, "%-18s %6d %6d %11.4g %12.4g %10.1f %5.1f%% %9.1f %10.4g %s\n", sc->machine.id, sc->nodes, sc->gpus,
              p->iteration_time_s, p->tokens_per_s, p->tflops_per_gpu, 100 * p->mfu, gib, p->energy.facility_J / 1e3,
              warn);
    else if (fmt == PF_FMT_CSV) {
      fprintf(out, "%s,%d,%d,%.6g,%.6g,%.6g,%.6g,%.4g,%.6g,", sc->machine.id, sc->nodes, sc->gpus, p->iteration_time_s,
              p->tokens_per_s, p->tflops_per_gpu, p->mfu, gib, p->energy.facility_J);
      pf_csv_put(out, warn);
      fputc('\n', out);
    }
    else cJSON_AddItemToArray(rows, pf_report_prediction_json(sc, p));
  }
  pf_progress_end();
  if (fmt == PF_FMT_JSON) {
    cJSON *root = pf_report_root_json();
    cJSON_AddItemToObject(root, "rows", rows);
    pf_report_json_print(out, root);
  } else cJSON_Delete(rows);
  fclose(out);
  if (status == 0) {
    if ((rc = pf_cli_emit(&cli, buf)) < 0) status = pf_cli_fail("compare", rc);
    else if (ok == 0) { /* the job runs nowhere as asked: the rows say why */
      pf_error_set(PF_ENOFIT, "the job cannot run as asked on any of the machines (see the rows)");
      status = pf_cli_fail("compare", PF_ENOFIT);
    }
  }
  free(buf);
  free(ids);
  free(sc); free(p);
  return pf_cli_end(&cli, status);
}
