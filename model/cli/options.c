/* options.c - option parsing shared by every command and the command-line
 * prologue (see options.h): argv read by the option engine (core/opts.c)
 * into (name, value) pairs, --help, scenario files, format, output checks
 * before any work, and error reports (JSON on stderr with --format json).
 * (The shared tables: opt_tables.c.  Typed values read from the pairs and the
 * scenario built from them: scenario_opts.c, which calls this file; this file
 * calls nothing there.)
 */
#include "options.h"

#include "cli.h"
#include "comm/comm.h"
#include "core/core.h"
#include "io/io.h"
#include "machine/machine.h"
#include "report/report.h"

#include <ctype.h>
#include <libconfig.h>
#include <stdlib.h>
#include <string.h>

int pf_opts_add(pf_optvals *v, const char *name, const char *value, const char *source) {
  if (v->n >= PF_MAXVALS) return pf_error_set(PF_EINVAL, "too many options");
  v->name[v->n] = name;
  v->value[v->n] = strdup(value);
  snprintf(v->source[v->n], sizeof v->source[0], "%s", source);
  if (!v->value[v->n]) return pf_error_set(PF_ENOMEM, "out of memory");
  v->n++;
  return 0;
}

/* The option name closest to name (a likely typo), or NULL. */
static const char *closest_option(const pf_opt *const *tables, const char *name) {
  const char *names[256];
  int n = 0;
  for (int t = 0; tables[t]; t++)
    for (const pf_opt *o = tables[t]; o->name && n < 256; o++)
      if (strcmp(o->name, "o") != 0) names[n++] = o->name;
  return pf_closest(name, names, n);
}

int pf_opts_parse(int argc, char **argv, const pf_opt *const *tables, pf_optvals *v) {
  for (int i = 0; i < argc;) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) { v->help = true; i++; continue; }
    pf_opts_arg arg;
    switch (pf_opts_next(argc, argv, &i, tables, &arg)) {
    case PF_OPTS_OK: break;
    case PF_OPTS_UNKNOWN: {
      const char *near = arg.is_short ? NULL : closest_option(tables, arg.name);
      if (near) return pf_error_set(PF_EINVAL, "unknown option \"%s\"; did you mean --%s? (see --help)", a, near);
      return pf_error_set(PF_EINVAL, "unknown option \"%s\" (see --help)", a);
    }
    case PF_OPTS_NAME_TOO_LONG: return pf_error_set(PF_EINVAL, "unknown option \"%s\"", a);
    case PF_OPTS_TAKES_NO_VALUE: return pf_error_set(PF_EINVAL, "option --%s takes no value", arg.name);
    case PF_OPTS_NEEDS_VALUE: return pf_error_set(PF_EINVAL, "option %s needs a value (%s)", a, arg.opt->arg);
    }
    if (!arg.opt) { /* an argument: a scenario file, a machine id, shard files */
      if (v->npositional >= PF_MAXPOSITIONAL) return pf_error_set(PF_EINVAL, "too many arguments at \"%s\"", a);
      v->positional[v->npositional++] = a;
      continue;
    }
    int rc = pf_opts_add(v, arg.opt->name, arg.value ? arg.value : "1", "command line");
    if (rc < 0) return rc;
  }
  return 0;
}

int pf_opts_set(pf_optvals *v, const char *name, const char *value) {
  return pf_opts_set_from(v, name, value, "command line");
}

int pf_opts_set_from(pf_optvals *v, const char *name, const char *value, const char *source) {
  const pf_opt *o = pf_opts_find_scenario(name);
  if (!o) return pf_error_set(PF_EINVAL, "\"%s\" is not a scenario option (see --help)", name);
  int k = 0;
  for (int i = 0; i < v->n; i++) {
    if (strcmp(v->name[i], name) == 0) { free(v->value[i]); continue; }
    v->name[k] = v->name[i];
    v->value[k] = v->value[i];
    memmove(v->source[k], v->source[i], sizeof v->source[0]);
    k++;
  }
  v->n = k;
  if (!value) return 0;
  return pf_opts_add(v, o->name, value, source);
}

int pf_opts_set_flag(pf_optvals *v, const char *name, bool on, const char *source) {
  const pf_opt *o = pf_opts_find_scenario(name);
  if (!o) return pf_error_set(PF_EINVAL, "\"%s\" is not a scenario option (see --help)", name);
  char no[72];
  snprintf(no, sizeof no, "no-%s", o->name);
  bool negatable = pf_opts_find_scenario(no) != NULL;
  int rc = negatable ? pf_opts_set_from(v, no, on ? NULL : "1", source) : 0;
  if (rc == 0) rc = pf_opts_set_from(v, o->name, on ? "1" : NULL, source);
  return rc;
}

const pf_opt *pf_opts_find_scenario(const char *name) {
  const pf_opt *const t[] = {pf_scenario_opts, NULL};
  return pf_opt_find(t, name);
}

void pf_opts_free(pf_optvals *v) {
  for (int i = 0; i < v->n; i++) free(v->value[i]);
  v->n = 0;
}

const char *pf_opts_get(const pf_optvals *v, const char *name) {
  for (int i = v->n - 1; i >= 0; i--)
    if (strcmp(v->name[i], name) == 0) return v->value[i];
  return NULL;
}

const char *pf_opts_source(const pf_optvals *v, const char *name) {
  for (int i = v->n - 1; i >= 0; i--)
    if (strcmp(v->name[i], name) == 0) return v->source[i];
  return "command line";
}

static const pf_opt *const other_commands[] = {pf_scenario_opts, pf_sweep_opts, pf_plan_opts, pf_tune_opts,
                                                 pf_compare_opts, NULL};

/* A scenario file holds `key = value;` settings whose keys are option names
 * with '_' for '-' (libconfig names cannot hold '-'). */
int pf_opts_load_scenario(const char *path, const pf_opt *const *tables, pf_optvals *v) {
  config_t cfg;
  int rc = pf_cfg_parse(&cfg, path, "scenario file");
  if (rc < 0) return rc;
  pf_optvals file = {0};
  config_setting_t *root = config_root_setting(&cfg);
  for (int i = 0; i < config_setting_length(root) && rc == 0; i++) {
    config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
    char name[64], val[PF_PATH_MAX], src[PF_PATH_MAX];
    snprintf(name, sizeof name, "%s", config_setting_name(s));
    for (char *c = name; *c; c++) if (*c == '_') *c = '-';
    snprintf(src, sizeof src, "%s:%d", path, config_setting_source_line(s));
    const pf_opt *o = pf_opt_find(tables, name);
    if (!o && pf_opt_find(other_commands, name)) continue; /* e.g. a sweep axis read by predict */
    if (!o || strcmp(name, "o") == 0 || strcmp(name, "help") == 0 || strcmp(name, "lenient") == 0) {
      const char *near = closest_option(tables, name);
      char hint[96] = "";
      if (near) {
        char key[64];
        snprintf(key, sizeof key, "%s", near);
        for (char *c = key; *c; c++) if (*c == '-') *c = '_';
        snprintf(hint, sizeof hint, "; did you mean \"%s\"?", key);
      }
      if (pf_config_lenient()) {
        pf_warn("%s: unknown setting \"%s\" ignored (--lenient)%s", src, config_setting_name(s), hint);
        continue;
      }
      rc = pf_error_set(PF_EPARSE, "%s: unknown setting \"%s\"%s (--lenient makes it a warning)", src,
                        config_setting_name(s), hint);
      break;
    }
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT: case CONFIG_TYPE_INT64: /* 64 bits: the option's own range check sees the real value */
      snprintf(val, sizeof val, "%lld", config_setting_get_int64(s));
      break;
    case CONFIG_TYPE_FLOAT: snprintf(val, sizeof val, "%.17g", config_setting_get_float(s)); break;
    case CONFIG_TYPE_STRING: snprintf(val, sizeof val, "%s", config_setting_get_string(s)); break;
    case CONFIG_TYPE_BOOL:
      if (o->arg != NULL) { rc = pf_error_set(PF_EPARSE, "%s: %s: expected a value, not a boolean", src, name); break; }
      if (!config_setting_get_bool(s)) { /* "sp = false;": off, also where it is on by default (--no-sp) */
        char no[72];
        snprintf(no, sizeof no, "no-%s", o->name);
        if (!(o = pf_opt_find(tables, no))) continue;
      }
      snprintf(val, sizeof val, "1");
      break;
    case CONFIG_TYPE_ARRAY: case CONFIG_TYPE_LIST: { /* e.g. nodes = [16, 32, 64] -> "16,32,64" */
      val[0] = '\0';
      for (int k = 0; k < config_setting_length(s); k++) {
        config_setting_t *e = config_setting_get_elem(s, (unsigned)k);
        char one[64];
        if (config_setting_type(e) == CONFIG_TYPE_INT || config_setting_type(e) == CONFIG_TYPE_INT64)
          snprintf(one, sizeof one, "%lld", config_setting_get_int64(e));
        else if (config_setting_type(e) == CONFIG_TYPE_STRING) snprintf(one, sizeof one, "%s", config_setting_get_string(e));
        else { rc = pf_error_set(PF_EPARSE, "%s: %s: list of integers or strings expected", src, name); break; }
        strncat(val, k ? "," : "", sizeof val - strlen(val) - 1);
        strncat(val, one, sizeof val - strlen(val) - 1);
      }
      break;
    }
    case CONFIG_TYPE_GROUP: /* model = { ... layers = ( ... ); }: a layer list in the scenario, read from it */
      if (strcmp(name, "model") == 0) { snprintf(val, sizeof val, "%s", path); break; }
      rc = pf_error_set(PF_EPARSE, "%s: %s: a group is only allowed for model (a layer list)", src, name);
      break;
    default: rc = pf_error_set(PF_EPARSE, "%s: %s: unsupported value type", src, name);
    }
    if (rc == 0 && o->arg == NULL && config_setting_type(s) != CONFIG_TYPE_BOOL)
      rc = pf_error_set(PF_EPARSE, "%s: %s: expected true or false", src, name);
    if (rc == 0) rc = pf_opts_add(&file, o->name, val, src);
  }
  config_destroy(&cfg);
  if (rc < 0) { pf_opts_free(&file); return rc; }
  /* file settings go first */
  if (file.n + v->n > PF_MAXVALS) { pf_opts_free(&file); return pf_error_set(PF_EINVAL, "too many options"); }
  for (int i = v->n - 1; i >= 0; i--) {
    v->name[i + file.n] = v->name[i];
    v->value[i + file.n] = v->value[i];
    memcpy(v->source[i + file.n], v->source[i], sizeof v->source[0]);
  }
  for (int i = 0; i < file.n; i++) {
    v->name[i] = file.name[i];
    v->value[i] = file.value[i];
    memcpy(v->source[i], file.source[i], sizeof v->source[0]);
  }
  v->n += file.n;
  return 0;
}

int pf_opts_load_scenario_file(const char *path, pf_optvals *v) {
  const pf_opt *const tables[] = {pf_scenario_opts, pf_output_opts, NULL};
  return pf_opts_load_scenario(path, tables, v);
}

/* The suffix of path's last component ("xlsx" of "out.xlsx"): letters and
 * digits after the last dot, a letter first, at most 8; NULL when none. */
static const char *suffix_of(const char *path, char *buf, size_t len) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  const char *dot = strrchr(base, '.');
  if (!dot || dot == base || !isalpha((unsigned char)dot[1]) || strlen(dot + 1) > 8) return NULL;
  for (const char *c = dot + 1; *c; c++) if (!isalnum((unsigned char)*c)) return NULL;
  snprintf(buf, len, "%s", dot + 1);
  for (char *c = buf; *c; c++) *c = (char)tolower((unsigned char)*c);
  return buf;
}

/* Suffixes of text a reader opens: any format may be written under them. */
static bool plain_text_suffix(const char *sfx) {
  static const char *const plain[] = {"txt", "text", "out", "log"};
  for (size_t i = 0; i < sizeof plain / sizeof plain[0]; i++)
    if (strcmp(sfx, plain[i]) == 0) return true;
  return false;
}

/* Is -o the command's document (not machines new's .cfg or validate --fit's overlay)? */
static bool o_is_document(const pf_optvals *v, const pf_cli_spec *spec) {
  const char *o = pf_opts_get(v, "o");
  if (!o || strcmp(o, "-") == 0) return false;
  if (!spec->o_own) return true;
  if (pf_opts_get(v, spec->o_own)) return false;
  for (int i = 0; i < v->npositional; i++)
    if (strcmp(v->positional[i], spec->o_own) == 0) return false;
  return true;
}

int pf_opts_format(const pf_optvals *v, const pf_cli_spec *spec, pf_format *fmt) {
  *fmt = PF_FMT_TABLE;
  char valid[256], sbuf[16];
  const char *given = pf_opts_get(v, "format");
  const char *o = o_is_document(v, spec) ? pf_opts_get(v, "o") : NULL;
  const char *sfx = o ? suffix_of(o, sbuf, sizeof sbuf) : NULL;
  int sk = pf_format_of_ext(sfx);
  pf_format_list_for(valid, sizeof valid, spec->doc, spec->markdown, given == NULL);
  if (given) {
    int k = pf_format_named(given, ~0u); /* any name: whether the command offers it is checked below */
    if (k < 0 || !pf_format_offers((pf_format)k, spec->doc, spec->markdown))
      return pf_error_set(PF_EINVAL, "--format \"%s\": valid: %s", given, valid);
    if (sk >= 0 && sk != k)
      return pf_error_set(PF_EINVAL, "-o %s: the suffix .%s says %s but --format says %s: rename the file, or leave "
                          "--format out to write %s", o, sfx, pf_format_get((pf_format)sk)->name, given,
                          pf_format_get((pf_format)sk)->name);
    *fmt = (pf_format)k;
    return 0;
  }
  if (sk >= 0) {
    if (!pf_format_offers((pf_format)sk, spec->doc, spec->markdown))
      return pf_error_set(PF_EINVAL, "-o %s: `preflight %s` does not write %s; valid: %s", o, spec->cmd,
                          pf_format_get((pf_format)sk)->name, valid);
    *fmt = (pf_format)sk;
    return 0;
  }
  if (sfx && !plain_text_suffix(sfx))
    return pf_error_set(PF_EINVAL, "-o %s: preflight does not write .%s files; `preflight %s` writes %s (a table "
                        "under any other name); give --format F to write one of them under this name", o, sfx,
                        spec->cmd, valid);
  return 0;
}

void pf_cli_expand_data(const char *text, size_t len, const char *root, char *out, size_t outlen) {
  static const char token[] = "@DATA@";
  size_t k = 0, tl = sizeof token - 1;
  for (size_t i = 0; i < len && k + 1 < outlen;) {
    if (i + tl <= len && strncmp(text + i, token, tl) == 0) {
      int w = snprintf(out + k, outlen - k, "%s", root);
      k = w < 0 ? k : k + (size_t)w < outlen ? k + (size_t)w : outlen - 1;
      i += tl;
    } else {
      out[k++] = text[i++];
    }
  }
  out[k < outlen ? k : outlen - 1] = '\0';
}

void pf_opts_help(FILE *f, const char *usage, const pf_opt *const *tables, const char *examples) {
  fprintf(f, "%s\n\nOptions:\n", usage);
  pf_opts_print(f, tables, 30, 1);
  if (!examples) return;
  fprintf(f, "\nExamples:\n");
  char line[2048];
  for (const char *p = examples; *p;) {
    const char *nl = strchr(p, '\n');
    size_t len = nl ? (size_t)(nl - p + 1) : strlen(p);
    pf_cli_expand_data(p, len, pf_data_dir(), line, sizeof line);
    fputs(line, f);
    p += len;
  }
}

/* ---- the prologue ---- */

/* How errors are reported: "preflight CMD: detail" lines, or one JSON
 * document on stderr when the command was asked for JSON. */
static bool errors_as_json;

int pf_cli_fail(const char *cmd, int code) {
  const char *d = pf_error_detail();
  const char *msg = d && *d ? d : pf_strerror(code);
  if (!errors_as_json) {
    fprintf(stderr, "preflight %s: %s\n", cmd, msg);
    return pf_error_exit_code(code);
  }
  cJSON *root = pf_report_root_json();
  cJSON_AddStringToObject(root, "command", cmd);
  cJSON *e = cJSON_AddObjectToObject(root, "error");
  cJSON_AddStringToObject(e, "code", pf_err_name(code));
  cJSON_AddNumberToObject(e, "exit_code", pf_error_exit_code(code));
  cJSON_AddStringToObject(e, "message", msg);
  pf_report_json_print(stderr, root);
  return pf_error_exit_code(code);
}

/* Before parsing: does the command line ask for JSON?  (So that even a bad
 * option is reported as JSON.) */
static bool wants_json(int argc, char **argv) {
  bool json = false;
  for (int i = 0; i + 1 < argc; i++)
    if (strcmp(argv[i], "-o") == 0 && pf_format_of_suffix(argv[i + 1], 0))
      json = pf_format_named(pf_format_of_suffix(argv[i + 1], 0), 0) == PF_FMT_JSON;
  for (int i = 0; i < argc; i++) {
    if (strcmp(argv[i], "--format=json") == 0 || (strcmp(argv[i], "--format") == 0 && i + 1 < argc &&
                                                  strcmp(argv[i + 1], "json") == 0))
      json = true;
    else if (strncmp(argv[i], "--format", 8) == 0)
      json = false;
  }
  return json;
}

/* Options whose value is a file the command writes. */
static const char *const output_options[] = {"o", "trace", "plot"};

/* Does an option read files?  Its placeholder says so: FILE, PATH.cfg, RUNS.csv, DIR|CSV, or a list A,B
 * of machine or model ids or files. */
static bool reads_files(const pf_opt *o) {
  static const char *const marks[] = {"FILE", "PATH", ".cfg", ".csv", "CSV", ".json", "A,B"};
  for (size_t k = 0; o && k < sizeof output_options / sizeof output_options[0]; k++)
    if (strcmp(o->name, output_options[k]) == 0) return false;
  for (size_t i = 0; o && o->arg && i < sizeof marks / sizeof marks[0]; i++)
    if (strstr(o->arg, marks[i])) return true;
  return false;
}

/* Refuse an output that is one of the command's inputs (the same file, through any symbolic or hard link):
 * the arguments (scenario, CSV, shards) and every value of an option that reads files, each element of a
 * comma-separated list too.  Before any work, so the input is never replaced. */
static int output_not_input(const pf_optvals *v, const pf_opt *const *tables, const char *option) {
  const char *out = pf_opts_get(v, option);
  if (!out) return 0;
  char what[32];
  snprintf(what, sizeof what, "%s%s", option[1] ? "--" : "-", option);
  for (int i = 0; i < v->npositional; i++)
    if (pf_same_file(out, v->positional[i]))
      return pf_error_set(PF_EINVAL, "%s %s: is the input file %s of this command; it was left as it is (choose "
                          "another output name)", what, out, v->positional[i]);
  for (int i = 0; i < v->n; i++) {
    const pf_opt *o = pf_opt_find(tables, v->name[i]);
    if (!reads_files(o)) continue;
    char item[PF_PATH_MAX];
    for (const char *p = v->value[i]; *p;) {
      size_t len = strcspn(p, ",");
      snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), p);
      if (pf_same_file(out, item) || pf_same_file(out, v->value[i]))
        return pf_error_set(PF_EINVAL, "%s %s: is the input file of --%s %s; it was left as it is (choose another "
                            "output name)", what, out, v->name[i], item);
      p += len + (p[len] == ',');
    }
  }
  return 0;
}

int pf_cli_begin(const pf_cli_spec *spec, int argc, char **argv, pf_cli *cli) {
  memset(cli, 0, sizeof *cli);
  cli->spec = spec;
  errors_as_json = wants_json(argc, argv);
  pf_config_set_lenient(false);
  const pf_opt *tables[16];
  int nt = 0;
  for (int t = 0; spec->tables && spec->tables[t] && nt < 14; t++) tables[nt++] = spec->tables[t];
  tables[nt++] = pf_output_opts;
  tables[nt] = NULL;
  pf_optvals *v = &cli->v;
  int rc = pf_opts_parse(argc, argv, tables, v);
  if (rc < 0) return rc;
  if (v->help) {
    pf_opts_help(stdout, spec->usage, tables, spec->examples);
    return 1;
  }
  const char *prec = pf_opts_get(v, "precision");
  if (spec->scenario && prec && strcmp(prec, "help") == 0) {
    printf("precisions: fp32 tf32 fp16 bf16 fp8\n");
    return 1;
  }
  const char *algo = pf_opts_get(v, "coll-algo");
  if (algo && strcmp(algo, "help") == 0) { /* the names and summaries of comm's algorithm table */
    printf("collective algorithms (--coll-algo):\n  %-13s %s\n  %-13s %s\n", "auto",
           "the library's tuner: its cheapest (algorithm, protocol) for one group alone (default)", "best",
           "the cheapest algorithm preflight models, costed with every concurrent group");
    for (int a = PF_COLL_FIRST; a < pf_coll_algo_end(); a++)
      printf("  %-13s %s\n", pf_coll_algo_name(a), pf_coll_algo_get(a)->summary ? pf_coll_algo_get(a)->summary : "");
    return 1;
  }
  pf_config_set_lenient(pf_opts_get(v, "lenient") != NULL);
  if (v->npositional > spec->max_positional) {
    if (spec->max_positional == 0)
      return pf_error_set(PF_EINVAL, "unexpected argument \"%s\" (see preflight %s --help)", v->positional[0],
                          spec->cmd);
    return pf_error_set(PF_EINVAL, "too many arguments: \"%s\" (see preflight %s --help)",
                        v->positional[spec->max_positional], spec->cmd);
  }
  if (spec->scenario && v->npositional >= 1 && (rc = pf_opts_load_scenario(v->positional[0], tables, v)) < 0)
    return rc;
  for (size_t k = 0; k < sizeof output_options / sizeof output_options[0]; k++) /* first: the worst mistake */
    if ((rc = output_not_input(v, tables, output_options[k])) < 0) return rc;
  if ((rc = pf_opts_format(v, spec, &cli->fmt)) < 0) return rc;
  errors_as_json = cli->fmt == PF_FMT_JSON;
  /* every file the command will write, checked before any work starts: none is an input or another output */
  const char *written[sizeof output_options / sizeof output_options[0]] = {0};
  char targets[sizeof output_options / sizeof output_options[0]][PF_PATH_MAX];
  for (size_t k = 0; k < sizeof output_options / sizeof output_options[0]; k++) {
    const char *path = pf_opts_get(v, output_options[k]);
    if (!path) continue;
    char what[32];
    snprintf(what, sizeof what, "%s%s", output_options[k][1] ? "--" : "-", output_options[k]);
    pf_output o;
    pf_plot_kind kind; /* a figure: the suffix names its kind (svg, pdf, png) */
    if (strcmp(output_options[k], "plot") == 0 && (rc = pf_plot_kind_of(path, what, &kind)) < 0) return rc;
    pf_output *out = k == 0 ? &cli->out : &o;
    if ((rc = pf_output_check(path, what, out)) < 0) return rc;
    for (size_t j = 0; j < k; j++)
      if (written[j] && (pf_same_file(path, written[j]) || strcmp(out->target, targets[j]) == 0))
        return pf_error_set(PF_EINVAL, "%s %s: is also the file of %s%s; give each output its own name", what, path,
                            j == 0 ? "-" : "--", output_options[j]);
    written[k] = path;
    snprintf(targets[k], sizeof targets[k], "%s", out->target);
  }
  if (!pf_opts_get(v, "o")) pf_output_check(NULL, "-o", &cli->out);
  if (spec->many_predictions && pf_opts_get(v, "trace")) /* each prediction would replace the last one's file */
    return pf_error_set(PF_EINVAL, "--trace writes the timeline of one prediction: use predict, or tune for its best plan");
  return 0;
}

int pf_cli_emit(pf_cli *cli, const char *text) { return pf_output_write(&cli->out, text, strlen(text)); }

int pf_cli_end(pf_cli *cli, int status) {
  pf_opts_free(&cli->v);
  return status;
}
