/* test_fp8_kernels.c - FP8 as it runs (compute/fp8.c, issue 25 item 4):
 *  - attention, softmax, norm and optimizer kernels take the same time under
 *    fp8 and bf16 (only the linear layers' GEMMs run in FP8), the output
 *    layer too;
 *  - the linear GEMMs run faster, and the recipe's scaling kernels appear:
 *    cast/transpose (delayed), amax passes (current), block quantize (mxfp8, blockwise);
 *  - blockwise: the forward and data-gradient products at 3.62/3.84 of the per-tensor rate, the weight
 *    gradients at 0.78/1.27 (DeepSeek's training trace, compute/fp8.c), one backward entry each;
 *  - --fp8-attention runs the fused attention in FP8;
 *  - mxfp8 is refused on Hopper and chosen by auto on Blackwell (b200-180). */
#include "check.h"
#include "compute/compute.h"
#include "core/core.h"

#include <stdlib.h>
#include <string.h>

#define MAXK 4096
typedef struct seen {
  int n;
  pf_kernel k[MAXK];
} seen;

static void collect(void *ctx, const pf_kernel *k) {
  seen *s = ctx;
  if (s->n < MAXK) s->k[s->n++] = *k;
}

static int run(pf_scenario *sc, seen *s) {
  s->n = 0;
  pf_kernel_observe(collect, s);
  pf_stage_work w;
  int rc = pf_plan_check(sc);
  if (rc == 0) rc = pf_stage_work_compute(sc, sc->plan.pp - 1, &w);
  pf_kernel_observe(NULL, NULL);
  return rc;
}

/* the longest launch of a kernel named `name` (-1: none) */
static double t_max(const pf_scenario *sc, const seen *s, const char *name) {
  pf_kernel_env env = {.dev = &sc->machine.dev, .eff_scale = 1};
  double t = -1;
  for (int i = 0; i < s->n; i++)
    if (s->k[i].name && strcmp(s->k[i].name, name) == 0) {
      pf_kernel_cost c;
      if (pf_kernel_cost_eval(&env, &s->k[i], &c) == 0 && c.time_s > t) t = c.time_s;
    }
  return t;
}

/* time of one launch of the first kernel named `name` (-1: none) */
static double t_of(const pf_scenario *sc, const seen *s, const char *name, pf_precision *prec) {
  pf_kernel_env env = {.dev = &sc->machine.dev, .eff_scale = 1};
  for (int i = 0; i < s->n; i++)
    if (s->k[i].name && strcmp(s->k[i].name, name) == 0) {
      pf_kernel_cost c;
      pf_kernel k = s->k[i];
      if (prec) *prec = k.prec;
      return pf_kernel_cost_eval(&env, &k, &c) < 0 ? -1 : c.time_s;
    }
  return -1;
}

static void setup(pf_scenario *sc, const char *machine) {
  pf_scenario_init(sc);
  CHECK_INT(pf_machine_load(machine, &sc->machine), 0);
  CHECK_INT(pf_workload_builtin("gpt3-175b", &sc->workload), 0);
  sc->gpus = 128;
  sc->plan.tp = 4;
  sc->plan.pp = 8;
  sc->plan.mbs = 1;
  sc->plan.gbs = 256;
  sc->plan.sp = true;
  sc->plan.dist_opt = true;
  sc->plan.flash_attn = true;
}

int main(void) {
  static pf_scenario sc;
  static seen bf, f8, cur, fa;
  setup(&sc, "dgx-h100-superpod");
  sc.precision = PF_BF16;
  CHECK_INT(run(&sc, &bf), 0);
  sc.precision = PF_FP8;
  CHECK_INT(run(&sc, &f8), 0);

  static const char *same[] = {"flash-attention", "norm1", "norm2", "final-norm", "loss-softmax", "loss-nll",
                               "activation", "bias-dropout-add1", "adam (fused)", "logits"};
  for (size_t i = 0; i < sizeof same / sizeof same[0]; i++) {
    pf_precision p8 = PF_FP8;
    double a = t_of(&sc, &bf, same[i], NULL), b = t_of(&sc, &f8, same[i], &p8);
    printf("%-18s bf16 %8.2f us  fp8 %8.2f us\n", same[i], 1e6 * a, 1e6 * b);
    CHECK(a > 0);
    CHECK_NEAR(b, a, 1e-12);
    CHECK(p8 != PF_FP8);
  }
  static const char *lin[] = {"qkv", "proj", "fc1", "fc2"};
  for (size_t i = 0; i < 4; i++) {
    pf_precision p8 = PF_BF16;
    double a = t_of(&sc, &bf, lin[i], NULL), b = t_of(&sc, &f8, lin[i], &p8);
    CHECK(p8 == PF_FP8);
    CHECK(b < a && b > a / 2.0); /* at most the 2x of the dense peaks */
  }
  /* delayed (auto on Hopper): cast/transpose, transposes and the amax/scale update; no amax pass */
  CHECK(t_of(&sc, &f8, "fp8-cast-transpose", NULL) > 0);
  CHECK(t_of(&sc, &f8, "fp8-transpose", NULL) > 0);
  CHECK(t_of(&sc, &f8, "fp8-weight-cast-transpose", NULL) > 0);
  CHECK(t_of(&sc, &f8, "fp8-amax-scale-update", NULL) > 0);
  CHECK(t_of(&sc, &f8, "fp8-amax", NULL) < 0);
  CHECK(t_of(&sc, &bf, "fp8-cast-transpose", NULL) < 0);
  /* current scaling: an amax pass before every cast, nothing fused into the producers */
  sc.plan.fp8_recipe = PF_FP8_CURRENT;
  CHECK_INT(run(&sc, &cur), 0);
  CHECK(t_of(&sc, &cur, "fp8-amax", NULL) > 0);
  CHECK(t_of(&sc, &cur, "fp8-transpose", NULL) < 0);
  CHECK(t_of(&sc, &cur, "fp8-amax-scale-update", NULL) < 0);
  /* blockwise: 1 x 128 and 128 x 128 scales computed in the cast (no amax pass, no history), the products at
   * their measured rates: the forward and data gradient 3.62/3.84 of the table's, the weight gradient 0.78/1.27 */
  static seen blk;
  sc.plan.fp8_recipe = PF_FP8_BLOCKWISE;
  CHECK_INT(run(&sc, &blk), 0);
  CHECK(t_of(&sc, &blk, "fp8-blockwise-quantize", NULL) > 0);
  CHECK(t_of(&sc, &blk, "fp8-blockwise-weight-quantize", NULL) > 0);
  CHECK(t_of(&sc, &blk, "fp8-amax", NULL) < 0 && t_of(&sc, &blk, "fp8-cast-transpose", NULL) < 0);
  CHECK(t_of(&sc, &blk, "fp8-amax-scale-update", NULL) < 0);
  for (size_t i = 0; i < 4; i++) {
    double d = t_of(&sc, &f8, lin[i], NULL), f = t_of(&sc, &blk, lin[i], NULL), w = t_max(&sc, &blk, lin[i]);
    printf("%-4s delayed %8.2f us  blockwise forward %8.2f us  weight gradient %8.2f us\n", lin[i], 1e6 * d,
           1e6 * f, 1e6 * w);
    CHECK_NEAR(f / d, 3.84 / 3.62, 0.02); /* compute-bound: the rate's ratio, less the launch floor */
    CHECK_NEAR(w / d, 1.27 / 0.78, 0.04);
  }
  /* mxfp8 needs Blackwell */
  sc.plan.fp8_recipe = PF_FP8_MXFP8;
  CHECK_INT(run(&sc, &cur), PF_EINVAL);
  CHECK(strstr(pf_error_detail(), "Blackwell") != NULL);
  /* FP8 attention asked: the fused attention runs faster */
  sc.plan.fp8_recipe = PF_FP8_AUTO;
  sc.plan.fp8_attention = true;
  CHECK_INT(run(&sc, &fa), 0);
  pf_precision pa = PF_BF16;
  CHECK(t_of(&sc, &fa, "flash-attention", &pa) < t_of(&sc, &bf, "flash-attention", NULL));
  CHECK(pa == PF_FP8);

  /* Blackwell: auto is MXFP8 (block quantize, no amax, no transposes) */
  static pf_scenario b2;
  const char *src = getenv("PF_SRC");
  char mach[1024];
  snprintf(mach, sizeof mach, "%s/tests/fixtures/machines/hgx-b200.cfg", src ? src : ".");
  setup(&b2, mach);
  b2.precision = PF_FP8;
  CHECK_INT(run(&b2, &cur), 0);
  CHECK(t_of(&b2, &cur, "mxfp8-quantize", NULL) > 0);
  CHECK(t_of(&b2, &cur, "mxfp8-weight-quantize", NULL) > 0);
  CHECK(t_of(&b2, &cur, "fp8-cast-transpose", NULL) < 0);
  CHECK(t_of(&b2, &cur, "fp8-amax-scale-update", NULL) < 0);
  return pf_check_done();
}
