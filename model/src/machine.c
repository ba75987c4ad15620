/* machine.c - load device and machine descriptions from libconfig files.
 *
 * The format is in docs/machine-format.md.  Every quantity is parsed with
 * pf_units_parse(); every error names the file, the line libconfig reports
 * for the setting, and the setting's path (e.g. "node.nics.rate").
 */
#include "preflight/machine.h"

#include "preflight/error.h"
#include "preflight/units.h"

#include <ctype.h>
#include <dirent.h>
#include <libconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#ifndef PF_SOURCE_MACHINES_DIR
#define PF_SOURCE_MACHINES_DIR "machines"
#endif

static const char *precision_names[PF_NPREC] = {"fp64", "fp32", "tf32", "fp16", "bf16", "fp8"};

const char *pf_precision_name(pf_precision p) {
  return (p >= 0 && p < PF_NPREC) ? precision_names[p] : "?";
}

int pf_precision_parse(const char *s, pf_precision *out) {
  for (int i = 0; i < PF_NPREC; i++)
    if (s && strcmp(s, precision_names[i]) == 0) { *out = (pf_precision)i; return 0; }
  return pf_error_set(PF_EINVAL, "unknown precision \"%s\"; valid: fp32, tf32, fp16, bf16, fp8, fp64",
                      s ? s : "");
}

double pf_precision_bytes(pf_precision p) {
  switch (p) {
  case PF_FP64: return 8.0;
  case PF_FP32: case PF_TF32: return 4.0;
  case PF_FP16: case PF_BF16: return 2.0;
  case PF_FP8: return 2.0; /* FP8 training keeps activations in bf16 between GEMMs (Transformer Engine) */
  case PF_NPREC: break;
  }
  return 2.0;
}

double pf_device_peak(const pf_device *d, pf_precision p) {
  if (p == PF_FP32) /* plain fp32 runs on the FMA units unless the device has fp32 matrix units */
    return d->peak_flops[PF_FP32] > 0 ? d->peak_flops[PF_FP32] : d->vector_flops[PF_FP32];
  return d->peak_flops[p];
}

static const char *fabric_names[] = {"nvlink_switch", "nvlink_mesh", "infinity_fabric", "xe_link", "pcie", "none"};
static const char *topology_names[] = {"fat_tree", "dragonfly", "dragonfly_plus", "torus", "single"};

const char *pf_fabric_kind_name(pf_fabric_kind k) {
  return (k >= 0 && k <= PF_FABRIC_NONE) ? fabric_names[k] : "?";
}
const char *pf_topology_kind_name(pf_topology_kind k) {
  return (k >= 0 && k <= PF_TOPO_SINGLE) ? topology_names[k] : "?";
}

const char *pf_machines_dir(void) {
  const char *e = getenv("PREFLIGHT_MACHINES");
  return (e && *e) ? e : PF_SOURCE_MACHINES_DIR;
}

/* ---- reading settings with precise errors ---- */

typedef struct {
  const char *file;
  const config_setting_t *root; /* "device" or "machine" group */
  const char *root_name;
} reader;

static int line_of(const config_setting_t *s) {
  int l = s ? config_setting_source_line(s) : 0;
  return l;
}

static const config_setting_t *lookup(const reader *r, const char *path) {
  return config_setting_lookup((config_setting_t *)r->root, path);
}

static int missing(const reader *r, const char *path) {
  return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: missing required setting", r->file, line_of(r->root),
                      r->root_name, path);
}

static int get_str(const reader *r, const char *path, char *dst, size_t n, int required) {
  const config_setting_t *s = lookup(r, path);
  if (!s) { if (required) return missing(r, path); return 0; }
  const char *v = config_setting_get_string(s);
  if (!v)
    return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: expected a string", r->file, line_of(s), r->root_name, path);
  snprintf(dst, n, "%s", v);
  return 1;
}

static int get_qty(const reader *r, const char *path, pf_unit_kind kind, double *dst, int required) {
  const config_setting_t *s = lookup(r, path);
  if (!s) { if (required) return missing(r, path); return 0; }
  const char *v = config_setting_get_string(s);
  if (!v)
    return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: expected a quoted quantity with unit, a %s", r->file,
                        line_of(s), r->root_name, path, pf_unit_kind_name(kind));
  if (pf_units_parse(v, kind, dst) < 0) {
    char why[512];
    snprintf(why, sizeof why, "%s", pf_error_detail());
    return pf_error_set(PF_EUNIT, "%s:%d: %s.%s: %s", r->file, line_of(s), r->root_name, path, why);
  }
  if (*dst < 0)
    return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: must not be negative", r->file, line_of(s), r->root_name, path);
  return 1;
}

static int get_num(const reader *r, const char *path, double *dst, int required) {
  const config_setting_t *s = lookup(r, path);
  if (!s) { if (required) return missing(r, path); return 0; }
  int t = config_setting_type(s);
  if (t == CONFIG_TYPE_FLOAT) *dst = config_setting_get_float(s);
  else if (t == CONFIG_TYPE_INT) *dst = config_setting_get_int(s);
  else if (t == CONFIG_TYPE_INT64) *dst = (double)config_setting_get_int64(s);
  else
    return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: expected a number", r->file, line_of(s), r->root_name, path);
  return 1;
}

static int get_int(const reader *r, const char *path, int *dst, int required, int min) {
  const config_setting_t *s = lookup(r, path);
  if (!s) { if (required) return missing(r, path); return 0; }
  if (config_setting_type(s) != CONFIG_TYPE_INT)
    return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: expected an integer", r->file, line_of(s), r->root_name, path);
  *dst = config_setting_get_int(s);
  if (*dst < min)
    return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: must be at least %d", r->file, line_of(s), r->root_name,
                        path, min);
  return 1;
}

static int get_bool(const reader *r, const char *path, bool *dst) {
  const config_setting_t *s = lookup(r, path);
  if (!s) return 0;
  if (config_setting_type(s) != CONFIG_TYPE_BOOL)
    return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: expected true or false", r->file, line_of(s), r->root_name, path);
  *dst = config_setting_get_bool(s);
  return 1;
}

static int get_enum(const reader *r, const char *path, const char *const *names, int n, int *dst, int required) {
  char v[64];
  int rc = get_str(r, path, v, sizeof v, required);
  if (rc <= 0) return rc;
  for (int i = 0; i < n; i++)
    if (strcmp(v, names[i]) == 0) { *dst = i; return 1; }
  char valid[256] = "";
  for (int i = 0; i < n; i++) {
    strncat(valid, names[i], sizeof valid - strlen(valid) - 1);
    if (i + 1 < n) strncat(valid, ", ", sizeof valid - strlen(valid) - 1);
  }
  return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: unknown value \"%s\"; valid: %s", r->file,
                      line_of(lookup(r, path)), r->root_name, path, v, valid);
}

#define TRY(x) do { int rc_ = (x); if (rc_ < 0) return rc_; } while (0)

/* Open and parse a libconfig file; on error, the detail names file:line. */
static int open_config(config_t *cfg, const char *path) {
  config_init(cfg);
  struct stat st;
  if (stat(path, &st) != 0) { config_destroy(cfg); return pf_error_set(PF_ENOENT, "%s: no such file", path); }
  if (config_read_file(cfg, path) != CONFIG_TRUE) {
    int code = config_error_type(cfg) == CONFIG_ERR_FILE_IO ? PF_EIO : PF_EPARSE;
    int rc = pf_error_set(code, "%s:%d: %s", config_error_file(cfg) ? config_error_file(cfg) : path,
                          config_error_line(cfg), config_error_text(cfg));
    config_destroy(cfg);
    return rc;
  }
  return 0;
}

static int is_path(const char *s) {
  size_t n = strlen(s);
  return strchr(s, '/') != NULL || (n > 4 && strcmp(s + n - 4, ".cfg") == 0);
}

static const char *base_name(const char *path, char *buf, size_t n) {
  const char *b = strrchr(path, '/');
  snprintf(buf, n, "%s", b ? b + 1 : path);
  char *dot = strrchr(buf, '.');
  if (dot && strcmp(dot, ".cfg") == 0) *dot = '\0';
  return buf;
}

static int list_cfg(const char *dir, char ***ids, int *n) {
  DIR *d = opendir(dir);
  *ids = NULL;
  *n = 0;
  if (!d) return pf_error_set(PF_ENOENT, "%s: cannot open machine directory (set PREFLIGHT_MACHINES)", dir);
  int cap = 0;
  struct dirent *e;
  while ((e = readdir(d)) != NULL) {
    size_t len = strlen(e->d_name);
    if (len <= 4 || strcmp(e->d_name + len - 4, ".cfg") != 0 || e->d_name[0] == '.') continue;
    if (*n == cap) {
      cap = cap ? 2 * cap : 32;
      char **grown = realloc(*ids, (size_t)cap * sizeof **ids);
      if (!grown) { closedir(d); pf_strlist_free(*ids, *n); return pf_error_set(PF_ENOMEM, "out of memory"); }
      *ids = grown;
    }
    (*ids)[*n] = strndup(e->d_name, len - 4);
    if (!(*ids)[*n]) { closedir(d); pf_strlist_free(*ids, *n); return pf_error_set(PF_ENOMEM, "out of memory"); }
    (*n)++;
  }
  closedir(d);
  for (int i = 1; i < *n; i++) /* insertion sort: tens of entries */
    for (int j = i; j > 0 && strcmp((*ids)[j - 1], (*ids)[j]) > 0; j--) {
      char *t = (*ids)[j]; (*ids)[j] = (*ids)[j - 1]; (*ids)[j - 1] = t;
    }
  return 0;
}

void pf_strlist_free(char **ids, int n) {
  for (int i = 0; i < n; i++) free(ids[i]);
  free(ids);
}

int pf_machine_list(char ***ids, int *n) { return list_cfg(pf_machines_dir(), ids, n); }

int pf_device_list(char ***ids, int *n) {
  char dir[PF_PATH_MAX];
  snprintf(dir, sizeof dir, "%s/devices", pf_machines_dir());
  return list_cfg(dir, ids, n);
}

/* "unknown machine 'x'; valid ids: a, b, c" */
static int unknown_id(const char *what, const char *id, int (*lister)(char ***, int *)) {
  char **ids; int n;
  char valid[4096] = "";
  if (lister(&ids, &n) == 0) {
    for (int i = 0; i < n; i++) {
      strncat(valid, ids[i], sizeof valid - strlen(valid) - 1);
      if (i + 1 < n) strncat(valid, ", ", sizeof valid - strlen(valid) - 1);
    }
    pf_strlist_free(ids, n);
  }
  return pf_error_set(PF_ENOENT, "unknown %s id \"%s\"; valid ids: %s", what, id, valid);
}

static int resolve(const char *id_or_path, const char *sub, char *path, size_t n) {
  if (is_path(id_or_path)) { snprintf(path, n, "%s", id_or_path); return 1; }
  for (const char *c = id_or_path; *c; c++)
    if (!(isalnum((unsigned char)*c) || *c == '-' || *c == '_' || *c == '.')) return 0;
  if (*id_or_path == '\0') return 0;
  snprintf(path, n, "%s%s/%s.cfg", pf_machines_dir(), sub, id_or_path);
  struct stat st;
  return stat(path, &st) == 0;
}

typedef int (*config_reader)(config_t *cfg, const char *path, void *out);

/* Resolve a device ("device") or machine ("machine") by id or path, parse the
 * file with `read`, and check that the id inside equals the file name when it
 * was named by id.  `id` points at the id field `read` fills in. */
static int load_config(const char *id_or_path, const char *what, config_reader read, void *out, const char *id) {
  int device = strcmp(what, "device") == 0;
  char path[PF_PATH_MAX];
  if (!resolve(id_or_path, device ? "/devices" : "", path, sizeof path))
    return unknown_id(what, id_or_path, device ? pf_device_list : pf_machine_list);
  config_t cfg;
  TRY(open_config(&cfg, path));
  int rc = read(&cfg, path, out);
  config_destroy(&cfg);
  if (rc == 0 && !is_path(id_or_path)) {
    char b[PF_PATH_MAX];
    if (strcmp(id, base_name(path, b, sizeof b)) != 0)
      return pf_error_set(PF_EPARSE, "%s: %s.id \"%s\" differs from the file name", path, what, id);
  }
  return rc;
}

static int read_device(config_t *cfg, const char *path, pf_device *d) {
  memset(d, 0, sizeof *d);
  reader r = {path, config_lookup(cfg, "device"), "device"};
  if (!r.root)
    return pf_error_set(PF_EPARSE, "%s:1: missing top-level group \"device = { ... };\"", path);
  TRY(get_str(&r, "id", d->id, sizeof d->id, 1));
  TRY(get_str(&r, "name", d->name, sizeof d->name, 1));
  TRY(get_str(&r, "vendor", d->vendor, sizeof d->vendor, 1));
  TRY(get_str(&r, "arch", d->arch, sizeof d->arch, 0));
  TRY(get_qty(&r, "memory", PF_UNIT_BYTES, &d->memory_B, 1));
  TRY(get_qty(&r, "memory_bw", PF_UNIT_BANDWIDTH, &d->memory_bw_Bps, 1));
  TRY(get_qty(&r, "l2", PF_UNIT_BYTES, &d->l2_B, 0));
  for (int p = 0; p < PF_NPREC; p++) {
    char key[32];
    snprintf(key, sizeof key, "peak.%s", precision_names[p]);
    TRY(get_qty(&r, key, PF_UNIT_FLOPS, &d->peak_flops[p], 0));
    snprintf(key, sizeof key, "vector.%s", precision_names[p]);
    TRY(get_qty(&r, key, PF_UNIT_FLOPS, &d->vector_flops[p], 0));
  }
  if (d->peak_flops[PF_FP16] <= 0 && d->peak_flops[PF_BF16] <= 0 && d->vector_flops[PF_FP32] <= 0)
    return pf_error_set(PF_EPARSE, "%s:%d: device.peak: needs at least fp16 or bf16 (or vector.fp32)", path,
                        line_of(r.root));
  d->gemm_eff = 0.8; d->gemm_half_dim = 128; d->hbm_eff = 0.85; d->kernel_launch_s = 5e-6;
  TRY(get_num(&r, "efficiency.gemm", &d->gemm_eff, 1));
  TRY(get_num(&r, "efficiency.gemm_half_dim", &d->gemm_half_dim, 0));
  TRY(get_num(&r, "efficiency.hbm", &d->hbm_eff, 1));
  if (d->gemm_eff <= 0 || d->gemm_eff > 1 || d->hbm_eff <= 0 || d->hbm_eff > 1.05)
    return pf_error_set(PF_EPARSE, "%s:%d: device.efficiency: gemm and hbm must be in (0, 1]", path,
                        line_of(lookup(&r, "efficiency")));
  TRY(get_qty(&r, "kernel_launch", PF_UNIT_TIME, &d->kernel_launch_s, 0));
  TRY(get_qty(&r, "power.tdp", PF_UNIT_POWER, &d->tdp_W, 1));
  TRY(get_qty(&r, "power.idle", PF_UNIT_POWER, &d->idle_W, 1));
  d->context_W = d->idle_W;
  TRY(get_qty(&r, "power.context", PF_UNIT_POWER, &d->context_W, 0));
  d->comm_W = 0.35 * d->tdp_W;
  TRY(get_qty(&r, "power.comm", PF_UNIT_POWER, &d->comm_W, 0));
  d->dies_per_package = 1;
  TRY(get_int(&r, "dies_per_package", &d->dies_per_package, 0, 1));
  if (d->idle_W > d->tdp_W)
    return pf_error_set(PF_EPARSE, "%s:%d: device.power: idle exceeds tdp", path, line_of(lookup(&r, "power")));
  return 0;
}

static int read_device_any(config_t *cfg, const char *path, void *out) { return read_device(cfg, path, out); }

int pf_device_load(const char *id_or_path, pf_device *out) {
  return load_config(id_or_path, "device", read_device_any, out, out->id);
}

static int read_machine(config_t *cfg, const char *path, pf_machine *m) {
  memset(m, 0, sizeof *m);
  snprintf(m->path, sizeof m->path, "%s", path);
  reader r = {path, config_lookup(cfg, "machine"), "machine"};
  if (!r.root)
    return pf_error_set(PF_EPARSE, "%s:1: missing top-level group \"machine = { ... };\"", path);
  TRY(get_str(&r, "id", m->id, sizeof m->id, 1));
  TRY(get_str(&r, "name", m->name, sizeof m->name, 1));
  TRY(get_str(&r, "site", m->site, sizeof m->site, 0));
  TRY(get_int(&r, "nodes", &m->nodes, 1, 1));
  char dev[PF_ID_MAX];
  TRY(get_str(&r, "node.device", dev, sizeof dev, 1));
  int rc = pf_device_load(dev, &m->dev);
  if (rc < 0) {
    char why[1024];
    snprintf(why, sizeof why, "%s", pf_error_detail());
    return pf_error_set(rc, "%s:%d: machine.node.device: %s", path, line_of(lookup(&r, "node.device")), why);
  }
  TRY(get_int(&r, "node.devices", &m->gpus_per_node, 1, 1));
  TRY(get_str(&r, "node.cpu.model", m->cpu_model, sizeof m->cpu_model, 0));
  m->cpu_sockets = 1;
  TRY(get_int(&r, "node.cpu.sockets", &m->cpu_sockets, 0, 0));
  TRY(get_int(&r, "node.cpu.cores", &m->cpu_cores, 0, 0));
  TRY(get_qty(&r, "node.cpu.tdp", PF_UNIT_POWER, &m->cpu_tdp_W, 0));
  TRY(get_qty(&r, "node.host_memory", PF_UNIT_BYTES, &m->host_memory_B, 0));
  int k = PF_FABRIC_NONE;
  TRY(get_enum(&r, "node.fabric.kind", fabric_names, PF_FABRIC_NONE + 1, &k, m->gpus_per_node > 1));
  m->fabric = (pf_fabric_kind)k;
  if (m->gpus_per_node > 1) {
    TRY(get_qty(&r, "node.fabric.bandwidth", PF_UNIT_BANDWIDTH, &m->fabric_bw_Bps, 1));
    m->fabric_pair_bw_Bps = m->fabric_bw_Bps;
    TRY(get_qty(&r, "node.fabric.pair_bandwidth", PF_UNIT_BANDWIDTH, &m->fabric_pair_bw_Bps, 0));
    m->fabric_latency_s = 2e-6;
    TRY(get_qty(&r, "node.fabric.latency", PF_UNIT_TIME, &m->fabric_latency_s, 0));
  }
  TRY(get_qty(&r, "node.host_link.bandwidth", PF_UNIT_BANDWIDTH, &m->host_link_bw_Bps, 0));
  TRY(get_int(&r, "node.nics.count", &m->nics_per_node, 1, 0));
  if (m->nics_per_node > 0) TRY(get_qty(&r, "node.nics.rate", PF_UNIT_BANDWIDTH, &m->nic_bw_Bps, 1));

  pf_network *n = &m->net;
  k = PF_TOPO_SINGLE;
  TRY(get_enum(&r, "network.topology", topology_names, PF_TOPO_SINGLE + 1, &k, 1));
  n->kind = (pf_topology_kind)k;
  TRY(get_str(&r, "network.tech", n->tech, sizeof n->tech, 0));
  n->link_bw_Bps = m->nic_bw_Bps;
  TRY(get_qty(&r, "network.link_rate", PF_UNIT_BANDWIDTH, &n->link_bw_Bps, 0));
  n->switch_latency_s = 150e-9;
  TRY(get_qty(&r, "network.switch_latency", PF_UNIT_TIME, &n->switch_latency_s, 0));
  n->nic_latency_s = 2e-6;
  TRY(get_qty(&r, "network.nic_latency", PF_UNIT_TIME, &n->nic_latency_s, 0));
  n->levels = 2; n->taper = 1.0;
  TRY(get_int(&r, "network.levels", &n->levels, 0, 1));
  TRY(get_int(&r, "network.endpoints_per_leaf", &n->endpoints_per_leaf, 0, 1));
  TRY(get_num(&r, "network.taper", &n->taper, 0));
  TRY(get_bool(&r, "network.rail_optimized", &n->rail_optimized));
  TRY(get_int(&r, "network.groups", &n->groups, 0, 1));
  TRY(get_int(&r, "network.switches_per_group", &n->switches_per_group, 0, 1));
  TRY(get_int(&r, "network.endpoints_per_switch", &n->endpoints_per_switch, 0, 1));
  TRY(get_int(&r, "network.leaves_per_group", &n->leaves_per_group, 0, 1));
  TRY(get_int(&r, "network.spines_per_group", &n->spines_per_group, 0, 1));
  TRY(get_qty(&r, "network.global_bandwidth", PF_UNIT_BANDWIDTH, &n->global_bw_per_group_Bps, 0));
  const config_setting_t *dims = lookup(&r, "network.dims");
  if (dims) {
    int cnt = config_setting_length(dims);
    if (cnt < 1 || cnt > 3)
      return pf_error_set(PF_EPARSE, "%s:%d: machine.network.dims: 1 to 3 integers", path, line_of(dims));
    for (int i = 0; i < cnt; i++) n->dims[i] = config_setting_get_int_elem(dims, i);
  }
  int ep = m->nodes * (m->nics_per_node > 0 ? m->nics_per_node : 1);
  const config_setting_t *net = lookup(&r, "network");
  switch (n->kind) {
  case PF_TOPO_FAT_TREE:
    if (n->endpoints_per_leaf <= 0) return missing(&r, "network.endpoints_per_leaf");
    if (n->taper <= 0 || n->taper > 1.0)
      return pf_error_set(PF_EPARSE, "%s:%d: machine.network.taper: must be in (0, 1]", path, line_of(net));
    break;
  case PF_TOPO_DRAGONFLY:
    if (n->groups <= 0) return missing(&r, "network.groups");
    if (n->switches_per_group <= 0) return missing(&r, "network.switches_per_group");
    if (n->endpoints_per_switch <= 0) return missing(&r, "network.endpoints_per_switch");
    if ((long)n->groups * n->switches_per_group * n->endpoints_per_switch < ep)
      return pf_error_set(PF_EPARSE, "%s:%d: machine.network: %d groups x %d switches x %d endpoints < %d NIC ports",
                          path, line_of(net), n->groups, n->switches_per_group, n->endpoints_per_switch, ep);
    if (n->global_bw_per_group_Bps <= 0) return missing(&r, "network.global_bandwidth");
    break;
  case PF_TOPO_DRAGONFLY_PLUS:
    if (n->groups <= 0) return missing(&r, "network.groups");
    if (n->leaves_per_group <= 0) return missing(&r, "network.leaves_per_group");
    if (n->spines_per_group <= 0) return missing(&r, "network.spines_per_group");
    if (n->endpoints_per_switch <= 0) return missing(&r, "network.endpoints_per_switch");
    if ((long)n->groups * n->leaves_per_group * n->endpoints_per_switch < ep)
      return pf_error_set(PF_EPARSE, "%s:%d: machine.network: %d groups x %d leaves x %d endpoints < %d NIC ports",
                          path, line_of(net), n->groups, n->leaves_per_group, n->endpoints_per_switch, ep);
    if (n->global_bw_per_group_Bps <= 0) return missing(&r, "network.global_bandwidth");
    break;
  case PF_TOPO_TORUS:
    if (n->dims[0] <= 0) return missing(&r, "network.dims");
    break;
  case PF_TOPO_SINGLE:
    break;
  }
  m->node_base_W = 300;
  TRY(get_qty(&r, "power.node_base", PF_UNIT_POWER, &m->node_base_W, 1));
  m->pue = 1.1;
  TRY(get_num(&r, "power.pue", &m->pue, 1));
  if (m->pue < 1.0 || m->pue > 3.0)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.power.pue: must be in [1, 3]", path, line_of(lookup(&r, "power.pue")));
  TRY(get_qty(&r, "power.switch", PF_UNIT_POWER, &m->switch_W, 0));
  snprintf(m->billing_unit, sizeof m->billing_unit, "node-hour");
  m->billing_per_node_hour = 1.0;
  TRY(get_str(&r, "billing.unit", m->billing_unit, sizeof m->billing_unit, 0));
  TRY(get_num(&r, "billing.per_node_hour", &m->billing_per_node_hour, 0));
  TRY(get_str(&r, "billing.note", m->billing_note, sizeof m->billing_note, 0));
  char partial[16] = "node";
  TRY(get_str(&r, "billing.partial", partial, sizeof partial, 0));
  if (strcmp(partial, "node") != 0 && strcmp(partial, "device") != 0)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.billing.partial: \"%s\": valid: node (whole nodes are billed), "
                        "device (a partial node is billed per device)", path, line_of(lookup(&r, "billing.partial")),
                        partial);
  m->billing_per_device = strcmp(partial, "device") == 0;
  TRY(get_qty(&r, "limits.walltime", PF_UNIT_TIME, &m->walltime_limit_s, 0));
  TRY(get_int(&r, "limits.max_nodes", &m->max_job_nodes, 0, 1));
  TRY(get_str(&r, "limits.note", m->limits_note, sizeof m->limits_note, 0));
  TRY(get_qty(&r, "storage.write_bandwidth", PF_UNIT_BANDWIDTH, &m->storage_bw_Bps, 0));
  const config_setting_t *prov = lookup(&r, "provenance");
  if (prov && config_setting_is_list(prov) && config_setting_length(prov) > 0) {
    const char *first = config_setting_get_string_elem(prov, 0);
    snprintf(m->provenance, sizeof m->provenance, "%s%s", first ? first : "",
             config_setting_length(prov) > 1 ? " (and more in the file)" : "");
  }
  return 0;
}

static int read_machine_any(config_t *cfg, const char *path, void *out) { return read_machine(cfg, path, out); }

int pf_machine_load(const char *id_or_path, pf_machine *out) {
  return load_config(id_or_path, "machine", read_machine_any, out, out->id);
}
