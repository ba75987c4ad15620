/* topology.h - the machine's links and routes, built in C from the machine file.
 *
 * Every GPU of the job is a vertex; every link is DIRECTED (one per direction,
 * as InfiniBand, Slingshot, NVLink and Infinity Fabric are full duplex) with a
 * capacity in B/s (the achievable share of the line rate, see topology.c) and
 * a latency.  The job's nodes are nodes 0..N-1 of the partition, laid out in
 * the order the network numbers its endpoints (contiguous allocation).
 *
 * Inside a node: NVLink/Infinity Fabric/Xe Link meshes are a per-GPU port
 * (all its links together) plus one link per GPU pair; an NVSwitch or a PCIe
 * switch is a per-GPU port up and down.  NICs: GPU l of a node uses NIC
 * l x nics / GPUs (the closest, GPUDirect RDMA); several NICs per GPU are
 * bonded into one.  Networks: fat tree (2 or 3 levels, taper, rail-optimised
 * leaves, static D-mod-k routing), dragonfly (Slingshot: all-to-all groups,
 * global links; see topology.c for the routing model), dragonfly+ (leaf-spine
 * groups joined by global links at the spines), 3-D torus (dimension-order
 * routing), and a single switch.
 *
 * Routes are computed on demand in O(hops), so the layer works at 25,000 GPUs;
 * small instances can be written as SimGrid platform XML with explicit routes.
 */
#ifndef PREFLIGHT_TOPOLOGY_H
#define PREFLIGHT_TOPOLOGY_H

#include "preflight/machine.h"

#include <stdio.h>

typedef enum {
  PF_LINK_PORT_UP,    /* GPU -> intra-node fabric (all its fabric links) */
  PF_LINK_PORT_DOWN,  /* intra-node fabric -> GPU */
  PF_LINK_PAIR,       /* direct GPU -> GPU link group of a mesh */
  PF_LINK_NIC_UP,     /* NIC -> first switch */
  PF_LINK_NIC_DOWN,   /* last switch -> NIC */
  PF_LINK_UP,         /* fat tree / dragonfly+: towards the spines / core */
  PF_LINK_DOWN,       /* fat tree / dragonfly+: towards the leaves */
  PF_LINK_LOCAL,      /* dragonfly: a switch's ports into its group (out or in) */
  PF_LINK_GLOBAL,     /* dragonfly(+): a switch's global ports, or a group pair */
  PF_LINK_TORUS,      /* torus neighbour link */
  PF_LINK_NKINDS
} pf_link_kind;

typedef struct pf_link {
  double bw_Bps;       /* achievable capacity in this direction; 0 = unused slot */
  double lat_s;        /* latency added by traversing it (switch or NIC share) */
  int kind;            /* pf_link_kind */
} pf_link;

#define PF_ROUTE_MAX 64

typedef struct pf_route {
  int n;                    /* links on the route */
  int link[PF_ROUTE_MAX];   /* link ids, in order */
  double lat_s;             /* sum of the links' latencies */
} pf_route;

typedef struct pf_topology {
  pf_topology_kind kind;
  pf_fabric_kind fabric;
  int nodes, gpn, gpus;     /* job's nodes, GPUs per node, GPUs */
  int nics;                 /* NICs per node as routed (bonded when > GPUs per node) */
  int phys_nics;            /* NIC ports per node in the machine file */
  int nlinks;
  pf_link *links;           /* owned */
  /* layout (private to topology.c) */
  int b_pu, b_pd, b_pair, b_nu, b_nd, b_net;
  int mesh;                 /* intra-node links are a mesh (pair links) */
  int E, U, C, leaves, lpp, pods, lpr; /* fat tree */
  int S, eps, groups_total, ngroups, nsw; /* dragonfly(+): switches/leaves per group, endpoints per switch */
  int K;                    /* dragonfly+: spines per group */
  int dims[3];              /* torus */
  int b_lu, b_ld, b_au, b_ad, b_lo, b_li, b_go, b_gi, b_gp;
} pf_topology;

/* Build the links of a job on nodes 0..nodes-1 of machine m; capacities are
 * multiplied by bw_scale (the fit overlay's comm efficiency, 1 = none).
 * Free with pf_topology_free().  PF_EINVAL for impossible shapes, PF_ENOMEM. */
int pf_topology_build(const pf_machine *m, int nodes, double bw_scale, pf_topology *t);
void pf_topology_free(pf_topology *t);

/* Route from GPU a to GPU b (0 <= a, b < t->gpus); r->n = 0 when a == b. */
void pf_topology_route(const pf_topology *t, int a, int b, pf_route *r);

/* Smallest capacity on the route (infinity for an empty route). */
double pf_route_bw(const pf_topology *t, const pf_route *r);

static inline int pf_topology_node_of(const pf_topology *t, int gpu) { return gpu / t->gpn; }

/* "nic_up", "local", ...; static. */
const char *pf_link_kind_name(int kind);

/* SimGrid platform XML (DTD 4.1): one host "g<i>" per GPU at host_flops, the
 * links as SHARED one-direction links "l<id>", and a Full-routing zone with
 * one explicit route per (src, dst) pair in pairs[2k], pairs[2k+1] (every
 * ordered pair when pairs == NULL: only for small jobs).  Only links that some
 * route uses are written.  Returns 0 or PF_EIO / PF_ENOMEM. */
int pf_topology_write_xml(const pf_topology *t, FILE *f, const int *pairs, long npairs, double host_flops);

#endif
