/* scenario_opts.c - from option pairs to typed values (see options.h): numbers
 * read strictly and checked against their range, quantities with units, and
 * the scenario (machine, model or custom shape, plan, engine, energy) built
 * from them.  Each message names the option, or the scenario file and line
 * it came from.  (The option tables, parsing, scenario files, --help and the
 * command-line prologue: options.c.)
 */
#include "options.h"

#include "comm/comm.h"
#include "core/core.h"
#include "compute/compute.h"
#include "machine/machine.h"
#include "power/power.h"
#include "study/study.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static int bad_value(const pf_optvals *v, const char *name, const char *what) {
  const char *src = pf_opts_source(v, name);
  if (strcmp(src, "command line") == 0)
    return pf_error_set(PF_EINVAL, "--%s \"%s\": %s", name, pf_opts_get(v, name), what);
  return pf_error_set(PF_EPARSE, "%s: %s \"%s\": %s", src, name, pf_opts_get(v, name), what);
}

int pf_opts_int(const pf_optvals *v, const char *name, int *out) {
  const char *s = pf_opts_get(v, name);
  if (!s) return 0;
  char *end;
  errno = 0;
  long x = strtol(s, &end, 10);
  if (strchr(s, ','))
    return bad_value(v, name, "is a list (a sweep axis); this command takes one value (lists are for `preflight sweep`)");
  if (end == s || *end != '\0') return bad_value(v, name, "expected an integer");
  if (errno || x < INT_MIN || x > INT_MAX) return bad_value(v, name, "out of range for an integer");
  *out = (int)x;
  return 1;
}

int pf_opts_double(const pf_optvals *v, const char *name, double *out) {
  const char *s = pf_opts_get(v, name);
  if (!s) return 0;
  char *end;
  errno = 0;
  double x = strtod(s, &end);
  if (strchr(s, ','))
    return bad_value(v, name, "is a list (a sweep axis); this command takes one value (lists are for `preflight sweep`)");
  if (end == s || *end != '\0') return bad_value(v, name, "expected a number");
  if (!isfinite(x) || errno == ERANGE) return bad_value(v, name, "expected a finite number");
  *out = x;
  return 1;
}

int pf_opts_int_range(const pf_optvals *v, const char *name, int lo, int hi, int *out) {
  int x, rc = pf_opts_int(v, name, &x);
  if (rc <= 0) return rc;
  if (x < lo || x > hi) {
    char why[96];
    if (hi == INT_MAX) snprintf(why, sizeof why, "must be at least %d", lo);
    else snprintf(why, sizeof why, "must be between %d and %d", lo, hi);
    return bad_value(v, name, why);
  }
  *out = x;
  return 1;
}

int pf_opts_num_range(const pf_optvals *v, const char *name, double lo, bool lo_open, double hi, double *out) {
  double x;
  int rc = pf_opts_double(v, name, &x);
  if (rc <= 0) return rc;
  if (lo_open ? !(x > lo) : !(x >= lo)) {
    char why[96];
    snprintf(why, sizeof why, "must be %s %g", lo_open ? "greater than" : "at least", lo);
    return bad_value(v, name, why);
  }
  if (x > hi) {
    char why[96];
    snprintf(why, sizeof why, "must be at most %g", hi);
    return bad_value(v, name, why);
  }
  *out = x;
  return 1;
}

/* A quantity with its unit ("2 GB/s", "3 ms"), positive and at most hi in SI units; 0 when absent. */
static int qty_opt(const pf_optvals *v, const char *name, pf_unit_kind kind, double hi, double *out) {
  const char *s = pf_opts_get(v, name);
  if (!s) return 0;
  double x;
  if (pf_units_parse(s, kind, &x) < 0) {
    char why[256];
    snprintf(why, sizeof why, "%s", pf_error_detail());
    return bad_value(v, name, why);
  }
  if (!(x > 0) || x > hi) {
    char why[96];
    snprintf(why, sizeof why, "must be positive and at most %g (SI units)", hi);
    return bad_value(v, name, why);
  }
  *out = x;
  return 1;
}

static int flag(const pf_optvals *v, const char *name) { return pf_opts_get(v, name) != NULL; }

/* Upper limits of user-given sizes: a thousand times the largest models and
 * runs published (GPT-4 class ~1.8e12 parameters, ~1e26 FLOPs of training). */
#define PF_MAX_PARAMS 1e15
#define PF_MAX_FLOPS 1e21
#define PF_MAX_BYTES 1e15

int pf_opts_scenario(const pf_optvals *v, pf_scenario *sc) {
  pf_scenario_init(sc);
  int rc;
  const char *mach = pf_opts_get(v, "machine");
  if (!mach) return pf_error_set(PF_EINVAL, "--machine is required (see `preflight machines`)");
  if ((rc = pf_machine_load(mach, &sc->machine)) < 0 || (rc = pf_power_check(&sc->machine.dev)) < 0) return rc;

  pf_workload *w = &sc->workload;
  const char *model = pf_opts_get(v, "model");
  /* with --model, --layers/--hidden/--heads change the model's shape */
  bool custom_t = !model && (flag(v, "layers") || flag(v, "hidden") || flag(v, "heads"));
  bool custom_g = flag(v, "params") || flag(v, "flops-per-sample");
  if ((model != NULL) + custom_t + custom_g > 1)
    return pf_error_set(PF_EINVAL, "give one of --model, a custom transformer (--layers/--hidden/--heads), or "
                        "--params with --flops-per-sample");
  if (model) {
    if ((rc = pf_workload_get(model, w)) < 0) return rc;
  } else if (custom_t) {
    memset(w, 0, sizeof *w);
    snprintf(w->id, sizeof w->id, "custom-transformer");
    snprintf(w->name, sizeof w->name, "custom transformer");
    w->kind = PF_WL_TRANSFORMER;
    w->swiglu = flag(v, "swiglu");
    w->learned_pos = !w->swiglu;
    w->tied_embeddings = !w->swiglu;
    w->source = "command line";
    if (!flag(v, "layers") || !flag(v, "hidden") || !flag(v, "heads") || !flag(v, "seq") || !flag(v, "vocab"))
      return pf_error_set(PF_EINVAL, "a custom transformer needs --layers, --hidden, --heads, --seq and --vocab");
  } else if (custom_g) {
    memset(w, 0, sizeof *w);
    snprintf(w->id, sizeof w->id, "custom");
    snprintf(w->name, sizeof w->name, "custom model");
    w->kind = PF_WL_GENERIC;
    w->source = "command line";
    if ((rc = pf_opts_num_range(v, "params", 0, true, PF_MAX_PARAMS, &w->params)) < 0) return rc;
    if ((rc = pf_opts_num_range(v, "flops-per-sample", 0, true, PF_MAX_FLOPS, &w->flops_per_sample)) < 0) return rc;
    if ((rc = pf_opts_num_range(v, "act-bytes-per-sample", 0, false, PF_MAX_BYTES, &w->act_bytes_per_sample)) < 0)
      return rc;
    if (!(w->params > 0) || !(w->flops_per_sample > 0))
      return pf_error_set(PF_EINVAL, "a custom model needs --params and --flops-per-sample, both positive");
  } else {
    return pf_error_set(PF_EINVAL, "--model is required (see `preflight models`), or a custom shape");
  }
  /* ranges: far beyond any model trained so far, and small enough that their
   * products stay exact (plan.c and workload.c check the products) */
  if ((rc = pf_opts_int_range(v, "layers", 1, 100000, &w->layers)) < 0 ||
      (rc = pf_opts_int_range(v, "hidden", 1, 1 << 20, &w->hidden)) < 0 ||
      (rc = pf_opts_int_range(v, "heads", 1, 1 << 16, &w->heads)) < 0 ||
      (rc = pf_opts_int_range(v, "ffn-hidden", 1, 1 << 22, &w->ffn_hidden)) < 0 ||
      (rc = pf_opts_int_range(v, "kv-heads", 1, 1 << 16, &w->kv_heads)) < 0 ||
      (rc = pf_opts_int_range(v, "seq", 1, 1 << 24, &w->seq)) < 0 ||
      (rc = pf_opts_int_range(v, "vocab", 1, 1 << 24, &w->vocab)) < 0)
    return rc;
  if ((rc = pf_workload_check(w)) < 0) return rc;

  pf_plan *p = &sc->plan;
  if ((rc = pf_opts_int_range(v, "nodes", 1, 1 << 20, &sc->nodes)) < 0 ||
      (rc = pf_opts_int_range(v, "gpus", 1, 1 << 26, &sc->gpus)) < 0 ||
      (rc = pf_opts_int_range(v, "tp", 1, 1 << 16, &p->tp)) < 0 ||
      (rc = pf_opts_int_range(v, "pp", 1, 1 << 16, &p->pp)) < 0 ||
      (rc = pf_opts_int_range(v, "dp", 1, 1 << 26, &p->dp)) < 0 ||
      (rc = pf_opts_int_range(v, "cp", 1, 1 << 16, &p->cp)) < 0 ||
      (rc = pf_opts_int_range(v, "mbs", 1, 1 << 20, &p->mbs)) < 0 ||
      (rc = pf_opts_int_range(v, "gbs", 1, INT_MAX, &p->gbs)) < 0 ||
      (rc = pf_opts_int_range(v, "grad-accum", 1, INT_MAX, &p->grad_accum)) < 0)
    return rc;
  const char *s;
  if ((s = pf_opts_get(v, "precision")) && (rc = pf_precision_parse(s, &sc->precision)) < 0) return rc;
  if ((rc = pf_device_precision_check(&sc->machine.dev, sc->precision)) < 0) return rc;
  if ((s = pf_opts_get(v, "recompute")) && (rc = pf_recompute_parse(s, &p->recompute)) < 0) return rc;
  if ((s = pf_opts_get(v, "schedule")) && (rc = pf_schedule_parse(s, &p->schedule, &p->vstages)) < 0) return rc;
  if ((s = pf_opts_get(v, "collective")) && (rc = pf_coll_algo_parse(s, &sc->collective)) < 0) return rc;
  if ((s = pf_opts_get(v, "coll-algo")) && (rc = pf_coll_algo_parse(s, &sc->collective)) < 0) return rc;
  if ((s = pf_opts_get(v, "coll-proto")) && (rc = pf_coll_proto_parse(s, &sc->coll_proto)) < 0) return rc;
  if ((s = pf_opts_get(v, "placement")) && (rc = pf_placement_parse(s, &sc->placement)) < 0) return rc;
  if ((s = pf_opts_get(v, "rank-order")) && (rc = pf_rank_order_parse(s, &p->rank_order)) < 0) return rc;
  if ((s = pf_opts_get(v, "host-overhead")) && (rc = pf_host_mode_parse(s, &sc->host_mode)) < 0) return rc;
  if ((s = pf_opts_get(v, "framework")) && (rc = pf_framework_parse(s, &sc->framework)) < 0) return rc;
  if ((rc = qty_opt(v, "input-rate", PF_UNIT_BANDWIDTH, 1e16, &sc->input_rate_Bps)) < 0 ||
      (rc = qty_opt(v, "input-sample-time", PF_UNIT_TIME, 3600, &sc->input_sample_s)) < 0 ||
      (rc = qty_opt(v, "sample-bytes", PF_UNIT_BYTES, 1e15, &sc->sample_bytes)) < 0)
    return rc;
  if ((s = pf_opts_get(v, "engine"))) {
    if (strcmp(s, "simgrid") == 0 || strcmp(s, "des") == 0) sc->engine = PF_ENGINE_DES;
    else if (strcmp(s, "full") == 0) sc->engine = PF_ENGINE_FULL;
    else if (strcmp(s, "analytic") == 0) sc->engine = PF_ENGINE_ANALYTIC;
    else return bad_value(v, "engine", "valid: simgrid, full, analytic");
  }
  p->sp = flag(v, "sp");
  p->dist_opt = flag(v, "dist-opt");
  p->overlap_grad_reduce = flag(v, "overlap-grad-reduce");
  p->overlap_param_gather = flag(v, "overlap-param-gather");
  if ((rc = pf_opts_num_range(v, "ddp-bucket-size", 1, false, PF_MAX_PARAMS, &p->ddp_bucket_size)) < 0) return rc;
  p->flash_attn = flag(v, "flash-attn");
  p->tp_across_nodes = flag(v, "tp-across-nodes");
  p->tp_comm_overlap = flag(v, "tp-comm-overlap");
  int seed = 1;
  if ((rc = pf_opts_int_range(v, "seed", 0, INT_MAX, &seed)) < 0) return rc;
  sc->seed = (unsigned long)seed;
  if ((s = pf_opts_get(v, "calibration"))) snprintf(sc->calibration, sizeof sc->calibration, "%s", s);
  sc->calibration_force = flag(v, "force-calibration");
  if ((s = pf_opts_get(v, "power-cap"))) { /* "500 W", "0.5 kW" or a plain number of watts */
    char *end;
    double cap = strtod(s, &end);
    if ((end == s || *end) && pf_units_parse(s, PF_UNIT_POWER, &cap) < 0)
      return bad_value(v, "power-cap", "a power such as \"500 W\" or 500 (watts)");
    if (!(cap >= 1 && cap <= 5000)) return bad_value(v, "power-cap", "between 1 W and 5 kW per device");
    sc->power_cap_W = cap;
  }
  if ((rc = pf_opts_num_range(v, "train-iters", 0, true, 1e12, &sc->train_iters)) < 0) return rc;
  return pf_scenario_apply_calibration(sc); /* the overlay read once, where the scenario is built */
}
