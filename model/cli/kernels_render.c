/* kernels_render.c - the document of `preflight kernels` (cmd_kernels.c) in
 * each format, registered in the format table as every document is
 * (fmt_table.c, fmt_csv.c, fmt_markdown.c, fmt_json.c: .kernels), so
 * --format and -o's suffix offer exactly these and refuse the others with the
 * list.  The JSON starts from the root every document shares
 * (pf_report_root_json: schema_version, tool). */
#include "formats.h"
#include "results.h"

#include "io/io.h"

#include <cjson/cJSON.h>

static const char *bound(pf_limit l) { return l == PF_LIMIT_N ? "host" : pf_limit_name(l); }

/* One renderer for the three text formats: the header, one line per kernel, the busy/wait line. */
static void text(FILE *f, pf_format fmt, const pf_scenario *sc, const pf_kernel_rows *R) {
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

void pf_kernels_table(FILE *f, const pf_scenario *sc, const pf_kernel_rows *R) { text(f, PF_FMT_TABLE, sc, R); }
void pf_kernels_csv(FILE *f, const pf_scenario *sc, const pf_kernel_rows *R) { text(f, PF_FMT_CSV, sc, R); }
void pf_kernels_markdown(FILE *f, const pf_scenario *sc, const pf_kernel_rows *R) {
  text(f, PF_FMT_MARKDOWN, sc, R);
}

void pf_kernels_json(FILE *f, const pf_scenario *sc, const pf_kernel_rows *R) {
  cJSON *root = pf_report_root_json();
  cJSON_AddStringToObject(root, "machine", sc->machine.id);
  cJSON_AddStringToObject(root, "model", sc->workload.id);
  cJSON *a = cJSON_AddArrayToObject(root, "kernels");
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
  pf_report_json_print(f, root); /* frees root */
}
