/* comm.h - the communication module's front door: every byte a training
 * step moves between GPUs is priced here (DESIGN 5.3).
 *
 * Layers, one concern per file:
 *   topology.c              links, capacities, placement (topology.h)
 *   toproute.c, topoxml.c   routes; the same as SimGrid platform XML
 *   collective.c            collectives and their flow patterns (collective.h)
 *   collalgo.c              the table of algorithms (collalgo.h), one file
 *                           each: coll_ring.c, coll_tree.c, coll_hier.c,
 *                           coll_rabenseifner.c, coll_nvls.c, coll_collnet.c,
 *                           coll_direct.c (builder, where it applies, the
 *                           library's latencies for it)
 *   collcost.c              pattern cost with contention
 *   colljob.c               collectives in time: queues, buckets, overlap
 *   ccl.c                   the library: protocols, latencies, measured
 *                           efficiencies, the tuner's choice (ccl.h)
 *   fsdp.c                  the per-unit all-gathers and reduce-scatters of
 *                           ZeRO-2 / ZeRO-3 (FSDP) and their shard groups
 *   comm.c                  this file's functions: which groups talk, how
 *                           much, and what overlap hides (TP/SP, CP, PP,
 *                           embedding, DP patterns)
 *   collbench.c, cclcal.c   one collective alone (nccl-tests); measured
 *                           collectives overlaid on the links
 *   alltoall.c              the expert-parallel all-to-all (MoE dispatch and
 *                           combine): NCCL or DeepEP-style, node-limited
 *   ccltuner.c              the library's tuning constants per version
 * The engine (engine/dpsync.c) lays the DP synchronisation of an iteration
 * out in time with these prices; nothing outside this module turns bytes
 * into seconds.
 *
 * Every group is given by its ranks; the topology turns ranks into nodes,
 * GPUs and NIC rails (placement and rank order are inputs: --placement,
 * --rank-order), and the collective is priced over the links that placement
 * uses, with the contention of every group that runs at the same time.
 * Formulas and sources: docs/communication.md.
 */
#ifndef PREFLIGHT_COMM_H
#define PREFLIGHT_COMM_H

#include "ccl.h"
#include "collalgo.h"
#include "collective.h"
#include "compute/compute.h"
#include "topology.h"

/* The job's communication environment. */
typedef struct pf_comm {
  const pf_scenario *sc;   /* borrowed */
  pf_topology topo;        /* owned */
  double sm_share;         /* share of the GPU's compute units a running collective kernel holds */
  unsigned long long topo_key; /* pf_comm_init: the hash of the machine and the topology the all-to-all memo
                                  keys on (alltoall.c; 0: hashed at each call) */
} pf_comm;

/* Build the topology of sc's job (placement, seed, fit overlay's comm
 * efficiency).  Free with pf_comm_free().  PF_EINVAL, PF_ENOMEM. */
int pf_comm_init(const pf_scenario *sc, pf_comm *c);
void pf_comm_free(pf_comm *c);

/* One collective call over ngroups concurrent groups of p ranks (members in
 * ring order): the algorithm algo (PF_COLL_AUTO: the library's tuner) and the
 * scenario's --coll-proto.  pat (may be NULL) keeps the pattern (caller
 * frees with pf_coll_pattern_free()). */
int pf_comm_collective(const pf_comm *c, pf_coll_kind kind, pf_coll_algo algo, double bytes, const int *groups, int ng,
                       int p, pf_coll_pattern *pat, pf_coll_result *res);

/* Groups, as malloc'ed rank arrays (caller frees): the data-parallel groups
 * of pipeline stage `stage` (one per TP rank, members the DP x CP ranks in
 * rank order; Megatron reduces gradients over DP x CP); all TP groups of the
 * job; all CP groups of the job. */
int pf_dp_groups(const pf_scenario *sc, int stage, int **gpus, int *ngroups, int *size);
int pf_comm_tp_groups(const pf_scenario *sc, int **gpus, int *ngroups);
int pf_comm_cp_groups(const pf_scenario *sc, int **gpus, int *ngroups);

/* What tensor and context parallelism cost one GPU of a stage per
 * microbatch. */
typedef struct pf_stage_comm {
  double tp_fwd_s, tp_bwd_s;   /* exposed TP/SP and CP time, forward / backward (incl. interference) */
  double tp_hidden_s;          /* TP time hidden behind GEMMs (--tp-comm-overlap) */
  double cp_hidden_s;          /* CP exchange hidden behind the attention core */
  double interference_s;       /* compute slowed by the overlapped comm kernels (part of tp_fwd_s + tp_bwd_s) */
  double amax_fwd_s, amax_bwd_s; /* FP8 delayed scaling's amax all-reduce after forward / backward (exposed) */
  double busy_s;               /* time communication kernels run (exposed + hidden) */
  double fabric_bytes, nic_bytes; /* bytes this GPU sends over the node fabric / out of the node */
  int inter;                   /* the TP (or CP) group spans nodes */
  double ep_hidden_s;          /* EP all-to-all time hidden behind compute (--overlap-moe-expert-parallel-comm) */
  pf_coll_algo tp_algo;
  pf_coll_proto tp_proto;
} pf_stage_comm;

/* Price the TP/SP (and CP) collectives of stage s, and FP8 delayed
 * scaling's amax all-reduce, and fill w->fwd_tp_s, w->bwd_tp_s (exposed,
 * both included) and w->p2p_bytes; *out gets the detail. */
int pf_comm_stage(const pf_comm *c, int stage, pf_stage_work *w, pf_stage_comm *out);

/* The expert-parallel all-to-alls of stage s (epa2a.c): per MoE layer a dispatch and a combine forward and
 * two backward, over the EP groups Megatron-Core cuts from the stage's ranks, priced with pf_comm_alltoall;
 * fills w->fwd_ep_s, w->bwd_ep_s (0 at EP 1) and adds the bytes to *o. */
int pf_comm_stage_ep(const pf_comm *c, int stage, pf_stage_work *w, pf_stage_comm *o);
/* The EP groups of stage s (malloc'ed, caller frees): ETP x EDP groups of EP ranks. */
int pf_comm_ep_groups(const pf_scenario *sc, int stage, int **gpus, int *ngroups);
/* The expert-data-parallel groups of stage s, cut from the same layout (malloc'ed, caller frees): ETP x EP
 * groups of *size = EDP ranks, over which the routed experts' gradients are reduced (Megatron-Core's
 * intra_expt_dp_group). */
int pf_edp_groups(const pf_scenario *sc, int stage, int **gpus, int *ngroups, int *size);

/* The data-parallel collective of stage `stage` (reduce-scatter / all-reduce
 * of gradients, all-gather of parameters) with the scenario's --coll-algo:
 * over the DP x CP groups (dense parameters), or with `expert` over the
 * expert-data-parallel groups (pf_edp_groups: the routed experts'). */
int pf_dp_collective_pattern(const pf_comm *c, pf_coll_kind kind, double bytes, int stage, pf_coll_pattern *pat,
                             pf_coll_result *info);
int pf_edp_collective_pattern(const pf_comm *c, pf_coll_kind kind, double bytes, int stage, pf_coll_pattern *pat,
                              pf_coll_result *info);

/* Sharded data parallelism (fsdp.c).  Groups as pf_dp_groups gives them: the shard groups of stage `stage`
 * (the DP x CP groups, or with --fsdp-shard-group node their runs of ranks inside one node) and, for
 * HYBRID_SHARD, the replica groups (the ranks at the same place of each node's shard group). */
int pf_shard_groups(const pf_scenario *sc, int stage, int **gpus, int *ngroups, int *size);
int pf_replica_groups(const pf_scenario *sc, int stage, int **gpus, int *ngroups, int *size);
/* A collective over the shard groups of a stage (ZeRO-2's all-gather after the optimizer step). */
int pf_shard_collective_pattern(const pf_scenario *sc, const pf_topology *t, pf_coll_kind kind, double bytes,
                                int stage, pf_coll_pattern *pat, pf_coll_result *info);

/* What ZeRO-2 / ZeRO-3 cost one GPU of a stage per microbatch: one unit's collectives alone (all the stage's
 * groups at once) and, with the prefetch and the overlap of fsdp.c, what is exposed in the forward and the
 * backward (incl. what the hidden part costs the compute it runs under). */
typedef struct pf_fsdp_cost {
  int level;                   /* 2 or 3; 0: no per-unit collectives */
  double units;                /* FSDP units a microbatch passes through on the stage */
  double ag_s, rs_s, ar_s;     /* one unit's parameter all-gather, gradient reduce-scatter, HYBRID all-reduce */
  double fwd_ag_s, bwd_ag_s, bwd_rs_s; /* exposed per microbatch (incl. their share of interference_s) */
  double busy_s, hidden_s, interference_s; /* per microbatch: collective time, hidden part, compute it slows */
  double fabric_bytes, nic_bytes; /* per microbatch, one GPU */
  int inter;                   /* the all-gather or the reduce-scatter leaves the node */
  double inter_busy_s;         /* per microbatch: the part of busy_s in collectives that leave the node */
  pf_coll_algo algo;
  pf_coll_proto proto;
} pf_fsdp_cost;

/* Price stage s's per-unit collectives and add the exposed time to w->fwd_tp_s and w->bwd_tp_s. */
int pf_comm_fsdp(const pf_comm *c, int stage, pf_stage_work *w, pf_fsdp_cost *out);

/* The tied-embedding all-reduce between the first and the last stage. */
int pf_comm_embedding(const pf_comm *c, double bytes, pf_coll_pattern *pat, pf_coll_result *res);

/* One collective alone on `nodes` nodes with `gpn` GPUs each (local GPUs
 * 0..gpn-1), ranks node by node: what nccl-tests / rccl-tests measure
 * (`preflight collective`, collective validation rows; collbench.c). */
typedef struct pf_coll_bench {
  pf_topology topo;        /* owned */
  int nodes, gpn, ranks;
  int *group;              /* owned: the ranks' GPUs */
} pf_coll_bench;

/* PF_EINVAL when nodes or gpn do not fit the machine. */
int pf_coll_bench_init(const pf_machine *m, int nodes, int gpn, pf_placement pl, unsigned long seed,
                       pf_coll_bench *b);
/* bytes as nccl-tests' "size" column: all-reduce and reduce-scatter the
 * input of a rank, all-gather its output, all-to-all the data a rank sends,
 * send/receive the message. */
int pf_coll_bench_run(const pf_coll_bench *b, pf_coll_kind kind, pf_coll_algo algo, pf_coll_proto proto, double bytes,
                      pf_coll_result *res);
void pf_coll_bench_free(pf_coll_bench *b);

/* The expert-parallel all-to-all (MoE dispatch or combine; alltoall.c,
 * docs/communication.md "All-to-all for expert parallelism").  The library
 * that moves the tokens: NCCL's all-to-all (every token copy its own send),
 * DeepEP-style kernels (a token crosses to each node once over RDMA, then
 * NVLink forwarding) or NVIDIA's HybridEP (the same flows, TMA copies inside the
 * NVLink domain), each at its measured, sourced rates. */
typedef enum { PF_A2A_NCCL, PF_A2A_DEEPEP, PF_A2A_HYBRIDEP } pf_a2a_lib;
/* Which call (HybridEP's rates differ by call): the dispatch in bf16, the dispatch in FP8 (1 byte and a 4-byte
 * scale per 128 elements), the combine (bf16). */
typedef enum { PF_A2A_DISPATCH_BF16, PF_A2A_DISPATCH_FP8, PF_A2A_COMBINE } pf_a2a_call;
const char *pf_a2a_lib_name(pf_a2a_lib l);           /* "nccl", "deepep", "hybridep" */
int pf_a2a_lib_parse(const char *s, pf_a2a_lib *out); /* PF_EINVAL naming the valid ones */

typedef struct pf_a2a_req {
  const int *groups;  /* ngroups x p GPUs of the job: the EP groups that run at once (borrowed) */
  int ngroups, p;
  double bytes;       /* what one rank sends in the call: tokens x top-k x hidden x element bytes */
  int topk;           /* copies per token (routed experts; 0 = 1: a plain all-to-all) */
  int max_nodes;      /* node-limited routing: a token's copies reach at most this many nodes (0: no limit;
                       * DeepSeek-V3: 4, arXiv 2412.19437 section 2.1.2) */
  pf_a2a_lib lib;
  int experts;        /* routed experts over the group (DeepEP: a token goes once to each rank holding any of its
                       * experts, alltoall.c; 0: unknown, every copy sent) */
  pf_a2a_call call;   /* DeepEP, HybridEP: which call's rates */
  int sms;            /* DeepEP, HybridEP: SMs their kernels hold (0: the default, 20 and 16) */
} pf_a2a_req;

typedef struct pf_a2a_result {
  double time_s;          /* the call, every group at once, latency included */
  double lat_s, bw_s;     /* its latency and bandwidth parts */
  double fabric_s, nic_s; /* bandwidth time of the node-fabric part alone and of the network part alone */
  double remote_fraction; /* bytes that leave the node over the rank's bytes */
  double peers_remote;    /* share of a rank's peers on other nodes */
  double fabric_bytes, nic_bytes; /* per rank: over NVLink / Infinity Fabric, out through its NIC */
  int nodes;              /* nodes an EP group spans */
  pf_a2a_lib lib;
} pf_a2a_result;

/* One dispatch (or combine) over the groups on c's topology.  PF_EINVAL for
 * ranks outside the job or too many flows (p^2 x ngroups > 2e7), PF_ENOMEM. */
int pf_comm_alltoall(const pf_comm *c, const pf_a2a_req *rq, pf_a2a_result *res);
/* The hash of what c's topology was built from and what it is (the all-to-all memo's key; pf_comm_init keeps it). */
unsigned long long pf_comm_topo_key(const pf_comm *c);
/* The memo of collective calls (collmemo.c; pf_comm_collective's): a call on the topology of hash topo already
 * priced gives its result, and with pat non-NULL a copy of the pattern it chose, for the caller to free (true);
 * keep a priced one (pat: NULL for a call that wanted none). */
bool pf_coll_memo_find(unsigned long long topo, const pf_coll_req *rq, pf_coll_pattern *pat, pf_coll_result *res);
void pf_coll_memo_keep(unsigned long long topo, const pf_coll_req *rq, const pf_coll_pattern *pat,
                       const pf_coll_result *res);
/* Expected number of nodes other than its own that one token reaches with
 * topk copies spread evenly over `nodes` nodes, at most max_nodes of them
 * (0: no limit): T (1 - (1 - 1/T)^topk) (nodes - 1) / nodes, T = min(max_nodes, nodes). */
double pf_a2a_remote_nodes(int nodes, int topk, int max_nodes);
/* HybridEP's measured share of what the NVLink fabric achieves for a call over `ranks` GPUs of one NVLink domain
 * with `sms` SMs (0: its default 16); alltoall.c holds the source's table. */
double pf_a2a_hybridep_share(pf_a2a_call call, int ranks, int sms);
/* The rate DeepEP's normal kernels reach with `sms` SMs (0: Megatron's 20) over `ranks` GPUs of one NVLink domain,
 * GB/s of received rows: on a fast fabric the SMs bound it (alltoall.c holds the source's table). */
double pf_a2a_deepep_sm_gbs(pf_a2a_call call, int ranks, int sms);

/* Share of the compute units a collective kernel occupies while it runs
 * (its CTAs over the device's SMs / CUs, pf_device.units;
 * docs/communication.md 6). */
double pf_comm_sm_share(const pf_machine *m);
/* the same share for communication kernels holding `ctas` of the device's units (DeepEP's SMs, epa2a.c) */
double pf_comm_sm_share_of(const pf_machine *m, double ctas);

#define PF_MAXSTAGE 1024 /* pipeline stages at most */

/* The P2P network as the pipeline sees it.  Boundary s carries stage s ->
 * s+1 (index pp-1: the last stage back to the first, for the interleaved
 * schedule's next chunk).  All TP x CP x DP sends of a boundary run at once,
 * so bw_Bps[s] is the smallest, over those flows, of min over the flow's
 * route of capacity / flows on that link (pf_topology routes), and lat_s[s]
 * the largest route latency.  recv_s is the receiver's work after each
 * receive: the TP all-gather of Megatron's scatter-gather P2P optimisation
 * (TP > 1 without sequence parallelism); 0 otherwise. */
typedef struct pf_pipe_net {
  double bw_Bps[PF_MAXSTAGE];
  double lat_s[PF_MAXSTAGE];
  double recv_s;
} pf_pipe_net;

/* Fill net for sc's placement on topology t.  PF_ENOMEM. */
int pf_pipeline_net(const pf_scenario *sc, const pf_topology *t, pf_pipe_net *net);
/* A P2P network whose transfers cost nothing, for pp stages (the pipeline
 * without its P2P time: the bubble apart from the transfers). */
void pf_pipeline_net_free(int pp, pf_pipe_net *net);

/* Time of one send of `bytes` over boundary b alone on its links: the
 * boundary's latency plus bytes over its bandwidth (the receiver's recv_s
 * not included). */
double pf_pipe_net_time(const pf_pipe_net *net, int b, double bytes);

#endif
