/* collective.c - collectives as flow patterns on the topology, their cost with
 * contention, and their overlap in time.
 *
 * Algorithms (each a list of steps of concurrent flows, see collective.h):
 *  - ring (Patarasuk & Yuan 2009; NCCL/RCCL's ring): p ranks in rank order,
 *    each step every rank sends S/p to the next; all-reduce 2(p-1) steps,
 *    reduce-scatter and all-gather p-1.  Per-rank traffic 2(p-1)/p S (AR).
 *  - double binary tree (Sanders, Speck & Traeff 2009; NCCL >= 2.4 for
 *    all-reduce): an intra-node chain to a leader per node, and two binary
 *    trees over the nodes' leaders, each carrying half the buffer, reduce up
 *    and broadcast down pipelined; modelled as all tree edges streaming at
 *    once (S/2 per tree edge and direction, S per chain edge and direction)
 *    with 2 x (depth + chain length) latency terms.
 *  - hierarchical (Horovod / NCCL's 2-D scheme): intra-node reduce-scatter
 *    ring over the node's k members, inter-node ring over the q nodes for
 *    each local index on S/k bytes (one ring per NIC rail), intra-node
 *    all-gather.
 *  - Rabenseifner (Thakur, Rabenseifner & Gropp 2005): recursive-halving
 *    reduce-scatter and recursive-doubling all-gather over the largest power
 *    of two, the remaining ranks folded in before and after.
 * Cost: T = sum over steps of reps x (lat_mult x max route latency +
 * max_l bytes_l / B_l), bytes_l the bytes all concurrent groups send over
 * directed link l in one repetition.  The research notes (simgrid-notes.md
 * 4.1, 4.3) measured this formula against SimGrid's DES: identical on fat
 * trees and flat networks, within 0.1-11 % (high) on dragonflies.
 *
 * Choice (sc->collective == auto) follows NCCL/RCCL's default tuner: for
 * all-reduce the faster of ring and tree by its cost model (here: ours, on
 * the actual routes); reduce-scatter and all-gather always ring.  NVLS,
 * CollNet/SHARP and PAT need hardware or versions we do not assume.
 *
 * Overlap in time (pf_coll_timeline): a fluid model in which every active
 * phase progresses at 1 / T(load of all active phases); see collective.h.
 */
#include "preflight/collective.h"

#include "preflight/error.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const char *pf_coll_kind_name(pf_coll_kind k) {
  return k == PF_ALLREDUCE ? "all-reduce" : k == PF_REDUCE_SCATTER ? "reduce-scatter" : "all-gather";
}

/* ---------- pattern construction ---------- */

void pf_coll_pattern_free(pf_coll_pattern *pat) {
  for (int i = 0; i < pat->nsteps; i++) free(pat->steps[i].flows);
  free(pat->steps);
  memset(pat, 0, sizeof *pat);
}

static pf_coll_step *new_step(pf_coll_pattern *pat, int reps, double lat_mult) {
  if (pat->nsteps == pat->cap) {
    int cap = pat->cap ? 2 * pat->cap : 8;
    pf_coll_step *s = realloc(pat->steps, (size_t)cap * sizeof *s);
    if (!s) return NULL;
    pat->steps = s;
    pat->cap = cap;
  }
  pf_coll_step *st = &pat->steps[pat->nsteps++];
  memset(st, 0, sizeof *st);
  st->reps = reps;
  st->lat_mult = lat_mult;
  return st;
}

static int add_flow(pf_coll_step *st, int src, int dst, double bytes) {
  if (src == dst || bytes <= 0) return 0;
  if (st->nflows == st->cap) {
    int cap = st->cap ? 2 * st->cap : 64;
    pf_flow *f = realloc(st->flows, (size_t)cap * sizeof *f);
    if (!f) return -1;
    st->flows = f;
    st->cap = cap;
  }
  st->flows[st->nflows++] = (pf_flow){src, dst, bytes};
  return 0;
}

#define STEP_OR_FAIL(st, pat, reps, lm) \
  do { if (!((st) = new_step((pat), (reps), (lm)))) return -1; } while (0)
#define FLOW_OR_FAIL(st, a, b, by) \
  do { if (add_flow((st), (a), (b), (by)) < 0) return -1; } while (0)

static int build_ring(pf_coll_pattern *pat, pf_coll_kind kind, double S, const int *G, int ng, int p) {
  if (p < 2) return 0;
  pf_coll_step *st;
  STEP_OR_FAIL(st, pat, (kind == PF_ALLREDUCE ? 2 : 1) * (p - 1), 1.0);
  for (int g = 0; g < ng; g++)
    for (int i = 0; i < p; i++) FLOW_OR_FAIL(st, G[g * p + i], G[g * p + (i + 1) % p], S / p);
  return 0;
}

/* Members per node if every group is made of whole, consecutive per-node
 * blocks of the same size k; 0 otherwise. */
static int members_per_node(const pf_topology *t, const int *G, int ng, int p) {
  int k = 1;
  while (k < p && pf_topology_node_of(t, G[k]) == pf_topology_node_of(t, G[0])) k++;
  if (p % k != 0) return 0;
  for (int g = 0; g < ng; g++)
    for (int c = 0; c < p / k; c++) {
      int node = pf_topology_node_of(t, G[g * p + c * k]);
      for (int i = 1; i < k; i++)
        if (pf_topology_node_of(t, G[g * p + c * k + i]) != node) return 0;
      if (c > 0 && node == pf_topology_node_of(t, G[g * p + (c - 1) * k])) return 0;
    }
  return k;
}

static int intra_ring(pf_coll_pattern *pat, double S, const int *G, int ng, int p, int k) {
  pf_coll_step *st;
  STEP_OR_FAIL(st, pat, k - 1, 1.0);
  for (int g = 0; g < ng; g++)
    for (int c = 0; c < p / k; c++)
      for (int i = 0; i < k; i++) FLOW_OR_FAIL(st, G[g * p + c * k + i], G[g * p + c * k + (i + 1) % k], S / k);
  return 0;
}

static int build_hier(const pf_topology *t, pf_coll_pattern *pat, pf_coll_kind kind, double S, const int *G, int ng,
                      int p) {
  int k = members_per_node(t, G, ng, p);
  if (k == 0) { pat->algo = PF_COLL_RING; return build_ring(pat, kind, S, G, ng, p); }
  int q = p / k;
  if (k > 1 && kind != PF_ALLGATHER && intra_ring(pat, S, G, ng, p, k) < 0) return -1;
  if (q > 1) {
    pf_coll_step *st;
    STEP_OR_FAIL(st, pat, (kind == PF_ALLREDUCE ? 2 : 1) * (q - 1), 1.0);
    for (int g = 0; g < ng; g++)
      for (int j = 0; j < k; j++)
        for (int c = 0; c < q; c++)
          FLOW_OR_FAIL(st, G[g * p + c * k + j], G[g * p + ((c + 1) % q) * k + j], S / ((double)k * q));
  }
  if (k > 1 && kind != PF_REDUCE_SCATTER && intra_ring(pat, S, G, ng, p, k) < 0) return -1;
  return 0;
}

static int build_tree(const pf_topology *t, pf_coll_pattern *pat, double S, const int *G, int ng, int p) {
  if (p < 2) return 0;
  int k = members_per_node(t, G, ng, p);
  if (k == 0) k = 1;
  int q = p / k, depth = 0;
  while ((2 << depth) <= q) depth++; /* floor(log2 q) */
  pf_coll_step *st;
  STEP_OR_FAIL(st, pat, 1, fmax(1.0, 2.0 * (depth + k - 1)));
  for (int g = 0; g < ng; g++) {
    const int *M = G + (size_t)g * p;
    for (int c = 0; c < q; c++) /* chain to the node's leader: reduce up, broadcast down */
      for (int i = 0; i + 1 < k; i++) {
        FLOW_OR_FAIL(st, M[c * k + i + 1], M[c * k + i], S);
        FLOW_OR_FAIL(st, M[c * k + i], M[c * k + i + 1], S);
      }
    for (int i = 1; i < q; i++) { /* tree 1: heap order; tree 2: its mirror image */
      int par = (i - 1) / 2;
      FLOW_OR_FAIL(st, M[i * k], M[par * k], S / 2);
      FLOW_OR_FAIL(st, M[par * k], M[i * k], S / 2);
      int i2 = q - 1 - i, par2 = q - 1 - par;
      FLOW_OR_FAIL(st, M[i2 * k], M[par2 * k], S / 2);
      FLOW_OR_FAIL(st, M[par2 * k], M[i2 * k], S / 2);
    }
  }
  return 0;
}

static int build_rab(pf_coll_pattern *pat, pf_coll_kind kind, double S, const int *G, int ng, int p) {
  if (p < 2) return 0;
  int p2 = 1;
  while (2 * p2 <= p) p2 *= 2;
  int r = p - p2;
  pf_coll_step *st;
  if (r > 0 && kind != PF_ALLGATHER) {
    STEP_OR_FAIL(st, pat, 1, 1.0);
    for (int g = 0; g < ng; g++)
      for (int i = 0; i < r; i++) FLOW_OR_FAIL(st, G[g * p + p2 + i], G[g * p + i], S);
  }
  if (kind != PF_ALLGATHER)
    for (int d = p2 / 2; d >= 1; d /= 2) {
      STEP_OR_FAIL(st, pat, 1, 1.0);
      for (int g = 0; g < ng; g++)
        for (int i = 0; i < p2; i++) FLOW_OR_FAIL(st, G[g * p + i], G[g * p + (i ^ d)], S * d / p2);
    }
  if (kind != PF_REDUCE_SCATTER)
    for (int d = 1; d < p2; d *= 2) {
      STEP_OR_FAIL(st, pat, 1, 1.0);
      for (int g = 0; g < ng; g++)
        for (int i = 0; i < p2; i++) FLOW_OR_FAIL(st, G[g * p + i], G[g * p + (i ^ d)], S * d / p2);
    }
  if (r > 0 && kind != PF_REDUCE_SCATTER) {
    STEP_OR_FAIL(st, pat, 1, 1.0);
    for (int g = 0; g < ng; g++)
      for (int i = 0; i < r; i++) FLOW_OR_FAIL(st, G[g * p + i], G[g * p + p2 + i], S);
  }
  return 0;
}

int pf_coll_pattern_build(const pf_topology *t, pf_coll_kind kind, pf_coll_algo algo, double bytes, const int *groups,
                          int ngroups, int p, pf_coll_pattern *out) {
  memset(out, 0, sizeof *out);
  if (algo == PF_COLL_AUTO) return pf_error_set(PF_EINVAL, "pf_coll_pattern_build: algorithm must be chosen");
  if (algo == PF_COLL_TREE && kind != PF_ALLREDUCE) algo = PF_COLL_RING;
  out->algo = algo;
  int rc = 0;
  if (bytes > 0 && p > 1) switch (algo) {
    case PF_COLL_RING: rc = build_ring(out, kind, bytes, groups, ngroups, p); break;
    case PF_COLL_HIERARCHICAL: rc = build_hier(t, out, kind, bytes, groups, ngroups, p); break;
    case PF_COLL_TREE: rc = build_tree(t, out, bytes, groups, ngroups, p); break;
    case PF_COLL_RABENSEIFNER: rc = build_rab(out, kind, bytes, groups, ngroups, p); break;
    case PF_COLL_AUTO: break;
    }
  if (rc < 0) {
    pf_coll_pattern_free(out);
    return pf_error_set(PF_ENOMEM, "out of memory building a collective pattern");
  }
  return 0;
}

/* ---------- cost ---------- */

typedef struct {
  double *acc;   /* bytes per link, this step */
  int *cnt;      /* flows per link, this step */
  int *touched;  /* links with acc > 0 */
  int nt;
} scratch;

static int scratch_init(scratch *s, int nlinks) {
  s->acc = calloc((size_t)(nlinks > 0 ? nlinks : 1), sizeof *s->acc);
  s->cnt = calloc((size_t)(nlinks > 0 ? nlinks : 1), sizeof *s->cnt);
  s->touched = malloc((size_t)(nlinks > 0 ? nlinks : 1) * sizeof *s->touched);
  s->nt = 0;
  return s->acc && s->cnt && s->touched ? 0 : -1;
}

static void scratch_free(scratch *s) {
  free(s->acc);
  free(s->cnt);
  free(s->touched);
}

/* Accumulate one step's flows; returns the max route latency. */
static double accumulate(const pf_topology *t, const pf_coll_step *st, scratch *s) {
  double maxlat = 0;
  pf_route r;
  for (int i = 0; i < st->nflows; i++) {
    pf_topology_route(t, st->flows[i].src, st->flows[i].dst, &r);
    if (r.lat_s > maxlat) maxlat = r.lat_s;
    for (int k = 0; k < r.n; k++) {
      int l = r.link[k];
      if (s->cnt[l] == 0) s->touched[s->nt++] = l;
      s->cnt[l]++;
      s->acc[l] += st->flows[i].bytes;
    }
  }
  return maxlat;
}

static double pattern_cost(const pf_topology *t, const pf_coll_pattern *pat, double *link_bytes, int *max_share) {
  scratch s;
  if (scratch_init(&s, t->nlinks) < 0) { scratch_free(&s); return INFINITY; }
  double T = 0;
  int share = 1;
  for (int i = 0; i < pat->nsteps; i++) {
    const pf_coll_step *st = &pat->steps[i];
    double lat = accumulate(t, st, &s), worst = 0;
    for (int k = 0; k < s.nt; k++) {
      int l = s.touched[k];
      worst = fmax(worst, s.acc[l] / t->links[l].bw_Bps);
      if (s.cnt[l] > share) share = s.cnt[l];
      if (link_bytes) link_bytes[l] += st->reps * s.acc[l];
      s.acc[l] = 0;
      s.cnt[l] = 0;
    }
    s.nt = 0;
    T += st->reps * (st->lat_mult * lat + worst);
  }
  scratch_free(&s);
  if (max_share) *max_share = share;
  return T;
}

double pf_coll_pattern_time(const pf_topology *t, const pf_coll_pattern *pat, double *link_bytes) {
  return pattern_cost(t, pat, link_bytes, NULL);
}

void pf_coll_job_free(pf_coll_job *job) {
  for (int i = 0; i < job->nphase; i++) {
    free(job->ph[i].link);
    free(job->ph[i].bytes);
  }
  free(job->ph);
  memset(job, 0, sizeof *job);
}

static int cmp_int(const void *a, const void *b) {
  int x = *(const int *)a, y = *(const int *)b;
  return (x > y) - (x < y);
}

int pf_coll_job_build(const pf_topology *t, const pf_coll_pattern *pat, pf_coll_job *job) {
  memset(job, 0, sizeof *job);
  scratch s;
  if (scratch_init(&s, t->nlinks) < 0) { scratch_free(&s); return pf_error_set(PF_ENOMEM, "out of memory"); }
  job->ph = calloc((size_t)(pat->nsteps > 0 ? pat->nsteps : 1), sizeof *job->ph);
  if (!job->ph) { scratch_free(&s); return pf_error_set(PF_ENOMEM, "out of memory"); }
  for (int i = 0; i < pat->nsteps; i++) {
    const pf_coll_step *st = &pat->steps[i];
    double lat = accumulate(t, st, &s), worst = 0;
    pf_coll_phase *ph = &job->ph[job->nphase++];
    ph->reps = st->reps;
    ph->lat_s = st->lat_mult * lat;
    ph->n = s.nt;
    ph->link = malloc((size_t)(s.nt > 0 ? s.nt : 1) * sizeof *ph->link);
    ph->bytes = malloc((size_t)(s.nt > 0 ? s.nt : 1) * sizeof *ph->bytes);
    if (!ph->link || !ph->bytes) { scratch_free(&s); pf_coll_job_free(job); return pf_error_set(PF_ENOMEM, "out of memory"); }
    qsort(s.touched, (size_t)s.nt, sizeof *s.touched, cmp_int); /* deterministic, cache-friendly order */
    for (int k = 0; k < s.nt; k++) {
      int l = s.touched[k];
      ph->link[k] = l;
      ph->bytes[k] = s.acc[l];
      worst = fmax(worst, s.acc[l] / t->links[l].bw_Bps);
      s.acc[l] = 0;
      s.cnt[l] = 0;
    }
    s.nt = 0;
    job->solo_s += st->reps * (ph->lat_s + worst);
  }
  scratch_free(&s);
  return 0;
}

/* ---------- overlap in time ---------- */

int pf_coll_timeline(const pf_topology *t, pf_coll_job *const *jobs, int n, const double *start, double *end) {
  double *load = calloc((size_t)(t->nlinks > 0 ? t->nlinks : 1), sizeof *load);
  int *phase = malloc((size_t)(n > 0 ? n : 1) * sizeof *phase);   /* -1 not started, nphase done */
  double *rem = malloc((size_t)(n > 0 ? n : 1) * sizeof *rem);     /* remaining fraction of the phase */
  double *T = malloc((size_t)(n > 0 ? n : 1) * sizeof *T);
  double *due = malloc((size_t)(n > 0 ? n : 1) * sizeof *due);   /* when the current phase ends at this load */
  if (!load || !phase || !rem || !T || !due) {
    free(load); free(phase); free(rem); free(T); free(due);
    return pf_error_set(PF_ENOMEM, "out of memory");
  }
  for (int i = 0; i < n; i++) { phase[i] = -1; end[i] = start[i]; }
  double now = -INFINITY;
  int left = n;
  for (int i = 0; i < n; i++) if (jobs[i]->nphase == 0) { phase[i] = 0; left--; }
  while (left > 0) {
    /* next start among jobs not yet started */
    double next_start = INFINITY;
    for (int i = 0; i < n; i++) if (phase[i] == -1 && start[i] < next_start) next_start = start[i];
    /* phase times under the current load */
    double next_end = INFINITY;
    for (int i = 0; i < n; i++) {
      if (phase[i] < 0 || phase[i] >= jobs[i]->nphase) continue;
      const pf_coll_phase *ph = &jobs[i]->ph[phase[i]];
      double worst = 0;
      for (int k = 0; k < ph->n; k++) worst = fmax(worst, load[ph->link[k]] / t->links[ph->link[k]].bw_Bps);
      T[i] = ph->reps * (ph->lat_s + worst);
      due[i] = T[i] > 0 ? now + rem[i] * T[i] : now;
      if (due[i] < next_end) next_end = due[i];
    }
    double tnext = fmin(next_start, next_end);
    if (!isfinite(tnext)) break; /* cannot happen: some job is pending */
    /* advance active phases to tnext */
    for (int i = 0; i < n; i++) {
      if (phase[i] < 0 || phase[i] >= jobs[i]->nphase) continue;
      if (T[i] > 0 && isfinite(now)) rem[i] -= (tnext - now) / T[i];
      else rem[i] = 0;
    }
    now = tnext;
    /* finish phases (in job order, deterministic) */
    for (int i = 0; i < n; i++) {
      if (phase[i] < 0 || phase[i] >= jobs[i]->nphase || due[i] > now) continue;
      rem[i] = 0;
      while (phase[i] >= 0 && phase[i] < jobs[i]->nphase && rem[i] <= 0) {
        const pf_coll_phase *ph = &jobs[i]->ph[phase[i]];
        for (int k = 0; k < ph->n; k++) load[ph->link[k]] -= ph->bytes[k];
        phase[i]++;
        if (phase[i] == jobs[i]->nphase) { end[i] = now; left--; break; }
        ph = &jobs[i]->ph[phase[i]];
        for (int k = 0; k < ph->n; k++) load[ph->link[k]] += ph->bytes[k];
        rem[i] = 1.0;
        due[i] = INFINITY;
        if (ph->reps * ph->lat_s <= 0 && ph->n == 0) rem[i] = 0;
      }
    }
    /* start jobs */
    for (int i = 0; i < n; i++) {
      if (phase[i] != -1 || start[i] > now) continue;
      phase[i] = 0;
      const pf_coll_phase *ph = &jobs[i]->ph[0];
      for (int k = 0; k < ph->n; k++) load[ph->link[k]] += ph->bytes[k];
      rem[i] = 1.0;
      due[i] = INFINITY;
    }
  }
  free(load); free(phase); free(rem); free(T); free(due);
  return 0;
}

/* ---------- data-parallel groups and the default choice ---------- */

int pf_dp_groups(const pf_scenario *sc, int stage, int **gpus, int *ngroups, int *size) {
  const pf_plan *p = &sc->plan;
  int n = p->dp * p->cp;
  int *g = malloc((size_t)p->tp * n * sizeof *g);
  if (!g) return pf_error_set(PF_ENOMEM, "out of memory");
  for (int t = 0; t < p->tp; t++) {
    int k = 0;
    for (int d = 0; d < p->dp; d++)
      for (int c = 0; c < p->cp; c++) g[t * n + k++] = pf_plan_rank(p, t, c, d, stage);
  }
  *gpus = g;
  *ngroups = p->tp;
  *size = n;
  return 0;
}

int pf_dp_collective_pattern(const pf_scenario *sc, const pf_topology *t, pf_coll_kind kind, double bytes, int stage,
                             pf_coll_pattern *pat, pf_coll_result *info) {
  memset(info, 0, sizeof *info);
  memset(pat, 0, sizeof *pat);
  int *G, ng, p, rc;
  if ((rc = pf_dp_groups(sc, stage, &G, &ng, &p)) < 0) return rc;
  pf_coll_algo algo = sc->collective;
  int share = 1;
  if (algo == PF_COLL_AUTO) {
    if ((rc = pf_coll_pattern_build(t, kind, PF_COLL_RING, bytes, G, ng, p, pat)) < 0) { free(G); return rc; }
    double tr = pattern_cost(t, pat, NULL, &share);
    info->algo = PF_COLL_RING;
    info->time_s = tr;
    if (kind == PF_ALLREDUCE && p > 2) {
      pf_coll_pattern tree;
      if ((rc = pf_coll_pattern_build(t, kind, PF_COLL_TREE, bytes, G, ng, p, &tree)) < 0) {
        free(G);
        pf_coll_pattern_free(pat);
        return rc;
      }
      int sh2 = 1;
      double tt = pattern_cost(t, &tree, NULL, &sh2);
      if (tt < tr) {
        pf_coll_pattern_free(pat);
        *pat = tree;
        info->algo = PF_COLL_TREE;
        info->time_s = tt;
        share = sh2;
      } else {
        pf_coll_pattern_free(&tree);
      }
    }
  } else {
    if ((rc = pf_coll_pattern_build(t, kind, algo, bytes, G, ng, p, pat)) < 0) { free(G); return rc; }
    info->algo = pat->algo;
    info->time_s = pattern_cost(t, pat, NULL, &share);
  }
  free(G);
  pat->algo = info->algo;
  double factor = kind == PF_ALLREDUCE ? 2.0 * (p - 1) / p : (double)(p - 1) / p;
  info->bus_bw_Bps = info->time_s > 0 ? factor * bytes / info->time_s : 0;
  info->bottleneck_share = share;
  return 0;
}
