/* validate_megatron.c - `preflight validate --megatron-log FILE`: a Megatron-LM training log against the
 * prediction for its configuration.  The log's argument dump (megatron.c reads it) becomes scenario
 * options, Megatron's names mapped to preflight's, and the options given on the command line override
 * them; the medians of the logged iterations after the first (time, TFLOP/s, and energy and power where
 * logged) are the measured values, reported as a table, JSON (the log and the configuration, then the
 * rows) or CSV validation rows (docs/validation.md), by the format table's megatron renderers (fmt_table.c,
 * fmt_json.c, fmt_csv.c).  Exit codes as `validate` (cmd_validate.c).
 */
#include "cli.h"
#include "options.h"
#include "validate_cli.h"
#include "validate_out.h"

#include "study/study.h"
#include "core/core.h"
#include "report/report.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static bool is_true(const char *s) { return s && (!strcmp(s, "True") || !strcmp(s, "true") || !strcmp(s, "1")); }
static bool is_set(const char *s) { return s && *s && strcmp(s, "None") && strcmp(s, "null"); }

/* Sharding beyond the distributed optimizer (docs/model.md, "Sharded data parallelism"): --use-megatron-fsdp
 * (or the older --use-custom-fsdp) with --data-parallel-sharding-strategy no_shard|optim|optim_grads|
 * optim_grads_params (Megatron-FSDP v1 forces the distributed optimizer: level 1 at least), or
 * --use-torch-fsdp2 (FULL_SHARD: level 3). */
static int log_sharding(const pf_megatron_log *l, pf_optvals *v) {
  static const struct { const char *strategy, *zero; } levels[] = {
      {"no_shard", "1"}, {"optim", "1"}, {"optim_grads", "2"}, {"optim_grads_params", "3"}};
  const char *st = pf_megatron_arg(l, "data_parallel_sharding_strategy"), *zero = NULL, *impl = NULL;
  if (is_true(pf_megatron_arg(l, "use_megatron_fsdp")) || is_true(pf_megatron_arg(l, "use_custom_fsdp"))) {
    impl = "megatron";
    for (size_t i = 0; i < sizeof levels / sizeof *levels; i++)
      if (is_set(st) && !strcmp(st, levels[i].strategy)) zero = levels[i].zero;
    if (!zero) zero = "3"; /* the strategy's default, optim_grads_params (fsdp/src/README.md) */
  } else if (is_true(pf_megatron_arg(l, "use_torch_fsdp2"))) {
    impl = "torch", zero = "3";
  }
  int rc = 0;
  if (zero) rc = pf_opts_add(v, "zero", zero, l->path);
  if (rc == 0 && impl) rc = pf_opts_add(v, "fsdp-impl", impl, l->path);
  return rc;
}

/* The settings of current practice (job/defaults.c) as the log ran them, each on or off: a dump names
 * Megatron-LM's flags, and one it does not name was off (store_true flags of arguments.py).  Fused attention:
 * --use-flash-attn, an --attention-backend other than unfused/local, or Transformer Engine's layers (which
 * pick a fused kernel themselves).  A log without an argument dump leaves them to the defaults. */
static int log_settings(const pf_megatron_log *l, pf_optvals *v) {
  static const struct { const char *arg, *opt; } map[] = {
      {"sequence_parallel", "sp"}, {"use_distributed_optimizer", "dist-opt"},
      {"overlap_grad_reduce", "overlap-grad-reduce"}, {"overlap_param_gather", "overlap-param-gather"},
      {"tp_comm_overlap", "tp-comm-overlap"}};
  if (l->nargs == 0) return 0;
  int rc = 0;
  for (size_t i = 0; i < sizeof map / sizeof *map && rc == 0; i++)
    rc = pf_opts_set_flag(v, map[i].opt, is_true(pf_megatron_arg(l, map[i].arg)), l->path);
  const char *be = pf_megatron_arg(l, "attention_backend"), *impl = pf_megatron_arg(l, "transformer_impl");
  bool fused = is_true(pf_megatron_arg(l, "use_flash_attn")) ||
               (is_set(be) ? !strstr(be, "unfused") && !strstr(be, "local")
                           : is_set(impl) && !strcmp(impl, "transformer_engine"));
  if (rc == 0) rc = pf_opts_set_flag(v, "flash-attn", fused, l->path);
  return rc < 0 ? rc : log_sharding(l, v);
}

/* Uneven pipeline stages: Megatron's arguments are preflight's options (job/pplayout.c). */
static int log_stages(const pf_megatron_log *l, pf_optvals *v) {
  static const char *num[][2] = {{"decoder_first_pipeline_num_layers", "decoder-first-pipeline-num-layers"},
                                 {"decoder_last_pipeline_num_layers", "decoder-last-pipeline-num-layers"},
                                 {"pipeline_model_parallel_layout", "pipeline-model-parallel-layout"}};
  static const char *flag[][2] = {{"account_for_embedding_in_pipeline_split", "account-for-embedding-in-pipeline-split"},
                                  {"account_for_loss_in_pipeline_split", "account-for-loss-in-pipeline-split"}};
  const char *a;
  int rc = 0;
  for (size_t i = 0; i < 3 && rc == 0; i++)
    if (is_set(a = pf_megatron_arg(l, num[i][0]))) rc = pf_opts_add(v, num[i][1], a, l->path);
  for (size_t i = 0; i < 2 && rc == 0; i++)
    if (is_true(pf_megatron_arg(l, flag[i][0]))) rc = pf_opts_add(v, flag[i][1], "1", l->path);
  return rc;
}

/* CUDA graphs: --cuda-graph-impl local|transformer_engine|full_iteration and --cuda-graph-modules (before 2026
 * --cuda-graph-scope), dumped as a list ("['attn', 'moe_router']"), or the older --enable-cuda-graph.  A whole
 * iteration, or a layer captured whole (no modules, or scope "full"), is --host-overhead graphs; modules are
 * --cuda-graph-modules (compute/graphs.c). */
static int log_graphs(const pf_megatron_log *l, pf_optvals *v) {
  const char *impl = pf_megatron_arg(l, "cuda_graph_impl"), *mods = pf_megatron_arg(l, "cuda_graph_modules");
  if (!is_set(mods)) mods = pf_megatron_arg(l, "cuda_graph_scope");
  bool on = is_true(pf_megatron_arg(l, "enable_cuda_graph")) || (is_set(impl) && strcmp(impl, "none"));
  if (!on) return 0;
  char list[PF_RECOMPUTE_MODS_MAX] = "";
  size_t n = 0;
  for (const char *c = is_set(mods) ? mods : ""; *c && n + 1 < sizeof list; c++)
    if (*c != '[' && *c != ']' && *c != '\'' && *c != '"' && *c != ' ') list[n++] = *c;
  list[n] = '\0';
  bool whole = !list[0] || !strcmp(list, "full") || !strcmp(list, "full_iteration") ||
               (impl && !strcmp(impl, "full_iteration"));
  return whole ? pf_opts_add(v, "host-overhead", "graphs", l->path)
               : pf_opts_add(v, "cuda-graph-modules", list, l->path);
}

/* Option pairs from the log's argument dump (Megatron names -> preflight options). */
static int log_options(const pf_megatron_log *l, const pf_optvals *cli, pf_optvals *v, char *notes, size_t nlen) {
  static const struct { const char *arg, *opt; bool shape; } map[] = {
      {"tensor_model_parallel_size", "tp", false}, {"pipeline_model_parallel_size", "pp", false},
      {"context_parallel_size", "cp", false},      {"micro_batch_size", "mbs", false},
      {"global_batch_size", "gbs", false},         {"seq_length", "seq", false},
      {"num_layers", "layers", true},              {"hidden_size", "hidden", true},
      {"num_attention_heads", "heads", true},      {"ffn_hidden_size", "ffn-hidden", true},
      {"expert_model_parallel_size", "ep", false}};
  bool user_model = pf_opts_get(cli, "model") || pf_opts_get(cli, "params") || pf_opts_get(cli, "flops-per-sample");
  int rc = 0;
  char src[PF_PATH_MAX + 16];
  for (size_t i = 0; i < sizeof map / sizeof map[0] && rc == 0; i++) {
    const char *a = pf_megatron_arg(l, map[i].arg);
    if (!is_set(a) || (map[i].shape && user_model)) continue;
    snprintf(src, sizeof src, "%s:%d", l->path, pf_megatron_arg_line(l, map[i].arg));
    rc = pf_opts_add(v, map[i].opt, a, src);
  }
  if (rc < 0) return rc;
  const char *a, *b;
  if (!user_model) {
    if (is_true(pf_megatron_arg(l, "group_query_attention")) && is_set(a = pf_megatron_arg(l, "num_query_groups")))
      if ((rc = pf_opts_add(v, "kv-heads", a, l->path)) < 0) return rc;
    if (is_true(pf_megatron_arg(l, "swiglu")) && (rc = pf_opts_add(v, "swiglu", "1", l->path)) < 0) return rc;
    const char *voc = pf_megatron_arg(l, "padded_vocab_size");
    if (!is_set(voc)) voc = pf_megatron_arg(l, "vocab_size");
    if (!is_set(voc) && (a = pf_megatron_arg(l, "tokenizer_type")) && !strcmp(a, "GPT2BPETokenizer")) {
      voc = "50257";
      strncat(notes, "vocabulary 50257 (GPT2BPETokenizer)", nlen - strlen(notes) - 1);
    }
    if (is_set(voc) && (rc = pf_opts_add(v, "vocab", voc, l->path)) < 0) return rc;
  }
  if ((rc = log_settings(l, v)) < 0 || (rc = log_graphs(l, v)) < 0) return rc;
  if (is_set(a = pf_megatron_arg(l, "ddp_bucket_size")) && (rc = pf_opts_add(v, "ddp-bucket-size", a, l->path)) < 0) return rc;
  const char *prec = is_true(pf_megatron_arg(l, "fp16")) ? "fp16" : is_true(pf_megatron_arg(l, "bf16")) ? "bf16"
                     : l->nargs > 0 ? "fp32" : NULL;
  if (prec && (rc = pf_opts_add(v, "precision", prec, l->path)) < 0) return rc;
  a = pf_megatron_arg(l, "recompute_granularity");
  if (is_set(a) && (!strcmp(a, "selective") || !strcmp(a, "full"))) rc = pf_opts_add(v, "recompute", a, l->path);
  else if (is_true(pf_megatron_arg(l, "recompute_activations"))) rc = pf_opts_add(v, "recompute", "selective", l->path);
  if (rc < 0) return rc;
  /* full recomputation of N layers a chunk (block method); bf16 gradients (--grad-reduce-in-bf16 logs
   * accumulate_allreduce_grads_in_fp32 False under --bf16) */
  bool block = is_set(a) && !strcmp(a, "full") && is_set(b = pf_megatron_arg(l, "recompute_method")) &&
               !strcmp(b, "block");
  if (block && is_set(b = pf_megatron_arg(l, "recompute_num_layers")) &&
      (rc = pf_opts_add(v, "recompute-num-layers", b, l->path)) < 0)
    return rc;
  if (is_true(pf_megatron_arg(l, "cpu_offloading")) && is_set(b = pf_megatron_arg(l, "cpu_offloading_num_layers")) &&
      (rc = pf_opts_add(v, "cpu-offloading-num-layers", b, l->path)) < 0)
    return rc;
  b = pf_megatron_arg(l, "accumulate_allreduce_grads_in_fp32");
  if (prec && !strcmp(prec, "bf16") && b && !strcmp(b, "False") &&
      (rc = pf_opts_add(v, "grad-reduce-in-bf16", "1", l->path)) < 0)
    return rc;
  if (is_set(a = pf_megatron_arg(l, "virtual_pipeline_model_parallel_size"))) {
    char sch[40];
    snprintf(sch, sizeof sch, "interleaved:%s", a);
    if ((rc = pf_opts_add(v, "schedule", sch, l->path)) < 0) return rc;
  }
  if ((rc = log_stages(l, v)) < 0) return rc;
  if (!pf_opts_get(cli, "nodes") && !pf_opts_get(cli, "gpus") && is_set(a = pf_megatron_arg(l, "world_size")))
    if ((rc = pf_opts_add(v, "gpus", a, l->path)) < 0) return rc;
  /* the global batch from the iteration lines when the dump does not give it */
  if (!is_set(pf_megatron_arg(l, "global_batch_size")) && l->niter > 0 && l->gbs[l->niter - 1] > 0) {
    char g[32];
    snprintf(g, sizeof g, "%d", l->gbs[l->niter - 1]);
    if ((rc = pf_opts_add(v, "gbs", g, l->path)) < 0) return rc;
  }
  return 0;
}

/* The scenario of the log: its arguments as options (notes: what was read), then the user's (scen); the
 * machine, the model and the size must be known by then. */
static int megatron_scenario(const pf_megatron_log *l, const pf_optvals *scen, const char *path, pf_optvals *v,
                             pf_scenario *sc, char *notes, size_t nlen) {
  int rc = log_options(l, scen, v, notes, nlen);
  for (int i = 0; rc == 0 && i < scen->n; i++) rc = pf_opts_add(v, scen->name[i], scen->value[i], scen->source[i]);
  if (rc == 0 && !pf_opts_get(v, "machine"))
    rc = pf_error_set(PF_EINVAL, "--machine is required: a Megatron log does not say which machine it ran on");
  if (rc == 0 && !pf_opts_get(v, "model") && !pf_opts_get(v, "layers") && !pf_opts_get(v, "params"))
    rc = pf_error_set(PF_EINVAL, "%s: no argument dump (\"---- arguments ----\"): give the model (--model or "
                      "--layers/--hidden/--heads/--seq/--vocab) and the plan as options", path);
  if (rc == 0 && !pf_opts_get(v, "nodes") && !pf_opts_get(v, "gpus"))
    rc = pf_error_set(PF_EINVAL, "%s: the log does not state world_size: give --nodes or --gpus", path);
  if (rc == 0) rc = pf_opts_scenario(v, sc);
  return rc;
}

/* How the log's TFLOP/s count the attention core (Megatron-LM halves it for the causal mask from core_v0.12,
 * spec.h): the count nearer to the FLOPs per sample the log implies, its TFLOP/s x time x GPUs over the
 * global batch.  Where attention is a small share the two agree and either will do. */
static pf_flops_conv log_flops_conv(const pf_megatron_log *l, const pf_scenario *chk) {
  double implied = l->med_tflops * 1e12 * l->med_time_s * chk->gpus / (chk->plan.gbs > 0 ? chk->plan.gbs : 1);
  double full = pf_workload_model_flops_per_sample_as(&chk->workload, chk->plan.tp, PF_FLOPS_FULL);
  double causal = pf_workload_model_flops_per_sample_as(&chk->workload, chk->plan.tp, PF_FLOPS_CAUSAL);
  if (!(implied > 0) || !(causal > 0) || causal >= full) return PF_FLOPS_FULL;
  return fabs(log(implied / causal)) < fabs(log(implied / full)) ? PF_FLOPS_CAUSAL : PF_FLOPS_FULL;
}

/* One validation row per measured median of the log (time, TFLOP/s, energy, power), predicted with sc
 * (chk: sc with its plan completed; pred: work space).  s->rows holds 4. */
static void megatron_predict(const pf_megatron_log *l, const pf_scenario *sc, const pf_scenario *chk,
                             const char *path, pf_vset *s, pf_prediction *pred) {
  snprintf(s->path, sizeof s->path, "%s", path);
  int first = l->line[0], last = l->line[l->niter - 1];
  struct { pf_metric m; double v; pf_scope scope; } meas[4] = {
      {PF_MET_ITER_TIME, l->med_time_s, PF_SCOPE_NONE}, {PF_MET_TFLOPS, l->med_tflops, PF_SCOPE_NONE},
      {PF_MET_ENERGY, l->med_energy_J, PF_SCOPE_GPU_PER_GPU}, {PF_MET_POWER, l->med_power_W, PF_SCOPE_GPU_PER_GPU}};
  for (int k = 0; k < 4; k++) {
    if (isnan(meas[k].v)) continue;
    pf_vrow *r = &s->rows[s->n++];
    r->line = l->line[l->niter > 1 ? 1 : 0];
    snprintf(r->machine, sizeof r->machine, "%s", sc->machine.id);
    snprintf(r->model, sizeof r->model, "%s", sc->workload.id);
    r->nodes = chk->nodes;
    r->gpus = chk->gpus;
    r->metric = meas[k].m;
    r->scope = meas[k].scope;
    r->measured = r->value = meas[k].v;
    snprintf(r->unit, sizeof r->unit, "%s", pf_metric_unit(r->metric));
    r->loo_error = r->loo_predicted = NAN;
    snprintf(r->source, sizeof r->source, "%s:%d-%d (median of %d logged iterations after the first)", path, first,
             last, l->used);
    int rc = pf_vrow_predict(r, sc, NULL, &r->predicted, pred, r->reason, sizeof r->reason);
    if (rc == 0) { r->status = PF_ROW_PREDICTED; r->error = pf_vrow_error(r, r->predicted); }
    else r->status = rc > 0 ? PF_ROW_NOT_PREDICTED : PF_ROW_FAILED, r->fail_code = rc < 0 ? rc : 0;
  }
}

/* The report in the command's format to -o (or stdout), then --max-error.  Returns the exit status. */
static int megatron_report(pf_cli *cli, const pf_megatron_log *l, const pf_optvals *v, const pf_scenario *chk,
                           const pf_vset *s, const char *notes, const char *path) {
  FILE *f;
  int rc, status = 0;
  if ((rc = pf_output_open(&cli->out, &f)) < 0) return pf_cli_fail("validate", rc);
  pf_vemit e;
  memset(&e, 0, sizeof e);
  const pf_megatron_doc d = {.log = l, .chk = chk, .s = s, .v = v, .notes = notes, .path = path};
  rc = pf_fmt(cli->fmt)->megatron(f, &d, &e); /* the format table's renderer (checked in cmd_validate.c) */
  if (rc == 0) rc = pf_output_commit(&cli->out);
  else pf_output_abort(&cli->out);
  if (rc < 0) status = pf_cli_fail("validate", rc);
  if (status == 0 && (rc = pf_cli_check_max_error(&cli->v, &e.sum, &status)) < 0) status = pf_cli_fail("validate", rc);
  pf_vsum_free(&e.sum);
  return status;
}

int pf_cli_validate_megatron(pf_cli *cli, const pf_optvals *scen, const char *path) {
  pf_megatron_log *l = malloc(sizeof *l);
  if (!l) return pf_cli_fail("validate", pf_error_set(PF_ENOMEM, "out of memory"));
  int rc = pf_megatron_read(path, l);
  if (rc < 0) { free(l); return pf_cli_fail("validate", rc); }
  pf_optvals v = {0};
  char notes[256] = "";
  pf_scenario *sc = malloc(sizeof *sc);
  pf_vset s = {0};
  pf_prediction *pred = malloc(sizeof *pred);
  pf_scenario *chk = malloc(sizeof *chk);
  int status = 0;
  if (!sc || !pred || !chk) rc = pf_error_set(PF_ENOMEM, "out of memory");
  if (rc == 0) rc = megatron_scenario(l, scen, path, &v, sc, notes, sizeof notes);
  if (rc == 0 && !(s.rows = calloc(4, sizeof *s.rows))) rc = pf_error_set(PF_ENOMEM, "out of memory");
  if (rc < 0) {
    status = pf_cli_fail("validate", rc);
  } else {
    *chk = *sc;
    pf_plan_check(chk);
    /* the log's own count of FLOPs, unless --flops-convention says it */
    if (!pf_opts_get(&v, "flops-convention") && !isnan(l->med_tflops) &&
        (sc->flops_conv = chk->flops_conv = log_flops_conv(l, chk)) == PF_FLOPS_CAUSAL)
      snprintf(notes + strlen(notes), sizeof notes - strlen(notes), "%sTFLOP/s with causal attention counted as "
               "half (Megatron-LM core_v0.12 and later)", notes[0] ? "; " : "");
    megatron_predict(l, sc, chk, path, &s, pred);
    status = megatron_report(cli, l, &v, chk, &s, notes, path);
  }
  free(s.rows);
  free(chk);
  free(pred);
  pf_opts_free(&v);
  free(sc);
  pf_megatron_free(l);
  free(l);
  return status;
}
