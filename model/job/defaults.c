/* defaults.c - the settings current practice turns on (see plan.h; the table
 * with every source is docs/defaults.md).  For a transformer trained with
 * Megatron (--framework auto or megatron), the settings that the Megatron-Core
 * and NeMo recipes of the model family turn on are on unless the user says
 * otherwise (--no-X):
 *   sp, dist-opt, overlap-grad-reduce, overlap-param-gather
 *       NeMo v2.4.0 (2381f42, 2025-07-25) nemo/collections/llm/recipes/
 *       llama3_8b.py, llama3_70b.py, llama2_7b.py, gpt3_175b.py: the
 *       DistributedDataParallelConfig of every trainer() sets
 *       overlap_grad_reduce=True and overlap_param_gather=True;
 *       distributed_fused_adam_with_cosine_annealing (recipes/optim/adam.py),
 *       the optimizer of every pretrain_recipe, sets
 *       use_distributed_optimizer=True.  Megatron-LM core_v0.19.0
 *       examples/llama/train_llama3_8b_h100_fp8.sh passes --sequence-parallel
 *       ("Always enable sequence parallelism with TP_SIZE=2"),
 *       --use-distributed-optimizer, --overlap-grad-reduce and
 *       --overlap-param-gather.  SP only where TP > 1 (it splits what TP
 *       replicates; Megatron makes it a no-op at TP 1).
 *   flash-attn
 *       Megatron-Core core_v0.19.0 transformer_config.py: attention_backend
 *       defaults to AttnBackend.auto ("we let transformer engine decide the
 *       best backend"), which runs flash or cuDNN fused attention where the
 *       device has them: FlashAttention-2 on NVIDIA Ampere, Ada, Hopper with
 *       fp16/bf16 (Dao-AILab/flash-attention README), and on AMD MI200/MI300
 *       through the ROCm composable-kernel backend, fp16/bf16
 *       (ROCm/flash-attention README, 24d9956).  Not on Intel GPUs (no
 *       Transformer Engine there) nor in fp32/tf32.
 *   tp-comm-overlap
 *       NeMo v2.4.0 llama3_70b.py and gpt3_175b.py pretrain_recipe_performance:
 *       MegatronCommOverlapCallback(tp_comm_overlap=True) with a userbuffers
 *       configuration of recipes/tp_overlap_configs/userbuffers.py, which has
 *       them for H100 and B200 only (llama3_8b.py and llama2_7b.py set
 *       tp_comm_overlap=False: TP 1 and 2 without SP).  So: on NVIDIA Hopper
 *       and later (sm_90+), where TP > 1 with SP and TP stays inside a node
 *       (Transformer Engine's userbuffers overlap TP inside a node only,
 *       NVIDIA/TransformerEngine#1071).  Off on A100 (no configuration ships
 *       for it) and on AMD: ROCm Transformer Engine gained userbuffers
 *       comm+GEMM overlap in ROCm/TransformerEngine#367 (merged 2026-03-26),
 *       with no recipe that turns it on; --tp-comm-overlap models it where asked.
 * Layer lists (CNNs, U-Nets, the MAELSTROM applications), custom models and
 * --framework pytorch|tensorflow keep every setting as given.
 */
#include "plan.h"

#include <stdlib.h>
#include <string.h>

static const struct {
  unsigned bit;
  const char *name, *source;
} settings[PF_SET_COUNT] = {
    {PF_SET_FLASH_ATTN, "flash-attn", "Megatron-Core core_v0.19.0 transformer_config.py attention_backend=auto"},
    {PF_SET_SP, "sp", "Megatron-LM core_v0.19.0 examples/llama/train_llama3_8b_h100_fp8.sh --sequence-parallel"},
    {PF_SET_DIST_OPT, "dist-opt", "NeMo v2.4.0 recipes/optim/adam.py use_distributed_optimizer=True"},
    {PF_SET_OVERLAP_GRAD, "overlap-grad-reduce", "NeMo v2.4.0 recipes (llama3_8b.py ...) overlap_grad_reduce=True"},
    {PF_SET_OVERLAP_PARAM, "overlap-param-gather", "NeMo v2.4.0 recipes (llama3_8b.py ...) overlap_param_gather=True"},
    {PF_SET_TP_COMM_OVERLAP, "tp-comm-overlap",
     "NeMo v2.4.0 llama3_70b.py, gpt3_175b.py pretrain_recipe_performance tp_comm_overlap=True (H100)"},
};

static int index_of(unsigned bit) {
  for (int i = 0; i < PF_SET_COUNT; i++)
    if (settings[i].bit == bit) return i;
  return -1;
}

const char *pf_setting_name(unsigned bit) { int i = index_of(bit); return i < 0 ? "?" : settings[i].name; }
const char *pf_setting_source(unsigned bit) { int i = index_of(bit); return i < 0 ? "?" : settings[i].source; }

static bool *field(pf_plan *p, unsigned bit) {
  switch (bit) {
  case PF_SET_FLASH_ATTN: return &p->flash_attn;
  case PF_SET_SP: return &p->sp;
  case PF_SET_DIST_OPT: return &p->dist_opt;
  case PF_SET_OVERLAP_GRAD: return &p->overlap_grad_reduce;
  case PF_SET_OVERLAP_PARAM: return &p->overlap_param_gather;
  case PF_SET_TP_COMM_OVERLAP: return &p->tp_comm_overlap;
  }
  return NULL;
}

/* The CUDA compute capability of "sm_90" (90), 0 for another architecture. */
static int sm_version(const char *arch) { return strncmp(arch, "sm_", 3) == 0 ? atoi(arch + 3) : 0; }

/* Fused (flash) attention on the device at the precision: see the header comment. */
static bool has_flash(const pf_scenario *sc) {
  const pf_device *d = &sc->machine.dev;
  bool half = sc->precision == PF_FP16 || sc->precision == PF_BF16 || sc->precision == PF_FP8;
  if (!half) return false;
  if (strcmp(d->vendor, "nvidia") == 0) return sm_version(d->arch) >= 80;
  return strcmp(d->vendor, "amd") == 0 && strncmp(d->arch, "gfx9", 4) == 0; /* CDNA: gfx90a MI200, gfx94x MI300 */
}

unsigned pf_practice_settings(const pf_scenario *sc) {
  pf_framework fw = sc->framework;
  if (sc->workload.kind != PF_WL_TRANSFORMER || (fw != PF_FW_AUTO && fw != PF_FW_MEGATRON)) return 0;
  unsigned s = PF_SET_SP | PF_SET_DIST_OPT | PF_SET_OVERLAP_GRAD | PF_SET_OVERLAP_PARAM;
  if (has_flash(sc)) s |= PF_SET_FLASH_ATTN;
  const pf_device *d = &sc->machine.dev;
  if (strcmp(d->vendor, "nvidia") == 0 && sm_version(d->arch) >= 90) s |= PF_SET_TP_COMM_OVERLAP;
  return s;
}

void pf_scenario_practice_defaults(pf_scenario *sc, unsigned given) {
  pf_plan *p = &sc->plan;
  p->practice = pf_practice_settings(sc);
  p->given = given;
  for (int i = 0; i < PF_SET_COUNT; i++)
    if ((p->practice & settings[i].bit) && !(given & settings[i].bit)) *field(p, settings[i].bit) = true;
}

void pf_plan_settle_defaults(pf_scenario *sc) {
  pf_plan *p = &sc->plan;
  unsigned dflt = p->practice & ~p->given;
  const pf_workload *w = &sc->workload;
  long long split = (long long)p->cp * p->tp;
  if ((dflt & PF_SET_SP) && (p->tp < 2 || (w->kind == PF_WL_TRANSFORMER && split > 0 && w->seq % split)))
    p->sp = false;
  /* Transformer Engine's userbuffers: TP inside a node, with SP (Megatron-LM arguments.py) */
  if ((dflt & PF_SET_TP_COMM_OVERLAP) && (!p->sp || p->tp < 2 || p->tp > sc->machine.gpus_per_node))
    p->tp_comm_overlap = false;
  if ((dflt & PF_SET_OVERLAP_PARAM) && !p->dist_opt) p->overlap_param_gather = false;
  /* --engine full models neither overlap (resolve.c refuses them when asked for) */
  if (sc->engine == PF_ENGINE_FULL) {
    if (dflt & PF_SET_OVERLAP_GRAD) p->overlap_grad_reduce = false;
    if (dflt & PF_SET_OVERLAP_PARAM) p->overlap_param_gather = false;
  }
}
