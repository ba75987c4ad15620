/* shard.c - the sharding level of a plan and what each library composes it with (plan.h; formulas and sources
 * in docs/model.md, "Sharded data parallelism").
 *
 * Levels, as the ZeRO paper names them (Rajbhandari et al., "ZeRO: Memory Optimizations Toward Training Trillion
 * Parameter Models", SC 2020, arXiv 1910.02054, section 5): 1 = P_os (optimizer state sharded: Megatron's
 * distributed optimizer, --dist-opt), 2 = P_os+g (gradients too: DeepSpeed stage 2, Megatron-FSDP
 * "optim_grads", PyTorch FSDP SHARD_GRAD_OP), 3 = P_os+g+p (parameters too: DeepSpeed stage 3, Megatron-FSDP
 * "optim_grads_params", PyTorch FSDP FULL_SHARD / FSDP2 fully_shard).  The shard group is the DP x CP group
 * (Megatron-FSDP shards over "dp_cp", docs/user-guide/features/megatron_fsdp.md) or, with HYBRID_SHARD (Zhao
 * et al., "PyTorch FSDP: Experiences on Scaling Fully Sharded Data Parallel", VLDB 2023, arXiv 2304.11277,
 * section 3.2.2), its ranks inside one node, the state replicated across nodes.
 *
 * What each library composes the levels with (checked sources):
 *   DeepSpeed    runtime/pipe/engine.py: assert zero_optimization_stage() < 2, "ZeRO-2 and ZeRO-3 are
 *                incompatible with pipeline parallelism"; no context parallelism of Megatron's kind.
 *   torch        Megatron-LM arguments.py (d98e8a6): "--use-torch-fsdp2 is not supported with pipeline
 *                parallelism" under --framework megatron; torchtitan composes FSDP2 with TP, CP and PP
 *                (--framework pytorch).
 *   megatron     Megatron-FSDP v1 (--use-megatron-fsdp, --data-parallel-sharding-strategy) composes with TP, CP
 *                and EP (megatron_fsdp.md, "FSDP sharding is always performed last"); arguments.py has no
 *                pipeline check for it.  Its hybrid form is --num-distributed-optimizer-instances with
 *                --outer-dp-sharding-strategy no_shard (HSDP).
 */
#include "plan.h"

#include "core/core.h"

#include <stdio.h>
#include <string.h>

static const char *group_names[] = {"all", "node"};
static const char *impl_names[] = {"auto", "megatron", "torch", "deepspeed"};

const char *pf_shard_group_name(int g) { return g >= 0 && g <= PF_SHARD_NODE ? group_names[g] : "?"; }
const char *pf_fsdp_impl_name(int i) { return i >= 0 && i <= PF_FSDP_DEEPSPEED ? impl_names[i] : "?"; }

int pf_plan_zero(const pf_plan *p) { return p->zero >= 2 ? p->zero : p->dist_opt ? 1 : 0; }

pf_fsdp_impl pf_plan_fsdp_impl(const pf_scenario *sc) {
  if (sc->plan.fsdp_impl != PF_FSDP_AUTO) return (pf_fsdp_impl)sc->plan.fsdp_impl;
  /* the framework the run uses (compute's pf_scenario_framework): Megatron for transformers unless told */
  bool torch = sc->framework == PF_FW_PYTORCH ||
               (sc->framework == PF_FW_AUTO && sc->workload.kind != PF_WL_TRANSFORMER);
  return torch ? PF_FSDP_TORCH : PF_FSDP_MEGATRON;
}

int pf_plan_shard_size(const pf_scenario *sc) {
  const pf_plan *p = &sc->plan;
  int n = p->dp * p->cp;
  if (pf_plan_zero(p) == 0 || n < 1) return 1;
  if (p->shard_group != PF_SHARD_NODE || sc->machine.gpus_per_node < 1) return n;
  /* members of the DP x CP group of rank 0 on rank 0's node (rank order: plan.h) */
  int node = pf_plan_node_of(sc, pf_plan_rank(p, 0, 0, 0, 0)), k = 0;
  for (int d = 0; d < p->dp; d++)
    for (int c = 0; c < p->cp; c++) k += pf_plan_node_of(sc, pf_plan_rank(p, 0, c, d, 0)) == node;
  return k > 0 ? k : 1;
}

/* What the library refuses: PP with DeepSpeed's ZeRO-2/3 and Megatron's torch FSDP2, CP with DeepSpeed. */
static int check_composition(const pf_scenario *sc, int z) {
  const pf_plan *p = &sc->plan;
  pf_fsdp_impl impl = pf_plan_fsdp_impl(sc);
  if (p->pp > 1 && impl == PF_FSDP_DEEPSPEED)
    return pf_error_set(PF_EPLAN, "--zero %d with --pp %d: DeepSpeed refuses it (runtime/pipe/engine.py: \"ZeRO-2 "
                        "and ZeRO-3 are incompatible with pipeline parallelism\"); use --pp 1, --zero 1, or "
                        "--fsdp-impl megatron", z, p->pp);
  if (p->pp > 1 && impl == PF_FSDP_TORCH && pf_plan_zero(p) >= 2 && sc->framework != PF_FW_PYTORCH &&
      sc->workload.kind == PF_WL_TRANSFORMER)
    return pf_error_set(PF_EPLAN, "--zero %d --fsdp-impl torch with --pp %d: Megatron-LM refuses it (arguments.py: "
                        "\"--use-torch-fsdp2 is not supported with pipeline parallelism\"); use --fsdp-impl megatron "
                        "or --framework pytorch (torchtitan composes FSDP2 with PP)", z, p->pp);
  if (p->cp > 1 && impl == PF_FSDP_DEEPSPEED)
    return pf_error_set(PF_EPLAN, "--zero %d --fsdp-impl deepspeed with --cp %d: DeepSpeed has no Megatron-style "
                        "context parallelism; use --cp 1 or --fsdp-impl megatron", z, p->cp);
  return 0;
}

int pf_plan_check_sharding(pf_scenario *sc) {
  pf_plan *p = &sc->plan;
  if (p->zero == 1) p->zero = 0, p->dist_opt = true; /* level 1 is the distributed optimizer */
  if (p->zero < 0 || p->zero > 3)
    return pf_error_set(PF_EINVAL, "--zero %d: valid: 0, 1 (--dist-opt), 2 or 3", p->zero);
  if (p->shard_group < 0 || p->shard_group > PF_SHARD_NODE)
    return pf_error_set(PF_EINVAL, "--fsdp-shard-group: valid: all, node");
  if (p->fsdp_prefetch < 0 || p->fsdp_prefetch > 8)
    return pf_error_set(PF_EINVAL, "--fsdp-prefetch %d: valid: 0 to 8 units", p->fsdp_prefetch);
  if (p->zero < 2) {
    if (p->shard_group == PF_SHARD_NODE)
      return pf_error_set(PF_EINVAL, "--fsdp-shard-group node needs --zero 2 or 3 (FSDP's HYBRID_SHARD shards "
                          "gradients and parameters inside a node)");
    return 0;
  }
  if (!p->dist_opt && (p->given & PF_SET_DIST_OPT))
    return pf_error_set(PF_EINVAL, "--zero %d shards the optimizer state too: it contradicts --no-dist-opt", p->zero);
  p->dist_opt = true;
  int k = pf_plan_shard_size(sc);
  if (p->shard_group == PF_SHARD_NODE && (p->dp * p->cp) % k)
    return pf_error_set(PF_EPLAN, "--fsdp-shard-group node: the %d ranks of a DP x CP group are not spread evenly over "
                        "nodes (%d on the first); choose TP x CP x DP that tiles the %d GPUs of a node", p->dp * p->cp,
                        k, sc->machine.gpus_per_node);
  /* the per-unit reduce-scatter runs inside every backward: Megatron's bucketed end-of-step reduction is gone;
   * at level 3 so is the end-of-step parameter all-gather */
  p->overlap_grad_reduce = false;
  if (p->zero == 3) p->overlap_param_gather = false;
  return check_composition(sc, p->zero);
}

void pf_plan_sharding_text(const pf_scenario *sc, char *buf, size_t n) {
  static const char *fsdp[] = {"none", "distributed optimizer", "SHARD_GRAD_OP", "FULL_SHARD"};
  const pf_plan *p = &sc->plan;
  int z = pf_plan_zero(p), k = pf_plan_shard_size(sc);
  if (z == 0) { snprintf(buf, n, "ZeRO-0 (replicated)"); return; }
  snprintf(buf, n, "ZeRO-%d (%s%s, %s, over %d ranks%s)", z, p->shard_group == PF_SHARD_NODE ? "HYBRID_" : "",
           p->shard_group == PF_SHARD_NODE ? "SHARD" : fsdp[z], z >= 2 ? pf_fsdp_impl_name(pf_plan_fsdp_impl(sc))
           : "megatron", k, p->shard_group == PF_SHARD_NODE ? ", replicated across nodes" : "");
}
