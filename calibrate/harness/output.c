/* output.c - options, help and atomic output shared by `preflight calibrate`
 * and the GPU back-end executables (preflight-cal-cuda, preflight-cal-hip).
 *
 * One option table drives parsing and --help (git parse-options style, see
 * shared/STYLE.md 6); help ends with copy-pasteable examples.  The JSON goes
 * out through model/core/file.c (checked before the run, written to a temporary
 * file beside the destination and renamed over it), so a reader sees the old
 * file or the whole new one and a failed or interrupted run leaves the user's
 * file alone.
 */
#include "pfcal.h"

#include "core/core.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { OPT_BACKEND, OPT_QUICK, OPT_FULL, OPT_OUTPUT, OPT_SEED, OPT_THREADS, OPT_DEVICE, OPT_GEMM, OPT_GEMM_SHAPES, OPT_FOR,
       OPT_QUIET, OPT_HELP };

typedef struct opt {
  const char *name; /* long name without "--" */
  char short_name;  /* 0 = none */
  const char *arg;  /* NULL = flag */
  const char *help;
  int id;
  bool backend_only; /* only `preflight calibrate` has --backend */
} opt;

static const opt options[] = {
    {"backend", 0, "cpu|cuda|hip", "which back-end measures (required)", OPT_BACKEND, true},
    {"quick", 0, NULL, "quick mode: < 2 min per node, fewer samples and sizes, no power model", OPT_QUICK, false},
    {"full", 0, NULL,
     "full mode (default): < 15 min per node, more samples and copy sizes, and an\n"
     "                              idle/context/max power model where counters are readable",
     OPT_FULL, false},
    {"output", 'o', "FILE",
     "write the JSON to FILE (via a temporary file and rename);\n"
     "                              '-' or no -o: stdout",
     OPT_OUTPUT, false},
    {"seed", 0, "N", "seed of the kernels' input data (default 1)", OPT_SEED, false},
    {"threads", 0, "N", "cpu: worker threads (default: every online core)", OPT_THREADS, false},
    {"device", 0, "N", "GPU for the single-device measurements (default 0)", OPT_DEVICE, false},
    {"gemm", 0, NULL,
     "also time the vendor library's GEMMs (cuBLASLt / rocBLAS, opened at run\n"
     "                              time) over a standard grid of transformer shapes and write\n"
     "                              them as results.gemm, the table `predict --calibration` uses",
     OPT_GEMM, false},
    {"gemm-shapes", 0, "FILE", "with --gemm: time the shapes in FILE (CSV m,n,k,layout,dtype) instead of the grid",
     OPT_GEMM_SHAPES, false},
    {"for", 0, "SCENARIO.cfg",
     "with --gemm (implied): time the GEMMs that scenario's step launches\n"
     "                              (its model, TP, micro-batch and precision) instead of the grid",
     OPT_FOR, true},
    {"quiet", 'q', NULL, "no progress lines on stderr", OPT_QUIET, false},
    {"help", 'h', NULL, "print this help", OPT_HELP, false},
};
enum { NOPT = sizeof options / sizeof options[0] };

void pfcal_usage(FILE *f, const char *prog, bool with_backend) {
  fprintf(f, "usage: %s%s [--quick|--full] [-o FILE.json] [--seed N] [--threads N] [--device N] [--gemm]%s\n\n",
          prog, with_backend ? " --backend cpu|cuda|hip" : "", with_backend ? " [--for SCENARIO.cfg]" : "");
  fprintf(f,
          "Measure what this node's %s really deliver: launch overhead, memory streams\n"
          "(read, write, copy, triad), vector FMA peak per precision, tensor-core peak per\n"
          "precision, host<->device and device<->device copies with an alpha-beta fit per link,\n"
          "and power states where counters are readable.  Writes schema-versioned calibration\n"
          "JSON (docs/calibration.md) that `preflight predict --calibration FILE` overlays on\n"
          "the machine's datasheet values.  Progress goes to stderr.\n\n",
          with_backend ? "devices" : "GPUs");
  fprintf(f, "Options:\n");
  for (int i = 0; i < NOPT; i++) {
    const opt *o = &options[i];
    if (o->backend_only && !with_backend) continue;
    char left[64];
    if (o->short_name)
      snprintf(left, sizeof left, "-%c, --%s%s%s", o->short_name, o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    else
      snprintf(left, sizeof left, "    --%s%s%s", o->name, o->arg ? " " : "", o->arg ? o->arg : "");
    fprintf(f, "  %-26s  %s\n", left, o->help);
  }
  fprintf(f, "\nExit status: 0 done; 2 usage or output error; 3 back-end unavailable (no\n"
             "executable, no driver library, or no device).\n");
  fprintf(f, "\nExamples:\n");
  if (with_backend) {
    fprintf(f, "  %s --backend cpu --quick -o cpu.json\n", prog);
    fprintf(f, "  %s --backend cuda --quick -o node-$(hostname).json      # needs a GPU\n", prog);
    fprintf(f, "  %s --backend hip --full --device 0 -o gcd0-$(hostname).json      # needs a GPU\n", prog);
    fprintf(f, "  %s --backend cuda --gemm -o h100-gemm.json      # needs a GPU\n", prog);
    fprintf(f, "  %s --backend cuda --for scenarios/gpt3-175b-mn5.cfg -o mn5-gemm.json      # needs a GPU\n", prog);
    fprintf(f, "  preflight machines show mn5-acc --calibration node-$(hostname).json      # needs a GPU (its file)\n");
  } else {
    fprintf(f, "  %s --quick -o gpu.json\n", prog);
    fprintf(f, "  %s --full --device 1 > gpu1.json\n", prog);
  }
}

static int parse_long(const char *name, const char *s, long lo, long hi, long *out) {
  char *end;
  errno = 0;
  long v = strtol(s, &end, 10);
  if (end == s || *end || errno || v < lo || v > hi)
    return pf_error_set(PF_EINVAL, "--%s %s: expected an integer in %ld..%ld", name, s, lo, hi);
  *out = v;
  return 0;
}

int pfcal_parse_args(int argc, char **argv, int first, bool with_backend, pfcal_args *a) {
  memset(a, 0, sizeof *a);
  a->o.quick = false;
  a->o.seed = 1;
  a->o.progress = true;
  bool quick = false, full = false;
  for (int i = first; i < argc; i++) {
    const char *arg = argv[i];
    const opt *o = NULL;
    const char *val = NULL;
    if (arg[0] == '-' && arg[1] == '-' && arg[2]) {
      const char *eq = strchr(arg + 2, '=');
      size_t len = eq ? (size_t)(eq - (arg + 2)) : strlen(arg + 2);
      for (int k = 0; k < NOPT; k++)
        if (strlen(options[k].name) == len && strncmp(options[k].name, arg + 2, len) == 0) o = &options[k];
      if (eq) val = eq + 1;
    } else if (arg[0] == '-' && arg[1] && !arg[2]) {
      for (int k = 0; k < NOPT; k++)
        if (options[k].short_name == arg[1]) o = &options[k];
    }
    if (!o || (o->backend_only && !with_backend))
      return pf_error_set(PF_EINVAL, "unknown option '%s' (see --help)", arg);
    if (o->arg && !val) {
      if (i + 1 >= argc) return pf_error_set(PF_EINVAL, "--%s needs a value (%s)", o->name, o->arg);
      val = argv[++i];
    } else if (!o->arg && val) {
      return pf_error_set(PF_EINVAL, "--%s takes no value", o->name);
    }
    long v;
    switch (o->id) {
    case OPT_BACKEND:
      if (strcmp(val, "cpu") && strcmp(val, "cuda") && strcmp(val, "hip"))
        return pf_error_set(PF_EINVAL, "--backend %s: expected one of cpu, cuda, hip", val);
      a->backend = val;
      break;
    case OPT_QUICK:
      quick = true;
      break;
    case OPT_FULL:
      full = true;
      break;
    case OPT_OUTPUT:
      if (!*val) return pf_error_set(PF_EINVAL, "-o: empty file name");
      a->out = val;
      break;
    case OPT_SEED:
      if (parse_long("seed", val, 0, 2147483647L, &v)) return PF_EINVAL;
      a->o.seed = (unsigned long)v;
      break;
    case OPT_THREADS:
      if (parse_long("threads", val, 1, PFCAL_MAX_THREADS, &v)) return PF_EINVAL;
      a->o.threads = (int)v;
      break;
    case OPT_DEVICE:
      if (parse_long("device", val, 0, PFCAL_MAX_DEVICES - 1, &v)) return PF_EINVAL;
      a->o.device = (int)v;
      break;
    case OPT_GEMM:
      a->o.gemm = true;
      break;
    case OPT_GEMM_SHAPES:
      if (!*val) return pf_error_set(PF_EINVAL, "--gemm-shapes: empty file name");
      a->o.gemm_shapes = val;
      a->o.gemm = true;
      break;
    case OPT_FOR:
      if (!*val) return pf_error_set(PF_EINVAL, "--for: empty file name");
      a->for_scenario = val;
      a->o.gemm = true;
      break;
    case OPT_QUIET:
      a->o.progress = false;
      break;
    case OPT_HELP:
      a->help = true;
      break;
    }
  }
  if (quick && full) return pf_error_set(PF_EINVAL, "--quick and --full exclude each other");
  a->o.quick = quick;
  if (with_backend && !a->backend && !a->help)
    return pf_error_set(PF_EINVAL, "--backend is required (cpu, cuda or hip)");
  if (a->o.gemm && a->backend && strcmp(a->backend, "cpu") == 0)
    return pf_error_set(PF_EINVAL, "--gemm (or --for, --gemm-shapes) times the GPU vendor library: use --backend cuda "
                                   "or hip, not cpu");
  if (a->for_scenario && a->o.gemm_shapes)
    return pf_error_set(PF_EINVAL, "--for and --gemm-shapes exclude each other (--for writes the shapes itself)");
  return 0;
}

int pfcal_output_check(const char *path, pf_output *o) { return pf_output_check(path, "-o", o); }

int pfcal_output_write(pf_output *o, const char *text) { return pf_output_write(o, text, strlen(text)); }

int pfcal_main(int argc, char **argv, const pfcal_backend *be) {
  const char *prog = argc > 0 ? argv[0] : "preflight-cal";
  const char *slash = strrchr(prog, '/');
  if (slash) prog = slash + 1;
  pfcal_args a;
  int rc = pfcal_parse_args(argc, argv, 1, false, &a);
  if (rc) {
    fprintf(stderr, "%s: %s\n", prog, pf_error_detail());
    return 2;
  }
  if (a.help) {
    pfcal_usage(stdout, prog, false);
    return 0;
  }
  pf_interrupt_install();
  pf_progress_enable(a.o.progress);
  pf_output out;
  rc = pfcal_output_check(a.out, &out);
  if (rc) {
    fprintf(stderr, "%s: %s\n", prog, pf_error_detail());
    return pf_error_exit_code(rc);
  }
  cJSON *doc = NULL;
  rc = pfcal_run(be, &a.o, &doc);
  if (rc) {
    fprintf(stderr, "%s: %s\n", prog, pf_error_detail());
    return pf_error_exit_code(rc);
  }
  char *text = cJSON_Print(doc);
  cJSON_Delete(doc);
  if (!text) {
    fprintf(stderr, "%s: out of memory while printing the JSON\n", prog);
    return 2;
  }
  size_t len = strlen(text);
  char *nl = malloc(len + 2);
  if (!nl) {
    cJSON_free(text);
    fprintf(stderr, "%s: out of memory\n", prog);
    return 2;
  }
  memcpy(nl, text, len);
  nl[len] = '\n';
  nl[len + 1] = '\0';
  cJSON_free(text);
  rc = pfcal_output_write(&out, nl);
  free(nl);
  if (rc) {
    fprintf(stderr, "%s: %s\n", prog, pf_error_detail());
    return pf_error_exit_code(rc);
  }
  return 0;
}
