/* options.c - option parsing shared by every command and the command-line
 * prologue (see options.h): parse, --help, scenario file, format, output
 * checks before any work, and error reports (JSON on stderr with --format json).
 */
#include "options.h"
#include "preflight/kernel.h"

#include "cli.h"
#include "preflight/error.h"
#include "preflight/machine.h"
#include "preflight/report.h"
#include "preflight/units.h"

#include <ctype.h>
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

const pf_opt pf_scenario_opts[] = {
    {"machine", "ID|PATH.cfg", "machine id (see `preflight machines`) or a machine file"},
    {"model", "ID|PATH.cfg", "built-in workload (see `preflight models`) or a layer-list model file (docs/scenario-format.md)"},
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
    {"input-rate", "RATE", "input pipeline: what one node's storage and loaders deliver, e.g. \"2 GB/s\" (default off)"},
    {"input-sample-time", "TIME", "input pipeline: one GPU's loader time per sample (decode, augment), e.g. \"2 ms\" (default off)"},
    {"sample-bytes", "BYTES", "input bytes per sample for --input-rate (default the model's, e.g. 3.7 MB for maelstrom-ap1-unet)"},
    {"engine", "E", "pipeline engine: simgrid (default) | full | analytic"},
    {"coll-algo", "A", "DP collective algorithm: auto (the library's tuner)|best|ring|tree|hierarchical|rabenseifner|nvls|collnet"},
    {"collective", "A", "alias of --coll-algo"},
    {"coll-proto", "P", "collective protocol: auto|LL|LL128|Simple (default auto: the library's tuner)"},
    {"placement", "P", "node allocation: contiguous (default) | scattered (seeded draw over the partition, --seed)"},
    {"rank-order", "O", "rank order: tp-cp-dp-pp (Megatron's default) | tp-cp-pp-dp (--use-tp-pp-dp-mapping)"},
    {"tp-comm-overlap", NULL, "with --sp: overlap TP all-gather/reduce-scatter with GEMMs (Megatron/TE --tp-comm-overlap)"},
    {"seed", "N", "seed for randomness (printed in JSON)"},
    {"trace", "FILE.json", "write a Chrome/Perfetto trace of the iteration"},
    {"power-cap", "W", "power cap per device, with its package share (e.g. 500 W; default the device's): above it the clock falls"},
    {"train-iters", "N", "iterations of the run (Megatron --train-iters): energy per run next to per iteration"},
    {NULL, NULL, NULL}};

/* `preflight collective` (cmd_collective.c): nccl-tests' names where it has one */
const pf_opt pf_collective_opts[] = {
    {"machine", "ID|PATH.cfg", "machine id (see `preflight machines`) or a machine file"},
    {"op", "OP", "all_reduce (default) | all_gather | reduce_scatter | alltoall | sendrecv"},
    {"nodes", "LIST", "node counts, e.g. 1 or 2,16,128 (default 1)"},
    {"gpus-per-node", "K", "ranks per node (default: every GPU of a node)"},
    {"b", "SIZE", "smallest size in bytes, nccl-tests' -b (K, M, G = 2^10, 2^20, 2^30; default 8)"},
    {"e", "SIZE", "largest size, nccl-tests' -e (default 128M)"},
    {"f", "F", "size factor between rows, nccl-tests' -f (default 2)"},
    {"datatype", "T", "float (default) | half | bfloat16 | double: element size for the count column"},
    {"coll-algo", "A", "auto (the library's tuner, default) | best | ring | tree | hierarchical | rabenseifner | nvls | collnet"},
    {"coll-proto", "P", "auto (default) | LL | LL128 | Simple"},
    {"placement", "P", "node allocation: contiguous (default) | scattered (seeded draw over the partition)"},
    {"seed", "N", "seed of the scattered placement (default 1)"},
    {"calibration", "FILE.json", "overlay measured collectives (preflight calibrate --collectives) on the links"},
    {NULL, NULL, NULL}};

const pf_opt pf_output_opts[] = {
    {"format", "F", "output: table|json|csv (default table, or from -o's suffix); errors as JSON on stderr with json"},
    {"o", "FILE", "write the result to FILE (checked first; replaced atomically; - is stdout)"},
    {"lenient", NULL, "unknown keys in machine, device and scenario files are warnings, not errors"},
    {"help", NULL, "this help"},
    {NULL, NULL, NULL}};

static const pf_opt *find(const pf_opt *const *tables, const char *name) {
  for (int t = 0; tables[t]; t++)
    for (const pf_opt *o = tables[t]; o->name; o++)
      if (strcmp(o->name, name) == 0) return o;
  return NULL;
}

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
    if (a[1] != '-') { /* short options: one letter that a table names (-o, collective's -b -e -f) */
      if (strlen(a) != 2 || !find(tables, a + 1)) return pf_error_set(PF_EINVAL, "unknown option \"%s\" (see --help)", a);
      snprintf(name, sizeof name, "%s", a + 1);
    } else {
      const char *eq = strchr(a + 2, '=');
      size_t len = eq ? (size_t)(eq - a - 2) : strlen(a + 2);
      if (len >= sizeof name) return pf_error_set(PF_EINVAL, "unknown option \"%s\"", a);
      memcpy(name, a + 2, len);
      name[len] = '\0';
      if (eq) val = eq + 1;
    }
    const pf_opt *o = find(tables, name);
    if (!o) {
      const char *near = closest_option(tables, name);
      if (near) return pf_error_set(PF_EINVAL, "unknown option \"%s\"; did you mean --%s? (see --help)", a, near);
      return pf_error_set(PF_EINVAL, "unknown option \"%s\" (see --help)", a);
    }
    if (o->arg == NULL) {
      if (val) return pf_error_set(PF_EINVAL, "option --%s takes no value", name);
      val = "1";
    } else if (!val) {
      if (i + 1 >= argc) return pf_error_set(PF_EINVAL, "option %s needs a value (%s)", a, o->arg);
      val = argv[++i];
    }
    int rc = pf_opts_add(v, o->name, val, "command line");
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
  if (end == s || *end != '\0') return bad_value(v, name, "expected an integer");
  if (errno || x < INT_MIN || x > INT_MAX) return bad_value(v, name, "out of range for an integer");
  *out = (int)x;
  return 1;
}

int pf_opts_double(const pf_optvals *v, const char *name, double *out) {
  const char *s = pf_opts_get(v, name);
  if (!s) return 0;
  char *end;
  errno = 0;
  double x = strtod(s, &end);
  if (strchr(s, ','))
    return bad_value(v, name, "is a list (a sweep axis); this command takes one value (lists are for `preflight sweep`)");
  if (end == s || *end != '\0') return bad_value(v, name, "expected a number");
  if (!isfinite(x) || errno == ERANGE) return bad_value(v, name, "expected a finite number");
  *out = x;
  return 1;
}

int pf_opts_int_range(const pf_optvals *v, const char *name, int lo, int hi, int *out) {
  int x, rc = pf_opts_int(v, name, &x);
  if (rc <= 0) return rc;
  if (x < lo || x > hi) {
    char why[96];
    if (hi == INT_MAX) snprintf(why, sizeof why, "must be at least %d", lo);
    else snprintf(why, sizeof why, "must be between %d and %d", lo, hi);
    return bad_value(v, name, why);
  }
  *out = x;
  return 1;
}

int pf_opts_num_range(const pf_optvals *v, const char *name, double lo, bool lo_open, double hi, double *out) {
  double x;
  int rc = pf_opts_double(v, name, &x);
  if (rc <= 0) return rc;
  if (lo_open ? !(x > lo) : !(x >= lo)) {
    char why[96];
    snprintf(why, sizeof why, "must be %s %g", lo_open ? "greater than" : "at least", lo);
    return bad_value(v, name, why);
  }
  if (x > hi) {
    char why[96];
    snprintf(why, sizeof why, "must be at most %g", hi);
    return bad_value(v, name, why);
  }
  *out = x;
  return 1;
}

/* A quantity with its unit ("2 GB/s", "3 ms"), positive and at most hi in SI units; 0 when absent. */
static int qty_opt(const pf_optvals *v, const char *name, pf_unit_kind kind, double hi, double *out) {
  const char *s = pf_opts_get(v, name);
  if (!s) return 0;
  double x;
  if (pf_units_parse(s, kind, &x) < 0) {
    char why[256];
    snprintf(why, sizeof why, "%s", pf_error_detail());
    return bad_value(v, name, why);
  }
  if (!(x > 0) || x > hi) {
    char why[96];
    snprintf(why, sizeof why, "must be positive and at most %g (SI units)", hi);
    return bad_value(v, name, why);
  }
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

static int flag(const pf_optvals *v, const char *name) { return pf_opts_get(v, name) != NULL; }

/* Upper limits of user-given sizes: a thousand times the largest models and
 * runs published (GPT-4 class ~1.8e12 parameters, ~1e26 FLOPs of training). */
#define PF_MAX_PARAMS 1e15
#define PF_MAX_FLOPS 1e21
#define PF_MAX_BYTES 1e15

int pf_opts_scenario_file(const char *path, pf_scenario *sc) {
  pf_optvals v = {0};
  const pf_opt *const tables[] = {pf_scenario_opts, pf_output_opts, NULL};
  int rc = pf_opts_load_scenario(path, tables, &v);
  if (!rc) rc = pf_opts_scenario(&v, sc);
  pf_opts_free(&v);
  return rc;
}

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
    if ((rc = pf_workload_get(model, w)) < 0) return rc;
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
    if ((rc = pf_opts_num_range(v, "params", 0, true, PF_MAX_PARAMS, &w->params)) < 0) return rc;
    if ((rc = pf_opts_num_range(v, "flops-per-sample", 0, true, PF_MAX_FLOPS, &w->flops_per_sample)) < 0) return rc;
    if ((rc = pf_opts_num_range(v, "act-bytes-per-sample", 0, false, PF_MAX_BYTES, &w->act_bytes_per_sample)) < 0)
      return rc;
    if (!(w->params > 0) || !(w->flops_per_sample > 0))
      return pf_error_set(PF_EINVAL, "a custom model needs --params and --flops-per-sample, both positive");
  } else {
    return pf_error_set(PF_EINVAL, "--model is required (see `preflight models`), or a custom shape");
  }
  /* ranges: far beyond any model trained so far, and small enough that their
   * products stay exact (plan.c and workload.c check the products) */
  if ((rc = pf_opts_int_range(v, "layers", 1, 100000, &w->layers)) < 0 ||
      (rc = pf_opts_int_range(v, "hidden", 1, 1 << 20, &w->hidden)) < 0 ||
      (rc = pf_opts_int_range(v, "heads", 1, 1 << 16, &w->heads)) < 0 ||
      (rc = pf_opts_int_range(v, "ffn-hidden", 1, 1 << 22, &w->ffn_hidden)) < 0 ||
      (rc = pf_opts_int_range(v, "kv-heads", 1, 1 << 16, &w->kv_heads)) < 0 ||
      (rc = pf_opts_int_range(v, "seq", 1, 1 << 24, &w->seq)) < 0 ||
      (rc = pf_opts_int_range(v, "vocab", 1, 1 << 24, &w->vocab)) < 0)
    return rc;
  if ((rc = pf_workload_check(w)) < 0) return rc;

  pf_plan *p = &sc->plan;
  if ((rc = pf_opts_int_range(v, "nodes", 1, 1 << 20, &sc->nodes)) < 0 ||
      (rc = pf_opts_int_range(v, "gpus", 1, 1 << 26, &sc->gpus)) < 0 ||
      (rc = pf_opts_int_range(v, "tp", 1, 1 << 16, &p->tp)) < 0 ||
      (rc = pf_opts_int_range(v, "pp", 1, 1 << 16, &p->pp)) < 0 ||
      (rc = pf_opts_int_range(v, "dp", 1, 1 << 26, &p->dp)) < 0 ||
      (rc = pf_opts_int_range(v, "cp", 1, 1 << 16, &p->cp)) < 0 ||
      (rc = pf_opts_int_range(v, "mbs", 1, 1 << 20, &p->mbs)) < 0 ||
      (rc = pf_opts_int_range(v, "gbs", 1, INT_MAX, &p->gbs)) < 0 ||
      (rc = pf_opts_int_range(v, "grad-accum", 1, INT_MAX, &p->grad_accum)) < 0)
    return rc;
  const char *s;
  if ((s = pf_opts_get(v, "precision")) && (rc = pf_precision_parse(s, &sc->precision)) < 0) return rc;
  if ((rc = pf_device_precision_check(&sc->machine.dev, sc->precision)) < 0) return rc;
  if ((s = pf_opts_get(v, "recompute")) && (rc = pf_recompute_parse(s, &p->recompute)) < 0) return rc;
  if ((s = pf_opts_get(v, "schedule")) && (rc = pf_schedule_parse(s, &p->schedule, &p->vstages)) < 0) return rc;
  if ((s = pf_opts_get(v, "collective")) && (rc = pf_coll_algo_parse(s, &sc->collective)) < 0) return rc;
  if ((s = pf_opts_get(v, "coll-algo")) && (rc = pf_coll_algo_parse(s, &sc->collective)) < 0) return rc;
  if ((s = pf_opts_get(v, "coll-proto")) && (rc = pf_coll_proto_parse(s, &sc->coll_proto)) < 0) return rc;
  if ((s = pf_opts_get(v, "placement")) && (rc = pf_placement_parse(s, &sc->placement)) < 0) return rc;
  if ((s = pf_opts_get(v, "rank-order")) && (rc = pf_rank_order_parse(s, &p->rank_order)) < 0) return rc;
  if ((s = pf_opts_get(v, "host-overhead")) && (rc = pf_host_mode_parse(s, &sc->host_mode)) < 0) return rc;
  if ((s = pf_opts_get(v, "framework")) && (rc = pf_framework_parse(s, &sc->framework)) < 0) return rc;
  if ((rc = qty_opt(v, "input-rate", PF_UNIT_BANDWIDTH, 1e16, &sc->input_rate_Bps)) < 0 ||
      (rc = qty_opt(v, "input-sample-time", PF_UNIT_TIME, 3600, &sc->input_sample_s)) < 0 ||
      (rc = qty_opt(v, "sample-bytes", PF_UNIT_BYTES, 1e15, &sc->sample_bytes)) < 0)
    return rc;
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
  if ((rc = pf_opts_num_range(v, "ddp-bucket-size", 1, false, PF_MAX_PARAMS, &p->ddp_bucket_size)) < 0) return rc;
  p->flash_attn = flag(v, "flash-attn");
  p->tp_across_nodes = flag(v, "tp-across-nodes");
  p->tp_comm_overlap = flag(v, "tp-comm-overlap");
  int seed = 1;
  if ((rc = pf_opts_int_range(v, "seed", 0, INT_MAX, &seed)) < 0) return rc;
  sc->seed = (unsigned long)seed;
  if ((s = pf_opts_get(v, "calibration"))) snprintf(sc->calibration, sizeof sc->calibration, "%s", s);
  sc->calibration_force = flag(v, "force-calibration");
  if ((s = pf_opts_get(v, "trace"))) snprintf(sc->trace, sizeof sc->trace, "%s", s);
  if ((s = pf_opts_get(v, "power-cap"))) { /* "500 W", "0.5 kW" or a plain number of watts */
    char *end;
    double cap = strtod(s, &end);
    if ((end == s || *end) && pf_units_parse(s, PF_UNIT_POWER, &cap) < 0)
      return bad_value(v, "power-cap", "a power such as \"500 W\" or 500 (watts)");
    if (!(cap >= 1 && cap <= 5000)) return bad_value(v, "power-cap", "between 1 W and 5 kW per device");
    sc->power_cap_W = cap;
  }
  if ((rc = pf_opts_num_range(v, "train-iters", 0, true, 1e12, &sc->train_iters)) < 0) return rc;
  return 0;
}

/* The format a name asks for: -1 when unknown. */
static int format_named(const char *f, bool markdown) {
  if (strcmp(f, "table") == 0) return PF_FMT_TABLE;
  if (strcmp(f, "json") == 0) return PF_FMT_JSON;
  if (strcmp(f, "csv") == 0) return PF_FMT_CSV;
  if (markdown && (strcmp(f, "markdown") == 0 || strcmp(f, "md") == 0)) return PF_FMT_MARKDOWN;
  return -1;
}

/* The format -o's suffix implies, or NULL. */
static const char *format_of_suffix(const char *o, bool markdown) {
  size_t n = o ? strlen(o) : 0;
  if (n > 5 && strcmp(o + n - 5, ".json") == 0) return "json";
  if (n > 4 && strcmp(o + n - 4, ".csv") == 0) return "csv";
  if (markdown && n > 3 && strcmp(o + n - 3, ".md") == 0) return "markdown";
  return NULL;
}

int pf_opts_format(const pf_optvals *v, bool markdown, pf_format *fmt) {
  *fmt = PF_FMT_TABLE;
  const char *f = pf_opts_get(v, "format");
  if (!f) f = format_of_suffix(pf_opts_get(v, "o"), markdown);
  if (!f) return 0;
  int k = format_named(f, markdown);
  if (k < 0) return pf_error_set(PF_EINVAL, "--format \"%s\": valid: table, json, csv%s", f, markdown ? ", markdown" : "");
  *fmt = (pf_format)k;
  return 0;
}

void pf_opts_help(FILE *f, const char *usage, const pf_opt *const *tables, const char *examples) {
  fprintf(f, "%s\n\nOptions:\n", usage);
  for (int t = 0; tables[t]; t++)
    for (const pf_opt *o = tables[t]; o->name; o++) {
      char left[64];
      if (strlen(o->name) == 1) snprintf(left, sizeof left, "-%s %s", o->name, o->arg ? o->arg : "");
      else snprintf(left, sizeof left, "--%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
      fprintf(f, "  %-30s %s\n", left, o->help);
    }
  if (examples) fprintf(f, "\nExamples:\n%s", examples);
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
    if (strcmp(argv[i], "-o") == 0) json = format_of_suffix(argv[i + 1], false) == NULL ? json : strcmp(format_of_suffix(argv[i + 1], false), "json") == 0;
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
  if ((rc = pf_opts_format(v, spec->markdown, &cli->fmt)) < 0) return rc;
  errors_as_json = cli->fmt == PF_FMT_JSON;
  /* every file the command will write, checked before any work starts */
  for (size_t k = 0; k < sizeof output_options / sizeof output_options[0]; k++) {
    const char *path = pf_opts_get(v, output_options[k]);
    if (!path) continue;
    char what[32];
    snprintf(what, sizeof what, "%s%s", k == 0 ? "-" : "--", output_options[k]);
    pf_output o;
    if ((rc = pf_output_check(path, what, k == 0 ? &cli->out : &o)) < 0) return rc;
  }
  if (!pf_opts_get(v, "o")) pf_output_check(NULL, "-o", &cli->out);
  return 0;
}

int pf_cli_emit(pf_cli *cli, const char *text) { return pf_output_write(&cli->out, text, strlen(text)); }

int pf_cli_end(pf_cli *cli, int status) {
  pf_opts_free(&cli->v);
  return status;
}
