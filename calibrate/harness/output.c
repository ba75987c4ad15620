/* output.c - options, help and atomic output shared by `preflight calibrate`
 * and the GPU back-end executables (preflight-cal-cuda, preflight-cal-hip).
 *
 * One typed option table drives parsing, the values' types and ranges and
 * --help, read by the option engine of model/core/opts.c that `preflight`
 * uses too (git parse-options style, see shared/STYLE.md 6); the messages
 * keep these executables' wording; help ends with copy-pasteable examples.
 * The JSON goes out through model/core/file.c (checked before the run,
 * written to a temporary file beside the destination and renamed over it), so
 * a reader sees the old file or the whole new one and a failed or interrupted
 * run leaves the user's file alone.
 */
#include "pfcal.h"

#include "core/core.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Who may give an entry: `preflight calibrate` only (the executables have no --backend and no --for). */
enum { CMD_ONLY = 1 };

static const pf_opt_choice backends[] = {{"cpu", 0, false}, {"cuda", 1, false}, {"hip", 2, false}, {NULL, 0, false}};
/* The calibration file is JSON (docs/calibration.md): --format takes that one format, as every command's
 * --format does, and names it when asked for another (docs/exit-codes.md, "Output formats and -o"). */
static const pf_opt_choice formats[] = {{"json", 0, false}, {NULL, 0, false}};

#define ARG(member) PF_AT(pfcal_args, member)

static const pf_opt options[] = {
    {"backend", "cpu|cuda|hip", "which back-end measures (required)", .type = PF_OPT_TEXT, .at = ARG(backend),
     .choices = backends, .group = CMD_ONLY},
    {"quick", NULL, "quick mode: < 2 min per node, fewer samples and sizes, no power model", .type = PF_OPT_FLAG,
     .at = ARG(o.quick)},
    {"full", NULL,
     "full mode (default): < 15 min per node, more samples and copy sizes, and an\n"
     "                              idle/context/max power model where counters are readable",
     .type = PF_OPT_FLAG, .at = ARG(full)},
    {"output", "FILE",
     "write the JSON to FILE (via a temporary file and rename);\n"
     "                              '-' or no -o: stdout",
     .type = PF_OPT_TEXT, .at = ARG(out), .flags = PF_OPT_NONEMPTY, .short_name = 'o'},
    {"format", "F", "output format: json (the calibration file; the only one)", .type = PF_OPT_TEXT,
     .choices = formats},
    {"seed", "N", "seed of the kernels' input data (default 1)", .type = PF_OPT_ULONG, .at = ARG(o.seed), .lo = 0,
     .hi = 2147483647L},
    {"threads", "N", "cpu: worker threads (default: every online core)", .type = PF_OPT_INT, .at = ARG(o.threads),
     .lo = 1, .hi = PFCAL_MAX_THREADS},
    {"device", "N", "GPU for the single-device measurements (default 0)", .type = PF_OPT_INT, .at = ARG(o.device),
     .lo = 0, .hi = PFCAL_MAX_DEVICES - 1},
    {"gemm", NULL,
     "also time the vendor library's GEMMs (cuBLASLt / rocBLAS, opened at run\n"
     "                              time) over a standard grid of transformer shapes and write\n"
     "                              them as results.gemm, the table `predict --calibration` uses",
     .type = PF_OPT_FLAG, .at = ARG(o.gemm)},
    {"gemm-shapes", "FILE", "with --gemm: time the shapes in FILE (CSV m,n,k,layout,dtype) instead of the grid",
     .type = PF_OPT_TEXT, .at = ARG(o.gemm_shapes), .flags = PF_OPT_NONEMPTY},
    {"for", "SCENARIO.cfg",
     "with --gemm (implied): time the GEMMs that scenario's step launches\n"
     "                              (its model, TP, micro-batch and precision) instead of the grid",
     .type = PF_OPT_TEXT, .at = ARG(for_scenario), .flags = PF_OPT_NONEMPTY, .group = CMD_ONLY},
    {"quiet", NULL, "no progress lines on stderr", .type = PF_OPT_FLAG, .at = ARG(quiet), .short_name = 'q'},
    {"help", NULL, "print this help", .type = PF_OPT_FLAG, .at = ARG(help), .short_name = 'h'},
};
enum { NOPT = sizeof options / sizeof options[0] };

/* The entries prog accepts (with_backend: `preflight calibrate`), ended by PF_OPT_END. */
static void table_for(bool with_backend, pf_opt out[NOPT + 1]) {
  int n = 0;
  for (int i = 0; i < NOPT; i++)
    if (with_backend || options[i].group != CMD_ONLY) out[n++] = options[i];
  out[n] = (pf_opt)PF_OPT_END;
}

const pf_opt *pfcal_options(void) {
  static pf_opt table[NOPT + 1];
  table_for(true, table);
  return table;
}

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
  pf_opt table[NOPT + 1];
  table_for(with_backend, table);
  const pf_opt *const tables[] = {table, NULL};
  pf_opts_print(f, tables, 26, 2);
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

/* The message for a value o refuses (the wording of these executables since they were written). */
static int bad_value(const pf_opt *o, const char *val) {
  char valid[64];
  switch (o->type) {
  case PF_OPT_INT:
  case PF_OPT_ULONG:
    return pf_error_set(PF_EINVAL, "--%s %s: expected an integer in %ld..%ld", o->name, val, (long)o->lo, (long)o->hi);
  default:
    if ((o->flags & PF_OPT_NONEMPTY) && !*val) {
      if (o->short_name) return pf_error_set(PF_EINVAL, "-%c: empty file name", o->short_name);
      return pf_error_set(PF_EINVAL, "--%s: empty file name", o->name);
    }
    pf_opt_choices_text(o, valid, sizeof valid);
    return pf_error_set(PF_EINVAL, "--%s %s: expected one of %s", o->name, val, valid);
  }
}

/* Read argv[first..argc) into a, as the table says. */
static int read_args(int argc, char **argv, int first, const pf_opt *const *tables, pfcal_args *a) {
  for (int i = first; i < argc;) {
    const char *arg = argv[i];
    pf_opts_arg x;
    pf_opts_fault f = pf_opts_next(argc, argv, &i, tables, &x);
    if (f == PF_OPTS_TAKES_NO_VALUE) return pf_error_set(PF_EINVAL, "--%s takes no value", x.opt->name);
    if (f == PF_OPTS_NEEDS_VALUE) return pf_error_set(PF_EINVAL, "--%s needs a value (%s)", x.opt->name, x.opt->arg);
    if (f != PF_OPTS_OK || !x.opt) return pf_error_set(PF_EINVAL, "unknown option '%s' (see --help)", arg);
    char why[256];
    int rc = pf_opt_store(x.opt, x.value ? x.value : "", a, why, sizeof why);
    if (rc < 0) return why[0] ? bad_value(x.opt, x.value) : rc;
  }
  return 0;
}

int pfcal_parse_args(int argc, char **argv, int first, bool with_backend, pfcal_args *a) {
  memset(a, 0, sizeof *a);
  a->o.seed = 1;
  pf_opt table[NOPT + 1];
  table_for(with_backend, table);
  const pf_opt *const tables[] = {table, NULL};
  int rc = read_args(argc, argv, first, tables, a);
  if (rc < 0) return rc;
  a->o.progress = !a->quiet;
  if (a->o.gemm_shapes || a->for_scenario) a->o.gemm = true; /* both imply --gemm */
  if (a->o.quick && a->full) return pf_error_set(PF_EINVAL, "--quick and --full exclude each other");
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
