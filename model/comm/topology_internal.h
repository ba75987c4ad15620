/* topology_internal.h - layout helpers shared by topology.c (links) and toproute.c (routes); not part of
 * the public API. */
#ifndef PREFLIGHT_TOPOLOGY_INTERNAL_H
#define PREFLIGHT_TOPOLOGY_INTERNAL_H

#include "topology.h"

/* Physical port (network endpoint) of job node j's routed NIC k. */
static inline int phys_port(const pf_topology *t, int j, int k) {
  return t->slot[j] * t->phys_nics + k * (t->phys_nics / t->nics);
}

#endif
