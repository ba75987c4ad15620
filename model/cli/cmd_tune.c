/* cmd_tune.c - `preflight tune`: the best parallel configuration that fits
 * (the search is tune.c's; this file turns options into what is fixed and
 * formats the result, or a shard of it for `preflight merge`).
 */
#include "cli.h"
#include "options.h"
#include "results.h"

#include "core/core.h"
#include "study/study.h"
#include "report/report.h"

#include <cjson/cJSON.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const pf_opt pf_tune_opts[] = {
    {"top", "K", "how many configurations to show (default 10); the best 2K are simulated with the engine",
     .type = PF_OPT_INT,
     .at = PF_AT(pf_tune_config, top), .lo = 1, .hi = PF_SHARD_JSON_ROWS / 2}, /* a shard's 2K rows: results.h */
    {"objective", "O", "what \"best\" means: time (default) | energy (facility J/iteration) | billing | action (J x s)",
     .type = PF_OPT_TEXT},
    {"shard", "I/N", "evaluate the I-th of N disjoint slices of the plans (JSON for `preflight merge`)",
     .type = PF_OPT_TEXT},
    PF_OPT_END};

#define EXAMPLES \
    "  preflight tune --machine leonardo-booster --model llama2-13b --nodes 16 --gbs 512\n" \
    "  preflight tune --machine lumi-g --model gpt3-175b --nodes 64 --gbs 1536 --precision fp16 --top 5\n" \
    "  preflight tune --machine mn5-acc --model gpt3-175b --nodes 256 --gbs 1536 --tp 4 --objective energy\n" \
    "  preflight tune --machine mn5-acc --model llama2-7b --nodes 8 --gbs 512 --shard 1/2 -o t1.json\n"

/* Format a tune result (plain run or merge) as the user asked. */
char *pf_cli_tune_render(const cJSON *ctx, const pf_tune_result *r, const pf_tune_config *o, pf_format fmt) {
  char *buf = NULL;
  size_t len = 0;
  FILE *out = open_memstream(&buf, &len);
  if (!out) return NULL;
  pf_fmt(fmt)->tune(out, ctx, r, o);
  if (fclose(out) != 0) { free(buf); return NULL; }
  return buf;
}

static const pf_opt *const tables[] = {pf_scenario_opts, pf_tune_opts, NULL};

static const pf_cli_spec spec = {
    "tune",
    "usage: preflight tune --machine ID --model ID (--nodes N | --gpus N) --gbs N [options]\n\n"
    "Every option given (--tp, --pp, --cp, --mbs, --recompute, --schedule, --sp, --dist-opt, the overlap\n"
    "flags, --engine, --trace, ...) is kept; the others are searched.",
    tables, true, 1, false, EXAMPLES, false, .doc = PF_DOC(tune)};
const pf_cli_spec *const pf_cli_spec_tune = &spec; /* for the man page and the completion (gendoc.c) */


int pf_cmd_tune(int argc, char **argv) {
  pf_cli cli;
  int rc = pf_cli_begin(&spec, argc, argv, &cli);
  if (rc != 0) return pf_cli_end(&cli, rc > 0 ? 0 : pf_cli_fail("tune", rc));
  pf_optvals *vp = &cli.v;
  pf_tune_config o = {.fixed = pf_opts_tune_fixed(vp), .objective = PF_OBJ_TIME, .top = 10, .shard = 1, .nshards = 1};
  pf_format fmt = cli.fmt;
  pf_scenario *base = malloc(sizeof *base);
  pf_tune_result r = {0};
  cJSON *ctx = NULL;
  char *text = NULL;
  const char *s;
  if (!base) return pf_cli_end(&cli, pf_cli_fail("tune", pf_error_set(PF_ENOMEM, "out of memory")));
  if ((rc = pf_opts_fill(vp, pf_tune_opts, 0, &o)) < 0 || (rc = pf_opts_scenario(vp, base)) < 0) goto done;
  if ((s = pf_opts_get(vp, "objective")) && (rc = pf_objective_parse(s, &o.objective)) < 0) goto done;
  if ((s = pf_opts_get(vp, "shard")) && (rc = pf_cli_parse_shard(s, &o.shard, &o.nshards)) < 0) goto done;
  if (o.top < 1) { rc = pf_error_set(PF_EINVAL, "--top must be at least 1"); goto done; }
  if (base->plan.gbs <= 0) { rc = pf_error_set(PF_EINVAL, "tune needs --gbs (the global batch to keep)"); goto done; }
  int gpn = base->machine.gpus_per_node;
  if (base->gpus <= 0 && base->nodes > 0 && __builtin_mul_overflow(base->nodes, gpn, &base->gpus)) {
    rc = pf_error_set(PF_EINVAL, "--nodes %d x %d GPUs per node exceeds %d GPUs", base->nodes, gpn, INT_MAX);
    goto done;
  }
  if (base->gpus <= 0) { rc = pf_error_set(PF_EINVAL, "tune needs --nodes N or --gpus N"); goto done; }
  if ((base->gpus + gpn - 1) / gpn > base->machine.nodes) {
    rc = pf_error_set(PF_EPLAN, "--nodes %d exceeds the %d nodes of %s", (base->gpus + gpn - 1) / gpn,
                      base->machine.nodes, base->machine.id);
    goto done;
  }
  if (o.nshards > 1 && fmt != PF_FMT_JSON) {
    rc = pf_error_set(PF_EINVAL, "--shard writes JSON for `preflight merge`: add --format json or -o FILE.json");
    goto done;
  }
  const char *trace = pf_opts_get(vp, "trace"); /* the best plan's timeline, once the search is done */
  o.progress = true;
  /* every plan that fits priced, none bounded out: the tests compare the two searches (tests/cli/tune_bound.sh) */
  o.exhaustive = getenv("PREFLIGHT_TUNE_EXHAUSTIVE") != NULL;
  if ((rc = pf_tune(base, &o, &r)) < 0) goto done;
  if (getenv("PREFLIGHT_TIMING")) /* diagnostics for bench/run.sh and the tests; never part of a result */
    fprintf(stderr, "preflight tune: timing: %ld plans evaluated in %.3f s (%ld priced, %ld bounded, %ld priced below "
            "their bound; CPU %.2f s, the bound pass %.2f s; %d of %d pricing rounds over workers)\n", r.evaluated,
            r.eval_s, r.priced, r.bounded, r.bound_over, r.eval_cpu_s, r.bound_cpu_s, r.rounds_par, r.rounds);
  ctx = cJSON_CreateObject();
  cJSON_AddStringToObject(ctx, "command", "tune");
  cJSON_AddStringToObject(ctx, "machine", base->machine.id);
  cJSON_AddStringToObject(ctx, "model", base->workload.id);
  cJSON_AddNumberToObject(ctx, "gpus", base->gpus);
  cJSON_AddNumberToObject(ctx, "gbs", base->plan.gbs);
  cJSON_AddNumberToObject(ctx, "top", o.top);
  if (pf_workload_is_moe(&base->workload)) { /* the experts, and the device EP 1's memory is set against */
    cJSON_AddNumberToObject(ctx, "experts", base->workload.experts);
    cJSON_AddStringToObject(ctx, "device", base->machine.dev.id);
  }
  if (trace && trace[0] && r.nfinal > 0 && o.nshards == 1) { /* the best plan's timeline */
    pf_scenario *b = malloc(sizeof *b);
    pf_prediction *p = malloc(sizeof *p);
    if (b && p) {
      *b = *base;
      b->plan = r.final[0].plan;
      rc = pf_report_predict(b, trace, p);
    }
    free(b);
    free(p);
    if (rc < 0) goto done;
  }
  if (o.nshards > 1) {
    cJSON *doc = pf_report_root_json();
    cJSON *c;
    cJSON_ArrayForEach(c, ctx) cJSON_AddItemToObject(doc, c->string, cJSON_Duplicate(c, 1));
    cJSON *sh = cJSON_AddObjectToObject(doc, "shard");
    cJSON_AddNumberToObject(sh, "index", o.shard);
    cJSON_AddNumberToObject(sh, "count", o.nshards);
    cJSON_AddStringToObject(sh, "objective", pf_objective_name(o.objective));
    cJSON_AddItemToObject(doc, "result", pf_tune_json(&r, &o));
    text = pf_report_json_text(doc);
  } else {
    text = pf_cli_tune_render(ctx, &r, &o, fmt);
  }
  if (!text) { rc = pf_error_set(PF_ENOMEM, "out of memory"); goto done; }
  rc = pf_cli_emit(&cli, text);
done:
  free(text);
  cJSON_Delete(ctx);
  pf_tune_result_free(&r);
  free(base);
  return pf_cli_end(&cli, rc < 0 ? pf_cli_fail("tune", rc) : 0);
}
