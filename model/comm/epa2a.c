/* epa2a.c - the expert-parallel all-to-alls of a pipeline stage (comm.h pf_comm_stage_ep; docs/model.md
 * "Expert parallelism").
 *
 * Groups.  Megatron-Core cuts the expert groups from the same TP x CP x DP ranks of a stage as the attention
 * (MoE parallel folding, arXiv 2504.14960; megatron/core/parallel_state.py initialize_model_parallel, the
 * expert RankGenerator "tp-ep-dp-pp"): the stage's ranks listed in the attention's order (TP fastest, then
 * CP, then DP: pf_plan_rank, whatever --rank-order puts between them) are re-read as ETP fastest, then EP,
 * then EDP, so an EP group takes every ETP-th of EP consecutive blocks.  All ETP x EDP groups of the stage
 * run their all-to-all at once.
 *
 * Calls.  Megatron's alltoall token dispatcher (token_dispatcher.py MoEAlltoAllTokenDispatcher) sends each
 * token once per routed expert, NCCL all-to-all: per MoE layer a dispatch and a combine forward, and their
 * two mirror images backward (the gradients of the combine's output dispatched, those of the experts'
 * input combined).  A rank sends its M ETP / TP tokens' top-k copies of h elements (the rows its experts
 * receive, moelayer.c): the dispatch in the activations' element size (1 byte under FP8, as DeepSeek-V3
 * dispatches, arXiv 2412.19437 section 3.3.2), the combine and the backward calls in at least 2 bytes
 * (bf16).  Not overlapped: the experts wait for their tokens and the next layer for the combine (Megatron's
 * --overlap-moe-expert-parallel-comm is not modelled). */
#include "comm.h"

#include "core/core.h"

#include <stdlib.h>

int pf_comm_ep_groups(const pf_scenario *sc, int stage, int **gpus, int *ngroups) {
  const pf_plan *p = &sc->plan;
  int ep = pf_plan_ep(p), etp = pf_plan_etp(p), edp = pf_plan_edp(p), n = p->tp * p->cp * p->dp;
  int *stg = malloc((size_t)n * sizeof *stg), *g = malloc((size_t)n * sizeof *g);
  if (!stg || !g) {
    free(stg);
    free(g);
    return pf_error_set(PF_ENOMEM, "out of memory");
  }
  int i = 0;
  for (int d = 0; d < p->dp; d++)
    for (int c = 0; c < p->cp; c++)
      for (int t = 0; t < p->tp; t++) stg[i++] = pf_plan_rank(p, t, c, d, stage);
  i = 0;
  for (int e = 0; e < edp; e++)
    for (int t = 0; t < etp; t++)
      for (int r = 0; r < ep; r++) g[i++] = stg[t + etp * (r + ep * e)];
  free(stg);
  *gpus = g;
  *ngroups = etp * edp;
  return 0;
}

static void add(pf_stage_comm *o, const pf_a2a_result *r, double times) {
  o->fabric_bytes += times * r->fabric_bytes;
  o->nic_bytes += times * r->nic_bytes;
  o->busy_s += times * r->time_s;
  o->inter |= r->nodes > 1;
}

int pf_comm_stage_ep(const pf_comm *c, int stage, pf_stage_work *w, pf_stage_comm *o) {
  const pf_scenario *sc = c->sc;
  const pf_plan *p = &sc->plan;
  const pf_workload *wl = &sc->workload;
  w->fwd_ep_s = w->bwd_ep_s = 0;
  int ep = pf_plan_ep(p);
  if (ep < 2 || !pf_workload_is_moe(wl)) return 0;
  int lps = pf_plan_stage_layers(c->sc, stage), nmoe = pf_workload_moe_layers_in(wl, pf_plan_stage_first_layer(c->sc, stage), lps);
  if (stage == p->pp - 1) nmoe += wl->mtp_layers; /* the MTP module's MoE layer */
  if (nmoe == 0) return 0;
  int *g, ng, rc;
  if ((rc = pf_comm_ep_groups(sc, stage, &g, &ng)) < 0) return rc;
  double el = pf_precision_bytes(sc->precision), el2 = el < 2.0 ? 2.0 : el;
  double rows = p->mbs * (double)wl->seq / p->cp * pf_plan_etp(p) / p->tp * wl->topk;
  pf_a2a_req rq = {.groups = g, .ngroups = ng, .p = ep, .bytes = rows * wl->hidden * el, .topk = wl->topk,
                   .lib = PF_A2A_NCCL};
  pf_a2a_result disp, comb;
  if ((rc = pf_comm_alltoall(c, &rq, &disp)) == 0) {
    rq.bytes = rows * wl->hidden * el2;
    rc = pf_comm_alltoall(c, &rq, &comb);
  }
  free(g);
  if (rc < 0) return rc;
  w->fwd_ep_s = nmoe * (disp.time_s + comb.time_s);
  w->bwd_ep_s = nmoe * 2.0 * comb.time_s;
  w->fwd_tp_s += w->fwd_ep_s; /* on the critical path with the TP/CP collectives (the engines add them) */
  w->bwd_tp_s += w->bwd_ep_s;
  add(o, &disp, nmoe);
  add(o, &comb, 3.0 * nmoe);
  return 0;
}
