/* cfgkeys.h - the strict key readers of machine and device files (cfgread.c),
 * public so that a network kind registered from outside the module
 * (network.h) reads its keys of the machine's network group as the built-in
 * kinds do: each error names file:line and the key, each key read is known
 * to the unknown-key check.
 *
 * Each reader returns 1 (read), 0 (absent and not required) or a PF_E* code;
 * path is relative to the file's root group ("network.levels").  _in
 * variants: the value must lie in (lo, hi] (lo_open) or [lo, hi], `what`
 * (may be NULL) says why in the message. */
#ifndef PREFLIGHT_CFGKEYS_H
#define PREFLIGHT_CFGKEYS_H

#include "core/core.h"

#include <stdbool.h>
#include <stddef.h>

/* One group of a file being read (opaque outside cfgread.c). */
typedef struct pf_cfg_reader pf_cfg_reader;

/* PF_EPARSE naming the required key at path that the file lacks. */
int pf_cfg_missing(const pf_cfg_reader *r, const char *path);
int pf_cfg_str(const pf_cfg_reader *r, const char *path, char *dst, size_t n, int required);
int pf_cfg_qty(const pf_cfg_reader *r, const char *path, pf_unit_kind kind, double *dst, int required);
int pf_cfg_qty_in(const pf_cfg_reader *r, const char *path, pf_unit_kind kind, double *dst, int required, double lo,
                  bool lo_open, double hi, const char *what);
/* A quantity or a number within a bound of the one table (core/bounds.h): an efficiency, a link rate. */
int pf_cfg_qty_bound(const pf_cfg_reader *r, const char *path, pf_plaus_id id, double *dst, int required);
int pf_cfg_num_bound(const pf_cfg_reader *r, const char *path, pf_plaus_id id, double *dst, int required);
int pf_cfg_num(const pf_cfg_reader *r, const char *path, double *dst, int required);
int pf_cfg_num_in(const pf_cfg_reader *r, const char *path, double *dst, int required, double lo, bool lo_open,
                  double hi, const char *what);
int pf_cfg_int(const pf_cfg_reader *r, const char *path, int *dst, int required, int min);
int pf_cfg_int_in(const pf_cfg_reader *r, const char *path, int *dst, int required, int min, int max);
int pf_cfg_bool(const pf_cfg_reader *r, const char *path, bool *dst);
/* One of names[0..n-1] into *dst as its index; an unknown value lists the valid ones. */
int pf_cfg_enum(const pf_cfg_reader *r, const char *path, const char *const *names, int n, int *dst, int required);
/* x already read at path in range, else PF_EPARSE naming the key's line. */
int pf_cfg_range(const pf_cfg_reader *r, const char *path, double x, double lo, bool lo_open, double hi,
                 const char *what);

/* Every integer literal of the libconfig file at path read again at 64 bits (cfgints.c): one beyond libconfig's
 * 32-bit int (which libconfig 1.5 wraps without a word) is PF_EPARSE with file:line, the key and its real value.
 * Call it after libconfig has parsed the file. */
int pf_cfg_check_ints(const char *path);
int pf_cfg_check_ints_text(const char *path, const char *text, size_t len);

/* The one way a libconfig file is opened (machine, device, scenario, layer list): read with a size cap
 * (PF_CFG_MAX_BYTES, said in the message), a UTF-8 byte-order mark skipped and CRLF accepted, every line at
 * most PF_CFG_MAX_LINE bytes before libconfig sees it (its lexer is quadratic in a line's length), parsed,
 * then its integers checked at 64 bits.  what names the file's kind in "cannot read" messages.  0 (cfg to
 * be destroyed by the caller) or a PF_E* code with file:line (cfg already destroyed). */
#define PF_CFG_MAX_BYTES (4u << 20) /* 4 MiB: the largest shipped file is under 20 KiB */
#define PF_CFG_MAX_LINE 16384       /* bytes; the longest shipped line (a provenance entry) is under 1 KiB */
struct config_t;
int pf_cfg_parse(struct config_t *cfg, const char *path, const char *what);

#endif
