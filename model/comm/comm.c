/* comm.c - which groups talk, how much, and what overlap hides: tensor and
 * sequence parallelism, context parallelism, pipeline P2P, data-parallel
 * and tied-embedding collectives, all priced by the same collective layer
 * over the job's real routes (comm.h; formulas and sources in
 * docs/communication.md section 6).
 *
 * TP/SP per transformer layer and microbatch (Megatron-LM, Narayanan et al.
 * SC21 section 3.2; Korthikanti et al. MLSys 2023 section 4.2.2), on the
 * activation of b x s/CP x h elements: without SP two all-reduces forward and
 * two backward; with SP two all-gathers and two reduce-scatters each way
 * (the backward re-gathers the input for the weight gradient).  Full
 * recomputation repeats the forward ones.  Stage 0's vocabulary-parallel
 * embedding adds an all-reduce forward (SP: a reduce-scatter, and an
 * all-gather backward); the last stage's output layer an all-gather forward
 * with SP and a reduce-scatter (SP) or all-reduce backward, plus the three
 * small all-reduces of the vocabulary-parallel cross entropy.  All TP groups
 * of the job run at once, so groups that span nodes (--tp-across-nodes)
 * share NICs and switches.
 *
 * --tp-comm-overlap (Megatron with Transformer Engine's userbuffers, needs
 * SP): each all-gather runs under the GEMM that consumes it (QKV, FC1) and
 * each reduce-scatter under the GEMM that produces it (projection, FC2),
 * forward and backward; hidden = min(collective, GEMM), and while hidden the
 * GEMM loses the compute units the collective's kernel holds.
 *
 * CP (Megatron / Transformer Engine ring attention): per layer CP-1 steps in
 * which every CP rank passes its K and V chunk to the next, forward; K, V and
 * their gradients backward; overlapped with the attention core of the chunk
 * in hand (all but the first of CP chunks).
 *
 * PP: all TP x CP x DP sends of a stage boundary run at once; the boundary's
 * bandwidth is the smallest share any of them gets on its route.
 *
 * The GEMM and attention times that overlap hides behind are compute's
 * (compute/overlapgemm.c); the share of compute units a collective kernel
 * holds is its CTAs over the device's units.
 */
#include "comm.h"

#include "core/core.h"
#include "compute/compute.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A running NCCL/RCCL collective holds one CTA per channel; assumed: 16
 * channels (NCCL opens 2-32 by topology; NCCL_MIN/MAX_NCHANNELS).  The
 * compute units (SMs, CUs, Xe cores) are the device's (pf_device.units of its
 * file in machines/devices, from the vendors' datasheets / whitepapers: A100
 * 108 SMs, H100 SXM5 / GH200 / H200 132, H100 PCIe 114, A40 84, A2 10; MI250X
 * 220 CUs per package (110 per GCD, LUMI documentation), MI250 208 (104); Max
 * 1550 128 Xe cores (64 per tile)); a device that does not give them counts
 * as an A100's 108 SMs, as before device files gave them. */
#define COMM_CTAS 16.0
#define UNITS_DEFAULT 108

double pf_comm_sm_share_of(const pf_machine *m, double ctas) {
  int units = m->dev.units > 0 ? m->dev.units : UNITS_DEFAULT;
  return fmin(1.0, ctas / units);
}

double pf_comm_sm_share(const pf_machine *m) { return pf_comm_sm_share_of(m, COMM_CTAS); }

/* A job whose GPUs fill its nodes evenly but not wholly runs gpus / nodes ranks on each node, as Slurm's block
 * distribution spreads `--nodes N --ntasks G` (G / N tasks a node) and as a GB200 NVL72 job is scheduled, 64 of a
 * rack's 72 GPUs in segments of whole compute trays (NVIDIA/Megatron-LM docs/discussions/
 * deepseek-v3-gb200-optimization, reproduce guide section 3: every 32 GPUs in one NVLink domain, sbatch --segment):
 * the topology is laid out with those ranks a node and the NICs next to them (the lowest-numbered local GPUs and
 * their affinity NICs; NICs bonded to GPUs keep their ratio).  Otherwise the ranks fill nodes in order. */
static int spread_gpn(const pf_scenario *sc) {
  int gpn = sc->machine.gpus_per_node;
  if (sc->nodes < 2 || sc->gpus >= (long long)sc->nodes * gpn || sc->gpus % sc->nodes != 0) return gpn;
  return sc->gpus / sc->nodes;
}

int pf_comm_init(const pf_scenario *sc, pf_comm *c) {
  memset(c, 0, sizeof *c);
  c->sc = sc;
  c->sm_share = pf_comm_sm_share(&sc->machine);
  int used = spread_gpn(sc), gpn = sc->machine.gpus_per_node, rc;
  if (used == gpn) {
    rc = pf_topology_build_placed(&sc->machine, sc->nodes, sc->placement, sc->seed, sc->comm_eff_scale, &c->topo);
  } else {
    pf_machine *m = malloc(sizeof *m);
    if (!m) return pf_error_set(PF_ENOMEM, "out of memory");
    *m = sc->machine;
    m->gpus_per_node = used;
    int nics = m->nics_per_node;
    if (nics > gpn) m->nics_per_node = nics * used / gpn; /* bonded NICs: the same NICs per GPU */
    else if (nics > 0)
      for (int l = 0, top = 0; l < used; l++) /* the NICs the used GPUs sit next to */
        if (m->nic_affinity[l] >= top) m->nics_per_node = top = m->nic_affinity[l] + 1;
    rc = pf_topology_build_placed(m, sc->nodes, sc->placement, sc->seed, sc->comm_eff_scale, &c->topo);
    free(m);
  }
  if (rc == 0) c->topo_key = pf_comm_topo_key(c); /* hashed once, not at each all-to-all (alltoall.c's memo) */
  c->topo.memo_key = c->topo_key;                 /* and the jobs' memo (collcost.c) */
  return rc;
}

void pf_comm_free(pf_comm *c) { pf_topology_free(&c->topo); }

static int collective_on(const pf_scenario *sc, const pf_topology *t, pf_coll_kind kind, pf_coll_algo algo,
                         double bytes, const int *groups, int ng, int p, pf_coll_pattern *pat, pf_coll_result *res) {
  pf_coll_req rq = {kind, bytes, groups, ng, p, algo, sc->coll_proto};
  pf_coll_pattern local;
  int rc = pf_coll_choose(t, &rq, pat ? pat : &local, res);
  if (!pat) pf_coll_pattern_free(&local);
  return rc;
}

int pf_comm_collective(const pf_comm *c, pf_coll_kind kind, pf_coll_algo algo, double bytes, const int *groups, int ng,
                       int p, pf_coll_pattern *pat, pf_coll_result *res) {
  if (!c->topo_key || !groups) return collective_on(c->sc, &c->topo, kind, algo, bytes, groups, ng, p, pat, res);
  pf_coll_req rq = {kind, bytes, groups, ng, p, algo, c->sc->coll_proto}; /* collective_on's request */
  if (pf_coll_memo_find(c->topo_key, &rq, pat, res)) { /* the same call again (collmemo.c) */
    if (pat && pat->tab) pat->tab = &c->topo.tab; /* the measured ring of this topology (the key hashed its content) */
    return 0;
  }
  int rc = collective_on(c->sc, &c->topo, kind, algo, bytes, groups, ng, p, pat, res);
  if (rc == 0) pf_coll_memo_keep(c->topo_key, &rq, pat, res);
  return rc;
}

/* ---------- groups ---------- */

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

int pf_comm_tp_groups(const pf_scenario *sc, int **gpus, int *ngroups) {
  const pf_plan *p = &sc->plan;
  int ng = p->cp * p->dp * p->pp, k = 0;
  int *g = malloc((size_t)ng * p->tp * sizeof *g);
  if (!g) return pf_error_set(PF_ENOMEM, "out of memory");
  for (int s = 0; s < p->pp; s++)
    for (int d = 0; d < p->dp; d++)
      for (int c = 0; c < p->cp; c++)
        for (int t = 0; t < p->tp; t++) g[k++] = pf_plan_rank(p, t, c, d, s);
  *gpus = g;
  *ngroups = ng;
  return 0;
}

int pf_comm_cp_groups(const pf_scenario *sc, int **gpus, int *ngroups) {
  const pf_plan *p = &sc->plan;
  int ng = p->tp * p->dp * p->pp, k = 0;
  int *g = malloc((size_t)ng * p->cp * sizeof *g);
  if (!g) return pf_error_set(PF_ENOMEM, "out of memory");
  for (int s = 0; s < p->pp; s++)
    for (int d = 0; d < p->dp; d++)
      for (int t = 0; t < p->tp; t++)
        for (int c = 0; c < p->cp; c++) g[k++] = pf_plan_rank(p, t, c, d, s);
  *gpus = g;
  *ngroups = ng;
  return 0;
}

/* Groups that never leave a node do not contend with each other: price one. */
static int one_node(const pf_topology *t, const int *G, int p) {
  for (int i = 1; i < p; i++)
    if (pf_topology_node_of(t, G[i]) != pf_topology_node_of(t, G[0])) return 0;
  return 1;
}

/* ---------- tensor and context parallelism ---------- */

typedef struct tp_costs {
  pf_coll_result ar, ag, rs, small;
} tp_costs;

static void account(pf_stage_comm *o, const pf_coll_result *r, double times) {
  o->fabric_bytes += times * r->fabric_bytes;
  o->nic_bytes += times * r->nic_bytes;
  o->busy_s += times * r->time_s;
  o->inter |= r->inter;
}

/* One collective under a GEMM: its exposed part plus what the hidden part costs the GEMM (*hid += hidden). */
static double overlapped(const pf_comm *c, double comm, double gemm, double *hid) {
  double h = fmin(comm, gemm);
  *hid += h;
  return comm - h + h * c->sm_share;
}

static int tp_prices(const pf_comm *c, double buf, double small, tp_costs *tc) {
  const pf_scenario *sc = c->sc;
  int *G, ng, rc;
  if ((rc = pf_comm_tp_groups(sc, &G, &ng)) < 0) return rc;
  int p = sc->plan.tp;
  if (one_node(&c->topo, G, p)) ng = 1;
  if ((rc = pf_comm_collective(c, PF_ALLREDUCE, PF_COLL_AUTO, buf, G, ng, p, NULL, &tc->ar)) == 0 &&
      (rc = pf_comm_collective(c, PF_ALLGATHER, PF_COLL_AUTO, buf, G, ng, p, NULL, &tc->ag)) == 0 &&
      (rc = pf_comm_collective(c, PF_REDUCE_SCATTER, PF_COLL_AUTO, buf, G, ng, p, NULL, &tc->rs)) == 0)
    rc = pf_comm_collective(c, PF_ALLREDUCE, PF_COLL_AUTO, small, G, ng, p, NULL, &tc->small);
  free(G);
  return rc;
}

/* Layers of the stage whose MLP half talks over TP.  A dense layer's MLP gathers the sequence-parallel shard
 * before FC1 and scatters after FC2.  A MoE layer's routed experts at ETP 1 do not: Megatron-Core's MoE layer
 * takes the sequence-parallel shard as it is (moe_layer.py refuses TP > 1 without SP in training), routes and
 * dispatches each rank's M / TP tokens over EP, and its dispatchers gather over the expert-TP group only
 * (token_dispatcher.py: MoEAlltoAllTokenDispatcher's gather_from_sequence_parallel_region and
 * reduce_scatter_to_sequence_parallel_region under `if self.tp_size > 1`, tp_size the expert TP size; the flex
 * dispatcher's DeepEP group is ETP x EP), so its MLP half has no TP collective.  Shared experts are a
 * TP-parallel MLP (SharedExpertMLP) and keep theirs; at ETP > 1 the routed experts' gather is kept at the dense
 * MLP's size (an approximation: Megatron gathers the dispatched rows, topk times more). */
static double tp_mlp_layers(const pf_scenario *sc, int stage, int lps) {
  const pf_workload *wl = &sc->workload;
  if (!sc->plan.sp || !pf_workload_is_moe(wl) || wl->shared_ffn_hidden > 0 || pf_plan_etp(&sc->plan) > 1)
    return lps;
  return lps - pf_workload_moe_layers_in(wl, pf_plan_stage_first_layer(sc, stage), lps);
}

/* Per layer the attention's two collectives each way and, for `mlp` of the stage's `lps` layers, the MLP's
 * (a layer with both costs `both`, one with the attention's alone `attn`: mlp x both + (lps - mlp) x attn). */
static void tp_layer(const pf_comm *c, const pf_stage_work *w, const tp_costs *tc, int lps, double mlp,
                     pf_stage_comm *o) {
  const pf_scenario *sc = c->sc;
  const pf_plan *p = &sc->plan;
  double rf = pf_plan_recompute_share(sc, lps); /* the recomputed forwards' share (full recomputation) */
  double fwd, bwd, rest = lps - mlp, n = lps + mlp; /* n: collective pairs, one an attention, one an MLP */
  if (!p->sp) {
    fwd = 2 * tc->ar.time_s;
    bwd = 2 * tc->ar.time_s;
    fwd *= lps;
    bwd *= lps;
    account(o, &tc->ar, lps * (4.0 + 2 * rf));
  } else if (!p->tp_comm_overlap) {
    double both = 2 * (tc->ag.time_s + tc->rs.time_s), attn = tc->ag.time_s + tc->rs.time_s;
    fwd = mlp * both + rest * attn;
    bwd = fwd;
    account(o, &tc->ag, n * (2.0 + rf));
    account(o, &tc->rs, n * (2.0 + rf));
  } else {
    /* GEMM budgets (compute.h): QKV and FC1 consume the gathers, projection and FC2 produce the scatters */
    pf_tp_gemms g;
    pf_stage_tp_gemms(sc, w, &g);
    double ha = 0, hba = 0;
    double fa = overlapped(c, tc->ag.time_s, g.qkv_s, &ha) + overlapped(c, tc->rs.time_s, g.proj_s, &ha);
    /* backward: the same collectives under the data- and weight-gradient GEMMs of the same sizes */
    double ba = overlapped(c, tc->ag.time_s, g.qkv_s, &hba) + overlapped(c, tc->rs.time_s, g.proj_s, &hba);
    double hf = ha, hb = hba;
    double ff = fa + overlapped(c, tc->ag.time_s, g.fc1_s, &hf) + overlapped(c, tc->rs.time_s, g.fc2_s, &hf);
    double bf = ba + overlapped(c, tc->ag.time_s, g.fc1_s, &hb) + overlapped(c, tc->rs.time_s, g.fc2_s, &hb);
    fwd = mlp * ff + rest * fa;
    bwd = mlp * bf + rest * ba;
    double hid = mlp * (hf + hb * (1 + rf)) + rest * (ha + hba * (1 + rf));
    o->tp_hidden_s += hid;
    o->interference_s += hid * c->sm_share;
    account(o, &tc->ag, n * (2.0 + rf));
    account(o, &tc->rs, n * (2.0 + rf));
  }
  o->tp_fwd_s += fwd;
  o->tp_bwd_s += bwd * (1 + rf);
}

/* The ends: vocabulary-parallel embedding (stage 0), output layer and cross entropy (last stage). */
static void tp_ends(const pf_comm *c, int stage, const tp_costs *tc, pf_stage_comm *o) {
  const pf_plan *p = &c->sc->plan;
  if (stage == 0) {
    o->tp_fwd_s += p->sp ? tc->rs.time_s : tc->ar.time_s;
    account(o, p->sp ? &tc->rs : &tc->ar, 1);
    if (p->sp) { o->tp_bwd_s += tc->ag.time_s; account(o, &tc->ag, 1); }
  }
  if (stage == p->pp - 1) {
    if (p->sp) { o->tp_fwd_s += tc->ag.time_s; account(o, &tc->ag, 1); }
    o->tp_fwd_s += 3 * tc->small.time_s;
    account(o, &tc->small, 3);
    o->tp_bwd_s += p->sp ? tc->rs.time_s : tc->ar.time_s;
    account(o, p->sp ? &tc->rs : &tc->ar, 1);
  }
}

/* Ring attention: CP-1 exchanges of K and V per layer forward, of K, V and their gradients backward. */
static int cp_layer(const pf_comm *c, const pf_stage_work *w, int lps, pf_stage_comm *o) {
  const pf_scenario *sc = c->sc;
  const pf_plan *p = &sc->plan;
  const pf_workload *wl = &sc->workload;
  double sl = (double)wl->seq / p->cp, el = pf_precision_bytes(sc->precision);
  double kvh = (double)wl->hidden * wl->kv_heads / wl->heads / (wl->kv_heads >= p->tp ? p->tp : wl->kv_heads);
  double kv = 2 * p->mbs * sl * kvh * el;
  int *G, ng, rc;
  if ((rc = pf_comm_cp_groups(sc, &G, &ng)) < 0) return rc;
  pf_coll_result r;
  if (one_node(&c->topo, G, p->cp)) ng = 1;
  rc = pf_comm_collective(c, PF_SENDRECV, PF_COLL_AUTO, kv, G, ng, p->cp, NULL, &r);
  free(G);
  if (rc < 0) return rc;
  double steps = p->cp - 1;
  double attn = pf_stage_cp_attention_s(sc, w); /* the attention core it hides behind (compute.h) */
  double f = steps * r.time_s, b = 2 * steps * r.time_s;
  double hf = fmin(f, attn), hb = fmin(b, 2 * attn);
  o->cp_hidden_s += lps * (hf + hb);
  o->interference_s += lps * (hf + hb) * c->sm_share;
  o->tp_fwd_s += lps * (f - hf + hf * c->sm_share);
  o->tp_bwd_s += lps * (b - hb + hb * c->sm_share);
  account(o, &r, lps * 3 * steps);
  return 0;
}

/* FP8 delayed scaling's amax reduction (Transformer Engine): on leaving fp8_autocast after each forward, and
 * after each backward, FP8GlobalStateManager.reduce_and_update_fp8_tensors() concatenates the current amax of
 * every FP8 tensor of the region and all-reduces it with op MAX, async_op=False, over the autocast's fp8_group
 * (transformer_engine/pytorch/fp8.py, reduce_tensor_across_group_op_max; skipped when the group has one rank).
 * Megatron-Core wraps each microbatch's TransformerBlock in fp8_autocast with fp8_group =
 * get_amax_reduction_group(with_context_parallel=True), the tensor x data x context parallel ranks of the stage
 * (Megatron-LM core_v0.12.0, megatron/core/fp8_utils.py:419, parallel_state.py:1345).  Entries: TE's fp8 meta per
 * GEMM, 3 in forward (input, weight, output) and 2 in backward (output gradient, input gradient), 4 B each, for
 * the 4 GEMMs of a layer.  A few kB: the library's latency, priced by the same collective model as any other;
 * the next cast waits for the updated scales, so it is exposed. */
static int fp8_amax(const pf_comm *c, int stage, int lps, pf_stage_comm *o) {
  const pf_scenario *sc = c->sc;
  const pf_plan *p = &sc->plan;
  pf_fp8_recipe r;
  int n = p->tp * p->cp * p->dp, rc;
  if (sc->precision != PF_FP8 || n < 2 || pf_fp8_recipe_of(sc, &r) < 0 || r != PF_FP8_DELAYED) return 0;
  int *G = malloc((size_t)n * sizeof *G), k = 0;
  if (!G) return pf_error_set(PF_ENOMEM, "out of memory");
  for (int d = 0; d < p->dp; d++)
    for (int cc = 0; cc < p->cp; cc++)
      for (int t = 0; t < p->tp; t++) G[k++] = pf_plan_rank(p, t, cc, d, stage);
  /* interleaved: each model chunk's forward is its own autocast region, so V calls of lps / V layers */
  double V = p->schedule == PF_SCHED_INTERLEAVED && p->vstages > 1 ? p->vstages : 1, per = 4 * lps / V * 4.0;
  pf_coll_result f, b;
  if ((rc = pf_comm_collective(c, PF_ALLREDUCE, PF_COLL_AUTO, 3 * per, G, 1, n, NULL, &f)) == 0)
    rc = pf_comm_collective(c, PF_ALLREDUCE, PF_COLL_AUTO, 2 * per, G, 1, n, NULL, &b);
  free(G);
  if (rc < 0) return rc;
  o->amax_fwd_s = V * f.time_s;
  o->amax_bwd_s = V * b.time_s;
  account(o, &f, V);
  account(o, &b, V);
  return 0;
}

int pf_comm_stage(const pf_comm *c, int stage, pf_stage_work *w, pf_stage_comm *o) {
  const pf_scenario *sc = c->sc;
  const pf_plan *p = &sc->plan;
  const pf_workload *wl = &sc->workload;
  memset(o, 0, sizeof *o);
  o->tp_algo = PF_COLL_RING;
  o->tp_proto = PF_PROTO_SIMPLE;
  w->fwd_tp_s = w->bwd_tp_s = w->fwd_ep_s = w->bwd_ep_s = 0;
  if (wl->kind != PF_WL_TRANSFORMER) return 0;
  double el = pf_precision_bytes(sc->precision), sl = (double)wl->seq / p->cp;
  double buf = p->mbs * sl * wl->hidden * el;
  w->p2p_bytes = buf / p->tp; /* Megatron scatters the activation over TP for the send */
  int lps = pf_plan_stage_layers(sc, stage), rc; /* each stage its own layers (uneven stages) */
  if (p->tp > 1) {
    tp_costs tc;
    if ((rc = tp_prices(c, buf, 3 * p->mbs * sl * 4.0, &tc)) < 0) return rc;
    tp_layer(c, w, &tc, lps, tp_mlp_layers(sc, stage, lps), o);
    tp_ends(c, stage, &tc, o);
    const pf_coll_result *main = p->sp ? &tc.ag : &tc.ar;
    o->tp_algo = main->algo;
    o->tp_proto = main->proto;
  }
  if (p->cp > 1 && (rc = cp_layer(c, w, lps, o)) < 0) return rc;
  if ((rc = fp8_amax(c, stage, lps, o)) < 0) return rc;
  w->fwd_tp_s = o->tp_fwd_s + o->amax_fwd_s;
  w->bwd_tp_s = o->tp_bwd_s + o->amax_bwd_s;
  return pf_comm_stage_ep(c, stage, w, o);
}

/* ---------- pipeline P2P ---------- */

int pf_pipeline_net(const pf_scenario *sc, const pf_topology *t, pf_pipe_net *net) {
  const pf_plan *p = &sc->plan;
  int P = p->pp;
  memset(net, 0, sizeof *net);
  if (P < 2) {
    for (int s = 0; s < P && s < PF_MAXSTAGE; s++) { net->bw_Bps[s] = 1e18; net->lat_s[s] = 0; }
    return 0;
  }
  int nflows = p->tp * p->cp * p->dp;
  int *cnt = calloc((size_t)(t->nlinks > 0 ? t->nlinks : 1), sizeof *cnt);
  pf_route *rt = malloc((size_t)nflows * sizeof *rt);
  if (!cnt || !rt) { free(cnt); free(rt); return pf_error_set(PF_ENOMEM, "out of memory"); }
  for (int s = 0; s < P; s++) {
    int nx = (s + 1) % P, f = 0;
    for (int d = 0; d < p->dp; d++)
      for (int c = 0; c < p->cp; c++)
        for (int tp = 0; tp < p->tp; tp++, f++) {
          pf_topology_route(t, pf_plan_rank(p, tp, c, d, s), pf_plan_rank(p, tp, c, d, nx), &rt[f]);
          for (int k = 0; k < rt[f].n; k++) cnt[rt[f].link[k]]++;
        }
    double bw = INFINITY, lat = 0;
    for (f = 0; f < nflows; f++) {
      for (int k = 0; k < rt[f].n; k++) {
        int l = rt[f].link[k];
        bw = fmin(bw, t->links[l].bw_Bps / cnt[l]);
      }
      lat = fmax(lat, rt[f].lat_s);
    }
    for (f = 0; f < nflows; f++)
      for (int k = 0; k < rt[f].n; k++) cnt[rt[f].link[k]] = 0;
    net->bw_Bps[s] = isfinite(bw) ? bw : 1e18;
    net->lat_s[s] = lat;
  }
  free(cnt);
  free(rt);
  /* Megatron's scatter-gather P2P (no SP): the receiver all-gathers the TP pieces over its TP group */
  if (p->tp > 1 && !p->sp) {
    int *G, ng, rc;
    if ((rc = pf_comm_tp_groups(sc, &G, &ng)) < 0) return rc;
    if (one_node(t, G, p->tp)) ng = 1;
    pf_coll_result r;
    double buf = sc->workload.seq * (double)p->mbs * sc->workload.hidden * pf_precision_bytes(sc->precision) / p->cp;
    rc = collective_on(sc, t, PF_ALLGATHER, PF_COLL_AUTO, buf, G, ng, p->tp, NULL, &r);
    free(G);
    if (rc < 0) return rc;
    net->recv_s = r.time_s;
  }
  return 0;
}

double pf_pipe_net_time(const pf_pipe_net *net, int b, double bytes) { return net->lat_s[b] + bytes / net->bw_Bps[b]; }

/* ---------- data parallelism and tied embeddings ---------- */

/* One collective over the groups `groups` gives for a stage (DP x CP or EDP), with the scenario's --coll-algo. */
static int collective_over(int (*groups)(const pf_scenario *, int, int **, int *, int *), const pf_comm *c,
                           pf_coll_kind kind, double bytes, int stage, pf_coll_pattern *pat, pf_coll_result *info) {
  memset(pat, 0, sizeof *pat);
  int *G, ng, p, rc;
  if ((rc = groups(c->sc, stage, &G, &ng, &p)) < 0) return rc;
  rc = pf_comm_collective(c, kind, c->sc->collective, bytes, G, ng, p, pat, info);
  free(G);
  return rc;
}

int pf_dp_collective_pattern(const pf_comm *c, pf_coll_kind kind, double bytes, int stage, pf_coll_pattern *pat,
                             pf_coll_result *info) {
  return collective_over(pf_dp_groups, c, kind, bytes, stage, pat, info);
}

int pf_edp_collective_pattern(const pf_comm *c, pf_coll_kind kind, double bytes, int stage, pf_coll_pattern *pat,
                              pf_coll_result *info) {
  return collective_over(pf_edp_groups, c, kind, bytes, stage, pat, info);
}

int pf_comm_embedding(const pf_comm *c, double bytes, pf_coll_pattern *pat, pf_coll_result *res) {
  const pf_plan *p = &c->sc->plan;
  int npairs = p->tp * p->cp * p->dp;
  int *pairs = malloc((size_t)2 * npairs * sizeof *pairs);
  if (!pairs) return pf_error_set(PF_ENOMEM, "out of memory");
  int k = 0;
  for (int d = 0; d < p->dp; d++)
    for (int cc = 0; cc < p->cp; cc++)
      for (int t = 0; t < p->tp; t++, k++) {
        pairs[2 * k] = pf_plan_rank(p, t, cc, d, 0);
        pairs[2 * k + 1] = pf_plan_rank(p, t, cc, d, p->pp - 1);
      }
  int rc = pf_comm_collective(c, PF_ALLREDUCE, PF_COLL_AUTO, bytes, pairs, npairs, 2, pat, res);
  free(pairs);
  return rc;
}

void pf_pipeline_net_free(int pp, pf_pipe_net *net) {
  memset(net, 0, sizeof *net);
  for (int s = 0; s < pp && s < PF_MAXSTAGE; s++) net->bw_Bps[s] = 1e18;
}
