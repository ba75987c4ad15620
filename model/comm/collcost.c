/* collcost.c - the cost of a collective pattern on the topology, with
 * contention, and the pattern reduced to a job (per-link byte lists) for the
 * overlap of several collectives in time (colljob.c; formulas in
 * collective.h and docs/communication.md section 5).
 *
 * Per step: every flow's route is taken from topology.c; bytes_l sums one
 * repetition's flows over directed link l, so concurrent groups that share a
 * link share its capacity equally (max-min fairness for flows that are all
 * bottlenecked on the same link, which is the case for the symmetric steps
 * of a collective).  The research notes (simgrid-notes.md 4.1, 4.3) measured
 * this formula against SimGrid's DES: identical on fat trees and flat
 * networks, within 0.1-11 % (high) on dragonflies.
 *
 * The library's latencies and protocols come from ccl.c, which reads each
 * algorithm's constants from its descriptor (collalgo.h).
 */
#include "ccl.h"
#include "collective.h"
#include "core/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  double *acc;   /* bytes per link, this step */
  int *cnt;      /* flows per link, this step */
  int *touched;  /* links with acc > 0 */
  int *sort;     /* room for sorting touched */
  int nt;
} scratch;

/* The topology's per-link scratch (zero between uses: every user clears the links it touched), allocated
 * once: allocating and clearing arrays of all links per collective dominated large jobs. */
static int scratch_init(scratch *s, const pf_topology *t) {
  pf_topology *mt = (pf_topology *)t; /* the scratch is the topology's, not part of its value */
  size_t n = (size_t)(t->nlinks > 0 ? t->nlinks : 1);
  if (!mt->scratch_acc) mt->scratch_acc = calloc(n, sizeof *mt->scratch_acc);
  if (!mt->scratch_cnt) mt->scratch_cnt = calloc(n, sizeof *mt->scratch_cnt);
  if (!mt->scratch_touched) mt->scratch_touched = malloc(n * sizeof *mt->scratch_touched);
  if (!mt->scratch_sort) mt->scratch_sort = malloc(n * sizeof *mt->scratch_sort);
  s->acc = mt->scratch_acc;
  s->cnt = mt->scratch_cnt;
  s->touched = mt->scratch_touched;
  s->sort = mt->scratch_sort;
  s->nt = 0;
  return s->acc && s->cnt && s->touched && s->sort ? 0 : -1;
}

static void scratch_free(scratch *s) { (void)s; }

static inline int is_net(const pf_topology *t, int l) { return t->links[l].kind >= PF_LINK_NIC_UP; }

/* Accumulate one step's flows; returns the max route latency and adds the
 * bytes that cross the fabric / leave the node to *fab, *nic. */
static double accumulate(const pf_topology *t, const pf_coll_step *st, scratch *s, double *fab, double *nic) {
  double maxlat = 0;
  pf_route r;
  for (int i = 0; i < st->nflows; i++) {
    pf_topology_route(t, st->flows[i].src, st->flows[i].dst, &r);
    if (r.lat_s > maxlat) maxlat = r.lat_s;
    int intra = 0;
    for (int k = 0; k < r.n; k++) {
      int l = r.link[k];
      if (s->cnt[l] == 0) s->touched[s->nt++] = l;
      s->cnt[l]++;
      s->acc[l] += st->flows[i].bytes;
      intra |= !is_net(t, l);
    }
    if (st->flows[i].src >= t->gpus) continue; /* sent by a switch, not by a GPU */
    if (nic && r.inter) *nic += st->flows[i].bytes * st->reps;
    if (fab && intra) *fab += st->flows[i].bytes * st->reps;
  }
  return maxlat;
}

/* Effective bytes on link l: the library's measured efficiency applies to the network's links, and a pattern
 * that drives one of a GPU's bonded NICs (all-to-all) sees that NIC's share of the bonded link. */
static inline double eff_bytes(const pf_topology *t, const pf_coll_pattern *pat, int l, double bytes) {
  if (!is_net(t, l)) return bytes;
  if (pat->lib_factor > 0) bytes /= pat->lib_factor;
  pf_link_kind k = t->links[l].kind;
  if ((k == PF_LINK_NIC_UP || k == PF_LINK_NIC_DOWN) && pat->nic_share > 0) bytes /= pat->nic_share;
  return bytes;
}

/* Latency of one repetition of a step with protocol pr: the library's steps (NCCL's constants, weighted by
 * the step's fabric and network shares; with a measured ring table, ccl.c, a step that crosses the network
 * costs the network's step whole, as every rank of the ring waits for it) or the slowest route. */
static double rep_lat(const pf_coll_pattern *pat, const pf_coll_step *st, double route_lat, pf_coll_proto pr) {
  double sw = st->sw_intra * pf_ccl_step_lat(pat->tuner, pat->lib, pat->fabric_hw, pat->algo, pr) +
              st->sw_net * pf_ccl_step_lat(pat->tuner, pat->lib, PF_HW_NET, pat->algo, pr);
  if (pat->tab) sw = pf_ccl_table_step(pat->tab, st->sw_net > 0, pr, sw);
  return fmax(st->lat_mult * route_lat, sw);
}

/* One repetition's latency and bandwidth parts, *lat and *bw, from its route latency and its links' time
 * bw_links (protocol applied): the table's LL rate over the network and its least step time apply to the
 * steps that cross the network. */
static void rep_time(const pf_coll_pattern *pat, const pf_coll_step *st, double route_lat, double bw_links,
                     pf_coll_proto pr, double *lat, double *bw) {
  *lat = rep_lat(pat, st, route_lat, pr);
  *bw = bw_links;
  if (!pat->tab || !(st->sw_net > 0)) return;
  if (pr == PF_PROTO_LL && pat->tab->ll_net_Bps > 0 && pat->p > 0)
    *bw = fmax(*bw, pat->bytes / pat->p / pat->tab->ll_net_Bps);
  double floor = pat->tab->net_floor_s[pr];
  if (*lat + *bw < floor) *lat = floor - *bw;
}

static double base_lat(const pf_coll_pattern *pat, pf_coll_proto pr) {
  if (pat->nsteps == 0) return 0;
  double b = pf_ccl_base_lat(pat->tuner, pat->lib, pat->algo, pr);
  return pat->tab && pat->tab->base_s >= 0 ? pat->tab->base_s : b;
}

typedef struct {
  double route_lat, bw;  /* per repetition: max route latency, max_l effective bytes_l / B_l */
  int share;
} step_sum;

/* One pass over the routes: per-step summaries and per-rank traffic. */
static int summarise(const pf_topology *t, const pf_coll_pattern *pat, step_sum *ss, double *link_bytes, double *fab,
                     double *nic) {
  scratch s;
  if (scratch_init(&s, t) < 0) { scratch_free(&s); return -1; }
  for (int i = 0; i < pat->nsteps; i++) {
    const pf_coll_step *st = &pat->steps[i];
    ss[i].route_lat = accumulate(t, st, &s, fab, nic);
    ss[i].bw = 0;
    ss[i].share = 1;
    for (int k = 0; k < s.nt; k++) {
      int l = s.touched[k];
      double b = eff_bytes(t, pat, l, s.acc[l]) / t->links[l].bw_Bps;
      if (b > ss[i].bw) ss[i].bw = b; /* fmax without the call (a NaN is skipped all the same) */
      if (s.cnt[l] > ss[i].share) ss[i].share = s.cnt[l];
      if (link_bytes) link_bytes[l] += st->reps * s.acc[l];
      s.acc[l] = 0;
      s.cnt[l] = 0;
    }
    s.nt = 0;
  }
  scratch_free(&s);
  return 0;
}

static double proto_time(const pf_coll_pattern *pat, const step_sum *ss, pf_coll_proto pr, double *lat, double *bw) {
  double L = base_lat(pat, pr), B = 0, e = pf_ccl_proto_eff(pr);
  for (int i = 0; i < pat->nsteps; i++) {
    double l, b;
    rep_time(pat, &pat->steps[i], ss[i].route_lat, ss[i].bw / e, pr, &l, &b);
    L += pat->steps[i].reps * l;
    B += pat->steps[i].reps * b;
  }
  if (lat) *lat = L;
  if (bw) *bw = B;
  return L + B;
}

void pf_coll_pattern_cost(const pf_topology *t, const pf_coll_pattern *pat, pf_coll_result *res) {
  memset(res, 0, sizeof *res);
  res->algo = pat->algo;
  res->proto = pat->proto;
  step_sum *ss = malloc((size_t)(pat->nsteps > 0 ? pat->nsteps : 1) * sizeof *ss);
  double fab = 0, nic = 0;
  if (!ss || summarise(t, pat, ss, NULL, &fab, &nic) < 0) {
    free(ss);
    res->time_s = INFINITY;
    return;
  }
  res->time_s = proto_time(pat, ss, pat->proto, &res->lat_s, &res->bw_s);
  res->bottleneck_share = 1;
  for (int i = 0; i < pat->nsteps; i++) res->bottleneck_share = fmax(res->bottleneck_share, ss[i].share);
  free(ss);
  int ranks = pat->p * pat->ngroups;
  res->fabric_bytes = ranks > 0 ? fab / ranks : 0;
  res->nic_bytes = ranks > 0 ? nic / ranks : 0;
  res->inter = nic > 0;
  /* nccl-tests: algbw = S / t with S the larger of a rank's input and output */
  if (res->time_s > 0 && isfinite(res->time_s)) {
    res->alg_bw_Bps = pat->bytes / res->time_s;
    res->bus_bw_Bps = res->alg_bw_Bps * pf_coll_busbw_factor(pat->kind, pat->p);
  }
}

double pf_coll_pattern_time(const pf_topology *t, const pf_coll_pattern *pat, double *link_bytes) {
  step_sum *ss = malloc((size_t)(pat->nsteps > 0 ? pat->nsteps : 1) * sizeof *ss);
  if (!ss || summarise(t, pat, ss, link_bytes, NULL, NULL) < 0) { free(ss); return INFINITY; }
  double T = proto_time(pat, ss, pat->proto, NULL, NULL);
  free(ss);
  return T;
}

void pf_coll_pattern_protos(const pf_topology *t, const pf_coll_pattern *pat, double lat[3], double bw[3]) {
  for (int pr = 0; pr < 3; pr++) lat[pr] = bw[pr] = INFINITY;
  step_sum *ss = malloc((size_t)(pat->nsteps > 0 ? pat->nsteps : 1) * sizeof *ss);
  if (!ss || summarise(t, pat, ss, NULL, NULL, NULL) < 0) { free(ss); return; }
  for (int pr = 0; pr < 3; pr++)
    if (pf_ccl_proto_ok(t, pat->algo, (pf_coll_proto)pr)) proto_time(pat, ss, (pf_coll_proto)pr, &lat[pr], &bw[pr]);
  free(ss);
}

/* ---------- jobs ---------- */

void pf_coll_job_free(pf_coll_job *job) {
  for (int i = 0; i < job->nphase; i++) {
    free(job->ph[i].link);
    free(job->ph[i].bytes);
  }
  free(job->ph);
  memset(job, 0, sizeof *job);
}

/* The touched links in increasing order (a deterministic, cache-friendly order for the phases).  They are
 * distinct link indices below nlinks, so a least-significant-digit radix sort orders them in a few linear
 * passes (qsort's comparison calls were a fifth of a plan's time); short lists by insertion. */
static void sort_links(int *a, int n, int nlinks, int *tmp) {
  if (n < 64) {
    for (int i = 1; i < n; i++) {
      int x = a[i], j = i;
      for (; j > 0 && a[j - 1] > x; j--) a[j] = a[j - 1];
      a[j] = x;
    }
    return;
  }
  int *src = a, *dst = tmp;
  for (int shift = 0; shift < 31 && (nlinks - 1) >> shift; shift += 8) {
    int count[257] = {0};
    for (int i = 0; i < n; i++) count[((src[i] >> shift) & 255) + 1]++;
    for (int d = 0; d < 256; d++) count[d + 1] += count[d];
    for (int i = 0; i < n; i++) dst[count[(src[i] >> shift) & 255]++] = src[i];
    int *w = src;
    src = dst;
    dst = w;
  }
  if (src != a) memcpy(a, src, (size_t)n * sizeof *a);
}

/* ---------- the same job again ----------
 * A job is a function of the topology and the pattern alone.  tune prices every setting of a shape (micro-batch x
 * recomputation x the optimizer's overlaps) with the same data-parallel collectives per stage and the same gradient
 * buckets (engine/dpsync.c), and routing each pattern's flows over 4,096 GPUs was a fifth of the DeepSeek-V3
 * search's CPU.  The last jobs are kept, keyed by the topology's hash (memo_key, set by pf_comm_init; 0: none
 * kept) and a hash of the pattern, with the pattern compared in full: a hit hands out a copy of the job the
 * building would have made, never an approximation.  128 are kept: a PP 16 stage set's gradient and parameter
 * jobs, dense and experts (64), and their buckets' sizes. */

#define JMEMO_N 128

typedef struct {
  unsigned long long topo, h;
  pf_coll_pattern pat; /* owned: nsteps 0 and no job for a free entry */
  pf_coll_job job;     /* owned */
} jmemo_entry;

static _Thread_local jmemo_entry jmemo[JMEMO_N];
static _Thread_local int jmemo_next;

/* The measured ring's table is the topology's own (collective.c): the same for one memo_key, so only whether the
 * pattern uses it is compared (a kept pattern's pointer may name a topology since freed; it is never read). */
static bool same_scalars(const pf_coll_pattern *a, const pf_coll_pattern *b) {
  return a->nsteps == b->nsteps && a->kind == b->kind && a->algo == b->algo && a->proto == b->proto &&
         a->lib == b->lib && a->tuner == b->tuner && a->fabric_hw == b->fabric_hw && a->lib_factor == b->lib_factor &&
         a->nic_share == b->nic_share && !a->tab == !b->tab && a->bytes == b->bytes && a->p == b->p &&
         a->ngroups == b->ngroups;
}

static bool same_step(const pf_coll_step *a, const pf_coll_step *b) {
  if (a->nflows != b->nflows || a->reps != b->reps || a->lat_mult != b->lat_mult || a->sw_intra != b->sw_intra ||
      a->sw_net != b->sw_net)
    return false;
  for (int i = 0; i < a->nflows; i++) /* field by field: no padding read */
    if (a->flows[i].src != b->flows[i].src || a->flows[i].dst != b->flows[i].dst ||
        a->flows[i].bytes != b->flows[i].bytes)
      return false;
  return true;
}

/* A cheap hash: the scalars and each step's first and last flows (the full comparison decides) */
static unsigned long long pattern_hash(const pf_coll_pattern *p) {
  const double d[] = {p->lib_factor, p->nic_share, p->bytes};
  const int n[] = {p->nsteps, (int)p->kind, (int)p->algo, (int)p->proto, (int)p->lib, p->fabric_hw, p->p,
                   p->ngroups};
  unsigned long long h = pf_fnv1a(pf_fnv1a(PF_FNV1A_OFFSET, d, sizeof d), n, sizeof n);
  for (int i = 0; i < p->nsteps; i++) {
    const pf_coll_step *st = &p->steps[i];
    const int si[] = {st->nflows, st->reps};
    h = pf_fnv1a(h, si, sizeof si);
    if (st->nflows == 0) continue;
    const pf_flow *a = &st->flows[0], *z = &st->flows[st->nflows - 1];
    const int fe[] = {a->src, a->dst, z->src, z->dst};
    const double fb[] = {a->bytes, z->bytes, st->lat_mult};
    h = pf_fnv1a(pf_fnv1a(h, fe, sizeof fe), fb, sizeof fb);
  }
  return h;
}

static const jmemo_entry *jmemo_find(unsigned long long topo, unsigned long long h, const pf_coll_pattern *pat) {
  for (int i = 0; i < JMEMO_N; i++) {
    const jmemo_entry *e = &jmemo[i];
    if (e->topo != topo || e->h != h || !e->job.ph || !same_scalars(&e->pat, pat)) continue;
    int k = 0;
    while (k < pat->nsteps && same_step(&e->pat.steps[k], &pat->steps[k])) k++;
    if (k == pat->nsteps) return e;
  }
  return NULL;
}

static void jmemo_keep(unsigned long long topo, unsigned long long h, const pf_coll_pattern *pat,
                       const pf_coll_job *job) {
  jmemo_entry *e = &jmemo[jmemo_next];
  pf_coll_pattern_free(&e->pat);
  pf_coll_job_free(&e->job);
  memset(e, 0, sizeof *e);
  if (pf_coll_pattern_copy(&e->pat, pat) < 0 || pf_coll_job_append(&e->job, job) < 0 || !e->job.ph) {
    pf_coll_pattern_free(&e->pat); /* not kept: the next build routes it again */
    pf_coll_job_free(&e->job);
    return;
  }
  e->topo = topo, e->h = h;
  jmemo_next = (jmemo_next + 1) % JMEMO_N;
}

static int job_build(const pf_topology *t, const pf_coll_pattern *pat, pf_coll_job *job);

int pf_coll_job_build(const pf_topology *t, const pf_coll_pattern *pat, pf_coll_job *job) {
  if (!t->memo_key) return job_build(t, pat, job);
  unsigned long long h = pattern_hash(pat);
  const jmemo_entry *e = jmemo_find(t->memo_key, h, pat);
  if (e) {
    memset(job, 0, sizeof *job);
    int rc = pf_coll_job_append(job, &e->job);
    if (rc == 0) return 0;
    pf_coll_job_free(job); /* priced again */
  }
  int rc = job_build(t, pat, job);
  if (rc == 0) jmemo_keep(t->memo_key, h, pat, job);
  return rc;
}

static int job_build(const pf_topology *t, const pf_coll_pattern *pat, pf_coll_job *job) {
  memset(job, 0, sizeof *job);
  scratch s;
  if (scratch_init(&s, t) < 0) { scratch_free(&s); return pf_error_set(PF_ENOMEM, "out of memory"); }
  job->ph = calloc((size_t)(pat->nsteps + 1), sizeof *job->ph);
  if (!job->ph) { scratch_free(&s); return pf_error_set(PF_ENOMEM, "out of memory"); }
  double e = pf_ccl_proto_eff(pat->proto), base = base_lat(pat, pat->proto);
  if (base > 0) { /* the call's fixed latency, a phase without links */
    pf_coll_phase *ph = &job->ph[job->nphase++];
    ph->reps = 1;
    ph->lat_s = base;
    ph->link = malloc(sizeof *ph->link);
    ph->bytes = malloc(sizeof *ph->bytes);
    if (!ph->link || !ph->bytes) { scratch_free(&s); pf_coll_job_free(job); return pf_error_set(PF_ENOMEM, "out of memory"); }
    job->solo_s += base;
  }
  for (int i = 0; i < pat->nsteps; i++) {
    const pf_coll_step *st = &pat->steps[i];
    double lat = accumulate(t, st, &s, NULL, NULL), worst = 0;
    pf_coll_phase *ph = &job->ph[job->nphase++];
    ph->reps = st->reps;
    ph->lat_s = 0; /* below, once the links' time is known */
    ph->n = s.nt;
    ph->link = malloc((size_t)(s.nt > 0 ? s.nt : 1) * sizeof *ph->link);
    ph->bytes = malloc((size_t)(s.nt > 0 ? s.nt : 1) * sizeof *ph->bytes);
    if (!ph->link || !ph->bytes) { scratch_free(&s); pf_coll_job_free(job); return pf_error_set(PF_ENOMEM, "out of memory"); }
    sort_links(s.touched, s.nt, t->nlinks, s.sort);
    for (int k = 0; k < s.nt; k++) {
      int l = s.touched[k];
      ph->link[k] = l;
      ph->bytes[k] = eff_bytes(t, pat, l, s.acc[l]) / e;
      double w = ph->bytes[k] / t->links[l].bw_Bps;
      if (w > worst) worst = w; /* fmax without the call */
      s.acc[l] = 0;
      s.cnt[l] = 0;
    }
    s.nt = 0;
    double l, b; /* a table's floor or LL rate adds to the latency: the links' bytes stay what they carry */
    rep_time(pat, st, lat, worst, pat->proto, &l, &b);
    ph->lat_s = l + (b - worst);
    job->solo_s += st->reps * (ph->lat_s + worst);
  }
  scratch_free(&s);
  return 0;
}

/* ---------- replay as real flows (fullsim.c) ---------- */

double pf_coll_replay_base(const pf_coll_pattern *pat) {
  return base_lat(pat, pat->proto);
}

double pf_coll_replay_extra_lat(const pf_topology *t, const pf_coll_pattern *pat, int step, double *route_lat) {
  const pf_coll_step *st = &pat->steps[step];
  double maxlat = 0;
  pf_route r;
  for (int i = 0; i < st->nflows; i++) {
    pf_topology_route(t, st->flows[i].src, st->flows[i].dst, &r);
    maxlat = fmax(maxlat, r.lat_s);
  }
  if (route_lat) *route_lat = maxlat;
  return fmax(0.0, rep_lat(pat, st, maxlat, pat->proto) - maxlat);
}

double pf_coll_replay_scale(const pf_coll_pattern *pat, int inter) {
  double f = 1.0 / pf_ccl_proto_eff(pat->proto);
  if (inter && pat->lib_factor > 0) f /= pat->lib_factor;
  if (inter && pat->nic_share > 0) f /= pat->nic_share; /* the whole route: the NIC is its narrowest part */
  return f;
}
