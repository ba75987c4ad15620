/* fullcall.c - collective patterns as per-actor programs for the full engine (see fullcall.h). */
#include "fullcall.h"

#include <stdlib.h>
#include <string.h>

int pf_fullcalls_init(pf_fullcalls *fc, const pf_topology *t, int P) {
  memset(fc, 0, sizeof *fc);
  fc->nep = pf_topology_endpoints(t);
  fc->tgpus = t->gpus;
  fc->nids = fc->nep + (P + 1) * (fc->nep - fc->tgpus);
  fc->calls = calloc((size_t)fc->nids * PF_NCALL, sizeof *fc->calls);
  return fc->calls ? 0 : -1;
}

void pf_fullcalls_free(pf_fullcalls *fc) {
  if (fc->calls)
    for (int i = 0; i < fc->nids * PF_NCALL; i++) {
      for (int k = 0; k < fc->calls[i].n; k++) {
        free(fc->calls[i].steps[k].out_dst);
        free(fc->calls[i].steps[k].out_bytes);
        free(fc->calls[i].steps[k].in_src);
      }
      free(fc->calls[i].steps);
    }
  free(fc->calls);
  free(fc->sync_size);
  memset(fc, 0, sizeof *fc);
}

int pf_fullcalls_actor(const pf_fullcalls *fc, int ep, int stage) {
  return ep < fc->tgpus ? ep : fc->nep + stage * (fc->nep - fc->tgpus) + (ep - fc->tgpus);
}

int pf_fullcalls_host(const pf_fullcalls *fc, int id) {
  return id < fc->nep ? id : fc->tgpus + (id - fc->nep) % (fc->nep - fc->tgpus);
}

long pf_fullcall_pattern_events(const pf_coll_pattern *pat) {
  long n = 0;
  for (int k = 0; pat && k < pat->nsteps; k++) n += pat->steps[k].nflows;
  return n;
}

static int uf_find(int *up, int a) {
  while (up[a] != a) a = up[a] = up[up[a]];
  return a;
}

/* The actors one pattern step connects (in: nout[g] + nin[g] > 0), as barrier
 * groups: sync[g] becomes the index of actor g's group's barrier, -1 when
 * the actor is alone or takes no part. */
static int step_sync(pf_fullcalls *fc, const pf_coll_step *st, int stage, const int *nout, const int *nin, int *up,
                     int *sync) {
  int G = fc->nids;
  for (int g = 0; g < G; g++) { up[g] = g; sync[g] = 0; }
  for (int i = 0; i < st->nflows; i++) {
    int a = uf_find(up, pf_fullcalls_actor(fc, st->flows[i].src, stage));
    int b = uf_find(up, pf_fullcalls_actor(fc, st->flows[i].dst, stage));
    if (a != b) up[a] = b;
  }
  for (int g = 0; g < G; g++)
    if (nout[g] || nin[g]) sync[uf_find(up, g)]++; /* group sizes, at the roots */
  for (int g = 0; g < G; g++) {
    if (up[g] != g) continue;
    if (sync[g] < 2) { sync[g] = -1; continue; }
    if (fc->nsync == fc->capsync) {
      int cap = fc->capsync ? 2 * fc->capsync : 256, *v = realloc(fc->sync_size, (size_t)cap * sizeof *v);
      if (!v) return -1;
      fc->sync_size = v;
      fc->capsync = cap;
    }
    fc->sync_size[fc->nsync] = sync[g];
    sync[g] = fc->nsync++;
  }
  return 0;
}

int pf_fullcalls_add(pf_fullcalls *fc, const pf_topology *t, const pf_coll_pattern *pat, int c, int stage) {
  if (!pat) return 0;
  int G = fc->nids, rc = 0;
  int *nout = malloc((size_t)G * sizeof *nout), *nin = malloc((size_t)G * sizeof *nin);
  int *up = malloc((size_t)G * sizeof *up), *cnt = malloc((size_t)G * sizeof *cnt);
  for (int k = 0; k < pat->nsteps && nout && nin && up && cnt && rc == 0; k++) {
    const pf_coll_step *st = &pat->steps[k];
    /* The step's repetitions as one transfer per pair: every repetition moves the same bytes over the same
     * pairs, and the default engine prices a step as reps x (longest route latency + library latency +
     * bytes / share).  One flow of reps x bytes per pair, then a sleep of the other reps - 1 route latencies
     * and the reps library latencies, costs the same under a steady share with reps times fewer events. */
    double maxlat = 0, extra = pf_coll_replay_extra_lat(t, pat, k, &maxlat);
    double base = k == 0 ? pf_coll_replay_base(pat) : 0, sleep = st->reps * extra + (st->reps - 1) * maxlat;
    memset(nout, 0, (size_t)G * sizeof *nout);
    memset(nin, 0, (size_t)G * sizeof *nin);
    for (int i = 0; i < st->nflows; i++) {
      nout[pf_fullcalls_actor(fc, st->flows[i].src, stage)]++;
      nin[pf_fullcalls_actor(fc, st->flows[i].dst, stage)]++;
    }
    for (int g = 0; g < G && rc == 0; g++) {
      if (nout[g] == 0 && nin[g] == 0) continue;
      pf_fullcall *gc = &fc->calls[g * PF_NCALL + c];
      pf_fullstep *ns = realloc(gc->steps, (size_t)(gc->n + 1) * sizeof *ns);
      if (!ns) { rc = -1; break; }
      gc->steps = ns;
      pf_fullstep *gs = &gc->steps[gc->n++];
      memset(gs, 0, sizeof *gs);
      gs->sleep_s = sleep;
      gs->base_s = base;
      gs->sync = -1;
      gs->out_dst = malloc((size_t)(nout[g] + 1) * sizeof *gs->out_dst);
      gs->out_bytes = malloc((size_t)(nout[g] + 1) * sizeof *gs->out_bytes);
      gs->in_src = malloc((size_t)(nin[g] + 1) * sizeof *gs->in_src);
      if (!gs->out_dst || !gs->out_bytes || !gs->in_src) rc = -1;
    }
    if (rc < 0) break;
    /* steps that this pattern step added are the last of each actor's list */
    pf_route r;
    for (int i = 0; i < st->nflows; i++) {
      const pf_flow *f = &st->flows[i];
      int as = pf_fullcalls_actor(fc, f->src, stage), ad = pf_fullcalls_actor(fc, f->dst, stage);
      pf_fullcall *co = &fc->calls[as * PF_NCALL + c], *ci = &fc->calls[ad * PF_NCALL + c];
      pf_fullstep *so = &co->steps[co->n - 1], *si = &ci->steps[ci->n - 1];
      pf_topology_route(t, f->src, f->dst, &r);
      so->out_dst[so->nout] = ad;
      so->out_bytes[so->nout++] = st->reps * f->bytes * pf_coll_replay_scale(pat, r.inter);
      si->in_src[si->nin++] = as;
    }
    if (step_sync(fc, st, stage, nout, nin, up, cnt) < 0) { rc = -1; break; }
    for (int g = 0; g < G; g++)
      if (nout[g] || nin[g]) fc->calls[g * PF_NCALL + c].steps[fc->calls[g * PF_NCALL + c].n - 1].sync = cnt[uf_find(up, g)];
  }
  if (!nout || !nin || !up || !cnt) rc = -1;
  free(nout);
  free(nin);
  free(up);
  free(cnt);
  return rc;
}
