/* ccl.h - what the collective library (NCCL, RCCL, oneCCL) adds to the
 * routes: protocols, per-call and per-step software latency, measured
 * efficiencies, and the algorithm / protocol choice its tuner makes (ccl.c;
 * formulas and sources in docs/communication.md section 3).
 */
#ifndef PREFLIGHT_CCL_H
#define PREFLIGHT_CCL_H

#include "collalgo.h"
#include "collective.h"

#include <stddef.h>

/* Latency classes of NCCL's tuning model: the node's NVLink-class fabric,
 * PCIe, the network. */
enum { PF_HW_NVLINK, PF_HW_PCI, PF_HW_NET };

/* The library's tuning constants for a range of its versions (ccltuner.c,
 * with the source tag of each; docs/communication.md 3.4). */
typedef struct pf_ccl_tuner {
  const char *name;        /* "NCCL 2.23-2.28" */
  const char *source;      /* the file and tags they were read from */
  pf_ccl_lib lib;
  int from, to;            /* versions covered, as pf_ccl_version_code */
  pf_ccl_lat row[PF_CCL_NROWS]; /* by PF_CCL_ROW_* */
} pf_ccl_tuner;
enum { PF_CCL_TUNER_NAMED, PF_CCL_TUNER_NEAREST, PF_CCL_TUNER_ASSUMED };
/* "2.21.5" -> 22100 (major x 10000 + minor x 100); 0 for "" or NULL, -1 when unreadable. */
int pf_ccl_version_code(const char *v);
/* The tables for library lib at version (the machine file's ccl.version, "" when not named): the range holding
 * it, else the nearest, else (no version) the newest; *how (may be NULL) gets PF_CCL_TUNER_*.  Never NULL. */
const pf_ccl_tuner *pf_ccl_tuner_find(pf_ccl_lib lib, const char *version, int *how);
/* One line for the outputs: which tables, why (named, nearest, assumed) and their source. */
void pf_ccl_tuner_note(pf_ccl_lib lib, const char *version, char *buf, size_t n);
/* Per-call latency of (algo, proto) with the tables tn (NULL: the newest NCCL's), seconds. */
double pf_ccl_base_lat(const pf_ccl_tuner *tn, pf_ccl_lib lib, pf_coll_algo a, pf_coll_proto p);
/* Per-step latency of (algo, proto) on hardware class hw, seconds. */
double pf_ccl_step_lat(const pf_ccl_tuner *tn, pf_ccl_lib lib, int hw, pf_coll_algo a, pf_coll_proto p);
/* A measured ring table's per-step latency (machine file ccl.table): a step
 * that crosses the network (net) or one inside the node, protocol p; def
 * (NCCL's constant) where the table gives none. */
double pf_ccl_table_step(const pf_ccl_table *tab, int net, pf_coll_proto p, double def);
/* Payload share of a protocol's wire format: LL 4 of 8 bytes, LL128 120 of
 * 128, Simple 1. */
double pf_ccl_proto_eff(pf_coll_proto p);
/* The library runs protocol p with algorithm a on this topology. */
int pf_ccl_proto_ok(const pf_topology *t, pf_coll_algo a, pf_coll_proto p);
/* The measured library efficiency (machine file ccl.efficiency) for a
 * collective of `ranks` ranks and `bytes` per rank: the last matching row's
 * factor, 1 when none matches. */
double pf_ccl_lib_factor(const pf_topology *t, int ranks, double bytes);

/* The "collectives" section of a calibration file (`preflight calibrate
 * --collectives`, cclcal.c): nccl-tests-style results of one communicator of
 * nodes x gpus_per_node ranks. */
#define PF_CCL_CAL_MAX 256
typedef struct pf_ccl_cal {
  int present;             /* the file has the section */
  int has_rates;           /* the file also has device rates, a power model or a fit (calibration.h) */
  char library[16];
  int nodes, gpn, n;
  pf_coll_kind op[PF_CCL_CAL_MAX];
  double size_B[PF_CCL_CAL_MAX], busbw_Bps[PF_CCL_CAL_MAX];
} pf_ccl_cal;

/* Read the section (present = 0 when the file has none).  PF_EPARSE names
 * the file and field; PF_ENOENT. */
int pf_ccl_cal_load(const char *path, pf_ccl_cal *out);
/* Overlay the measured bus bandwidth on m: the all-gather (else all-reduce)
 * busbw of the large messages (>= 64 MiB, else the largest) over what the
 * model gives at line rate becomes the fabric's efficiency (one node) or the
 * network's (several nodes, with the fabric's kept).  A section for a node
 * shape the machine does not have is PF_EINVAL. */
int pf_ccl_cal_apply(const pf_ccl_cal *c, pf_machine *m);

/* One collective call: what it is, over which groups, and how it is chosen. */
typedef struct pf_coll_req {
  pf_coll_kind kind;
  double bytes;            /* the buffer each rank holds (send/receive: the message) */
  const int *groups;       /* ngroups x p endpoints, members in ring order */
  int ngroups, p;
  pf_coll_algo algo;       /* PF_COLL_AUTO: the library's tuner; PF_COLL_BEST: cheapest with contention; or forced */
  pf_coll_proto proto;     /* PF_PROTO_AUTO or forced */
} pf_coll_req;

/* Choose the algorithm and protocol and build the pattern of all groups.
 * auto, as NCCL/RCCL do: the cheapest (algorithm, protocol) the library
 * offers for this collective, costed for ONE group alone (the library does
 * not see the other groups' traffic); best: the cheapest of every algorithm
 * preflight models, costed with every concurrent group; forced: that
 * algorithm (the ring where it does not apply).  res->time_s is the cost of
 * the chosen pattern with all groups.  Free out with pf_coll_pattern_free().
 * PF_ENOMEM, PF_EINVAL. */
int pf_coll_choose(const pf_topology *t, const pf_coll_req *rq, pf_coll_pattern *out, pf_coll_result *res);

#endif
