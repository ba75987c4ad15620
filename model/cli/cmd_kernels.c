/* cmd_kernels.c - `preflight kernels [SCENARIO.cfg] [options]`: every kernel
 * of one GPU's iteration on the last pipeline stage (the one that carries the
 * logits, the loss and the step tail), as the model prices it: phase, name,
 * launches per iteration, time of one launch, total, what bounds it and where
 * its price comes from (compute.h, pf_stage_kernel_rows), with the time the
 * GPU waits for the host per phase.  Formats: table, csv, json, markdown
 * (docs/model.md's whole-step list is this command's markdown), rendered by
 * kernels_render.c through the format table. */
#include "cli.h"
#include "options.h"

#include "compute/compute.h"
#include "core/core.h"
#include "formats.h"
#include "study/study.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>

static const pf_opt *const tables[] = {pf_scenario_opts, NULL};

static const pf_cli_spec spec = {
    "kernels", "usage: preflight kernels [SCENARIO.cfg] [options]\n\nEvery kernel of one GPU's iteration (last "
    "pipeline stage): launches, time, what bounds it, its source.", tables, true, 1, true,
    "  preflight kernels --machine jureca-dc-h100 --gpus 1 --layers 12 --hidden 768 --heads 12 --seq 1024 \\\n"
    "      --vocab 50257 --mbs 8 --gbs 8 --framework pytorch --flash-attn\n", false,
    .doc = PF_DOC(kernels)};
const pf_cli_spec *const pf_cli_spec_kernels = &spec; /* for the man page and the completion (gendoc.c) */

/* The document in the asked format (kernels_render.c, through the format table). */
static char *render(pf_format fmt, const pf_scenario *sc, const pf_kernel_rows *R) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  pf_fmt(fmt)->kernels(f, sc, R);
  if (fclose(f) != 0) { free(buf); return NULL; }
  return buf;
}

int pf_cmd_kernels(int argc, char **argv) {
  pf_cli cli;
  int rc = pf_cli_begin(&spec, argc, argv, &cli);
  if (rc != 0) return pf_cli_end(&cli, rc > 0 ? 0 : pf_cli_fail("kernels", rc));
  pf_scenario *sc = malloc(sizeof *sc);
  pf_kernel_rows R = {0};
  int status = 0;
  if (!sc) rc = pf_error_set(PF_ENOMEM, "out of memory");
  if (rc == 0) rc = pf_opts_scenario(&cli.v, sc);
  if (rc == 0) rc = pf_job_resolve(sc);
  if (rc == 0) rc = pf_stage_kernel_rows(sc, sc->plan.pp - 1, &R);
  if (rc == 0) {
    char *text = render(cli.fmt, sc, &R);
    int wrc = text ? pf_cli_emit(&cli, text) : pf_error_set(PF_ENOMEM, "out of memory");
    free(text);
    if (wrc < 0) status = pf_cli_fail("kernels", wrc);
  } else {
    status = pf_cli_fail("kernels", rc);
  }
  pf_kernel_rows_free(&R);
  free(sc);
  return pf_cli_end(&cli, status);
}
