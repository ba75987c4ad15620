/* cmd_machines.c - `preflight machines [show ID]`. */
#include "cli.h"
#include "options.h"

#include "machine/machine.h"
#include "core/core.h"
#include "power/power.h"
#include "report/report.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define GiB (1024.0 * 1024.0 * 1024.0)

static const pf_opt machine_opts[] = {
    {"calibration", "FILE.json", "show measured rates from a calibration file beside the datasheet",
     .type = PF_OPT_TEXT},
    {"like", "ID", "with `new`: start from a copy of this machine", .type = PF_OPT_TEXT},
    PF_OPT_END};

/* The network kind's parameters in one line (its describe function, machine/network.h). */
static const char *topo_params(const pf_machine *m, char *buf, size_t n) {
  const pf_net_kind *k = m->net.kind;
  if (k) k->describe(&m->net, buf, n);
  else snprintf(buf, n, "?");
  return buf;
}

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
  cJSON_AddStringToObject(n, "parameters", topo_params(m, buf, sizeof buf));
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

static const pf_opt *const tables[] = {machine_opts, NULL};

static const pf_cli_spec spec = {
    "machines",
    "usage: preflight machines [--format table|json|csv]\n       preflight machines show ID [--calibration FILE.json]\n"
    "       preflight machines new ID [--like EXISTING] [-o FILE.cfg]\n\n"
    "Machines are read from $PREFLIGHT_MACHINES (default: the source tree's machines/, with devices/ in it);\n"
    "any command also takes --machine PATH.cfg.  `machines new` writes a file to start from.",
    tables, false, 2, false,
    "  preflight machines\n  preflight machines --format json\n  preflight machines show lumi-g\n"
    "  preflight machines new my-cluster --like mn5-acc -o my-cluster.cfg\n"};

/* `machines show ID` as text in the asked format (caller frees). */
static int show(const char *id, const pf_cli *cli, char **text) {
  *text = NULL;
  pf_machine m, measured;
  int rc = pf_machine_load(id, &m);
  if (rc < 0 || (rc = pf_power_check(&m.dev)) < 0) return rc;
  const char *cal = pf_opts_get(&cli->v, "calibration");
  measured = m;
  if (cal) {
    pf_calibration c;
    if ((rc = pf_calibration_load(cal, &c)) < 0 || (rc = pf_calibration_apply(&c, &measured)) < 0) return rc;
  }
  if (cli->fmt == PF_FMT_JSON) {
    cJSON *j = machine_json(&m, 1);
    if (cal) cJSON_AddItemToObject(j, "calibrated", machine_json(&measured, 1));
    *text = pf_report_json_text(j);
    return *text ? 0 : pf_error_set(PF_ENOMEM, "out of memory");
  }
  if (cli->fmt == PF_FMT_CSV) return pf_error_set(PF_EINVAL, "machines show: --format csv: valid: table, json");
  size_t len;
  FILE *f = open_memstream(text, &len);
  if (!f) return pf_error_set(PF_ENOMEM, "out of memory");
  char buf[256];
  fprintf(f, "%s: %s (%s)\n", m.id, m.name, m.site);
  fprintf(f, "  nodes            %d x %d %s = %ld devices\n", m.nodes, m.gpus_per_node, m.dev.id,
          (long)m.nodes * m.gpus_per_node);
  fprintf(f, "  device           %s, %.0f GiB at %.2f TB/s, %d per package\n", m.dev.name, m.dev.memory_B / GiB,
          m.dev.memory_bw_Bps / 1e12, m.dev.dies_per_package);
  fprintf(f, "  peak (dense)    ");
  for (int p = 0; p < PF_NPREC; p++)
    if (m.dev.peak_flops[p] > 0) fprintf(f, " %s %.1f", pf_precision_name((pf_precision)p), m.dev.peak_flops[p] / 1e12);
  fprintf(f, " TFLOP/s\n");
  fprintf(f, "  cpu              %d x %s, %d cores each\n", m.cpu_sockets, m.cpu_model, m.cpu_cores);
  fprintf(f, "  fabric           %s, %.0f GB/s per GPU, %.0f GB/s per pair (per direction)\n",
          pf_fabric_kind_name(m.fabric), m.fabric_bw_Bps / 1e9, m.fabric_pair_bw_Bps / 1e9);
  fprintf(f, "  nics             %d x %.0f Gb/s\n", m.nics_per_node, m.nic_bw_Bps * 8 / 1e9);
  fprintf(f, "  network          %s, %s (%s)\n", pf_topology_kind_name(m.net.kind), topo_params(&m, buf, sizeof buf),
          m.net.tech);
  fprintf(f, "  power            node base %.0f W, device TDP %.0f W, PUE %.2f\n", m.node_base_W, m.dev.tdp_W, m.pue);
  fprintf(f, "  billing          %s, %.4g per node-hour%s%s\n", m.billing_unit, m.billing_per_node_hour,
          m.billing_note[0] ? "; " : "", m.billing_note);
  char cwd[PF_PATH_MAX];
  const char *shown = m.path;
  if (getcwd(cwd, sizeof cwd)) { /* relative to the working directory when below it */
    size_t n = strlen(cwd);
    if (strncmp(m.path, cwd, n) == 0 && m.path[n] == '/') shown = m.path + n + 1;
  }
  fprintf(f, "  file             %s\n", shown);
  if (cal) {
    const pf_device *a = &m.dev, *b = &measured.dev;
    fprintf(f, "\n  %-26s %14s %14s\n", "calibration", "datasheet", "measured");
    fprintf(f, "  %-26s %14.3f %14.3f\n", "GEMM efficiency", a->gemm_eff, b->gemm_eff);
    fprintf(f, "  %-26s %14.1f %14.1f\n", "GEMM bf16 TFLOP/s (large)", a->gemm_eff * a->peak_flops[PF_BF16] / 1e12,
            b->gemm_eff * b->peak_flops[PF_BF16] / 1e12);
    fprintf(f, "  %-26s %14.3f %14.3f\n", "HBM efficiency", a->hbm_eff, b->hbm_eff);
    fprintf(f, "  %-26s %14.1f %14.1f\n", "HBM GB/s (achievable)", a->hbm_eff * a->memory_bw_Bps / 1e9,
            b->hbm_eff * b->memory_bw_Bps / 1e9);
    fprintf(f, "  %-26s %14.2f %14.2f\n", "kernel launch (us)", a->kernel_launch_s * 1e6, b->kernel_launch_s * 1e6);
    fprintf(f, "  %-26s %14.0f %14.0f\n", "idle power (W)", a->idle_W, b->idle_W);
    fprintf(f, "  %-26s %14.0f %14.0f\n", "max power (W)", a->tdp_W, b->tdp_W);
  }
  fclose(f);
  return 0;
}

/* The machine list as text in the asked format (caller frees). */
static int list(const pf_cli *cli, char **text) {
  char **ids;
  int n, rc;
  *text = NULL;
  if ((rc = pf_machine_list(&ids, &n)) < 0) return rc;
  size_t len;
  FILE *f = open_memstream(text, &len);
  if (!f) {
    pf_strlist_free(ids, n);
    return pf_error_set(PF_ENOMEM, "out of memory");
  }
  cJSON *arr = cJSON_CreateArray();
  pf_format fmt = cli->fmt;
  if (fmt == PF_FMT_TABLE)
    fprintf(f, "%-18s %-34s %6s %5s %-14s %-15s %s\n", "id", "name", "nodes", "GPUs", "device", "network", "NICs");
  if (fmt == PF_FMT_CSV) fprintf(f, "id,name,nodes,gpus_per_node,device,network,nics_per_node,nic_Gbps\n");
  for (int i = 0; i < n && rc == 0; i++) {
    pf_machine m;
    if ((rc = pf_machine_load(ids[i], &m)) < 0) break;
    if (fmt == PF_FMT_TABLE)
      fprintf(f, "%-18s %-34.34s %6d %5d %-14s %-15s %dx%.0fG\n", m.id, m.name, m.nodes, m.gpus_per_node, m.dev.id,
              pf_topology_kind_name(m.net.kind), m.nics_per_node, m.nic_bw_Bps * 8 / 1e9);
    else if (fmt == PF_FMT_CSV)
      fprintf(f, "%s,\"%s\",%d,%d,%s,%s,%d,%.0f\n", m.id, m.name, m.nodes, m.gpus_per_node, m.dev.id,
              pf_topology_kind_name(m.net.kind), m.nics_per_node, m.nic_bw_Bps * 8 / 1e9);
    else cJSON_AddItemToArray(arr, machine_json(&m, 0));
  }
  if (fmt == PF_FMT_JSON && rc == 0) {
    cJSON *root = cJSON_CreateObject();
    cJSON_AddNumberToObject(root, "schema_version", PF_SCHEMA_VERSION);
    cJSON_AddItemToObject(root, "machines", arr);
    pf_report_json_print(f, root);
  } else {
    cJSON_Delete(arr);
  }
  fclose(f);
  pf_strlist_free(ids, n);
  if (rc < 0) {
    free(*text);
    *text = NULL;
  }
  return rc;
}

int pf_cmd_machines(int argc, char **argv) {
  pf_cli cli;
  int rc = pf_cli_begin(&spec, argc, argv, &cli);
  if (rc != 0) return pf_cli_end(&cli, rc > 0 ? 0 : pf_cli_fail("machines", rc));
  const pf_optvals *v = &cli.v;
  char *text = NULL;
  const char *cmd = "machines";
  if (v->npositional >= 1 && strcmp(v->positional[0], "new") == 0) {
    cmd = "machines new";
    rc = pf_cli_machines_new(v, &text);
  } else if (pf_opts_get(v, "like")) {
    rc = pf_error_set(PF_EINVAL, "--like goes with `machines new ID`");
  } else if (v->npositional >= 1 && strcmp(v->positional[0], "show") == 0) {
    cmd = "machines show";
    if (v->npositional != 2) rc = pf_error_set(PF_EINVAL, "give one machine id: preflight machines show ID");
    else rc = show(v->positional[1], &cli, &text);
  } else if (v->npositional > 0) {
    rc = pf_error_set(PF_EINVAL, "unexpected argument \"%s\" (did you mean `machines show %s`?)", v->positional[0],
                      v->positional[0]);
  } else if (pf_opts_get(v, "calibration")) {
    rc = pf_error_set(PF_EINVAL, "--calibration goes with `machines show ID`");
  } else {
    rc = list(&cli, &text);
  }
  if (rc == 0) rc = pf_cli_emit(&cli, text);
  free(text);
  return pf_cli_end(&cli, rc < 0 ? pf_cli_fail(cmd, rc) : 0);
}
