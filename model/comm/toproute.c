/* toproute.c - routes on the job's topology (topology.h; the links are built by topology.c, formulas in
 * docs/communication.md section 2): the intra-node fabric (mesh, switch, NVLink bridges), NCCL's PXN hop to
 * the destination's rail, the NICs, and between the NICs the route of the machine's network kind
 * (machine/network.h: fat tree D-mod-k, dragonfly and dragonfly+ between switches and groups, torus
 * dimension-order, ...), plus the routes to the in-network reduction endpoints.  O(hops) per route. */
#include "topology.h"

#include <math.h>

static inline void push(const pf_topology *t, pf_route *r, int l) { pf_route_push(r, t->links, l); }

/* Job node na's NIC ka to job node nb's NIC kb: NIC up, the network kind's route between the two NIC ports
 * (physical port index: routed NIC x bonded ports per NIC), NIC down. */
static void route_net(const pf_topology *t, int na, int ka, int nb, int kb, pf_route *r) {
  push(t, r, t->b_nu + na * t->nics + ka);
  const pf_net_kind *k = t->net.kind;
  int step = t->phys_nics / t->nics;
  if (k->route) k->route(&t->net, t->slot[na], ka * step, t->slot[nb], kb * step, r);
  push(t, r, t->b_nd + nb * t->nics + kb);
  r->inter = 1;
}

/* GPU a to GPU b of the same node over the fabric. */
static void route_intra(const pf_topology *t, int a, int b, pf_route *r) {
  if (a == b) return;
  int node = a / t->gpn, la = a % t->gpn, lb = b % t->gpn;
  if (t->bridge > 0 && la / t->bridge == lb / t->bridge) {
    int j = lb % t->bridge, i = la % t->bridge;
    push(t, r, t->b_br + a * (t->bridge - 1) + (j < i ? j : j - 1));
    return;
  }
  if (t->b_pd == t->b_pu) return; /* no fabric */
  push(t, r, t->b_pu + a);
  if (t->mesh) push(t, r, t->b_pair + (node * t->gpn + la) * t->gpn + lb);
  push(t, r, t->b_pd + b);
}

void pf_topology_route(const pf_topology *t, int a, int b, pf_route *r) {
  r->n = 0;
  r->lat_s = 0;
  r->inter = 0;
  if (a == b) return;
  int G = t->gpus;
  if (a >= G || b >= G) { /* one end is an in-switch reduction endpoint of a's or b's node */
    int gpu = a < G ? a : b, ep = a < G ? b : a, up = a < G;
    int node = gpu / t->gpn;
    if (ep < G + t->nodes) { /* NVSwitch */
      if (t->b_pd > t->b_pu) push(t, r, up ? t->b_pu + gpu : t->b_pd + gpu);
      return;
    }
    int k = (ep - G - t->nodes) % t->nics, proxy = node * t->gpn + t->rail_gpu[k];
    if (up) {
      route_intra(t, gpu, proxy, r);
      push(t, r, t->b_nu + node * t->nics + k);
    } else {
      push(t, r, t->b_nd + node * t->nics + k);
      route_intra(t, proxy, gpu, r);
    }
    r->inter = 1;
    return;
  }
  int na = a / t->gpn, nb = b / t->gpn;
  if (na == nb) { route_intra(t, a, b, r); return; }
  int kb = pf_topology_rail_of(t, b);
  if (t->pxn) { /* NCCL PXN: hop to the GPU on the destination's rail, leave through its NIC */
    route_intra(t, a, na * t->gpn + t->rail_gpu[kb], r);
    route_net(t, na, kb, nb, kb, r);
  } else {
    route_net(t, na, pf_topology_rail_of(t, a), nb, kb, r);
  }
}

double pf_route_bw(const pf_topology *t, const pf_route *r) {
  double bw = INFINITY;
  for (int i = 0; i < r->n; i++) bw = fmin(bw, t->links[r->link[i]].bw_Bps);
  return bw;
}
