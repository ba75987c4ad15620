/* cmd_plan.c - `preflight plan`: what a proposal must request.
 *
 * For each node count: iterations = tokens / (gbs x seq) (or epochs x samples /
 * gbs); wall time = iterations x t_iter x (1 + overhead); GPU-hours = logical
 * devices x wall (GCDs on MI250X machines, whose sites bill per package: the
 * billing line says so); node-hours = nodes x wall; billing units = node-hours
 * x the site's units per node-hour (machine file, billing section; see
 * shared/research/style-and-ecosystem.md B.4); energy = facility energy per
 * iteration x iterations.  With several node counts it recommends the fastest,
 * the cheapest (fewest billing units) and the best time x energy, and writes a
 * paragraph of scaling evidence for the proposal's "scalability" section.
 */
#include "cli.h"
#include "options.h"

#include "preflight/batch.h"
#include "preflight/error.h"
#include "preflight/predict.h"
#include "preflight/progress.h"
#include "preflight/report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const pf_opt pf_plan_opts[] = {
    {"tokens", "N", "training tokens to process (e.g. 3e11)"},
    {"epochs", "E", "epochs (with --samples)"},
    {"samples", "S", "samples per epoch (with --epochs)"},
    {"overhead", "F", "fraction added for start-up, checkpoints, restarts, evaluation (default 0.10)"},
    {NULL, NULL, NULL}};

typedef struct {
  int nodes, gpus, tp, pp, dp, gbs;
  double t_iter, iters, wall_h, gpu_h, node_h, units, mwh, tflops, eff;
} plan_row;

static const pf_opt *const tables[] = {pf_scenario_opts, pf_plan_opts, NULL};

static const pf_cli_spec spec = {
    "plan", "usage: preflight plan [SCENARIO.cfg] --tokens N | --epochs E --samples S [--nodes LIST] [options]",
    tables, true, 1, false,
    "  preflight plan --machine leonardo-booster --model llama2-7b --tp 2 --gbs 1024 --dist-opt --flash-attn \\\n"
    "      --nodes 16,32,64 --tokens 2e11\n"
    "  preflight plan --machine lumi-g --model resnet50 --mbs 256 --gbs 8192 --precision fp16 --nodes 4,8 \\\n"
    "      --epochs 90 --samples 1281167\n"};

int pf_cmd_plan(int argc, char **argv) {
  pf_cli cli;
  int rc = pf_cli_begin(&spec, argc, argv, &cli);
  if (rc != 0) return pf_cli_end(&cli, rc > 0 ? 0 : pf_cli_fail("plan", rc));
  pf_optvals *vp = &cli.v;
  pf_format fmt = cli.fmt;
  double tokens = 0, epochs = 0, samples = 0, overhead = 0.10;
  /* a training run: up to 1e18 tokens or samples (a million times today's largest) */
  if ((rc = pf_opts_num_range(vp, "tokens", 0, true, 1e18, &tokens)) < 0 ||
      (rc = pf_opts_num_range(vp, "epochs", 0, true, 1e9, &epochs)) < 0 ||
      (rc = pf_opts_num_range(vp, "samples", 0, true, 1e18, &samples)) < 0 ||
      (rc = pf_opts_num_range(vp, "overhead", 0, false, 5, &overhead)) < 0)
    return pf_cli_end(&cli, pf_cli_fail("plan", rc));
  if (!(tokens > 0) && !(epochs > 0 && samples > 0))
    return pf_cli_end(&cli, pf_cli_fail("plan", pf_error_set(PF_EINVAL, "give --tokens N, or --epochs E with --samples S")));
  if (tokens > 0 && (epochs > 0 || samples > 0))
    return pf_cli_end(&cli, pf_cli_fail("plan", pf_error_set(PF_EINVAL, "give --tokens or --epochs/--samples, not both")));
  int nodes[64], nn = 0, idx = -1;
  const char *nl = pf_opts_get(vp, "nodes");
  if (nl) {
    rc = pf_cli_parse_nodes(nl, nodes, 64, &nn);
    if (rc < 0) return pf_cli_end(&cli, pf_cli_fail("plan", rc));
    for (int i = 0; i < vp->n; i++) if (strcmp(vp->name[i], "nodes") == 0) idx = i;
  } else {
    nn = 1;
    nodes[0] = 0; /* from --gpus */
  }
  pf_scenario *scs = calloc((size_t)nn, sizeof *scs);
  pf_batch_item *items = calloc((size_t)nn, sizeof *items);
  plan_row rows[64];
  int nr = 0, status = 0;
  double base_tflops = 0;
  char unit[32] = "", mach[64] = "", model[64] = "", devh[32] = "GPU-hours";
  double per_node_hour = 1;
  if (!scs || !items) status = pf_cli_fail("plan", pf_error_set(PF_ENOMEM, "out of memory"));
  for (int i = 0; i < nn && status == 0; i++) {
    if (idx >= 0) {
      char val[32];
      snprintf(val, sizeof val, "%d", nodes[i]);
      free(vp->value[idx]);
      vp->value[idx] = strdup(val);
    }
    if ((rc = pf_opts_scenario(vp, &scs[i])) < 0) { status = pf_cli_fail("plan", rc); break; }
    items[i].sc = &scs[i];
  }
  if (status == 0) {
    pf_progress_begin("plan", nn, false);
    rc = pf_predict_batch(items, nn, 0);
    pf_progress_end();
    if (rc < 0) status = pf_cli_fail("plan", rc);
  }
  /* a failure that is neither "does not fit" nor an invalid plan: no result at all */
  for (int i = 0; i < nn && status == 0; i++)
    if (items[i].rc < 0 && items[i].rc != PF_ENOFIT && items[i].rc != PF_EPLAN) {
      pf_error_set(items[i].rc, "%d nodes: %s", nodes[i], items[i].detail);
      status = pf_cli_fail("plan", items[i].rc);
    }
  char skipped[4096] = "", warnings[4096] = "";
  int nskip = 0, skip_nodes[64];
  static char skip_why[64][600];
  for (int i = 0; i < nn && status == 0; i++) {
    pf_scenario *sc = &scs[i];
    pf_prediction *p = &items[i].pred;
    if (items[i].rc < 0) { /* named below the table; a lone configuration is an error */
      char one[600];
      snprintf(one, sizeof one, "%d nodes: %s%.480s\n", sc->nodes ? sc->nodes : nodes[i],
               items[i].rc == PF_ENOFIT ? "" : "invalid plan: ", items[i].detail);
      strncat(skipped, one, sizeof skipped - strlen(skipped) - 1);
      skip_nodes[nskip] = sc->nodes ? sc->nodes : nodes[i];
      snprintf(skip_why[nskip++], sizeof skip_why[0], "%s%.500s", items[i].rc == PF_ENOFIT ? "" : "invalid plan: ",
               items[i].detail); /* a does-not-fit detail starts "does not fit:" */
      if (nn == 1) {
        pf_error_set(items[i].rc, "%s", items[i].detail);
        status = pf_cli_fail("plan", items[i].rc);
      }
      continue;
    }
    plan_row *r = &rows[nr++];
    for (int k = 0; k < p->nwarnings; k++) { /* shown below the table */
      char one[400];
      snprintf(one, sizeof one, "warning: %d nodes: %s\n", sc->nodes, p->warnings[k]);
      strncat(warnings, one, sizeof warnings - strlen(warnings) - 1);
    }
    double per_iter = sc->workload.kind == PF_WL_TRANSFORMER ? (double)sc->plan.gbs * sc->workload.seq : sc->plan.gbs;
    r->iters = tokens > 0 ? ceil(tokens / per_iter) : ceil(epochs * samples / sc->plan.gbs);
    r->t_iter = p->iteration_time_s;
    r->wall_h = r->iters * r->t_iter * (1 + overhead) / 3600.0;
    r->nodes = sc->nodes; r->gpus = sc->gpus; r->tp = sc->plan.tp; r->pp = sc->plan.pp; r->dp = sc->plan.dp;
    r->gbs = sc->plan.gbs;
    r->gpu_h = r->wall_h * sc->gpus;
    r->node_h = r->wall_h * sc->nodes;
    r->units = r->node_h * sc->machine.billing_per_node_hour;
    r->mwh = p->energy.facility_J * r->iters * (1 + overhead) / 3.6e9;
    r->tflops = p->tflops_per_gpu;
    if (base_tflops == 0) base_tflops = p->tflops_per_gpu;
    r->eff = p->tflops_per_gpu / base_tflops;
    snprintf(unit, sizeof unit, "%s", sc->machine.billing_unit);
    snprintf(mach, sizeof mach, "%s", sc->machine.id);
    snprintf(model, sizeof model, "%s", sc->workload.id);
    per_node_hour = sc->machine.billing_per_node_hour;
    if (sc->machine.dev.dies_per_package > 1) /* LUMI's "GPU" is an MI250X package of two GCDs */
      snprintf(devh, sizeof devh, "%s-hours", strcmp(sc->machine.dev.vendor, "intel") == 0 ? "tile" : "GCD");
  }
  free(scs);
  free(items);
  if (status == 0 && nr == 0) {
    pf_error_set(PF_ENOFIT, "no node count can run this job as asked:\n%s", skipped);
    status = pf_cli_fail("plan", PF_ENOFIT);
  }
  if (status != 0) return pf_cli_end(&cli, status);
  int fastest = 0, cheapest = 0, greenest = 0;
  for (int i = 1; i < nr; i++) {
    if (rows[i].wall_h < rows[fastest].wall_h) fastest = i;
    if (rows[i].units < rows[cheapest].units) cheapest = i;
    if (rows[i].wall_h * rows[i].mwh < rows[greenest].wall_h * rows[greenest].mwh) greenest = i;
  }
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  if (fmt == PF_FMT_JSON) {
    cJSON *root = pf_report_root_json();
    cJSON_AddStringToObject(root, "machine", mach);
    cJSON_AddStringToObject(root, "model", model);
    cJSON_AddNumberToObject(root, "overhead_fraction", overhead);
    cJSON *arr = cJSON_AddArrayToObject(root, "rows");
    for (int i = 0; i < nr; i++) {
      cJSON *o = cJSON_CreateObject();
      plan_row *r = &rows[i];
      cJSON_AddNumberToObject(o, "nodes", r->nodes);
      cJSON_AddNumberToObject(o, "gpus", r->gpus);
      cJSON_AddNumberToObject(o, "iterations", r->iters);
      cJSON_AddNumberToObject(o, "iteration_time_s", r->t_iter);
      cJSON_AddNumberToObject(o, "wall_time_h", r->wall_h);
      cJSON_AddNumberToObject(o, "gpu_hours", r->gpu_h);
      cJSON_AddNumberToObject(o, "node_hours", r->node_h);
      cJSON *b = cJSON_AddObjectToObject(o, "billing_units");
      cJSON_AddNumberToObject(b, "value", r->units);
      cJSON_AddStringToObject(b, "unit", unit);
      cJSON_AddNumberToObject(o, "energy_MWh", r->mwh);
      cJSON_AddNumberToObject(o, "tflops_per_gpu", r->tflops);
      cJSON_AddNumberToObject(o, "scaling_efficiency", r->eff);
      cJSON_AddItemToArray(arr, o);
    }
    cJSON *sk = nskip ? cJSON_AddArrayToObject(root, "not_possible") : NULL;
    for (int i = 0; i < nskip; i++) {
      cJSON *o = cJSON_CreateObject();
      cJSON_AddNumberToObject(o, "nodes", skip_nodes[i]);
      cJSON_AddStringToObject(o, "reason", skip_why[i]);
      cJSON_AddItemToArray(sk, o);
    }
    cJSON *rec = cJSON_AddObjectToObject(root, "recommended");
    cJSON_AddNumberToObject(rec, "fastest_nodes", rows[fastest].nodes);
    cJSON_AddNumberToObject(rec, "cheapest_nodes", rows[cheapest].nodes);
    cJSON_AddNumberToObject(rec, "best_time_x_energy_nodes", rows[greenest].nodes);
    pf_report_json_print(out, root);
  } else if (fmt == PF_FMT_CSV) {
    fprintf(out, "nodes,gpus,iterations,iteration_time_s,wall_time_h,gpu_hours,node_hours,billing_units,billing_unit,energy_MWh,tflops_per_gpu,scaling_efficiency\n");
    for (int i = 0; i < nr; i++)
      fprintf(out, "%d,%d,%.0f,%.6g,%.6g,%.6g,%.6g,%.6g,%s,%.6g,%.6g,%.6g\n", rows[i].nodes, rows[i].gpus, rows[i].iters,
              rows[i].t_iter, rows[i].wall_h, rows[i].gpu_h, rows[i].node_h, rows[i].units, unit, rows[i].mwh,
              rows[i].tflops, rows[i].eff);
  } else {
    char what[96];
    if (tokens > 0) snprintf(what, sizeof what, "%.4g tokens", tokens);
    else snprintf(what, sizeof what, "%g epochs of %.4g samples", epochs, samples);
    fprintf(out, "%s on %s: %s, overhead %.0f %% (start-up, checkpoints, restarts, evaluation; queueing not counted)\n",
            model, mach, what, 100 * overhead);
    fprintf(out, "%6s %7s %11s %9s %11s %11s %14s %9s %10s %6s\n", "nodes", "GPUs", "iterations", "wall (h)",
            devh, "node-hours", unit, "MWh", "TFLOP/s/G", "eff");
    for (int i = 0; i < nr; i++)
      fprintf(out, "%6d %7d %11.0f %9.1f %11.0f %11.0f %14.0f %9.3g %10.1f %5.0f%%\n", rows[i].nodes, rows[i].gpus,
              rows[i].iters, rows[i].wall_h, rows[i].gpu_h, rows[i].node_h, rows[i].units, rows[i].mwh, rows[i].tflops,
              100 * rows[i].eff);
    for (int i = 0; i < nskip; i++) fprintf(out, "%6d  %s\n", skip_nodes[i], skip_why[i]);
    fputs(warnings, out);
    fprintf(out, "\nbilling: 1 node-hour = %g %s on %s\n", per_node_hour, unit, mach);
    if (nr > 1) {
      fprintf(out, "recommended: fastest %d nodes, cheapest %d nodes, best time x energy %d nodes\n", rows[fastest].nodes,
              rows[cheapest].nodes, rows[greenest].nodes);
      const plan_row *a = &rows[0], *b = &rows[nr - 1];
      fprintf(out, "\nScaling evidence (predicted by preflight %s): from %d to %d nodes of %s (%d to %d GPUs), the "
                   "model sustains %.0f to %.0f TFLOP/s per GPU, a parallel efficiency of %.0f %% relative to the "
                   "smallest configuration that fits in memory (%d nodes), and the time per iteration goes from %.3g s "
                   "to %.3g s (throughput speed-up %.1fx for %.0fx the nodes). The run needs %.0f %s over %.0f hours of "
                   "wall time at the cheapest scale (%d nodes) and %.0f %s over %.0f hours at the fastest (%d nodes), "
                   "with %.1f to %.1f MWh of facility energy.\n",
              pf_version(), a->nodes, b->nodes, mach, a->gpus, b->gpus, a->tflops, b->tflops, 100 * b->eff, a->nodes,
              a->t_iter, b->t_iter, (b->gbs / b->t_iter) / (a->gbs / a->t_iter), (double)b->nodes / a->nodes,
              rows[cheapest].units, unit, rows[cheapest].wall_h, rows[cheapest].nodes, rows[fastest].units, unit,
              rows[fastest].wall_h, rows[fastest].nodes, fmin(rows[cheapest].mwh, rows[fastest].mwh),
              fmax(rows[cheapest].mwh, rows[fastest].mwh));
    }
  }
  fclose(out);
  if ((rc = pf_cli_emit(&cli, buf)) < 0) status = pf_cli_fail("plan", rc);
  free(buf);
  return pf_cli_end(&cli, status);
}
