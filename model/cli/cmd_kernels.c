/* cmd_kernels.c - `preflight kernels [SCENARIO.cfg] [options]`: every kernel
 * of one GPU's iteration on the last pipeline stage (the one that carries the
 * logits, the loss and the step tail), as the model prices it: phase, name,
 * launches per iteration, time of one launch, total, what bounds it and where
 * its price comes from (compute.h, pf_stage_kernel_rows), with the time the
 * GPU waits for the host per phase.  Formats: table, csv, json, markdown
 * (docs/model.md's whole-step list is this command's markdown). */
#include "cli.h"
#include "options.h"

#include "compute/compute.h"
#include "core/core.h"
#include "report/report.h"
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
    .doc = 0 /* renders its own table, CSV, JSON and Markdown (below); tex is refused in pf_cmd_kernels */};
const pf_cli_spec *const pf_cli_spec_kernels = &spec; /* for the man page and the completion (gendoc.c) */

static const char *bound(pf_limit l) { return l == PF_LIMIT_N ? "host" : pf_limit_name(l); }

static void render_text(FILE *f, pf_format fmt, const pf_scenario *sc, const pf_kernel_rows *R) {
  double busy = 0, wait = 0;
  if (fmt == PF_FMT_MARKDOWN) fprintf(f, "| phase | kernel | launches | per launch | total | bound | source |\n"
                                         "|---|---|---:|---:|---:|---|---|\n");
  else if (fmt == PF_FMT_CSV) fprintf(f, "phase,kernel,launches,time_s,total_s,bound,source\n");
  else fprintf(f, "kernels of one GPU's iteration: %s on %s (%s), stage %d of %d, mbs %d, %s\n%-8s  %-26s %9s %12s %12s  %-8s %s\n",
               sc->workload.id, sc->machine.id, sc->machine.dev.id, sc->plan.pp, sc->plan.pp, sc->plan.mbs,
               pf_precision_name(sc->precision), "phase", "kernel", "launches", "per launch", "total", "bound",
               "source");
  for (int i = 0; i < R->n; i++) {
    const pf_kernel_row *r = &R->r[i];
    if (r->limit == PF_LIMIT_N) wait += r->total_s;
    else busy += r->total_s;
    if (fmt == PF_FMT_MARKDOWN)
      fprintf(f, "| %s | %s | %.0f | %.2f us | %.3f ms | %s | %s |\n", r->phase, r->name, r->launches,
              r->time_s * 1e6, r->total_s * 1e3, bound(r->limit), r->source);
    else if (fmt == PF_FMT_CSV)
      fprintf(f, "%s,%s,%.6g,%.6g,%.6g,%s,\"%s\"\n", r->phase, r->name, r->launches, r->time_s, r->total_s,
              bound(r->limit), r->source);
    else
      fprintf(f, "%-8s  %-26s %9.0f %9.2f us %9.3f ms  %-8s %s\n", r->phase, r->name, r->launches, r->time_s * 1e6,
              r->total_s * 1e3, bound(r->limit), r->source);
  }
  if (fmt == PF_FMT_TABLE || fmt == PF_FMT_MARKDOWN)
    fprintf(f, "%sGPU busy %.3f ms, waiting for the host %.3f ms%s\n", fmt == PF_FMT_MARKDOWN ? "\n" : "",
            busy * 1e3, wait * 1e3, fmt == PF_FMT_MARKDOWN ? "." : "");
}

static char *render(pf_format fmt, const pf_scenario *sc, const pf_kernel_rows *R) {
  if (fmt == PF_FMT_JSON) {
    cJSON *root = cJSON_CreateObject(), *a = cJSON_AddArrayToObject(root, "kernels");
    cJSON_AddStringToObject(root, "machine", sc->machine.id);
    cJSON_AddStringToObject(root, "model", sc->workload.id);
    for (int i = 0; i < R->n; i++) {
      const pf_kernel_row *r = &R->r[i];
      cJSON *o = cJSON_CreateObject();
      cJSON_AddStringToObject(o, "phase", r->phase);
      cJSON_AddStringToObject(o, "name", r->name);
      cJSON_AddNumberToObject(o, "launches", r->launches);
      cJSON_AddNumberToObject(o, "time_s", r->time_s);
      cJSON_AddNumberToObject(o, "total_s", r->total_s);
      cJSON_AddStringToObject(o, "bound", bound(r->limit));
      cJSON_AddStringToObject(o, "source", r->source);
      cJSON_AddItemToArray(a, o);
    }
    return pf_report_json_text(root); /* frees root */
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  render_text(f, fmt, sc, R);
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
  if (rc == 0 && cli.fmt == PF_FMT_TEX) rc = pf_error_set(PF_EINVAL, "--format tex: valid: table, json, csv, markdown");
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
