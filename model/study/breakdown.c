/* breakdown.c - the terms of the iteration breakdown (breakdown.h; what each
 * term measures: predict.c), their names and order, and the breakdown's JSON:
 * one table names the terms for every report and for tune's shards. */
#include "breakdown.h"

#include <stddef.h>

static const struct {
  const char *name;
  size_t off;
} breakdown_terms[PF_BREAKDOWN_N] = {
    {"compute", offsetof(pf_breakdown, compute)},
    {"tp_comm", offsetof(pf_breakdown, tp_comm)},
    {"ep_a2a", offsetof(pf_breakdown, ep_a2a)},
    {"pp_bubble", offsetof(pf_breakdown, pp_bubble)},
    {"pp_comm", offsetof(pf_breakdown, pp_comm)},
    {"dp_comm_exposed", offsetof(pf_breakdown, dp_comm_exposed)},
    {"optimizer", offsetof(pf_breakdown, optimizer)},
    {"overhead", offsetof(pf_breakdown, overhead)},
    {"dp_interference", offsetof(pf_breakdown, dp_interference)},
    {"input", offsetof(pf_breakdown, input)},
    {"fsdp_allgather", offsetof(pf_breakdown, fsdp_allgather)},
    {"fsdp_reduce_scatter", offsetof(pf_breakdown, fsdp_reduce_scatter)},
    {"fp8_amax", offsetof(pf_breakdown, fp8_amax)},
};

const char *pf_breakdown_name(int i) { return i >= 0 && i < PF_BREAKDOWN_N ? breakdown_terms[i].name : "?"; }

double pf_breakdown_get(const pf_breakdown *b, int i) {
  return i >= 0 && i < PF_BREAKDOWN_N ? *(const double *)((const char *)b + breakdown_terms[i].off) : 0.0;
}

cJSON *pf_breakdown_json(cJSON *parent, const pf_breakdown *b, int nterms, double (*round)(double)) {
  cJSON *o = cJSON_AddObjectToObject(parent, "breakdown_s");
  for (int i = 0; o && i < nterms && i < PF_BREAKDOWN_N; i++) {
    double v = pf_breakdown_get(b, i);
    cJSON_AddNumberToObject(o, pf_breakdown_name(i), round ? round(v) : v);
  }
  return o;
}

int pf_breakdown_json_read(const cJSON *parent, int nterms, pf_breakdown *b) {
  const cJSON *o = cJSON_GetObjectItemCaseSensitive(parent, "breakdown_s");
  int bad = 0;
  for (int i = 0; i < nterms && i < PF_BREAKDOWN_N; i++) {
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(o, pf_breakdown_name(i));
    if (cJSON_IsNumber(x)) *(double *)((char *)b + breakdown_terms[i].off) = x->valuedouble;
    else bad = 1;
  }
  return bad ? -1 : 0;
}
