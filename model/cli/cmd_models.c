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


static cJSON *model_json(const pf_workload *w) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "id", w->id);
  cJSON_AddStringToObject(j, "name", w->name);
  cJSON_AddStringToObject(j, "kind", w->kind == PF_WL_TRANSFORMER ? "transformer"
                                     : w->kind == PF_WL_LAYERS    ? "layers"
                                                                  : "generic");
  cJSON_AddNumberToObject(j, "params", pf_workload_params(w, 1));
  cJSON_AddNumberToObject(j, "flops_per_sample", pf_workload_model_flops_per_sample(w, 1));
  cJSON_AddNumberToObject(j, "tokens_per_sample", pf_workload_tokens_per_sample(w));
  if (w->kind == PF_WL_LAYERS) {
    pf_layers_totals t;
    if (pf_layers_summary(w, &t) == 0) {
      cJSON_AddNumberToObject(j, "nontrainable_params", t.nontrainable);
      cJSON_AddNumberToObject(j, "layer_count", t.layers);
      cJSON_AddNumberToObject(j, "forward_flops_per_sample", t.fwd_flops);
      cJSON_AddNumberToObject(j, "activation_bytes_per_sample_fp32", t.act_bytes);
      cJSON_AddNumberToObject(j, "operators_per_forward", t.fwd_ops);
    }
  }
  if (w->kind == PF_WL_TRANSFORMER) {
    cJSON_AddNumberToObject(j, "layers", w->layers);
    cJSON_AddNumberToObject(j, "hidden", w->hidden);
    cJSON_AddNumberToObject(j, "heads", w->heads);
    cJSON_AddNumberToObject(j, "kv_heads", w->kv_heads);
    cJSON_AddNumberToObject(j, "ffn_hidden", w->ffn_hidden);
    cJSON_AddNumberToObject(j, "seq", w->seq);
    cJSON_AddNumberToObject(j, "vocab", w->vocab);
    cJSON_AddBoolToObject(j, "swiglu", w->swiglu);
  }
  cJSON_AddStringToObject(j, "source", w->source ? w->source : "");
  return j;
}

static const pf_cli_spec spec = {"models", "usage: preflight models [--format F]\n       preflight models show ID", NULL,
                                 false, 2, false,
                                 "  preflight models\n  preflight models show gpt3-175b --format json\n"};

static void show(FILE *f, const pf_workload *w, pf_format fmt) {
  if (fmt == PF_FMT_JSON) {
    cJSON *j = model_json(w);
    cJSON_AddNumberToObject(j, "schema_version", PF_SCHEMA_VERSION);
    pf_report_json_print(f, j);
    return;
  }
  if (fmt == PF_FMT_CSV) {
    fprintf(f, "id,name,params,flops_per_sample\n%s,\"%s\",%.6g,%.6g\n", w->id, w->name, pf_workload_params(w, 1),
            pf_workload_model_flops_per_sample(w, 1));
    return;
  }
  fprintf(f, "%s: %s\n", w->id, w->name);
  fprintf(f, "  parameters       %.4g\n", pf_workload_params(w, 1));
  fprintf(f, "  model FLOPs      %.4g per sample (forward + backward%s)\n",
          pf_workload_model_flops_per_sample(w, 1),
          w->kind == PF_WL_LAYERS ? ", every network's passes of a step" : ", Megatron's count");
  if (w->kind == PF_WL_TRANSFORMER)
    fprintf(f, "  shape            %d layers, hidden %d, %d heads (%d KV), FFN %d%s, seq %d, vocab %d\n", w->layers,
            w->hidden, w->heads, w->kv_heads, w->ffn_hidden, w->swiglu ? " SwiGLU" : "", w->seq, w->vocab);
  if (w->kind == PF_WL_LAYERS) {
    pf_layers_totals t;
    if (pf_layers_summary(w, &t) == 0)
      fprintf(f, "  layers           %d (after repeats), %.4g non-trainable parameters, %.4g FLOPs per forward, "
              "%.4g MB of fp32 activations per sample, %.4g framework operators per forward\n", t.layers, t.nontrainable,
              t.fwd_flops, t.act_bytes / 1e6, t.fwd_ops);
    for (const pf_net *n = w->nets; n && n->name; n++)
      fprintf(f, "  network %-8s input %dx%dx%d; per step %g forward, %g data-gradient, %g weight-gradient passes, "
              "%g optimizer steps\n", n->name, n->h, n->w, n->c, n->fwd, n->dgrad, n->wgrad, n->opt);
  }
  fprintf(f, "  source           %s\n", w->source);
}

static void list(FILE *f, pf_format fmt) {
  cJSON *arr = cJSON_CreateArray();
  int wi = 12, wn = 34; /* columns as wide as the longest id and name */
  for (int i = 0; i < pf_workload_builtin_count(); i++) {
    int li = (int)strlen(pf_workload_builtin_at(i)->id), ln = (int)strlen(pf_workload_builtin_at(i)->name);
    wi = li > wi ? li : wi, wn = ln > wn ? ln : wn;
  }
  if (fmt == PF_FMT_TABLE) fprintf(f, "%-*s %-*s %12s %14s\n", wi, "id", wn, "name", "params", "FLOPs/sample");
  if (fmt == PF_FMT_CSV) fprintf(f, "id,name,params,flops_per_sample\n");
  for (int i = 0; i < pf_workload_builtin_count(); i++) {
    pf_workload w;
    pf_workload_builtin(pf_workload_builtin_at(i)->id, &w);
    if (fmt == PF_FMT_TABLE)
      fprintf(f, "%-*s %-*s %12.4g %14.4g\n", wi, w.id, wn, w.name, pf_workload_params(&w, 1),
              pf_workload_model_flops_per_sample(&w, 1));
    else if (fmt == PF_FMT_CSV)
      fprintf(f, "%s,\"%s\",%.6g,%.6g\n", w.id, w.name, pf_workload_params(&w, 1),
              pf_workload_model_flops_per_sample(&w, 1));
    else cJSON_AddItemToArray(arr, model_json(&w));
  }
  if (fmt == PF_FMT_JSON) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "schema_version", PF_SCHEMA_VERSION);
    cJSON_AddItemToObject(root, "models", arr);
    pf_report_json_print(f, root);
  } else cJSON_Delete(arr);
}

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
  if (is_show) show(f, &w, cli.fmt);
  else list(f, cli.fmt);
  fclose(f);
  rc = pf_cli_emit(&cli, text);
  free(text);
  return pf_cli_end(&cli, rc < 0 ? pf_cli_fail("models", rc) : 0);
}
