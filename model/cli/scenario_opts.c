/* scenario_opts.c - from option pairs to typed values (see options.h): each
 * value converted and range-checked as its table entry says (the option
 * engine, core/opts.c), quantities with units, and the scenario (machine,
 * model or custom shape, plan, engine, energy) built from them.  Each message
 * names the option, or the scenario file and line it came from.  (The shared
 * option tables: opt_tables.c; parsing, scenario files, --help and the
 * command-line prologue: options.c, which this file calls and which calls
 * nothing here.)
 */
#include "options.h"

#include "comm/comm.h"
#include "core/core.h"
#include "compute/compute.h"
#include "machine/machine.h"
#include "power/power.h"
#include "study/study.h"

#include <limits.h>
#include <math.h>
#include <string.h>

static int bad_value(const pf_optvals *v, const char *name, const char *what) {
  const char *src = pf_opts_source(v, name);
  if (strcmp(src, "command line") == 0)
    return pf_error_set(PF_EINVAL, "--%s \"%s\": %s", name, pf_opts_get(v, name), what);
  return pf_error_set(PF_EPARSE, "%s: %s \"%s\": %s", src, name, pf_opts_get(v, name), what);
}

/* The value of o (under its own name) converted and stored in base: 0 when
 * absent, 1 when read, or the error naming the option or file:line. */
static int read_value(const pf_optvals *v, const pf_opt *o, void *base) {
  const char *s = pf_opts_get(v, o->name);
  if (!s) return 0;
  bool number = o->type == PF_OPT_INT || o->type == PF_OPT_ULONG || o->type == PF_OPT_NUM;
  if (number && strchr(s, ','))
    return bad_value(v, o->name, "is a list (a sweep axis); this command takes one value (lists are for `preflight sweep`)");
  char why[256];
  int rc = pf_opt_store(o, s, base, why, sizeof why);
  if (rc < 0 && why[0]) return bad_value(v, o->name, why);
  if (rc < 0 && strcmp(pf_opts_source(v, o->name), "command line") != 0) {
    /* a parser's own message names the option as the command line spells it: say where the file gave it */
    char msg[512];
    snprintf(msg, sizeof msg, "%s", pf_error_detail());
    return pf_error_set(PF_EPARSE, "%s: %s: %s", pf_opts_source(v, o->name), o->name, msg);
  }
  if (rc < 0) return rc;
  return 1;
}

/* Where name was given last in v (scenario-file settings come before the command line's), -1 if not. */
static int last_given(const pf_optvals *v, const char *name) {
  for (int i = v->n - 1; i >= 0; i--)
    if (strcmp(v->name[i], name) == 0) return i;
  return -1;
}

/* A flag and its --no- form (PF_OPT_NEGATE) share a destination: the one given last wins. */
static bool overruled(const pf_optvals *v, const pf_opt *o) {
  if (o->type != PF_OPT_FLAG) return false;
  char partner[72];
  if (o->flags & PF_OPT_NEGATE) snprintf(partner, sizeof partner, "%s", o->name + 3);
  else snprintf(partner, sizeof partner, "no-%s", o->name);
  return last_given(v, partner) > last_given(v, o->name);
}

int pf_opts_fill(const pf_optvals *v, const pf_opt *table, int group, void *base) {
  for (int alias = 1; alias >= 0; alias--) /* aliases first: the entry's own name wins */
    for (const pf_opt *o = table; o->name; o++) {
      if (!o->at || (group && o->group != group) || !(o->flags & PF_OPT_ALIAS) != !alias) continue;
      if (overruled(v, o)) continue;
      int rc = read_value(v, o, base);
      if (rc < 0) return rc;
    }
  return 0;
}

/* One option read as a table entry made on the spot (its destination: out). */
static int read_one(const pf_optvals *v, const char *name, pf_opt_type type, double lo, double hi, unsigned flags,
                    void *out) {
  const pf_opt o = {name, "", "", .type = type, .at = 1, .lo = lo, .hi = hi, .flags = flags};
  return read_value(v, &o, out);
}

int pf_opts_int(const pf_optvals *v, const char *name, int *out) {
  return read_one(v, name, PF_OPT_INT, INT_MIN, INT_MAX, 0, out);
}

int pf_opts_double(const pf_optvals *v, const char *name, double *out) {
  return read_one(v, name, PF_OPT_NUM, -HUGE_VAL, HUGE_VAL, 0, out);
}

int pf_opts_int_range(const pf_optvals *v, const char *name, int lo, int hi, int *out) {
  return read_one(v, name, PF_OPT_INT, lo, hi, 0, out);
}

int pf_opts_num_range(const pf_optvals *v, const char *name, double lo, bool lo_open, double hi, double *out) {
  return read_one(v, name, PF_OPT_NUM, lo, hi, lo_open ? PF_OPT_LO_OPEN : 0, out);
}

static int flag(const pf_optvals *v, const char *name) { return pf_opts_get(v, name) != NULL; }

/* A custom transformer from --layers, --hidden, --heads, --seq and --vocab
 * (its shape is read with the built-in models' overrides). */
static int custom_transformer(const pf_optvals *v, pf_workload *w) {
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
  return 0;
}

/* A custom model from --params and --flops-per-sample (and --act-bytes-per-sample). */
static int custom_generic(const pf_optvals *v, pf_scenario *sc) {
  pf_workload *w = &sc->workload;
  memset(w, 0, sizeof *w);
  snprintf(w->id, sizeof w->id, "custom");
  snprintf(w->name, sizeof w->name, "custom model");
  w->kind = PF_WL_GENERIC;
  w->source = "command line";
  int rc = pf_opts_fill(v, pf_scenario_opts, PF_SCG_CUSTOM, sc);
  if (rc < 0) return rc;
  if (!(w->params > 0) || !(w->flops_per_sample > 0))
    return pf_error_set(PF_EINVAL, "a custom model needs --params and --flops-per-sample, both positive");
  return 0;
}

/* The workload: --model, a custom transformer or a custom model, then the
 * shape options (which change a built-in model's shape too), checked. */
static int scenario_workload(const pf_optvals *v, pf_scenario *sc) {
  pf_workload *w = &sc->workload;
  const char *model = pf_opts_get(v, "model");
  /* with --model, --layers/--hidden/--heads change the model's shape */
  bool custom_t = !model && (flag(v, "layers") || flag(v, "hidden") || flag(v, "heads"));
  bool custom_g = flag(v, "params") || flag(v, "flops-per-sample");
  int rc;
  if ((model != NULL) + custom_t + custom_g > 1)
    return pf_error_set(PF_EINVAL, "give one of --model, a custom transformer (--layers/--hidden/--heads), or "
                        "--params with --flops-per-sample");
  if (model) rc = pf_workload_get(model, w);
  else if (custom_t) rc = custom_transformer(v, w);
  else if (custom_g) rc = custom_generic(v, sc);
  else rc = pf_error_set(PF_EINVAL, "--model is required (see `preflight models`), or a custom shape");
  if (rc < 0 || (rc = pf_opts_fill(v, pf_scenario_opts, PF_SCG_SHAPE, sc)) < 0) return rc;
  return pf_workload_check(w);
}

int pf_opts_scenario(const pf_optvals *v, pf_scenario *sc) {
  pf_scenario_init(sc);
  int rc;
  const char *mach = pf_opts_get(v, "machine");
  if (!mach) return pf_error_set(PF_EINVAL, "--machine is required (see `preflight machines`)");
  if ((rc = pf_machine_load(mach, &sc->machine)) < 0 || (rc = pf_power_check(&sc->machine.dev)) < 0) return rc;
  if ((rc = scenario_workload(v, sc)) < 0) return rc;
  /* the plan and the precision, which the device must have */
  if ((rc = pf_opts_fill(v, pf_scenario_opts, PF_SCG_PLAN, sc)) < 0) return rc;
  if ((rc = pf_device_precision_check(&sc->machine.dev, sc->precision)) < 0) return rc;
  /* the rest: plan features, engine, collectives, input pipeline, energy, files */
  if ((rc = pf_opts_fill(v, pf_scenario_opts, PF_SCG_RUN, sc)) < 0) return rc;
  /* then what current practice turns on, for the settings not given either way (job/defaults.c) */
  pf_scenario_practice_defaults(sc, pf_opts_settings_given(v));
  return pf_scenario_apply_calibration(sc); /* the overlay read once, where the scenario is built */
}

unsigned pf_opts_settings_given(const pf_optvals *v) {
  unsigned given = 0;
  for (int i = 0; i < PF_SET_COUNT; i++) {
    unsigned bit = 1u << i;
    char no[72];
    snprintf(no, sizeof no, "no-%s", pf_setting_name(bit));
    if (pf_opts_get(v, pf_setting_name(bit)) || pf_opts_get(v, no)) given |= bit;
  }
  if (pf_opts_get(v, "zero")) given |= PF_SET_DIST_OPT; /* --zero N sets the distributed optimizer either way */
  return given;
}

unsigned pf_opts_tune_fixed(const pf_optvals *v) {
  static const struct { const char *opt; unsigned bit; } map[] = {
      {"tp", PF_FIX_TP}, {"pp", PF_FIX_PP}, {"cp", PF_FIX_CP}, {"mbs", PF_FIX_MBS}, {"recompute", PF_FIX_RECOMPUTE},
      {"schedule", PF_FIX_SCHEDULE}, {"zero", PF_FIX_ZERO}, {"fsdp-shard-group", PF_FIX_SHARD_GROUP},
      {"ep", PF_FIX_EP}, {"etp", PF_FIX_ETP}};
  static const struct { unsigned set, bit; } settings[] = {
      {PF_SET_SP, PF_FIX_SP}, {PF_SET_DIST_OPT, PF_FIX_DIST_OPT}, {PF_SET_OVERLAP_GRAD, PF_FIX_OVERLAP_GRAD},
      {PF_SET_OVERLAP_PARAM, PF_FIX_OVERLAP_PARAM}, {PF_SET_FLASH_ATTN, PF_FIX_FLASH_ATTN},
      {PF_SET_TP_COMM_OVERLAP, PF_FIX_TP_COMM_OVERLAP}};
  unsigned m = 0, given = pf_opts_settings_given(v);
  for (size_t i = 0; i < sizeof map / sizeof *map; i++)
    if (pf_opts_get(v, map[i].opt)) m |= map[i].bit;
  for (size_t i = 0; i < sizeof settings / sizeof *settings; i++)
    if (given & settings[i].set) m |= settings[i].bit;
  return m;
}

int pf_opts_scenario_file(const char *path, pf_scenario *sc) {
  pf_optvals v = {0};
  int rc = pf_opts_load_scenario_file(path, &v);
  if (!rc) rc = pf_opts_scenario(&v, sc);
  pf_opts_free(&v);
  return rc;
}
