/* opts.c - the option engine (see opts.h): find an entry, read one argument
 * of argv, convert a value by its entry's type and range and store it, and
 * print the option list of --help.  Numbers are read with strtol / strtod
 * and checked to the end of the text; quantities with units by
 * pf_units_parse (units.c).  The sentences around a fault are the callers'.
 */
#include "opts.h"

#include "bounds.h"

#include "error.h"
#include "units.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

const pf_opt *pf_opt_find(const pf_opt *const *tables, const char *name) {
  for (int t = 0; tables[t]; t++)
    for (const pf_opt *o = tables[t]; o->name; o++)
      if (strcmp(o->name, name) == 0) return o;
  return NULL;
}

int pf_name_index(const char *s, const char *const *names, int n, bool nocase) {
  for (int i = 0; s && i < n; i++)
    if ((nocase ? strcasecmp(s, names[i]) : strcmp(s, names[i])) == 0) return i;
  return -1;
}

int pf_name_bits(const char *s, const char *const *names, int n, unsigned *out, char *bad, size_t badlen) {
  char buf[PF_NAMES_MAX];
  if (strlen(s) >= sizeof buf) return PF_NAMES_LONG;
  snprintf(buf, sizeof buf, "%s", s);
  unsigned m = 0;
  for (char *save = NULL, *t = strtok_r(buf, ", ", &save); t; t = strtok_r(NULL, ", ", &save)) {
    int i = pf_name_index(t, names, n, false);
    if (i < 0) {
      snprintf(bad, badlen, "%s", t);
      return PF_NAMES_UNKNOWN;
    }
    m |= 1u << i;
  }
  if (!m) return PF_NAMES_EMPTY;
  *out = m;
  return 0;
}

int pf_name_bits_parse(const char *opt, const char *const *names, int n, const char *valid, const char *example,
                       const char *s, unsigned *out) {
  char bad[64];
  switch (pf_name_bits(s, names, n, out, bad, sizeof bad)) {
  case 0: return 0;
  case PF_NAMES_LONG: return pf_error_set(PF_EINVAL, "%s: at most %d characters", opt, PF_NAMES_MAX - 1);
  case PF_NAMES_UNKNOWN: return pf_error_set(PF_EINVAL, "%s: \"%s\" is not a module; valid: %s", opt, bad, valid);
  default: return pf_error_set(PF_EINVAL, "%s: give at least one module, e.g. %s", opt, example);
  }
}

const char *pf_name_bits_join(unsigned m, const char *const *names, int n, char *buf, size_t len) {
  size_t k = 0;
  buf[0] = '\0';
  for (int i = 0; i < n; i++)
    if (m & (1u << i)) k += (size_t)snprintf(buf + k, k < len ? len - k : 0, "%s%s", k ? "," : "", names[i]);
  return buf;
}

/* The entry "-c" names: a one-letter name or a short alias. */
static const pf_opt *find_short(const pf_opt *const *tables, char c) {
  for (int t = 0; tables[t]; t++)
    for (const pf_opt *o = tables[t]; o->name; o++)
      if ((o->name[0] == c && o->name[1] == '\0') || (o->short_name && o->short_name == c)) return o;
  return NULL;
}

pf_opts_fault pf_opts_next(int argc, char *const *argv, int *i, const pf_opt *const *tables, pf_opts_arg *a) {
  const char *s = argv[*i];
  memset(a, 0, sizeof *a);
  a->text = s;
  (*i)++;
  if (s[0] != '-' || s[1] == '\0') { /* not an option: "FILE", "-" */
    a->value = s;
    return PF_OPTS_OK;
  }
  const char *eq = NULL;
  if (s[1] != '-') { /* "-x": one letter, its value the next argument */
    a->is_short = true;
    if (strlen(s) != 2) return PF_OPTS_UNKNOWN;
    a->name[0] = s[1];
    a->opt = find_short(tables, s[1]);
  } else {
    eq = strchr(s + 2, '=');
    size_t len = eq ? (size_t)(eq - s - 2) : strlen(s + 2);
    if (len >= sizeof a->name) return PF_OPTS_NAME_TOO_LONG;
    memcpy(a->name, s + 2, len);
    a->name[len] = '\0';
    a->opt = pf_opt_find(tables, a->name);
  }
  if (!a->opt) return PF_OPTS_UNKNOWN;
  if (a->opt->type == PF_OPT_FLAG) return eq ? PF_OPTS_TAKES_NO_VALUE : PF_OPTS_OK;
  if (eq) {
    a->value = eq + 1;
  } else {
    if (*i >= argc) return PF_OPTS_NEEDS_VALUE;
    a->value = argv[(*i)++];
  }
  return PF_OPTS_OK;
}

void pf_opt_choices_text(const pf_opt *o, char *buf, size_t len) {
  size_t n = 0;
  buf[0] = '\0';
  for (const pf_opt_choice *c = o->choices; c && c->name; c++) {
    if (c->hidden) continue;
    int k = snprintf(buf + n, len - n, "%s%s", n ? ", " : "", c->name);
    if (k < 0 || (size_t)k >= len - n) break;
    n += (size_t)k;
  }
}

/* The choice named text, or NULL. */
static const pf_opt_choice *choice_of(const pf_opt *o, const char *text) {
  for (const pf_opt_choice *c = o->choices; c && c->name; c++)
    if (strcmp(c->name, text) == 0) return c;
  return NULL;
}

static int refuse(char *why, size_t len, const char *what) {
  snprintf(why, len, "%s", what);
  return PF_EINVAL;
}

/* An integer in [lo, hi] (also the range of an int: the message says so). */
static int read_int(const pf_opt *o, const char *text, long *out, char *why, size_t len) {
  char *end;
  errno = 0;
  long x = strtol(text, &end, 10);
  if (end == text || *end != '\0') return refuse(why, len, "expected an integer");
  if (errno || x < INT_MIN || x > INT_MAX) return refuse(why, len, "out of range for an integer");
  if (x < o->lo || x > o->hi) {
    if (o->hi >= INT_MAX) snprintf(why, len, "must be at least %d", (int)o->lo);
    else snprintf(why, len, "must be between %d and %d", (int)o->lo, (int)o->hi);
    return PF_EINVAL;
  }
  *out = x;
  return 0;
}

/* A finite number in [lo, hi] ((lo, hi] with PF_OPT_LO_OPEN). */
static int read_num(const pf_opt *o, const char *text, double *out, char *why, size_t len) {
  char *end;
  errno = 0;
  double x = strtod(text, &end);
  if (end == text || *end != '\0') return refuse(why, len, "expected a number");
  if (!isfinite(x) || errno == ERANGE) return refuse(why, len, "expected a finite number");
  bool open = o->flags & PF_OPT_LO_OPEN;
  if (open ? !(x > o->lo) : !(x >= o->lo)) {
    snprintf(why, len, "must be %s %g", open ? "greater than" : "at least", o->lo);
    return PF_EINVAL;
  }
  if (x > o->hi) {
    snprintf(why, len, "must be at most %g", o->hi);
    return PF_EINVAL;
  }
  *out = x;
  return 0;
}

/* A quantity with its unit, positive and at most hi in SI units. */
static int read_qty(const pf_opt *o, const char *text, double *out, char *why, size_t len) {
  double x;
  if (pf_units_parse(text, o->unit, &x) < 0) return refuse(why, len, pf_error_detail());
  if (!(x > 0) || x > o->hi) {
    snprintf(why, len, "must be positive and at most %g (SI units)", o->hi);
    return PF_EINVAL;
  }
  /* at least the kind's floor in the one table (bounds.c): "1e-307 B/s" is not an input rate */
  const pf_plaus *b = pf_plaus_of_unit(o->unit);
  if (b && x < (o->lo > b->lo ? o->lo : b->lo)) {
    pf_plaus_why(b, x, why, len);
    return PF_EINVAL;
  }
  *out = x;
  return 0;
}

int pf_opt_store(const pf_opt *o, const char *text, void *base, char *why, size_t len) {
  why[0] = '\0';
  void *dest = base && o->at ? (char *)base + (o->at - 1) : NULL;
  int rc = 0;
  switch (o->type) {
  case PF_OPT_FLAG:
    if (dest) *(bool *)dest = !(o->flags & PF_OPT_NEGATE);
    return 0;
  case PF_OPT_TEXT:
    if ((o->flags & PF_OPT_NONEMPTY) && !*text) return refuse(why, len, "empty");
    if (o->choices && !choice_of(o, text)) {
      char valid[256];
      pf_opt_choices_text(o, valid, sizeof valid);
      snprintf(why, len, "valid: %s", valid);
      return PF_EINVAL;
    }
    if (dest) *(const char **)dest = text;
    return 0;
  case PF_OPT_INT:
  case PF_OPT_ULONG: {
    long x;
    if ((rc = read_int(o, text, &x, why, len)) < 0) return rc;
    if (dest && o->type == PF_OPT_INT) *(int *)dest = (int)x;
    else if (dest) *(unsigned long *)dest = (unsigned long)x;
    return 0;
  }
  case PF_OPT_NUM:
  case PF_OPT_QTY: {
    double x;
    rc = o->type == PF_OPT_NUM ? read_num(o, text, &x, why, len) : read_qty(o, text, &x, why, len);
    if (rc == 0 && dest) *(double *)dest = x;
    return rc;
  }
  case PF_OPT_CHOICE: {
    const pf_opt_choice *c = choice_of(o, text);
    if (!c) {
      char valid[256];
      pf_opt_choices_text(o, valid, sizeof valid);
      snprintf(why, len, "valid: %s", valid);
      return PF_EINVAL;
    }
    if (dest) memcpy(dest, &c->value, sizeof c->value);
    return 0;
  }
  case PF_OPT_CALLBACK:
    return o->parse ? o->parse(o, text, dest, why, len) : 0;
  }
  return pf_error_set(PF_EINVAL, "option --%s: unknown type %d", o->name, (int)o->type);
}

/* The left column of an entry's help line. */
static void left_column(const pf_opt *o, bool indent_long, char *buf, size_t len) {
  const char *arg = o->arg ? o->arg : "";
  const char *sp = o->arg ? " " : "";
  if (o->name[1] == '\0') snprintf(buf, len, "-%s %s", o->name, arg);
  else if (o->short_name) snprintf(buf, len, "-%c, --%s%s%s", o->short_name, o->name, sp, arg);
  else snprintf(buf, len, "%s--%s%s%s", indent_long ? "    " : "", o->name, sp, arg);
}

void pf_opts_print(FILE *f, const pf_opt *const *tables, int width, int gap) {
  bool shorts = false;
  for (int t = 0; tables[t]; t++)
    for (const pf_opt *o = tables[t]; o->name; o++) shorts |= o->short_name != 0;
  for (int t = 0; tables[t]; t++)
    for (const pf_opt *o = tables[t]; o->name; o++) {
      char left[96];
      left_column(o, shorts, left, sizeof left);
      fprintf(f, "  %-*s%*s%s\n", width, left, gap, "", o->help);
    }
}

void pf_roff_text(FILE *f, const char *text) {
  bool line_start = true, blank = false;
  for (const char *c = text; *c; c++) {
    if (*c == ' ' || *c == '\n' || *c == '\t') { blank = true; continue; }
    if (blank && !line_start) fputc(' ', f);
    blank = false;
    if (line_start && (*c == '.' || *c == '\'')) fputs("\\&", f);
    if (*c == '-') fputs("\\-", f);
    else if (*c == '\\') fputs("\\e", f);
    else fputc(*c, f);
    line_start = false;
  }
}

void pf_opts_print_roff(FILE *f, const pf_opt *const *tables) {
  for (int t = 0; tables[t]; t++)
    for (const pf_opt *o = tables[t]; o->name; o++) {
      fputs(".TP\n\\fB", f);
      if (o->short_name) fprintf(f, "\\-%c\\fR, \\fB", o->short_name);
      pf_roff_text(f, o->name[1] ? "--" : "-");
      pf_roff_text(f, o->name);
      fputs("\\fR", f);
      if (o->arg) {
        fputs(" \\fI", f);
        pf_roff_text(f, o->arg);
        fputs("\\fR", f);
      }
      fputc('\n', f);
      pf_roff_text(f, o->help);
      fputc('\n', f);
    }
}

void pf_opts_print_names(FILE *f, const pf_opt *const *tables) {
  int n = 0;
  for (int t = 0; tables[t]; t++)
    for (const pf_opt *o = tables[t]; o->name; o++) {
      fprintf(f, "%s%s%s", n++ ? " " : "", o->name[1] ? "--" : "-", o->name);
      if (o->short_name) fprintf(f, " -%c", o->short_name);
    }
}
