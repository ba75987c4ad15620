/* validate_rows.c - a validation row's scenario, built the way the command
 * line builds one: the options given to `preflight validate` (or `plan`) are
 * the defaults, and every non-empty column that names a scenario option
 * (machine, model, nodes, tp, ..., flash_attn, overlap_grad_reduce, cp,
 * host_overhead, ...: the option's name with '_' for '-') overrides them.  So
 * a CSV can describe a run with every flag it ran with, and one name means the
 * same thing in a CSV, a scenario file and on the command line. */
#include "options.h"
#include "validate_cli.h"

#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void option_name(const char *col, char *out, size_t n) {
  snprintf(out, n, "%s", col);
  for (char *c = out; *c; c++) if (*c == '_') *c = '-';
}

int pf_cli_vset_check(const pf_vset *s) {
  for (int i = 0; i < s->nextra; i++) {
    char name[64];
    option_name(s->extra[i], name, sizeof name);
    const pf_opt *o = pf_opts_find_scenario(name);
    if (!o || !strcmp(o->name, "trace") || !strcmp(o->name, "calibration"))
      return pf_error_set(PF_EPARSE, "%s:%d: column \"%s\": neither a validation column nor a scenario option "
                          "(docs/validation.md lists both)", s->path, s->header_line, s->extra[i]);
  }
  return 0;
}

static int parse_flag(const char *v, int *on) {
  if (!strcmp(v, "true") || !strcmp(v, "1") || !strcmp(v, "yes") || !strcmp(v, "True")) { *on = 1; return 0; }
  if (!strcmp(v, "false") || !strcmp(v, "0") || !strcmp(v, "no") || !strcmp(v, "False")) { *on = 0; return 0; }
  return -1;
}

int pf_cli_vrow_build(const pf_vrow *r, void *arg, pf_scenario *sc, char *why, size_t whylen) {
  const pf_vrow_defaults *d = arg;
  pf_optvals v = {0};
  int rc = 0;
  /* the command's scenario options first */
  for (int i = 0; d && d->cli && i < d->cli->n && rc == 0; i++)
    if (pf_opts_find_scenario(d->cli->name[i]) && strcmp(d->cli->name[i], "trace"))
      rc = pf_opts_set_from(&v, d->cli->name[i], d->cli->value[i], d->cli->source[i]);
  /* then the row's columns */
  char src[PF_PATH_MAX + 16];
  snprintf(src, sizeof src, "%s:%d", d && d->path ? d->path : "row", r->line);
  for (int i = 0; i < r->nopt && rc == 0; i++) {
    char name[64];
    option_name(r->opt_name[i], name, sizeof name);
    const pf_opt *o = pf_opts_find_scenario(name);
    if (!o) { rc = pf_error_set(PF_EPARSE, "%s: column %s is not a scenario option", src, r->opt_name[i]); break; }
    const char *val = r->opt_value[i];
    if (o->arg == NULL) { /* a flag: true sets it, false clears it (also when the command line set it, and
                           * where it is on by default: --no-X) */
      int on;
      if (parse_flag(val, &on) < 0) {
        rc = pf_error_set(PF_EPARSE, "%s: %s \"%s\": expected true or false", src, r->opt_name[i], val);
        break;
      }
      rc = pf_opts_set_flag(&v, o->name, on, src);
      continue;
    }
    rc = pf_opts_set_from(&v, o->name, val, src);
  }
  /* a row that names no workload cannot be predicted (it is not an error in the file) */
  if (rc == 0 && !pf_opts_get(&v, "model") && !pf_opts_get(&v, "layers") && !pf_opts_get(&v, "params")) {
    snprintf(why, whylen, "no model: give model, a transformer shape, or params and flops_per_sample");
    pf_opts_free(&v);
    return 1;
  }
  if (rc == 0) rc = pf_opts_scenario(&v, sc);
  pf_opts_free(&v);
  return rc;
}

pf_validate_opts pf_cli_validate_opts(const pf_optvals *cli, pf_vrow_defaults *d, const char *path) {
  d->cli = cli;
  d->path = path;
  pf_validate_opts o = {pf_opts_get(cli, "calibration"), NULL, pf_cli_vrow_build, d, false};
  return o;
}
