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
 * Calls.  Megatron's token dispatchers (megatron/core/transformer/moe/token_dispatcher.py) send each token once
 * per routed expert: per MoE layer a dispatch and a combine forward, and their two mirror images backward (the
 * gradients of the combine's output dispatched, those of the experts' input combined); with --recompute full or
 * --recompute-modules moe the recomputed forward dispatches and combines again.  A rank sends its M ETP / TP
 * tokens' top-k copies of h elements (the rows its experts receive, moelayer.c).  --moe-token-dispatcher-type
 * picks the library:
 *  alltoall  NCCL's all-to-all (MoEAlltoAllTokenDispatcher), bf16 whatever the GEMMs' precision (Transformer
 *            Engine casts to FP8 inside the experts' GEMMs, after the dispatch);
 *  flex      DeepEP's kernels (MoEFlexTokenDispatcher with --moe-enable-deepep): one crossing per node, so
 *            node-limited routing lowers the network bytes (alltoall.c), and under FP8 the dispatch in FP8
 *            with one fp32 scale per 128 elements (DeepEP README: "FP8 dispatching and BF16 combining";
 *            DeepSeek-V3 arXiv 2412.19437 section 3.3.3 quantizes the activations before the MoE
 *            up-projections to FP8 for the dispatch, 1 x 128 tiles), the combine in bf16;
 *            --moe-flex-dispatcher-backend hybridep runs NVIDIA's HybridEP instead: the same flows at its own
 *            measured rates, which differ by call (FP8 dispatch, bf16 dispatch, combine), ranks and SMs
 *            (--moe-hybridep-num-sms), as DeepEP's do where its SMs bind (alltoall.c), so the backward's bf16
 *            dispatch is priced as itself.
 * Node-limited routing: with --moe-router-num-groups G and --moe-router-group-topk K the experts are G groups of
 * consecutive experts, laid on the EP ranks in order, so when the group's N nodes hold whole groups (G a multiple
 * of N) a token reaches at most K nodes, and when a group spans N / G nodes, at most K N / G (Megatron-Core's
 * README: "Node-limited routing: set equal to number of nodes in EP group"; DeepSeek-V3's G 8, K 4 over 8 nodes).
 *
 * Overlap (--overlap-moe-expert-parallel-comm).  Megatron-Core's combined 1F1B schedule
 * (megatron/core/pipeline_parallel/combined_1f1b.py, MCore v0.14) runs the forward of one microbatch beside the
 * backward of another, each layer's all-to-alls on a communication stream under the other's attention and
 * MLP; DeepSeek-V3's DualPipe pairs a forward and a backward chunk the same way (arXiv 2412.19437 section
 * 3.2.1, Figure 4).  So a microbatch's all-to-alls A (forward and backward) hide behind the compute C of its
 * stage's MoE layers (their share of the stage's layers), at the price of the SMs the communication kernels
 * hold while they run, a share s of the device's (DeepEP: --moe-deepep-num-sms of them, 20 by default, the 20
 * of 132 DeepSeek-V3 gives them; HybridEP: --moe-hybridep-num-sms, 16 by default; NCCL: its 16 channels,
 * comm.c): while the all-to-all runs compute proceeds at
 * 1 - s, so h = min(A, C / (1 - s)) is hidden, the step pays A - h exposed plus h s of slower compute (a GEMM
 * beside DeepEP's 20 SMs of an H100's 132 takes 1 / (1 - s) = 1.18 times as long; Megatron-Core's EP-overlap
 * guide, docs/user-guide/features/moe_a2a_overlap.md at fc81b209, quotes the MoE report arXiv 2603.07685:
 * "reserves 20 SMs per GPU and observes about a 20% GEMM-efficiency cost").  Only the steady state pairs: the
 * same guide, "The first forward and final backward remain exposed fill/drain phases", and with PP "The overlap
 * schedule moves one additional forward microbatch into warmup".  Of a stage's M V chunk passes (M microbatches,
 * V virtual stages) the warm-up forwards and as many cool-down backwards run alone: W = 1 without PP, and
 * Megatron's interleaved warm-up 2 (P - s - 1) + (V - 1) P plus that one with it (schedules.py
 * forward_backward_pipelining_with_interleaving), so a share W / (M V) of each pass's all-to-alls stays
 * exposed, all of them at M = 1 ("With only one microbatch there is no steady-state pair").  DualPipe's
 * bidirectional schedule is taken as pairing every chunk, as the report's Figure 5 draws its steady state. */
#include "comm.h"

#include "core/core.h"

#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

/* The stage's ranks re-read as ETP fastest, then EP, then EDP (header, "Groups"): with ep_groups the EP
 * groups (ETP x EDP of EP ranks), else the EDP groups (ETP x EP of EDP ranks). */
static int expert_groups(const pf_scenario *sc, int stage, int ep_groups, int **gpus, int *ngroups, int *size) {
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
  if (ep_groups)
    for (int e = 0; e < edp; e++)
      for (int t = 0; t < etp; t++)
        for (int r = 0; r < ep; r++) g[i++] = stg[t + etp * (r + ep * e)];
  else
    for (int r = 0; r < ep; r++)
      for (int t = 0; t < etp; t++)
        for (int e = 0; e < edp; e++) g[i++] = stg[t + etp * (r + ep * e)];
  free(stg);
  *gpus = g;
  *ngroups = ep_groups ? etp * edp : etp * ep;
  if (size) *size = ep_groups ? ep : edp;
  return 0;
}

int pf_comm_ep_groups(const pf_scenario *sc, int stage, int **gpus, int *ngroups) {
  return expert_groups(sc, stage, 1, gpus, ngroups, NULL);
}

/* Megatron-Core's expert data-parallel group (parallel_state.py, the expert RankGenerator's "dp" of
 * "tp-ep-dp-pp"): the ranks of one (ETP, EP) place in every EP x ETP block of the stage. */
int pf_edp_groups(const pf_scenario *sc, int stage, int **gpus, int *ngroups, int *size) {
  return expert_groups(sc, stage, 0, gpus, ngroups, size);
}

static void add(pf_stage_comm *o, const pf_a2a_result *r, double times) {
  o->fabric_bytes += times * r->fabric_bytes;
  o->nic_bytes += times * r->nic_bytes;
  o->busy_s += times * r->time_s;
  o->inter |= r->nodes > 1;
}

/* Node-limited routing: the most nodes a token's copies reach over a group spanning `nodes` nodes (0: no limit). */
static int max_nodes(const pf_workload *w, int nodes) {
  int G = w->router_groups, K = w->router_group_topk;
  if (G <= 0 || K <= 0 || nodes <= 1) return 0;
  if (G % nodes == 0) return K < nodes ? K : 0;        /* each node holds whole groups */
  if (nodes % G == 0 && K * (nodes / G) < nodes) return K * (nodes / G); /* a group spans nodes / G nodes */
  return 0;
}

/* The share of stage `stage`'s chunk passes that run paired with another microbatch's (header, "Overlap"). */
static double paired_share(const pf_plan *p, int stage) {
  if (p->schedule == PF_SCHED_DUALPIPE) return 1.0;
  double V = p->schedule == PF_SCHED_INTERLEAVED && p->vstages > 1 ? p->vstages : 1.0, n = p->grad_accum * V;
  double warm = p->pp > 1 ? pf_plan_warmup_passes(p, stage) + 1.0 : 1.0; /* plus the overlap's one */
  return n > warm ? 1.0 - warm / n : 0.0;
}

/* Hide the microbatch's all-to-alls behind the compute of its MoE layers (header, "Overlap"). */
static void overlap(const pf_comm *c, int stage, int nmoe, int layers, pf_stage_work *w, pf_stage_comm *o) {
  double A = w->fwd_ep_s + w->bwd_ep_s;
  double C = (w->fwd_s - w->ends_fwd_s + w->bwd_s - w->ends_bwd_s) * nmoe / (layers > nmoe ? layers : nmoe);
  const pf_plan *p = &c->sc->plan;
  double s = p->dispatcher == PF_MOE_DISPATCH_FLEX ? pf_comm_sm_share_of(&c->sc->machine, pf_plan_flex_sms(p))
                                                   : c->sm_share;
  double paired = paired_share(p, stage);
  if (!(A > 0) || !(C > 0) || s >= 1 || !(paired > 0)) return;
  double h = paired * fmin(A, C / (1 - s)), left = A - h + h * s;
  w->ep_hidden_s = h;
  w->ep_sm_s = h * s;
  o->ep_hidden_s += h;
  o->interference_s += h * s;
  w->fwd_ep_s *= left / A;
  w->bwd_ep_s *= left / A;
}

int pf_comm_stage_ep(const pf_comm *c, int stage, pf_stage_work *w, pf_stage_comm *o) {
  const pf_scenario *sc = c->sc;
  const pf_plan *p = &sc->plan;
  const pf_workload *wl = &sc->workload;
  w->fwd_ep_s = w->bwd_ep_s = w->ep_hidden_s = w->ep_sm_s = 0;
  int ep = pf_plan_ep(p);
  if (ep < 2 || !pf_workload_is_moe(wl)) return 0;
  int lps = pf_plan_stage_layers(c->sc, stage), nmoe = pf_workload_moe_layers_in(wl, pf_plan_stage_first_layer(c->sc, stage), lps);
  if (stage == p->pp - 1) nmoe += wl->mtp_layers, lps += wl->mtp_layers; /* the MTP module's MoE layer */
  if (nmoe == 0) return 0;
  int *g, ng, rc;
  if ((rc = pf_comm_ep_groups(sc, stage, &g, &ng)) < 0) return rc;
  bool flex = p->dispatcher == PF_MOE_DISPATCH_FLEX;
  /* bf16 on the wire; flex under FP8 dispatches FP8 with a 4-byte scale per 128 elements (header) */
  double el2 = fmax(2.0, pf_precision_bytes(sc->precision));
  double el = flex && sc->precision == PF_FP8 ? 1.0 + 4.0 / 128.0 : el2;
  /* dropless routing off balance (--moe-imbalance, --moe-rank-imbalance): the busiest rank receives, and sends
   * back in the combine, pf_workload_rank_load times the balanced rows, and the whole group waits for it */
  double rows = p->mbs * (double)wl->seq / p->cp * pf_plan_etp(p) / p->tp * wl->topk * pf_workload_rank_load(wl, ep);
  pf_a2a_lib lib = !flex ? PF_A2A_NCCL : p->flex_backend == PF_FLEX_HYBRIDEP ? PF_A2A_HYBRIDEP : PF_A2A_DEEPEP;
  pf_a2a_req rq = {.groups = g, .ngroups = ng, .p = ep, .bytes = rows * wl->hidden * el, .topk = wl->topk,
                   .lib = lib, .experts = wl->experts, .sms = lib != PF_A2A_NCCL ? pf_plan_flex_sms(p) : 0,
                   .call = el < 2.0 ? PF_A2A_DISPATCH_FP8 : PF_A2A_DISPATCH_BF16};
  /* dispb: the backward's dispatch of the combine's gradient, bf16; all zero where a call fails */
  pf_a2a_result disp = {0}, comb = {0}, dispb = {0};
  int nodes = 0;
  for (int i = 0; i < ep; i++) { /* the nodes one group spans (the groups of a stage are alike) */
    int n = pf_topology_node_of(&c->topo, g[i]), seen = 0;
    for (int j = 0; j < i; j++) seen |= pf_topology_node_of(&c->topo, g[j]) == n;
    nodes += !seen;
  }
  rq.max_nodes = max_nodes(wl, nodes);
  if ((rc = pf_comm_alltoall(c, &rq, &disp)) == 0) {
    rq.bytes = rows * wl->hidden * el2;
    rq.call = PF_A2A_COMBINE;
    rc = pf_comm_alltoall(c, &rq, &comb);
  }
  dispb = comb; /* NCCL moves the same bf16 rows at one rate either way; DeepEP's and HybridEP's differ by call */
  if (rc == 0 && lib != PF_A2A_NCCL) {
    rq.call = PF_A2A_DISPATCH_BF16;
    rc = pf_comm_alltoall(c, &rq, &dispb);
  }
  free(g);
  if (rc < 0) return rc;
  /* the recomputed forward's calls: the whole layer's, or the MoE layer's (--recompute-modules moe) */
  double re = pf_plan_recompute_modules(p) & PF_RECOMPUTE_MOD_MOE ? 1.0 : pf_plan_recompute_share(sc, lps);
  w->fwd_ep_s = nmoe * (disp.time_s + comb.time_s);
  w->bwd_ep_s = nmoe * (comb.time_s + dispb.time_s + re * (disp.time_s + comb.time_s));
  add(o, &disp, nmoe * (1.0 + re));
  add(o, &comb, nmoe * (2.0 + re));
  add(o, &dispb, nmoe);
  if (p->ep_overlap) overlap(c, stage, nmoe, lps, w, o);
  w->fwd_tp_s += w->fwd_ep_s; /* on the critical path with the TP/CP collectives (the engines add them) */
  w->bwd_tp_s += w->bwd_ep_s;
  return 0;
}
