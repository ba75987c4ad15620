/* tune_int.h - internal: what the search (tune.c), its lower bound (tunebound.c) and its JSON and merge
 * (tunejson.c) share. */
#ifndef PREFLIGHT_TUNE_INT_H
#define PREFLIGHT_TUNE_INT_H

#include "tune.h"

#include <stdbool.h>

/* The objective's value of an iteration of t seconds and energy_J joules (pf_tune_score's). */
double pf_tune_score_of(const pf_scenario *sc, double t, double energy_J, pf_objective o);

/* qsort orders of candidates: by the screening's objective (ties: less memory, then the plan's fields), and by
 * the final score (ties: as by_screen). */
int pf_tune_by_screen(const void *a, const void *b);
int pf_tune_by_score(const void *a, const void *b);

/* The lower bound of a plan's screening (tunebound.c).  The closed-form pipeline's makespan is
 * M max_s t_s + (sum_s t_s - max_s t_s + hops) / V with t_s = the stage's compute + exposed communication per
 * microbatch (engine/pipeline.c); the iteration adds the DP synchronisation after it, the optimizer and the
 * fitted step overhead (predict.c).  With the ZeRO-3 per-unit collectives left out of t_s (c_s <= t_s) and the
 * hops, the DP and the optimizer left out, (M - 1/V) max_s c_s + sum_s c_s / V + overhead never exceeds the
 * screened iteration time: the expression grows with every c_s (M >= 1 >= 1/V).  c_s depends on the plan's shape
 * (TP, CP, PP, layout, schedule, EP, ETP, micro-batch, recomputation, SP, the TP-comm overlap), not on the
 * optimizer's sharding or the DP overlap flags, so the last shapes' bounds are kept: the settings of one shape are
 * enumerated one after another, and the TP-comm overlap, searched on and off innermost (tune.c try_settings),
 * alternates two shapes from one plan to the next, so two are kept (one shape's bound is the same whichever plan
 * of the shape computes it: a memo, never an approximation). */
enum { PF_TUNE_LB_WAYS = 2 };
typedef struct pf_tune_lb_shape {
  pf_plan key;            /* the shape bounded (the settings cleared) */
  bool has;
  double sum, cr, tr;     /* its stages' compute, the most of one stage's (stage r), and r's with its all-to-alls */
  double fill0;           /* interleaved: the chunk-0 compute of the stages before r (tunebound.c) */
  int r;
  int zkey;               /* ZeRO-2/3: the sharding level and group whose per-unit collectives zadd holds (0: none) */
  double zadd;
  pf_stage_work *w;       /* stage r's work (with its all-to-alls), which the per-unit collectives add to */
} pf_tune_lb_shape;
typedef struct pf_tune_lb {
  pf_tune_lb_shape e[PF_TUNE_LB_WAYS];
  int last;               /* the entry used last (the other is replaced on a miss) */
  struct pf_stage_comm *stage_comm; /* scratch */
  struct pf_comm *comm;   /* the machine's topology, built once */
} pf_tune_lb;

/* A lower bound of sc's screened iteration time (sc: a checked plan, the analytic engine). */
int pf_tune_lb_time(pf_tune_lb *b, const pf_scenario *sc, double *t_s);
/* The objective's lower bound for an iteration of at least t_s: time and billing grow with the time; energy and
 * action are not bounded (0: never above a screened value). */
double pf_tune_lb_score(const pf_scenario *sc, double t_s, pf_objective o);
void pf_tune_lb_free(pf_tune_lb *b);

typedef struct {
  int n, cap;
  pf_tune_cand *c;   /* the best `keep` by screening, kept sorted lazily */
  int keep;
} pf_tune_pool;

/* A plan that fits, with the lower bound of its screening (tunebound.c). */
typedef struct {
  double lb;         /* lower bound of the objective */
  long at;           /* its position among this shard's plans */
  bool sharded;      /* ZeRO-2/3: it may be the best sharded plan whatever its rank */
  bool ep1;          /* EP 1 of a search of EP: it may be the best EP 1 plan whatever its rank (tuneep.c) */
} pf_tune_ent;

enum { PF_TUNE_PASS_BOUND, PF_TUNE_PASS_PRICE };

typedef struct pf_tune_search {
  const pf_scenario *base;
  const pf_tune_config *o;
  pf_scenario *sc;
  pf_prediction *p;
  pf_tune_pool pool;
  long index;        /* position in the enumeration */
  long enumerated, pruned, evaluated;
  bool counting;     /* a first pass that only counts this shard's plans (the progress bar's total) */
  int pass;          /* PF_TUNE_PASS_BOUND: check, memory and bound of every plan; PF_TUNE_PASS_PRICE: price the marked ones */
  pf_tune_lb lb;
  pf_tune_ent *ent;    /* the plans that fit */
  long nent, capent;
  unsigned char *mark; /* per position: 1 to price in this pass, 2 priced */
  double *lb_at;     /* per position: the bound (to check it against the screening) */
  long over;         /* plans screened below their bound: a broken bound (tests, under exhaustive) */
  pf_tune_result *out; /* keeps the best sharded plan (tunezero.c) and EP 1's (tuneep.c) */
  bool ep1;          /* a mixture of experts with EP searched: what EP 1 comes to is kept */
  bool has_tight;    /* the valid plan that came closest to fitting, for the refusal's memory terms */
  pf_plan tight;
  pf_memory tight_m;
  long tight_at;     /* its position (ties: the first) */
  int part, nparts;  /* a pass over workers: this one bounds the shapes whose index is part mod nparts (the bound
                        pass), or prices the marked plans whose rank among the marked is part mod nparts */
  bool skip;         /* the shape being enumerated is another worker's */
  long dealt;        /* the marked plans met so far in this pricing pass */
  double floor;      /* a pricing worker: the parent's cut (INFINITY otherwise) */
} pf_tune_search;

/* One pass over the enumeration (this shard's plans, in order): PF_TUNE_PASS_BOUND checks, prunes and bounds
 * (the shapes of s->part mod s->nparts), PF_TUNE_PASS_PRICE prices the marked plans (tune.c). */
int pf_tune_pass(pf_tune_search *s, int which);
/* The bound pass over the workers (tunebound.c): each bounds every nparts-th shape; the entries, counts, the
 * closest plan and EP 1's are joined as one pass gives them. */
int pf_tune_bound_pass(pf_tune_search *s);
/* Price the marked plans of one round (total: the shard's plans), over workers when there are enough of them
 * (tuneprice.c); the pool, the best sharded plan and the counts come out as one process gives them. */
int pf_tune_price_round(pf_tune_search *s, long marked, long total);
/* Add a candidate to the pool (cut to the best keep by screening as it grows); 0 or PF_ENOMEM (tune.c). */
int pf_tune_pool_add(pf_tune_pool *p, const pf_tune_cand *c);
/* Sort the pool by screening and cut it to keep; the keep-th best screening, or INFINITY while it is short. */
double pf_tune_pool_cut(pf_tune_pool *p);
/* Join EP 1's keep of another worker or shard (tuneep.c). */
void pf_tune_ep1_join(pf_tune_ep1 *into, const pf_tune_ep1 *from);
/* No expert parallelism: EP 1 and ETP 1, every routed expert whole on each GPU of its stage (tuneep.c's class) */
bool pf_tune_no_ep(const pf_plan *p);

#endif
