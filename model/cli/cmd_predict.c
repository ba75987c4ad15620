/* cmd_predict.c - `preflight predict [SCENARIO.cfg] [options]`. */
#include "cli.h"
#include "options.h"

#include "preflight/error.h"
#include "preflight/predict.h"
#include "preflight/report.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *examples =
    "  preflight predict --machine mn5-acc --model gpt3-175b --nodes 32 --tp 4 --pp 32 --mbs 1 --gbs 1536 \\\n"
    "      --precision fp16 --sp --dist-opt --recompute selective --format json\n"
    "  preflight predict --machine lumi-g --model llama2-7b --nodes 4 --tp 2 --gbs 512 --dist-opt\n"
    "  preflight predict scenarios/gpt3-175b-mn5.cfg --nodes 64 --trace iter.json\n";

/* Shared with sweep: parse options (and a scenario file) into v. */
int pf_cli_scenario_args(const char *cmd, int argc, char **argv, const pf_opt *extra, pf_optvals *v) {
  const pf_opt *const tables[] = {pf_scenario_opts, extra ? extra : pf_output_opts, extra ? pf_output_opts : NULL, NULL};
  int rc = pf_opts_parse(argc, argv, tables, v);
  if (rc < 0) return rc;
  const char *prec = pf_opts_get(v, "precision");
  if (prec && strcmp(prec, "help") == 0) {
    printf("precisions: fp32 tf32 fp16 bf16 fp8\n");
    v->help = true;
    return 0;
  }
  if (v->npositional > 1) return pf_error_set(PF_EINVAL, "%s: at most one scenario file", cmd);
  if (v->npositional == 1) return pf_opts_load_scenario(v->positional[0], tables, v);
  return 0;
}

int pf_cmd_predict(int argc, char **argv) {
  pf_optvals v = {0};
  int rc = pf_cli_scenario_args("predict", argc, argv, NULL, &v);
  if (rc < 0) { pf_opts_free(&v); return pf_cli_fail("predict", rc); }
  if (v.help) {
    const pf_opt *const tables[] = {pf_scenario_opts, pf_output_opts, NULL};
    pf_opts_help(stdout, "usage: preflight predict [SCENARIO.cfg] [options]", tables, examples);
    pf_opts_free(&v);
    return 0;
  }
  pf_format fmt;
  pf_scenario *sc = malloc(sizeof *sc);
  pf_prediction *p = malloc(sizeof *p);
  if (!sc || !p) { free(sc); free(p); pf_opts_free(&v); return 2; }
  if ((rc = pf_opts_format(&v, &fmt)) < 0 || (rc = pf_opts_scenario(&v, sc)) < 0) goto fail;
  rc = pf_predict(sc, p);
  if (rc == PF_ENOFIT && fmt == PF_FMT_JSON) {
    /* print the numbers too, so scripts can read them */
    cJSON *j = pf_report_prediction_json(sc, p);
    pf_report_json_print(stdout, j);
  }
  if (rc < 0) goto fail;
  char *text = NULL;
  if (fmt == PF_FMT_JSON) {
    text = pf_report_json_text(pf_report_prediction_json(sc, p));
    if (!text) { rc = pf_error_set(PF_ENOMEM, "out of memory"); goto fail; }
  } else if (fmt == PF_FMT_CSV) {
    text = malloc(1024);
    snprintf(text, 1024,
             "machine,model,nodes,gpus,tp,pp,dp,mbs,gbs,iteration_time_s,tokens_per_s,tflops_per_gpu,mfu,memory_GiB,fits,energy_J\n"
             "%s,%s,%d,%d,%d,%d,%d,%d,%d,%.6g,%.6g,%.6g,%.6g,%.4g,%s,%.6g\n",
             sc->machine.id, sc->workload.id, sc->nodes, sc->gpus, sc->plan.tp, sc->plan.pp, sc->plan.dp, sc->plan.mbs,
             sc->plan.gbs, p->iteration_time_s, p->tokens_per_s, p->tflops_per_gpu, p->mfu,
             p->memory.total_B / (1024.0 * 1024 * 1024), p->fits ? "true" : "false", p->energy.facility_J);
  } else {
    char *buf = NULL;
    size_t len = 0;
    FILE *mf = open_memstream(&buf, &len);
    pf_report_prediction_table(mf, sc, p);
    fclose(mf);
    text = buf;
  }
  rc = pf_opts_emit(&v, text);
  free(text);
  if (rc < 0) goto fail;
  free(sc); free(p);
  pf_opts_free(&v);
  return 0;
fail:
  free(sc); free(p);
  pf_opts_free(&v);
  return pf_cli_fail("predict", rc);
}
