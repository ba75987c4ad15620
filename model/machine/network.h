/* network.h - network kinds: one file per kind behind one table of
 * functions, in the style of SimGrid's one class per zone kind (FatTreeZone,
 * DragonflyZone).
 *
 * A kind owns everything that differs between networks: its keys of the
 * machine file's network group (read, checked, described in one line for
 * `machines show`), and the part of a job's topology between the NIC ports:
 * the links of its switches, their capacities, and the route from one NIC
 * port to another.  The job's topology (comm/topology.h) builds the rest
 * (placement, the node's fabric, the NICs, the in-network endpoints) and asks
 * the kind for the middle of every route that leaves a node.  The formulas of
 * each kind are in its file and in docs/communication.md section 2.
 *
 * The built-in kinds (net_fat_tree.c, net_dragonfly.c, net_dragonfly_plus.c,
 * net_torus.c, net_single.c) are one table in network.c and are registered
 * through pf_net_kind_register(), the call a kind from outside model/ uses
 * too (tests/plugin/toy_net.c); machine files name a kind by its `name`.
 */
#ifndef PREFLIGHT_NETWORK_H
#define PREFLIGHT_NETWORK_H

#include "cfgkeys.h"
#include "hardware.h"

#include <stddef.h>

/* ---- links and routes of a job's topology ---- */

typedef enum {
  PF_LINK_PORT_UP,    /* GPU -> intra-node fabric (all its fabric links) */
  PF_LINK_PORT_DOWN,  /* intra-node fabric -> GPU */
  PF_LINK_PAIR,       /* direct GPU -> GPU link group of a mesh, or an NVLink bridge */
  PF_LINK_NIC_UP,     /* NIC -> first switch */
  PF_LINK_NIC_DOWN,   /* last switch -> NIC */
  PF_LINK_UP,         /* fat tree / dragonfly+: towards the spines / core */
  PF_LINK_DOWN,       /* fat tree / dragonfly+: towards the leaves */
  PF_LINK_LOCAL,      /* dragonfly: a switch's ports into its group (out or in) */
  PF_LINK_GLOBAL,     /* dragonfly(+): a switch's global ports, or a group pair */
  PF_LINK_TORUS,      /* torus (or ring) neighbour link */
  PF_LINK_NKINDS
} pf_link_kind;

/* "nic_up", "local", ...; static. */
const char *pf_link_kind_name(int kind);

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
  int inter;                /* 1 when the route leaves the node (the network), else 0 */
} pf_route;

/* Append link l (of the array links) to r and add its latency; a route
 * longer than PF_ROUTE_MAX keeps its first links. */
static inline void pf_route_push(pf_route *r, const pf_link *links, int l) {
  if (r->n < PF_ROUTE_MAX) {
    r->link[r->n++] = l;
    r->lat_s += links[l].lat_s;
  }
}

/* ---- the network part of one job's topology ---- */

/* A run of links a kind lays out: `switches` switches of `per` links each;
 * the j-th link of switch s is link first + s x per + j. */
typedef struct pf_net_block {
  const char *name;    /* "leaf_up", "global_out", ...; static */
  int first, switches, per;
} pf_net_block;

#define PF_NET_MAX_BLOCKS 8

typedef struct pf_net_layout {
  const struct pf_net_kind *kind; /* static */
  /* set by the topology before layout */
  int span;                 /* partition node slots the job covers (its largest slot + 1) */
  int phys_nics;            /* NIC ports per node (machine file) */
  double link_bw_Bps;       /* one switch-to-switch link's line rate (network.link_rate, else the NIC's) */
  double eff;               /* achievable share of the line rate, times the fit overlay's scale */
  /* laid out by the kind (pf_net_block_add) */
  long nlinks;              /* the topology's links so far: the kind's blocks start here */
  int nblocks;
  pf_net_block block[PF_NET_MAX_BLOCKS];
  void *own;                /* the kind's layout for its route (owned: freed with free()) */
  /* set by the topology after layout */
  pf_link *links;           /* the topology's links (borrowed) */
} pf_net_layout;

/* A block of switches x per links after the links laid out so far; returns
 * its first link id.  Past PF_NET_MAX_BLOCKS blocks it adds nothing and
 * leaves nblocks above the limit, which the topology reports (PF_EINVAL). */
int pf_net_block_add(pf_net_layout *net, const char *name, long switches, long per);
/* Links first .. first + n - 1 of net->links get capacity bw_Bps, latency
 * lat_s and kind (pf_link_kind). */
void pf_net_set_links(const pf_net_layout *net, int first, long n, double bw_Bps, double lat_s, int kind);
/* The block of that name, or NULL. */
const pf_net_block *pf_net_block_find(const pf_net_layout *net, const char *name);

/* ---- a network kind ---- */

typedef struct pf_net_kind {
  const char *name; /* network.topology in machine files: "fat_tree" */
  /* Its parameters in one line for `machines show`, into buf of len bytes. */
  void (*describe)(const pf_network *n, char *buf, size_t len);
  /* The functions below may be NULL: nothing to read, to check, to lay out,
   * to build; a route that crosses one switch only (net_single.c). */
  /* Read the kind's keys of the network group (paths "network.KEY") into n,
   * defaults first.  The shared keys (tech, link_rate, switch_latency,
   * nic_latency, in_network_reduction) are read before.  0 or PF_E*. */
  int (*read)(const pf_cfg_reader *r, pf_network *n);
  /* Check the kind's keys against the machine (required keys, the NIC ports
   * it must hold).  0 or PF_E*. */
  int (*check)(const pf_cfg_reader *r, const pf_machine *m);
  /* Lay out the kind's links for a job on m: blocks and net->own.
   * PF_EINVAL when the job does not fit, PF_ENOMEM. */
  int (*layout)(const pf_machine *m, pf_net_layout *net);
  /* Capacity, latency and kind of every link laid out, into net->links
   * (pf_net_set_links). */
  void (*build)(const pf_machine *m, const pf_net_layout *net);
  /* Append to r the links from NIC port nic_a of partition node slot_a to
   * NIC port nic_b of slot_b (nic: the port's index in its node), with
   * pf_route_push(r, net->links, id); nothing when both hang off one switch. */
  void (*route)(const pf_net_layout *net, int slot_a, int nic_a, int slot_b, int nic_b, pf_route *r);
} pf_net_kind;

#define PF_NET_KINDS_MAX 32

/* Add a kind to the table (borrowed: it must outlive every machine that
 * names it; a static const object).  The built-in kinds are registered
 * first, on the first call of any pf_net_kind_* function.  Call it before
 * any thread starts (a constructor, or main).  PF_EINVAL: a name already
 * taken, no name or describe, or a full table (PF_NET_KINDS_MAX). */
int pf_net_kind_register(const pf_net_kind *k);
/* The kind called name, or NULL. */
const pf_net_kind *pf_net_kind_find(const char *name);
/* Kinds in the order registered (the built-ins first): i in [0, count). */
int pf_net_kind_count(void);
const pf_net_kind *pf_net_kind_at(int i);

#endif
