/* test_fp8.c - FP8 done right (issue 10 item 6):
 *  - activation bytes as Transformer Engine keeps them: the inputs of the QKV,
 *    proj, fc1 and fc2 GEMMs at 1 byte (memory.c), the rest at 2 bytes;
 *    weights stay bf16 with an FP8 copy and transpose cached per step;
 *    checked term by term against Korthikanti et al.;
 *  - fp8 on a part without fp8 tensor cores is an error naming the device;
 *  - on H100 a large GEMM-bound layer (GPT-3 175B, TP 8) runs 1.3-1.9x faster
 *    than in bf16, the range FP8 training reports on Hopper (Peng et al. 2023,
 *    FP8-LM: Transformer Engine ~1.28x, their framework 1.75x over bf16 for
 *    GPT-175B on H100), from fp8's own GEMM efficiency (MAMF 70.9 % of the
 *    1979 TFLOPS dense peak against 80.3 % of 989 for bf16). */
#include "check.h"
#include "core/core.h"
#include "compute/compute.h"
#include "job/job.h"

#include <stdlib.h>

int main(void) {
  static pf_scenario sc;
  pf_scenario_init(&sc);
  CHECK_INT(pf_machine_load("jureca-dc-h100", &sc.machine), 0);
  CHECK_INT(pf_workload_builtin("gpt3-1.3b", &sc.workload), 0);
  const pf_workload *w = &sc.workload;
  double s = w->seq, b = 2, h = w->hidden, a = w->heads, f = w->ffn_hidden;
  sc.plan.mbs = (int)b;
  sc.plan.cp = 1;
  sc.plan.recompute = PF_RECOMPUTE_NONE;
  for (int tp = 1; tp <= 4; tp *= 2)
    for (int sp = 0; sp <= (tp > 1); sp++) {
      sc.plan.tp = tp;
      sc.plan.sp = sp;
      sc.precision = PF_BF16;
      double bf = pf_memory_act_per_layer(&sc);
      sc.precision = PF_FP8;
      double f8 = pf_memory_act_per_layer(&sc);
      /* Korthikanti: sbh (34 + 5as/h) bytes for 2-byte activations (GPT: kv = h, f = 4h), TP split as in memory.c */
      double sbh = s * b * h, t = tp;
      double full = sbh * (34 + 5 * a * s / h);
      double repl = sp ? 0 : 10 * sbh;
      CHECK_NEAR(bf, repl + (full - repl) / t, 1e-12);
      /* FP8 keeps QKV and fc1 inputs (2 sbh; replicated without SP) and proj, fc2 inputs (sbh + sbf, split) at 1 byte */
      double saved = sp ? (2 * sbh + sbh + s * b * f) / t : 2 * sbh + (sbh + s * b * f) / t;
      CHECK_NEAR(bf - f8, saved, 1e-12);
    }
  /* weights stay bf16 (2 B) plus the cached FP8 copy and its transpose of every layer weight (2 B;
   * compute/fp8.c, job/memory.c), gradients fp32 */
  sc.plan.tp = 1;
  sc.plan.sp = 0;
  sc.plan.pp = 1;
  sc.plan.dp = 1;
  sc.plan.grad_accum = 1;
  sc.plan.gbs = 2;
  pf_memory mb, m8;
  sc.precision = PF_BF16;
  pf_memory_estimate(&sc, &mb);
  sc.precision = PF_FP8;
  pf_memory_estimate(&sc, &m8);
  CHECK_NEAR(m8.weights_B, mb.weights_B + 2.0 * sc.workload.layers * pf_workload_layer_params(&sc.workload), 1e-12);
  CHECK_NEAR(m8.gradients_B, mb.gradients_B, 1e-12);
  CHECK(m8.activations_B < mb.activations_B);
  /* and fp8 exists on this H100 but not on an A100 */
  CHECK_INT(pf_device_precision_check(&sc.machine.dev, PF_FP8), 0);
  pf_machine a100;
  CHECK_INT(pf_machine_load("leonardo-booster", &a100), 0);
  CHECK_INT(pf_device_precision_check(&a100.dev, PF_FP8), PF_EINVAL);
  CHECK_INT(pf_device_precision_check(&a100.dev, PF_BF16), 0);

  /* a large GEMM-bound layer on an H100 SXM node: fp8 1.3-1.9x faster than bf16 */
  static pf_scenario big;
  pf_scenario_init(&big);
  const char *src = getenv("PF_SRC");
  char mach[1024];
  snprintf(mach, sizeof mach, "%s/tests/fixtures/machines/hgx-h100.cfg", src ? src : ".");
  CHECK_INT(pf_machine_load(mach, &big.machine), 0);
  CHECK_INT(pf_workload_builtin("gpt3-175b", &big.workload), 0);
  big.plan.tp = 8;
  big.plan.pp = 1;
  big.plan.cp = 1;
  big.plan.dp = 1;
  big.plan.mbs = 1;
  big.plan.sp = true;
  big.plan.flash_attn = true;
  big.host_mode = PF_HOST_GRAPHS; /* the kernels' speed-up: at micro-batch 1 the eager host (Megatron's Python per
                                     layer) takes a share of the fp8 step's gain */
  pf_stage_work wb, w8;
  big.precision = PF_BF16;
  CHECK_INT(pf_stage_work_compute(&big, 0, &wb), 0);
  big.precision = PF_FP8;
  CHECK_INT(pf_stage_work_compute(&big, 0, &w8), 0);
  double speedup = (wb.fwd_s + wb.bwd_s) / (w8.fwd_s + w8.bwd_s);
  printf("GPT-3 175B layer stack, TP 8, H100 SXM: fp8 %.2fx faster than bf16\n", speedup);
  CHECK(speedup >= 1.3 && speedup <= 1.9);
  return pf_check_done();
}
