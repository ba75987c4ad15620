/* cfgread.h - internal: reading libconfig files with precise errors (file,
 * line, key), bounds, and the unknown-key check (cfgread.c).  Used by the
 * device and machine loaders (device.c, machine.c) and the network kinds
 * (net_*.c); the key readers themselves are public (cfgkeys.h) so that a
 * network kind registered from outside the module reads its keys the same
 * way. */
#ifndef PREFLIGHT_CFGREAD_H
#define PREFLIGHT_CFGREAD_H

#include "cfgkeys.h"
#include "hardware.h"
#include "core/core.h"

#include <libconfig.h>
#include <stdbool.h>
#include <stddef.h>

/* One group of a file being read ("device" or "machine"); its keys are
 * read with the pf_cfg_* readers of cfgkeys.h. */
struct pf_cfg_reader {
  const char *file;
  const config_setting_t *root; /* "device" or "machine" group */
  const char *root_name;
};
typedef struct pf_cfg_reader reader;

#define TRY(x) do { int rc_ = (x); if (rc_ < 0) return rc_; } while (0)

/* The setting's line (0 for NULL); the setting at path under the root,
 * recorded for the unknown-key check (NULL when absent). */
int pf_cfg_line(const config_setting_t *s);
const config_setting_t *pf_cfg_lookup(const reader *r, const char *path);
/* "provenance": a list of strings; its first entry into dst (may be NULL). */
int pf_cfg_provenance(const reader *r, char *dst, size_t n);

/* Parse path, run read(cfg, path, out) with lookups recorded, then report the
 * settings no lookup named (errors, or warnings when lenient). */
typedef int (*pf_cfg_read_fn)(config_t *cfg, const char *path, void *out);
int pf_cfg_read_file(const char *path, const char *what, pf_cfg_read_fn read, void *out);

/* The short names the loaders use. */
static inline int line_of(const config_setting_t *s) { return pf_cfg_line(s); }
static inline const config_setting_t *lookup(const reader *r, const char *path) { return pf_cfg_lookup(r, path); }
static inline int missing(const reader *r, const char *path) { return pf_cfg_missing(r, path); }
static inline int get_str(const reader *r, const char *path, char *dst, size_t n, int required) {
  return pf_cfg_str(r, path, dst, n, required);
}
static inline int get_qty(const reader *r, const char *path, pf_unit_kind kind, double *dst, int required) {
  return pf_cfg_qty(r, path, kind, dst, required);
}
static inline int get_qty_in(const reader *r, const char *path, pf_unit_kind kind, double *dst, int required,
                             double lo, bool lo_open, double hi, const char *what) {
  return pf_cfg_qty_in(r, path, kind, dst, required, lo, lo_open, hi, what);
}
static inline int get_qty_b(const reader *r, const char *path, pf_plaus_id id, double *dst, int required) {
  return pf_cfg_qty_bound(r, path, id, dst, required);
}
static inline int get_num_b(const reader *r, const char *path, pf_plaus_id id, double *dst, int required) {
  return pf_cfg_num_bound(r, path, id, dst, required);
}
static inline int get_num(const reader *r, const char *path, double *dst, int required) {
  return pf_cfg_num(r, path, dst, required);
}
static inline int get_num_in(const reader *r, const char *path, double *dst, int required, double lo, bool lo_open,
                             double hi, const char *what) {
  return pf_cfg_num_in(r, path, dst, required, lo, lo_open, hi, what);
}
static inline int get_int(const reader *r, const char *path, int *dst, int required, int min) {
  return pf_cfg_int(r, path, dst, required, min);
}
static inline int get_int_in(const reader *r, const char *path, int *dst, int required, int min, int max) {
  return pf_cfg_int_in(r, path, dst, required, min, max);
}
static inline int get_bool(const reader *r, const char *path, bool *dst) { return pf_cfg_bool(r, path, dst); }
static inline int get_enum(const reader *r, const char *path, const char *const *names, int n, int *dst,
                           int required) {
  return pf_cfg_enum(r, path, names, n, dst, required);
}
static inline int check_range(const reader *r, const char *path, double x, double lo, bool lo_open, double hi,
                              const char *what) {
  return pf_cfg_range(r, path, x, lo, lo_open, hi, what);
}
static inline int get_provenance(const reader *r, char *dst, size_t n) { return pf_cfg_provenance(r, dst, n); }

#endif
