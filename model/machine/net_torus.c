/* net_torus.c - the torus network kind ("torus", network.h): one router per
 * node on a 1-, 2- or 3-D torus (dims x, y, z), dimension-order routing along
 * the shorter direction (ties go +).
 *
 * Keys (docs/machine-format.md): dims = [x, y, z] (1 to 3 integers from 1 to
 * 100000, required); their product must hold the machine's nodes.
 *
 * Links: six per router (+x, -x, +y, -y, +z, -z; those along a dimension of
 * size 1 unused), each of the link rate, one switch latency per hop
 * (docs/communication.md section 2), for every router a route between the
 * job's nodes can cross: those of the z planes its nodes lie in.
 */
#include "netkinds.h"

#include <stdio.h>
#include <stdlib.h>

static int torus_read(const reader *r, pf_network *n) {
  const config_setting_t *dims = lookup(r, "network.dims");
  if (!dims) return 0;
  int cnt = config_setting_length(dims);
  if (cnt < 1 || cnt > 3)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.network.dims: 1 to 3 integers", r->file, line_of(dims));
  for (int i = 0; i < cnt; i++) {
    const config_setting_t *e = config_setting_get_elem(dims, (unsigned)i);
    if (config_setting_type(e) != CONFIG_TYPE_INT || config_setting_get_int(e) < 1 ||
        config_setting_get_int(e) > 100000)
      return pf_error_set(PF_EPARSE, "%s:%d: machine.network.dims[%d]: an integer from 1 to 100000", r->file,
                          line_of(dims), i);
    n->dims[i] = config_setting_get_int(e);
  }
  return 0;
}

static int torus_check(const reader *r, const pf_machine *m) {
  const pf_network *n = &m->net;
  if (n->dims[0] <= 0) return missing(r, "network.dims");
  long cap = (long)n->dims[0] * (n->dims[1] > 0 ? n->dims[1] : 1) * (n->dims[2] > 0 ? n->dims[2] : 1);
  if (cap < m->nodes)
    return pf_error_set(PF_EPARSE, "%s:%d: machine.network.dims: %ld routers for %d nodes", r->file,
                        line_of(lookup(r, "network.dims")), cap, m->nodes);
  return 0;
}

static void torus_describe(const pf_network *n, char *buf, size_t len) {
  snprintf(buf, len, "%d x %d x %d", n->dims[0], n->dims[1], n->dims[2]);
}

/* The layout: the size of each dimension (1 when not given), the routers laid out and the first
 * neighbour link. */
typedef struct {
  int dims[3];
  long routers;
  int b_nb;
} torus;

static int torus_layout(const pf_machine *m, pf_net_layout *net) {
  torus *t = calloc(1, sizeof *t);
  if (!t) return pf_error_set(PF_ENOMEM, "out of memory");
  net->own = t;
  long cap = 1;
  for (int d = 0; d < 3; d++) {
    t->dims[d] = m->net.dims[d] > 0 ? m->net.dims[d] : 1;
    cap *= t->dims[d];
  }
  if (cap < net->span)
    return pf_error_set(PF_EINVAL, "torus %dx%dx%d holds fewer than %d nodes", t->dims[0], t->dims[1], t->dims[2],
                        net->span);
  /* every router of the z planes the job's nodes lie in: a dimension-order route between two of them
   * stays in those planes but may pass routers beyond the job's last node (around a ring) */
  long plane = (long)t->dims[0] * t->dims[1];
  t->routers = plane * ((net->span - 1) / plane + 1);
  if (t->routers > 200000000L / 6)
    return pf_error_set(PF_EINVAL, "torus %dx%dx%d: %ld routers on the job's routes, too many to lay out", t->dims[0],
                        t->dims[1], t->dims[2], t->routers);
  t->b_nb = pf_net_block_add(net, "neighbour", t->routers, 6);
  return 0;
}

static void torus_build(const pf_machine *m, const pf_net_layout *net) {
  const torus *t = net->own;
  pf_link nb = {net->link_bw_Bps * net->eff, m->net.switch_latency_s, PF_LINK_TORUS};
  for (long nd = 0; nd < t->routers; nd++)
    for (int d = 0; d < 6; d++)
      if (t->dims[d / 2] > 1) net->links[t->b_nb + nd * 6 + d] = nb;
}

static void torus_route(const pf_net_layout *net, int na, int ka, int nb, int kb, pf_route *r) {
  const torus *t = net->own;
  int c[3], d[3], cur = na;
  c[0] = na % t->dims[0]; c[1] = (na / t->dims[0]) % t->dims[1]; c[2] = na / (t->dims[0] * t->dims[1]);
  d[0] = nb % t->dims[0]; d[1] = (nb / t->dims[0]) % t->dims[1]; d[2] = nb / (t->dims[0] * t->dims[1]);
  int stride[3] = {1, t->dims[0], t->dims[0] * t->dims[1]};
  for (int k = 0; k < 3; k++) {
    int L = t->dims[k], fwd = ((d[k] - c[k]) % L + L) % L;
    int dir = fwd <= L - fwd ? 0 : 1, steps = dir == 0 ? fwd : L - fwd;
    for (int s = 0; s < steps; s++) {
      pf_route_push(r, net->links, t->b_nb + cur * 6 + 2 * k + dir);
      c[k] = dir == 0 ? (c[k] + 1) % L : (c[k] - 1 + L) % L;
      cur = c[0] * stride[0] + c[1] * stride[1] + c[2] * stride[2];
    }
  }
}

const pf_net_kind pf_net_torus = {
    .name = "torus",
    .describe = torus_describe,
    .read = torus_read,
    .check = torus_check,
    .layout = torus_layout,
    .build = torus_build,
    .route = torus_route,
};
