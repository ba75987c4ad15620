/* toproute.c - routes on the job's topology (topology.h; the links are built by topology.c, formulas in
 * docs/communication.md section 2): the intra-node fabric (mesh, switch, NVLink bridges), NCCL's PXN hop to
 * the destination's rail, the NICs, and the network (fat tree with D-mod-k on leaf-ordered endpoint
 * numbers, dragonfly and dragonfly+ between switches and groups, torus dimension-order), plus the routes to
 * the in-network reduction endpoints.  O(hops) per route. */
#include "topology.h"

#include "topology_internal.h"

#include <math.h>

static inline void push(const pf_topology *t, pf_route *r, int l) {
  if (r->n < PF_ROUTE_MAX) {
    r->link[r->n++] = l;
    r->lat_s += t->links[l].lat_s;
  }
}

/* Fat tree: leaf and leaf-ordered endpoint number of job node j's NIC k. */
static void ft_place(const pf_topology *t, int j, int k, int *leaf, int *ep) {
  if (t->lpr > 0) {
    int pr = k * (t->phys_nics / t->nics), s = t->slot[j];
    *leaf = pr * t->lpr + s / t->E;
    *ep = *leaf * t->E + s % t->E;
  } else {
    *ep = phys_port(t, j, k);
    *leaf = *ep / t->E;
  }
}

static void route_fat_tree(const pf_topology *t, int na, int ka, int nb, int kb, pf_route *r) {
  int la, lb, ea, eb;
  ft_place(t, na, ka, &la, &ea);
  ft_place(t, nb, kb, &lb, &eb);
  (void)ea;
  if (la == lb) return;
  int j = eb % t->U;
  int pod_a = la / t->lpp, pod_b = lb / t->lpp;
  push(t, r, t->b_lu + la * t->U + j);
  if (pod_a != pod_b && t->C > 0) {
    int c = (eb / t->U) % t->C;
    push(t, r, t->b_au + (pod_a * t->U + j) * t->C + c);
    push(t, r, t->b_ad + (pod_b * t->U + j) * t->C + c);
  }
  push(t, r, t->b_ld + lb * t->U + j);
}

static void route_torus(const pf_topology *t, int na, int nb, pf_route *r) {
  int c[3], d[3], cur = na;
  c[0] = na % t->dims[0]; c[1] = (na / t->dims[0]) % t->dims[1]; c[2] = na / (t->dims[0] * t->dims[1]);
  d[0] = nb % t->dims[0]; d[1] = (nb / t->dims[0]) % t->dims[1]; d[2] = nb / (t->dims[0] * t->dims[1]);
  int stride[3] = {1, t->dims[0], t->dims[0] * t->dims[1]};
  for (int k = 0; k < 3; k++) {
    int L = t->dims[k], fwd = ((d[k] - c[k]) % L + L) % L;
    int dir = fwd <= L - fwd ? 0 : 1, steps = dir == 0 ? fwd : L - fwd;
    for (int s = 0; s < steps; s++) {
      push(t, r, t->b_lu + cur * 6 + 2 * k + dir);
      c[k] = dir == 0 ? (c[k] + 1) % L : (c[k] - 1 + L) % L;
      cur = c[0] * stride[0] + c[1] * stride[1] + c[2] * stride[2];
    }
  }
}

/* Job node na's NIC ka to job node nb's NIC kb. */
static void route_net(const pf_topology *t, int na, int ka, int nb, int kb, pf_route *r) {
  int pa = phys_port(t, na, ka), pb = phys_port(t, nb, kb);
  push(t, r, t->b_nu + na * t->nics + ka);
  switch (t->kind) {
  case PF_TOPO_FAT_TREE: route_fat_tree(t, na, ka, nb, kb, r); break;
  case PF_TOPO_DRAGONFLY: {
    int sa = pa / t->eps, sb = pb / t->eps;
    if (sa == sb) break;
    int ga = sa / t->S, gb = sb / t->S;
    if (ga == gb) {
      push(t, r, t->b_lo + sa);
      push(t, r, t->b_li + sb);
    } else {
      push(t, r, t->b_go + sa);
      push(t, r, t->b_gp + ga * t->ngroups + gb);
      push(t, r, t->b_gi + sb);
    }
    break;
  }
  case PF_TOPO_DRAGONFLY_PLUS: {
    int la = pa / t->eps, lb = pb / t->eps;
    if (la == lb) break;
    int ga = la / t->S, gb = lb / t->S, j = pb % t->K;
    push(t, r, t->b_lu + la * t->K + j);
    if (ga != gb) {
      push(t, r, t->b_go + ga * t->K + j);
      push(t, r, t->b_gp + ga * t->ngroups + gb);
      push(t, r, t->b_gi + gb * t->K + j);
    }
    push(t, r, t->b_ld + lb * t->K + j);
    break;
  }
  case PF_TOPO_TORUS: route_torus(t, t->slot[na], t->slot[nb], r); break;
  case PF_TOPO_SINGLE: break;
  }
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
