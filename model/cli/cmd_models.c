/* cmd_models.c - `preflight models [show ID]`. */
#include "cli.h"
#include "options.h"

#include "core/core.h"
#include "report/report.h"
#include "workload/workload.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


static const pf_cli_spec spec = {"models", "usage: preflight models [--format F]\n       preflight models show ID", NULL,
                                 false, 2, false,
                                 "  preflight models\n  preflight models show gpt3-175b --format json\n", false,
    .doc = PF_DOC(models)};
const pf_cli_spec *const pf_cli_spec_models = &spec; /* for the man page and the completion (gendoc.c) */


int pf_cmd_models(int argc, char **argv) {
  pf_cli cli;
  int rc = pf_cli_begin(&spec, argc, argv, &cli);
  if (rc != 0) return pf_cli_end(&cli, rc > 0 ? 0 : pf_cli_fail("models", rc));
  const pf_optvals *v = &cli.v;
  int is_show = v->npositional >= 1 && strcmp(v->positional[0], "show") == 0;
  pf_workload w;
  if ((is_show && v->npositional != 2) || (!is_show && v->npositional > 0))
    rc = pf_error_set(PF_EINVAL, "usage: preflight models [show ID]");
  else if (is_show)
    rc = pf_workload_get(v->positional[1], &w);
  if (rc < 0) return pf_cli_end(&cli, pf_cli_fail(is_show ? "models show" : "models", rc));
  char *text = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&text, &len);
  if (!f) return pf_cli_end(&cli, pf_cli_fail("models", pf_error_set(PF_ENOMEM, "out of memory")));
  if (is_show) pf_fmt(cli.fmt)->model(f, &w);
  else pf_fmt(cli.fmt)->models(f);
  fclose(f);
  rc = pf_cli_emit(&cli, text);
  free(text);
  return pf_cli_end(&cli, rc < 0 ? pf_cli_fail("models", rc) : 0);
}
