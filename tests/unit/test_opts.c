/* test_opts.c - the option engine (model/core/opts.c): reading argv against a
 * typed table, converting and range-checking values into a struct, and the
 * option list of --help in both layouts (preflight's and git's). */
#include "check.h"
#include "core/core.h"

#include <limits.h>
#include <stdlib.h>

typedef struct {
  bool verbose;
  int n;
  unsigned long seed;
  double frac, rate_Bps;
  int mode;
  const char *out, *name;
  int twice;
} dest;

static const pf_opt_choice modes[] = {{"fast", 1, false}, {"slow", 2, false}, {"old", 1, true}, {NULL, 0, false}};

/* a callback: the value doubled */
static int twice(const pf_opt *o, const char *text, void *d, char *why, size_t len) {
  (void)o;
  char *end;
  long x = strtol(text, &end, 10);
  if (end == text || *end) { snprintf(why, len, "not a number to double"); return PF_EINVAL; }
  if (d) *(int *)d = (int)(2 * x);
  return 0;
}

#define AT(m) PF_AT(dest, m)
static const pf_opt table[] = {
    {"verbose", NULL, "talk", .type = PF_OPT_FLAG, .at = AT(verbose), .short_name = 'v'},
    {"n", "N", "a count", .type = PF_OPT_INT, .at = AT(n), .lo = 1, .hi = 64},
    {"seed", "S", "a seed", .type = PF_OPT_ULONG, .at = AT(seed), .lo = 0, .hi = INT_MAX},
    {"frac", "F", "a fraction", .type = PF_OPT_NUM, .at = AT(frac), .lo = 0, .hi = 1, .flags = PF_OPT_LO_OPEN},
    {"rate", "BW", "a bandwidth", .type = PF_OPT_QTY, .at = AT(rate_Bps), .unit = PF_UNIT_BANDWIDTH, .hi = 1e12},
    {"mode", "M", "fast|slow", .type = PF_OPT_CHOICE, .at = AT(mode), .choices = modes},
    {"output", "FILE", "where", .type = PF_OPT_TEXT, .at = AT(out), .flags = PF_OPT_NONEMPTY, .short_name = 'o'},
    {"name", "X", "fast or slow, as text", .type = PF_OPT_TEXT, .at = AT(name), .choices = modes},
    {"twice", "K", "doubled", .type = PF_OPT_CALLBACK, .at = AT(twice), .parse = twice},
    {"plain", "P", "no destination", .type = PF_OPT_TEXT},
    PF_OPT_END};
static const pf_opt *const tables[] = {table, NULL};

/* store text as the entry named name says; the reason in why */
static int store(const char *name, const char *text, dest *d, char *why) {
  return pf_opt_store(pf_opt_find(tables, name), text, d, why, 256);
}

static void test_next(void) {
  char *argv[] = {"--n=3", "FILE", "-", "-o", "x.json", "--seed", "7", "-v", "--verbose=1", "--nope", "-vq", "-z",
                  "--output"};
  int argc = (int)(sizeof argv / sizeof *argv), i = 0;
  pf_opts_arg a;
  CHECK_INT(pf_opts_next(argc, argv, &i, tables, &a), PF_OPTS_OK);
  CHECK_STR(a.opt->name, "n");
  CHECK_STR(a.value, "3");
  CHECK_INT(i, 1);
  CHECK_INT(pf_opts_next(argc, argv, &i, tables, &a), PF_OPTS_OK); /* not an option */
  CHECK(a.opt == NULL);
  CHECK_STR(a.value, "FILE");
  CHECK_INT(pf_opts_next(argc, argv, &i, tables, &a), PF_OPTS_OK); /* "-" is not an option either */
  CHECK(a.opt == NULL);
  CHECK_INT(pf_opts_next(argc, argv, &i, tables, &a), PF_OPTS_OK); /* short alias with its value */
  CHECK_STR(a.opt->name, "output");
  CHECK_STR(a.value, "x.json");
  CHECK(a.is_short);
  CHECK_INT(i, 5);
  CHECK_INT(pf_opts_next(argc, argv, &i, tables, &a), PF_OPTS_OK);
  CHECK_STR(a.value, "7");
  CHECK_INT(pf_opts_next(argc, argv, &i, tables, &a), PF_OPTS_OK);
  CHECK(a.opt && a.opt->type == PF_OPT_FLAG && a.value == NULL);
  CHECK_INT(pf_opts_next(argc, argv, &i, tables, &a), PF_OPTS_TAKES_NO_VALUE);
  CHECK_INT(pf_opts_next(argc, argv, &i, tables, &a), PF_OPTS_UNKNOWN);
  CHECK_STR(a.name, "nope");
  CHECK_INT(pf_opts_next(argc, argv, &i, tables, &a), PF_OPTS_UNKNOWN); /* no bundling of short flags */
  CHECK(a.is_short);
  CHECK_INT(pf_opts_next(argc, argv, &i, tables, &a), PF_OPTS_UNKNOWN);
  CHECK_INT(pf_opts_next(argc, argv, &i, tables, &a), PF_OPTS_NEEDS_VALUE);
  CHECK_INT(i, argc);
  char longname[100];
  memset(longname, 'a', sizeof longname - 1);
  longname[0] = longname[1] = '-';
  longname[sizeof longname - 1] = '\0';
  char *one[] = {longname};
  i = 0;
  CHECK_INT(pf_opts_next(1, one, &i, tables, &a), PF_OPTS_NAME_TOO_LONG);
}

static void test_store(void) {
  dest d = {0};
  char why[256];
  CHECK_INT(store("n", "12", &d, why), 0);
  CHECK_INT(d.n, 12);
  CHECK_INT(store("n", "0", &d, why), PF_EINVAL);
  CHECK_STR(why, "must be between 1 and 64");
  CHECK_INT(store("n", "1x", &d, why), PF_EINVAL);
  CHECK_STR(why, "expected an integer");
  CHECK_INT(store("n", "99999999999", &d, why), PF_EINVAL);
  CHECK_STR(why, "out of range for an integer");
  CHECK_INT(d.n, 12); /* a refused value leaves the destination alone */
  CHECK_INT(store("seed", "2147483647", &d, why), 0);
  CHECK(d.seed == 2147483647UL);
  CHECK_INT(store("seed", "-1", &d, why), PF_EINVAL);
  CHECK_STR(why, "must be at least 0");
  CHECK_INT(store("frac", "0.25", &d, why), 0);
  CHECK_NEAR(d.frac, 0.25, 0);
  CHECK_INT(store("frac", "0", &d, why), PF_EINVAL);
  CHECK_STR(why, "must be greater than 0");
  CHECK_INT(store("frac", "2", &d, why), PF_EINVAL);
  CHECK_STR(why, "must be at most 1");
  CHECK_INT(store("frac", "inf", &d, why), PF_EINVAL);
  CHECK_STR(why, "expected a finite number");
  CHECK_INT(store("frac", "", &d, why), PF_EINVAL);
  CHECK_STR(why, "expected a number");
  CHECK_INT(store("rate", "2 GB/s", &d, why), 0);
  CHECK_NEAR(d.rate_Bps, 2e9, 1e-12);
  CHECK_INT(store("rate", "2 GB", &d, why), PF_EINVAL); /* the unit parser's reason */
  CHECK(strstr(why, "2 GB") != NULL);
  CHECK_INT(store("rate", "2 TB/s", &d, why), PF_EINVAL);
  CHECK_STR(why, "must be positive and at most 1e+12 (SI units)");
  CHECK_INT(store("mode", "slow", &d, why), 0);
  CHECK_INT(d.mode, 2);
  CHECK_INT(store("mode", "old", &d, why), 0); /* a hidden spelling is accepted */
  CHECK_INT(d.mode, 1);
  CHECK_INT(store("mode", "medium", &d, why), PF_EINVAL);
  CHECK_STR(why, "valid: fast, slow"); /* and not listed */
  CHECK_INT(store("output", "", &d, why), PF_EINVAL);
  CHECK_INT(store("output", "a.json", &d, why), 0);
  CHECK_STR(d.out, "a.json");
  CHECK_INT(store("name", "fast", &d, why), 0);
  CHECK_STR(d.name, "fast");
  CHECK_INT(store("name", "x", &d, why), PF_EINVAL);
  CHECK_STR(why, "valid: fast, slow");
  CHECK_INT(store("twice", "21", &d, why), 0);
  CHECK_INT(d.twice, 42);
  CHECK_INT(store("twice", "x", &d, why), PF_EINVAL);
  CHECK_STR(why, "not a number to double");
  CHECK_INT(store("verbose", "", &d, why), 0);
  CHECK(d.verbose);
  CHECK_INT(store("plain", "anything", &d, why), 0); /* no destination: nothing written */
  CHECK_INT(store("n", "5", NULL, why), 0);          /* no struct: checked only */
  CHECK_INT(store("n", "65", NULL, why), PF_EINVAL);
  char text[64];
  pf_opt_choices_text(pf_opt_find(tables, "mode"), text, sizeof text);
  CHECK_STR(text, "fast, slow");
}

/* The option list printed into a string. */
static char *print(const pf_opt *const *t, int width, int gap) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  pf_opts_print(f, t, width, gap);
  fclose(f);
  return buf;
}

static void test_print(void) {
  /* with short aliases (git's layout): long-only names line up after "-v, " */
  static const pf_opt some[] = {
      {"verbose", NULL, "talk", .type = PF_OPT_FLAG, .short_name = 'v'},
      {"n", "N", "a count", .type = PF_OPT_INT, .lo = 1, .hi = 64},
      {"seed", "S", "a seed", .type = PF_OPT_ULONG},
      PF_OPT_END};
  const pf_opt *const t1[] = {some, NULL};
  char *s = print(t1, 12, 2);
  CHECK_STR(s, "  -v, --verbose  talk\n"
               "  -n N          a count\n"
               "      --seed S  a seed\n");
  free(s);
  /* without (preflight's): no indent */
  static const pf_opt plain[] = {{"seed", "S", "a seed", .type = PF_OPT_ULONG},
                                 {"o", "FILE", "output", .type = PF_OPT_TEXT},
                                 PF_OPT_END};
  const pf_opt *const t2[] = {plain, NULL};
  s = print(t2, 10, 1);
  CHECK_STR(s, "  --seed S   a seed\n"
               "  -o FILE    output\n");
  free(s);
}

/* did-you-mean for ids and commands (core/error.c, issue 24): a prefix first, else the nearest edits */
static void test_suggest(void) {
  const char *const ids[] = {"jureca-dc-a100", "jureca-dc-h100", "lumi-g", "leonardo-booster", "mn5-acc"};
  char buf[256];
  CHECK_INT(pf_suggest("lumi", ids, 5, buf, sizeof buf), 1);
  CHECK_STR(buf, "did you mean lumi-g?");
  CHECK_INT(pf_suggest("jureca", ids, 5, buf, sizeof buf), 2);
  CHECK_STR(buf, "did you mean jureca-dc-a100 or jureca-dc-h100?");
  CHECK_INT(pf_suggest("mn5-ac", ids, 5, buf, sizeof buf), 1); /* a prefix beats an edit */
  CHECK_INT(pf_suggest("leonrado-booster", ids, 5, buf, sizeof buf), 1);
  CHECK_STR(buf, "did you mean leonardo-booster?");
  CHECK_INT(pf_suggest("frontier", ids, 5, buf, sizeof buf), 0);
  CHECK_STR(buf, "");
  const char *const cmds[] = {"machines", "models", "predict", "sweep", "tune"};
  CHECK_INT(pf_suggest("sweeep", cmds, 5, buf, sizeof buf), 1);
  CHECK_STR(buf, "did you mean sweep?");
}

int main(void) {
  test_suggest();
  test_next();
  test_store();
  test_print();
  return pf_check_done();
}
