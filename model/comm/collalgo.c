/* collalgo.c - the table of collective algorithms (collalgo.h): the
 * built-ins, registered in the order of their ids (collective.h) on first
 * use, then whatever registers at run time; lookup by id and by name.
 */
#include "collalgo.h"

#include "core/core.h"

#include <stdio.h>
#include <string.h>

_Static_assert(PF_COLL_AUTO == 0, "pf_scenario_init leaves --coll-algo at 0: auto");

/* The built-in algorithms, one file each; a row's position is its id - PF_COLL_FIRST. */
extern const pf_coll_algo_desc pf_coll_algo_ring, pf_coll_algo_tree, pf_coll_algo_hier, pf_coll_algo_rabenseifner,
    pf_coll_algo_nvls, pf_coll_algo_collnet, pf_coll_algo_direct;
static const pf_coll_algo_desc *const builtin[] = {
    [PF_COLL_RING - PF_COLL_FIRST] = &pf_coll_algo_ring,
    [PF_COLL_TREE - PF_COLL_FIRST] = &pf_coll_algo_tree,
    [PF_COLL_HIERARCHICAL - PF_COLL_FIRST] = &pf_coll_algo_hier,
    [PF_COLL_RABENSEIFNER - PF_COLL_FIRST] = &pf_coll_algo_rabenseifner,
    [PF_COLL_NVLS - PF_COLL_FIRST] = &pf_coll_algo_nvls,
    [PF_COLL_COLLNET - PF_COLL_FIRST] = &pf_coll_algo_collnet,
    [PF_COLL_DIRECT - PF_COLL_FIRST] = &pf_coll_algo_direct,
};
_Static_assert(sizeof builtin / sizeof builtin[0] == PF_COLL_NBUILTIN - PF_COLL_FIRST, "one row per built-in id");

#define MAX_ALGOS 64
static const pf_coll_algo_desc *table[MAX_ALGOS]; /* by id - PF_COLL_FIRST; borrowed */
static int ntable;
static int registering; /* the built-ins are being registered */

static void builtins(void) {
  if (ntable > 0 || registering) return;
  registering = 1;
  for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++) pf_coll_algo_register(builtin[i]);
  registering = 0;
}

static const pf_coll_algo_desc *find(const char *name) {
  for (int i = 0; i < ntable; i++)
    if (strcmp(table[i]->name, name) == 0) return table[i];
  return NULL;
}

int pf_coll_algo_register(const pf_coll_algo_desc *d) {
  builtins();
  if (!d || !d->name || !d->name[0] || !d->kinds || !d->build)
    return pf_error_set(PF_EINVAL, "collective algorithm: a name, the collectives it implements and a builder are "
                        "required");
  if (!strcmp(d->name, "auto") || !strcmp(d->name, "best") || find(d->name))
    return pf_error_set(PF_EINVAL, "collective algorithm \"%s\": the name is taken", d->name);
  if (ntable == MAX_ALGOS) return pf_error_set(PF_ENOMEM, "collective algorithm \"%s\": the table is full", d->name);
  table[ntable++] = d;
  return PF_COLL_FIRST + ntable - 1;
}

int pf_coll_algo_end(void) {
  builtins();
  return PF_COLL_FIRST + ntable;
}

const pf_coll_algo_desc *pf_coll_algo_get(pf_coll_algo a) {
  builtins();
  return a >= PF_COLL_FIRST && a < PF_COLL_FIRST + ntable ? table[a - PF_COLL_FIRST] : NULL;
}

const char *pf_coll_algo_name(pf_coll_algo a) {
  if (a == PF_COLL_AUTO) return "auto";
  if (a == PF_COLL_BEST) return "best";
  const pf_coll_algo_desc *d = pf_coll_algo_get(a);
  return d ? d->name : "?";
}

int pf_coll_algo_parse(const char *s, pf_coll_algo *out) {
  for (int a = 0; a < pf_coll_algo_end(); a++)
    if (strcmp(s, pf_coll_algo_name(a)) == 0) { *out = a; return 0; }
  char names[512] = "";
  size_t n = 0;
  for (int a = PF_COLL_FIRST; a < pf_coll_algo_end() && n < sizeof names; a++) {
    int w = snprintf(names + n, sizeof names - n, ", %s", pf_coll_algo_name(a));
    if (w > 0) n += (size_t)w;
  }
  return pf_error_set(PF_EINVAL, "--coll-algo \"%s\": valid: auto (the library's tuner), best (cheapest by preflight's "
                      "cost)%s", s, names);
}

pf_coll_algo pf_coll_algo_default(pf_coll_kind kind) {
  for (int a = PF_COLL_FIRST; a < pf_coll_algo_end(); a++)
    if (pf_coll_algo_get(a)->kinds & PF_COLL_KIND_BIT(kind)) return a;
  return PF_COLL_AUTO;
}
