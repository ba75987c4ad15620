/* topology.h - the machine's links and routes, built in C from the machine
 * file and the job's node allocation (part of the communication module, see
 * comm.h).
 *
 * Every GPU of the job is an endpoint; every link is DIRECTED (one per
 * direction, as InfiniBand, Slingshot, NVLink and Infinity Fabric are full
 * duplex) with a capacity in B/s (the achievable share of the line rate, one
 * table in topology.c) and a latency.  Besides the GPUs there are virtual
 * endpoints where collectives reduce in the network: one per node for the
 * NVSwitch (NVLink SHARP, "NVLS"), and one per node and NIC rail for the
 * first network switch (InfiniBand SHARP / CollNet).
 *
 * Placement: the job's node j sits on the partition's node slot[j] (in the
 * order the network numbers its endpoints): contiguous (slot[j] = j) or
 * scattered by a seeded draw over the whole partition (a busy machine), kept
 * in ascending order as Slurm's host list is.  Rank r of the job runs on job
 * node r / GPUs-per-node, local GPU r % GPUs-per-node (block distribution).
 *
 * Inside a node: NVLink/Infinity Fabric/Xe Link meshes are a per-GPU port
 * (all its links together) plus one link per GPU pair; an NVSwitch or a PCIe
 * switch is a per-GPU port up and down; PCIe cards joined by NVLink bridges
 * (JURECA-DC H100) add a bridge link between the GPUs of a bridged group.
 * NICs: GPU l of a node is closest to NIC affinity[l] (machine file, default
 * l x NICs / GPUs); several NICs per GPU are bonded into one.  With NCCL's PXN
 * (NCCL >= 2.12) a transfer to another node leaves through the NIC of the
 * destination's rail, reached over the node's fabric when it is not the
 * sender's own; without PXN each side uses its own NIC.
 * Networks: the links between the NICs are laid out, built and routed by
 * the machine's network kind, one file each (machine/network.h: fat tree,
 * dragonfly, dragonfly+, torus, single switch, and any kind registered).
 * Formulas and sources: docs/engine.md "Topology" and
 * docs/communication.md.
 *
 * Routes are computed on demand in O(hops), so the layer works at 25,000
 * GPUs; small instances can be written as SimGrid platform XML with explicit
 * routes (topoxml.c).
 */
#ifndef PREFLIGHT_TOPOLOGY_H
#define PREFLIGHT_TOPOLOGY_H

#include "machine/machine.h"
#include "job/job.h"

#include <stdio.h>

/* The links and routes (pf_link, pf_route, pf_link_kind) and the network
 * kinds (pf_net_layout, pf_net_kind) are the machine module's (machine/network.h). */

typedef struct pf_topology {
  pf_fabric_kind fabric;
  int nodes, gpn, gpus;     /* job's nodes, GPUs per node, GPUs */
  int nics;                 /* NICs per node as routed (bonded when > GPUs per node) */
  int phys_nics;            /* NIC ports per node in the machine file */
  int nlinks;
  pf_link *links;           /* owned */
  int *slot;                /* owned: partition node slot of each job node (ascending) */
  int span;                 /* largest slot + 1: the part of the network the layout covers */
  int affinity[PF_MAX_GPN]; /* routed NIC of each local GPU */
  int rail_gpu[PF_MAX_GPN]; /* first local GPU on each routed NIC (PXN proxy) */
  int pxn;                  /* inter-node transfers use the destination's rail (NCCL PXN) */
  int nvls;                 /* the NVSwitch reduces (NVLink SHARP) */
  double nvls_scale;        /* NVLS traffic's share of the port line rate over the NVLink share (<= 1) */
  int innet;                /* the first switch reduces (InfiniBand SHARP, CollNet) */
  /* the collective library of the machine (ccl.c) */
  pf_ccl_lib lib;
  const struct pf_ccl_tuner *tuner; /* its tuning constants for the machine file's ccl.version (ccltuner.c) */
  int ll128;                /* the library runs the LL128 protocol on this device */
  int neff;
  pf_ccl_eff eff[PF_CCL_MAX_EFF]; /* measured library efficiencies (machine file) */
  pf_ccl_table tab;         /* the library's measured ring (machine file ccl.table; present = 0: NCCL's constants) */
  int sparse;               /* the mesh links only some GPU pairs: the library's rings follow one GPU order */
  /* layout: first link of each block (fabric ports up and down, mesh pairs, bridges, NICs up and down) */
  int b_pu, b_pd, b_pair, b_br, b_nu, b_nd;
  int mesh;                 /* intra-node links are a mesh (pair links) */
  int bridge;               /* GPUs per NVLink-bridged group (0: none) */
  pf_net_layout net;               /* the network between the NICs: its kind, blocks and layout (machine/network.h) */
  /* per-link scratch of collcost.c, allocated on first use and kept zero between uses (owned; a topology
   * is used by one thread at a time) */
  double *scratch_acc;
  int *scratch_cnt, *scratch_touched, *scratch_sort;
  /* the hash of what it was built from and what it is (pf_comm_init sets it from pf_comm_topo_key; 0: none): the
   * key of collcost.c's memo of jobs */
  unsigned long long memo_key;
} pf_topology;

/* Build the links of a job of `nodes` nodes of machine m placed as pl (seed
 * for the scattered draw); capacities are multiplied by bw_scale (the fit
 * overlay's comm efficiency, 1 = none).  Free with pf_topology_free().
 * PF_EINVAL for impossible shapes, PF_ENOMEM. */
int pf_topology_build_placed(const pf_machine *m, int nodes, pf_placement pl, unsigned long seed, double bw_scale,
                             pf_topology *t);
/* Contiguous placement. */
int pf_topology_build(const pf_machine *m, int nodes, double bw_scale, pf_topology *t);
void pf_topology_free(pf_topology *t);

/* Endpoints: GPUs 0..gpus-1, then one NVSwitch endpoint per node, then one
 * in-network endpoint per node and routed NIC. */
static inline int pf_topology_endpoints(const pf_topology *t) { return t->gpus + t->nodes + t->nodes * t->nics; }
static inline int pf_topology_switch_ep(const pf_topology *t, int node) { return t->gpus + node; }
static inline int pf_topology_net_ep(const pf_topology *t, int node, int rail) {
  return t->gpus + t->nodes + node * t->nics + rail;
}

/* Route from endpoint a to endpoint b; r->n = 0 when a == b.  GPU to GPU
 * on one node: the fabric; on different nodes: PXN hop (if any), NIC,
 * network, NIC.  GPU <-> its node's NVSwitch endpoint: its port; GPU of rail
 * k <-> its node's in-network endpoint k: the NIC link. */
void pf_topology_route(const pf_topology *t, int a, int b, pf_route *r);

/* Smallest capacity on the route (infinity for an empty route). */
double pf_route_bw(const pf_topology *t, const pf_route *r);

static inline int pf_topology_node_of(const pf_topology *t, int gpu) { return gpu / t->gpn; }
static inline int pf_topology_rail_of(const pf_topology *t, int gpu) { return t->affinity[gpu % t->gpn]; }

/* Achievable share of the line rate of an intra-node fabric (the one table;
 * sources in topology.c and docs/communication.md). */
double pf_fabric_efficiency(pf_fabric_kind k);

/* SimGrid platform XML (DTD 4.1): one host "g<i>" per endpoint used at
 * host_flops, the links as SHARED one-direction links "l<id>", and a
 * Full-routing zone with one explicit route per (src, dst) pair in
 * pairs[2k], pairs[2k+1] (every ordered GPU pair when pairs == NULL: only for
 * small jobs).  Only links that some route uses are written, and only the
 * virtual endpoints some pair names.  Returns 0 or PF_EIO / PF_ENOMEM. */
int pf_topology_write_xml(const pf_topology *t, FILE *f, const int *pairs, long npairs, double host_flops);

#endif
