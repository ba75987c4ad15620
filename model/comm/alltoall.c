/* alltoall.c - the expert-parallel all-to-all (MoE dispatch and combine)
 * over the job's real placement (comm.h pf_comm_alltoall;
 * docs/communication.md "All-to-all for expert parallelism").
 *
 * A rank sends `bytes` per call: its tokens' copies, one per routed expert
 * (tokens x top-k x hidden x element size), spread evenly over the experts,
 * so over the p ranks of its EP group (the balanced, dropless case published
 * benchmarks force).  Two libraries:
 *
 *   NCCL all-to-all (Megatron-Core's alltoall dispatcher): every copy is its
 *   own send, member i sends bytes / p to each member j (destinations
 *   rotated, as coll_direct.c).  Copies to another node cross that node's
 *   NIC: remote share (p - k) / p for k members per node.  Node-limited
 *   routing does not change it: a token's copies still land on a node
 *   other than its own with probability (N - 1) / N under balanced routing.
 *
 *   DeepEP-style kernels (deepseek-ai/DeepEP, normal kernels "with NVLink
 *   and RDMA forwarding"; arXiv 2412.19437 section 3.2.2): a token crosses
 *   to each node it needs once, over RDMA to the GPU of the same local
 *   index, which forwards the copies to their GPUs over NVLink; both run at
 *   once (one pipelined step).  Network bytes per rank: bytes / top-k x
 *   E[remote nodes a token reaches]; with its copies spread over T nodes
 *   (T = N, or T = min(M, N) under node-limited routing to at most M nodes,
 *   DeepSeek-V3's M = 4), E = T (1 - (1 - 1/T)^topk) x (N - 1) / N.
 *   NVLink bytes per rank: its copies for the other GPUs of its node plus
 *   the copies it forwards, one per destination GPU that holds any of the
 *   token's experts (DeepEP's dispatch takes is_token_in_rank, token x rank,
 *   and the receiver expands the rows to its experts: Megatron-Core's flex
 *   dispatcher permutes them after the dispatch; DeepEP's tests count
 *   recv_x, these deduplicated rows, in the bandwidths below): with E / p
 *   experts a GPU a token reaches p (1 - C(E - E/p, k) / C(E, k)) GPUs, not
 *   k (Qwen3-235B at EP 8: 5.3 of 8 copies; DeepSeek-V3 at EP 64: 7.6),
 *   routing taken as uniform over the experts (node-limited routing
 *   concentrates a token's copies, so fewer GPUs: an upper bound).  Measured rates (DeepEP docs/legacy.md,
 *   "Normal kernels with NVLink and RDMA forwarding", H800 with ~160 GB/s
 *   NVLink and one 400 Gb/s CX7 NIC (~50 GB/s) per GPU, DeepSeek-V3's
 *   setting): intranode EP 8 dispatch 153 GB/s of ~160 (0.956 of what the
 *   fabric achieves); internode RDMA bottleneck 43 GB/s at EP 16, 58 at 32,
 *   51 at 64 of ~50 GB/s: 0.86 at 2 nodes, the line rate from 4 nodes on
 *   (the README's figures above 50 count more than the wire carries: taken
 *   as 1).  These shares scale the topology's link rates, interpolated in
 *   log2 of the node count.
 *
 *   HybridEP (NVIDIA's, in DeepEP; Megatron-Core --moe-flex-dispatcher-backend
 *   hybridep): the same flows and deduplicated rows, its TMA copies inside the
 *   NVLink domain at its own measured rates by call, ranks and SMs
 *   (pf_a2a_hybridep_share), across it DeepEP's RDMA shares (its H100 table,
 *   46-68 GB/s of a 50 GB/s NIC at 16-64 ranks kernel-only, is the line rate).
 *
 * Both libraries: a GPU's traffic leaves through one NIC, however many the
 * node bonds per GPU (nccl-tests#267: "Alltoall cannot aggregate the
 * bandwidth of multiple NICs"; collective.h nic_share), and across nodes
 * NCCL's PXN routes it over NVLink to the destination's rail (topology.c).
 * The parts (NVLink alone, NICs alone) are the same flows costed apart.
 */
#include "comm.h"

#include "core/core.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const char *lib_names[] = {[PF_A2A_NCCL] = "nccl", [PF_A2A_DEEPEP] = "deepep", [PF_A2A_HYBRIDEP] = "hybridep"};

const char *pf_a2a_lib_name(pf_a2a_lib l) { return lib_names[l <= PF_A2A_HYBRIDEP ? l : PF_A2A_NCCL]; }

int pf_a2a_lib_parse(const char *s, pf_a2a_lib *out) {
  int i = pf_name_index(s, lib_names, 3, false);
  if (i >= 0) { *out = (pf_a2a_lib)i; return 0; }
  return pf_error_set(PF_EINVAL, "all-to-all library \"%s\": valid: nccl (the library's all-to-all), deepep (DeepEP's "
                      "normal kernels, NVLink and RDMA forwarding), hybridep (NVIDIA's HybridEP in DeepEP)", s);
}

double pf_a2a_remote_nodes(int nodes, int topk, int max_nodes) {
  if (nodes <= 1) return 0;
  int T = max_nodes > 0 && max_nodes < nodes ? max_nodes : nodes;
  int k = topk > 0 ? topk : 1;
  return T * (1 - pow(1 - 1.0 / T, k)) * (nodes - 1) / nodes;
}

/* DeepEP's measured share of the fabric's and the NIC's rate (header): NVLink 153 of ~160 GB/s (EP 8); RDMA
 * 43 of ~50 GB/s at 2 nodes, the line rate at 4 and 8 (58 and 51 GB/s capped at 50). */
/* y at v, linear between the points x (ascending), clamped at both ends: the shares and rates of the tables below. */
static double lin(const double *x, const double *y, int n, double v) { /* clamped at both ends */
  if (v <= x[0]) return y[0];
  for (int i = 1; i < n; i++)
    if (v <= x[i]) return y[i - 1] + (y[i] - y[i - 1]) * (v - x[i - 1]) / (x[i] - x[i - 1]);
  return y[n - 1];
}

static double deepep_share(int net, int nodes) {
  if (!net) return 153.0 / 160.0;
  static const double x[] = {1, 2, 3}, y[] = {43.0 / 50, 1, 1}; /* log2 nodes: 2, 4, 8 */
  return lin(x, y, 3, log2(nodes > 2 ? nodes : 2));
}

/* HybridEP's kernel-only rates inside one NVLink domain (DeepEP Hybrid-EP_Implementation.md, "GB200 Platform":
 * 4096 tokens a rank, hidden 7168, top-8, uniform random routing, 8 local experts, GB/s of the received rows as
 * its test counts them, tests/test_hybrid_ep.py: dispatched_hidden, one row per token and rank, the FP8 rows with
 * their scales) at 8, 16, 24, 32 and 36 ranks and 16 and 32 SMs, over what NVLink 5 achieves in the topology
 * (EFF_NVLINK 0.80 x 900 GB/s, topology.c), as DeepEP's intranode share is over H800's: a share of the fabric.
 * Between the measured ranks and SMs linear; fewer ranks than 8 take 8's, more than 36 take 36's (an EP 64 domain
 * is not measured: optimistic); above 32 SMs 32's; below 16 in proportion to the SMs (at 16 the FP8 dispatch is
 * SM-bound: 287 GB/s at 32 ranks, 539 at 32 SMs).  The "Torch API" columns (the same calls with the copy out of
 * the buffer, which Megatron's flex dispatcher replaces with its permute, priced apart) are 15-30 % lower. */
static const double hyb_ranks[] = {8, 16, 24, 32, 36};
static const double hyb_gbs[3][2][5] = { /* [call][16 SMs, 32 SMs][ranks] */
    [PF_A2A_DISPATCH_BF16] = {{750.15, 661.93, 637.80, 629.79, 612.85}, {764.03, 706.95, 665.97, 642.23, 632.31}},
    [PF_A2A_DISPATCH_FP8] = {{620.98, 577.17, 360.12, 286.93, 260.53}, {713.98, 650.48, 577.96, 538.86, 489.27}},
    [PF_A2A_COMBINE] = {{684.27, 600.75, 565.53, 547.25, 543.27}, {737.13, 666.26, 639.80, 605.15, 596.99}},
};

double pf_a2a_hybridep_share(pf_a2a_call call, int ranks, int sms) {
  int c = call <= PF_A2A_COMBINE ? call : PF_A2A_DISPATCH_BF16;
  double s = sms > 0 ? sms : PF_HYBRIDEP_SMS_DEFAULT;
  double lo = lin(hyb_ranks, hyb_gbs[c][0], 5, ranks), hi = lin(hyb_ranks, hyb_gbs[c][1], 5, ranks);
  double gbs = s >= 32 ? hi : s >= 16 ? lo + (hi - lo) * (s - 16) / 16 : lo * s / 16;
  return gbs / (0.80 * 900.0);
}

/* DeepEP's kernels move the rows with the SMs they are given, so on a fast fabric the SMs bound them: its
 * "Torch API" rates on GB200 (the same file's DeepEP table, NVIDIA's NVL72 build of DeepEP's normal kernels,
 * same test shape) at 8, 16 and 24 ranks and 16, 24 and 32 SMs; above 32 SMs scaled as its B200 rows at 8 ranks
 * grow (36 to 48 SMs, level from 48), below 16 in proportion, past 24 ranks 24's.  Check: the Megatron-Core GB200
 * write-up measured DeepEP at EP 32 over multi-node NVLink at 400 GB/s dispatch and 190 GB/s combine (24 SMs),
 * this table's 24 ranks 351 (FP8) and 164.  On H800's 160 GB/s NVLink (DeepSeek-V3's 20 SMs) the fabric binds
 * first, as DeepEP's legacy figures (above) measured. */
static const double dpe_sms[] = {16, 24, 32};
static const double dpe_gbs[3][3][3] = { /* [call][16, 24, 32 SMs][8, 16, 24 ranks] */
    [PF_A2A_DISPATCH_BF16] = {{362.01, 328.80, 324.64}, {512.72, 442.47, 450.22}, {615.78, 520.76, 502.84}},
    [PF_A2A_DISPATCH_FP8] = {{248.86, 242.51, 258.33}, {350.97, 338.87, 351.05}, {447.76, 393.72, 405.04}},
    [PF_A2A_COMBINE] = {{310.21, 278.34, 126.53}, {425.95, 378.32, 163.62}, {519.57, 442.51, 207.10}},
};
static const double dpe_b200[3][5] = { /* B200, 8 ranks, 32 36 40 44 48 SMs (Torch API) */
    [PF_A2A_DISPATCH_BF16] = {619, 635, 629, 640, 646},
    [PF_A2A_DISPATCH_FP8] = {443, 482, 519, 544, 554},
    [PF_A2A_COMBINE] = {524, 549, 570, 577, 586},
};

double pf_a2a_deepep_sm_gbs(pf_a2a_call call, int ranks, int sms) {
  static const double rk[] = {8, 16, 24}, big[] = {32, 36, 40, 44, 48};
  int c = call <= PF_A2A_COMBINE ? call : PF_A2A_DISPATCH_BF16;
  double s = sms > 0 ? sms : PF_DEEPEP_SMS_DEFAULT, at[3];
  for (int j = 0; j < 3; j++) at[j] = lin(rk, dpe_gbs[c][j], 3, ranks);
  if (s < 16) return at[0] * s / 16;
  if (s <= 32) return lin(dpe_sms, at, 3, s);
  return at[2] * lin(big, dpe_b200[c], 5, s) / dpe_b200[c][0];
}

/* The library's share of what the node's fabric achieves (header); port: a GPU's fabric port (0: not a switch). */
static double fabric_share(const pf_a2a_req *rq, int members, double port) {
  if (rq->lib == PF_A2A_HYBRIDEP) return pf_a2a_hybridep_share(rq->call, members, rq->sms);
  double s = deepep_share(0, 1);
  if (port > 0) s = fmin(s, pf_a2a_deepep_sm_gbs(rq->call, members, rq->sms) * 1e9 / port);
  return s;
}

/* DeepEP's copies over the node fabric as a share of every top-k copy (header): the GPUs a token reaches,
 * p (1 - C(E - E/p, k) / C(E, k)), over k; 1 when the experts are not known or not a multiple of p. */
static double rank_dedup(const pf_a2a_req *rq) {
  int p = rq->p, k = rq->topk > 0 ? rq->topk : 1, E = rq->experts;
  if (rq->lib == PF_A2A_NCCL || E < p || E % p != 0 || k > E) return 1.0;
  double miss = 1.0; /* a given GPU holds none of the token's k experts */
  for (int i = 0; i < k; i++) miss *= (double)(E - E / p - i) / (E - i);
  double f = p * (1.0 - miss) / k;
  return f < 1.0 ? f : 1.0;
}

/* Nodes the group spans and the largest number of its members on one node (0, 0 when out of memory). */
static void span(const pf_topology *t, const int *M, int p, int *nodes, int *k) {
  *nodes = 0;
  *k = 0;
  int *node = malloc((size_t)p * sizeof *node);
  if (!node) return;
  for (int i = 0; i < p; i++) {
    int n = pf_topology_node_of(t, M[i]), j, c = 1;
    for (j = 0; j < i; j++) c += node[j] == n;
    node[i] = n;
    if (c == 1) (*nodes)++;
  }
  for (int i = 0; i < p; i++) {
    int c = 0;
    for (int j = 0; j < p; j++) c += node[j] == node[i];
    if (c > *k) *k = c;
  }
  free(node);
}

/* Each member's position among the group's members on its node (pos) and their number there (cnt). */
static void positions(const pf_topology *t, const int *M, int p, int *pos, int *cnt) {
  for (int i = 0; i < p; i++) {
    pos[i] = 0;
    cnt[i] = 0;
    int n = pf_topology_node_of(t, M[i]);
    for (int j = 0; j < p; j++)
      if (pf_topology_node_of(t, M[j]) == n) { cnt[i]++; pos[i] += j < i; }
  }
}

/* The flows of one call over ng groups of p into st: what = 1 the node's fabric part (copies to the node's other
 * GPUs and, for DeepEP, the forwarded copies), 2 the network part, 3 both; scaled by the library's shares.
 * DeepEP's crossing goes to the member at the same position on the other node (the same local GPU index when
 * groups fill nodes alike). */
static int build(const pf_topology *t, const pf_a2a_req *rq, int what, int nodes, int members, pf_coll_step *st) {
  int p = rq->p, dedup = rq->lib != PF_A2A_NCCL, rc = 0;
  double port = t->mesh || t->b_pu < 0 || t->b_pu >= t->nlinks ? 0 : t->links[t->b_pu].bw_Bps;
  double S = rq->bytes, fab = dedup ? rank_dedup(rq) / fabric_share(rq, members, port) : 1;
  double net = dedup ? 1 / deepep_share(1, nodes) : 1;
  double per_node = dedup && nodes > 1 ? S / (rq->topk > 0 ? rq->topk : 1) *
                                             pf_a2a_remote_nodes(nodes, rq->topk, rq->max_nodes) / (nodes - 1)
                                       : 0;
  int *pos = malloc(2 * (size_t)p * sizeof *pos), *cnt = pos + p;
  if (!pos) return -1;
  for (int g = 0; g < rq->ngroups && rc == 0; g++) {
    const int *M = rq->groups + (size_t)g * p;
    if (dedup) positions(t, M, p, pos, cnt);
    for (int i = 0; i < p && rc == 0; i++) {
      int ni = pf_topology_node_of(t, M[i]);
      for (int d = 1; d < p && rc == 0; d++) {
        int j = (i + d) % p, nj = pf_topology_node_of(t, M[j]);
        if (ni == nj) {
          /* own copies, and (DeepEP) the copies the members at i's position on other nodes sent to i for j */
          double b = S / p * (1 + (dedup ? nodes - 1 : 0));
          if (what & 1) rc = pf_coll_flow_add(st, M[i], M[j], b * fab);
        } else if (!dedup) {
          if (what & 2) rc = pf_coll_flow_add(st, M[i], M[j], S / p * net);
        } else if (pos[j] == pos[i] % cnt[j] && (what & 2)) {
          rc = pf_coll_flow_add(st, M[i], M[j], per_node * net); /* once per node */
        }
      }
    }
  }
  free(pos);
  return rc;
}

static int cost(const pf_topology *t, const pf_a2a_req *rq, int what, int nodes, int members, pf_coll_result *res) {
  pf_coll_pattern pat;
  /* the header of an all-to-all (library, tuner, NIC share), no steps: bytes 0 */
  int rc = pf_coll_pattern_build(t, PF_ALLTOALL, PF_COLL_DIRECT, 0, rq->groups, rq->ngroups, rq->p, &pat);
  if (rc < 0) return rc;
  pat.bytes = rq->bytes;
  pat.lib_factor = pf_ccl_lib_factor(t, rq->p, rq->bytes); /* the machine's measured rows, at the call's size */
  pf_coll_step *st = pf_coll_step_add(&pat, 1, 1.0, nodes > 1 ? 0.0 : 1.0, nodes > 1 ? 1.0 : 0.0);
  if (!st || build(t, rq, what, nodes, members, st) < 0) {
    pf_coll_pattern_free(&pat);
    return pf_error_set(PF_ENOMEM, "out of memory building an all-to-all");
  }
  pf_coll_pattern_cost(t, &pat, res);
  pf_coll_pattern_free(&pat);
  return 0;
}

/* ---- the same call again ----
 * A call's result is a function of the topology and the request alone; tune prices the same stage's all-to-alls
 * for every setting that leaves the groups and the bytes as they were (recomputation, the optimizer's sharding,
 * the overlap flags: about 40 plans a shape), each routing p x p x groups flows (1e6 at 4,096 GPUs and EP 256).
 * The last calls are kept, keyed by a hash of the machine, the topology (links, placement, library) and the
 * request, with the groups compared in full: a hit returns the bytes the costing would have written.  tune's
 * bound pass (study/tunebound.c) prices every shape's stages in the enumeration's order (TP, CP, PP, schedule,
 * ETP, EP, micro-batch): the calls of one (TP, CP, PP, ETP, EP, micro-batch) come back for every schedule and
 * layout of the PP, up to 2 ETPs x 4 micro-batches x 9 EP sizes x 3 distinct stages x 2 calls = 432 apart, so 512
 * are kept (at most 512 x the job's GPUs x 4 B of groups: 8 MiB at 4,096 GPUs). */

#define MEMO_N 512

typedef struct {
  unsigned long long key;
  int p, ngroups, topk, max_nodes, lib, experts, call, sms;
  double bytes;
  int *groups;
  pf_a2a_result res;
} memo_entry;

static _Thread_local memo_entry memo[MEMO_N];
static _Thread_local int memo_next;

/* FNV-1a over 8-byte words (the tail byte by byte) */
static unsigned long long fnv(unsigned long long h, const void *data, size_t n) {
  const unsigned char *b = data;
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    unsigned long long w;
    memcpy(&w, b + i, sizeof w);
    h = (h ^ w) * 1099511628211ULL;
  }
  for (; i < n; i++) h = (h ^ b[i]) * 1099511628211ULL;
  return h;
}

/* What the topology was built from (pf_comm_init: the machine, the job's nodes, placement, seed and the fit
 * overlay's scale) and what it is: its scalars, placement and every link's rate and latency. */
unsigned long long pf_comm_topo_key(const pf_comm *c) {
  const pf_topology *t = &c->topo;
  const pf_scenario *sc = c->sc;
  unsigned long long h = fnv(14695981039346656037ULL, &sc->machine, sizeof sc->machine);
  const double dbl[] = {sc->comm_eff_scale, t->nvls_scale, (double)sc->seed, (double)sc->placement};
  h = fnv(h, dbl, sizeof dbl);
  const int ints[] = {t->fabric, t->nodes, t->gpn, t->gpus, t->nics, t->phys_nics, t->nlinks, t->span, t->pxn,
                      t->nvls, t->innet, t->lib, t->ll128, t->neff, t->sparse, t->mesh, t->bridge, t->net.nblocks};
  h = fnv(h, ints, sizeof ints);
  const void *ptrs[] = {t->tuner, t->net.kind};
  h = fnv(h, ptrs, sizeof ptrs);
  h = fnv(h, t->affinity, sizeof t->affinity);
  h = fnv(h, t->rail_gpu, sizeof t->rail_gpu);
  h = fnv(h, t->eff, sizeof t->eff);
  h = fnv(h, &t->tab, sizeof t->tab);
  h = fnv(h, t->slot, (size_t)t->nodes * sizeof *t->slot);
  for (int i = 0; i < t->nlinks; i++) { /* field by field: no padding read */
    const double l[] = {t->links[i].bw_Bps, t->links[i].lat_s, (double)t->links[i].kind};
    h = fnv(h, l, sizeof l);
  }
  return h;
}

static memo_entry *memo_find(unsigned long long key, const pf_a2a_req *rq) {
  for (int i = 0; i < MEMO_N; i++) {
    memo_entry *e = &memo[i];
    if (e->groups && e->key == key && e->p == rq->p && e->ngroups == rq->ngroups && e->topk == rq->topk &&
        e->max_nodes == rq->max_nodes && e->lib == (int)rq->lib && e->experts == rq->experts && e->bytes == rq->bytes &&
        e->call == (int)rq->call && e->sms == rq->sms &&
        memcmp(e->groups, rq->groups, (size_t)rq->p * rq->ngroups * sizeof *rq->groups) == 0)
      return e;
  }
  return NULL;
}

static void memo_keep(unsigned long long key, const pf_a2a_req *rq, const pf_a2a_result *res) {
  size_t n = (size_t)rq->p * rq->ngroups;
  int *g = malloc(n * sizeof *g);
  if (!g) return; /* not kept: the next call prices it again */
  memcpy(g, rq->groups, n * sizeof *g);
  memo_entry *e = &memo[memo_next];
  memo_next = (memo_next + 1) % MEMO_N;
  free(e->groups);
  *e = (memo_entry){.key = key, .p = rq->p, .ngroups = rq->ngroups, .topk = rq->topk, .max_nodes = rq->max_nodes,
                    .lib = (int)rq->lib, .experts = rq->experts, .call = (int)rq->call, .sms = rq->sms,
                    .bytes = rq->bytes, .groups = g, .res = *res};
}

static int alltoall_priced(const pf_comm *c, const pf_a2a_req *rq, pf_a2a_result *res);

int pf_comm_alltoall(const pf_comm *c, const pf_a2a_req *req, pf_a2a_result *res) {
  pf_a2a_req q = *req; /* NCCL's all-to-all is the same call whichever MoE call it carries: one key for both */
  const pf_a2a_req *rq = &q;
  if (q.lib == PF_A2A_NCCL && q.call <= PF_A2A_COMBINE) q.call = PF_A2A_DISPATCH_BF16, q.sms = 0;
  if (!c->sc || !rq->groups || rq->p < 2 || rq->ngroups < 1 || (double)rq->p * rq->p * rq->ngroups < 4096)
    return alltoall_priced(c, rq, res); /* small calls cost less than their key */
  unsigned long long key = c->topo_key ? c->topo_key : pf_comm_topo_key(c);
  const memo_entry *e = memo_find(key, rq);
  if (e) { *res = e->res; return 0; }
  int rc = alltoall_priced(c, rq, res);
  if (rc == 0) memo_keep(key, rq, res);
  return rc;
}

static int alltoall_priced(const pf_comm *c, const pf_a2a_req *rq, pf_a2a_result *res) {
  memset(res, 0, sizeof *res);
  const pf_topology *t = &c->topo;
  if ((unsigned)rq->lib > PF_A2A_HYBRIDEP || (unsigned)rq->call > PF_A2A_COMBINE || rq->sms < 0)
    return pf_error_set(PF_EINVAL, "all-to-all: library %d, call %d, %d SMs", (int)rq->lib, (int)rq->call, rq->sms);
  if (!rq->groups || rq->p < 1 || rq->ngroups < 1 || !(rq->bytes >= 0) || rq->topk < 0 || rq->max_nodes < 0)
    return pf_error_set(PF_EINVAL, "all-to-all: %d groups of %d ranks, %g bytes, top-k %d, max nodes %d", rq->ngroups,
                        rq->p, rq->bytes, rq->topk, rq->max_nodes);
  if ((double)rq->p * rq->p * rq->ngroups > 2e7)
    return pf_error_set(PF_EINVAL, "all-to-all over %d groups of %d ranks: at most 2e7 flows are modelled", rq->ngroups,
                        rq->p);
  for (long i = 0; i < (long)rq->p * rq->ngroups; i++)
    if (rq->groups[i] < 0 || rq->groups[i] >= t->gpus)
      return pf_error_set(PF_EINVAL, "all-to-all: rank %d is not a GPU of the job (0..%d)", rq->groups[i], t->gpus - 1);
  int nodes, k;
  span(t, rq->groups, rq->p, &nodes, &k);
  res->nodes = nodes;
  res->lib = rq->lib;
  if (nodes == 0) return pf_error_set(PF_ENOMEM, "out of memory");
  if (rq->p < 2 || rq->bytes <= 0) return 0;
  res->peers_remote = (double)(rq->p - k) / (rq->p - 1);
  int topk = rq->topk > 0 ? rq->topk : 1;
  if (rq->lib != PF_A2A_NCCL) {
    double er = pf_a2a_remote_nodes(nodes, rq->topk, rq->max_nodes);
    res->nic_bytes = rq->bytes / topk * er;
    res->fabric_bytes = rq->bytes / rq->p * (k - 1) * nodes * rank_dedup(rq);
  } else {
    res->nic_bytes = rq->bytes * (rq->p - k) / rq->p;
    res->fabric_bytes = rq->bytes * (k - 1) / rq->p;
  }
  res->remote_fraction = res->nic_bytes / rq->bytes;
  pf_coll_result all, part;
  int rc;
  if ((rc = cost(t, rq, 3, nodes, k, &all)) < 0) return rc;
  res->time_s = all.time_s;
  res->lat_s = all.lat_s;
  res->bw_s = all.bw_s;
  if ((rc = cost(t, rq, 1, nodes, k, &part)) < 0) return rc;
  res->fabric_s = part.bw_s;
  if (nodes > 1) {
    if ((rc = cost(t, rq, 2, nodes, k, &part)) < 0) return rc;
    res->nic_s = part.bw_s;
  }
  return 0;
}
