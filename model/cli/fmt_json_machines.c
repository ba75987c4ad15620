/* fmt_json_machines.c - the JSON format's machine documents (--format json):
 * `machines` ({"schema_version", "machines": [the short object per machine]})
 * and `machines show ID` (the full object: device, fabric, topology, power,
 * billing, and with --calibration the measured machine under "calibrated").
 * A file of its own by document kind beside fmt_json.c (formats.h). */
#include "formats.h"

#include "core/core.h"
#include "machine/machine.h"
#include "report/report.h"

#include <cjson/cJSON.h>
#include <stdio.h>

#define GiB (1024.0 * 1024.0 * 1024.0)

/* A machine's object: the list's members, and with full every section of its file (caller frees). */
static cJSON *machine_json(const pf_machine *m, int full) {
  cJSON *j = cJSON_CreateObject();
  cJSON_AddStringToObject(j, "id", m->id);
  cJSON_AddStringToObject(j, "name", m->name);
  cJSON_AddStringToObject(j, "site", m->site);
  cJSON_AddNumberToObject(j, "nodes", m->nodes);
  cJSON_AddNumberToObject(j, "gpus_per_node", m->gpus_per_node);
  cJSON_AddNumberToObject(j, "gpus", (double)m->nodes * m->gpus_per_node);
  cJSON_AddStringToObject(j, "device", m->dev.id);
  cJSON_AddStringToObject(j, "network", pf_topology_kind_name(m->net.kind));
  cJSON_AddNumberToObject(j, "nics_per_node", m->nics_per_node);
  cJSON_AddNumberToObject(j, "nic_Gbps", m->nic_bw_Bps * 8 / 1e9);
  if (!full) return j;
  cJSON *d = cJSON_AddObjectToObject(j, "device_spec");
  cJSON_AddStringToObject(d, "name", m->dev.name);
  cJSON_AddNumberToObject(d, "memory_GiB", m->dev.memory_B / GiB);
  cJSON_AddNumberToObject(d, "memory_bw_TBps", m->dev.memory_bw_Bps / 1e12);
  cJSON *pk = cJSON_AddObjectToObject(d, "peak_TFLOPS");
  for (int p = 0; p < PF_NPREC; p++)
    if (m->dev.peak_flops[p] > 0) cJSON_AddNumberToObject(pk, pf_precision_name((pf_precision)p), m->dev.peak_flops[p] / 1e12);
  cJSON_AddNumberToObject(d, "gemm_eff", m->dev.gemm_eff);
  cJSON_AddNumberToObject(d, "hbm_eff", m->dev.hbm_eff);
  cJSON_AddNumberToObject(d, "tdp_W", m->dev.tdp_W);
  cJSON_AddNumberToObject(d, "dies_per_package", m->dev.dies_per_package);
  cJSON_AddBoolToObject(d, "calibrated", m->dev.calibrated);
  cJSON *f = cJSON_AddObjectToObject(j, "fabric");
  cJSON_AddStringToObject(f, "kind", pf_fabric_kind_name(m->fabric));
  cJSON_AddNumberToObject(f, "bw_GBps", m->fabric_bw_Bps / 1e9);
  cJSON_AddNumberToObject(f, "pair_bw_GBps", m->fabric_pair_bw_Bps / 1e9);
  cJSON *n = cJSON_AddObjectToObject(j, "topology");
  char buf[256];
  cJSON_AddStringToObject(n, "kind", pf_topology_kind_name(m->net.kind));
  cJSON_AddStringToObject(n, "tech", m->net.tech);
  cJSON_AddStringToObject(n, "parameters", pf_fmt_net_params(m, buf, sizeof buf));
  cJSON *p = cJSON_AddObjectToObject(j, "power");
  cJSON_AddNumberToObject(p, "node_base_W", m->node_base_W);
  cJSON_AddNumberToObject(p, "pue", m->pue);
  cJSON *b = cJSON_AddObjectToObject(j, "billing");
  cJSON_AddStringToObject(b, "unit", m->billing_unit);
  cJSON_AddNumberToObject(b, "per_node_hour", m->billing_per_node_hour);
  cJSON_AddStringToObject(b, "note", m->billing_note);
  cJSON_AddStringToObject(j, "file", m->path);
  return j;
}

void pf_fmt_json_machines(FILE *f, const pf_machine *ms, int n) {
  cJSON *arr = cJSON_CreateArray();
  for (int i = 0; i < n; i++) cJSON_AddItemToArray(arr, machine_json(&ms[i], 0));
  cJSON *root = cJSON_CreateObject();
  cJSON_AddNumberToObject(root, "schema_version", PF_SCHEMA_VERSION);
  cJSON_AddItemToObject(root, "machines", arr);
  pf_report_json_print(f, root);
}

void pf_fmt_json_machine(FILE *f, const pf_machine *m, const pf_machine *measured) {
  cJSON *j = machine_json(m, 1);
  if (measured) cJSON_AddItemToObject(j, "calibrated", machine_json(measured, 1));
  pf_report_json_print(f, j);
}
