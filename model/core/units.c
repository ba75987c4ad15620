/* units.c - strict quantity parser (see units.h).
 *
 * Grammar: blanks? number (blank)? prefix? base blanks?  where number is what
 * strtod accepts (no hex, no inf/nan), prefix is one of k M G T P E (x1000^n)
 * or Ki Mi Gi Ti Pi (x1024^n), and base depends on the kind.  Anything else is
 * rejected, so "200Gbps" and "200 Gbps" parse but "200 Gbpsx", "200 G" (for
 * bandwidth), "fast" and "" do not.
 */
#include "units.h"

#include "error.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
  const char *text;
  double factor; /* to SI */
} unit_base;

/* Longest names first within each list, so "GB/s" is not read as "G" + "B". */
static const unit_base bytes_units[] = {{"B", 1.0}, {"b", 0.125}, {NULL, 0}};
static const unit_base bw_units[] = {{"B/s", 1.0}, {"Bps", 1.0}, {"b/s", 0.125},
                                     {"bps", 0.125}, {"bit/s", 0.125}, {NULL, 0}};
static const unit_base flops_units[] = {{"FLOP/s", 1.0}, {"FLOPS", 1.0}, {"FLOPs", 1.0},
                                        {"flop/s", 1.0}, {"f", 1.0}, {NULL, 0}};
static const unit_base power_units[] = {{"W", 1.0}, {NULL, 0}};
static const unit_base time_units[] = {{"s", 1.0}, {"min", 60.0}, {"h", 3600.0}, {NULL, 0}};
static const unit_base energy_units[] = {{"J", 1.0}, {"Wh", 3600.0}, {NULL, 0}};
static const unit_base freq_units[] = {{"Hz", 1.0}, {NULL, 0}};

const char *pf_unit_kind_name(pf_unit_kind kind) {
  switch (kind) {
  case PF_UNIT_NONE: return "plain number";
  case PF_UNIT_BYTES: return "size (B, GB, GiB, ...)";
  case PF_UNIT_BANDWIDTH: return "bandwidth (GB/s, GiB/s, Gbps, ...)";
  case PF_UNIT_FLOPS: return "compute rate (TFLOPS, TFLOP/s, ...)";
  case PF_UNIT_POWER: return "power (W, kW, ...)";
  case PF_UNIT_TIME: return "time (s, ms, us, ns, ...)";
  case PF_UNIT_ENERGY: return "energy (J, kJ, Wh, kWh, ...)";
  case PF_UNIT_FREQUENCY: return "frequency (Hz, MHz, GHz)";
  }
  return "quantity";
}

static const unit_base *bases_for(pf_unit_kind kind) {
  switch (kind) {
  case PF_UNIT_BYTES: return bytes_units;
  case PF_UNIT_BANDWIDTH: return bw_units;
  case PF_UNIT_FLOPS: return flops_units;
  case PF_UNIT_POWER: return power_units;
  case PF_UNIT_TIME: return time_units;
  case PF_UNIT_ENERGY: return energy_units;
  case PF_UNIT_FREQUENCY: return freq_units;
  case PF_UNIT_NONE: break;
  }
  return NULL;
}

/* Match an optional prefix at s; returns its length (0 if none) and factor. */
static size_t match_prefix(const char *s, pf_unit_kind kind, double *factor) {
  static const char si[] = "kMGTPE";
  const char *p = strchr(si, s[0]);
  *factor = 1.0;
  if (s[0] == '\0' || p == NULL) {
    /* sub-unit prefixes only make sense for time and energy-free kinds */
    if (kind == PF_UNIT_TIME || kind == PF_UNIT_POWER || kind == PF_UNIT_ENERGY) {
      if (s[0] == 'm' && s[1] != 'i') { *factor = 1e-3; return 1; }
      if (s[0] == 'u') { *factor = 1e-6; return 1; }
      if (strncmp(s, "\xc2\xb5", 2) == 0) { *factor = 1e-6; return 2; } /* µ */
      if (s[0] == 'n') { *factor = 1e-9; return 1; }
    }
    return 0;
  }
  int n = (int)(p - si) + 1;
  if (s[1] == 'i' && kind != PF_UNIT_FLOPS && kind != PF_UNIT_POWER && kind != PF_UNIT_TIME &&
      kind != PF_UNIT_FREQUENCY && kind != PF_UNIT_ENERGY) {
    *factor = pow(1024.0, n);
    return 2;
  }
  *factor = pow(1000.0, n);
  return 1;
}

static int match_base(const char *s, const unit_base *b, double *factor) {
  for (; b->text; b++)
    if (strcmp(s, b->text) == 0) { *factor = b->factor; return 1; }
  return 0;
}

int pf_units_parse(const char *s, pf_unit_kind kind, double *out) {
  if (s == NULL) return pf_error_set(PF_EUNIT, "missing quantity, expected a %s", pf_unit_kind_name(kind));
  const char *p = s;
  while (isspace((unsigned char)*p)) p++;
  if (*p == '\0' || !(isdigit((unsigned char)*p) || *p == '.' || *p == '-' || *p == '+'))
    return pf_error_set(PF_EUNIT, "\"%s\" is not a number followed by a %s", s, pf_unit_kind_name(kind));
  char *end;
  errno = 0;
  double v = strtod(p, &end);
  if (end == p || errno == ERANGE || !isfinite(v))
    return pf_error_set(PF_EUNIT, "\"%s\": number out of range or malformed", s);
  /* reject hex and inf/nan spellings that strtod accepts */
  for (const char *q = p; q < end; q++)
    if (!(isdigit((unsigned char)*q) || *q == '.' || *q == 'e' || *q == 'E' || *q == '-' || *q == '+'))
      return pf_error_set(PF_EUNIT, "\"%s\": malformed number", s);
  p = end;
  if (*p == ' ') p++;
  /* trim trailing blanks into a local copy of the unit text */
  char unit[32];
  size_t n = strlen(p);
  while (n > 0 && isspace((unsigned char)p[n - 1])) n--;
  if (n >= sizeof unit) return pf_error_set(PF_EUNIT, "\"%s\": unknown unit", s);
  memcpy(unit, p, n);
  unit[n] = '\0';

  if (kind == PF_UNIT_NONE) {
    if (unit[0] != '\0') return pf_error_set(PF_EUNIT, "\"%s\": expected a plain number", s);
    *out = v;
    return 0;
  }
  const unit_base *bases = bases_for(kind);
  double bf, pf = 1;
  /* whole unit without prefix first (so "min" is not "m" + "in") */
  size_t plen = 0;
  bool found = match_base(unit, bases, &bf);
  if (!found && (plen = match_prefix(unit, kind, &pf)) > 0) found = match_base(unit + plen, bases, &bf);
  if (found) {
    /* a finite number times its unit may still overflow ("2E302 GB/s": 2e311 B/s) */
    if (!isfinite(v * pf * bf)) return pf_error_set(PF_EUNIT, "\"%s\": number out of range", s);
    *out = v * pf * bf;
    return 0;
  }
  if (unit[0] == '\0')
    return pf_error_set(PF_EUNIT, "\"%s\": missing unit, expected a %s", s, pf_unit_kind_name(kind));
  return pf_error_set(PF_EUNIT, "\"%s\": unknown unit \"%s\", expected a %s", s, unit, pf_unit_kind_name(kind));
}
