/* collalgo.h - the table of collective algorithms: one pf_coll_algo_desc per
 * algorithm, in its own file (coll_ring.c, coll_tree.c, coll_hier.c,
 * coll_rabenseifner.c, coll_nvls.c, coll_collnet.c, coll_direct.c), as
 * nccl-tests keeps one struct per collective.  A descriptor holds everything
 * that is particular to the algorithm: its name, which collectives it
 * implements, when the library's tuner considers it, the builder of its flow
 * pattern, the library's latency constants for it and the protocols it runs
 * with.  Everything else (patterns, cost, the tuner's choice: collective.c,
 * collcost.c, ccl.c) reads the descriptor and never names an algorithm.
 *
 * The built-ins are registered through pf_coll_algo_register, in the order of
 * the table in collalgo.c, on first use; an algorithm from outside model/
 * (tests/plugin_coll/) registers through the same call and gets the next id.
 * Names come from the table everywhere: parsing --coll-algo, its help, the
 * algorithm column of every output.  Adding one: docs/architecture.md.
 */
#ifndef PREFLIGHT_COLLALGO_H
#define PREFLIGHT_COLLALGO_H

#include "collective.h"

#include <stdbool.h>

/* Bit of collective kind k in pf_coll_algo_desc.kinds. */
#define PF_COLL_KIND_BIT(k) (1u << (k))

/* The collective library's latency constants for one algorithm (NCCL's tuning
 * model, ccl.c), microseconds, per protocol (LL, LL128, Simple): the per-call
 * base and the per-step latency on the node's NVLink-class fabric, on PCIe
 * and over the network (PF_HW_NVLINK, PF_HW_PCI, PF_HW_NET). */
typedef struct pf_ccl_lat {
  double base_us[3];
  double hw_us[3][3];
} pf_ccl_lat;

/* The rows of the library's tables that change with its version (ccltuner.c): an algorithm names its row in
 * pf_coll_algo_desc.tuner_row; NONE takes the descriptor's lat (or the ring's). */
enum { PF_CCL_ROW_NONE, PF_CCL_ROW_RING, PF_CCL_ROW_TREE, PF_CCL_ROW_NVLS, PF_CCL_ROW_COLLNET, PF_CCL_NROWS };

/* The groups of a call as the tuner sees them: k members per node (0 when
 * nodes hold different numbers), q nodes, p ranks. */
typedef struct pf_coll_shape {
  int k, q, p;
} pf_coll_shape;

typedef struct pf_coll_algo_desc {
  const char *name;    /* --coll-algo value and the algorithm column of the outputs */
  const char *summary; /* one line for --coll-algo=help */
  unsigned kinds;      /* collectives it implements: PF_COLL_KIND_BIT(kind) */
  /* The library's tuner offers it (--coll-algo auto); otherwise it is costed only when named or under best. */
  bool tuner;
  /* Further conditions for auto and best to cost it (topology, group shape); NULL: none beyond kinds. */
  bool (*applies)(const pf_topology *t, pf_coll_kind kind, const pf_coll_shape *s);
  /* Append the steps of `kind` over ngroups groups of p ranks to pat (pf_coll_pattern_build: bytes > 0, p > 1,
   * kind in kinds); an algorithm that does not apply to the groups sets pat->algo to PF_COLL_RING and builds
   * the ring (pf_coll_ring_build).  0, or -1 when out of memory. */
  int (*build)(const pf_topology *t, pf_coll_pattern *pat, pf_coll_kind kind, double bytes, const int *groups,
               int ngroups, int p);
  int tuner_row;         /* its row of the library's versioned tables (PF_CCL_ROW_*, ccltuner.c); NONE: lat */
  const pf_ccl_lat *lat; /* the library's latencies where tuner_row is NONE (NULL: the ring's row) */
  bool simple_only;      /* the library runs it with the Simple protocol only */
  /* > 0: the tuner costs its bandwidth part as the ring's divided by this (NCCL's model of the tree: its
   * busBw x 0.92); 0: its own pattern's. */
  double tuner_ring_busbw;
} pf_coll_algo_desc;

/* Add an algorithm to the table; d is borrowed and must outlive every use
 * (a static object).  Returns its id (>= PF_COLL_FIRST), or PF_EINVAL (a
 * name already taken, "auto", "best", or a descriptor without name, kinds or
 * builder) or PF_ENOMEM (the table is full). */
int pf_coll_algo_register(const pf_coll_algo_desc *d);

/* One past the largest id: algorithms are PF_COLL_FIRST .. pf_coll_algo_end() - 1. */
int pf_coll_algo_end(void);
/* The algorithm of id a; NULL for a choice (auto, best) or an unknown id. */
const pf_coll_algo_desc *pf_coll_algo_get(pf_coll_algo a);
/* "auto", "best", or the algorithm's name; "?" for an unknown id. */
const char *pf_coll_algo_name(pf_coll_algo a);
/* A --coll-algo value: auto, best or an algorithm's name.  PF_EINVAL naming the valid ones. */
int pf_coll_algo_parse(const char *s, pf_coll_algo *out);
/* The first algorithm of the table that implements kind (the fallback of an algorithm that does not). */
pf_coll_algo pf_coll_algo_default(pf_coll_kind kind);

#endif
