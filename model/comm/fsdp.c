/* fsdp.c - the per-unit collectives of sharded data parallelism (ZeRO-2, ZeRO-3 / FSDP; comm.h, formulas in
 * docs/model.md "Sharded data parallelism" and docs/communication.md section 6).
 *
 * ZeRO-3 (P_os+g+p; Rajbhandari et al., arXiv 1910.02054, section 7.2.2) gathers each unit's parameters before
 * its forward and again before its backward, and reduce-scatters each unit's gradient after its backward; PyTorch
 * FSDP runs exactly that per FSDP unit (Zhao et al., VLDB 2023, arXiv 2304.11277, section 3.3 and Figure 5:
 * FULL_SHARD all-gathers in forward and backward, reduce-scatters in backward, once per microbatch when
 * gradients are synchronised every microbatch, as DeepSpeed does and FSDP does without no_sync).  ZeRO-2
 * (P_os+g) keeps the parameters and reduce-scatters each unit's gradient in every backward; its parameters are
 * all-gathered once after the optimizer step (engine/dpsync.c, as with the distributed optimizer).  With
 * HYBRID_SHARD (FSDP paper section 3.2.2) the shard group is a node's ranks of the DP x CP group: the
 * all-gather and reduce-scatter stay inside the node, and each shard's gradient is then all-reduced across
 * the replicas (the ranks at the same place in the other nodes).
 *
 * In time, per microbatch on one stage of n units (V chunks of n/V each: a chunk is a pass the pipeline runs
 * in one piece), with a = one unit's all-gather, r its reduce-scatter, x the hybrid all-reduce, f and b one
 * unit's forward and backward compute, and the collectives on their own stream:
 *   prefetch >= 1 (PyTorch's FSDP notes, "FSDP Prefetch Nuances": the forward's all-gathers run on their own
 *   stream, so unit i+1's overlaps unit i's compute and "the 1st all-gather will not be able to overlap with
 *   anything"; backward prefetch BACKWARD_PRE, FSDP2's one explicit prefetch in reverse forward order,
 *   pytorch/pytorch#128884; Megatron-FSDP's double buffer, runtime_schedule.md):
 *     forward   V (a + (n/V - 1) max(0, a - f))              the first gather waits, the rest hide behind
 *     backward  V (a + (n/V - 1) max(0, a + r + x - b) + r + x)  the previous unit's compute
 *   prefetch 0: every gather waits (n a in each pass); the reduce-scatters still run behind the next unit.
 * ZeRO-2 has no per-unit gathers (a = 0 in both passes).  What runs hidden holds the collective kernels'
 * share of the compute units (pf_comm_sm_share, docs/communication.md 6): it slows the compute it hides
 * behind by hidden x share, counted with the exposed time, as the TP overlap and the DP overlap do.
 */
#include "comm.h"

#include "core/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The shard groups: each DP x CP group of the stage (pf_dp_groups, members in rank order) cut into runs of
 * pf_plan_shard_size consecutive members (those of one node under HYBRID_SHARD, else the whole group). */
int pf_shard_groups(const pf_scenario *sc, int stage, int **gpus, int *ngroups, int *size) {
  int *G, ng, n, rc;
  if ((rc = pf_dp_groups(sc, stage, &G, &ng, &n)) < 0) return rc;
  int k = pf_plan_zero(&sc->plan) >= 2 ? pf_plan_shard_size(sc) : n;
  if (k < 1 || n % k) k = n;
  *gpus = G; /* the same members, read k at a time */
  *ngroups = ng * (n / k);
  *size = k;
  return 0;
}

/* The replica groups of HYBRID_SHARD: the members at the same place of each shard group of a DP x CP group. */
int pf_replica_groups(const pf_scenario *sc, int stage, int **gpus, int *ngroups, int *size) {
  int *G, ng, k, rc;
  if ((rc = pf_shard_groups(sc, stage, &G, &ng, &k)) < 0) return rc;
  int per = k > 0 ? ng * k / sc->plan.tp : 0; /* members of one DP x CP group */
  int *R = malloc((size_t)ng * k * sizeof *R);
  if (!R) { free(G); return pf_error_set(PF_ENOMEM, "out of memory"); }
  int q = 0, reps = per / k;
  for (int t = 0; t < sc->plan.tp; t++)
    for (int i = 0; i < k; i++)
      for (int j = 0; j < reps; j++) R[q++] = G[t * per + j * k + i];
  free(G);
  *gpus = R;
  *ngroups = sc->plan.tp * k;
  *size = reps;
  return 0;
}

int pf_shard_collective_pattern(const pf_scenario *sc, const pf_topology *t, pf_coll_kind kind, double bytes,
                                int stage, pf_coll_pattern *pat, pf_coll_result *info) {
  memset(pat, 0, sizeof *pat);
  int *G, ng, p, rc;
  if ((rc = pf_shard_groups(sc, stage, &G, &ng, &p)) < 0) return rc;
  pf_coll_req rq = {kind, bytes, G, ng, p, (pf_coll_algo)sc->collective, sc->coll_proto};
  rc = pf_coll_choose(t, &rq, pat, info);
  free(G);
  return rc;
}

/* FSDP units one microbatch passes through on stage s: its layers, and the embedding and the output layer
 * as units of their own where the stage holds them (Megatron-FSDP and FSDP2 wrap them apart). */
static int stage_units(const pf_scenario *sc, int s) {
  const pf_workload *w = &sc->workload;
  if (w->kind != PF_WL_TRANSFORMER) return 1;
  int n = pf_plan_stage_layers(sc, s); /* the stage's own layers (uneven stages: job/pplayout.c) */
  if (s == 0) n++;
  if (s == sc->plan.pp - 1 && (!w->tied_embeddings || sc->plan.pp > 1)) n++;
  return n > 0 ? n : 1;
}

/* One unit's collective over `groups` (all of the stage's groups at once), its time and bytes. */
static int unit_coll(const pf_comm *c, pf_coll_kind kind, double bytes, int (*groups)(const pf_scenario *, int, int **,
                     int *, int *), int s, pf_coll_result *res) {
  int *G, ng, p, rc;
  memset(res, 0, sizeof *res);
  if ((rc = groups(c->sc, s, &G, &ng, &p)) < 0) return rc;
  if (p > 1) rc = pf_comm_collective(c, kind, (pf_coll_algo)c->sc->collective, bytes, G, ng, p, NULL, res);
  free(G);
  return rc;
}

/* Exposed time per microbatch (header formulas) and the split of the backward's into gathers and reductions. */
static void exposed(const pf_plan *p, int z, double n, double V, double f, double b, pf_fsdp_cost *o) {
  double a = z >= 3 ? o->ag_s : 0, red = o->rs_s + o->ar_s, nc = n / V;
  bool pre = p->fsdp_prefetch >= 1;
  o->fwd_ag_s = pre ? V * (a + (nc - 1) * fmax(0.0, a - f)) : n * a;
  double tail = pre ? (nc - 1) * fmax(0.0, a + red - b) : (nc - 1) * fmax(0.0, red - b);
  double gath = pre ? V * a : n * a;
  /* the backward's waiting beyond the first gather, shared between gathers and reductions by their times */
  double share = a + red > 0 ? a / (a + red) : 0;
  o->bwd_ag_s = gath + (pre ? V * tail * share : 0);
  o->bwd_rs_s = V * (red + tail * (pre ? 1 - share : 1));
  o->busy_s = n * (2 * a + red);
  o->hidden_s = fmax(0.0, o->busy_s - o->fwd_ag_s - o->bwd_ag_s - o->bwd_rs_s);
}

int pf_comm_fsdp(const pf_comm *c, int s, pf_stage_work *w, pf_fsdp_cost *o) {
  const pf_scenario *sc = c->sc;
  const pf_plan *p = &sc->plan;
  memset(o, 0, sizeof *o);
  int z = pf_plan_zero(p), rc;
  if (z < 2 || p->dp * p->cp < 2 || sc->workload.dp_impl == PF_DPIMPL_DATAPARALLEL) return 0;
  double n = stage_units(sc, s), V = p->schedule == PF_SCHED_INTERLEAVED ? p->vstages : 1;
  if (V > n) V = n;
  /* parameters gathered in the training precision, gradients reduced at pf_grad_bytes (plan.h), as dpsync.c */
  double pbytes = sc->precision == PF_FP32 || sc->precision == PF_TF32 ? 4.0 : 2.0;
  double gbytes = pf_grad_bytes(sc), unit = w->params / n;
  pf_coll_result ag, rs, ar;
  memset(&ag, 0, sizeof ag);
  if (z >= 3 && (rc = unit_coll(c, PF_ALLGATHER, unit * pbytes, pf_shard_groups, s, &ag)) < 0) return rc;
  if ((rc = unit_coll(c, PF_REDUCE_SCATTER, unit * gbytes, pf_shard_groups, s, &rs)) < 0) return rc;
  int k = pf_plan_shard_size(sc);
  memset(&ar, 0, sizeof ar);
  if (p->shard_group == PF_SHARD_NODE &&
      (rc = unit_coll(c, PF_ALLREDUCE, unit * gbytes / k, pf_replica_groups, s, &ar)) < 0) return rc;
  o->level = z;
  o->units = n;
  o->ag_s = ag.time_s, o->rs_s = rs.time_s, o->ar_s = ar.time_s;
  exposed(p, z, n, V, w->fwd_s / n, w->bwd_s / n, o);
  /* the hidden part slows the compute under it by the collective kernels' share of the compute units */
  o->interference_s = o->hidden_s * c->sm_share;
  double e = o->fwd_ag_s + o->bwd_ag_s + o->bwd_rs_s, fw = e > 0 ? o->interference_s / e : 0;
  o->fwd_ag_s *= 1 + fw, o->bwd_ag_s *= 1 + fw, o->bwd_rs_s *= 1 + fw;
  w->fwd_tp_s += o->fwd_ag_s;
  w->bwd_tp_s += o->bwd_ag_s + o->bwd_rs_s;
  double calls_ag = z >= 3 ? 2 * n : 0;
  o->fabric_bytes = calls_ag * ag.fabric_bytes + n * (rs.fabric_bytes + ar.fabric_bytes);
  o->nic_bytes = calls_ag * ag.nic_bytes + n * (rs.nic_bytes + ar.nic_bytes);
  o->inter = (z >= 3 && ag.inter) || rs.inter;
  o->inter_busy_s = n * ((z >= 3 && ag.inter ? 2 * ag.time_s : 0) + (rs.inter ? rs.time_s : 0) +
                         (ar.inter ? ar.time_s : 0));
  o->algo = rs.algo;
  o->proto = rs.proto;
  return 0;
}
