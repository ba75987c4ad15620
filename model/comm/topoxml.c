/* topoxml.c - the job's topology as a SimGrid platform (DTD 4.1) for
 * `--engine full` and the cross-checks of tests/unit/test_topology.c.
 *
 * One host per GPU, and one per virtual in-network endpoint a route names
 * (NVSwitch reduction, switch reduction: see topology.h); every used link a
 * SHARED one-direction <link> with our capacity and latency; a Full-routing
 * zone with one explicit route per communicating pair, so SimGrid shares
 * exactly the links the default engine counts (shared/research/
 * simgrid-notes.md section 2: Full zones with explicit routes are how
 * hierarchical nodes must be written in 3.32).
 */
#include "topology.h"

#include "core/core.h"

#include <stdlib.h>

int pf_topology_write_xml(const pf_topology *t, FILE *f, const int *pairs, long npairs, double host_flops) {
  int nep = pf_topology_endpoints(t);
  unsigned char *used = calloc((size_t)(t->nlinks > 0 ? t->nlinks : 1), 1);
  unsigned char *host = calloc((size_t)nep, 1);
  if (!used || !host) { free(used); free(host); return pf_error_set(PF_ENOMEM, "out of memory"); }
  long np = pairs ? npairs : (long)t->gpus * t->gpus;
  pf_route r;
  for (long k = 0; k < np; k++) {
    int a = pairs ? pairs[2 * k] : (int)(k / t->gpus), b = pairs ? pairs[2 * k + 1] : (int)(k % t->gpus);
    if (a < 0 || b < 0 || a >= nep || b >= nep) continue;
    host[a] = host[b] = 1;
    pf_topology_route(t, a, b, &r);
    for (int i = 0; i < r.n; i++) used[r.link[i]] = 1;
  }
  fprintf(f, "<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
             "<platform version=\"4.1\">\n<zone id=\"job\" routing=\"Full\">\n");
  for (int g = 0; g < nep; g++)
    if (g < t->gpus || host[g]) fprintf(f, "<host id=\"g%d\" speed=\"%.17gf\"/>\n", g, host_flops);
  for (int l = 0; l < t->nlinks; l++)
    if (used[l])
      fprintf(f, "<link id=\"l%d\" bandwidth=\"%.17gBps\" latency=\"%.17gs\" sharing_policy=\"SHARED\"/>\n", l,
              t->links[l].bw_Bps, t->links[l].lat_s);
  for (long k = 0; k < np; k++) {
    int a = pairs ? pairs[2 * k] : (int)(k / t->gpus), b = pairs ? pairs[2 * k + 1] : (int)(k % t->gpus);
    if (a == b || a < 0 || b < 0 || a >= nep || b >= nep) continue;
    pf_topology_route(t, a, b, &r);
    fprintf(f, "<route src=\"g%d\" dst=\"g%d\" symmetrical=\"NO\">", a, b);
    for (int i = 0; i < r.n; i++) fprintf(f, "<link_ctn id=\"l%d\"/>", r.link[i]);
    fprintf(f, "</route>\n");
  }
  fprintf(f, "</zone>\n</platform>\n");
  free(used);
  free(host);
  return ferror(f) ? pf_error_set(PF_EIO, "writing the SimGrid platform failed") : 0;
}
