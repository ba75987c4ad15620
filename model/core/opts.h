/* opts.h - one typed option table, in the style of git's parse-options.
 *
 * Every command-line option is one row: its name, the placeholder of its
 * value, its help line, its type (flag, integer, number, quantity with a
 * unit, text, choice among names, or a function of its own), the range or
 * the valid values, and where the value goes (an offset into the caller's
 * struct, PF_AT).  One engine reads argv against the rows, converts and
 * range-checks each value, stores it, and prints the option list of --help.
 * `preflight` (model/cli/options.c, whose options are first kept as
 * (name, value) pairs so that a scenario file and a sweep can give them too)
 * and the calibration executables (calibrate/harness/output.c) both use it.
 *
 * The engine finds what is wrong; the caller words the message: it returns a
 * fault (unknown option, missing value ...) or a reason for a refused value
 * ("must be between 1 and 64"), and each front end keeps its own sentences.
 *
 * Tables are arrays ending with an entry whose name is NULL (PF_OPT_END),
 * written with the name, placeholder and help first, then designated fields:
 *   {"tp", "N", "tensor-parallel size", .type = PF_OPT_INT, .at = PF_AT(pf_scenario, plan.tp), .lo = 1, .hi = 65536}
 * This header is C and is included from the calibration back-ends' C++ too.
 */
#ifndef PREFLIGHT_OPTS_H
#define PREFLIGHT_OPTS_H

#include "units.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef enum pf_opt_type {
  PF_OPT_TEXT,     /* the text as given: const char * (borrowed from argv); or the caller reads it */
  PF_OPT_FLAG,     /* no value (arg is NULL): bool, set to true */
  PF_OPT_INT,      /* integer (strtol, base 10): int in [lo, hi] */
  PF_OPT_ULONG,    /* the same syntax and range check, stored as unsigned long (seeds) */
  PF_OPT_NUM,      /* finite number (strtod): double in [lo, hi], or (lo, hi] with PF_OPT_LO_OPEN */
  PF_OPT_QTY,      /* quantity with its unit (pf_units_parse of .unit): SI double in (0, hi] */
  PF_OPT_CHOICE,   /* one of .choices: that choice's value, as int */
  PF_OPT_CALLBACK, /* .parse: the option's own syntax and destination */
} pf_opt_type;

enum {
  PF_OPT_LO_OPEN = 1 << 0,  /* PF_OPT_NUM: the value must be greater than lo */
  PF_OPT_NONEMPTY = 1 << 1, /* PF_OPT_TEXT: "" is refused (file names) */
  PF_OPT_ALIAS = 1 << 2,    /* another name for an entry with the same destination: stored before it
                             * (pf_opts_fill in model/cli), so the entry's own name wins when both are given */
  PF_OPT_NEGATE = 1 << 3,   /* PF_OPT_FLAG "no-NAME": stores false where the flag NAME stores true (a setting
                             * that is on by default turned off); of the two, the one given last wins */
};

/* One valid value of a PF_OPT_CHOICE (or of a PF_OPT_TEXT with a list); lists end with {NULL}. */
typedef struct pf_opt_choice {
  const char *name;
  int value;
  bool hidden; /* accepted but not listed (an older spelling) */
} pf_opt_choice;

typedef struct pf_opt pf_opt;

/* A PF_OPT_CALLBACK's reader: convert text and store it at dest (NULL when
 * the entry has no destination: check only).  Returns 0; or a negative PF_E*
 * code with why filled (what is wrong with the value: the caller names the
 * option); or a negative code with why left empty and the detail set by
 * pf_error_set (passed on as it is). */
typedef int (*pf_opt_parse_fn)(const pf_opt *o, const char *text, void *dest, char *why, size_t len);

struct pf_opt {
  const char *name; /* long name without dashes; a one-letter name is a short option (-o) */
  const char *arg;  /* placeholder of the value in --help; NULL for a flag */
  const char *help; /* the help line (continuation lines indented by the caller) */
  pf_opt_type type;
  size_t at;        /* destination: PF_AT(struct, member); 0: none, the caller reads the option itself */
  double lo, hi;    /* PF_OPT_INT, PF_OPT_ULONG, PF_OPT_NUM: the range; PF_OPT_QTY: the upper bound */
  pf_unit_kind unit; /* PF_OPT_QTY */
  const pf_opt_choice *choices; /* PF_OPT_CHOICE; a PF_OPT_TEXT with choices accepts only those names */
  pf_opt_parse_fn parse;        /* PF_OPT_CALLBACK */
  unsigned flags;               /* PF_OPT_LO_OPEN, PF_OPT_NONEMPTY, PF_OPT_ALIAS, PF_OPT_NEGATE */
  int group;                    /* the caller's grouping (which step fills it, who may give it); 0: none */
  char short_name;              /* one-letter alias of a long name (-q for --quiet); 0: none */
};

/* The destination of a table entry: member of the struct type T (an offset plus one, so that 0 is "none"). */
#define PF_AT(T, member) (offsetof(T, member) + 1)
/* The entry that ends a table. */
#define PF_OPT_END {0}

/* The entry of the NULL-terminated tables named name (its long or one-letter
 * name), the first one found; NULL when there is none. */
const pf_opt *pf_opt_find(const pf_opt *const *tables, const char *name);

/* The index of s among the n names (an enum's name table), compared exactly or, with nocase, ignoring case;
 * -1 when s is NULL or none matches.  Every enum's parse function looks its name up here. */
int pf_name_index(const char *s, const char *const *names, int n, bool nocase);
/* A list of names ("a,b" or "a b", as Megatron's list options are written) as bits: bit i for names[i].  Returns
 * 0 with *out set; PF_NAMES_UNKNOWN with the first unknown name in bad, PF_NAMES_EMPTY, or PF_NAMES_LONG for a
 * list of PF_NAMES_MAX characters or more.  The option's parse function words the message. */
enum { PF_NAMES_MAX = 128, PF_NAMES_UNKNOWN = 1, PF_NAMES_EMPTY, PF_NAMES_LONG };
int pf_name_bits(const char *s, const char *const *names, int n, unsigned *out, char *bad, size_t badlen);
/* pf_name_bits for option opt, its errors worded: PF_EINVAL naming the option, the unknown name and the valid
 * ones (valid), or giving an example list. */
int pf_name_bits_parse(const char *opt, const char *const *names, int n, const char *valid, const char *example,
                       const char *s, unsigned *out);
/* The names of the bits set in m, joined by commas, into buf. */
const char *pf_name_bits_join(unsigned m, const char *const *names, int n, char *buf, size_t len);

/* ---- reading argv ---- */

typedef enum pf_opts_fault {
  PF_OPTS_OK,
  PF_OPTS_UNKNOWN,        /* no entry of that name (a.name: the name as written; a.is_short for "-x") */
  PF_OPTS_NAME_TOO_LONG,  /* a long name longer than any entry can have */
  PF_OPTS_NEEDS_VALUE,    /* the option takes a value and argv ends */
  PF_OPTS_TAKES_NO_VALUE, /* a flag given "--flag=value" */
} pf_opts_fault;

typedef struct pf_opts_arg {
  const pf_opt *opt; /* the entry; NULL for an argument that is not an option ("FILE", "-") */
  const char *text;  /* the argument as written ("--machine=x", "-o", "FILE"); borrowed from argv */
  const char *value; /* the option's value (NULL for a flag), or the argument that is not an option */
  bool is_short;     /* written "-x" */
  char name[64];     /* the option's name as written, without dashes and "=value" */
} pf_opts_arg;

/* Read the argument argv[*i] ("--name=value", "--name value", "-x value",
 * "--flag", or an argument that is not an option) and advance *i past it and
 * its value.  Returns PF_OPTS_OK, or the fault (a is filled as far as it was
 * read, for the caller's message). */
pf_opts_fault pf_opts_next(int argc, char *const *argv, int *i, const pf_opt *const *tables, pf_opts_arg *a);

/* Convert text as o's type and range say and store it at o's destination in
 * base (base may be NULL, or o have no destination: then only checked).
 * Returns 0; PF_EINVAL with why filled for a value the type or range refuses
 * ("expected an integer", "must be between 1 and 64", "valid: a, b"); or
 * what o->parse returns. */
int pf_opt_store(const pf_opt *o, const char *text, void *base, char *why, size_t len);

/* The valid names of o->choices, without the hidden ones: "cpu, cuda, hip". */
void pf_opt_choices_text(const pf_opt *o, char *buf, size_t len);

/* ---- --help ---- */

/* The option list: per entry "  ", the left column ("--name ARG", "-o ARG",
 * or "-q, --quiet" with long-only names indented by four to line up when some
 * entry has a short alias) padded to width, then gap spaces and the help. */
void pf_opts_print(FILE *f, const pf_opt *const *tables, int width, int gap);

/* ---- the same tables for a man page and shell completion (`preflight --man`, `--completion bash`) ---- */

/* Text for roff: '-' and '\' escaped, a line's leading '.' or '\'' guarded, runs of blanks (the
 * continuation lines of a help) joined into one space. */
void pf_roff_text(FILE *f, const char *text);
/* The option list as roff: one ".TP" paragraph per entry (name, value placeholder, help). */
void pf_opts_print_roff(FILE *f, const pf_opt *const *tables);
/* The options' names as a shell word list ("--machine --model ... -o"), space-separated. */
void pf_opts_print_names(FILE *f, const pf_opt *const *tables);

#endif
