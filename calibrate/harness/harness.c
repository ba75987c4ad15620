/* harness.c - one calibration run of a back-end (pfcal_run) and the JSON
 * document it builds.
 *
 * Order and budget follow the kernel list of shared/research/energy-and-
 * calibration.md section 4.1: probe (no context yet, so the power counters can
 * see bare idle), set-up, then the measurement groups (groups.c: launch
 * overhead, memory streams, vector FMA and tensor peaks per precision, copies
 * per link), the library GEMM table (gemm.c) when asked, and in full mode the
 * power states idle / context / max (the max from a long tensor burst, as
 * gpu-fryer#4 shows that only tensor work reaches the power cap; powerfit.c).
 * Quick mode stays well under 2 minutes per node, full mode under 15.  The
 * document: header (tool, host, device), results, power_model, provenance.
 *
 * The output schema is documented in docs/calibration.md; its loader is
 * model/machine/calibration.c.
 */
#include "harness_int.h"

#include "core/core.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#ifndef PF_VERSION
#define PF_VERSION "0.0.0"
#endif
#include "pf_git.h" /* PF_GIT: written at build time (cmake/gitstamp.cmake) */

void pfcal_date(char *buf, size_t len) {
  const char *fake = getenv("PF_FAKE_DATE");
  if (fake && *fake) {
    snprintf(buf, len, "%s", fake);
    return;
  }
  time_t t = time(NULL);
  struct tm tm;
  gmtime_r(&t, &tm);
  if (strftime(buf, len, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0 && len) buf[0] = '\0';
}

/* ---- document ------------------------------------------------------------ */

static void add_num_or_null(cJSON *o, const char *k, double v) {
  if (v > 0)
    cJSON_AddNumberToObject(o, k, v);
  else
    cJSON_AddNullToObject(o, k);
}

static cJSON *header(run *r, const char *date) {
  cJSON *doc = cJSON_CreateObject();
  cJSON_AddNumberToObject(doc, "schema_version", PFCAL_SCHEMA_VERSION);
  cJSON *tool = cJSON_AddObjectToObject(doc, "tool");
  cJSON_AddStringToObject(tool, "name", "preflight");
  cJSON_AddStringToObject(tool, "version", PF_VERSION);
  cJSON_AddStringToObject(tool, "git", PF_GIT);
  cJSON_AddStringToObject(doc, "backend", r->be->name);
  cJSON_AddStringToObject(doc, "mode", r->o->quick ? "quick" : "full");
  cJSON_AddStringToObject(doc, "date", date);
  cJSON_AddNumberToObject(doc, "seed", (double)r->o->seed);

  cJSON *host = cJSON_AddObjectToObject(doc, "host");
  if (gethostname(r->hostname, sizeof r->hostname - 1) != 0) snprintf(r->hostname, sizeof r->hostname, "unknown");
  cJSON_AddStringToObject(host, "hostname", r->hostname);
  cJSON_AddNumberToObject(host, "cores", (double)sysconf(_SC_NPROCESSORS_ONLN));
  struct utsname u;
  char os[200] = "unknown";
  if (uname(&u) == 0) snprintf(os, sizeof os, "%s %s %s", u.sysname, u.release, u.machine);
  cJSON_AddStringToObject(host, "os", os);

  const pfcal_info *in = &r->info;
  cJSON *dev = cJSON_AddObjectToObject(doc, "device");
  cJSON_AddStringToObject(dev, "name", in->name);
  cJSON_AddStringToObject(dev, "vendor", in->vendor);
  cJSON_AddStringToObject(dev, "arch", in->arch);
  cJSON_AddNumberToObject(dev, "count", in->count);
  cJSON_AddNumberToObject(dev, "index", r->o->device);
  cJSON_AddNumberToObject(dev, "units", in->units);
  add_num_or_null(dev, "clock_MHz", in->clock_MHz);
  add_num_or_null(dev, "mem_clock_MHz", in->mem_clock_MHz);
  add_num_or_null(dev, "power_cap_W", in->power_cap_W);
  add_num_or_null(dev, "memory_B", in->memory_B);
  add_num_or_null(dev, "llc_B", in->llc_B);
  if (r->ds)
    cJSON_AddStringToObject(dev, "datasheet", r->ds->label);
  else
    cJSON_AddNullToObject(dev, "datasheet");
  return doc;
}

/* ---- the run ------------------------------------------------------------- */

/* Before any context: the shapes file, the devices (r->info), the datasheet and the power counters. */
static int run_probe(run *r) {
  const pfcal_backend *be = r->be;
  const pfcal_opts *o = r->o;
  int rc;
  if (o->gemm && o->gemm_shapes) { /* a bad shapes file is a usage error, found before any device is touched */
    pfcal_gemm_shape *shapes;
    int n;
    if ((rc = pfcal_gemm_read_shapes(o->gemm_shapes, &shapes, &n))) return rc;
    free(shapes);
  }
  rc = be->probe(o, &r->info);
  if (rc) return rc;
  if (o->device < 0 || (r->info.count > 0 && o->device >= r->info.count))
    return pf_error_set(PF_EINVAL, "--device %d: this node has %d %s device(s) (0..%d)", o->device, r->info.count,
                        be->name, r->info.count - 1);
  r->ds = pfcal_datasheet_find(r->info.name, r->info.memory_B, r->info.units);
  r->pw = pfcal_power_open(be->power_source, r->info.count, r->info.pci_bus_id, r->ds ? r->ds->dies : 1);
  r->share = pfcal_power_share(r->pw, o->device);
  double w; /* a package's cap is shared by its dies: one device's share of it, as its device file's tdp */
  if (r->info.power_cap_W <= 0 && r->pw && pfcal_power_cap_W(r->pw, o->device, &w) == 0)
    r->info.power_cap_W = w / r->share;
  if (!r->info.driver[0] && (!r->pw || pfcal_power_driver(r->pw, r->info.driver, sizeof r->info.driver) != 0))
    snprintf(r->info.driver, sizeof r->info.driver, "unknown");
  if (o->progress)
    fprintf(stderr, "calibrate: %s back-end, %s mode, device \"%s\" (%d), power counters: %s\n", be->name,
            o->quick ? "quick" : "full", r->info.name, r->info.count, pfcal_power_source(r->pw));
  return 0;
}

/* Every measurement group into results, the GEMM table when asked, and with fit_power the operating
 * points of the power model into a new *pm (base_W: the context's power; *max_W the highest point). */
static int run_measurements(run *r, cJSON *results, bool fit_power, double base_W, cJSON **pm, double *max_W) {
  const pfcal_backend *be = r->be;
  const pfcal_opts *o = r->o;
  int rc = pfcal_group_launch(r, results);
  if (!rc) rc = pfcal_group_streams(r, results);
  if (!rc) rc = pfcal_group_flops(r, results, false);
  if (!rc) rc = pfcal_group_flops(r, results, true);
  if (!rc) rc = pfcal_group_copies(r, results);
  if (!rc && o->gemm) rc = pfcal_run_gemm(be, o, &r->pr, results, r->unsupported);
  if (!rc && fit_power) {
    /* operating points for the power model (powerfit.c): the library GEMM when it opens */
    bool have_gemm = o->gemm;
    if (!have_gemm && be->gemm_open && be->gemm) {
      char lib[128];
      have_gemm = be->gemm_open(lib, sizeof lib) == 0;
      pf_error_clear();
    }
    *pm = cJSON_CreateObject();
    rc = pfcal_power_points(be, r->pw, o->device, r->ds, have_gemm, base_W, r->package_idle_W, *pm, max_W);
    pf_progress_item();
  }
  return rc;
}

/* The power model (idle, context and max power and the fitted coefficients) into doc when every state was
 * read; pm is taken. */
static void add_power_model(cJSON *doc, cJSON *pm, const run *r, double idle_W, double context_W, double max_W) {
  if (!(pm && idle_W > 0 && max_W > 0)) {
    cJSON_Delete(pm);
    return;
  }
  cJSON_AddNumberToObject(pm, "idle_W", idle_W);
  cJSON_AddNumberToObject(pm, "context_W", context_W > 0 ? context_W : idle_W);
  cJSON_AddNumberToObject(pm, "max_W", max_W);
  cJSON_AddStringToObject(pm, "source", pfcal_power_source(r->pw));
  cJSON_AddNumberToObject(pm, "devices_per_reading", r->share);
  if (r->share > 1) { /* what was read, and what was taken off it */
    cJSON_AddNumberToObject(pm, "package_idle_W", r->package_idle_W);
    cJSON_AddStringToObject(pm, "scope",
                            "package: the counter reads this device's whole package (an MI250/MI250X OAM's two "
                            "GCDs, on its primary die); every power here is the package's less its other die at "
                            "half the package's bare idle (nothing else may run on it)");
  }
  cJSON_AddStringToObject(pm, "method",
                          "idle: 3 s before the context; context: 3 s idle with the context; points: 2 s warm-up "
                          "then 5 s metered per operating point (library GEMM 8192^3 and 8192x8192x256 bf16, "
                          "triad, fp32 FMA, bf16 mma); max: the highest point; coefficients: non-negative least "
                          "squares of P - context_W on the points' utilisations");
  cJSON_AddItemToObject(doc, "power_model", pm);
}

/* Where the numbers come from: tool, driver, runtime, host, date, power source, protocol, duration. */
static void add_provenance(cJSON *doc, run *r, const char *date, double t_start) {
  const pfcal_opts *o = r->o;
  cJSON *prov = cJSON_AddObjectToObject(doc, "provenance");
  cJSON_AddStringToObject(prov, "tool_version", PF_VERSION);
  cJSON_AddStringToObject(prov, "git", PF_GIT);
  cJSON_AddStringToObject(prov, "driver", r->info.driver);
  cJSON_AddStringToObject(prov, "runtime", r->info.runtime);
  cJSON_AddStringToObject(prov, "host", r->hostname);
  cJSON_AddStringToObject(prov, "date", date);
  cJSON_AddStringToObject(prov, "power_source", pfcal_power_source(r->pw));
  unsigned long long mask;
  if (r->pw && pfcal_power_throttle(r->pw, o->device, &mask) == 0)
    cJSON_AddNumberToObject(prov, "throttle_reasons_mask", (double)mask);
  cJSON_AddStringToObject(prov, "protocol",
                          o->quick ? "quick: 2 warm-up, 5..40 samples, stop at cv <= 2 % or 1 s"
                                   : "full: 3 warm-up, 10..100 samples, stop at cv <= 1 % or 6 s");
  cJSON_AddNumberToObject(prov, "elapsed_s", pfcal_now_s() - t_start);
}

int pfcal_run(const pfcal_backend *be, const pfcal_opts *o, cJSON **doc_out) {
  run r;
  memset(&r, 0, sizeof r);
  r.be = be;
  r.o = o;
  r.pr = pfcal_protocol_for(o->quick);
  *doc_out = NULL;
  double t_start = pfcal_now_s();
  int rc = run_probe(&r);
  if (rc) return rc;

  double idle_W = 0, context_W = 0, max_W = 0;
  bool fit_power = r.pw && !o->quick;
  pf_progress_begin("calibrate", pfcal_count_items(&r, fit_power), false);
  if (fit_power) idle_W = pfcal_idle_power(&r, 3.0);
  if (fit_power) pf_progress_item();
  /* a reading of a whole package (an MI250/MI250X OAM): every power below is this device's share of it */
  if (r.share > 1) r.package_idle_W = idle_W, idle_W = pfcal_per_device_W(idle_W, idle_W, r.share);

  rc = be->setup(o, &r.info);
  if (rc) {
    pf_progress_end();
    be->teardown();
    pfcal_power_close(r.pw);
    return rc;
  }
  if (fit_power) context_W = pfcal_per_device_W(pfcal_idle_power(&r, 3.0), r.package_idle_W, r.share);
  if (fit_power) pf_progress_item();

  char date[64];
  pfcal_date(date, sizeof date);
  cJSON *doc = header(&r, date);
  cJSON *results = cJSON_AddObjectToObject(doc, "results");
  r.unsupported = cJSON_CreateArray();
  cJSON *pm = NULL;
  rc = run_measurements(&r, results, fit_power, context_W > 0 ? context_W : idle_W, &pm, &max_W);
  pf_progress_end();
  if (rc) {
    cJSON_Delete(pm);
    cJSON_Delete(doc);
    cJSON_Delete(r.unsupported);
    be->teardown();
    pfcal_power_close(r.pw);
    return rc;
  }
  cJSON_AddItemToObject(results, "unsupported", r.unsupported);
  add_power_model(doc, pm, &r, idle_W, context_W, max_W);
  add_provenance(doc, &r, date, t_start);

  be->teardown();
  pfcal_power_close(r.pw);
  *doc_out = doc;
  return 0;
}
