/* cmd_calibrate.c - `preflight calibrate --backend cpu|cuda|hip`.
 *
 * The cpu back-end runs in this process (calibrate/cpu, linked through
 * pfcal).  The cuda and hip back-ends are separate executables
 * (preflight-cal-cuda, preflight-cal-hip) built only where nvcc / hipcc exist,
 * so that the simulator never links a GPU runtime; they are looked up next to
 * this binary (/proc/self/exe), or in $PREFLIGHT_CAL_DIR, run with the same
 * mode options, and their JSON (stdout) is checked and written here, through
 * a temporary file and rename, so a failed run never touches the user's file.
 * Exit 3 when the back-end is unavailable (no executable, no driver library,
 * no device), with what was looked for and what to do.
 */
#include "cli.h"

#include "preflight/error.h"
#include "preflight/report.h"

#ifdef PF_HAVE_CALIBRATE
#include "pfcal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

extern char **environ;

static const char *CMD = "calibrate";

/* Directory of the back-end executables: $PREFLIGHT_CAL_DIR or ours. */
static int backend_dir(char *dir, size_t len) {
  const char *env = getenv("PREFLIGHT_CAL_DIR");
  if (env && *env) {
    snprintf(dir, len, "%s", env);
    return 0;
  }
  char self[PF_PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", self, sizeof self - 1);
  if (n <= 0)
    return pf_error_set(PF_ENODEV, "cannot find this program's directory (/proc/self/exe): %s", strerror(errno));
  self[n] = '\0';
  char *slash = strrchr(self, '/');
  if (slash) *slash = '\0';
  snprintf(dir, len, "%s", self);
  return 0;
}

static const char *driver_hint(const char *backend) {
  return strcmp(backend, "cuda") == 0 ? "the NVIDIA driver (libcuda.so.1)"
                                      : "the ROCm HIP runtime (libamdhip64.so) and the amdgpu driver";
}

/* Append everything read from fd to a growing buffer. */
static int slurp(int fd, char **out, size_t *len) {
  size_t cap = 65536, n = 0;
  char *buf = malloc(cap);
  if (!buf) return pf_error_set(PF_ENOMEM, "out of memory");
  for (;;) {
    if (n + 1 >= cap) {
      if (cap >= ((size_t)256 << 20)) {
        free(buf);
        return pf_error_set(PF_EIO, "the back-end wrote more than 256 MiB: not calibration JSON");
      }
      char *nb = realloc(buf, cap * 2);
      if (!nb) {
        free(buf);
        return pf_error_set(PF_ENOMEM, "out of memory");
      }
      buf = nb;
      cap *= 2;
    }
    ssize_t r = read(fd, buf + n, cap - n - 1);
    if (r < 0) {
      if (errno == EINTR) continue;
      free(buf);
      return pf_error_set(PF_EIO, "reading the back-end's output: %s", strerror(errno));
    }
    if (r == 0) break;
    n += (size_t)r;
  }
  buf[n] = '\0';
  *out = buf;
  *len = n;
  return 0;
}

static int run_gpu_backend(const pfcal_args *a) {
  char dir[PF_PATH_MAX], exe[PF_PATH_MAX + 32];
  int rc = backend_dir(dir, sizeof dir);
  if (rc) return pf_cli_fail(CMD, rc);
  snprintf(exe, sizeof exe, "%s/preflight-cal-%s", dir, a->backend);
  if (access(exe, X_OK) != 0) {
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
  char *args[12];
  int k = 0;
  args[k++] = exe;
  args[k++] = a->o.quick ? "--quick" : "--full";
  args[k++] = "--seed";
  args[k++] = seed;
  args[k++] = "--device";
  args[k++] = device;
  if (!a->o.progress) args[k++] = "--quiet";
  args[k] = NULL;

  int fds[2];
  if (pipe(fds) != 0) return pf_cli_fail(CMD, pf_error_set(PF_EIO, "pipe: %s", strerror(errno)));
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_adddup2(&fa, fds[1], STDOUT_FILENO);
  posix_spawn_file_actions_addclose(&fa, fds[0]);
  posix_spawn_file_actions_addclose(&fa, fds[1]);
  pid_t pid;
  int err = posix_spawn(&pid, exe, &fa, NULL, args, environ);
  posix_spawn_file_actions_destroy(&fa);
  close(fds[1]);
  if (err != 0) {
    close(fds[0]);
    fprintf(stderr, "preflight calibrate: cannot start %s: %s. Run on a GPU node or use --backend cpu.\n", exe,
            strerror(err));
    return 3;
  }
  char *text = NULL;
  size_t len = 0;
  int rrc = slurp(fds[0], &text, &len);
  close(fds[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      free(text);
      return pf_cli_fail(CMD, pf_error_set(PF_EIO, "waiting for %s: %s", exe, strerror(errno)));
    }
  }
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
  rc = pfcal_output_write(a->out, text);
  free(text);
  return rc ? pf_cli_fail(CMD, rc) : 0;
}

static int run_cpu_backend(const pfcal_args *a) {
  cJSON *doc = NULL;
  int rc = pfcal_run(&pfcal_cpu_backend, &a->o, &doc);
  if (rc) return pf_cli_fail(CMD, rc);
  char *t = pf_report_json_text(doc);
  if (!t) return pf_cli_fail(CMD, pf_error_set(PF_ENOMEM, "out of memory printing the JSON"));
  rc = pfcal_output_write(a->out, t);
  free(t);
  return rc ? pf_cli_fail(CMD, rc) : 0;
}

int pf_cmd_calibrate(int argc, char **argv) {
  for (int i = 0; i < argc; i++) /* NCCL/RCCL collectives: their own back-end (cmd_calibrate_ccl.c) */
    if (!strcmp(argv[i], "--collectives")) return pf_cmd_calibrate_collectives(argc, argv);
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
  if ((rc = pfcal_output_check(a.out))) return pf_cli_fail(CMD, rc);
  if (strcmp(a.backend, "cpu") == 0) return run_cpu_backend(&a);
  return run_gpu_backend(&a);
}

#else /* built without calibrate/ */

#include <stdio.h>
#include <string.h>

int pf_cmd_calibrate(int argc, char **argv) {
  for (int i = 0; i < argc; i++)
    if (!strcmp(argv[i], "--collectives")) return pf_cmd_calibrate_collectives(argc, argv);
  fprintf(stderr, "preflight calibrate: this build has no calibration harness (calibrate/ was not built); "
                  "rebuild from the full source tree\n");
  return 3;
}
#endif
