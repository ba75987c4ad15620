/* pmodel.h - power models behind a table of functions: what a used device
 * draws while its compute kernels run (docs/energy.md).
 *
 * A device names its model in its file (device.power.model, default the
 * first built-in: the utilisation model, pm_util.c).  Each model is one file
 * (pm_*.c) holding one static const pf_power_model, and one row of the table
 * of built-ins (pmodel.c); a model from outside model/ (a test, a plug-in) is
 * added with pf_power_model_register(), the call the built-ins go through, as
 * hwloc's components and SimGrid's plug-ins are.
 *
 * Coefficients.  The utilisation model's are the device file's flat keys
 * power.{tensor,vector,hbm,voltage_floor} (pf_device's named fields, read by
 * machine/devpower.c with their defaults, overridden per site and overlaid by
 * calibrations as before).  Any other model keeps its own in the device
 * file's power.MODEL group: module machine lies below this one and cannot see
 * the table, so it reads that group as written (pf_device.power_params: each
 * value in SI with the kind of its unit, or a plain number, and its line);
 * pf_power_check() then checks the model's name and those keys against the
 * model's key table (unknown, missing, wrong unit, out of range), naming the
 * file, line and key.  A model reads a value with pf_power_param_value().
 *
 * What stays model-independent (energy.c): context and communication power,
 * idle devices, packages, nodes, switches, PUE, the cap, the busy time at a
 * clock, and the search for the clock a cap leaves (it calls the model).
 */
#ifndef PREFLIGHT_PMODEL_H
#define PREFLIGHT_PMODEL_H

#include "energy.h"

#include "core/core.h"
#include "machine/machine.h"

#include <stdbool.h>

/* One key of a model's power.MODEL group in device files. */
typedef struct pf_power_key {
  const char *key;   /* its name in the group */
  pf_unit_kind unit; /* the kind its unit must be (PF_UNIT_POWER: "450 W"); PF_UNIT_NONE: a plain number */
  double lo, hi;     /* accepted range [lo, hi], SI units */
  bool required;     /* else absent means the model's default (pf_power_param_value's fallback) */
  const char *what;  /* meaning, default and source, for messages and listings */
} pf_power_key;

typedef struct pf_power_model {
  const char *name;         /* device.power.model (pf_power_model_name_ok) */
  const char *summary;      /* one line: what it models and where its formulas come from */
  const pf_power_key *keys; /* its power.NAME group (docs/energy.md); NULL with nkeys 0 when it has none */
  int nkeys;
  /* Energy (J) the compute kernels of window u draw above context_W on one used device at clock ratio r
   * (u measured at u->clock_ratio, their busy time at r: pf_energy_busy_s(u, r)).  Must not decrease
   * with r (the cap's clock search bisects on it).  Required. */
  double (*dynamic_J)(const pf_device *d, const pf_energy_use *u, double r);
  /* Core voltage at clock ratio r over the full-clock voltage (its DVFS curve); NULL: 1 at every clock. */
  double (*voltage)(const pf_device *d, double r);
} pf_power_model;

#define PF_POWER_MODELS_MAX 16

/* Add m to the table (borrowed: it must outlive every use; a static const
 * object).  The built-in models are registered first, through this call, on
 * the first call of any pf_power_model_* function.  Not thread-safe: call it
 * before predictions run (main, a test's start).  PF_EINVAL: no name, a name
 * that is not a model name or is taken, no dynamic_J, keys inconsistent with
 * nkeys or more than PF_POWER_MAX_PARAMS, or a full table. */
int pf_power_model_register(const pf_power_model *m);
/* The model called name; "" or NULL: the default (the first built-in); NULL when unknown. */
const pf_power_model *pf_power_model_find(const char *name);
/* Models in the order registered (the built-ins first): i in [0, count). */
int pf_power_model_count(void);
const pf_power_model *pf_power_model_at(int i);
/* Their names, ", "-separated, into buf (messages: "valid: ..."). */
void pf_power_model_names(char *buf, size_t n);

/* d's model: the one d->power_model names, the default when it names none.
 * A name the table lacks also gives the default: callers check the device
 * first (pf_power_check), where that is an error. */
const pf_power_model *pf_power_model_of(const pf_device *d);

/* The device's model is in the table and its power.MODEL keys are the
 * model's, of the right unit, in range, none required missing.  0 or
 * PF_EPARSE naming file:line and the key; an unknown key is a warning under
 * --lenient (pf_config_lenient), as in the rest of the file. */
int pf_power_check(const pf_device *d);

/* The value (SI) of key in d's power.MODEL group; fallback when the file
 * does not give it. */
double pf_power_param_value(const pf_device *d, const char *key, double fallback);

#endif
