/* tune.h - the best parallel configuration of a job on a fixed number of GPUs.
 *
 * The search space is every plan Megatron-LM accepts for the workload: TP
 * (dividing the node's GPUs, or beyond with --tp-across-nodes, and the
 * attention and KV heads), CP, PP (dividing the layers, and the powers of two
 * that do not, with uneven stages: pf_plan_auto_layout), the micro-batch size,
 * the schedule (1F1B and every interleaving degree V with layers divisible by
 * PP x V; 2, 4, 8 with uneven stages), recomputation, sequence parallelism, the distributed optimizer and
 * the overlap flags; what the user fixed is not searched (pf_tune_fixed).
 * Each plan is checked (pf_plan_check, memory) - a plan that fails is PRUNED
 * and not priced - and the rest are EVALUATED with the closed-form pipeline
 * engine; the best 2 x top by the objective are then simulated with the
 * scenario's engine (SimGrid DES by default) for the final ranking.
 *
 * Sharding (--shard i/n) evaluates the plans whose index in the enumeration is
 * i - 1 modulo n; the union of the shards' finalists holds every finalist of
 * the unsharded search, so pf_tune_merge() gives the same result.
 */
#ifndef PREFLIGHT_TUNE_H
#define PREFLIGHT_TUNE_H

#include "predict.h"

#include <cjson/cJSON.h>

typedef enum { PF_OBJ_TIME, PF_OBJ_ENERGY, PF_OBJ_BILLING, PF_OBJ_ACTION } pf_objective;
const char *pf_objective_name(pf_objective o);
int pf_objective_parse(const char *s, pf_objective *out);

/* What the user fixed (not searched). */
enum {
  PF_FIX_TP = 1 << 0, PF_FIX_PP = 1 << 1, PF_FIX_CP = 1 << 2, PF_FIX_MBS = 1 << 3, PF_FIX_RECOMPUTE = 1 << 4,
  PF_FIX_SCHEDULE = 1 << 5, PF_FIX_SP = 1 << 6, PF_FIX_DIST_OPT = 1 << 7, PF_FIX_OVERLAP_GRAD = 1 << 8,
  PF_FIX_OVERLAP_PARAM = 1 << 9, PF_FIX_FLASH_ATTN = 1 << 10, PF_FIX_TP_COMM_OVERLAP = 1 << 11,
  PF_FIX_ZERO = 1 << 12, PF_FIX_SHARD_GROUP = 1 << 13, /* --zero, --fsdp-shard-group (tune searches 0-3, all|node) */
  PF_FIX_EP = 1 << 14, PF_FIX_ETP = 1 << 15
};

typedef struct pf_tune_cand {
  pf_plan plan;
  double t_iter_s, tokens_per_s, tflops_per_gpu, memory_GiB, energy_J; /* per iteration (facility energy) */
  pf_breakdown breakdown_s;
  double a2a_share;       /* the EP all-to-alls' share of the iteration, kept as computed: a shard's JSON holds
                           * t_iter_s and breakdown_s to cJSON's 15 digits, so merge must not recompute it */
  double screen;          /* objective value from the closed-form screening (lower is better) */
  double score;           /* objective value of the final simulation (finalists; else = screen) */
  bool simulated;         /* re-simulated with the scenario's engine (finalist) */
} pf_tune_cand;

/* No expert parallelism (EP 1 at ETP 1) in a search of EP (tuneep.c): the valid such plans, those that fit (with
 * ZeRO-0/1), and the one of least memory (ZeRO-0/1 before ZeRO-2/3, a fitting one first within each) with its
 * memory terms; and the one that screened best of those priced (those the bound left unpriced cannot rank:
 * tune_int.h). */
typedef struct pf_tune_ep1 {
  long valid, fit, fit_zero1;
  bool has, fits;
  pf_plan plan;
  pf_memory m;
  bool has_fastest;
  pf_tune_cand fastest;
} pf_tune_ep1;

typedef struct pf_tune_result {
  long enumerated, pruned, evaluated; /* evaluated: the plans that fit, each priced or bounded out (shard-additive,
                                         so merge gives the unsharded counts) */
  long priced, bounded;   /* of those, priced with the closed-form engine, and left unpriced as their lower bound
                             cannot rank (tune_int.h); diagnostics (PREFLIGHT_TIMING), not in the result */
  long bound_over;        /* plans priced below their bound (0 unless the bound is wrong: tests) */
  int nfinal;             /* finalists: the best 2 x top by screening, simulated, sorted by score */
  pf_tune_cand *final;    /* owned */
  double eval_s;          /* wall time of the evaluation phase (for rates; not in the output) */
  double eval_cpu_s, bound_cpu_s; /* its CPU time, the workers' included, and the bound pass's (diagnostics) */
  int rounds, rounds_par; /* pricing rounds, and of them those priced over workers (diagnostics: tuneprice.c) */
  /* the best ZeRO-2/3 plan by the closed-form screening, whether or not it ranks (tunezero.c) */
  bool has_sharded;
  pf_tune_cand sharded;
  pf_tune_ep1 ep1;        /* a mixture of experts with EP searched: what EP 1 comes to (tuneep.c) */
} pf_tune_result;

typedef struct pf_tune_config {
  unsigned fixed;         /* PF_FIX_* */
  pf_objective objective;
  int top;                /* shown; 2 x top finalists are simulated */
  int shard, nshards;     /* 1-based shard of nshards (1/1 = all) */
  int jobs;               /* workers for the finalists (0: all cores) */
  bool progress;          /* draw the progress bar over the plans looked at (progress.h) */
  bool exhaustive;        /* price every plan that fits (no bound: PREFLIGHT_TUNE_EXHAUSTIVE=1, for tests) */
} pf_tune_config;

/* Search.  base holds the machine, workload, GPU count, global batch and every
 * option the user gave.  Returns 0, PF_ENOFIT (no plan fits: detail says how
 * many were tried) or another PF_E* code.  Free with pf_tune_result_free(). */
int pf_tune(const pf_scenario *base, const pf_tune_config *o, pf_tune_result *out);
void pf_tune_result_free(pf_tune_result *r);

/* Objective value of a prediction (lower is better). */
double pf_tune_score(const pf_scenario *sc, const pf_prediction *p, pf_objective o);

/* Why candidate c loses to the best b, e.g. "+4.1 % time: pp_bubble +1.2 s". */
void pf_tune_why(const pf_tune_cand *c, const pf_tune_cand *b, pf_objective o, char *buf, size_t n);

/* The best sharded plan (tunezero.c): keep c if it is ZeRO-2/3 and screens better than the one kept (ties:
 * less memory, then the options' text); its JSON "best_sharded" added to d, read back from a shard's document. */
void pf_tune_keep_sharded(pf_tune_result *r, const pf_tune_cand *c);
/* c screens better than b: lower screening, then less memory, then the options' text (deterministic ties) */
bool pf_tune_cand_better(const pf_tune_cand *c, const pf_tune_cand *b);
void pf_tune_sharded_json(cJSON *d, const pf_tune_result *r);
int pf_tune_sharded_merge(const cJSON *doc, pf_tune_result *r);
/* "ZeRO-3 over 4 ranks: 29.7 s (+7.1 % time), 58.0 GiB per GPU: --tp 1 ..." (nothing when none fits). */
void pf_tune_sharded_text(const pf_tune_result *r, pf_objective o, char *buf, size_t n);

/* EP 1 at ETP 1 (tuneep.c): count a valid such plan of memory m and keep the one of least memory, ZeRO-0/1
 * first and a fitting one first within each (ties: the options' text); its JSON "ep1" added to d, read back from a
 * shard's document; the line tune prints ("EP 1, ETP 1 (no expert parallelism: ...) refused with at most the
 * optimizer state sharded: none of 37620 valid plans fits; the closest, --tp 4 ...: 270.1 GiB per GPU (weights
 * ..., ...) over gh200-96's 96.0 GiB; gradients alone: 168.9 GiB; 2668 fit only with ... (ZeRO-2/3); the best of
 * them (screened), ..."; nothing without). */
void pf_tune_keep_ep1(pf_tune_result *r, const pf_plan *p, const pf_memory *m);
void pf_tune_keep_ep1_priced(pf_tune_result *r, const pf_tune_cand *c); /* an EP 1 plan priced: keep the best */
void pf_tune_ep1_json(cJSON *d, const pf_tune_result *r);
int pf_tune_ep1_merge(const cJSON *doc, pf_tune_result *r);
void pf_tune_ep1_text(const pf_tune_result *r, pf_objective o, const char *dev, char *buf, size_t n);
/* "139.3 GiB per GPU (weights a, gradients b, optimizer c, activations d, overhead e) over|within DEV's 96.0 GiB"
 * and, over, "; gradients + weights alone: 128.6 GiB"; the largest terms that alone exceed the device and their
 * sum (pf_tune_memory_over). */
void pf_tune_memory_terms(const pf_memory *m, const char *dev, char *buf, size_t n);
double pf_tune_memory_over(const pf_memory *m, char *buf, size_t n);

/* PF_ENOFIT when no plan fits: the counts and, when a valid plan was pruned for memory (tight, its memory m),
 * its memory terms against the device and the largest terms that alone exceed it (tuneplan.c). */
int pf_tune_refuse(const pf_scenario *base, long enumerated, long pruned, const pf_plan *tight, const pf_memory *m);

/* "--tp 4 --pp 8 ..." for a plan. */
void pf_tune_plan_text(const pf_plan *p, char *buf, size_t n);
/* " (+x % time vs the best, screened)" for plan p that screened at `screen`, against the best plan's screening
 * (the finalists' simulation is another engine's figure); where p is itself a finalist, its simulation too:
 * " (+x % time vs the best, screened; simulated: T s, +y %, rank k)"; "" without finalists. */
void pf_tune_vs_best_text(const pf_tune_result *r, pf_objective o, const pf_plan *p, double screen, char *buf,
                          size_t n);
/* The finalist that is plan p (its index in r->final), -1 if none; and, where there is one, its simulation added
 * to JSON object o as "simulated": {"rank", "iteration_time_s"} (the table's figures). */
int pf_tune_final_index(const pf_tune_result *r, const pf_plan *p);
void pf_tune_simulated_json(cJSON *o, const pf_tune_result *r, const pf_plan *p);

/* JSON of a (possibly sharded) result: counters and the finalists with every
 * plan field, enough for pf_tune_merge.  Caller frees. */
cJSON *pf_tune_json(const pf_tune_result *r, const pf_tune_config *o);
/* Join shard documents (as pf_tune_json wrote them) into the result the
 * unsharded search gives.  PF_EPARSE names the shard that does not fit. */
int pf_tune_merge(cJSON *const *docs, int n, const pf_tune_config *o, pf_tune_result *out);

#endif
