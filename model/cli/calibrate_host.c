/* calibrate_host.c - `preflight calibrate --host`: what this node's host costs
 * the GPU (compute/hostqueue.c).  Two measurements, each where it can run:
 *  - the kernel launch time of the CUDA/HIP back-end (preflight-cal-cuda or
 *    -hip --quick: results.launch_latency_s, back-to-back empty kernels);
 *  - when a PyTorch with a GPU is importable (python3, or $PREFLIGHT_PYTHON),
 *    the host time of one eager forward operator and of one autograd backward
 *    node, from a tiny script: a chain of N element-wise multiplies on a
 *    16-element tensor that requires grad (the GPU work is negligible, so the
 *    wall time over N is the host's), then its backward over the same N nodes.
 * The result is a calibration JSON with results.host {torch_fwd_op_s,
 * torch_bwd_op_s, torch_version} (and results.launch_latency_s when the
 * back-end ran) that `predict --calibration` applies to eager PyTorch.
 * Exit 3 when neither can run (no back-end, no PyTorch with a GPU), with what
 * was looked for; 2 on usage. */
#include "cli.h"

#ifdef PF_HAVE_CALIBRATE
#include "core/core.h"
#include "report/report.h"

#include "pfcal.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *usage =
    "usage: preflight calibrate --host [--backend cuda|hip] [-o FILE.json]\n\n"
    "Measures what this node's host costs the GPU: the kernel launch time (the CUDA/HIP back-end) and, when a\n"
    "PyTorch with a GPU is importable (python3, or $PREFLIGHT_PYTHON), the host time of one eager forward\n"
    "operator and one autograd backward node.  Writes results.host of a calibration JSON, which\n"
    "`predict --calibration FILE` applies to eager PyTorch.  Exit 3 when neither can run here.\n\n"
    "Examples:\n"
    "  preflight calibrate --host -o host-$(hostname).json      # needs a GPU\n";

/* N multiplies forward, then backward through them; the GPU work of each is a 16-element kernel */
static const char *script =
    "import json, time, torch\n"
    "if not torch.cuda.is_available(): raise SystemExit(3)\n"
    "N = 2000\n"
    "x = torch.zeros(16, device='cuda', requires_grad=True)\n"
    "def run():\n"
    "    torch.cuda.synchronize(); t0 = time.perf_counter(); y = x\n"
    "    for _ in range(N): y = y * 1.0001\n"
    "    torch.cuda.synchronize(); t1 = time.perf_counter()\n"
    "    y.sum().backward(); torch.cuda.synchronize(); t2 = time.perf_counter()\n"
    "    return (t1 - t0) / N, (t2 - t1) / N\n"
    "run()\n"
    "r = sorted(run() for _ in range(5))[2]\n"
    "print(json.dumps({'torch_version': torch.__version__, 'device': torch.cuda.get_device_name(0),\n"
    "                  'fwd_op_s': r[0], 'bwd_op_s': r[1]}))\n";

/* Run exe args, its stdout parsed as JSON into *doc (NULL when it could not run or printed no JSON). */
static void run_json(const char *exe, char **args, const char *what, cJSON **doc) {
  char *text = NULL;
  size_t len = 0;
  int status, rrc, err;
  *doc = NULL;
  int rc = pf_spawn_capture(exe, args, what, (size_t)16 << 20, &text, &len, &status, &rrc, &err);
  if (rc == 0 && rrc == 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0 && text) *doc = cJSON_Parse(text);
  free(text);
}

static double num(const cJSON *o, const char *k) {
  const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
  return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* The launch latency (median) and device name from the GPU back-end's --quick run. */
static const char *backend_launch(const char *backend, double *launch_s, char *dev, size_t ndev) {
  static char exe[PF_PATH_MAX + 32];
  pf_cli_cal_exe(backend, exe, sizeof exe);
  if (access(exe, X_OK) != 0) return exe;
  char *args[] = {exe, "--quick", "--quiet", NULL};
  cJSON *doc;
  run_json(exe, args, "the calibration back-end", &doc);
  const cJSON *res = cJSON_GetObjectItemCaseSensitive(doc, "results");
  const cJSON *ll = cJSON_GetObjectItemCaseSensitive(res, "launch_latency_s");
  *launch_s = cJSON_IsNumber(ll) ? ll->valuedouble : num(ll, "median");
  const cJSON *d = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(doc, "device"), "name");
  if (cJSON_IsString(d)) snprintf(dev, ndev, "%s", d->valuestring);
  cJSON_Delete(doc);
  return exe;
}

static char *document(const char *backend, const char *dev, double launch_s, const cJSON *torch) {
  cJSON *root = cJSON_CreateObject();
  cJSON_AddNumberToObject(root, "schema_version", PF_SCHEMA_VERSION);
  cJSON_AddStringToObject(root, "backend", backend);
  cJSON_AddObjectToObject(root, "device");
  cJSON_AddStringToObject(cJSON_GetObjectItem(root, "device"), "name", dev);
  cJSON *res = cJSON_AddObjectToObject(root, "results");
  if (launch_s > 0) cJSON_AddNumberToObject(cJSON_AddObjectToObject(res, "launch_latency_s"), "median", launch_s);
  if (torch) {
    cJSON *h = cJSON_AddObjectToObject(res, "host");
    cJSON_AddNumberToObject(h, "torch_fwd_op_s", num(torch, "fwd_op_s"));
    cJSON_AddNumberToObject(h, "torch_bwd_op_s", num(torch, "bwd_op_s"));
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(torch, "torch_version");
    cJSON_AddStringToObject(h, "torch_version", cJSON_IsString(v) ? v->valuestring : "?");
  }
  return pf_report_json_text(root); /* frees root */
}

int pf_cmd_calibrate_host(int argc, char **argv) {
  const char *out = NULL, *backend = "cuda";
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "--host")) continue;
    if (!strcmp(a, "--help") || !strcmp(a, "-h")) { fputs(usage, stdout); return 0; }
    if ((!strcmp(a, "-o") || !strcmp(a, "--backend")) && i + 1 >= argc) {
      fprintf(stderr, "preflight calibrate: option %s needs a value\n", a);
      return 2;
    }
    if (!strcmp(a, "-o")) out = argv[++i];
    else if (!strcmp(a, "--backend")) backend = argv[++i];
    else {
      fprintf(stderr, "preflight calibrate: --host: unknown option \"%s\" (see --host --help)\n", a);
      return 2;
    }
  }
  if (strcmp(backend, "cuda") && strcmp(backend, "hip")) {
    fprintf(stderr, "preflight calibrate: --host --backend \"%s\": valid: cuda, hip\n", backend);
    return 2;
  }
  pf_output o; /* a bad -o fails now, not after the measurements */
  int rc = pfcal_output_check(out, &o);
  if (rc) return pf_cli_fail("calibrate", rc);
  double launch_s = 0;
  char dev[PF_NAME_MAX] = "";
  const char *exe = backend_launch(backend, &launch_s, dev, sizeof dev);
  const char *py = getenv("PREFLIGHT_PYTHON");
  char *pargs[] = {(char *)(py && *py ? py : "/usr/bin/env"), "python3", "-c", (char *)script, NULL};
  char *qargs[] = {(char *)py, "-c", (char *)script, NULL};
  cJSON *torch;
  run_json(pargs[0], py && *py ? qargs : pargs, "the PyTorch probe", &torch);
  if (!(num(torch, "fwd_op_s") > 0) || !(num(torch, "bwd_op_s") > 0)) cJSON_Delete(torch), torch = NULL;
  if (torch && !dev[0]) {
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(torch, "device");
    if (cJSON_IsString(d)) snprintf(dev, sizeof dev, "%s", d->valuestring);
  }
  if (!torch && !(launch_s > 0)) {
    fprintf(stderr, "preflight calibrate: --host: nothing to measure here: no %s back-end ran (looked for %s) and "
                    "no PyTorch with a GPU is importable (%s -c 'import torch'); run on a GPU node with a "
                    "preflight built there, or set PREFLIGHT_PYTHON to a python with PyTorch\n",
            backend, exe, py && *py ? py : "python3");
    return 3;
  }
  char *t = document(backend, dev, launch_s, torch);
  cJSON_Delete(torch);
  if (!t) return pf_cli_fail("calibrate", pf_error_set(PF_ENOMEM, "out of memory"));
  rc = pfcal_output_write(&o, t);
  free(t);
  return rc ? pf_cli_fail("calibrate", rc) : 0;
}

#else
#include <stdio.h>
int pf_cmd_calibrate_host(int argc, char **argv) {
  (void)argc, (void)argv;
  fprintf(stderr, "preflight calibrate: this build has no calibration harness (calibrate/ was not built)\n");
  return 3;
}
#endif
