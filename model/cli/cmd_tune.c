/* cmd_tune.c - `preflight tune`: the best parallel configuration that fits.
 *
 * Enumerates TP (divisors of the node's GPUs that divide the heads), PP
 * (divisors of the layers), micro-batch size, recomputation and schedule for
 * a fixed global batch and GPU count; drops plans that are invalid or do not
 * fit in memory; ranks the rest by throughput with the closed-form pipeline
 * (fast screening), then re-simulates the best few with the SimGrid engine for
 * the final ranking.  SP is on whenever TP > 1 and the distributed optimizer is
 * always on: both only save memory (the collectives they use move the same bytes
 * as the all-reduces they replace).
 */
#include "cli.h"
#include "options.h"

#include "preflight/batch.h"
#include "preflight/error.h"
#include "preflight/predict.h"
#include "preflight/progress.h"
#include "preflight/report.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const pf_opt pf_tune_opts[] = {
    {"top", "K", "how many configurations to show (default 10)"},
    {NULL, NULL, NULL}};

typedef struct {
  pf_plan plan;
  double tokens_per_s, t_iter, tflops, mem_GiB;
} candidate;

static int by_throughput(const void *a, const void *b) {
  const candidate *x = a, *y = b;
  if (x->tokens_per_s != y->tokens_per_s) return x->tokens_per_s < y->tokens_per_s ? 1 : -1;
  /* ties: less memory, then lexicographic plan for determinism */
  if (x->mem_GiB != y->mem_GiB) return x->mem_GiB > y->mem_GiB ? 1 : -1;
  return memcmp(&x->plan, &y->plan, sizeof x->plan);
}

static void plan_text(const pf_plan *p, char *buf, size_t n) {
  char sched[24];
  if (p->schedule == PF_SCHED_INTERLEAVED) snprintf(sched, sizeof sched, "interleaved:%d", p->vstages);
  else snprintf(sched, sizeof sched, "%s", pf_schedule_name(p->schedule));
  snprintf(buf, n, "--tp %d --pp %d --mbs %d --recompute %s --schedule %s%s%s%s%s", p->tp, p->pp, p->mbs,
           pf_recompute_name(p->recompute), sched, p->sp ? " --sp" : "", p->dist_opt ? " --dist-opt" : "",
           p->overlap_grad_reduce ? " --overlap-grad-reduce" : "", p->overlap_param_gather ? " --overlap-param-gather" : "");
}

static const pf_opt *const tables[] = {pf_scenario_opts, pf_tune_opts, NULL};

static const pf_cli_spec spec = {
    "tune", "usage: preflight tune --machine ID --model ID (--nodes N | --gpus N) --gbs N [options]", tables, true, 1,
    false,
    "  preflight tune --machine leonardo-booster --model llama2-13b --nodes 16 --gbs 512\n"
    "  preflight tune --machine lumi-g --model gpt3-175b --nodes 64 --gbs 1536 --precision fp16 --top 5\n"};

/* The plans the search visits (for the progress bar); must match the loops below. */
static long count_plans(const pf_workload *w, int gpn, int gpus, int layers) {
  long n = 0;
  for (int tp = 1; tp <= gpn; tp++) {
    if (gpn % tp || (w->kind == PF_WL_TRANSFORMER ? w->heads % tp : tp > 1)) continue;
    for (int pp = 1; pp <= layers && pp <= 128; pp++)
      if (layers % pp == 0 && gpus % (tp * pp) == 0) n += 4 * (PF_RECOMPUTE_FULL + 1) * (pp == 1 ? 1 : 2);
  }
  return n;
}

int pf_cmd_tune(int argc, char **argv) {
  pf_cli cli;
  int rc = pf_cli_begin(&spec, argc, argv, &cli);
  if (rc != 0) return pf_cli_end(&cli, rc > 0 ? 0 : pf_cli_fail("tune", rc));
  pf_optvals *vp = &cli.v;
  int top = 10;
  pf_format fmt = cli.fmt;
  pf_scenario *base = malloc(sizeof *base), *sc = malloc(sizeof *sc);
  pf_prediction *p = malloc(sizeof *p);
  candidate *c = NULL;
  int nc = 0, cap = 0, tried = 0, status = 0;
  if (!base || !sc || !p) { rc = pf_error_set(PF_ENOMEM, "out of memory"); goto fail; }
  if ((rc = pf_opts_int_range(vp, "top", 1, 100000, &top)) < 0 || (rc = pf_opts_scenario(vp, base)) < 0)
    goto fail;
  if (base->plan.gbs <= 0) { rc = pf_error_set(PF_EINVAL, "tune needs --gbs (the global batch to keep)"); goto fail; }
  int gpn = base->machine.gpus_per_node;
  int gpus = base->gpus;
  if (gpus <= 0 && base->nodes > 0 && __builtin_mul_overflow(base->nodes, gpn, &gpus)) {
    rc = pf_error_set(PF_EINVAL, "--nodes %d x %d GPUs per node exceeds %d GPUs", base->nodes, gpn, INT_MAX);
    goto fail;
  }
  if (gpus <= 0) { rc = pf_error_set(PF_EINVAL, "tune needs --nodes N or --gpus N"); goto fail; }
  if ((gpus + gpn - 1) / gpn > base->machine.nodes) {
    rc = pf_error_set(PF_EPLAN, "--nodes %d exceeds the %d nodes of %s", (gpus + gpn - 1) / gpn,
                      base->machine.nodes, base->machine.id);
    goto fail;
  }
  const pf_workload *w = &base->workload;
  int layers = w->kind == PF_WL_TRANSFORMER ? w->layers : 1;
  static const int mbs_set[] = {1, 2, 4, 8};
  pf_progress_begin("tune", count_plans(w, gpn, gpus, layers), false);
  for (int tp = 1; tp <= gpn; tp++) {
    if (gpn % tp || (w->kind == PF_WL_TRANSFORMER ? w->heads % tp : tp > 1)) continue;
    for (int pp = 1; pp <= layers && pp <= 128; pp++) {
      if (layers % pp || gpus % (tp * pp)) continue;
      for (int mi = 0; mi < 4; mi++)
        for (int rec = 0; rec <= PF_RECOMPUTE_FULL; rec++)
          for (int sched = 0; sched < 2; sched++) {
            if (sched == 1 && pp == 1) continue;
            *sc = *base;
            pf_plan *pl = &sc->plan;
            pl->tp = tp; pl->pp = pp; pl->dp = 0; pl->mbs = mbs_set[mi]; pl->grad_accum = 0;
            pl->recompute = (pf_recompute)rec;
            pl->schedule = sched ? PF_SCHED_INTERLEAVED : PF_SCHED_1F1B;
            pl->vstages = sched ? 2 : 1;
            pl->sp = tp > 1;
            pl->dist_opt = true;
            sc->gpus = gpus;
            sc->nodes = (gpus + gpn - 1) / gpn;
            sc->engine = PF_ENGINE_ANALYTIC;
            sc->trace[0] = '\0';
            tried++;
            pf_progress_item();
            if (pf_plan_check(sc) < 0) continue;
            pf_memory m;
            pf_memory_estimate(sc, &m);
            if (m.total_B > m.capacity_B) continue;
            if (pf_predict(sc, p) < 0) continue;
            if (nc == cap) {
              cap = cap ? 2 * cap : 64;
              candidate *g = realloc(c, (size_t)cap * sizeof *c);
              if (!g) { pf_progress_end(); rc = pf_error_set(PF_ENOMEM, "out of memory"); goto fail; }
              c = g;
            }
            c[nc++] = (candidate){sc->plan, p->tokens_per_s, p->iteration_time_s, p->tflops_per_gpu,
                                  p->memory.total_B / (1024.0 * 1024 * 1024)};
          }
    }
  }
  pf_progress_end();
  if (nc == 0) {
    rc = pf_error_set(PF_ENOFIT, "no parallel configuration of %s fits on %d GPUs of %s with global batch %d "
                      "(%d plans tried); more GPUs or a smaller model are needed", w->id, gpus, base->machine.id,
                      base->plan.gbs, tried);
    goto fail;
  }
  qsort(c, (size_t)nc, sizeof *c, by_throughput);
  /* re-simulate the best few with the DES, over all cores */
  int k = nc < 2 * top ? nc : 2 * top;
  pf_scenario *scs = calloc((size_t)k, sizeof *scs);
  pf_batch_item *items = calloc((size_t)k, sizeof *items);
  if (!scs || !items) { free(scs); free(items); rc = pf_error_set(PF_ENOMEM, "out of memory"); goto fail; }
  for (int i = 0; i < k; i++) {
    scs[i] = *base;
    scs[i].plan = c[i].plan;
    scs[i].gpus = gpus;
    scs[i].nodes = (gpus + gpn - 1) / gpn;
    scs[i].trace[0] = '\0';
    items[i].sc = &scs[i];
  }
  pf_progress_begin("tune: simulating the best", k, false);
  rc = pf_predict_batch(items, k, 0);
  pf_progress_end();
  for (int i = 0; i < k && rc == 0; i++) {
    if (items[i].rc < 0) { rc = pf_error_set(items[i].rc, "%s", items[i].detail); break; }
    c[i].tokens_per_s = items[i].pred.tokens_per_s;
    c[i].t_iter = items[i].pred.iteration_time_s;
    c[i].tflops = items[i].pred.tflops_per_gpu;
  }
  free(scs);
  free(items);
  if (rc < 0) goto fail;
  qsort(c, (size_t)k, sizeof *c, by_throughput);
  if (top > k) top = k;
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  char txt[160];
  if (fmt == PF_FMT_JSON) {
    cJSON *root = pf_report_root_json();
    cJSON_AddNumberToObject(root, "plans_tried", tried);
    cJSON_AddNumberToObject(root, "plans_feasible", nc);
    cJSON *arr = cJSON_AddArrayToObject(root, "rows");
    for (int i = 0; i < top; i++) {
      cJSON *o = cJSON_CreateObject();
      plan_text(&c[i].plan, txt, sizeof txt);
      cJSON_AddNumberToObject(o, "tp", c[i].plan.tp);
      cJSON_AddNumberToObject(o, "pp", c[i].plan.pp);
      cJSON_AddNumberToObject(o, "dp", c[i].plan.dp);
      cJSON_AddNumberToObject(o, "mbs", c[i].plan.mbs);
      cJSON_AddStringToObject(o, "options", txt);
      cJSON_AddNumberToObject(o, "iteration_time_s", c[i].t_iter);
      cJSON_AddNumberToObject(o, "tokens_per_s", c[i].tokens_per_s);
      cJSON_AddNumberToObject(o, "tflops_per_gpu", c[i].tflops);
      cJSON_AddNumberToObject(o, "memory_GiB", c[i].mem_GiB);
      cJSON_AddItemToArray(arr, o);
    }
    pf_report_json_print(out, root);
  } else if (fmt == PF_FMT_CSV) {
    fprintf(out, "rank,tp,pp,dp,mbs,recompute,schedule,iteration_time_s,tokens_per_s,tflops_per_gpu,memory_GiB\n");
    for (int i = 0; i < top; i++)
      fprintf(out, "%d,%d,%d,%d,%d,%s,%s,%.6g,%.6g,%.6g,%.4g\n", i + 1, c[i].plan.tp, c[i].plan.pp, c[i].plan.dp,
              c[i].plan.mbs, pf_recompute_name(c[i].plan.recompute), pf_schedule_name(c[i].plan.schedule), c[i].t_iter,
              c[i].tokens_per_s, c[i].tflops, c[i].mem_GiB);
  } else {
    fprintf(out, "%s on %d GPUs of %s, global batch %d: %d plans tried, %d fit; best %d:\n", w->id, gpus,
            base->machine.id, base->plan.gbs, tried, nc, top);
    fprintf(out, "%4s %5s %11s %12s %10s %8s  %s\n", "rank", "DP", "iter (s)", "tokens/s", "TFLOP/s/G", "mem GiB", "options");
    for (int i = 0; i < top; i++) {
      plan_text(&c[i].plan, txt, sizeof txt);
      fprintf(out, "%4d %5d %11.4g %12.4g %10.1f %8.1f  %s\n", i + 1, c[i].plan.dp, c[i].t_iter, c[i].tokens_per_s,
              c[i].tflops, c[i].mem_GiB, txt);
    }
  }
  fclose(out);
  if ((rc = pf_cli_emit(&cli, buf)) < 0) status = pf_cli_fail("tune", rc);
  free(buf);
  free(c); free(base); free(sc); free(p);
  return pf_cli_end(&cli, status);
fail:
  free(c); free(base); free(sc); free(p);
  return pf_cli_end(&cli, pf_cli_fail("tune", rc));
}
