/* fmt_json_models.c - the JSON format's model documents (--format json):
 * `models` ({"schema_version", "models": [one object per built-in model]}) and
 * `models show ID` (that object): shape, total and active parameters, model
 * FLOPs, and for a mixture of experts or MLA its own object ("moe").  A file
 * of its own by document kind beside fmt_json.c (formats.h). */
#include "formats.h"

#include "core/core.h"
#include "report/report.h"
#include "workload/workload.h"

#include <cjson/cJSON.h>
#include <stdio.h>

/* the mixture of experts and MLA shape, with the counts that differ from a dense model's */
static cJSON *moe_json(const pf_workload *w) {
  cJSON *j = cJSON_CreateObject();
  pf_workload all = *w; /* every expert computed: the count MFU must not use (maxtext PR #678) */
  all.topk = all.experts;
  const struct { const char *k; double v; } f[] = {
      {"active_params_without_embedding", pf_workload_active_params(w, 1) - pf_workload_embedding_params(w, 1)},
      {"mtp_params", pf_workload_mtp_params(w)},
      {"flops_per_sample_all_experts", pf_workload_model_flops_per_sample(&all, 1)},
      {"experts", w->experts}, {"topk", w->topk}, {"moe_ffn_hidden", w->moe_ffn_hidden},
      {"shared_ffn_hidden", w->shared_ffn_hidden}, {"moe_layers", pf_workload_moe_layers_in(w, 0, w->layers)},
      {"router_groups", w->router_groups}, {"router_group_topk", w->router_group_topk},
      {"capacity_factor", w->capacity_factor}, {"expert_load", pf_workload_expert_load(w)},
      {"head_dim", pf_workload_head_dim(w)}, {"q_lora_rank", w->q_lora_rank}, {"kv_lora_rank", w->kv_lora_rank},
      {"qk_nope_head_dim", w->qk_nope_dim}, {"qk_rope_head_dim", w->qk_rope_dim}, {"v_head_dim", w->v_head_dim},
      {"mtp_layers", w->mtp_layers}};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) cJSON_AddNumberToObject(j, f[i].k, f[i].v);
  cJSON_AddStringToObject(j, "router", w->router == PF_ROUTER_SIGMOID ? "sigmoid" : "softmax");
  return j;
}

static cJSON *model_json(const pf_workload *w) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "id", w->id);
  cJSON_AddStringToObject(j, "name", w->name);
  cJSON_AddStringToObject(j, "kind", w->kind == PF_WL_TRANSFORMER ? "transformer"
                                     : w->kind == PF_WL_LAYERS    ? "layers"
                                                                  : "generic");
  cJSON_AddNumberToObject(j, "params", pf_workload_params(w, 1));
  cJSON_AddNumberToObject(j, "active_params", pf_workload_active_params(w, 1));
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
    if (pf_workload_windowed_layers(w) > 0) { /* sliding-window attention */
      cJSON_AddNumberToObject(j, "window_size", w->window);
      cJSON_AddNumberToObject(j, "windowed_layers", pf_workload_windowed_layers(w));
    }
    if (pf_workload_is_moe(w) || pf_workload_is_mla(w)) cJSON_AddItemToObject(j, "moe", moe_json(w));
  }
  cJSON_AddStringToObject(j, "source", w->source ? w->source : "");
  return j;
}

void pf_fmt_json_models(FILE *f) {
  cJSON *arr = cJSON_CreateArray();
  for (int i = 0; i < pf_workload_builtin_count(); i++) {
    pf_workload w;
    pf_workload_builtin(pf_workload_builtin_at(i)->id, &w);
    cJSON_AddItemToArray(arr, model_json(&w));
  }
  cJSON *root = cJSON_CreateObject();
  cJSON_AddNumberToObject(root, "schema_version", PF_SCHEMA_VERSION);
  cJSON_AddItemToObject(root, "models", arr);
  pf_report_json_print(f, root);
}

void pf_fmt_json_model(FILE *f, const pf_workload *w) {
  cJSON *j = model_json(w);
  cJSON_AddNumberToObject(j, "schema_version", PF_SCHEMA_VERSION);
  pf_report_json_print(f, j);
}
