/* calibrate_ccl.c - `preflight calibrate --collectives`: times NCCL/RCCL collectives on this node's GPUs
 * (or, under Slurm with one task per GPU, across nodes) with the preflight-cal-ccl back-end
 * (calibrate/ccl/ccl_main.c, which opens the library and the GPU runtime with dlopen) and writes the busbw
 * per op and size as the "collectives" section of a calibration JSON file (-o checked before the run and
 * written through model/core/file.c, as every calibration file is: calibrate/harness/output.c).  `--calibration FILE` then overlays it on the fabric (one node) or the network (several nodes):
 * cclcal.c.  Exit 3 when the back-end cannot run (no executable, library, runtime or GPU), 2 on usage. */
#include "cli.h"

#ifdef PF_HAVE_CALIBRATE
#include "core/core.h"
#include "report/report.h"

#include "pfcal.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>


static const char *usage =
    "usage: preflight calibrate --collectives [--quick|--full] [-b SIZE] [-e SIZE] [-f F] [--library nccl|rccl]\n"
    "                           [--id-file PATH] [-o FILE.json] [--format json]\n\n"
    "Times all_reduce, all_gather, reduce_scatter and sendrecv with NCCL (NVIDIA) or RCCL (AMD), opened at run\n"
    "time, over every GPU of this node; under Slurm with one task per GPU (srun --ntasks-per-node=GPUS) across\n"
    "the allocation's nodes, the tasks meeting through --id-file on a shared file system.  busbw per size goes\n"
    "to the \"collectives\" section of the JSON; `--calibration FILE` overlays it on the node's fabric (one node)\n"
    "or on the network (several nodes).  Exit 3 when no NCCL/RCCL, runtime or GPU is found.\n\n"
    "Examples:\n"
    "  preflight calibrate --collectives --quick -o ccl-node.json\n"
    "  srun -N 2 --ntasks-per-node=4 --gpus-per-task=1 preflight calibrate --collectives --id-file $HOME/ccl.id \\\n"
    "      -o ccl-2nodes.json\n"
    "  preflight collective --machine mn5-acc --nodes 1 --calibration ccl-node.json\n";

void pf_cli_cal_exe(const char *which, char *exe, size_t n) {
  const char *env = getenv("PREFLIGHT_CAL_DIR");
  char dir[PF_PATH_MAX] = ".";
  if (env && *env) snprintf(dir, sizeof dir, "%s", env);
  else if (pf_exe_dir(dir, sizeof dir) < 0) snprintf(dir, sizeof dir, "."); /* core/datadir.c */
  snprintf(exe, n, "%s/preflight-cal-%s", dir, which);
}

int pf_cmd_calibrate_collectives(int argc, char **argv) {
  const char *out = NULL;
  char *args[32];
  int k = 0;
  char exe[PF_PATH_MAX + 32];
  pf_cli_cal_exe("ccl", exe, sizeof exe);
  args[k++] = exe;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--collectives")) continue;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) { fputs(usage, stdout); return 0; }
    if (!strcmp(a, "--quick") || !strcmp(a, "--full")) { args[k++] = argv[i]; continue; }
    const char *fmt = !strncmp(a, "--format=", 9) ? a + 9 : !strcmp(a, "--format") && i + 1 < argc ? argv[++i] : NULL;
    if (fmt) { /* the file is JSON: --format takes that one format, as every command's --format does */
      if (strcmp(fmt, "json") == 0) continue;
      fprintf(stderr, "preflight calibrate: --format \"%s\": valid for `preflight calibrate`: json\n", fmt);
      return 2;
    }
    int takes = !strcmp(a, "-b") || !strcmp(a, "-e") || !strcmp(a, "-f") || !strcmp(a, "--library") ||
                !strcmp(a, "--id-file") || !strcmp(a, "-o");
    if (!takes) {
      fprintf(stderr, "preflight calibrate: --collectives: unknown option \"%s\" (see --collectives --help)\n", a);
      return 2;
    }
    if (i + 1 >= argc) { fprintf(stderr, "preflight calibrate: option %s needs a value\n", a); return 2; }
    if (!strcmp(a, "-o")) { out = argv[++i]; continue; }
    if (k + 2 >= 31) { fprintf(stderr, "preflight calibrate: too many options\n"); return 2; }
    args[k++] = argv[i];
    args[k++] = argv[++i];
  }
  args[k] = NULL;
  pf_output o; /* a bad -o fails now, not after the measurements */
  int orc = pfcal_output_check(out, &o);
  if (orc) return pf_cli_fail("calibrate", orc);
  if (access(exe, X_OK) != 0) {
    fprintf(stderr, "preflight calibrate: the collective back-end is not available: looked for %s (%s); it is built "
                    "with preflight (make build)\n", exe, strerror(errno));
    return 3;
  }
  char *text = NULL;
  size_t len = 0;
  int status, rc, err;
  int src = pf_spawn_capture(exe, args, "the collective back-end", (size_t)64 << 20, &text, &len, &status, &rc, &err);
  if (src == -1) {
    fprintf(stderr, "preflight calibrate: cannot start %s: %s\n", exe, strerror(err));
    return 3;
  }
  if (src < 0) return pf_cli_fail("calibrate", src);
  int code = WIFEXITED(status) ? WEXITSTATUS(status) : 3;
  if (code != 0 || rc < 0) { /* the back-end said why */
    free(text);
    return code == 2 ? 2 : 3;
  }
  if (!text[0]) { free(text); return 0; } /* a Slurm task other than rank 0 */
  cJSON *doc = cJSON_ParseWithLength(text, len);
  free(text);
  const cJSON *sec = doc ? cJSON_GetObjectItemCaseSensitive(doc, "collectives") : NULL;
  if (!sec || !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(sec, "results"))) {
    cJSON_Delete(doc);
    return pf_cli_fail("calibrate", pf_error_set(PF_EIO, "%s wrote no \"collectives\" results; nothing was written", exe));
  }
  /* provenance, as the other back-ends record it */
  cJSON_DeleteItemFromObject(doc, "backend"); /* the rates loader knows cpu/cuda/hip/fit; this file has no rates */
  cJSON_AddItemToObject(doc, "tool", pf_report_tool_json());
  cJSON *prov = cJSON_AddObjectToObject(doc, "provenance");
  char date[32], host[256] = "";
  pfcal_date(date, sizeof date); /* as the other back-ends date their files */
  gethostname(host, sizeof host - 1);
  cJSON_AddStringToObject(prov, "date", date);
  cJSON_AddStringToObject(prov, "host", host);
  cJSON_AddStringToObject(prov, "method", "nccl-tests protocol: warm-up, host-timed iterations, out-of-place; "
                                          "busbw = size / time x 2(n-1)/n, (n-1)/n or 1");
  char *t = pf_report_json_text(doc);
  if (!t) return pf_cli_fail("calibrate", pf_error_set(PF_ENOMEM, "out of memory"));
  rc = pfcal_output_write(&o, t);
  free(t);
  return rc < 0 ? pf_cli_fail("calibrate", rc) : 0;
}
#endif /* PF_HAVE_CALIBRATE */
