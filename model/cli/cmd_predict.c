/* cmd_predict.c - `preflight predict [SCENARIO.cfg] [options]`.
 *
 * A plan that does not fit in memory is an answer: the document says
 * "fits": false with the reason and the memory terms (no time, throughput or
 * energy), the reason also goes to stderr and the exit status is 1.  Any other
 * failure prints nothing on stdout (docs/exit-codes.md). */
#include "cli.h"
#include "options.h"
#include "validate_cli.h"

#include "core/core.h"
#include "study/study.h"
#include "report/report.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pf_opt *const tables[] = {pf_scenario_opts, NULL};

static const pf_cli_spec spec = {
    "predict", "usage: preflight predict [SCENARIO.cfg] [options]", tables, true, 1, false,
    "  preflight predict --machine mn5-acc --model gpt3-175b --nodes 32 --tp 4 --pp 32 --mbs 1 --gbs 1536 \\\n"
    "      --precision fp16 --sp --dist-opt --recompute selective --format json\n"
    "  preflight predict --machine lumi-g --model llama2-7b --nodes 4 --tp 2 --gbs 512 --dist-opt --flash-attn\n"
    "  preflight predict @DATA@/scenarios/epicure-lumi-strong.cfg \\\n"
    "      --nodes 64 --trace iter.json\n", false,
    .doc = PF_DOC(prediction)};
const pf_cli_spec *const pf_cli_spec_predict = &spec; /* for the man page and the completion (gendoc.c) */


/* The result as text in the asked format (the format table's renderer); NULL when out of memory. */
static char *render(pf_format fmt, const pf_scenario *sc, const pf_prediction *p, const char *nofit) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  pf_fmt(fmt)->prediction(f, sc, p, nofit);
  if (fclose(f) != 0) { free(buf); return NULL; }
  return buf;
}

/* The prediction interval from the validation folder (study/interval.h); without a readable folder the
 * prediction goes out without one, and stderr says why. */
static int with_interval(const pf_scenario *sc, pf_prediction *p) {
  pf_cli_intervals *ci = malloc(sizeof *ci);
  if (!ci) return pf_error_set(PF_ENOMEM, "out of memory");
  int rc = pf_cli_intervals_open(ci, NULL);
  if (rc == PF_ENOMEM) { free(ci); return rc; }
  if (rc < 0) {
    fprintf(stderr, "preflight predict: no range: %s\n", pf_error_detail());
    rc = 0;
  } else {
    rc = pf_cli_intervals_of(ci, sc, false, p);
  }
  pf_cli_intervals_close(ci);
  free(ci);
  return rc;
}

int pf_cmd_predict(int argc, char **argv) {
  pf_cli cli;
  int rc = pf_cli_begin(&spec, argc, argv, &cli);
  if (rc != 0) return pf_cli_end(&cli, rc > 0 ? 0 : pf_cli_fail("predict", rc));
  pf_scenario *sc = malloc(sizeof *sc);
  pf_prediction *p = malloc(sizeof *p);
  int status = 0;
  if (!sc || !p) rc = pf_error_set(PF_ENOMEM, "out of memory");
  if (rc == 0) rc = pf_opts_scenario(&cli.v, sc);
  if (rc == 0) rc = pf_report_predict(sc, pf_opts_get(&cli.v, "trace"), p);
  /* only JSON carries the range (*_low / *_high): the table stays as fast as one prediction (the range
   * predicts the validation rows of its regime, up to a second for a multi-node transformer) */
  if (rc == 0 && cli.fmt == PF_FMT_JSON) rc = with_interval(sc, p);
  if (rc == 0 || rc == PF_ENOFIT) {
    char reason[2048];
    snprintf(reason, sizeof reason, "%s", rc == PF_ENOFIT ? pf_error_detail() : "");
    char *text = render(cli.fmt, sc, p, rc == PF_ENOFIT ? reason : NULL);
    int wrc = text ? pf_cli_emit(&cli, text) : pf_error_set(PF_ENOMEM, "out of memory");
    free(text);
    if (wrc < 0) status = pf_cli_fail("predict", wrc);
    else if (rc == PF_ENOFIT) {
      pf_error_set(PF_ENOFIT, "%s", reason);
      status = pf_cli_fail("predict", rc);
    }
  } else {
    status = pf_cli_fail("predict", rc);
  }
  free(sc);
  free(p);
  return pf_cli_end(&cli, status);
}
