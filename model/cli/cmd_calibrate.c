/* cmd_calibrate.c - `preflight calibrate --backend cpu|cuda|hip`.
 *
 * The cpu back-end runs in this process (calibrate/cpu, linked through
 * pfcal).  The cuda and hip back-ends are separate executables
 * (preflight-cal-cuda, preflight-cal-hip) built only where nvcc / hipcc exist,
 * so that the simulator never links a GPU runtime; they are looked up next to
 * this binary (/proc/self/exe), or in $PREFLIGHT_CAL_DIR, run with the same
 * mode options, and their JSON (stdout) is checked and written here through
 * model/core/file.c (-o checked before the run, a temporary file renamed into
 * place), so a failed or interrupted run never touches the user's file; a
 * signal stops the back-end too (interrupt.h).
 * Exit 3 when the back-end is unavailable (no executable, no driver library,
 * no device), with what was looked for and what to do.
 *
 * --gemm has the back-end time the vendor library's GEMMs (calibrate/harness/
 * gemm.c); --for SCENARIO.cfg does that over the shapes the scenario's step
 * launches, which only the simulator knows: they are listed here
 * (pf_scenario_gemm_shapes) into a temporary CSV handed to the back-end as
 * --gemm-shapes, and removed afterwards.
 */
#include "cli.h"
#include "options.h"

#include "core/core.h"
#include "compute/compute.h"
#include "report/report.h"

#ifdef PF_HAVE_CALIBRATE
#include "pfcal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>


static const char *CMD = "calibrate";

/* Directory of the back-end executables: $PREFLIGHT_CAL_DIR or ours. */
static int backend_dir(char *dir, size_t len) {
  const char *env = getenv("PREFLIGHT_CAL_DIR");
  if (env && *env) {
    snprintf(dir, len, "%s", env);
    return 0;
  }
  return pf_exe_dir(dir, len); /* core/datadir.c */
}

static const char *driver_hint(const char *backend) {
  return strcmp(backend, "cuda") == 0 ? "the NVIDIA driver (libcuda.so.1)"
                                      : "the ROCm HIP runtime (libamdhip64.so) and the amdgpu driver";
}

/* Append everything read from fd to a growing buffer. */
static int spawn_backend(const pfcal_args *a, pf_output *out, const char *exe, char **args);

/* The GEMM shapes of scenario cfg into a new temporary CSV; its name in path. */
static int write_scenario_shapes(const char *cfg, char *path, size_t len) {
  pf_scenario *sc = malloc(sizeof *sc);
  pf_gemm_sample *s = NULL;
  int n = 0, rc = sc ? pf_opts_scenario_file(cfg, sc) : pf_error_set(PF_ENOMEM, "out of memory");
  if (!rc) rc = pf_scenario_gemm_shapes(sc, &s, &n);
  free(sc);
  if (rc < 0) return rc;
  if (n == 0) {
    free(s);
    return pf_error_set(PF_EINVAL, "--for %s: the scenario's step launches no GEMM the library can time", cfg);
  }
  const char *tmp = getenv("TMPDIR");
  snprintf(path, len, "%s/preflight-gemm-XXXXXX", tmp && *tmp ? tmp : "/tmp");
  int fd = mkstemp(path);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!f) {
    if (fd >= 0) close(fd);
    free(s);
    return pf_error_set(PF_EIO, "--for: cannot create a temporary file %s: %s", path, strerror(errno));
  }
  fprintf(f, "# GEMM shapes of %s (preflight calibrate --for)\nm,n,k,layout,dtype\n", cfg);
  for (int i = 0; i < n; i++)
    fprintf(f, "%.0f,%.0f,%.0f,%s,%s\n", s[i].m, s[i].n, s[i].k, pf_gemm_layout_name(s[i].layout),
            pf_precision_name(s[i].prec));
  free(s);
  if (fclose(f) != 0) {
    unlink(path);
    return pf_error_set(PF_EIO, "--for: writing %s failed", path);
  }
  fprintf(stderr, "calibrate: %d GEMM shapes of %s\n", n, cfg);
  return 0;
}

static int run_gpu_backend(const pfcal_args *a, pf_output *out) {
  char dir[PF_PATH_MAX], exe[PF_PATH_MAX + 32], shapes[PF_PATH_MAX] = "";
  int rc = backend_dir(dir, sizeof dir);
  if (rc) return pf_cli_fail(CMD, rc);
  /* a --for scenario that is not one run is a usage error, found before the back-end is looked for */
  if (a->for_scenario && (rc = write_scenario_shapes(a->for_scenario, shapes, sizeof shapes)) < 0)
    return pf_cli_fail(CMD, rc);
  snprintf(exe, sizeof exe, "%s/preflight-cal-%s", dir, a->backend);
  if (access(exe, X_OK) != 0) {
    if (shapes[0]) unlink(shapes);
    fprintf(stderr,
            "preflight calibrate: the %s back-end is not available: looked for the executable %s (%s). It is "
            "built only where %s was found when preflight was configured. Rebuild on a machine with %s, run "
            "on a GPU node with such a build, or use --backend cpu.\n",
            a->backend, exe, strerror(errno), strcmp(a->backend, "cuda") == 0 ? "nvcc" : "hipcc",
            strcmp(a->backend, "cuda") == 0 ? "the CUDA toolkit" : "ROCm/hipcc");
    return 3;
  }
  char seed[32], device[32];
  snprintf(seed, sizeof seed, "%lu", a->o.seed);
  snprintf(device, sizeof device, "%d", a->o.device);
  char *args[16];
  int k = 0;
  args[k++] = exe;
  args[k++] = a->o.quick ? "--quick" : "--full";
  args[k++] = "--seed";
  args[k++] = seed;
  args[k++] = "--device";
  args[k++] = device;
  if (!a->o.progress) args[k++] = "--quiet";
  if (a->o.gemm) args[k++] = "--gemm";
  if (a->for_scenario) {
    args[k++] = "--gemm-shapes";
    args[k++] = shapes;
  } else if (a->o.gemm_shapes) {
    args[k++] = "--gemm-shapes";
    args[k++] = (char *)a->o.gemm_shapes;
  }
  args[k] = NULL;
  rc = spawn_backend(a, out, exe, args);
  if (shapes[0]) unlink(shapes);
  return rc;
}

/* Run the back-end executable, check its JSON and write it. */
static int spawn_backend(const pfcal_args *a, pf_output *out, const char *exe, char **args) {
  int rc;

  char *text = NULL;
  size_t len = 0;
  int status, rrc, err;
  rc = pf_spawn_capture(exe, args, "the calibration back-end", (size_t)64 << 20, &text, &len, &status, &rrc, &err);
  if (rc == -1) {
    fprintf(stderr, "preflight calibrate: cannot start %s: %s. Run on a GPU node or use --backend cpu.\n", exe,
            strerror(err));
    return 3;
  }
  if (rc < 0) return pf_cli_fail(CMD, rc);
  if (WIFSIGNALED(status)) {
    free(text);
    fprintf(stderr,
            "preflight calibrate: the %s back-end (%s) died with signal %d; nothing was written. Check %s, "
            "run on another GPU node, or use --backend cpu.\n",
            a->backend, exe, WTERMSIG(status), driver_hint(a->backend));
    return 3;
  }
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
  if (code == 127 || code == 126) {
    free(text);
    fprintf(stderr,
            "preflight calibrate: the %s back-end (%s) could not start: a shared library it needs is "
            "missing (see the loader's message above); it needs %s. Install it, run on a GPU node, or use "
            "--backend cpu.\n",
            a->backend, exe, driver_hint(a->backend));
    return 3;
  }
  if (code != 0) {
    free(text); /* the back-end has printed why */
    return code == 3 ? 3 : 2;
  }
  if (rrc) {
    free(text);
    return pf_cli_fail(CMD, rrc);
  }
  cJSON *doc = cJSON_ParseWithLength(text, len);
  const cJSON *sv = doc ? cJSON_GetObjectItemCaseSensitive(doc, "schema_version") : NULL;
  bool ok = sv && cJSON_IsNumber(sv);
  cJSON_Delete(doc);
  if (!ok) {
    free(text);
    return pf_cli_fail(CMD, pf_error_set(PF_EIO,
                                         "%s wrote output that is not calibration JSON; nothing was "
                                         "written",
                                         exe));
  }
  rc = pfcal_output_write(out, text);
  free(text);
  return rc ? pf_cli_fail(CMD, rc) : 0;
}

static int run_cpu_backend(const pfcal_args *a, pf_output *out) {
  cJSON *doc = NULL;
  int rc = pfcal_run(&pfcal_cpu_backend, &a->o, &doc);
  if (rc) return pf_cli_fail(CMD, rc);
  char *t = pf_report_json_text(doc);
  if (!t) return pf_cli_fail(CMD, pf_error_set(PF_ENOMEM, "out of memory printing the JSON"));
  rc = pfcal_output_write(out, t);
  free(t);
  return rc ? pf_cli_fail(CMD, rc) : 0;
}

const pf_opt *pf_cli_calibrate_options(void) { return pfcal_options(); }

int pf_cmd_calibrate(int argc, char **argv) {
  for (int i = 0; i < argc; i++) /* NCCL/RCCL collectives: their own back-end (calibrate_ccl.c) */
    if (!strcmp(argv[i], "--collectives")) return pf_cmd_calibrate_collectives(argc, argv);
  for (int i = 0; i < argc; i++) /* the host's per-operator costs (calibrate_host.c) */
    if (!strcmp(argv[i], "--host")) return pf_cmd_calibrate_host(argc, argv);
  pfcal_args a;
  int rc = pfcal_parse_args(argc, argv, 0, true, &a);
  if (rc) {
    pf_cli_fail(CMD, rc);
    fprintf(stderr, "usage: preflight calibrate --backend cpu|cuda|hip [--quick|--full] [-o FILE.json] "
                    "(--help for more)\n");
    return 2;
  }
  if (a.help) {
    pfcal_usage(stdout, "preflight calibrate", true);
    return 0;
  }
  /* fail on a bad -o now, not after minutes of measuring */
  pf_output out;
  if ((rc = pfcal_output_check(a.out, &out))) return pf_cli_fail(CMD, rc);
  if (strcmp(a.backend, "cpu") == 0) return run_cpu_backend(&a, &out);
  return run_gpu_backend(&a, &out);
}

#else /* built without calibrate/ */

#include <stdio.h>
#include <string.h>

const pf_opt *pf_cli_calibrate_options(void) { return NULL; }

int pf_cmd_calibrate(int argc, char **argv) {
  for (int i = 0; i < argc; i++)
    if (!strcmp(argv[i], "--collectives")) return pf_cmd_calibrate_collectives(argc, argv);
  for (int i = 0; i < argc; i++)
    if (!strcmp(argv[i], "--host")) return pf_cmd_calibrate_host(argc, argv);
  fprintf(stderr, "preflight calibrate: this build has no calibration harness (calibrate/ was not built); "
                  "rebuild from the full source tree\n");
  return 3;
}
#endif
