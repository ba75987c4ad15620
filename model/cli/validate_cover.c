/* validate_cover.c - `preflight validate --coverage DIR`: how often the
 * nominal 80 % prediction interval holds what was measured, each group of
 * validation rows (source file x model family) left out in turn
 * (study/interval.h, pf_interval_coverage; docs/validation.md, "Prediction
 * intervals", whose table scripts/validation-tables.sh writes from this);
 * `--energy-coverage DIR` the same for the power interval of the energy and
 * power rows, each machine x application left out (docs/energy.md, "Ranges"). */
#include "cli.h"
#include "validate_cli.h"

#include "core/core.h"
#include "report/report.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static double pct(int k, int n) { return n > 0 ? 100.0 * k / n : 0; }

static void markdown(FILE *f, const pf_icover *c) {
  fprintf(f, "| source | model family | regime of its rows (rows it had) | time, throughput | inside | efficiency "
             "| inside | of them bounds (inside) | covered |\n|---|---|---|---:|---:|---:|---:|---:|---:|\n");
  int n[2] = {0, 0}, in[2] = {0, 0}, b = 0, bi = 0;
  for (int i = 0; i < c->ngroups; i++) {
    const pf_icover_group *g = &c->g[i];
    int gn = g->n[0] + g->n[1], gi = g->inside[0] + g->inside[1];
    if (gn == 0) continue; /* a group of energy rows (energy_markdown) */
    fprintf(f, "| %s | %s | %s | %d | %d | %d | %d | %d (%d) | %.0f %% |\n", g->source, g->family, g->regime, g->n[0],
            g->inside[0], g->n[1], g->inside[1], g->bounds, g->bounds_inside, pct(gi, gn));
    for (int k = 0; k < 2; k++) { n[k] += g->n[k]; in[k] += g->inside[k]; }
    b += g->bounds;
    bi += g->bounds_inside;
  }
  fprintf(f, "| **all** | | | %d | %d | %d | %d | %d (%d) | **%.1f %%** |\n\n", n[0], in[0], n[1], in[1], b, bi,
          pct(in[0] + in[1], n[0] + n[1]));
  fprintf(f, "Overall %d of %d rows inside (%.1f %%): time and throughput %.1f %%, efficiency %.1f %%; rows measured "
             "as a value or a range %d of %d (%.1f %%), one-sided bounds %d of %d.\n",
          in[0] + in[1], n[0] + n[1], pct(in[0] + in[1], n[0] + n[1]), pct(in[0], n[0]), pct(in[1], n[1]),
          in[0] + in[1] - bi, n[0] + n[1] - b, pct(in[0] + in[1] - bi, n[0] + n[1] - b), bi, b);
}

/* The groups of the time and efficiency rows, or with energy those of the energy and power rows. */
static void json(FILE *f, const pf_icover *c, bool energy) {
  cJSON *root = pf_report_root_json();
  cJSON_AddNumberToObject(root, "nominal_coverage", PF_INTERVAL_P_HI - PF_INTERVAL_P_LO);
  cJSON *arr = cJSON_AddArrayToObject(root, "groups");
  for (int i = 0; i < c->ngroups; i++) {
    const pf_icover_group *g = &c->g[i];
    if ((energy ? g->n[2] : g->n[0] + g->n[1]) == 0) continue; /* a group of the other kind */
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "source", g->source);
    cJSON_AddStringToObject(o, energy ? "group" : "family", g->family);
    cJSON_AddStringToObject(o, "regime", g->regime);
    if (energy) {
      cJSON_AddNumberToObject(o, "power_rows", g->n[2]);
      cJSON_AddNumberToObject(o, "power_inside", g->inside[2]);
    } else {
      cJSON_AddNumberToObject(o, "time_rows", g->n[0]);
      cJSON_AddNumberToObject(o, "time_inside", g->inside[0]);
      cJSON_AddNumberToObject(o, "efficiency_rows", g->n[1]);
      cJSON_AddNumberToObject(o, "efficiency_inside", g->inside[1]);
      cJSON_AddNumberToObject(o, "bound_rows", g->bounds);
      cJSON_AddNumberToObject(o, "bound_inside", g->bounds_inside);
    }
    cJSON_AddItemToArray(arr, o);
  }
  pf_report_json_print(f, root);
}

static void energy_markdown(FILE *f, const pf_icover *c) {
  fprintf(f, "| source | application on machine | regime of its rows (rows it had) | energy, power rows | inside | "
             "covered |\n|---|---|---|---:|---:|---:|\n");
  int n = 0, in = 0;
  for (int i = 0; i < c->ngroups; i++) {
    const pf_icover_group *g = &c->g[i];
    if (g->n[2] == 0) continue;
    fprintf(f, "| %s | %s | %s | %d | %d | %.0f %% |\n", g->source, g->family, g->regime, g->n[2], g->inside[2],
            pct(g->inside[2], g->n[2]));
    n += g->n[2];
    in += g->inside[2];
  }
  fprintf(f, "| **all** | | | %d | %d | **%.1f %%** |\n\n", n, in, pct(in, n));
  fprintf(f, "Overall %d of %d energy and power rows inside (%.1f %%; nominal %.0f %%).\n", in, n, pct(in, n),
          100 * (PF_INTERVAL_P_HI - PF_INTERVAL_P_LO));
}

int pf_cli_validate_coverage(pf_cli *cli, const char *dir, pf_format fmt, bool energy) {
  if (fmt != PF_FMT_TABLE && fmt != PF_FMT_MARKDOWN && fmt != PF_FMT_JSON)
    return pf_cli_fail("validate", pf_error_set(PF_EINVAL, "--%scoverage: valid formats: table, markdown, json",
                                                energy ? "energy-" : ""));
  pf_cli_intervals *ci = calloc(1, sizeof *ci);
  pf_icover *c = malloc(sizeof *c);
  int rc = ci && c ? pf_cli_intervals_open(ci, dir) : pf_error_set(PF_ENOMEM, "out of memory");
  if (rc == 0) rc = pf_interval_coverage(ci->pool, c);
  FILE *f = NULL;
  if (rc == 0) rc = pf_output_open(&cli->out, &f);
  if (rc == 0) {
    if (fmt == PF_FMT_JSON) json(f, c, energy);
    else (energy ? energy_markdown : markdown)(f, c);
    rc = pf_output_commit(&cli->out);
  }
  if (ci) pf_cli_intervals_close(ci);
  free(ci);
  free(c);
  return rc < 0 ? pf_cli_fail("validate", rc) : 0;
}
