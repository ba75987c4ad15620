/* machine.c - load machine descriptions from libconfig files.
 *
 * The format is in docs/machine-format.md.  Every quantity is parsed with
 * pf_units_parse(); every error names the file, the line libconfig reports
 * for the setting, and the setting's path (e.g. "node.nics.rate").  The node's
 * device is read from its own file (device.c); files are found by id in the
 * machines folder (catalog.c).  In the network group, the kind that
 * network.topology names (the table of network.c) reads and checks its own
 * keys (net_*.c); this file reads the keys every kind shares.
 *
 * Unknown keys (cfgread.c): every key the readers look up (lookup(), through
 * get_str, get_qty, get_num, ...) is recorded, found or not; after a file is
 * read, a setting that was never looked up is an unknown key (an error with a
 * "did you mean", or a warning with --lenient).  A key added to a reader is
 * thus known without a second list.
 *
 * Values are checked where they are read: finite (pf_units_parse refuses inf
 * and NaN), positive where zero is meaningless, within physical bounds (a
 * device below 3 kW, efficiencies at most 1), and across fields (a fabric that
 * exists for the device's vendor, NIC ports that fit the network's size).
 */
#include "hardware.h"

#include "catalog.h"
#include "cfgread.h"
#include "devpower.h"
#include "network.h"
#include "core/core.h"

#include <libconfig.h>
#include <stdio.h>
#include <string.h>

static const char *ccl_names[] = {"nccl", "rccl", "oneccl"};
const char *pf_ccl_lib_name(pf_ccl_lib l) { return (l >= 0 && l <= PF_CCL_ONECCL) ? ccl_names[l] : "?"; }

static const char *fabric_names[] = {"nvlink_switch", "nvlink_mesh", "infinity_fabric", "xe_link", "pcie", "none"};

const char *pf_fabric_kind_name(pf_fabric_kind k) {
  return (k >= 0 && k <= PF_FABRIC_NONE) ? fabric_names[k] : "?";
}

/* A fabric exists for the device's vendor: NVLink joins NVIDIA devices,
 * Infinity Fabric AMD's, Xe Link Intel's; PCIe joins any; several devices
 * need one. */
static int fabric_fits_device(const reader *r, const pf_machine *m, pf_fabric_kind k) {
  const char *need = k == PF_FABRIC_NVLINK_SWITCH || k == PF_FABRIC_NVLINK_MESH ? "nvidia"
                     : k == PF_FABRIC_INFINITY_FABRIC                         ? "amd"
                     : k == PF_FABRIC_XE_LINK                                 ? "intel"
                                                                              : NULL;
  if (k == PF_FABRIC_NONE)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.node.fabric.kind: \"none\" with %d devices per node; devices "
                        "joined by PCIe only are \"pcie\"", r->file, line_of(lookup(r, "node.fabric.kind")),
                        m->gpus_per_node);
  if (need && strcmp(m->dev.vendor, need) != 0)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.node.fabric.kind: %s joins %s devices, not %s's %s (vendor \"%s\")",
                        r->file, line_of(lookup(r, "node.fabric.kind")), pf_fabric_kind_name(k), need, m->dev.id,
                        m->dev.name, m->dev.vendor);
  return 0;
}

/* ccl.table: the library's measured ring (hardware.h).  Every figure is optional but the source. */
static int read_ccl_table(const reader *r, pf_machine *m) {
  pf_ccl_table *c = &m->ccl_table;
  if (!lookup(r, "ccl.table")) return 0;
  static const char *keys[] = {"ccl.table.net_step_ll", "ccl.table.net_step_ll128", "ccl.table.net_step_simple",
                               "ccl.table.net_floor_ll", "ccl.table.net_floor_ll128", "ccl.table.net_floor_simple"};
  c->present = 1;
  TRY(get_str(r, "ccl.table.source", c->source, sizeof c->source, 1));
  TRY(get_str(r, "ccl.table.plugin", c->plugin, sizeof c->plugin, 0));
  c->base_s = c->fabric_step_s = -1;
  TRY(get_qty_in(r, "ccl.table.base", PF_UNIT_TIME, &c->base_s, 0, 0, false, 1e-2, NULL));
  TRY(get_qty_in(r, "ccl.table.fabric_step", PF_UNIT_TIME, &c->fabric_step_s, 0, 0, false, 1e-2, NULL));
  for (int i = 0; i < 6; i++) {
    double *dst = i < 3 ? &c->net_step_s[i] : &c->net_floor_s[i - 3];
    *dst = i < 3 ? -1 : 0;
    TRY(get_qty_in(r, keys[i], PF_UNIT_TIME, dst, 0, 0, false, 1e-2, NULL));
  }
  TRY(get_qty_in(r, "ccl.table.ll_net_bandwidth", PF_UNIT_BANDWIDTH, &c->ll_net_Bps, 0, 0, false, 1e15, NULL));
  if (!c->source[0])
    return pf_error_set(PF_EPARSE, "%s:%d: machine.ccl.table.source: a measured table needs its source", r->file,
                        line_of(lookup(r, "ccl.table")));
  return 0;
}

/* The communication keys (docs/machine-format.md): NVLink bridges and NVLS of
 * the fabric, NIC affinity, in-network reduction of the network, the
 * collective library and its measured efficiencies (a network kind's routing
 * and taper keys are its own: net_*.c). */
static int read_comm_keys(const reader *r, pf_machine *m) {
  const char *path = r->file;
  if (m->gpus_per_node > PF_MAX_GPN)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.node.devices: at most %d per node", path,
                        line_of(lookup(r, "node.devices")), PF_MAX_GPN);
  TRY(get_qty(r, "node.fabric.bridges.bandwidth", PF_UNIT_BANDWIDTH, &m->fabric_bridge_bw_Bps, 0));
  m->fabric_bridge_group = m->fabric_bridge_bw_Bps > 0 ? 2 : 0;
  TRY(get_int(r, "node.fabric.bridges.group", &m->fabric_bridge_group, 0, 2));
  if (m->fabric_bridge_bw_Bps > 0 && m->gpus_per_node % m->fabric_bridge_group != 0)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.node.fabric.bridges.group: %d does not divide %d devices", path,
                        line_of(lookup(r, "node.fabric.bridges")), m->fabric_bridge_group, m->gpus_per_node);
  TRY(get_bool(r, "node.fabric.nvls", &m->nvls));
  TRY(get_num_b(r, "node.fabric.nvls_efficiency", PF_PLAUS_EFFICIENCY, &m->nvls_eff, 0));
  if (m->nvls && m->fabric != PF_FABRIC_NVLINK_SWITCH)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.node.fabric.nvls: needs kind = \"nvlink_switch\"", path,
                        line_of(lookup(r, "node.fabric.nvls")));
  int nics = m->nics_per_node > 0 ? m->nics_per_node : 1, gpn = m->gpus_per_node;
  for (int l = 0; l < gpn; l++) m->nic_affinity[l] = l * nics / gpn;
  const config_setting_t *aff = lookup(r, "node.nics.affinity");
  if (aff) {
    if (config_setting_length(aff) != gpn)
      return pf_error_set(PF_EPARSE, "%s:%d: machine.node.nics.affinity: one NIC index per device (%d expected)", path,
                          line_of(aff), gpn);
    for (int l = 0; l < gpn; l++) {
      const config_setting_t *e = config_setting_get_elem(aff, (unsigned)l);
      if (config_setting_type(e) != CONFIG_TYPE_INT || config_setting_get_int(e) < 0 ||
          config_setting_get_int(e) >= nics)
        return pf_error_set(PF_EPARSE, "%s:%d: machine.node.nics.affinity[%d]: a NIC index from 0 to %d", path,
                            line_of(aff), l, nics - 1);
      m->nic_affinity[l] = config_setting_get_int(e);
    }
  }
  TRY(get_bool(r, "network.in_network_reduction", &m->net.in_network_reduction));
  int lib = !strcmp(m->dev.vendor, "amd") ? PF_CCL_RCCL : !strcmp(m->dev.vendor, "intel") ? PF_CCL_ONECCL : PF_CCL_NCCL;
  TRY(get_enum(r, "ccl.library", ccl_names, 3, &lib, 0));
  m->ccl = (pf_ccl_lib)lib;
  TRY(get_str(r, "ccl.version", m->ccl_version, sizeof m->ccl_version, 0));
  bool pxn = false;
  int got = get_bool(r, "ccl.pxn", &pxn);
  if (got < 0) return got;
  m->ccl_pxn = got ? (int)pxn : -1;
  const config_setting_t *eff = lookup(r, "ccl.efficiency");
  if (eff) {
    int cnt = config_setting_length(eff);
    if (!config_setting_is_list(eff) || cnt > PF_CCL_MAX_EFF)
      return pf_error_set(PF_EPARSE, "%s:%d: machine.ccl.efficiency: a list of at most %d groups", path, line_of(eff),
                          PF_CCL_MAX_EFF);
    for (int i = 0; i < cnt; i++) {
      char key[64];
      pf_ccl_eff *e = &m->ccl_eff[i];
      e->min_ranks = 1;
      snprintf(key, sizeof key, "ccl.efficiency.[%d].min_ranks", i);
      TRY(get_int(r, key, &e->min_ranks, 0, 1));
      snprintf(key, sizeof key, "ccl.efficiency.[%d].min_bytes", i);
      TRY(get_qty(r, key, PF_UNIT_BYTES, &e->min_bytes, 0));
      snprintf(key, sizeof key, "ccl.efficiency.[%d].factor", i);
      TRY(get_num(r, key, &e->factor, 1));
      if (!(e->factor > 0 && e->factor <= 1))
        return pf_error_set(PF_EPARSE, "%s:%d: machine.%s: must be in (0, 1]", path, line_of(lookup(r, key)), key);
      snprintf(key, sizeof key, "ccl.efficiency.[%d].source", i);
      TRY(get_str(r, key, e->source, sizeof e->source, 1));
      if (!e->source[0])
        return pf_error_set(PF_EPARSE, "%s:%d: machine.%s: a measured efficiency needs its source", path,
                            line_of(lookup(r, key)), key);
    }
    m->ccl_neff = cnt;
  }
  return read_ccl_table(r, m);
}


/* Identity, partition size, the node's device (its own file, then this
 * machine's overrides) and host. */
static int read_node(const reader *r, pf_machine *m) {
  TRY(get_str(r, "id", m->id, sizeof m->id, 1));
  TRY(get_str(r, "name", m->name, sizeof m->name, 1));
  TRY(get_str(r, "site", m->site, sizeof m->site, 0));
  TRY(get_int_in(r, "nodes", &m->nodes, 1, 1, 1000000));
  char dev[PF_ID_MAX];
  TRY(get_str(r, "node.device", dev, sizeof dev, 1));
  int rc = pf_device_load(dev, &m->dev);
  if (rc < 0) {
    char why[1024];
    snprintf(why, sizeof why, "%s", pf_error_detail());
    return pf_error_set(rc, "%s:%d: machine.node.device: %s", r->file, line_of(lookup(r, "node.device")), why);
  }
  TRY(pf_read_device_override(r, &m->dev));
  TRY(get_int_in(r, "node.devices", &m->gpus_per_node, 1, 1, 1024));
  TRY(get_str(r, "node.cpu.model", m->cpu_model, sizeof m->cpu_model, 0));
  m->cpu_sockets = 1;
  TRY(get_int_in(r, "node.cpu.sockets", &m->cpu_sockets, 0, 0, 64));
  TRY(get_int_in(r, "node.cpu.cores", &m->cpu_cores, 0, 0, 4096));
  TRY(get_qty_in(r, "node.cpu.tdp", PF_UNIT_POWER, &m->cpu_tdp_W, 0, 0, false, 3000, "per socket"));
  TRY(get_qty(r, "node.host_memory", PF_UNIT_BYTES, &m->host_memory_B, 0));
  return 0;
}

/* The intra-node fabric, the host link and the NICs. */
static int read_fabric_nics(const reader *r, pf_machine *m) {
  int k = PF_FABRIC_NONE;
  TRY(get_enum(r, "node.fabric.kind", fabric_names, PF_FABRIC_NONE + 1, &k, m->gpus_per_node > 1));
  m->fabric = (pf_fabric_kind)k;
  /* read on one-device nodes too (a GH200 node's NVLink-C2C is written down there), used on several */
  TRY(get_qty(r, "node.fabric.bandwidth", PF_UNIT_BANDWIDTH, &m->fabric_bw_Bps, m->gpus_per_node > 1));
  m->fabric_pair_bw_Bps = m->fabric_bw_Bps;
  bool full = true;
  TRY(get_bool(r, "node.fabric.full_mesh", &full));
  m->fabric_sparse = !full;
  TRY(get_qty(r, "node.fabric.pair_bandwidth", PF_UNIT_BANDWIDTH, &m->fabric_pair_bw_Bps, 0));
  m->fabric_latency_s = 2e-6;
  TRY(get_qty_in(r, "node.fabric.latency", PF_UNIT_TIME, &m->fabric_latency_s, 0, 0, false, 1e-3, NULL));
  if (m->gpus_per_node > 1) {
    TRY(check_range(r, "node.fabric.bandwidth", m->fabric_bw_Bps, 0, true, 1e16, "devices of a node must talk"));
    if (m->fabric_pair_bw_Bps > m->fabric_bw_Bps * 1.0001)
      return pf_error_set(PF_EPARSE, "%s:%d: machine.node.fabric.pair_bandwidth: above the per-device bandwidth "
                          "(a pair of devices shares a device's links)", r->file,
                          line_of(lookup(r, "node.fabric.pair_bandwidth")));
    TRY(fabric_fits_device(r, m, (pf_fabric_kind)k));
  }
  if (m->gpus_per_node == 1) { /* nothing to model between devices */
    m->fabric_bw_Bps = m->fabric_pair_bw_Bps = 0;
    m->fabric_latency_s = 0;
  }
  TRY(get_str(r, "node.host_link.kind", m->host_link, sizeof m->host_link, 0));
  TRY(get_qty(r, "node.host_link.bandwidth", PF_UNIT_BANDWIDTH, &m->host_link_bw_Bps, 0));
  TRY(get_int_in(r, "node.nics.count", &m->nics_per_node, 1, 0, PF_MAX_GPN));
  if (m->nics_per_node == 0 && m->nodes > 1)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.node.nics.count: 0 NICs on a machine of %d nodes: the nodes "
                        "could not talk to each other", r->file, line_of(lookup(r, "node.nics.count")), m->nodes);
  TRY(get_qty(r, "node.nics.rate", PF_UNIT_BANDWIDTH, &m->nic_bw_Bps, m->nics_per_node > 0));
  const pf_plaus *link = pf_plaus_get(PF_PLAUS_LINK_RATE);
  if (m->nics_per_node > 0)
    TRY(check_range(r, "node.nics.rate", m->nic_bw_Bps, link->lo, false, link->hi, link->why));
  return 0;
}

/* network.topology names a kind of the table (network.c); the keys every
 * kind shares, then the kind's own, read and checked by its file (net_*.c). */
static int read_network(const reader *r, pf_machine *m) {
  pf_network *n = &m->net;
  const char *names[PF_NET_KINDS_MAX];
  int nk = pf_net_kind_count(), k = 0;
  for (int i = 0; i < nk; i++) names[i] = pf_net_kind_at(i)->name;
  TRY(get_enum(r, "network.topology", names, nk, &k, 1));
  n->kind = pf_net_kind_at(k);
  TRY(get_str(r, "network.tech", n->tech, sizeof n->tech, 0));
  n->link_bw_Bps = m->nic_bw_Bps;
  TRY(get_qty(r, "network.link_rate", PF_UNIT_BANDWIDTH, &n->link_bw_Bps, 0));
  const pf_plaus *link = pf_plaus_get(PF_PLAUS_LINK_RATE);
  if (m->nodes > 1) TRY(check_range(r, "network.link_rate", n->link_bw_Bps, link->lo, false, link->hi, link->why));
  n->switch_latency_s = 150e-9;
  TRY(get_qty_in(r, "network.switch_latency", PF_UNIT_TIME, &n->switch_latency_s, 0, 0, false, 1e-3, NULL));
  n->nic_latency_s = 2e-6;
  TRY(get_qty_in(r, "network.nic_latency", PF_UNIT_TIME, &n->nic_latency_s, 0, 0, false, 1e-3, NULL));
  if (n->kind->read) TRY(n->kind->read(r, n));
  if (n->kind->check) TRY(n->kind->check(r, m));
  return 0;
}

/* Power, billing, the partition's job limits and storage, provenance. */
static int read_power_billing(const reader *r, pf_machine *m) {
  m->node_base_W = 300;
  TRY(get_qty_in(r, "power.node_base", PF_UNIT_POWER, &m->node_base_W, 1, 0, false, 1e5, "a node below 100 kW"));
  m->pue = 1.1;
  TRY(get_num(r, "power.pue", &m->pue, 1));
  if (m->pue < 1.0 || m->pue > 3.0)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.power.pue: must be in [1, 3]", r->file,
                        line_of(lookup(r, "power.pue")));
  TRY(get_qty_in(r, "power.switch", PF_UNIT_POWER, &m->switch_W, 0, 0, false, 1e5, "a switch below 100 kW"));
  snprintf(m->billing_unit, sizeof m->billing_unit, "node-hour");
  m->billing_per_node_hour = 1.0;
  TRY(get_str(r, "billing.unit", m->billing_unit, sizeof m->billing_unit, 0));
  TRY(get_num_in(r, "billing.per_node_hour", &m->billing_per_node_hour, 0, 0, true, 1e6,
                 "units billed per node-hour"));
  TRY(get_str(r, "billing.note", m->billing_note, sizeof m->billing_note, 0));
  char partial[16] = "node";
  TRY(get_str(r, "billing.partial", partial, sizeof partial, 0));
  if (strcmp(partial, "node") != 0 && strcmp(partial, "device") != 0)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.billing.partial: \"%s\": valid: node (whole nodes are billed), "
                        "device (a partial node is billed per device)", r->file,
                        line_of(lookup(r, "billing.partial")), partial);
  m->billing_per_device = strcmp(partial, "device") == 0;
  TRY(get_qty_in(r, "limits.walltime", PF_UNIT_TIME, &m->walltime_limit_s, 0, 0, true, 3.2e7,
                 "a job limit below a year"));
  TRY(get_int_in(r, "limits.max_nodes", &m->max_job_nodes, 0, 1, 1000000));
  TRY(get_str(r, "limits.note", m->limits_note, sizeof m->limits_note, 0));
  TRY(get_qty_in(r, "storage.write_bandwidth", PF_UNIT_BANDWIDTH, &m->storage_bw_Bps, 0, 0, true, 1e16, NULL));
  return get_provenance(r, m->provenance, sizeof m->provenance);
}

static int read_machine(config_t *cfg, const char *path, pf_machine *m) {
  memset(m, 0, sizeof *m);
  snprintf(m->path, sizeof m->path, "%s", path);
  reader r = {path, config_lookup(cfg, "machine"), "machine"};
  if (!r.root)
    return pf_error_set(PF_EPARSE, "%s:1: missing top-level group \"machine = { ... };\"", path);
  TRY(read_node(&r, m));
  TRY(read_fabric_nics(&r, m));
  TRY(read_comm_keys(&r, m));
  TRY(read_network(&r, m));
  return read_power_billing(&r, m);
}

static int read_machine_any(config_t *cfg, const char *path, void *out) { return read_machine(cfg, path, out); }

int pf_machine_load(const char *id_or_path, pf_machine *out) {
  return pf_catalog_load(id_or_path, "machine", read_machine_any, out, out->id);
}
