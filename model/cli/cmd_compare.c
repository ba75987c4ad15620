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
    "      --gbs 512 --dist-opt --recompute selective\n", false,
    .doc = PF_DOC(compare_row)};
const pf_cli_spec *const pf_cli_spec_compare = &spec; /* for the man page and the completion (gendoc.c) */


int pf_cmd_compare(int argc, char **argv) {
  pf_cli cli;
  int rc = pf_cli_begin(&spec, argc, argv, &cli);
  if (rc != 0) return pf_cli_end(&cli, rc > 0 ? 0 : pf_cli_fail("compare", rc));
  pf_optvals *vp = &cli.v;
  const char *list = pf_opts_get(vp, "machines");
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
  const pf_doc_renderers *fr = pf_fmt(cli.fmt); /* the format table's compare renderer */
  pf_doc doc = {open_memstream(&buf, &len), NULL};
  fr->compare_begin(&doc);
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
      fr->compare_row(&doc, &(pf_compare_row){id, sc, p, rc, note});
      continue;
    }
    ok++;
    char warn[1024] = "";
    for (int k = 0; k < p->nwarnings; k++) {
      strncat(warn, k ? "; " : "", sizeof warn - strlen(warn) - 1);
      strncat(warn, p->warnings[k], sizeof warn - strlen(warn) - 1);
    }
    fr->compare_row(&doc, &(pf_compare_row){id, sc, p, 0, warn});
  }
  pf_progress_end();
  fr->compare_end(&doc);
  cJSON_Delete(doc.items); /* rows a renderer kept (none once it ended) */
  fclose(doc.out);
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
