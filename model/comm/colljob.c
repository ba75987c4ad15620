/* colljob.c - collectives in time: jobs (patterns reduced to per-link byte
 * lists, collcost.c) queued on one communicator, the jobs of gradient
 * buckets, and the overlap of several jobs (see collective.h; formulas in
 * docs/communication.md section 5 and docs/engine.md 4-5).
 *
 * Overlap in time (pf_coll_timeline): a fluid model in which every active
 * phase progresses at 1 / T(load of all active phases); see collective.h.
 *
 * Queues (pf_coll_job_append): the collectives of one communicator run one
 * after another (NCCL executes the calls of a stream in order).  Buckets of
 * one algorithm have the same phases (links, repetitions) with bytes in
 * proportion to their size; then the queue is kept as one collective of the
 * summed bytes and summed latency terms (alone it costs the sum of the
 * buckets' costs, exactly), so that under contention it shares links as the
 * whole-stage collective does: pf_coll_timeline advances all active phases in
 * lockstep, which would hold a small bucket back to the pace of a large
 * collective it meets on one link.  Other phases are appended (and later
 * buckets like them merged into them).
 */
#include "collective.h"

#include "core/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---------- queues on one communicator ---------- */

static int same_tail(const pf_coll_job *a, const pf_coll_job *b) { /* a's last phases are b's */
  int off = a->nphase - b->nphase;
  if (off < 0 || b->nphase == 0) return 0;
  for (int i = 0; i < b->nphase; i++) {
    const pf_coll_phase *x = &a->ph[off + i], *y = &b->ph[i];
    if (x->reps != y->reps || x->n != y->n || memcmp(x->link, y->link, (size_t)x->n * sizeof *x->link) != 0)
      return 0;
  }
  return 1;
}

int pf_coll_job_append(pf_coll_job *dst, const pf_coll_job *src) {
  if (same_tail(dst, src)) {
    int off = dst->nphase - src->nphase;
    for (int i = 0; i < src->nphase; i++) {
      pf_coll_phase *d = &dst->ph[off + i];
      d->lat_s += src->ph[i].lat_s;
      for (int k = 0; k < src->ph[i].n; k++) d->bytes[k] += src->ph[i].bytes[k];
    }
    dst->solo_s += src->solo_s;
    return 0;
  }
  pf_coll_phase *ph = realloc(dst->ph, (size_t)(dst->nphase + src->nphase + 1) * sizeof *ph);
  if (!ph) return pf_error_set(PF_ENOMEM, "out of memory");
  dst->ph = ph;
  for (int i = 0; i < src->nphase; i++) {
    const pf_coll_phase *a = &src->ph[i];
    pf_coll_phase *d = &dst->ph[dst->nphase];
    size_t n = (size_t)(a->n > 0 ? a->n : 1);
    *d = *a;
    d->link = malloc(n * sizeof *d->link);
    d->bytes = malloc(n * sizeof *d->bytes);
    if (!d->link || !d->bytes) {
      free(d->link);
      free(d->bytes);
      return pf_error_set(PF_ENOMEM, "out of memory");
    }
    memcpy(d->link, a->link, (size_t)a->n * sizeof *d->link);
    memcpy(d->bytes, a->bytes, (size_t)a->n * sizeof *d->bytes);
    dst->nphase++;
  }
  dst->solo_s += src->solo_s;
  return 0;
}

/* ---------- the same collective on other bytes ---------- */

void pf_coll_job_cache_free(pf_coll_job_cache *c) {
  for (int i = 0; i < c->n; i++) pf_coll_job_free(&c->job[i]);
  c->n = 0;
}

int pf_coll_job_like(const pf_topology *t, pf_coll_kind kind, const pf_coll_pattern *like, double bytes,
                     const int *groups, int ngroups, int p, pf_coll_job_cache *c, const pf_coll_job **job) {
  for (int i = 0; i < c->n; i++)
    if (c->bytes[i] == bytes) { *job = &c->job[i]; return 0; }
  if (c->n == 8) pf_coll_job_cache_free(c); /* at most 4 sizes per stage in practice */
  pf_coll_pattern pat;
  int k = c->n, rc = pf_coll_pattern_build(t, kind, like->algo, bytes, groups, ngroups, p, &pat);
  pat.proto = like->proto;
  if (rc == 0) rc = pf_coll_job_build(t, &pat, &c->job[k]);
  pf_coll_pattern_free(&pat);
  if (rc < 0) return rc;
  c->bytes[k] = bytes;
  c->n++;
  *job = &c->job[k];
  return 0;
}

/* ---------- overlap in time ---------- */

int pf_coll_timeline(const pf_topology *t, pf_coll_job *const *jobs, int n, const double *start, double *end) {
  double *load = calloc((size_t)(t->nlinks > 0 ? t->nlinks : 1), sizeof *load);
  int *phase = malloc((size_t)(n > 0 ? n : 1) * sizeof *phase);   /* -1 not started, nphase done */
  double *rem = malloc((size_t)(n > 0 ? n : 1) * sizeof *rem);     /* remaining fraction of the phase */
  double *T = malloc((size_t)(n > 0 ? n : 1) * sizeof *T);
  double *due = malloc((size_t)(n > 0 ? n : 1) * sizeof *due);   /* when the current phase ends at this load */
  /* T[i] is kept while no link of job i's phase has changed load since it was computed at event tev[i] (chg[l]:
   * the last event that changed link l's load; -1: compute): the same value, without the divisions that were
   * most of this function's time */
  int *chg = calloc((size_t)(t->nlinks > 0 ? t->nlinks : 1), sizeof *chg);
  int *tev = malloc((size_t)(n > 0 ? n : 1) * sizeof *tev);
  if (!load || !phase || !rem || !T || !due || !chg || !tev) {
    free(load); free(phase); free(rem); free(T); free(due); free(chg); free(tev);
    return pf_error_set(PF_ENOMEM, "out of memory");
  }
  int ev = 1;
  for (int i = 0; i < n; i++) { phase[i] = -1; end[i] = start[i]; tev[i] = -1; }
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
      int k = 0;
      if (tev[i] >= 0)
        while (k < ph->n && chg[ph->link[k]] <= tev[i]) k++;
      if (tev[i] < 0 || k < ph->n) {
        double worst = 0;
        for (k = 0; k < ph->n; k++) { /* the phase's slowest link (fmax without the call: this loop is hot) */
          double w = load[ph->link[k]] / t->links[ph->link[k]].bw_Bps;
          if (w > worst) worst = w;
        }
        T[i] = ph->reps * (ph->lat_s + worst);
        tev[i] = ev;
      }
      due[i] = T[i] > 0 ? now + rem[i] * T[i] : now;
      if (due[i] < next_end) next_end = due[i];
    }
    ev++; /* the loads changed below are newer than every T above */
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
        for (int k = 0; k < ph->n; k++) load[ph->link[k]] -= ph->bytes[k], chg[ph->link[k]] = ev;
        phase[i]++;
        tev[i] = -1;
        if (phase[i] == jobs[i]->nphase) { end[i] = now; left--; break; }
        ph = &jobs[i]->ph[phase[i]];
        for (int k = 0; k < ph->n; k++) load[ph->link[k]] += ph->bytes[k], chg[ph->link[k]] = ev;
        rem[i] = 1.0;
        due[i] = INFINITY;
        if (ph->reps * ph->lat_s <= 0 && ph->n == 0) rem[i] = 0;
      }
    }
    /* start jobs */
    for (int i = 0; i < n; i++) {
      if (phase[i] != -1 || start[i] > now) continue;
      phase[i] = 0;
      tev[i] = -1;
      const pf_coll_phase *ph = &jobs[i]->ph[0];
      for (int k = 0; k < ph->n; k++) load[ph->link[k]] += ph->bytes[k], chg[ph->link[k]] = ev;
      rem[i] = 1.0;
      due[i] = INFINITY;
    }
  }
  free(load); free(phase); free(rem); free(T); free(due); free(chg); free(tev);
  return 0;
}
