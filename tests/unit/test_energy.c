/* test_energy.c - the energy model's invariants (docs/energy.md) on real
 * machines and workloads: a launch-bound small model draws less than a
 * GEMM-bound large one on the same GPU; more utilisation never draws less;
 * the idle devices of a used node are charged at idle_W; mean GPU power stays
 * within the cap; a cap at 60 % of the device's makes a compute-bound
 * iteration longer and its GPU power and GPU energy lower; the GH200 module's
 * package share is never "GPU"; an MI250X package holds two GCDs.  The first
 * four are checked on every machine of the catalogue too, whose devices all
 * use the utilisation power model (pm_util.c; test_power_model.c registers
 * another). */
#include "check.h"
#include "power/power.h"
#include "core/core.h"
#include "study/study.h"

static int setup(pf_scenario *sc, const char *machine, const char *model, int nodes, int gpus, int tp, int gbs) {
  pf_scenario_init(sc);
  if (pf_machine_load(machine, &sc->machine) < 0 || pf_workload_builtin(model, &sc->workload) < 0) {
    fprintf(stderr, "%s\n", pf_error_detail());
    return -1;
  }
  sc->nodes = nodes;
  sc->gpus = gpus;
  sc->plan.tp = tp;
  sc->plan.mbs = 1;
  sc->plan.gbs = gbs;
  sc->plan.flash_attn = true;
  sc->plan.dist_opt = true;
  sc->plan.sp = tp > 1;
  sc->plan.recompute = PF_RECOMPUTE_SELECTIVE;
  return 0;
}

/* a small, launch-bound transformer: 2 layers of hidden 256 over 128 tokens */
static int tiny(pf_scenario *sc, const char *machine, int gpus) {
  if (setup(sc, machine, "gpt3-1.3b", 1, gpus, 1, 4 * gpus) < 0) return -1;
  sc->workload.layers = 2;
  sc->workload.hidden = 256;
  sc->workload.heads = 4;
  sc->workload.kv_heads = 4;
  sc->workload.ffn_hidden = 1024;
  sc->workload.seq = 128;
  return 0;
}

/* more utilisation never draws less: each resource's sum of u's window raised in turn */
static void check_more_util(const pf_scenario *sc, const pf_energy_use *u) {
  pf_energy e0, e1;
  pf_energy_window(sc, u, &e0);
  for (int k = 0; k < 4; k++) {
    pf_energy_use v = *u;
    double *t = k == 0 ? &v.tensor_util_s : k == 1 ? &v.vector_util_s : k == 2 ? &v.hbm_util_s : &v.comm_s;
    *t = *t * 1.2 + 1e-3;
    pf_energy_window(sc, &v, &e1);
    CHECK(e1.gpu_J >= e0.gpu_J);
    CHECK(e1.node_J >= e0.node_J);
  }
}

static int predict(pf_scenario *sc, pf_prediction *p) {
  int rc = pf_resolve_predict(sc, p);
  if (rc < 0) fprintf(stderr, "predict: %s\n", pf_error_detail());
  return rc;
}

int main(void) {
  static pf_scenario sc, big_sc;
  static pf_prediction small, big, capped;

  /* launch-bound small model vs GEMM-bound large model, one H100 node each */
  if (tiny(&sc, "westai-h100", 4) < 0 || predict(&sc, &small) < 0) return 1;
  /* CUDA graphs: the GPU's own power, with no host-bound gaps (at micro-batch 1 Megatron-Core's Python per layer,
   * hostqueue.c, would leave this TP 4 job waiting on its host, under the cap checked below) */
  if (setup(&big_sc, "westai-h100", "gpt3-13b", 1, 4, 4, 64) < 0) return 1;
  big_sc.host_mode = PF_HOST_GRAPHS;
  if (predict(&big_sc, &big) < 0) return 1;
  CHECK(small.energy.avg_power_per_gpu_W < big.energy.avg_power_per_gpu_W);
  CHECK(small.energy.gpu_busy_W < big.energy.gpu_busy_W);
  const pf_device *d = &big_sc.machine.dev;
  /* every scope at least its part; the mean within the cap and above idle */
  for (const pf_prediction *p = &small; p; p = p == &small ? &big : NULL) {
    CHECK(p->energy.avg_power_per_gpu_W <= d->cap_W + 1e-9);
    CHECK(p->energy.avg_power_per_gpu_W >= d->idle_W);
    CHECK(p->energy.package_J >= p->energy.gpu_J);
    CHECK(p->energy.node_J >= p->energy.node_gpus_J);
    CHECK(p->energy.facility_J >= p->energy.node_J);
    CHECK_NEAR(p->energy.action_Js, p->energy.facility_J * p->iteration_time_s, 1e-12);
  }

  pf_energy_use u = big.energy.use;
  check_more_util(&big_sc, &u);

  /* between kernels: a window with no kernel draws wait_W inside the step loop, context_W outside it (start-up,
   * data loading); wait is at least context (an H200 waiting on the host drew its context power, docs/energy.md
   * "Operating points") and the active floor above it */
  {
    pf_energy_use w = {.window_s = 10.0, .clock_ratio = 1.0, .loop_s = 4.0};
    pf_energy ew;
    pf_energy_window(&big_sc, &w, &ew);
    CHECK(d->wait_W >= d->context_W && d->active_W > d->context_W);
    CHECK_NEAR(ew.avg_power_per_gpu_W, (4.0 * d->wait_W + 6.0 * d->context_W) / 10.0, 1e-9);
    w.loop_s = 0;
    pf_energy_window(&big_sc, &w, &ew);
    CHECK_NEAR(ew.avg_power_per_gpu_W, d->context_W, 1e-9);
    /* kernels of no load at all draw the active floor */
    pf_energy_use a = {.window_s = 1.0, .clock_ratio = 1.0, .loop_s = 1.0, .busy_s = 1.0};
    pf_energy_window(&big_sc, &a, &ew);
    CHECK_NEAR(ew.avg_power_per_gpu_W, d->active_W, 1e-9);
  }

  /* a window shorter than the predicted kernels (a job measured faster than predicted) still pays the whole
   * work's dynamic energy, bounded by the cap on average: ctx T + work, not ctx T + work x T / busy */
  {
    pf_energy_use f = u, h = u;
    f.comm_s = h.comm_s = 0;
    h.window_s = 0.25 * u.busy_s;
    pf_energy ef, eh;
    pf_energy_window(&big_sc, &f, &ef);
    pf_energy_window(&big_sc, &h, &eh);
    double work = ef.gpu_J / big_sc.gpus - d->context_W * f.window_s; /* per GPU, full window (under the cap) */
    double want = fmin(d->context_W * h.window_s + work, (pf_energy_cap_W(&big_sc) - d->package_W) * h.window_s);
    CHECK(work > 0);
    CHECK_NEAR(eh.gpu_J / big_sc.gpus, want, 1e-9 * want);
    CHECK(eh.avg_power_per_gpu_W <= d->cap_W + 1e-9);
  }

  /* evaluation: the forward kernels alone, at their own utilisation; the backward does about twice the
   * forward's GEMM work, so a forward-only pass is about a third of a step's busy time */
  {
    const pf_energy *ev = &big.eval_energy;
    double share = ev->use.busy_s / big.energy.use.busy_s;
    CHECK(share > 0.2 && share < 0.5);
    CHECK_NEAR(ev->use.window_s, big.eval_iteration_s, 0);
    CHECK(ev->avg_power_per_gpu_W > d->context_W && ev->avg_power_per_gpu_W <= d->cap_W + 1e-9);
    CHECK(ev->gpu_J > 0 && ev->node_J > ev->gpu_J);
    /* a GAN evaluates each network once; its training step runs the generator forward six times (AP5) */
    static pf_scenario gan;
    static pf_prediction gp;
    if (setup(&gan, "jureca-dc-a100", "maelstrom-ap5-wgan", 1, 1, 1, 32) < 0) return 1;
    gan.plan.mbs = 32;
    gan.precision = PF_FP32;
    if (predict(&gan, &gp) < 0) return 1;
    CHECK(gp.eval_energy.use.busy_s > 0 && gp.eval_energy.use.busy_s < 0.2 * gp.energy.use.busy_s);
  }

  /* idle devices of a used node at idle_W: 1 GPU of a 4-GPU node */
  static pf_scenario one_sc;
  static pf_prediction one;
  if (tiny(&one_sc, "westai-h100", 1) < 0 || predict(&one_sc, &one) < 0) return 1;
  double T = one.iteration_time_s;
  CHECK_NEAR(one.energy.node_gpus_J - one.energy.gpu_J, 3 * one_sc.machine.dev.idle_W * T, 1e-9);
  CHECK_NEAR(one.energy.node_J - one.energy.node_gpus_J, one_sc.machine.node_base_W * T, 1e-9);

  /* a cap at 60 % of the device's: a compute-bound job slows, its GPUs draw less power and less energy */
  big_sc.power_cap_W = 0.6 * d->cap_W;
  static pf_scenario before;
  CHECK_INT(pf_job_resolve(&big_sc), 0);
  before = big_sc;
  if (pf_predict(&big_sc, &capped) < 0) return 1; /* priced twice: at full clock, then at the cap's */
  CHECK(capped.energy.clock_ratio < 1.0);
  CHECK(capped.iteration_time_s > big.iteration_time_s);
  CHECK(capped.energy.avg_power_per_gpu_W < big.energy.avg_power_per_gpu_W);
  CHECK(capped.energy.avg_power_per_gpu_W <= 0.6 * d->cap_W + 1e-9);
  /* the cap holds the step loop's mean: the iteration's mean power sits at the cap, the kernels' above it by
   * what the gaps between them leave (docs/energy.md "Power cap and DVFS") */
  CHECK_NEAR(capped.energy.avg_power_per_gpu_W, 0.6 * d->cap_W, 0.01);
  CHECK(capped.energy.gpu_busy_W >= capped.energy.avg_power_per_gpu_W - 1e-6);
  CHECK(capped.energy.gpu_busy_W * capped.energy.use.busy_s <= 0.6 * d->cap_W * capped.iteration_time_s + 1e-6);
  CHECK(capped.energy.gpu_J < big.energy.gpu_J);
  CHECK(memcmp(&before, &big_sc, sizeof before) == 0); /* the model reads the job, never writes it */
  /* the curve: voltage at the floor below half clock, 1 at full clock, monotone */
  CHECK_NEAR(pf_energy_voltage(d, 1.0), 1.0, 1e-12);
  CHECK(pf_energy_voltage(d, 0.3) == pf_energy_voltage(d, 0.5));
  CHECK(pf_energy_voltage(d, 0.8) > pf_energy_voltage(d, 0.6));

  /* GH200: the module's Grace and LPDDR5X share is package and node energy, never GPU energy */
  static pf_scenario gh;
  static pf_prediction ghp;
  if (setup(&gh, "jedi", "gpt3-1.3b", 1, 4, 1, 16) < 0 || predict(&gh, &ghp) < 0) return 1;
  double Tg = ghp.iteration_time_s;
  CHECK(gh.machine.dev.package_W > 0);
  CHECK_NEAR(ghp.energy.package_J - ghp.energy.gpu_J, 4 * gh.machine.dev.package_W * Tg, 1e-9);
  CHECK(ghp.energy.avg_power_per_gpu_W + gh.machine.dev.package_W <= gh.machine.dev.cap_W + 1e-9);

  /* MI250X: one GCD used, the package (OAM) pays its idle sibling */
  static pf_scenario mi;
  static pf_prediction mip;
  if (tiny(&mi, "lumi-g", 1) < 0 || predict(&mi, &mip) < 0) return 1;
  CHECK_INT(mi.machine.dev.dies_per_package, 2);
  CHECK_NEAR(mip.energy.package_J - mip.energy.gpu_J, mi.machine.dev.idle_W * mip.iteration_time_s, 1e-9);

  /* every machine of the catalogue: a launch-bound small model draws less than a GEMM-bound one on the
   * same GPU (busy and mean), more utilisation never draws less, the node's other devices at idle, the
   * mean within the cap */
  char **ids = NULL;
  int nid = 0;
  CHECK(pf_machine_list(&ids, &nid) == 0 && nid > 0);
  for (int i = 0; i < nid; i++) {
    static pf_scenario ts, bs;
    static pf_prediction tp, bp;
    if (tiny(&ts, ids[i], 1) < 0 || predict(&ts, &tp) < 0) { CHECK(!"tiny model predicts"); continue; }
    if (setup(&bs, ids[i], "gpt3-1.3b", 1, 1, 1, 1) < 0) { CHECK(!"machine loads"); continue; }
    bs.workload.layers = 2; /* GEMMs of 2048 x 4096 x 4096 and up: compute-bound on every part */
    bs.workload.hidden = 4096;
    bs.workload.heads = bs.workload.kv_heads = 32;
    bs.workload.ffn_hidden = 16384;
    bs.workload.seq = 2048;
    if (predict(&bs, &bp) < 0) { CHECK(!"GEMM-bound model predicts"); continue; }
    const pf_device *dv = &ts.machine.dev;
    /* every device of the catalogue names no model: the utilisation model, the first built-in */
    CHECK_INT(pf_power_check(dv), 0);
    CHECK(pf_power_model_of(dv) == pf_power_model_find("utilisation") && pf_power_model_of(dv) == pf_power_model_at(0));
    if (!(tp.energy.avg_power_per_gpu_W < bp.energy.avg_power_per_gpu_W) || !(tp.energy.gpu_busy_W < bp.energy.gpu_busy_W))
      fprintf(stderr, "%s: launch-bound %.1f W (busy %.1f) vs GEMM-bound %.1f W (busy %.1f)\n", ids[i],
              tp.energy.avg_power_per_gpu_W, tp.energy.gpu_busy_W, bp.energy.avg_power_per_gpu_W, bp.energy.gpu_busy_W);
    CHECK(tp.energy.avg_power_per_gpu_W < bp.energy.avg_power_per_gpu_W);
    CHECK(tp.energy.gpu_busy_W < bp.energy.gpu_busy_W);
    CHECK_NEAR(tp.energy.node_gpus_J - tp.energy.gpu_J,
               (ts.machine.gpus_per_node - 1) * dv->idle_W * tp.iteration_time_s, 1e-9 * tp.energy.node_gpus_J);
    CHECK(tp.energy.avg_power_per_gpu_W <= dv->cap_W + 1e-9 && bp.energy.avg_power_per_gpu_W <= dv->cap_W + 1e-9);
    check_more_util(&bs, &bp.energy.use);
  }
  pf_strlist_free(ids, nid);

  printf("%d passed, %d failed\n", pf_check_pass, pf_check_fail);
  return pf_check_fail != 0;
}
