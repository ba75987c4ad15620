/* power.c - power, energy and clock counters, opened at run time.
 *
 * Three sources behind one small interface (shared/research/energy-and-
 * calibration.md section 3.1): NVML (nvmlDeviceGetTotalEnergyConsumption in
 * mJ since driver load, Volta and newer; nvmlDeviceGetPowerUsage in mW,
 * enforced power limit, SM clock, clock-event/throttle reasons), ROCm SMI
 * (rsmi_dev_energy_count_get x resolution in uJ, average power, power cap;
 * on MI250/MI250X one OAM's two GCDs are read once, on the even GCD, and the
 * odd one reads 0: the reading is taken from the pair's primary and said to
 * cover two devices, pfcal_power_share), and Linux powercap RAPL
 * (/sys/class/powercap/intel-rapl:N/energy_uj for every package, wrapping at
 * max_energy_range_uj; AMD Zen exposes the same files).  The libraries are
 * dlopen()ed so that neither is a build dependency, and any failure simply
 * means "no power data": calibrate never fails because of counters.
 */
#include "pfcal.h"

#include <dlfcn.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SRC_NVML, SRC_RSMI, SRC_RAPL };
enum { MAX_PKG = 16 };

typedef int (*fn_void)(void);
typedef int (*fn_u64)(uint64_t);
typedef int (*fn_idx_handle)(unsigned, void **);
typedef int (*fn_str_handle)(const char *, void **);
typedef int (*fn_h_ull)(void *, unsigned long long *);
typedef int (*fn_h_u)(void *, unsigned *);
typedef int (*fn_h_int_u)(void *, int, unsigned *);
typedef int (*fn_str_len)(char *, unsigned);
typedef int (*fn_u32p)(uint32_t *);
typedef int (*fn_i_u64p)(uint32_t, uint64_t *);
typedef int (*fn_i_s_u64p)(uint32_t, uint32_t, uint64_t *);
typedef int (*fn_i_u64p_intp)(uint32_t, uint64_t *, int *);
typedef int (*fn_energy)(uint32_t, uint64_t *, float *, uint64_t *);
typedef int (*fn_version)(int, char *, uint32_t);

struct pfcal_power {
  int kind;
  void *lib;
  int ndev;
  /* nvml */
  void *nv_dev[PFCAL_MAX_DEVICES];
  fn_void nv_shutdown;
  fn_h_ull nv_energy, nv_reasons;
  fn_h_u nv_power, nv_limit;
  fn_h_int_u nv_clock;
  fn_str_len nv_driver;
  /* rsmi: rs_src is the monitor index read for a device (its pair's primary on MI250/MI250X), share the
   * logical devices that reading covers */
  uint32_t rs_dev[PFCAL_MAX_DEVICES], rs_src[PFCAL_MAX_DEVICES];
  int share[PFCAL_MAX_DEVICES];
  fn_void rs_shutdown;
  fn_energy rs_energy;
  fn_i_u64p_intp rs_power_get;
  fn_i_s_u64p rs_power_ave, rs_cap;
  fn_version rs_version;
  /* rapl */
  int npkg;
  char pkg_dir[MAX_PKG][96];
  double pkg_range_J[MAX_PKG], pkg_last_J[MAX_PKG], pkg_offset_J[MAX_PKG];
};

static void *sym(void *lib, const char *name) { return lib ? dlsym(lib, name) : NULL; }

/* dlsym returns an object pointer; copy it into a function pointer without a
 * cast that ISO C leaves undefined. */
#define LOAD(lib, dst, name)                                                                                           \
  do {                                                                                                                 \
    void *s_ = sym((lib), (name));                                                                                     \
    memcpy(&(dst), &s_, sizeof(dst));                                                                                  \
  } while (0)

static int read_double_file(const char *path, double *out) {
  FILE *f = fopen(path, "r");
  if (!f) return -1;
  char buf[64];
  int ok = fgets(buf, sizeof buf, f) != NULL;
  fclose(f);
  if (!ok) return -1;
  char *end;
  double v = strtod(buf, &end);
  if (end == buf) return -1;
  *out = v;
  return 0;
}

static pfcal_power *open_nvml(int ndev, char (*pci)[32]) {
  void *lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return NULL;
  fn_void init = NULL;
  LOAD(lib, init, "nvmlInit_v2");
  if (!init || init() != 0) {
    dlclose(lib);
    return NULL;
  }
  pfcal_power *p = calloc(1, sizeof *p);
  if (!p) {
    dlclose(lib);
    return NULL;
  }
  p->kind = SRC_NVML;
  p->lib = lib;
  p->ndev = ndev > PFCAL_MAX_DEVICES ? PFCAL_MAX_DEVICES : ndev;
  LOAD(lib, p->nv_shutdown, "nvmlShutdown");
  LOAD(lib, p->nv_energy, "nvmlDeviceGetTotalEnergyConsumption");
  LOAD(lib, p->nv_power, "nvmlDeviceGetPowerUsage");
  LOAD(lib, p->nv_limit, "nvmlDeviceGetEnforcedPowerLimit");
  LOAD(lib, p->nv_clock, "nvmlDeviceGetClockInfo");
  LOAD(lib, p->nv_reasons, "nvmlDeviceGetCurrentClocksEventReasons");
  if (!p->nv_reasons) LOAD(lib, p->nv_reasons, "nvmlDeviceGetCurrentClocksThrottleReasons");
  LOAD(lib, p->nv_driver, "nvmlSystemGetDriverVersion");
  fn_idx_handle by_index = NULL;
  fn_str_handle by_pci = NULL;
  LOAD(lib, by_index, "nvmlDeviceGetHandleByIndex_v2");
  LOAD(lib, by_pci, "nvmlDeviceGetHandleByPciBusId_v2");
  for (int i = 0; i < p->ndev; i++) {
    void *h = NULL;
    if (pci && pci[i][0] && by_pci && by_pci(pci[i], &h) == 0)
      p->nv_dev[i] = h;
    else if (by_index && by_index((unsigned)i, &h) == 0)
      p->nv_dev[i] = h;
  }
  return p;
}

/* "0000:3b:00.0" -> ROCm SMI's BDF id (domain << 32 | bus << 8 | dev << 3 | fn). */
static int parse_bdf(const char *s, uint64_t *out) {
  char *end;
  unsigned long dom = strtoul(s, &end, 16);
  if (*end != ':') return -1;
  unsigned long bus = strtoul(end + 1, &end, 16);
  if (*end != ':') return -1;
  unsigned long dev = strtoul(end + 1, &end, 16);
  if (*end != '.') return -1;
  unsigned long fn = strtoul(end + 1, &end, 16);
  *out = ((uint64_t)dom << 32) | ((bus & 0xff) << 8) | ((dev & 0x1f) << 3) | (fn & 0x7);
  return 0;
}

/* An MI250/MI250X OAM holds two GCDs, and ROCm SMI reports the package once, on its primary die: "shows total
 * (primary + secondary) socket power", the secondary "N/A" (ROCm/rocm_smi_lib#160); an idle MI250X OAM reads
 * 88-93 W on the even index and 0 on the odd one (ml-energy/zeus#203).  From the energy counts of a device and
 * of its partner (monitor index ^ 1; partner < 0: none), where that device's power is read and how many devices
 * the reading covers. */
pfcal_power_pair pfcal_rsmi_pair(int64_t self, int64_t partner) {
  if (partner < 0 || (self > 0) == (partner > 0)) return PFCAL_READ_OWN; /* two live counters: two packages */
  return self > 0 ? PFCAL_READ_OWN_PAIR : PFCAL_READ_PARTNER_PAIR;
}

/* Monitor device j's energy count; one that cannot be read counts as one reading 0 (the secondary GCD may
 * answer "not supported"). */
static int64_t energy_count(const pfcal_power *p, uint32_t j) {
  uint64_t c, ts;
  float res;
  if (p->rs_energy(j, &c, &res, &ts) != 0) return 0;
  return c > INT64_MAX ? INT64_MAX : (int64_t)c;
}

/* Where device i of p reads its power (rs_src, share; its own counter alone until this runs): its own counter,
 * or its OAM's primary GCD. */
static void pair_gcds(pfcal_power *p, uint32_t nmon) {
  for (int i = 0; i < p->ndev; i++) {
    uint32_t j = p->rs_dev[i], partner = j ^ 1u;
    if (!p->rs_energy || partner >= nmon) continue;
    pfcal_power_pair k = pfcal_rsmi_pair(energy_count(p, j), energy_count(p, partner));
    if (k == PFCAL_READ_OWN) continue;
    p->share[i] = 2;
    if (k == PFCAL_READ_PARTNER_PAIR) p->rs_src[i] = partner;
  }
}

static pfcal_power *open_rsmi(int ndev, char (*pci)[32], int dies) {
  void *lib = dlopen("librocm_smi64.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("librocm_smi64.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) lib = dlopen("/opt/rocm/lib/librocm_smi64.so", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return NULL;
  fn_u64 init = NULL;
  LOAD(lib, init, "rsmi_init");
  if (!init || init(0) != 0) {
    dlclose(lib);
    return NULL;
  }
  pfcal_power *p = calloc(1, sizeof *p);
  if (!p) {
    dlclose(lib);
    return NULL;
  }
  p->kind = SRC_RSMI;
  p->lib = lib;
  p->ndev = ndev > PFCAL_MAX_DEVICES ? PFCAL_MAX_DEVICES : ndev;
  LOAD(lib, p->rs_shutdown, "rsmi_shut_down");
  LOAD(lib, p->rs_energy, "rsmi_dev_energy_count_get");
  LOAD(lib, p->rs_power_get, "rsmi_dev_power_get");
  LOAD(lib, p->rs_power_ave, "rsmi_dev_power_ave_get");
  LOAD(lib, p->rs_cap, "rsmi_dev_power_cap_get");
  LOAD(lib, p->rs_version, "rsmi_version_str_get");
  fn_u32p num = NULL;
  fn_i_u64p pci_id = NULL;
  LOAD(lib, num, "rsmi_num_monitor_devices");
  LOAD(lib, pci_id, "rsmi_dev_pci_id_get");
  uint32_t nmon = 0;
  if (num) num(&nmon);
  for (int i = 0; i < p->ndev; i++) {
    p->rs_dev[i] = (uint32_t)i;
    uint64_t want;
    if (!pci || !pci[i][0] || !pci_id || parse_bdf(pci[i], &want)) continue;
    for (uint32_t j = 0; j < nmon; j++) {
      uint64_t got;
      if (pci_id(j, &got) == 0 && (got & 0xffff) == (want & 0xffff) && (got >> 32) == (want >> 32)) {
        p->rs_dev[i] = j;
        break;
      }
    }
  }
  for (int i = 0; i < p->ndev; i++) p->rs_src[i] = p->rs_dev[i], p->share[i] = 1;
  if (dies == 2) pair_gcds(p, nmon);
  return p;
}

static pfcal_power *open_rapl(void) {
  pfcal_power *p = calloc(1, sizeof *p);
  if (!p) return NULL;
  p->kind = SRC_RAPL;
  for (int i = 0; i < 64 && p->npkg < MAX_PKG; i++) {
    char dir[96], path[160], name[64];
    snprintf(dir, sizeof dir, "/sys/class/powercap/intel-rapl:%d", i);
    snprintf(path, sizeof path, "%s/name", dir);
    FILE *f = fopen(path, "r");
    if (!f) continue;
    int ok = fgets(name, sizeof name, f) != NULL;
    fclose(f);
    if (!ok || strncmp(name, "package", 7) != 0) continue;
    double uj, range_uj;
    snprintf(path, sizeof path, "%s/energy_uj", dir);
    if (read_double_file(path, &uj)) continue; /* not readable (root only since 2020) */
    snprintf(path, sizeof path, "%s/max_energy_range_uj", dir);
    if (read_double_file(path, &range_uj)) range_uj = 0;
    int k = p->npkg++;
    snprintf(p->pkg_dir[k], sizeof p->pkg_dir[k], "%s", dir);
    p->pkg_range_J[k] = range_uj * 1e-6;
    p->pkg_last_J[k] = uj * 1e-6;
    p->pkg_offset_J[k] = 0;
  }
  if (p->npkg == 0) {
    free(p);
    return NULL;
  }
  p->ndev = 1;
  return p;
}

pfcal_power *pfcal_power_open(const char *source, int ndev, char (*pci_bus_id)[32], int dies) {
  if (!source) return NULL;
  if (strcmp(source, "nvml") == 0) return open_nvml(ndev, pci_bus_id);
  if (strcmp(source, "rsmi") == 0) return open_rsmi(ndev, pci_bus_id, dies);
  if (strcmp(source, "rapl") == 0) return open_rapl();
  return NULL;
}

void pfcal_power_close(pfcal_power *p) {
  if (!p) return;
  if (p->kind == SRC_NVML && p->nv_shutdown) p->nv_shutdown();
  if (p->kind == SRC_RSMI && p->rs_shutdown) p->rs_shutdown();
  if (p->lib) dlclose(p->lib);
  free(p);
}

const char *pfcal_power_source(const pfcal_power *p) {
  if (!p) return "none";
  return p->kind == SRC_NVML ? "nvml" : p->kind == SRC_RSMI ? "rsmi" : "rapl";
}

static bool dev_ok(const pfcal_power *p, int dev) { return p && dev >= 0 && dev < p->ndev; }

int pfcal_power_share(const pfcal_power *p, int dev) {
  return dev_ok(p, dev) && p->kind == SRC_RSMI && p->share[dev] > 1 ? p->share[dev] : 1;
}

/* The other dies of the package sit at bare idle while one is measured (nothing else runs on them: calibrate
 * wants the node to itself), each at 1/share of the package's bare idle; the split of the package's common
 * parts between its dies is even, an assumption. */
double pfcal_per_device_W(double package_W, double package_idle_W, int share) {
  if (share <= 1 || package_W <= 0) return package_W;
  return package_W - package_idle_W * (share - 1) / share;
}

int pfcal_power_energy_J(pfcal_power *p, int dev, double *J) {
  if (!p) return -1;
  if (p->kind == SRC_RAPL) {
    double total = 0;
    for (int k = 0; k < p->npkg; k++) {
      char path[160];
      double uj;
      snprintf(path, sizeof path, "%s/energy_uj", p->pkg_dir[k]);
      if (read_double_file(path, &uj)) return -1;
      double now = uj * 1e-6;
      if (now < p->pkg_last_J[k] && p->pkg_range_J[k] > 0) p->pkg_offset_J[k] += p->pkg_range_J[k];
      p->pkg_last_J[k] = now;
      total += now + p->pkg_offset_J[k];
    }
    *J = total;
    return 0;
  }
  if (!dev_ok(p, dev)) return -1;
  if (p->kind == SRC_NVML) {
    unsigned long long mj;
    if (!p->nv_energy || !p->nv_dev[dev] || p->nv_energy(p->nv_dev[dev], &mj) != 0) return -1;
    *J = 1e-3 * (double)mj;
    return 0;
  }
  uint64_t count, ts;
  float res;
  if (!p->rs_energy || p->rs_energy(p->rs_src[dev], &count, &res, &ts) != 0) return -1;
  if (count == 0) return -1; /* a counter that does not count (a secondary GCD without its primary) */
  *J = 1e-6 * (double)count * (double)res;
  return 0;
}

int pfcal_power_W(pfcal_power *p, int dev, double *W) {
  if (!dev_ok(p, dev) || p->kind == SRC_RAPL) return -1;
  if (p->kind == SRC_NVML) {
    unsigned mw;
    if (!p->nv_power || !p->nv_dev[dev] || p->nv_power(p->nv_dev[dev], &mw) != 0) return -1;
    *W = 1e-3 * mw;
    return 0;
  }
  uint64_t uw = 0;
  int type = 0;
  if (p->rs_power_get && p->rs_power_get(p->rs_src[dev], &uw, &type) == 0 && uw > 0) {
    *W = 1e-6 * (double)uw;
    return 0;
  }
  if (p->rs_power_ave && p->rs_power_ave(p->rs_src[dev], 0, &uw) == 0 && uw > 0) {
    *W = 1e-6 * (double)uw;
    return 0;
  }
  return -1;
}

int pfcal_power_cap_W(pfcal_power *p, int dev, double *W) {
  if (!p) return -1;
  if (p->kind == SRC_RAPL) {
    double total = 0;
    for (int k = 0; k < p->npkg; k++) {
      char path[160];
      double uw;
      snprintf(path, sizeof path, "%s/constraint_0_power_limit_uw", p->pkg_dir[k]);
      if (read_double_file(path, &uw)) return -1;
      total += uw * 1e-6;
    }
    *W = total;
    return total > 0 ? 0 : -1;
  }
  if (!dev_ok(p, dev)) return -1;
  if (p->kind == SRC_NVML) {
    unsigned mw;
    if (!p->nv_limit || !p->nv_dev[dev] || p->nv_limit(p->nv_dev[dev], &mw) != 0) return -1;
    *W = 1e-3 * mw;
    return 0;
  }
  uint64_t uw;
  if (!p->rs_cap || p->rs_cap(p->rs_src[dev], 0, &uw) != 0 || uw == 0) return -1;
  *W = 1e-6 * (double)uw;
  return 0;
}

int pfcal_power_clock_MHz(pfcal_power *p, int dev, double *MHz) {
  if (!dev_ok(p, dev) || p->kind != SRC_NVML) return -1;
  unsigned mhz;
  if (!p->nv_clock || !p->nv_dev[dev] || p->nv_clock(p->nv_dev[dev], 1 /* NVML_CLOCK_SM */, &mhz) != 0) return -1;
  *MHz = mhz;
  return 0;
}

int pfcal_power_throttle(pfcal_power *p, int dev, unsigned long long *mask) {
  if (!dev_ok(p, dev) || p->kind != SRC_NVML) return -1;
  if (!p->nv_reasons || !p->nv_dev[dev] || p->nv_reasons(p->nv_dev[dev], mask) != 0) return -1;
  return 0;
}

int pfcal_power_driver(pfcal_power *p, char *buf, size_t len) {
  if (!p || len == 0) return -1;
  if (p->kind == SRC_NVML && p->nv_driver) return p->nv_driver(buf, (unsigned)len) == 0 ? 0 : -1;
  if (p->kind == SRC_RSMI && p->rs_version)
    return p->rs_version(0 /* RSMI_SW_COMP_DRIVER */, buf, (uint32_t)len) == 0 ? 0 : -1;
  return -1;
}
