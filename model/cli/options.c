/* options.c - option parsing shared by every command (see options.h). */
#include "options.h"

#include "preflight/error.h"
#include "preflight/report.h"

#include <ctype.h>
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>

const pf_opt pf_scenario_opts[] = {
    {"machine", "ID|PATH.cfg", "machine id (see `preflight machines`) or a machine file"},
    {"model", "ID", "built-in workload (see `preflight models`)"},
    {"layers", "N", "custom transformer: number of layers"},
    {"hidden", "N", "custom transformer: hidden size"},
    {"heads", "N", "custom transformer: attention heads"},
    {"ffn-hidden", "N", "custom transformer: FFN hidden size (default 4 x hidden, or SwiGLU rule)"},
    {"kv-heads", "N", "custom transformer: key/value heads (GQA; default = heads)"},
    {"seq", "N", "sequence length (overrides the model's)"},
    {"vocab", "N", "vocabulary size"},
    {"swiglu", NULL, "custom transformer: gated MLP (Llama style)"},
    {"params", "N", "custom model: parameter count (e.g. 25.6e6)"},
    {"flops-per-sample", "F", "custom model: forward+backward FLOPs per sample"},
    {"act-bytes-per-sample", "B", "custom model: activation bytes per sample (optional)"},
    {"nodes", "N", "number of nodes"},
    {"gpus", "N", "number of GPUs (logical devices: GCDs on MI250X)"},
    {"tp", "N", "tensor-parallel size (Megatron --tensor-model-parallel-size)"},
    {"pp", "N", "pipeline-parallel size"},
    {"dp", "N", "data-parallel size (derived when absent)"},
    {"cp", "N", "context-parallel size"},
    {"mbs", "N", "micro-batch size"},
    {"gbs", "N", "global batch size"},
    {"grad-accum", "K", "microbatches per iteration (instead of --gbs)"},
    {"precision", "P", "fp32|tf32|fp16|bf16|fp8 (default bf16; --precision=help lists)"},
    {"sp", NULL, "sequence parallelism"},
    {"dist-opt", NULL, "distributed optimizer (ZeRO-1)"},
    {"overlap-grad-reduce", NULL, "overlap the DP gradient reduction, bucket by bucket, with the last backward (Megatron)"},
    {"overlap-param-gather", NULL, "with --dist-opt: overlap the parameter all-gather with the next step's first forward"},
    {"ddp-bucket-size", "N", "gradient bucket size in parameters (default max(40e6, 1e6 x DP), Megatron's)"},
    {"recompute", "MODE", "activation recomputation: none|selective|full"},
    {"schedule", "S", "pipeline schedule: 1f1b|interleaved:V|gpipe"},
    {"flash-attn", NULL, "FlashAttention-style fused attention"},
    {"tp-across-nodes", NULL, "allow TP groups to span nodes"},
    {"calibration", "FILE.json", "overlay measured rates (preflight calibrate or validate --fit)"},
    {"force-calibration", NULL, "apply --calibration even when it was measured or fitted on another machine"},
    {"host-overhead", "MODE", "kernel dispatch: auto|eager|graphs|compiled (default auto: the framework's usual mode)"},
    {"framework", "F", "training framework: auto|megatron|pytorch|tensorflow (default auto)"},
    {"engine", "E", "pipeline engine: simgrid (default) | full | analytic"},
    {"collective", "A", "force the DP collective: auto|ring|tree|hierarchical|rabenseifner"},
    {"seed", "N", "seed for randomness (printed in JSON)"},
    {"trace", "FILE.json", "write a Chrome/Perfetto trace of the iteration"},
    {NULL, NULL, NULL}};

const pf_opt pf_output_opts[] = {
    {"format", "F", "output: table|json|csv (default table, or from -o's suffix)"},
    {"o", "FILE", "write the result to FILE (atomically)"},
    {"help", NULL, "this help"},
    {NULL, NULL, NULL}};

static const pf_opt *find(const pf_opt *const *tables, const char *name) {
  for (int t = 0; tables[t]; t++)
    for (const pf_opt *o = tables[t]; o->name; o++)
      if (strcmp(o->name, name) == 0) return o;
  return NULL;
}

static int add(pf_optvals *v, const char *name, const char *value, const char *source) {
  if (v->n >= PF_MAXVALS) return pf_error_set(PF_EINVAL, "too many options");
  v->name[v->n] = name;
  v->value[v->n] = strdup(value);
  snprintf(v->source[v->n], sizeof v->source[0], "%s", source);
  if (!v->value[v->n]) return pf_error_set(PF_ENOMEM, "out of memory");
  v->n++;
  return 0;
}

int pf_opts_parse(int argc, char **argv, const pf_opt *const *tables, pf_optvals *v) {
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (strcmp(a, "-h") == 0 || strcmp(a, "--help") == 0) { v->help = true; continue; }
    if (a[0] != '-' || strcmp(a, "-") == 0) {
      if (v->npositional >= PF_MAXPOSITIONAL) return pf_error_set(PF_EINVAL, "too many arguments at \"%s\"", a);
      v->positional[v->npositional++] = a;
      continue;
    }
    char name[64];
    const char *val = NULL;
    if (a[1] != '-') { /* short options: only -o */
      if (strcmp(a, "-o") != 0) return pf_error_set(PF_EINVAL, "unknown option \"%s\" (see --help)", a);
      snprintf(name, sizeof name, "o");
    } else {
      const char *eq = strchr(a + 2, '=');
      size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
      if (len >= sizeof name) return pf_error_set(PF_EINVAL, "unknown option \"%s\"", a);
      memcpy(name, a + 2, len);
      name[len] = '\0';
      if (eq) val = eq + 1;
    }
    const pf_opt *o = find(tables, name);
    if (!o) return pf_error_set(PF_EINVAL, "unknown option \"%s\" (see --help)", a);
    if (o->arg == NULL) {
      if (val) return pf_error_set(PF_EINVAL, "option --%s takes no value", name);
      val = "1";
    } else if (!val) {
      if (i + 1 >= argc) return pf_error_set(PF_EINVAL, "option %s needs a value (%s)", a, o->arg);
      val = argv[++i];
    }
    int rc = add(v, o->name, val, "command line");
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
  return add(v, o->name, value, source);
}

const pf_opt *pf_opts_find_scenario(const char *name) {
  const pf_opt *const t[] = {pf_scenario_opts, NULL};
  return find(t, name);
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

static int bad_value(const pf_optvals *v, const char *name, const char *what) {
  const char *src = pf_opts_source(v, name);
  if (strcmp(src, "command line") == 0)
    return pf_error_set(PF_EINVAL, "--%s \"%s\": %s", name, pf_opts_get(v, name), what);
  return pf_error_set(PF_EPARSE, "%s: %s \"%s\": %s", src, name, pf_opts_get(v, name), what);
}

int pf_opts_int(const pf_optvals *v, const char *name, int *out) {
  const char *s = pf_opts_get(v, name);
  if (!s) return 0;
  char *end;
  errno = 0;
  long x = strtol(s, &end, 10);
  if (strchr(s, ','))
    return bad_value(v, name, "is a list (a sweep axis); this command takes one value (lists are for `preflight sweep`)");
  if (end == s || *end != '\0' || errno || x < INT_MIN || x > INT_MAX) return bad_value(v, name, "expected an integer");
  *out = (int)x;
  return 1;
}

int pf_opts_double(const pf_optvals *v, const char *name, double *out) {
  const char *s = pf_opts_get(v, name);
  if (!s) return 0;
  char *end;
  errno = 0;
  double x = strtod(s, &end);
  if (end == s || *end != '\0' || errno || x != x) return bad_value(v, name, "expected a number");
  *out = x;
  return 1;
}

static const pf_opt *const other_commands[] = {pf_scenario_opts, pf_sweep_opts, pf_plan_opts, pf_tune_opts,
                                                 pf_compare_opts, NULL};

/* A scenario file holds `key = value;` settings whose keys are option names
 * with '_' for '-' (libconfig names cannot hold '-'). */
int pf_opts_load_scenario(const char *path, const pf_opt *const *tables, pf_optvals *v) {
  config_t cfg;
  config_init(&cfg);
  if (config_read_file(&cfg, path) != CONFIG_TRUE) {
    int code = config_error_type(&cfg) == CONFIG_ERR_FILE_IO ? PF_ENOENT : PF_EPARSE;
    int rc = code == PF_ENOENT ? pf_error_set(code, "%s: cannot read scenario file", path)
                               : pf_error_set(code, "%s:%d: %s", path, config_error_line(&cfg), config_error_text(&cfg));
    config_destroy(&cfg);
    return rc;
  }
  pf_optvals file = {0};
  config_setting_t *root = config_root_setting(&cfg);
  int rc = 0;
  for (int i = 0; i < config_setting_length(root) && rc == 0; i++) {
    config_setting_t *s = config_setting_get_elem(root, (unsigned)i);
    char name[64], val[PF_PATH_MAX], src[PF_PATH_MAX];
    snprintf(name, sizeof name, "%s", config_setting_name(s));
    for (char *c = name; *c; c++) if (*c == '_') *c = '-';
    snprintf(src, sizeof src, "%s:%d", path, config_setting_source_line(s));
    const pf_opt *o = find(tables, name);
    if (!o && find(other_commands, name)) continue; /* e.g. a sweep axis read by predict */
    if (!o || strcmp(name, "o") == 0) { rc = pf_error_set(PF_EPARSE, "%s: unknown setting \"%s\"", src, config_setting_name(s)); break; }
    switch (config_setting_type(s)) {
    case CONFIG_TYPE_INT: snprintf(val, sizeof val, "%d", config_setting_get_int(s)); break;
    case CONFIG_TYPE_INT64: snprintf(val, sizeof val, "%lld", config_setting_get_int64(s)); break;
    case CONFIG_TYPE_FLOAT: snprintf(val, sizeof val, "%.17g", config_setting_get_float(s)); break;
    case CONFIG_TYPE_STRING: snprintf(val, sizeof val, "%s", config_setting_get_string(s)); break;
    case CONFIG_TYPE_BOOL:
      if (o->arg != NULL) { rc = pf_error_set(PF_EPARSE, "%s: %s: expected a value, not a boolean", src, name); break; }
      if (!config_setting_get_bool(s)) continue;
      snprintf(val, sizeof val, "1");
      break;
    case CONFIG_TYPE_ARRAY: case CONFIG_TYPE_LIST: { /* e.g. nodes = [16, 32, 64] -> "16,32,64" */
      val[0] = '\0';
      for (int k = 0; k < config_setting_length(s); k++) {
        config_setting_t *e = config_setting_get_elem(s, (unsigned)k);
        char one[64];
        if (config_setting_type(e) == CONFIG_TYPE_INT) snprintf(one, sizeof one, "%d", config_setting_get_int(e));
        else if (config_setting_type(e) == CONFIG_TYPE_STRING) snprintf(one, sizeof one, "%s", config_setting_get_string(e));
        else { rc = pf_error_set(PF_EPARSE, "%s: %s: list of integers or strings expected", src, name); break; }
        strncat(val, k ? "," : "", sizeof val - strlen(val) - 1);
        strncat(val, one, sizeof val - strlen(val) - 1);
      }
      break;
    }
    default: rc = pf_error_set(PF_EPARSE, "%s: %s: unsupported value type", src, name);
    }
    if (rc == 0 && o->arg == NULL && config_setting_type(s) != CONFIG_TYPE_BOOL)
      rc = pf_error_set(PF_EPARSE, "%s: %s: expected true or false", src, name);
    if (rc == 0) rc = add(&file, o->name, val, src);
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

static int flag(const pf_optvals *v, const char *name) { return pf_opts_get(v, name) != NULL; }

int pf_opts_scenario(const pf_optvals *v, pf_scenario *sc) {
  pf_scenario_init(sc);
  int rc;
  const char *mach = pf_opts_get(v, "machine");
  if (!mach) return pf_error_set(PF_EINVAL, "--machine is required (see `preflight machines`)");
  if ((rc = pf_machine_load(mach, &sc->machine)) < 0) return rc;

  pf_workload *w = &sc->workload;
  const char *model = pf_opts_get(v, "model");
  /* with --model, --layers/--hidden/--heads change the model's shape */
  bool custom_t = !model && (flag(v, "layers") || flag(v, "hidden") || flag(v, "heads"));
  bool custom_g = flag(v, "params") || flag(v, "flops-per-sample");
  if ((model != NULL) + custom_t + custom_g > 1)
    return pf_error_set(PF_EINVAL, "give one of --model, a custom transformer (--layers/--hidden/--heads), or "
                        "--params with --flops-per-sample");
  if (model) {
    if ((rc = pf_workload_builtin(model, w)) < 0) return rc;
  } else if (custom_t) {
    memset(w, 0, sizeof *w);
    snprintf(w->id, sizeof w->id, "custom-transformer");
    snprintf(w->name, sizeof w->name, "custom transformer");
    w->kind = PF_WL_TRANSFORMER;
    w->swiglu = flag(v, "swiglu");
    w->learned_pos = !w->swiglu;
    w->tied_embeddings = !w->swiglu;
    w->source = "command line";
    if (!flag(v, "layers") || !flag(v, "hidden") || !flag(v, "heads") || !flag(v, "seq") || !flag(v, "vocab"))
      return pf_error_set(PF_EINVAL, "a custom transformer needs --layers, --hidden, --heads, --seq and --vocab");
  } else if (custom_g) {
    memset(w, 0, sizeof *w);
    snprintf(w->id, sizeof w->id, "custom");
    snprintf(w->name, sizeof w->name, "custom model");
    w->kind = PF_WL_GENERIC;
    w->source = "command line";
    if ((rc = pf_opts_double(v, "params", &w->params)) < 0) return rc;
    if ((rc = pf_opts_double(v, "flops-per-sample", &w->flops_per_sample)) < 0) return rc;
    if ((rc = pf_opts_double(v, "act-bytes-per-sample", &w->act_bytes_per_sample)) < 0) return rc;
    if (!(w->params > 0) || !(w->flops_per_sample > 0))
      return pf_error_set(PF_EINVAL, "a custom model needs --params and --flops-per-sample, both positive");
  } else {
    return pf_error_set(PF_EINVAL, "--model is required (see `preflight models`), or a custom shape");
  }
  if ((rc = pf_opts_int(v, "layers", &w->layers)) < 0 || (rc = pf_opts_int(v, "hidden", &w->hidden)) < 0 ||
      (rc = pf_opts_int(v, "heads", &w->heads)) < 0 || (rc = pf_opts_int(v, "ffn-hidden", &w->ffn_hidden)) < 0 ||
      (rc = pf_opts_int(v, "kv-heads", &w->kv_heads)) < 0 || (rc = pf_opts_int(v, "seq", &w->seq)) < 0 ||
      (rc = pf_opts_int(v, "vocab", &w->vocab)) < 0)
    return rc;
  if ((rc = pf_workload_check(w)) < 0) return rc;

  pf_plan *p = &sc->plan;
  if ((rc = pf_opts_int(v, "nodes", &sc->nodes)) < 0 || (rc = pf_opts_int(v, "gpus", &sc->gpus)) < 0 ||
      (rc = pf_opts_int(v, "tp", &p->tp)) < 0 || (rc = pf_opts_int(v, "pp", &p->pp)) < 0 ||
      (rc = pf_opts_int(v, "dp", &p->dp)) < 0 || (rc = pf_opts_int(v, "cp", &p->cp)) < 0 ||
      (rc = pf_opts_int(v, "mbs", &p->mbs)) < 0 || (rc = pf_opts_int(v, "gbs", &p->gbs)) < 0 ||
      (rc = pf_opts_int(v, "grad-accum", &p->grad_accum)) < 0)
    return rc;
  if (flag(v, "nodes") && sc->nodes <= 0) return bad_value(v, "nodes", "must be positive");
  if (flag(v, "gpus") && sc->gpus <= 0) return bad_value(v, "gpus", "must be positive");
  if (flag(v, "gbs") && flag(v, "grad-accum") == 0 && p->gbs <= 0) return bad_value(v, "gbs", "must be positive");
  const char *s;
  if ((s = pf_opts_get(v, "precision")) && (rc = pf_precision_parse(s, &sc->precision)) < 0) return rc;
  if ((s = pf_opts_get(v, "recompute")) && (rc = pf_recompute_parse(s, &p->recompute)) < 0) return rc;
  if ((s = pf_opts_get(v, "schedule")) && (rc = pf_schedule_parse(s, &p->schedule, &p->vstages)) < 0) return rc;
  if ((s = pf_opts_get(v, "collective")) && (rc = pf_coll_algo_parse(s, &sc->collective)) < 0) return rc;
  if ((s = pf_opts_get(v, "host-overhead")) && (rc = pf_host_mode_parse(s, &sc->host_mode)) < 0) return rc;
  if ((s = pf_opts_get(v, "framework")) && (rc = pf_framework_parse(s, &sc->framework)) < 0) return rc;
  if ((s = pf_opts_get(v, "engine"))) {
    if (strcmp(s, "simgrid") == 0 || strcmp(s, "des") == 0) sc->engine = PF_ENGINE_DES;
    else if (strcmp(s, "full") == 0) sc->engine = PF_ENGINE_FULL;
    else if (strcmp(s, "analytic") == 0) sc->engine = PF_ENGINE_ANALYTIC;
    else return bad_value(v, "engine", "valid: simgrid, full, analytic");
  }
  p->sp = flag(v, "sp");
  p->dist_opt = flag(v, "dist-opt");
  p->overlap_grad_reduce = flag(v, "overlap-grad-reduce");
  p->overlap_param_gather = flag(v, "overlap-param-gather");
  if ((rc = pf_opts_double(v, "ddp-bucket-size", &p->ddp_bucket_size)) < 0) return rc;
  if (flag(v, "ddp-bucket-size") && !(p->ddp_bucket_size >= 1))
    return bad_value(v, "ddp-bucket-size", "must be at least 1 (parameters per bucket)");
  p->flash_attn = flag(v, "flash-attn");
  p->tp_across_nodes = flag(v, "tp-across-nodes");
  int seed = 1;
  if ((rc = pf_opts_int(v, "seed", &seed)) < 0) return rc;
  sc->seed = (unsigned long)seed;
  if ((s = pf_opts_get(v, "calibration"))) snprintf(sc->calibration, sizeof sc->calibration, "%s", s);
  sc->calibration_force = flag(v, "force-calibration");
  if ((s = pf_opts_get(v, "trace"))) snprintf(sc->trace, sizeof sc->trace, "%s", s);
  return 0;
}

int pf_opts_format(const pf_optvals *v, pf_format *fmt) {
  *fmt = PF_FMT_TABLE;
  const char *f = pf_opts_get(v, "format");
  const char *o = pf_opts_get(v, "o");
  if (!f && o) {
    size_t n = strlen(o);
    if (n > 5 && strcmp(o + n - 5, ".json") == 0) f = "json";
    else if (n > 4 && strcmp(o + n - 4, ".csv") == 0) f = "csv";
  }
  if (!f || strcmp(f, "table") == 0) return 0;
  if (strcmp(f, "json") == 0) { *fmt = PF_FMT_JSON; return 0; }
  if (strcmp(f, "csv") == 0) { *fmt = PF_FMT_CSV; return 0; }
  return pf_error_set(PF_EINVAL, "--format \"%s\": valid: table, json, csv", f);
}

void pf_opts_help(FILE *f, const char *usage, const pf_opt *const *tables, const char *examples) {
  fprintf(f, "%s\n\nOptions:\n", usage);
  for (int t = 0; tables[t]; t++)
    for (const pf_opt *o = tables[t]; o->name; o++) {
      char left[64];
      if (strcmp(o->name, "o") == 0) snprintf(left, sizeof left, "-o %s", o->arg);
      else snprintf(left, sizeof left, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
      fprintf(f, "  %-30s %s\n", left, o->help);
    }
  if (examples) fprintf(f, "\nExamples:\n%s", examples);
}

int pf_opts_emit(const pf_optvals *v, const char *text) {
  const char *o = pf_opts_get(v, "o");
  if (!o) { fputs(text, stdout); return 0; }
  return pf_write_file_atomic(o, text);
}
