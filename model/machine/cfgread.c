/* cfgread.c - reading libconfig files (machines, devices) with precise
 * errors, physical bounds and unknown keys (see cfgread.h).
 *
 * Unknown keys: every key a reader looks up (pf_cfg_lookup(), through
 * pf_cfg_str, pf_cfg_qty, pf_cfg_num, ...) is recorded, found or not; after a
 * file is read its tree is walked and a setting that was never looked up is an
 * unknown key (a typo that would otherwise keep the default without a word):
 * an error with the closest recorded key as "did you mean", or a warning with
 * --lenient.  A key added to a reader is thus known without a second list.
 */
#include "cfgread.h"

#include "core/core.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static bool lenient;
void pf_config_set_lenient(bool on) { lenient = on; }
bool pf_config_lenient(void) { return lenient; }

/* ---- the keys a reader looked up (for unknown keys) ---- */

typedef struct {
  char **key; /* "machine.node.nics.rate"; owned */
  int n, cap;
  bool missing; /* a required key was missing: perhaps it is there, misspelt */
} recorder;

static _Thread_local recorder *rec; /* the file being read (nested: a machine reads its device) */

static void record(const char *root, const char *path) {
  if (!rec) return;
  char full[256];
  snprintf(full, sizeof full, "%s%s%s", root, path[0] ? "." : "", path);
  for (int i = 0; i < rec->n; i++)
    if (strcmp(rec->key[i], full) == 0) return;
  if (rec->n == rec->cap) {
    int cap = rec->cap ? 2 * rec->cap : 64;
    char **k = realloc(rec->key, (size_t)cap * sizeof *k);
    if (!k) return; /* out of memory: the key may later be reported unknown */
    rec->key = k;
    rec->cap = cap;
  }
  if ((rec->key[rec->n] = strdup(full)) != NULL) rec->n++;
}

static void recorder_free(recorder *r) {
  for (int i = 0; i < r->n; i++) free(r->key[i]);
  free(r->key);
}

static bool recorded(const recorder *r, const char *full, bool as_prefix) {
  size_t n = strlen(full);
  for (int i = 0; i < r->n; i++) {
    if (strcmp(r->key[i], full) == 0) return true;
    if (as_prefix && strncmp(r->key[i], full, n) == 0 && r->key[i][n] == '.') return true;
  }
  return false;
}

/* The recorded sibling of full (same parent) closest to its last component,
 * copied to out; NULL when none is close. */
static const char *did_you_mean(const recorder *r, const char *full, char *out, size_t outlen) {
  const char *dot = strrchr(full, '.');
  size_t plen = dot ? (size_t)(dot - full) + 1 : 0;
  enum { MAXC = 128 };
  char comp[MAXC][64];
  const char *cand[MAXC];
  int n = 0;
  for (int i = 0; i < r->n && n < MAXC; i++) {
    const char *k = r->key[i];
    if (strncmp(k, full, plen) != 0 || !k[plen]) continue;
    const char *rest = k + plen, *d = strchr(rest, '.'); /* a sibling key, or the group one lives in */
    size_t len = d ? (size_t)(d - rest) : strlen(rest);
    if (len >= sizeof comp[0]) continue;
    memcpy(comp[n], rest, len);
    comp[n][len] = '\0';
    bool dup = false;
    for (int j = 0; j < n && !dup; j++) dup = strcmp(comp[j], comp[n]) == 0;
    if (!dup) { cand[n] = comp[n]; n++; }
  }
  const char *best = pf_closest(full + plen, cand, n);
  if (!best) return NULL;
  snprintf(out, outlen, "%s", best);
  return out;
}

/* Walk group g (path prefix) and report settings no reader looked up. */
static int walk_unknown(const recorder *r, const char *file, const config_setting_t *g, const char *prefix,
                        bool warn_only) {
  for (int i = 0; i < config_setting_length(g); i++) {
    const config_setting_t *c = config_setting_get_elem(g, (unsigned)i);
    const char *name = config_setting_name(c);
    if (!name) continue; /* list and array elements */
    char full[256];
    snprintf(full, sizeof full, "%s%s%s", prefix, prefix[0] ? "." : "", name);
    bool group = config_setting_is_group(c);
    if (recorded(r, full, group)) {
      if (group) {
        int rc = walk_unknown(r, file, c, full, warn_only);
        if (rc < 0) return rc;
      }
      continue;
    }
    char buf[64];
    const char *near = did_you_mean(r, full, buf, sizeof buf);
    char hint[96] = "";
    if (near) snprintf(hint, sizeof hint, "; did you mean \"%s\"?", near);
    if (warn_only) {
      pf_warn("%s:%d: %s: unknown key ignored (--lenient)%s", file, config_setting_source_line(c), full, hint);
      continue;
    }
    return pf_error_set(PF_EPARSE, "%s:%d: %s: unknown key%s (--lenient makes it a warning)", file,
                        config_setting_source_line(c), full, hint);
  }
  return 0;
}

/* ---- reading settings with precise errors ---- */

int pf_cfg_line(const config_setting_t *s) {
  int l = s ? config_setting_source_line(s) : 0;
  return l;
}

const config_setting_t *pf_cfg_lookup(const reader *r, const char *path) {
  record(r->root_name, path);
  return config_setting_lookup((config_setting_t *)r->root, path);
}

int pf_cfg_missing(const reader *r, const char *path) {
  if (rec) rec->missing = true;
  return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: missing required setting", r->file, pf_cfg_line(r->root),
                      r->root_name, path);
}

int pf_cfg_str(const reader *r, const char *path, char *dst, size_t n, int required) {
  const config_setting_t *s = pf_cfg_lookup(r, path);
  if (!s) { if (required) return pf_cfg_missing(r, path); return 0; }
  const char *v = config_setting_get_string(s);
  if (!v)
    return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: expected a string", r->file, pf_cfg_line(s), r->root_name, path);
  snprintf(dst, n, "%s", v);
  return 1;
}

/* The largest value of a kind that any hardware could have: the kind's bound
 * in the one table (core/bounds.c). */
static double qty_limit(pf_unit_kind kind) {
  const pf_plaus *b = pf_plaus_of_unit(kind);
  return b ? b->hi : 1e300;
}

/* x (non-zero) against the bound b, else PF_EPARSE naming file:line and the key. */
static int bound_at(const reader *r, const config_setting_t *s, const char *path, const pf_plaus *b, double x) {
  char where[PF_PATH_MAX + 128];
  snprintf(where, sizeof where, "%s:%d: %s.%s", r->file, pf_cfg_line(s), r->root_name, path);
  return pf_plaus_check(b, x, where);
}

/* A quantity no larger than top. */
static int qty_read(const reader *r, const char *path, pf_unit_kind kind, double *dst, int required, double top) {
  const config_setting_t *s = pf_cfg_lookup(r, path);
  if (!s) { if (required) return pf_cfg_missing(r, path); return 0; }
  const char *v = config_setting_get_string(s);
  if (!v)
    return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: expected a quoted quantity with unit, a %s", r->file,
                        pf_cfg_line(s), r->root_name, path, pf_unit_kind_name(kind));
  if (pf_units_parse(v, kind, dst) < 0) {
    char why[512];
    snprintf(why, sizeof why, "%s", pf_error_detail());
    return pf_error_set(PF_EUNIT, "%s:%d: %s.%s: %s", r->file, pf_cfg_line(s), r->root_name, path, why);
  }
  if (*dst < 0)
    return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: must not be negative", r->file, pf_cfg_line(s), r->root_name, path);
  if (*dst > top)
    return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: \"%s\" is beyond any device or network built (at most %g in SI "
                        "units); check the unit prefix", r->file, pf_cfg_line(s), r->root_name, path, v, top);
  /* zero is "none" where a key allows it; any other value is at least the kind's floor (a missing prefix,
   * "989.4 FLOPS", or a denormal, "1e-307 Gbps", is refused) */
  const pf_plaus *b = pf_plaus_of_unit(kind);
  if (*dst > 0 && b && *dst < b->lo) TRY(bound_at(r, s, path, b, *dst));
  return 1;
}

int pf_cfg_qty_bound(const reader *r, const char *path, pf_plaus_id id, double *dst, int required) {
  const pf_plaus *b = pf_plaus_get(id);
  int rc = qty_read(r, path, b->unit, dst, required, 1e300);
  if (rc <= 0) return rc;
  TRY(bound_at(r, pf_cfg_lookup(r, path), path, b, *dst));
  return 1;
}

int pf_cfg_qty(const reader *r, const char *path, pf_unit_kind kind, double *dst, int required) {
  return qty_read(r, path, kind, dst, required, qty_limit(kind));
}

/* Bounds checked where a value is read: lo < x (lo_open) or lo <= x, x <= hi. */
int pf_cfg_range(const reader *r, const char *path, double x, double lo, bool lo_open, double hi,
                       const char *what) {
  if ((lo_open ? x > lo : x >= lo) && x <= hi) return 0;
  return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: %g is outside (%s%g, %g]%s%s", r->file, pf_cfg_line(pf_cfg_lookup(r, path)),
                      r->root_name, path, x, lo_open ? "" : "=", lo, hi, what ? ": " : "", what ? what : "");
}

int pf_cfg_qty_in(const reader *r, const char *path, pf_unit_kind kind, double *dst, int required, double lo,
                      bool lo_open, double hi, const char *what) {
  /* the explicit range replaces the generic limit (a job's wall-time limit is days, a latency microseconds) */
  int rc = qty_read(r, path, kind, dst, required, hi > qty_limit(kind) ? hi : qty_limit(kind));
  if (rc <= 0) return rc;
  TRY(pf_cfg_range(r, path, *dst, lo, lo_open, hi, what));
  return 1;
}

int pf_cfg_num(const reader *r, const char *path, double *dst, int required) {
  const config_setting_t *s = pf_cfg_lookup(r, path);
  if (!s) { if (required) return pf_cfg_missing(r, path); return 0; }
  int t = config_setting_type(s);
  if (t == CONFIG_TYPE_FLOAT) *dst = config_setting_get_float(s);
  else if (t == CONFIG_TYPE_INT) *dst = config_setting_get_int(s);
  else if (t == CONFIG_TYPE_INT64) *dst = (double)config_setting_get_int64(s);
  else
    return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: expected a number", r->file, pf_cfg_line(s), r->root_name, path);
  if (!isfinite(*dst))
    return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: expected a finite number", r->file, pf_cfg_line(s), r->root_name, path);
  return 1;
}

int pf_cfg_num_bound(const reader *r, const char *path, pf_plaus_id id, double *dst, int required) {
  int rc = pf_cfg_num(r, path, dst, required);
  if (rc <= 0) return rc;
  TRY(bound_at(r, pf_cfg_lookup(r, path), path, pf_plaus_get(id), *dst));
  return 1;
}

int pf_cfg_num_in(const reader *r, const char *path, double *dst, int required, double lo, bool lo_open,
                      double hi, const char *what) {
  int rc = pf_cfg_num(r, path, dst, required);
  if (rc <= 0) return rc;
  TRY(pf_cfg_range(r, path, *dst, lo, lo_open, hi, what));
  return 1;
}

int pf_cfg_int(const reader *r, const char *path, int *dst, int required, int min) {
  const config_setting_t *s = pf_cfg_lookup(r, path);
  if (!s) { if (required) return pf_cfg_missing(r, path); return 0; }
  if (config_setting_type(s) != CONFIG_TYPE_INT && config_setting_type(s) != CONFIG_TYPE_INT64)
    return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: expected an integer", r->file, pf_cfg_line(s), r->root_name, path);
  long long v = config_setting_get_int64(s); /* 64 bits: a 4294968416L is not read as 1120 */
  if (v < min)
    return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: must be at least %d", r->file, pf_cfg_line(s), r->root_name,
                        path, min);
  if (v > INT_MAX)
    return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: %lld is more than %d", r->file, pf_cfg_line(s), r->root_name,
                        path, v, INT_MAX);
  *dst = (int)v;
  return 1;
}

int pf_cfg_int_in(const reader *r, const char *path, int *dst, int required, int min, int max) {
  int rc = pf_cfg_int(r, path, dst, required, min);
  if (rc <= 0) return rc;
  if (*dst > max)
    return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: %d is more than %d", r->file, pf_cfg_line(pf_cfg_lookup(r, path)), r->root_name,
                        path, *dst, max);
  return 1;
}

int pf_cfg_bool(const reader *r, const char *path, bool *dst) {
  const config_setting_t *s = pf_cfg_lookup(r, path);
  if (!s) return 0;
  if (config_setting_type(s) != CONFIG_TYPE_BOOL)
    return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: expected true or false", r->file, pf_cfg_line(s), r->root_name, path);
  *dst = config_setting_get_bool(s);
  return 1;
}

int pf_cfg_enum(const reader *r, const char *path, const char *const *names, int n, int *dst, int required) {
  char v[64];
  int rc = pf_cfg_str(r, path, v, sizeof v, required);
  if (rc <= 0) return rc;
  for (int i = 0; i < n; i++)
    if (strcmp(v, names[i]) == 0) { *dst = i; return 1; }
  char valid[256] = "";
  for (int i = 0; i < n; i++) {
    strncat(valid, names[i], sizeof valid - strlen(valid) - 1);
    if (i + 1 < n) strncat(valid, ", ", sizeof valid - strlen(valid) - 1);
  }
  return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: unknown value \"%s\"; valid: %s", r->file,
                      pf_cfg_line(pf_cfg_lookup(r, path)), r->root_name, path, v, valid);
}


/* "provenance": a list of strings (where each number comes from); its first
 * entry into dst (may be NULL). */
int pf_cfg_provenance(const reader *r, char *dst, size_t n) {
  const config_setting_t *prov = pf_cfg_lookup(r, "provenance");
  if (!prov) return 0;
  if (!config_setting_is_list(prov) && !config_setting_is_array(prov))
    return pf_error_set(PF_EPARSE, "%s:%d: %s.provenance: expected a list of strings ( \"...\", \"...\" )", r->file,
                        pf_cfg_line(prov), r->root_name);
  int cnt = config_setting_length(prov);
  for (int i = 0; i < cnt; i++)
    if (!config_setting_get_string_elem(prov, (unsigned)i))
      return pf_error_set(PF_EPARSE, "%s:%d: %s.provenance[%d]: expected a string", r->file,
                          pf_cfg_line(config_setting_get_elem(prov, (unsigned)i)), r->root_name, i);
  if (dst && cnt > 0)
    snprintf(dst, n, "%s%s", config_setting_get_string_elem(prov, 0), cnt > 1 ? " (and more in the file)" : "");
  return 0;
}

int pf_cfg_read_file(const char *path, const char *what, pf_cfg_read_fn read, void *out) {
  config_t cfg;
  TRY(pf_cfg_parse(&cfg, path, what));
  recorder mine = {0}, *outer = rec;
  rec = &mine;
  record(what, "");
  int rc = read(&cfg, path, out);
  rec = outer;
  if (rc == 0) {
    rc = walk_unknown(&mine, path, config_root_setting(&cfg), "", lenient);
  } else if (mine.missing) { /* a missing key is often a misspelt one: name that instead */
    char why[1024];
    snprintf(why, sizeof why, "%s", pf_error_detail());
    if (walk_unknown(&mine, path, config_root_setting(&cfg), "", false) < 0) {
      char typo[1024];
      snprintf(typo, sizeof typo, "%s", pf_error_detail());
      pf_error_set(rc, "%s; so: %s", typo, why);
    } else {
      pf_error_set(rc, "%s", why);
    }
  }
  recorder_free(&mine);
  config_destroy(&cfg);
  return rc;
}
