/* tune.c - search for the best parallel plan (see tune.h).
 *
 * Megatron-LM's rules for what is a valid plan are pf_plan_check()'s; the
 * enumeration here only proposes plans in the order (TP, CP, PP, schedule,
 * micro-batch, recompute, distributed optimizer, overlap flags), so that the
 * order - and with it sharding - is deterministic.  Ties in the objective are
 * broken by the plan's fields in that order, never by memory layout.
 */
#include "tune_int.h"

#include "batch.h"
#include "core/core.h"

#include <math.h>
#include <stdio.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/resource.h>

/* ---- ordering ---- */

static int plan_cmp(const pf_plan *a, const pf_plan *b) {
  const int x[] = {a->tp, a->cp, a->pp, a->schedule, a->vstages, a->mbs, a->recompute, a->sp, a->dist_opt,
                   a->overlap_grad_reduce, a->overlap_param_gather, !a->flash_attn, !a->tp_comm_overlap, a->zero,
                   a->shard_group, a->ep};
  const int y[] = {b->tp, b->cp, b->pp, b->schedule, b->vstages, b->mbs, b->recompute, b->sp, b->dist_opt,
                   b->overlap_grad_reduce, b->overlap_param_gather, !b->flash_attn, !b->tp_comm_overlap, b->zero,
                   b->shard_group, b->ep};
  for (size_t i = 0; i < sizeof x / sizeof *x; i++)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

int pf_tune_by_screen(const void *a, const void *b) {
  const pf_tune_cand *x = a, *y = b;
  if (x->screen != y->screen) return x->screen < y->screen ? -1 : 1;
  if (x->memory_GiB != y->memory_GiB) return x->memory_GiB < y->memory_GiB ? -1 : 1;
  return plan_cmp(&x->plan, &y->plan);
}

int pf_tune_by_score(const void *a, const void *b) {
  const pf_tune_cand *x = a, *y = b;
  if (x->score != y->score) return x->score < y->score ? -1 : 1;
  return pf_tune_by_screen(a, b);
}

/* ---- enumeration ---- */

int pf_tune_pool_add(pf_tune_pool *p, const pf_tune_cand *c) {
  if (p->n == p->cap) {
    /* keep the pool small: sort and cut to `keep` before growing past 4 x keep */
    if (p->cap >= 4 * p->keep) {
      qsort(p->c, (size_t)p->n, sizeof *p->c, pf_tune_by_screen);
      p->n = p->keep;
    } else {
      int cap = p->cap ? 2 * p->cap : 64;
      pf_tune_cand *g = realloc(p->c, (size_t)cap * sizeof *g);
      if (!g) return pf_error_set(PF_ENOMEM, "out of memory");
      p->c = g;
      p->cap = cap;
    }
  }
  p->c[p->n++] = *c;
  return 0;
}

static void add_unique(int *v, int *n, int x) {
  for (int i = 0; i < *n; i++) if (v[i] == x) return;
  v[(*n)++] = x;
}

/* Price a plan that fits with the closed-form engine; keep it in the pool. */
static int price(pf_tune_search *s, const pf_plan *pl, long at) {
  pf_scenario *sc = s->sc;
  *sc = *s->base;
  sc->plan = *pl;
  sc->engine = PF_ENGINE_ANALYTIC;
  if (pf_plan_check(sc) < 0) return 0; /* not marked: the bound pass pruned it */
  pf_memory m;
  pf_memory_estimate(sc, &m);
  s->evaluated++;
  int rc = pf_resolve_predict(sc, s->p);
  if (pf_error_is_failure(rc)) return rc; /* an engine failure stops the search (exit 2), never a pruned plan */
  if (rc < 0) return 0;
  pf_tune_cand c = {.plan = sc->plan, .t_iter_s = s->p->iteration_time_s, .tokens_per_s = s->p->tokens_per_s,
                    .tflops_per_gpu = s->p->tflops_per_gpu, .memory_GiB = m.total_B / (1024.0 * 1024 * 1024),
                    .energy_J = s->p->energy.facility_J, .breakdown_s = s->p->breakdown_s};
  c.a2a_share = c.t_iter_s > 0 ? c.breakdown_s.ep_a2a / c.t_iter_s : 0;
  c.screen = c.score = pf_tune_score(sc, s->p, s->o->objective);
  if (c.screen < s->lb_at[at] * (1 - 1e-12)) s->over++;
  pf_tune_keep_sharded(s->out, &c);
  if (s->ep1 && pf_tune_no_ep(&c.plan)) pf_tune_keep_ep1_priced(s->out, &c);
  return pf_tune_pool_add(&s->pool, &c);
}

/* The bound pass: prune what is invalid or does not fit, bound the rest. */
static int bound(pf_tune_search *s, const pf_plan *pl, long at) {
  if (s->o->progress && s->nparts <= 1) pf_progress_item(); /* one plan looked at, bounded or pruned */
  pf_scenario *sc = s->sc;
  *sc = *s->base;
  sc->plan = *pl;
  sc->engine = PF_ENGINE_ANALYTIC;
  if (pf_plan_check(sc) < 0) { s->pruned++; return 0; }
  pf_memory m;
  pf_memory_estimate(sc, &m);
  if (s->ep1 && pf_tune_no_ep(&sc->plan)) pf_tune_keep_ep1(s->out, &sc->plan, &m);
  if (m.total_B > m.capacity_B) {
    if (!s->has_tight || m.total_B < s->tight_m.total_B)
      s->has_tight = true, s->tight = sc->plan, s->tight_m = m, s->tight_at = at;
    s->pruned++;
    return 0;
  }
  double t;
  int rc = pf_tune_lb_time(&s->lb, sc, &t);
  if (pf_error_is_failure(rc)) return rc;
  if (rc < 0) t = 0; /* priced anyway: the prediction says why it has none */
  if (s->nent == s->capent) {
    long cap = s->capent ? 2 * s->capent : 1024;
    pf_tune_ent *g = realloc(s->ent, (size_t)cap * sizeof *g);
    if (!g) return pf_error_set(PF_ENOMEM, "out of memory");
    s->ent = g, s->capent = cap;
  }
  s->ent[s->nent++] = (pf_tune_ent){pf_tune_lb_score(sc, t, s->o->objective), at, pf_plan_zero(&sc->plan) >= 2,
                                    s->ep1 && pf_tune_no_ep(&sc->plan)};
  return 0;
}

double pf_tune_pool_cut(pf_tune_pool *p) {
  if (p->n < p->keep) return INFINITY;
  qsort(p->c, (size_t)p->n, sizeof *p->c, pf_tune_by_screen);
  p->n = p->keep;
  return p->c[p->keep - 1].screen;
}

/* The pool's cut, or the parent's where lower (a pricing worker's pool holds only its own plans: tuneprice.c). */
static double cut(pf_tune_search *s) {
  return fmin(s->floor, pf_tune_pool_cut(&s->pool));
}

/* A plan whose bound is above the cut is still priced while it may be the best of its class that tune reports
 * whatever its rank: ZeRO-2/3 (the best sharded plan, tunezero.c) or EP 1 (tuneep.c), until one of the class
 * screens below its bound. */
static bool may_lead_class(const pf_tune_search *s, const pf_plan *pl, double lb) {
  const pf_tune_result *r = s->out;
  if (pf_plan_zero(pl) >= 2 && !(r->has_sharded && lb > r->sharded.screen)) return true;
  return s->ep1 && pf_tune_no_ep(pl) && !(r->ep1.has_fastest && lb > r->ep1.fastest.screen);
}

static int try_plan(pf_tune_search *s, const pf_plan *pl) {
  long idx = s->index++;
  if (s->o->nshards > 1 && idx % s->o->nshards != s->o->shard - 1) return 0;
  long at = s->enumerated++;
  if (s->counting) return 0;
  if (s->pass == PF_TUNE_PASS_BOUND) return s->skip ? 0 : bound(s, pl, at);
  if (s->mark[at] != 1) return 0;
  if (s->nparts > 1 && s->dealt++ % s->nparts != s->part) return 0; /* another pricing worker's (tuneprice.c) */
  s->mark[at] = 2;
  /* the cut tightens as the round prices: a plan whose bound went above it cannot rank (bounded) */
  double lb = s->lb_at[at];
  if (!s->o->exhaustive && lb > cut(s) && !may_lead_class(s, pl, lb)) return 0;
  return price(s, pl, at);
}

/* What the user fixed: the options the command names, and the settings of current practice given either way
 * (job/defaults.c; so plan, which fixes nothing else, keeps a --no-flash-attn). */
static unsigned fixed_of(const pf_tune_search *s) {
  static const struct { unsigned set, fix; } map[] = {
      {PF_SET_SP, PF_FIX_SP}, {PF_SET_DIST_OPT, PF_FIX_DIST_OPT}, {PF_SET_OVERLAP_GRAD, PF_FIX_OVERLAP_GRAD},
      {PF_SET_OVERLAP_PARAM, PF_FIX_OVERLAP_PARAM}, {PF_SET_FLASH_ATTN, PF_FIX_FLASH_ATTN},
      {PF_SET_TP_COMM_OVERLAP, PF_FIX_TP_COMM_OVERLAP}};
  unsigned fx = s->o->fixed;
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (s->base->plan.given & map[i].set) fx |= map[i].fix;
  return fx;
}

/* The TP-comm overlap: on and off where current practice turns it on for the job and the user left it open
 * (on first: it hides the TP collectives but takes SMs from the GEMMs it hides behind, comm.c), else as the
 * scenario has it.  Fused attention is not searched: it stays as the scenario has it, on where the device
 * has it (Megatron-Core's attention backend "auto" picks a fused kernel whenever there is one, defaults.c),
 * off with --no-flash-attn; searching it off too doubled the plans priced (1.9x the time of a tune of
 * llama2-13b on 16 leonardo-booster nodes) for plans the recipes do not run. */
static int try_settings(pf_tune_search *s, pf_plan pl) {
  const pf_plan *b = &s->base->plan;
  bool open = !(fixed_of(s) & PF_FIX_TP_COMM_OVERLAP) && (b->practice & PF_SET_TP_COMM_OVERLAP);
  bool both = open && pl.sp && pl.tp > 1 && pl.tp <= s->base->machine.gpus_per_node;
  for (int tc = both ? 1 : 0; tc >= 0; tc--) {
    pl.tp_comm_overlap = open ? tc : b->tp_comm_overlap;
    int rc = try_plan(s, &pl);
    if (rc < 0) return rc;
  }
  return 0;
}

/* ZeRO-2 and ZeRO-3 (job/shard.c), over all DP x CP ranks and, where those span nodes, inside each node
 * (HYBRID_SHARD).  Megatron's bucketed overlap flags do not apply (the per-unit collectives overlap by
 * themselves, comm/fsdp.c), so each level is priced once per shard group.  Searched unless the level is fixed
 * (--zero, or --dist-opt / --no-dist-opt given); with --zero 2|3 only that level. */
static int try_sharded(pf_tune_search *s, pf_plan pl, int dp_gt1) {
  const pf_plan *b = &s->base->plan;
  unsigned fx = fixed_of(s);
  bool fixed = fx & PF_FIX_DIST_OPT, spans = s->base->gpus / pl.pp > s->base->machine.gpus_per_node;
  if (!dp_gt1 || (fixed && !((fx & PF_FIX_ZERO) && b->zero >= 2))) return 0;
  for (int z = 3; z >= 2; z--) {
    if (fixed && z != b->zero) continue;
    pl.zero = z, pl.dist_opt = true, pl.overlap_grad_reduce = false, pl.overlap_param_gather = false;
    for (int g = PF_SHARD_ALL; g <= PF_SHARD_NODE; g++) {
      if (fx & PF_FIX_SHARD_GROUP) { if (g != b->shard_group) continue; }
      else if (g == PF_SHARD_NODE && !spans) continue;
      pl.shard_group = g;
      int rc = try_settings(s, pl);
      if (rc < 0) return rc;
    }
  }
  return 0;
}

/* Everything after the shape (TP, CP, PP, schedule) is fixed. */
static int enumerate_settings(pf_tune_search *s, pf_plan pl) {
  const pf_scenario *b = s->base;
  unsigned fx = fixed_of(s);
  static const int mbs_set[] = {1, 2, 4, 8};
  int nm = fx & PF_FIX_MBS ? 1 : 4;
  int dp_gt1 = b->gpus / (pl.tp * pl.pp * pl.cp) > 1 || pl.cp > 1;
  for (int mi = 0; mi < nm; mi++) {
    pl.mbs = fx & PF_FIX_MBS ? b->plan.mbs : mbs_set[mi];
    for (int rec = 0; rec <= PF_RECOMPUTE_FULL; rec++) {
      if (fx & PF_FIX_RECOMPUTE) { if (rec > 0) break; pl.recompute = b->plan.recompute; }
      else pl.recompute = (pf_recompute)rec;
      int rc = try_sharded(s, pl, dp_gt1);
      if (rc < 0) return rc;
      pl.zero = 0, pl.shard_group = PF_SHARD_ALL;
      if ((fx & PF_FIX_ZERO) && b->plan.zero >= 2) continue; /* the level is fixed above ZeRO-1 */
      for (int dopt = 1; dopt >= 0; dopt--) {
        if (fx & PF_FIX_DIST_OPT) { if (dopt == 0) break; pl.dist_opt = b->plan.dist_opt; }
        else if (!dp_gt1 && dopt == 0) break; /* without DP the optimizer is not sharded either way */
        else pl.dist_opt = dopt;
        for (int og = 0; og <= 1; og++) {
          if (fx & PF_FIX_OVERLAP_GRAD) { if (og) break; pl.overlap_grad_reduce = b->plan.overlap_grad_reduce; }
          else if (og && !dp_gt1) break;
          else pl.overlap_grad_reduce = og;
          for (int op = 0; op <= 1; op++) {
            if (fx & PF_FIX_OVERLAP_PARAM) { if (op) break; pl.overlap_param_gather = b->plan.overlap_param_gather; }
            else if (op && (!pl.dist_opt || !dp_gt1)) break;
            else pl.overlap_param_gather = op;
            rc = try_settings(s, pl);
            if (rc < 0) return rc;
          }
        }
      }
    }
  }
  return 0;
}

/* MoE models: ETP as Megatron-Core's default (as TP) and, at TP > 1, 1 (experts whole, split by EP alone) unless
 * --etp is given; for each, the EPs Megatron accepts for this TP x CP x PP (powers of two dividing the experts, EP
 * x ETP dividing TP x CP x DP: plan.c) unless --ep is given; then the other settings */
static int enumerate_rest(pf_tune_search *s, pf_plan pl) {
  const pf_scenario *b = s->base;
  const pf_workload *w = &b->workload;
  unsigned fx = fixed_of(s);
  if (!pf_workload_is_moe(w)) return enumerate_settings(s, pl);
  int netp = fx & PF_FIX_ETP || pl.tp == 1 ? 1 : 2;
  for (int i = 0; i < netp; i++) {
    if (!(fx & PF_FIX_ETP)) pl.etp = i ? 1 : 0;
    int rc = 0;
    if (fx & PF_FIX_EP) {
      if ((rc = enumerate_settings(s, pl)) < 0) return rc;
      continue;
    }
    long long ranks = (long long)b->gpus / pl.pp, etp = pf_plan_etp(&pl);
    for (int e = 1; e <= w->experts; e *= 2) {
      if (w->experts % e || ranks % (e * etp)) continue;
      pl.ep = e;
      if ((rc = enumerate_settings(s, pl)) < 0) return rc;
    }
  }
  return 0;
}

static int enumerate(pf_tune_search *s) {
  const pf_scenario *b = s->base;
  const pf_workload *w = &b->workload;
  unsigned fx = fixed_of(s);
  int gpn = b->machine.gpus_per_node, gpus = b->gpus;
  int tr = w->kind == PF_WL_TRANSFORMER;
  bool own_layout = !tr || pf_plan_uneven(&b->plan); /* the user's uneven stages are kept */
  int tps[64], ntp = 0, cps[8], ncp = 0, pps[256], npp = 0, shape = 0;
  if (fx & PF_FIX_TP || !tr) add_unique(tps, &ntp, tr ? b->plan.tp : 1);
  else
    for (int t = 1; t <= (b->plan.tp_across_nodes ? gpus : gpn) && ntp < 64; t++) {
      if (!b->plan.tp_across_nodes && gpn % t) continue;
      if (w->heads % t || (w->kv_heads % t && t % w->kv_heads)) continue;
      add_unique(tps, &ntp, t);
    }
  if (fx & PF_FIX_CP || !tr) add_unique(cps, &ncp, tr ? b->plan.cp : 1);
  else
    for (int c = 1; c <= 16; c *= 2)
      if (c == 1 || w->seq % (2 * c) == 0) add_unique(cps, &ncp, c);
  if (fx & PF_FIX_PP || !tr) add_unique(pps, &npp, tr ? b->plan.pp : 1);
  else
    for (int q = 1; q <= w->layers && q <= 512 && npp < 256; q++)
      if (w->layers % q == 0 || (2 * q <= w->layers && (!(q & (q - 1)) || gpus % q == 0))) add_unique(pps, &npp, q);
  /* PP that does not divide the layers: the powers of two and the divisors of the GPU count (12 a node leaves
   * only multiples of 3 once TP and CP are powers of two), at least two layers a stage, with a layout of uneven
   * stages (pf_plan_auto_layout, unless the user gave one) */
  for (int i = 0; i < ntp; i++)
    for (int j = 0; j < ncp; j++)
      for (int k = 0; k < npp; k++) {
        pf_plan pl = b->plan;
        pl.tp = tps[i];
        pl.cp = cps[j];
        pl.pp = pps[k];
        pl.dp = 0;
        pl.grad_accum = 0;
        if (gpus % (pl.tp * pl.cp * pl.pp)) continue;
        s->skip = s->nparts > 1 && shape++ % s->nparts != s->part; /* another worker's shape (tunebound.c) */
        pl.sp = fx & PF_FIX_SP ? b->plan.sp : pl.tp > 1;
        /* schedules: the user's, or 1F1B and every interleaving degree Megatron accepts */
        if (fx & PF_FIX_SCHEDULE) {
          int rc = own_layout || pf_plan_auto_layout(&pl, w->layers, w->mtp_layers) == 0 ? enumerate_rest(s, pl) : 0;
          if (rc < 0) return rc;
          continue;
        }
        int lpp = tr ? w->layers / pl.pp : 1, uneven = tr && w->layers % pl.pp;
        for (int v = 1; v <= lpp; v++) {
          if (v > 1 && (pl.pp == 1 || (uneven ? v > 8 || (v & (v - 1)) : lpp % v))) continue;
          pl.schedule = v == 1 ? PF_SCHED_1F1B : PF_SCHED_INTERLEAVED;
          pl.vstages = v;
          if (!own_layout && pf_plan_auto_layout(&pl, w->layers, w->mtp_layers) < 0) continue;
          int rc = enumerate_rest(s, pl);
          if (rc < 0) return rc;
        }
      }
  return 0;
}

/* One pass over the enumeration (this shard's plans, in order). */
int pf_tune_pass(pf_tune_search *s, int which) {
  s->pass = which;
  s->skip = false;
  s->index = s->enumerated = s->dealt = 0;
  return enumerate(s);
}

static int by_lb(const void *a, const void *b) {
  const pf_tune_ent *x = a, *y = b;
  if (x->lb != y->lb) return x->lb < y->lb ? -1 : 1;
  return (x->at > y->at) - (x->at < y->at);
}

/* CPU seconds of this process and its finished workers (the timing diagnostics). */
static double cpu_s(void) {
  struct rusage a, b;
  getrusage(RUSAGE_SELF, &a);
  getrusage(RUSAGE_CHILDREN, &b);
  return a.ru_utime.tv_sec + a.ru_stime.tv_sec + b.ru_utime.tv_sec + b.ru_stime.tv_sec +
         1e-6 * (a.ru_utime.tv_usec + a.ru_stime.tv_usec + b.ru_utime.tv_usec + b.ru_stime.tv_usec);
}

/* Branch and bound: every plan is checked and bounded (PF_TUNE_PASS_BOUND); then, in rounds of doubling size, the
 * unpriced plans of lowest bound that can still rank are priced: a bound above the pool's cut (the 2 x top best
 * screening so far) cannot, as a plan's screening is never below its bound; a ZeRO-2/3 plan also can while its
 * bound is not above the best sharded plan's screening (tunezero.c), an EP 1 plan while its bound is not above the
 * best EP 1 plan's (tuneep.c).  The finalists, the best sharded and the best EP 1 plan are those of pricing
 * every plan; what is left unpriced is counted as bounded.  exhaustive prices all. */
static int search_plans(pf_tune_search *s) {
  double c0 = cpu_s();
  int rc = pf_tune_bound_pass(s);
  s->out->bound_cpu_s = cpu_s() - c0;
  long n = s->nent, total = s->enumerated;
  if (rc < 0 || n == 0) return rc;
  s->mark = calloc((size_t)total, 1);
  s->lb_at = calloc((size_t)total, sizeof *s->lb_at);
  if (!s->mark || !s->lb_at) return pf_error_set(PF_ENOMEM, "out of memory");
  for (long i = 0; i < n; i++) s->lb_at[s->ent[i].at] = s->ent[i].lb;
  qsort(s->ent, (size_t)n, sizeof *s->ent, by_lb);
  for (long chunk = s->pool.keep; rc == 0; chunk *= 2) {
    double cp = s->o->exhaustive ? INFINITY : cut(s);
    double cz = s->o->exhaustive || !s->out->has_sharded ? INFINITY : s->out->sharded.screen;
    double ce = s->o->exhaustive || !s->out->ep1.has_fastest ? INFINITY : s->out->ep1.fastest.screen;
    long marked = 0;
    for (long i = 0; i < n && (s->o->exhaustive || marked < chunk); i++) {
      const pf_tune_ent *e = &s->ent[i];
      if (e->lb > cp && e->lb > cz && e->lb > ce) break; /* sorted: none after it can rank or lead its class */
      if (s->mark[e->at] || (e->lb > cp && !e->sharded && !e->ep1)) continue;
      s->mark[e->at] = 1;
      marked++;
    }
    if (marked == 0) break;
    rc = pf_tune_price_round(s, marked, total);
  }
  s->enumerated = total;
  return rc;
}

/* The finalists: the best `keep` by screening, simulated with the scenario's engine, sorted by score. */
static int finalists(pf_tune_search *s, int keep, pf_tune_result *out) {
  const pf_tune_config *o = s->o;
  int rc = 0;
  qsort(s->pool.c, (size_t)s->pool.n, sizeof *s->pool.c, pf_tune_by_screen);
  int k = s->pool.n < keep ? s->pool.n : keep;
  pf_scenario *scs = calloc((size_t)(k ? k : 1), sizeof *scs);
  pf_batch_item *items = calloc((size_t)(k ? k : 1), sizeof *items);
  if (!scs || !items) rc = pf_error_set(PF_ENOMEM, "out of memory");
  for (int i = 0; i < k && rc == 0; i++) {
    scs[i] = *s->base;
    scs[i].plan = s->pool.c[i].plan;
    items[i].sc = &scs[i];
  }
  if (rc == 0) rc = pf_predict_batch(items, k, o->jobs, o->progress ? "tune: finalists" : NULL);
  for (int i = 0; i < k && rc == 0; i++) {
    if (items[i].rc < 0) { rc = pf_error_set(items[i].rc, "%s", items[i].detail); break; }
    pf_tune_cand *c = &s->pool.c[i];
    const pf_prediction *p = &items[i].pred;
    c->t_iter_s = p->iteration_time_s;
    c->tokens_per_s = p->tokens_per_s;
    c->tflops_per_gpu = p->tflops_per_gpu;
    c->energy_J = p->energy.facility_J;
    c->breakdown_s = p->breakdown_s;
    c->a2a_share = c->t_iter_s > 0 ? c->breakdown_s.ep_a2a / c->t_iter_s : 0;
    c->score = pf_tune_score(&scs[i], p, o->objective);
    c->simulated = true;
  }
  free(scs);
  free(items);
  if (rc == 0) {
    qsort(s->pool.c, (size_t)k, sizeof *s->pool.c, pf_tune_by_score);
    out->final = s->pool.c;
    out->nfinal = k;
    s->pool.c = NULL;
  }
  return rc;
}

int pf_tune(const pf_scenario *base_in, const pf_tune_config *o, pf_tune_result *out) {
  memset(out, 0, sizeof *out);
  int keep = 2 * (o->top > 0 ? o->top : 10);
  pf_tune_search s = {0};
  pf_scenario *base = malloc(sizeof *base);
  s.sc = malloc(sizeof *s.sc);
  s.p = malloc(sizeof *s.p);
  if (!base || !s.sc || !s.p) { free(base); free(s.sc); free(s.p); return pf_error_set(PF_ENOMEM, "out of memory"); }
  *base = *base_in;
  int gpn = base->machine.gpus_per_node;
  if (base->gpus <= 0) base->gpus = base->nodes * gpn;
  base->nodes = (base->gpus + gpn - 1) / gpn;
  s.base = base;
  s.o = o;
  s.out = out;
  s.pool.keep = keep;
  s.floor = INFINITY;
  s.ep1 = pf_workload_is_moe(&base->workload) && !(fixed_of(&s) & PF_FIX_EP);
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  double c0 = cpu_s();
  int rc = 0;
  pf_pp_layout lay; /* the user's uneven stages at a PP they fixed: a bad layout is named, not pruned everywhere */
  if (pf_plan_uneven(&base->plan) && (fixed_of(&s) & PF_FIX_PP)) rc = pf_plan_layout(base, &lay);
  bool bar = rc == 0 && o->progress;
  if (bar) { /* the plans this shard will look at, counted without evaluating them */
    s.counting = true;
    rc = enumerate(&s);
    pf_progress_begin("tune", s.enumerated, false);
    s.counting = false;
    s.index = s.enumerated = 0;
  }
  if (rc == 0) rc = search_plans(&s);
  if (bar) pf_progress_end();
  clock_gettime(CLOCK_MONOTONIC, &t1);
  out->eval_s = (t1.tv_sec - t0.tv_sec) + 1e-9 * (t1.tv_nsec - t0.tv_nsec);
  out->eval_cpu_s = cpu_s() - c0;
  out->enumerated = s.enumerated;
  out->pruned = s.pruned;
  out->evaluated = s.nent; /* every plan that fits: priced, or shown by its bound unable to rank */
  out->priced = s.evaluated;
  out->bounded = s.nent - s.evaluated;
  out->bound_over = s.over;
  if (rc == 0 && s.pool.n == 0 && o->nshards <= 1)
    rc = pf_tune_refuse(base, s.enumerated, s.pruned, s.has_tight ? &s.tight : NULL, &s.tight_m);
  if (rc == 0) rc = finalists(&s, keep, out);
  free(s.pool.c);
  free(s.ent);
  free(s.mark);
  free(s.lb_at);
  pf_tune_lb_free(&s.lb);
  free(base);
  free(s.sc);
  free(s.p);
  return rc;
}

void pf_tune_result_free(pf_tune_result *r) {
  free(r->final);
  memset(r, 0, sizeof *r);
}
