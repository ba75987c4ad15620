/* machine.c - load device and machine descriptions from libconfig files.
 *
 * The format is in docs/machine-format.md.  Every quantity is parsed with
 * pf_units_parse(); every error names the file, the line libconfig reports
 * for the setting, and the setting's path (e.g. "node.nics.rate").
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
#include "preflight/machine.h"

#include "cfgread.h"
#include "devpower.h"
#include "preflight/error.h"
#include "preflight/gemm.h"
#include "preflight/units.h"

#include <ctype.h>
#include <dirent.h>
#include <libconfig.h>
#include <math.h>
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

static const char *ccl_names[] = {"nccl", "rccl", "oneccl"};
const char *pf_ccl_lib_name(pf_ccl_lib l) { return (l >= 0 && l <= PF_CCL_ONECCL) ? ccl_names[l] : "?"; }

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

/* Resolve a device ("device") or machine ("machine") by id or path, parse the
 * file with `read`, and check that the id inside equals the file name when it
 * was named by id.  `id` points at the id field `read` fills in. */
static int load_config(const char *id_or_path, const char *what, pf_cfg_read_fn read, void *out, const char *id) {
  int device = strcmp(what, "device") == 0;
  char path[PF_PATH_MAX];
  if (!resolve(id_or_path, device ? "/devices" : "", path, sizeof path))
    return unknown_id(what, id_or_path, device ? pf_device_list : pf_machine_list);
  int rc = pf_cfg_read_file(path, what, read, out);
  if (rc == 0 && !is_path(id_or_path)) {
    char b[PF_PATH_MAX];
    if (strcmp(id, base_name(path, b, sizeof b)) != 0)
      return pf_error_set(PF_EPARSE, "%s: %s.id \"%s\" differs from the file name", path, what, id);
  }
  return rc;
}

/* Optional rate keys of the kernel model (docs/machine-format.md): units,
 * efficiency.gemm_fp8, efficiency.attention_fwd/_bwd, efficiency.conv; each a
 * fraction in (0, 1]. */
static int read_rate_keys(const reader *r, pf_device *d) {
  TRY(get_int(r, "units", &d->units, 0, 1));
  struct { const char *key; double *dst; } f[] = {
    {"efficiency.gemm_fp8", &d->gemm_eff_fp8}, {"efficiency.attention_fwd", &d->attn_eff_fwd},
    {"efficiency.attention_bwd", &d->attn_eff_bwd}, {"efficiency.conv", &d->conv_eff}};
  for (size_t i = 0; i < sizeof f / sizeof f[0]; i++) {
    int got = get_num(r, f[i].key, f[i].dst, 0);
    if (got < 0) return got;
    if (got && (*f[i].dst <= 0 || *f[i].dst > 1))
      return pf_error_set(PF_EPARSE, "%s:%d: device.%s: must be in (0, 1]", r->file, line_of(lookup(r, f[i].key)),
                          f[i].key);
  }
  if (d->gemm_half_dim <= 0)
    return pf_error_set(PF_EPARSE, "%s:%d: device.efficiency.gemm_half_dim: must be positive", r->file,
                        line_of(lookup(r, "efficiency.gemm_half_dim")));
  return 0;
}

/* gemm_table = { file = "tables/x.csv"; units = 132; peak = "989.4 TFLOPS";
 * reference_eff = 0.803; overhead = "22.4 us"; }: a measured GEMM table
 * (gemm.h).  file is relative to the device file; units, peak (dense 16-bit)
 * and reference_eff (large-GEMM efficiency) describe the part it was measured
 * on, so one table serves every part it transfers to (docs/model.md);
 * overhead is the per-call time its timings include (host dispatch and
 * launch), removed to get kernel rates. */
static int read_gemm_table(const reader *r, const char *path, pf_device *d) {
  if (!lookup(r, "gemm_table")) return 0;
  char file[PF_PATH_MAX], full[2 * PF_PATH_MAX + 2];
  double overhead = 0, ref = 0, peak = 0;
  int units = 0;
  TRY(get_str(r, "gemm_table.file", file, sizeof file, 1));
  TRY(get_qty(r, "gemm_table.overhead", PF_UNIT_TIME, &overhead, 0));
  TRY(get_qty(r, "gemm_table.peak", PF_UNIT_FLOPS, &peak, 1));
  TRY(get_int(r, "gemm_table.units", &units, 0, 1));
  TRY(get_num(r, "gemm_table.reference_eff", &ref, 1));
  if (ref <= 0 || ref > 1)
    return pf_error_set(PF_EPARSE, "%s:%d: device.gemm_table.reference_eff: must be in (0, 1]", path,
                        line_of(lookup(r, "gemm_table.reference_eff")));
  if (peak <= 0)
    return pf_error_set(PF_EPARSE, "%s:%d: device.gemm_table.peak: must be positive", path,
                        line_of(lookup(r, "gemm_table.peak")));
  const char *slash = strrchr(path, '/');
  if (file[0] == '/' || !slash) snprintf(full, sizeof full, "%s", file);
  else snprintf(full, sizeof full, "%.*s/%s", (int)(slash - path), path, file);
  char key[3 * PF_PATH_MAX];
  snprintf(key, sizeof key, "%s|%.17g|%d|%.17g|%.17g", full, overhead, units, ref, peak);
  const pf_gemm_table *t = pf_gemm_table_find(key);
  if (!t) {
    pf_gemm_sample *s;
    int n;
    int rc = pf_gemm_samples_read(full, &s, &n);
    if (rc < 0) {
      char why[1024];
      snprintf(why, sizeof why, "%s", pf_error_detail());
      return pf_error_set(rc, "%s:%d: device.gemm_table.file: %s", path, line_of(lookup(r, "gemm_table.file")), why);
    }
    double refs[PF_NPREC] = {0}, peaks[PF_NPREC] = {0};
    refs[PF_BF16] = ref;
    peaks[PF_BF16] = peaks[PF_FP16] = peak;
    pf_gemm_table *nt;
    rc = pf_gemm_table_build(full, s, n, overhead, peaks, units, refs, &nt);
    free(s);
    if (rc < 0) {
      char why[1024];
      snprintf(why, sizeof why, "%s", pf_error_detail());
      return pf_error_set(rc, "%s:%d: device.gemm_table: %s", path, line_of(lookup(r, "gemm_table")), why);
    }
    if (!(t = pf_gemm_table_intern(key, nt))) return PF_ENOMEM;
  }
  d->gemm_table = t;
  return 0;
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
  TRY(get_qty_in(&r, "memory", PF_UNIT_BYTES, &d->memory_B, 1, 0, true, 1e15, "device memory"));
  TRY(get_qty_in(&r, "memory_bw", PF_UNIT_BANDWIDTH, &d->memory_bw_Bps, 1, 0, true, 1e14, "device memory bandwidth"));
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
  d->gemm_eff = 0.8; d->gemm_half_dim = PF_GEMM_K_HALF; d->hbm_eff = 0.85; d->kernel_launch_s = 5e-6;
  d->conv_eff = 1.0;
  TRY(get_num(&r, "efficiency.gemm", &d->gemm_eff, 1));
  TRY(get_num_in(&r, "efficiency.gemm_half_dim", &d->gemm_half_dim, 0, 0, true, 1e6, NULL));
  TRY(get_num(&r, "efficiency.hbm", &d->hbm_eff, 1));
  if (d->gemm_eff <= 0 || d->gemm_eff > 1 || d->hbm_eff <= 0 || d->hbm_eff > 1.05)
    return pf_error_set(PF_EPARSE, "%s:%d: device.efficiency: gemm and hbm must be in (0, 1]", path,
                        line_of(lookup(&r, "efficiency")));
  TRY(read_rate_keys(&r, d));
  TRY(get_qty_in(&r, "kernel_launch", PF_UNIT_TIME, &d->kernel_launch_s, 0, 0, true, 1e-3, NULL));
  TRY(read_gemm_table(&r, path, d));
  /* a device below a few kW: the largest accelerator packages draw ~1.2 kW (B200) */
  TRY(get_qty_in(&r, "power.tdp", PF_UNIT_POWER, &d->tdp_W, 1, 0, true, 3000, "a device draws less than 3 kW"));
  TRY(get_qty(&r, "power.idle", PF_UNIT_POWER, &d->idle_W, 1));
  d->context_W = d->idle_W;
  TRY(get_qty(&r, "power.context", PF_UNIT_POWER, &d->context_W, 0));
  d->comm_W = 0.35 * d->tdp_W;
  TRY(get_qty(&r, "power.comm", PF_UNIT_POWER, &d->comm_W, 0));
  d->dies_per_package = 1;
  TRY(get_int_in(&r, "dies_per_package", &d->dies_per_package, 0, 1, 16));
  if (d->idle_W > d->tdp_W)
    return pf_error_set(PF_EPARSE, "%s:%d: device.power: idle exceeds tdp", path, line_of(lookup(&r, "power")));
  if (d->context_W > d->tdp_W || d->comm_W > d->tdp_W)
    return pf_error_set(PF_EPARSE, "%s:%d: device.power: %s exceeds tdp", path, line_of(lookup(&r, "power")),
                        d->context_W > d->tdp_W ? "context" : "comm");
  TRY(pf_read_power_model(&r, d));
  for (int p = 0; p < PF_NPREC; p++)
    if (d->vector_flops[p] > 0 && d->peak_flops[p] > 0 && d->vector_flops[p] > d->peak_flops[p] * 1.001)
      return pf_error_set(PF_EPARSE, "%s:%d: device.vector.%s: above peak.%s (the matrix units' rate bounds "
                          "every rate)", path, line_of(lookup(&r, "vector")), precision_names[p], precision_names[p]);
  TRY(get_provenance(&r, NULL, 0));
  return 0;
}

static int read_device_any(config_t *cfg, const char *path, void *out) { return read_device(cfg, path, out); }

int pf_device_load(const char *id_or_path, pf_device *out) {
  return load_config(id_or_path, "device", read_device_any, out, out->id);
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

/* A fat tree of L levels whose leaves have E down-ports and as many up (radix
 * 2E at taper 1, the usual split of a switch) holds E x (2E)^(L-1) endpoints:
 * 2 levels of radix-k switches k^2/2, 3 levels k^3/4 (Al-Fares et al., SIGCOMM
 * 2008, for k-ary fat trees). */
static int fat_tree_holds(const reader *r, const pf_network *n, int ports) {
  double cap = n->endpoints_per_leaf;
  for (int l = 1; l < n->levels; l++) cap *= 2.0 * n->endpoints_per_leaf;
  if (cap >= ports) return 0;
  return pf_error_set(PF_EPARSE, "%s:%d: machine.network: a %d-level fat tree with %d endpoints per leaf holds %.0f "
                      "NIC ports, fewer than the machine's %d; add a level (network.levels)", r->file,
                      line_of(lookup(r, "network.levels")), n->levels, n->endpoints_per_leaf, cap, ports);
}

/* The communication keys (docs/machine-format.md): NVLink bridges and NVLS of
 * the fabric, NIC affinity, routing and in-network reduction of the network,
 * the collective library and its measured efficiencies. */
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
  TRY(get_num(r, "node.fabric.nvls_efficiency", &m->nvls_eff, 0));
  if (m->nvls_eff < 0 || m->nvls_eff > 1)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.node.fabric.nvls_efficiency: must be in (0, 1]", path,
                        line_of(lookup(r, "node.fabric.nvls_efficiency")));
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
  pf_network *n = &m->net;
  n->core_taper = 1.0;
  TRY(get_num(r, "network.core_taper", &n->core_taper, 0));
  if (n->core_taper <= 0 || n->core_taper > 1.0)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.network.core_taper: must be in (0, 1]", path,
                        line_of(lookup(r, "network.core_taper")));
  static const char *routing_names[] = {"minimal", "adaptive"};
  int routing = 0;
  TRY(get_enum(r, "network.routing", routing_names, 2, &routing, 0));
  n->adaptive_routing = routing == 1;
  TRY(get_bool(r, "network.in_network_reduction", &n->in_network_reduction));
  int lib = !strcmp(m->dev.vendor, "amd") ? PF_CCL_RCCL : !strcmp(m->dev.vendor, "intel") ? PF_CCL_ONECCL : PF_CCL_NCCL;
  TRY(get_enum(r, "ccl.library", ccl_names, 3, &lib, 0));
  m->ccl = (pf_ccl_lib)lib;
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
  return 0;
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
  TRY(get_int_in(&r, "nodes", &m->nodes, 1, 1, 1000000));
  char dev[PF_ID_MAX];
  TRY(get_str(&r, "node.device", dev, sizeof dev, 1));
  int rc = pf_device_load(dev, &m->dev);
  if (rc < 0) {
    char why[1024];
    snprintf(why, sizeof why, "%s", pf_error_detail());
    return pf_error_set(rc, "%s:%d: machine.node.device: %s", path, line_of(lookup(&r, "node.device")), why);
  }
  TRY(pf_read_device_override(&r, &m->dev));
  TRY(get_int_in(&r, "node.devices", &m->gpus_per_node, 1, 1, 1024));
  TRY(get_str(&r, "node.cpu.model", m->cpu_model, sizeof m->cpu_model, 0));
  m->cpu_sockets = 1;
  TRY(get_int_in(&r, "node.cpu.sockets", &m->cpu_sockets, 0, 0, 64));
  TRY(get_int_in(&r, "node.cpu.cores", &m->cpu_cores, 0, 0, 4096));
  TRY(get_qty_in(&r, "node.cpu.tdp", PF_UNIT_POWER, &m->cpu_tdp_W, 0, 0, false, 3000, "per socket"));
  TRY(get_qty(&r, "node.host_memory", PF_UNIT_BYTES, &m->host_memory_B, 0));
  int k = PF_FABRIC_NONE;
  TRY(get_enum(&r, "node.fabric.kind", fabric_names, PF_FABRIC_NONE + 1, &k, m->gpus_per_node > 1));
  m->fabric = (pf_fabric_kind)k;
  /* read on one-device nodes too (a GH200 node's NVLink-C2C is written down there), used on several */
  TRY(get_qty(&r, "node.fabric.bandwidth", PF_UNIT_BANDWIDTH, &m->fabric_bw_Bps, m->gpus_per_node > 1));
  m->fabric_pair_bw_Bps = m->fabric_bw_Bps;
  TRY(get_qty(&r, "node.fabric.pair_bandwidth", PF_UNIT_BANDWIDTH, &m->fabric_pair_bw_Bps, 0));
  m->fabric_latency_s = 2e-6;
  TRY(get_qty_in(&r, "node.fabric.latency", PF_UNIT_TIME, &m->fabric_latency_s, 0, 0, false, 1e-3, NULL));
  if (m->gpus_per_node > 1) {
    TRY(check_range(&r, "node.fabric.bandwidth", m->fabric_bw_Bps, 0, true, 1e16, "devices of a node must talk"));
    if (m->fabric_pair_bw_Bps > m->fabric_bw_Bps * 1.0001)
      return pf_error_set(PF_EPARSE, "%s:%d: machine.node.fabric.pair_bandwidth: above the per-device bandwidth "
                          "(a pair of devices shares a device's links)", path,
                          line_of(lookup(&r, "node.fabric.pair_bandwidth")));
    TRY(fabric_fits_device(&r, m, (pf_fabric_kind)k));
  }
  if (m->gpus_per_node == 1) { /* nothing to model between devices */
    m->fabric_bw_Bps = m->fabric_pair_bw_Bps = 0;
    m->fabric_latency_s = 0;
  }
  TRY(get_str(&r, "node.host_link.kind", m->host_link, sizeof m->host_link, 0));
  TRY(get_qty(&r, "node.host_link.bandwidth", PF_UNIT_BANDWIDTH, &m->host_link_bw_Bps, 0));
  TRY(get_int_in(&r, "node.nics.count", &m->nics_per_node, 1, 0, 64));
  if (m->nics_per_node == 0 && m->nodes > 1)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.node.nics.count: 0 NICs on a machine of %d nodes: the nodes "
                        "could not talk to each other", path, line_of(lookup(&r, "node.nics.count")), m->nodes);
  TRY(get_qty(&r, "node.nics.rate", PF_UNIT_BANDWIDTH, &m->nic_bw_Bps, m->nics_per_node > 0));
  if (m->nics_per_node > 0)
    TRY(check_range(&r, "node.nics.rate", m->nic_bw_Bps, 0, true, 1e16, "a NIC moves data"));
  TRY(read_comm_keys(&r, m));

  pf_network *n = &m->net;
  k = PF_TOPO_SINGLE;
  TRY(get_enum(&r, "network.topology", topology_names, PF_TOPO_SINGLE + 1, &k, 1));
  n->kind = (pf_topology_kind)k;
  TRY(get_str(&r, "network.tech", n->tech, sizeof n->tech, 0));
  n->link_bw_Bps = m->nic_bw_Bps;
  TRY(get_qty(&r, "network.link_rate", PF_UNIT_BANDWIDTH, &n->link_bw_Bps, 0));
  if (m->nodes > 1) TRY(check_range(&r, "network.link_rate", n->link_bw_Bps, 0, true, 1e16, "links move data"));
  n->switch_latency_s = 150e-9;
  TRY(get_qty_in(&r, "network.switch_latency", PF_UNIT_TIME, &n->switch_latency_s, 0, 0, false, 1e-3, NULL));
  n->nic_latency_s = 2e-6;
  TRY(get_qty_in(&r, "network.nic_latency", PF_UNIT_TIME, &n->nic_latency_s, 0, 0, false, 1e-3, NULL));
  n->levels = 2; n->taper = 1.0;
  TRY(get_int_in(&r, "network.levels", &n->levels, 0, 1, 5));
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
    for (int i = 0; i < cnt; i++) {
      const config_setting_t *e = config_setting_get_elem(dims, (unsigned)i);
      if (config_setting_type(e) != CONFIG_TYPE_INT || config_setting_get_int(e) < 1 ||
          config_setting_get_int(e) > 100000)
        return pf_error_set(PF_EPARSE, "%s:%d: machine.network.dims[%d]: an integer from 1 to 100000", path,
                            line_of(dims), i);
      n->dims[i] = config_setting_get_int(e);
    }
  }
  int ep = m->nodes * (m->nics_per_node > 0 ? m->nics_per_node : 1); /* at most 1e6 x 64 */
  const config_setting_t *net = lookup(&r, "network");
  switch (n->kind) {
  case PF_TOPO_FAT_TREE:
    if (n->endpoints_per_leaf <= 0) return missing(&r, "network.endpoints_per_leaf");
    if (n->taper <= 0 || n->taper > 1.0)
      return pf_error_set(PF_EPARSE, "%s:%d: machine.network.taper: must be in (0, 1]", path, line_of(net));
    TRY(fat_tree_holds(&r, n, ep));
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
  case PF_TOPO_TORUS: {
    if (n->dims[0] <= 0) return missing(&r, "network.dims");
    long cap = (long)n->dims[0] * (n->dims[1] > 0 ? n->dims[1] : 1) * (n->dims[2] > 0 ? n->dims[2] : 1);
    if (cap < m->nodes)
      return pf_error_set(PF_EPARSE, "%s:%d: machine.network.dims: %ld routers for %d nodes", path, line_of(dims),
                          cap, m->nodes);
    break;
  }
  case PF_TOPO_SINGLE:
    break;
  }
  m->node_base_W = 300;
  TRY(get_qty_in(&r, "power.node_base", PF_UNIT_POWER, &m->node_base_W, 1, 0, false, 1e5, "a node below 100 kW"));
  m->pue = 1.1;
  TRY(get_num(&r, "power.pue", &m->pue, 1));
  if (m->pue < 1.0 || m->pue > 3.0)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.power.pue: must be in [1, 3]", path, line_of(lookup(&r, "power.pue")));
  TRY(get_qty_in(&r, "power.switch", PF_UNIT_POWER, &m->switch_W, 0, 0, false, 1e5, "a switch below 100 kW"));
  snprintf(m->billing_unit, sizeof m->billing_unit, "node-hour");
  m->billing_per_node_hour = 1.0;
  TRY(get_str(&r, "billing.unit", m->billing_unit, sizeof m->billing_unit, 0));
  TRY(get_num_in(&r, "billing.per_node_hour", &m->billing_per_node_hour, 0, 0, true, 1e6,
                 "units billed per node-hour"));
  TRY(get_str(&r, "billing.note", m->billing_note, sizeof m->billing_note, 0));
  char partial[16] = "node";
  TRY(get_str(&r, "billing.partial", partial, sizeof partial, 0));
  if (strcmp(partial, "node") != 0 && strcmp(partial, "device") != 0)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.billing.partial: \"%s\": valid: node (whole nodes are billed), "
                        "device (a partial node is billed per device)", path, line_of(lookup(&r, "billing.partial")),
                        partial);
  m->billing_per_device = strcmp(partial, "device") == 0;
  TRY(get_qty_in(&r, "limits.walltime", PF_UNIT_TIME, &m->walltime_limit_s, 0, 0, true, 3.2e7,
                 "a job limit below a year"));
  TRY(get_int_in(&r, "limits.max_nodes", &m->max_job_nodes, 0, 1, 1000000));
  TRY(get_str(&r, "limits.note", m->limits_note, sizeof m->limits_note, 0));
  TRY(get_qty_in(&r, "storage.write_bandwidth", PF_UNIT_BANDWIDTH, &m->storage_bw_Bps, 0, 0, true, 1e16, NULL));
  TRY(get_provenance(&r, m->provenance, sizeof m->provenance));
  return 0;
}

static int read_machine_any(config_t *cfg, const char *path, void *out) { return read_machine(cfg, path, out); }

int pf_machine_load(const char *id_or_path, pf_machine *out) {
  return load_config(id_or_path, "machine", read_machine_any, out, out->id);
}
