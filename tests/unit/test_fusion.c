/* test_fusion.c - torch.compile fuses element-wise kernels (compute/fusion.c): a run of memory-bound
 * kernels becomes one launch without its intermediates' round trips; products break a run; on a layer
 * list (ResNet-50, one H100) --host-overhead compiled lowers the memory-bound time and the launches and
 * leaves the products' time as it is. */
#include "check.h"
#include "compute/compute.h"
#include "compute/fusion.h"
#include "core/core.h"

static void predict(const char *mode, pf_stage_work *w) {
  static pf_scenario sc;
  pf_scenario_init(&sc);
  CHECK_INT(pf_machine_load("dgx-h100-superpod", &sc.machine), 0);
  CHECK_INT(pf_workload_builtin("resnet50", &sc.workload), 0);
  sc.gpus = 1;
  sc.plan.mbs = 64;
  sc.plan.gbs = 64;
  CHECK_INT(pf_host_mode_parse(mode, &sc.host_mode), 0);
  CHECK_INT(pf_plan_check(&sc), 0);
  CHECK_INT(pf_stage_work_compute(&sc, 0, w), 0);
}

int main(void) {
  double T = 1e6;
  pf_kernel_list l = {0};
  pf_kernel g = {.kind = PF_KERNEL_GEMM, .name = "gemm", .prec = PF_BF16, .m = 1024, .n = 1024, .k = 1024, .host_ops = 1};
  pf_kernel norm = {.kind = PF_KERNEL_MEMORY, .name = "norm", .bytes = 3 * T, .host_ops = 1};
  pf_kernel act = {.kind = PF_KERNEL_MEMORY, .name = "act", .bytes = 2 * T, .host_ops = 1};
  pf_kernel add = {.kind = PF_KERNEL_MEMORY, .name = "add", .bytes = 3 * T, .host_ops = 1, .count = 2};
  CHECK_INT(pf_kernel_list_add(&l, &g), 0);
  CHECK_INT(pf_kernel_list_add(&l, &norm), 0);
  CHECK_INT(pf_kernel_list_add(&l, &act), 0);
  CHECK_INT(pf_kernel_list_add(&l, &g), 0);
  CHECK_INT(pf_kernel_list_add(&l, &act), 0);
  CHECK_INT(pf_kernel_list_add(&l, &add), 0); /* another launch count: not fused */
  CHECK_INT(pf_fuse_elementwise(&l), 0);
  CHECK_INT(l.n, 5);
  CHECK(l.k[1].kind == PF_KERNEL_MEMORY);
  CHECK_NEAR(l.k[1].bytes, 3 * T, 1e-12); /* 3T + 2T less the intermediate's write and read (2T) */
  CHECK_NEAR(l.k[1].host_ops, 1, 0);
  CHECK(l.k[2].kind == PF_KERNEL_GEMM);
  CHECK_NEAR(l.k[3].bytes, 2 * T, 0);
  CHECK_NEAR(l.k[4].bytes, 3 * T, 0);
  pf_kernel_list_free(&l);

  pf_stage_work e, c;
  predict("eager", &e);
  predict("compiled", &c);
  printf("resnet50 mbs 64, one H100: memory-bound eager %.2f ms, compiled %.2f ms; kernels %.0f -> %.0f\n",
         1e3 * e.mem_s, 1e3 * c.mem_s, e.work.kernels, c.work.kernels);
  CHECK_NEAR(c.gemm_s, e.gemm_s, 1e-12);
  CHECK(c.mem_s < 0.8 * e.mem_s && c.mem_s > 0.3 * e.mem_s);
  CHECK(c.work.kernels < e.work.kernels);
  return pf_check_done();
}
