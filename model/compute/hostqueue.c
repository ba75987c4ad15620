/* hostqueue.c - what the host costs the GPU: the CPU time of each framework
 * operator, per framework mode and pass, that kernel.c lays on the two-resource
 * queue (the GPU starts kernel i when it has finished kernel i-1 and the host
 * has issued kernel i; kernel.h).  Short kernels leave the GPU waiting on the
 * host (host-bound); long ones hide it.
 *
 * Defaults (docs/model.md, "Host dispatch"):
 *  eager PyTorch forward    12 us per operator: Python, the dispatcher, autograd
 *                           recording and cudaLaunchKernel on a current server
 *                           CPU (Fernandez et al. 2023, "The Framework Tax",
 *                           EMNLP: eager frameworks are overhead-bound below a
 *                           few ms of GPU work per layer; Nguyen et al. 2021,
 *                           PyTorch blog "Accelerating PyTorch with CUDA
 *                           Graphs": CPU launch overhead as the reason to
 *                           capture; PyTorch's operator micro-benchmarks put the
 *                           C++ dispatch of a trivial operator called from Python
 *                           at 2.3-3.4 us before the launch, pytorch#32194).
 *  autograd backward        12 us per backward node: the engine runs the node's
 *                           backward formula through the same dispatcher and
 *                           launch path (no Python, but one to three dispatches
 *                           per node: a linear's backward is two GEMMs and a
 *                           bias reduction); assumed equal to forward until
 *                           `calibrate --host` measures both.
 *  TensorFlow graph mode     5 us: the C++ executor, no Python per operator.
 *  torch.compile             4 us per fused kernel, forward and backward
 *                           (Ansel et al. 2024, ASPLOS, PyTorch 2: one generated
 *                           wrapper call per kernel, AOTAutograd's backward too).
 *  CUDA/HIP graphs           0: the captured step is replayed by one launch.
 *  Megatron-LM (with TE)     eager PyTorch: the same per-operator cost over its
 *                           fused kernels (CUDA graphs are opt-in there).
 * A calibration file (results.host, `preflight calibrate --host`) replaces the
 * forward and backward costs with the node's measurements.
 *
 * PyTorch's single-process DataParallel runs one host thread per GPU under one
 * interpreter lock (PyTorch documentation, "Comparison between DataParallel and
 * DistributedDataParallel": GIL contention across threads makes DataParallel
 * slower than DDP even on one machine): every replica's operators are issued
 * one after the other, so the forward and backward costs are those of one
 * replica times the replicas; the optimizer runs once, on the first GPU.
 *
 * A host synchronisation (a kernel with sync set: kernel.c) stops the host
 * until the GPU has caught up, so its lead is lost.  Megatron-Core's dropless
 * MoE layers do one per forward: the tokens each expert received are copied to
 * the host (tokens_per_expert .to("cpu") then a stream synchronize, or .tolist()
 * for the grouped GEMM's splits) before the experts' GEMMs can be launched, and
 * the layer's Python from there on (dispatch, permute, experts, unpermute) runs
 * with the GPU idle (graphs.c, "Where the Python runs").
 * The copy itself costs HOST_D2H_SYNC_S: cudaMemcpyAsync of a few bytes takes
 * 5-7 us a call (Wu et al. 2026, "DualPath", arXiv 2602.21548, section 5.2:
 * measured per-call overhead), and a small cudaMemcpy about 10 us on an older
 * PCIe 2 node (University of Virginia CUDA support notes, "Memory Transfer
 * Overhead", GTX 280); 6 us, the middle of the recent measurement.
 *
 * Megatron-Core runs Python of its own per layer besides the operators it
 * dispatches: its TransformerLayer, attention and MLP modules, the custom
 * autograd functions of its linear layers, and in a MoE layer the router
 * (top-k, the auxiliary loss) and the token dispatcher's permutation and
 * bookkeeping.  Measured on a real GPU node (one H200, its VM's 16-core Xeon,
 * PyTorch 2.11, Megatron-Core NVIDIA/Megatron-LM@d98e8a6, its local spec;
 * scripts/megatron-host-time.py, calibrate/results/vm-h200-141-2026-11-26-
 * torch-megatron-host.json): one layer at tiny shapes, so that the wall time
 * between synchronisations is the host's, medians of three rounds of 40
 * passes, with the kernels each pass launched counted by torch.profiler.  What a pass costs
 * the host beyond dispatching its launches at the same node's eager cost (the
 * `calibrate --host` probe there, median of six runs on three instances of
 * the VM: 11.4 us a forward operator, 17.0 us a backward node):
 *   dense layer   forward 2.27 ms - 51 launches  = 1.69 ms
 *                 backward 2.18 ms - 61 launches = 1.14 ms
 *   MoE layer     forward 4.24 ms - 97 launches  = 3.13 ms
 *   (no experts)  backward 3.05 ms - 85 launches = 1.61 ms
 * (the MoE figures are the intercept over 2 and 8 local experts at top-2: each
 * SequentialMLP expert adds 0.27 / 0.36 ms, which Transformer Engine's grouped
 * GEMM, one operator with the per-expert loop in C++, does not have: the
 * experts stay one operator each, moelayer.c).  At a shape where the GPU works
 * (hidden 4096, sequence 4096) the same dense pass took 10.7 / 15.8 ms against
 * 10.0 / 15.3 ms of kernels, the host hidden; a Qwen3-235B-like MoE layer at
 * 1,024 tokens (16 local experts, top 8, SequentialMLP's loop among them) took
 * 9.6 / 12.1 ms against 1.6 / 3.3 ms of kernels: host-bound, as Megatron-Core's
 * MoE guide says of small micro-batches.  Transformer Engine was not installed there: its modules'
 * Python is heavier than PyTorch's (one TE Linear forward 90-100 us of CPU
 * against 33-37 us for torch's on the same Grace host, TransformerEngine#2053),
 * so for TE runs these figures are a floor.  Scaled by the node's eager cost
 * (a calibration), none under CUDA graphs or torch.compile. */
#include "compute.h"

#define HOST_EAGER_S 12e-6
#define HOST_AUTOGRAD_S 12e-6
#define HOST_TF_GRAPH_S 5e-6
#define HOST_COMPILED_S 4e-6
#define HOST_D2H_SYNC_S 6e-6
#define MCORE_DENSE_FWD_S 1.69e-3
#define MCORE_DENSE_BWD_S 1.14e-3
#define MCORE_MOE_FWD_S 3.13e-3
#define MCORE_MOE_BWD_S 1.61e-3

double pf_host_sync_s(const pf_scenario *sc) {
  (void)sc; /* one figure for every node until `calibrate --host` measures it */
  return HOST_D2H_SYNC_S;
}

void pf_host_costs_get(const pf_scenario *sc, pf_host_costs *h) {
  pf_framework fw = pf_scenario_framework(sc);
  double f, b;
  switch (sc->host_mode) {
  case PF_HOST_EAGER: f = HOST_EAGER_S, b = HOST_AUTOGRAD_S; break;
  case PF_HOST_GRAPHS: f = b = 0; break;
  case PF_HOST_COMPILED: f = b = HOST_COMPILED_S; break;
  default:
    if (fw == PF_FW_TENSORFLOW) f = b = HOST_TF_GRAPH_S;
    else f = HOST_EAGER_S, b = HOST_AUTOGRAD_S;
    break;
  }
  /* a measured node (calibration results.host) replaces the eager costs; graphs replay without the host */
  bool eager = sc->host_mode == PF_HOST_EAGER || (sc->host_mode == PF_HOST_AUTO && fw != PF_FW_TENSORFLOW);
  if (eager && sc->host_fwd_op_s > 0) f = sc->host_fwd_op_s;
  if (eager && sc->host_bwd_op_s > 0) b = sc->host_bwd_op_s;
  h->replicas = sc->workload.dp_impl == PF_DPIMPL_DATAPARALLEL && sc->plan.dp > 1 ? sc->plan.dp : 1;
  h->fwd_op_s = f * h->replicas;
  h->bwd_op_s = b * h->replicas;
  h->opt_op_s = f;
  h->cpu_scale = eager ? f / HOST_EAGER_S : sc->host_mode == PF_HOST_GRAPHS ? 0.0 : 1.0;
  h->eager = eager;
}

double pf_host_op_s(const pf_scenario *sc) {
  pf_host_costs h;
  pf_host_costs_get(sc, &h);
  return h.fwd_op_s;
}

double pf_host_layer_python_s(const pf_scenario *sc, bool moe, bool backward) {
  pf_host_costs h;
  pf_host_costs_get(sc, &h);
  if (!h.eager || pf_scenario_framework(sc) != PF_FW_MEGATRON) return 0;
  double s = moe ? (backward ? MCORE_MOE_BWD_S : MCORE_MOE_FWD_S) : (backward ? MCORE_DENSE_BWD_S : MCORE_DENSE_FWD_S);
  return s * h.cpu_scale;
}
