/* ccltuner.c - the collective library's tuning constants per version: the
 * latency rows (per-call base, per-step on NVLink / PCIe / network, per
 * protocol LL, LL128, Simple) that NCCL's and RCCL's tuners
 * (src/graph/tuning.cc) add to each algorithm's bandwidth term, one table per
 * range of versions whose constants are identical, read from the libraries'
 * sources at the tags named below (docs/communication.md 3.4).
 *
 * NCCL (NVIDIA/nccl, src/graph/tuning.cc, baseLat and hwLat; compared at every
 * release tag from v2.18.1-1 to v2.28.9-1):
 *   2.18  (v2.18.3-1 .. v2.18.6-1)  tree Simple: base 0, steps 4 / 6 / 14 us;
 *         CollNetDirect base 6.8/14/0, steps 8.0 / 8.0 / 10.7; NVLS base 23,
 *         steps 0 / - / 18.
 *   2.19-2.20 (v2.19.1-1 .. v2.20.5-1)  tree Simple steps 28 / 28 / 28 us;
 *         CollNetDirect base 0, steps 3.7 / 3.7 / 31; NVLS base 0, NVLink 23.
 *   2.21-2.22 (v2.21.5-1, v2.22.3-1)  as 2.19, NVLS NVLink step 25.
 *   2.23-2.28 (v2.23.4-1 .. v2.28.9-1)  tree Simple base 8.4, steps
 *         4 / 4 / 14 us (v2.28 moved the tables into tunerConstants and added
 *         PAT's row, values unchanged for these four algorithms).
 * The ring row is the same in every one: base 6.6 / 14 / 8.4, NVLink .6 /
 * 1.9 / 3.4, PCIe 1.0 / 2.5 / 5.7, network 2.7 / 4.0 / 14.0 us.
 *
 * RCCL (ROCm/rccl, src/graph/tuning.cc at rocm-6.0.0 .. rocm-6.2.2, NCCL
 * 2.18.3 .. 2.20.5 in makefiles/version.mk; identical at these tags): its own
 * tables, not NCCL's: baseLat 12 / 12 / 17 us for every algorithm, and
 * hwLat of the node's tuning model (rcclTuningModel[topo->tuning]): an
 * MI250X node (8 GCDs, 4 NUMA CPUs, 4 NICs: rome_models.cc rome_model_63 and
 * _74, "tuning=3") and an MI300X node (tuning=5) have the same hwLat rows,
 * taken here: tree 0.8 / 0 / 2.5 (NVLink class, i.e. Infinity Fabric),
 * 2.2 / 2.2 / 5.7 (PCIe), 12.5 / 0 / 22.4 (network); ring 0.8 / 0 / 3.6,
 * 2.2 / 2.2 / 5.7, 9.5 / 0 / 19.8; CollNetDirect Simple 0.8 / 5.7 / 12.5.
 * RCCL has no NVLS.  RCCL also scales its bandwidths by per-model bwRatio and
 * correction factors; those are not modelled (the route-based bandwidth of
 * comm/ stands, with the machine file's measured table where it has one).
 *
 * oneCCL publishes no such table: it gets NCCL's newest, Simple column
 * (ccl.c).
 *
 * A version outside every range gets the nearest range and the output says
 * so; a machine file that names no version gets the newest range of its
 * library, also said in the output (pf_ccl_tuner_note).
 */
#include "ccl.h"

#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>

/* The rows of the algorithms whose constants change between versions; others keep the ring's (ccl.c). */
#define RING_NCCL {.base_us = {6.6, 14.0, 8.4}, .hw_us = {{.6, 1.9, 3.4}, {1.0, 2.5, 5.7}, {2.7, 4.0, 14.0}}}
#define COLLNET_NCCL_219 {.base_us = {0, 0, 0}, .hw_us = {{0, 0, 3.7}, {0, 0, 3.7}, {0, 0, 31}}}

static const pf_ccl_tuner tuners[] = {
    {"NCCL 2.18", "NVIDIA/nccl src/graph/tuning.cc at v2.18.3-1 (same through v2.18.6-1)", PF_CCL_NCCL, 21800, 21899,
     {[PF_CCL_ROW_RING] = RING_NCCL,
      [PF_CCL_ROW_TREE] = {.base_us = {6.8, 14.0, 0}, .hw_us = {{.6, 1.25, 4}, {1.0, 1.9, 6}, {5.0, 8.5, 14}}},
      [PF_CCL_ROW_NVLS] = {.base_us = {0, 0, 23}, .hw_us = {{0, 0, 0}, {0, 0, 0}, {0, 0, 18}}},
      [PF_CCL_ROW_COLLNET] = {.base_us = {6.8, 14.0, 0}, .hw_us = {{0, 0, 8.0}, {0, 0, 8.0}, {0, 0, 10.7}}}}},
    {"NCCL 2.19-2.20", "NVIDIA/nccl src/graph/tuning.cc at v2.19.1-1 (same through v2.20.5-1)", PF_CCL_NCCL, 21900,
     22099,
     {[PF_CCL_ROW_RING] = RING_NCCL,
      [PF_CCL_ROW_TREE] = {.base_us = {6.8, 14.0, 0}, .hw_us = {{.6, 1.25, 28}, {1.0, 1.9, 28}, {5.0, 8.5, 28}}},
      [PF_CCL_ROW_NVLS] = {.base_us = {0, 0, 0}, .hw_us = {{0, 0, 23}, {0, 0, 0}, {0, 0, 18}}},
      [PF_CCL_ROW_COLLNET] = COLLNET_NCCL_219}},
    {"NCCL 2.21-2.22", "NVIDIA/nccl src/graph/tuning.cc at v2.21.5-1 (same at v2.22.3-1)", PF_CCL_NCCL, 22100, 22299,
     {[PF_CCL_ROW_RING] = RING_NCCL,
      [PF_CCL_ROW_TREE] = {.base_us = {6.8, 14.0, 0}, .hw_us = {{.6, 1.25, 28}, {1.0, 1.9, 28}, {5.0, 8.5, 28}}},
      [PF_CCL_ROW_NVLS] = {.base_us = {0, 0, 0}, .hw_us = {{0, 0, 25}, {0, 0, 0}, {0, 0, 18}}},
      [PF_CCL_ROW_COLLNET] = COLLNET_NCCL_219}},
    {"NCCL 2.23-2.28", "NVIDIA/nccl src/graph/tuning.cc at v2.23.4-1 and v2.27.3-1 (same values through v2.28.9-1)",
     PF_CCL_NCCL, 22300, 22899,
     {[PF_CCL_ROW_RING] = RING_NCCL,
      [PF_CCL_ROW_TREE] = {.base_us = {6.8, 14.0, 8.4}, .hw_us = {{.6, 1.25, 4.0}, {1.0, 1.9, 4.0}, {5.0, 8.5, 14}}},
      [PF_CCL_ROW_NVLS] = {.base_us = {0, 0, 0}, .hw_us = {{0, 0, 25}, {0, 0, 0}, {0, 0, 18}}},
      [PF_CCL_ROW_COLLNET] = COLLNET_NCCL_219}},
    {"RCCL 2.18-2.20 (ROCm 6.0-6.2)",
     "ROCm/rccl src/graph/tuning.cc at rocm-6.0.0 and rocm-6.2.0 (same through rocm-6.2.2): baseLat, "
     "tuning_model_3/5 hwLat (rome_models.cc: MI250X and MI300X nodes)",
     PF_CCL_RCCL, 21800, 22099,
     {[PF_CCL_ROW_RING] = {.base_us = {12, 12, 17}, .hw_us = {{.8, 0, 3.6}, {2.2, 2.2, 5.7}, {9.5, 0, 19.8}}},
      [PF_CCL_ROW_TREE] = {.base_us = {12, 12, 17}, .hw_us = {{.8, 0, 2.5}, {2.2, 2.2, 5.7}, {12.5, 0, 22.4}}},
      [PF_CCL_ROW_NVLS] = {.base_us = {0, 0, 0}, .hw_us = {{0, 0, 0}, {0, 0, 0}, {0, 0, 0}}},
      [PF_CCL_ROW_COLLNET] = {.base_us = {12, 12, 17}, .hw_us = {{0, 0, .8}, {0, 0, 5.7}, {0, 0, 12.5}}}}},
};
#define NTUNERS ((int)(sizeof tuners / sizeof tuners[0]))

int pf_ccl_version_code(const char *v) {
  if (!v || !v[0]) return 0;
  char *end;
  long major = strtol(v, &end, 10);
  if (end == v || *end != '.') return -1;
  const char *m = end + 1;
  long minor = strtol(m, &end, 10);
  if (end == m || major < 1 || major > 99 || minor < 0 || minor > 99) return -1;
  return (int)(major * 10000 + minor * 100);
}

const pf_ccl_tuner *pf_ccl_tuner_find(pf_ccl_lib lib, const char *version, int *how) {
  pf_ccl_lib l = lib == PF_CCL_RCCL ? PF_CCL_RCCL : PF_CCL_NCCL; /* oneCCL: NCCL's newest (no table of its own) */
  int code = lib == PF_CCL_ONECCL ? 0 : pf_ccl_version_code(version);
  const pf_ccl_tuner *newest = NULL, *best = NULL;
  int dist = 0;
  for (int i = 0; i < NTUNERS; i++) {
    if (tuners[i].lib != l) continue;
    if (!newest || tuners[i].from > newest->from) newest = &tuners[i];
    if (code <= 0) continue;
    int d = code < tuners[i].from ? tuners[i].from - code : code > tuners[i].to ? code - tuners[i].to : 0;
    if (!best || d < dist) { best = &tuners[i]; dist = d; }
  }
  if (how) *how = code <= 0 ? PF_CCL_TUNER_ASSUMED : dist > 0 ? PF_CCL_TUNER_NEAREST : PF_CCL_TUNER_NAMED;
  return best ? best : newest;
}

void pf_ccl_tuner_note(pf_ccl_lib lib, const char *version, char *buf, size_t n) {
  int how;
  const pf_ccl_tuner *tn = pf_ccl_tuner_find(lib, version, &how);
  const char *v = version && version[0] ? version : "";
  if (lib == PF_CCL_ONECCL)
    snprintf(buf, n, "%s tuning constants, Simple column (oneCCL publishes none; %s)", tn->name, tn->source);
  else if (how == PF_CCL_TUNER_NAMED)
    snprintf(buf, n, "%s tuning constants for the machine file's ccl.version %s (%s)", tn->name, v, tn->source);
  else if (how == PF_CCL_TUNER_NEAREST)
    snprintf(buf, n, "%s tuning constants, the nearest sourced to the machine file's ccl.version %s (%s)", tn->name,
             v, tn->source);
  else
    snprintf(buf, n, "%s tuning constants assumed: the machine file names no ccl.version (%s)", tn->name,
             tn->source);
}
