/* pmodel.c - the table of power models (pmodel.h): the built-in ones, one
 * row each, registered through pf_power_model_register() as a model from
 * outside model/ is; lookup by the name a device file gives; and the check
 * of a device's model and its power.MODEL keys, which module machine reads
 * as written because it lies below this module (devpower.c).
 */
#include "pmodel.h"

#include <stdio.h>
#include <string.h>

/* The built-in models, the default first; each is one file (pm_*.c). */
extern const pf_power_model pf_power_utilisation; /* pm_util.c */
static const pf_power_model *const builtin[] = {&pf_power_utilisation};

static const pf_power_model *table[PF_POWER_MODELS_MAX];
static int ntable;

static void builtins(void) {
  static bool done;
  if (done) return;
  done = true;
  for (size_t i = 0; i < sizeof builtin / sizeof builtin[0]; i++) pf_power_model_register(builtin[i]);
}

int pf_power_model_register(const pf_power_model *m) {
  builtins();
  if (!m || !pf_power_model_name_ok(m->name))
    return pf_error_set(PF_EINVAL, "power model \"%s\": a name is letters, digits, _ and -, a letter first, below %d "
                        "characters", m && m->name ? m->name : "", PF_ID_MAX);
  if (!m->dynamic_J) return pf_error_set(PF_EINVAL, "power model \"%s\": no dynamic_J", m->name);
  if (m->nkeys < 0 || m->nkeys > PF_POWER_MAX_PARAMS || (m->nkeys > 0 && !m->keys))
    return pf_error_set(PF_EINVAL, "power model \"%s\": %d keys (at most %d, in keys)", m->name, m->nkeys,
                        PF_POWER_MAX_PARAMS);
  for (int i = 0; i < ntable; i++)
    if (strcmp(table[i]->name, m->name) == 0)
      return pf_error_set(PF_EINVAL, "power model \"%s\": the name is taken", m->name);
  if (ntable == PF_POWER_MODELS_MAX)
    return pf_error_set(PF_EINVAL, "power model \"%s\": the table is full (%d models)", m->name, PF_POWER_MODELS_MAX);
  table[ntable++] = m;
  return 0;
}

const pf_power_model *pf_power_model_find(const char *name) {
  builtins();
  if (!name || !name[0]) return table[0];
  for (int i = 0; i < ntable; i++)
    if (strcmp(table[i]->name, name) == 0) return table[i];
  return NULL;
}

int pf_power_model_count(void) {
  builtins();
  return ntable;
}

const pf_power_model *pf_power_model_at(int i) {
  builtins();
  return i >= 0 && i < ntable ? table[i] : NULL;
}

void pf_power_model_names(char *buf, size_t n) {
  builtins();
  size_t len = 0;
  if (n) buf[0] = '\0';
  for (int i = 0; i < ntable && len < n; i++) {
    int k = snprintf(buf + len, n - len, "%s%s", i ? ", " : "", table[i]->name);
    if (k < 0) break;
    len += (size_t)k;
  }
}

const pf_power_model *pf_power_model_of(const pf_device *d) {
  const pf_power_model *m = pf_power_model_find(d->power_model);
  return m ? m : pf_power_model_find(NULL);
}

/* ---- the device's model and its keys ---- */

static const pf_power_key *model_key(const pf_power_model *m, const char *key) {
  for (int i = 0; i < m->nkeys; i++)
    if (strcmp(m->keys[i].key, key) == 0) return &m->keys[i];
  return NULL;
}

static const pf_power_param *device_param(const pf_device *d, const char *key) {
  for (int i = 0; i < d->power_nparams && i < PF_POWER_MAX_PARAMS; i++)
    if (strcmp(d->power_params[i].key, key) == 0) return &d->power_params[i];
  return NULL;
}

/* where messages point: the device file, else (a device built in code) its id */
static const char *where(const pf_device *d) { return d->power_file[0] ? d->power_file : d->id; }

static int check_param(const pf_device *d, const pf_power_model *m, const pf_power_param *p) {
  const pf_power_key *k = model_key(m, p->key);
  if (!k) {
    const char *cand[PF_POWER_MAX_PARAMS];
    for (int i = 0; i < m->nkeys; i++) cand[i] = m->keys[i].key;
    const char *near = pf_closest(p->key, cand, m->nkeys);
    char hint[96] = "";
    if (near) snprintf(hint, sizeof hint, "; did you mean \"%s\"?", near);
    if (pf_config_lenient()) {
      pf_warn("%s:%d: device.power.%s.%s: unknown key ignored (--lenient)%s", where(d), p->line, m->name, p->key, hint);
      return 0;
    }
    return pf_error_set(PF_EPARSE, "%s:%d: device.power.%s.%s: unknown key%s (--lenient makes it a warning)", where(d),
                        p->line, m->name, p->key, hint);
  }
  if (p->unit != k->unit)
    return pf_error_set(PF_EPARSE, "%s:%d: device.power.%s.%s: expected a %s", where(d), p->line, m->name, p->key,
                        pf_unit_kind_name(k->unit));
  if (!(p->value >= k->lo && p->value <= k->hi))
    return pf_error_set(PF_EPARSE, "%s:%d: device.power.%s.%s: %g is outside [%g, %g]%s%s", where(d), p->line, m->name,
                        p->key, p->value, k->lo, k->hi, k->what ? ": " : "", k->what ? k->what : "");
  return 0;
}

int pf_power_check(const pf_device *d) {
  const pf_power_model *m = pf_power_model_find(d->power_model);
  if (!m) {
    char valid[256];
    pf_power_model_names(valid, sizeof valid);
    return pf_error_set(PF_EPARSE, "%s:%d: device.power.model: unknown power model \"%s\"; valid: %s", where(d),
                        d->power_model_line, d->power_model, valid);
  }
  for (int i = 0; i < d->power_nparams && i < PF_POWER_MAX_PARAMS; i++) {
    int rc = check_param(d, m, &d->power_params[i]);
    if (rc < 0) return rc;
  }
  for (int i = 0; i < m->nkeys; i++)
    if (m->keys[i].required && !device_param(d, m->keys[i].key))
      return pf_error_set(PF_EPARSE, "%s:%d: device.power.%s.%s: missing required setting (%s)", where(d),
                          d->power_model_line, m->name, m->keys[i].key, m->keys[i].what ? m->keys[i].what : "");
  return 0;
}

double pf_power_param_value(const pf_device *d, const char *key, double fallback) {
  const pf_power_param *p = device_param(d, key);
  return p ? p->value : fallback;
}
