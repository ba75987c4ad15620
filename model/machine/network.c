/* network.c - the table of network kinds (network.h): the built-in kinds, one
 * file each, registered through the same call as a kind from outside the
 * module, found by the name machine files give in network.topology; and the
 * blocks a kind lays its links out in.
 */
#include "network.h"

#include "netkinds.h"

#include <string.h>

/* The built-in kinds, in the order `valid:` lists them. */
static const pf_net_kind *const builtin[] = {&pf_net_fat_tree, &pf_net_dragonfly, &pf_net_dragonfly_plus,
                                             &pf_net_torus, &pf_net_single};

static const pf_net_kind *table[PF_NET_KINDS_MAX];
static int nkinds = -1; /* -1: the built-ins are not registered yet */

static int add(const pf_net_kind *k) {
  if (!k || !k->name || !k->name[0] || !k->describe)
    return pf_error_set(PF_EINVAL, "network kind \"%s\": a name and a describe function are required",
                        k && k->name ? k->name : "");
  for (int i = 0; i < nkinds; i++)
    if (strcmp(table[i]->name, k->name) == 0)
      return pf_error_set(PF_EINVAL, "network kind \"%s\" is registered already", k->name);
  if (nkinds == PF_NET_KINDS_MAX)
    return pf_error_set(PF_EINVAL, "network kind \"%s\": the table holds %d kinds", k->name, PF_NET_KINDS_MAX);
  table[nkinds++] = k;
  return 0;
}

static void ensure_builtin(void) {
  if (nkinds >= 0) return;
  nkinds = 0;
  for (size_t i = 0; i < sizeof builtin / sizeof *builtin; i++) add(builtin[i]);
}

int pf_net_kind_register(const pf_net_kind *k) {
  ensure_builtin();
  return add(k);
}

const pf_net_kind *pf_net_kind_find(const char *name) {
  ensure_builtin();
  for (int i = 0; i < nkinds; i++)
    if (strcmp(table[i]->name, name) == 0) return table[i];
  return NULL;
}

int pf_net_kind_count(void) {
  ensure_builtin();
  return nkinds;
}

const pf_net_kind *pf_net_kind_at(int i) {
  ensure_builtin();
  return i >= 0 && i < nkinds ? table[i] : NULL;
}

const char *pf_topology_kind_name(const struct pf_net_kind *k) { return k ? k->name : "?"; }

static const char *link_kind_names[] = {"port_up", "port_down", "pair", "nic_up", "nic_down", "up",
                                        "down", "local", "global", "torus"};

const char *pf_link_kind_name(int kind) { return kind >= 0 && kind < PF_LINK_NKINDS ? link_kind_names[kind] : "?"; }

int pf_net_block_add(pf_net_layout *net, const char *name, long switches, long per) {
  if (net->nblocks >= PF_NET_MAX_BLOCKS) { /* sticky: the topology reports it after the layout */
    net->nblocks = PF_NET_MAX_BLOCKS + 1;
    return 0;
  }
  int first = (int)net->nlinks;
  net->block[net->nblocks++] = (pf_net_block){name, first, (int)switches, (int)per};
  net->nlinks += switches * per;
  return first;
}

void pf_net_set_links(const pf_net_layout *net, int first, long n, double bw_Bps, double lat_s, int kind) {
  for (long i = 0; i < n; i++) net->links[first + i] = (pf_link){bw_Bps, lat_s, kind};
}

const pf_net_block *pf_net_block_find(const pf_net_layout *net, const char *name) {
  for (int i = 0; i < net->nblocks && i < PF_NET_MAX_BLOCKS; i++)
    if (strcmp(net->block[i].name, name) == 0) return &net->block[i];
  return NULL;
}
