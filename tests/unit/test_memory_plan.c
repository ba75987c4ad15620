/* test_memory_plan.c - plan validation and the memory terms, by hand. */
#include "check.h"
#include "core/core.h"
#include "job/job.h"

#define GiB (1024.0 * 1024.0 * 1024.0)

static void setup(pf_scenario *sc, const char *machine, const char *model) {
  pf_scenario_init(sc);
  if (pf_machine_load(machine, &sc->machine) != 0) fprintf(stderr, "%s\n", pf_error_detail());
  if (pf_workload_builtin(model, &sc->workload) != 0) fprintf(stderr, "%s\n", pf_error_detail());
}

int main(void) {
  static pf_scenario sc;
  /* ---- plan checks ---- */
  setup(&sc, "mn5-acc", "gpt3-175b");
  sc.nodes = 32; sc.plan.tp = 4; sc.plan.pp = 32; sc.plan.gbs = 1536; sc.plan.sp = true; sc.plan.dist_opt = true;
  sc.precision = PF_FP16; sc.plan.recompute = PF_RECOMPUTE_SELECTIVE;
  CHECK_INT(pf_plan_check(&sc), 0);
  CHECK_INT(sc.gpus, 128);
  CHECK_INT(sc.plan.dp, 1);
  CHECK_INT(sc.plan.grad_accum, 1536);
  CHECK_INT(sc.plan.tp * sc.plan.pp * sc.plan.dp * sc.plan.cp, sc.gpus); /* invariant */
  /* rank order: tp fastest, then dp, then pp */
  CHECK_INT(pf_plan_rank(&sc.plan, 1, 0, 0, 2), 1 + 4 * 2);

  setup(&sc, "mn5-acc", "gpt3-175b");
  sc.gpus = 128; sc.plan.tp = 3;
  CHECK_INT(pf_plan_check(&sc), PF_EPLAN);
  CHECK(strstr(pf_error_detail(), "not divisible") != NULL);

  setup(&sc, "mn5-acc", "gpt3-175b");
  sc.nodes = 2; sc.plan.tp = 8; /* 4 GPUs per node */
  CHECK_INT(pf_plan_check(&sc), PF_EPLAN);
  CHECK(strstr(pf_error_detail(), "inside a node") != NULL);

  setup(&sc, "mn5-acc", "gpt3-175b");
  sc.nodes = 10; sc.plan.tp = 4; sc.plan.pp = 5; /* 96 layers % 5 */
  CHECK_INT(pf_plan_check(&sc), PF_EPLAN);
  CHECK(strstr(pf_error_detail(), "divisible by pipeline") != NULL);

  setup(&sc, "mn5-acc", "gpt3-175b");
  sc.nodes = 64; sc.plan.tp = 4; sc.plan.pp = 32; sc.plan.gbs = 1537;
  CHECK_INT(pf_plan_check(&sc), PF_EPLAN);
  CHECK(strstr(pf_error_detail(), "1536 or 1538") != NULL);

  setup(&sc, "mn5-acc", "gpt3-175b");
  sc.nodes = 64; sc.plan.tp = 4; sc.plan.pp = 32; sc.plan.grad_accum = 192;
  CHECK_INT(pf_plan_check(&sc), 0);
  CHECK_INT(sc.plan.dp, 2);
  CHECK_INT(sc.plan.gbs, 384);

  setup(&sc, "mn5-acc", "gpt3-175b");
  sc.nodes = 64; sc.plan.tp = 4; sc.plan.pp = 16; sc.plan.schedule = PF_SCHED_INTERLEAVED; sc.plan.vstages = 4;
  sc.plan.gbs = 64; /* 96 % (16 x 4) != 0 */
  CHECK_INT(pf_plan_check(&sc), PF_EPLAN);
  CHECK(strstr(pf_error_detail(), "PP x V") != NULL);

  setup(&sc, "mn5-acc", "gpt3-175b");
  sc.nodes = 33; sc.plan.tp = 4; sc.plan.pp = 32;
  CHECK_INT(pf_plan_check(&sc), PF_EPLAN);

  /* ---- memory terms, GPT-3 175B on MN5 (EPICURE plan) ---- */
  setup(&sc, "mn5-acc", "gpt3-175b");
  sc.nodes = 32; sc.plan.tp = 4; sc.plan.pp = 32; sc.plan.gbs = 1536; sc.plan.sp = true; sc.plan.dist_opt = true;
  sc.precision = PF_FP16; sc.plan.recompute = PF_RECOMPUTE_SELECTIVE;
  CHECK_INT(pf_plan_check(&sc), 0);
  /* activations per layer with SP + selective: 34 s b h / t bytes = 34 x 2048 x 12288 / 4 */
  CHECK_NEAR(pf_memory_act_per_layer(&sc), 34.0 * 2048 * 12288 / 4, 1e-12);
  pf_memory m;
  pf_memory_estimate(&sc, &m);
  /* stage 0: 3 layers x (12 h^2 + 13 h)/4 + embedding (50688 + 2048) h / 4 parameters */
  double h = 12288, P0 = (3 * (12 * h * h + 13 * h) + (50688 + 2048) * h) / 4;
  CHECK_INT(m.worst_stage, 0);
  CHECK_NEAR(m.weights_B, 2 * P0, 1e-9);
  CHECK_NEAR(m.gradients_B, 2 * P0, 1e-9); /* fp16: the gradient buffer in fp16 (Megatron-LM's fp16 default) */
  CHECK_NEAR(m.optimizer_B, 12 * P0, 1e-9); /* DP 1: nothing to shard */
  /* 1F1B: stage 0 holds PP = 32 microbatches of its 3 layers, plus the embedding output */
  CHECK_NEAR(m.activations_B, 32 * 3 * 34.0 * 2048 * 12288 / 4 + 32 * 2.0 * 2048 * 12288 / 4, 1e-9);
  CHECK(m.total_B / GiB > 30 && m.total_B / GiB < 55);
  CHECK(m.total_B < m.capacity_B);
  CHECK_INT(pf_memory_check(&sc, &m), 0);

  /* bf16 accumulates and reduces the gradients in fp32 (Megatron-LM forces it), in bf16 with
   * --grad-reduce-in-bf16; fp32 has no 2-byte gradients to ask for */
  sc.precision = PF_BF16;
  pf_memory_estimate(&sc, &m);
  CHECK_NEAR(m.gradients_B, 4 * P0, 1e-9);
  CHECK_NEAR(pf_grad_bytes(&sc), 4.0, 0);
  sc.plan.grad_reduce_bf16 = true;
  CHECK_INT(pf_plan_check(&sc), 0);
  pf_memory_estimate(&sc, &m);
  CHECK_NEAR(m.gradients_B, 2 * P0, 1e-9);
  sc.precision = PF_FP32;
  CHECK_INT(pf_plan_check(&sc), PF_EINVAL);
  CHECK(strstr(pf_error_detail(), "--grad-reduce-in-bf16") != NULL);
  sc.precision = PF_FP16;
  sc.plan.grad_reduce_bf16 = false;
  CHECK_INT(pf_plan_check(&sc), 0);

  /* no SP, no recompute: Korthikanti sbh(10 + 24/t + 5as/(ht)) */
  sc.plan.sp = false; sc.plan.recompute = PF_RECOMPUTE_NONE;
  double sbh = 2048.0 * 12288;
  CHECK_NEAR(pf_memory_act_per_layer(&sc), sbh * (10 + 24.0 / 4 + 5.0 * 96 * 2048 / (12288 * 4)), 1e-12);
  /* full recomputation keeps 2 sbh per layer */
  sc.plan.recompute = PF_RECOMPUTE_FULL;
  CHECK_NEAR(pf_memory_act_per_layer(&sc), 2 * sbh, 1e-12);

  /* the distributed optimizer divides the optimizer state by DP */
  setup(&sc, "mn5-acc", "gpt3-175b");
  sc.nodes = 128; sc.plan.tp = 4; sc.plan.pp = 32; sc.plan.gbs = 1536; sc.plan.dist_opt = true;
  CHECK_INT(pf_plan_check(&sc), 0);
  pf_memory_estimate(&sc, &m);
  CHECK_NEAR(m.optimizer_B, 12 * P0 / 4, 1e-9);

  /* one GPU cannot hold 175B: about 18 bytes per parameter */
  setup(&sc, "mn5-acc", "gpt3-175b");
  sc.gpus = 1; sc.plan.gbs = 8;
  CHECK_INT(pf_plan_check(&sc), 0);
  pf_memory_estimate(&sc, &m);
  CHECK(m.total_B > 18 * 174e9);
  CHECK_INT(pf_memory_check(&sc, &m), PF_ENOFIT);
  CHECK(strstr(pf_error_detail(), "GiB") != NULL);
  return pf_check_done();
}
