/* tuneprice.c - one pricing round of tune's branch and bound over worker processes (tune_int.h).
 *
 * The round's marked plans are dealt out in enumeration order, the k-th to worker k mod J; each worker prices its
 * share with the closed-form engine as the one-process round does (tune.c), its pool starting empty under the
 * parent's cut (the floor: a plan whose bound is above it cannot rank), and sends back its counts, its best
 * sharded plan and its best `keep` candidates.  The parent joins them in worker order into its pool, which is kept
 * by the screening and the plan's fields, so the finalists and the best sharded plan are those of the one-process
 * search, whatever the number of workers.  Only the diagnostics' count of plans priced may grow: a worker tightens
 * its cut with its own plans only.  On 2 cores this halves the pricing's wall time of the open DeepSeek-V3 search
 * on 1,024 JUPITER Booster nodes (docs/proposals.md). */
#include "tune_int.h"

#include "core/core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Below this many marked plans a round is priced in this process: forking costs more than it saves. */
enum { PRICE_PAR_MIN = 8 };

/* What one worker sends back, then its ncand candidates. */
typedef struct {
  long evaluated, over, ncand;
  int rc;               /* an engine failure (0: none), with its message */
  char detail[512];
  bool has_sharded, has_ep1;
  pf_tune_cand sharded, ep1; /* the best sharded and EP 1 plans this worker knows: the parent's, or better ones it
                              * priced (both held as bounds while it prices, as the parent holds them) */
} price_head;

typedef struct {
  pf_tune_search *s;
  price_head *head;     /* per worker */
  pf_tune_cand **cand;  /* per worker */
  int failed;
} round_parts;

static int price_work(void *ctx, int i, int fd) {
  round_parts *rp = ctx;
  pf_tune_search *s = rp->s;
  s->part = i;
  s->evaluated = s->over = 0;
  s->pool.n = 0; /* only this worker's plans go back; the parent's cut stays as the floor */
  price_head h = {0};
  int rc = pf_tune_pass(s, PF_TUNE_PASS_PRICE);
  if (rc < 0) {
    h.rc = rc;
    snprintf(h.detail, sizeof h.detail, "%s", pf_error_detail());
  }
  pf_tune_pool_cut(&s->pool);
  h.evaluated = s->evaluated, h.over = s->over, h.ncand = rc < 0 ? 0 : s->pool.n;
  h.has_sharded = s->out->has_sharded, h.sharded = s->out->sharded;
  h.has_ep1 = s->out->ep1.has_fastest, h.ep1 = s->out->ep1.fastest;
  if (pf_write_all(fd, &h, sizeof h) < 0) return 1;
  return h.ncand > 0 && pf_write_all(fd, s->pool.c, (size_t)h.ncand * sizeof *s->pool.c) < 0;
}

static int price_collect(void *ctx, int i, int fd) {
  round_parts *rp = ctx;
  if (pf_read_all(fd, &rp->head[i], sizeof rp->head[i]) < 0) return 1;
  long n = rp->head[i].ncand;
  if (n < 0 || n > rp->s->pool.keep || !(rp->cand[i] = malloc((size_t)(n ? n : 1) * sizeof **rp->cand))) return 1;
  return n > 0 && pf_read_all(fd, rp->cand[i], (size_t)n * sizeof **rp->cand) < 0;
}

static void price_failed(void *ctx, int i, const char *why) {
  (void)i, (void)why;
  ((round_parts *)ctx)->failed = 1;
}

/* Join the workers' results in worker order; an engine failure stops the search as in one process. */
static int join(pf_tune_search *s, round_parts *rp, int J) {
  int rc = 0;
  for (int i = 0; i < J; i++) {
    const price_head *h = &rp->head[i];
    if (h->rc < 0) {
      if (rc == 0) rc = pf_error_set(h->rc, "%s", h->detail);
      continue;
    }
    s->evaluated += h->evaluated;
    s->over += h->over;
    if (h->has_sharded) pf_tune_keep_sharded(s->out, &h->sharded);
    if (h->has_ep1) pf_tune_keep_ep1_priced(s->out, &h->ep1);
    for (long k = 0; k < h->ncand && rc == 0; k++) rc = pf_tune_pool_add(&s->pool, &rp->cand[i][k]);
  }
  return rc;
}

int pf_tune_price_round(pf_tune_search *s, long marked, long total) {
  int J = s->o->jobs > 0 ? s->o->jobs : pf_workers_default_jobs();
  if (J > marked / PRICE_PAR_MIN) J = (int)(marked / PRICE_PAR_MIN);
  s->out->rounds++;
  if (J <= 1) return pf_tune_pass(s, PF_TUNE_PASS_PRICE);
  s->out->rounds_par++;
  round_parts rp = {s, calloc((size_t)J, sizeof *rp.head), calloc((size_t)J, sizeof *rp.cand), 0};
  int rc = rp.head && rp.cand ? 0 : pf_error_set(PF_ENOMEM, "out of memory");
  long evaluated = s->evaluated, over = s->over;
  s->floor = pf_tune_pool_cut(&s->pool);
  s->nparts = J;
  pf_workers_spec w = {.n = J, .jobs = J, .work = price_work, .collect = price_collect, .failed = price_failed,
                       .ctx = &rp};
  if (rc == 0) rc = pf_workers_run(&w);
  s->nparts = 1;
  s->part = 0;
  s->floor = INFINITY;
  s->evaluated = evaluated, s->over = over;
  if (rc == 0 && rp.failed) rc = pf_error_set(PF_ESIM, "tune: a worker of a pricing round failed");
  if (rc == 0) rc = join(s, &rp, J);
  for (long a = 0; a < total; a++) /* every marked plan was a worker's: priced, or shown unable to rank */
    if (s->mark[a] == 1) s->mark[a] = 2;
  for (int i = 0; rp.cand && i < J; i++) free(rp.cand[i]);
  free(rp.head);
  free(rp.cand);
  return rc;
}
