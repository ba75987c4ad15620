/* cclcal.c - measured collectives (`preflight calibrate --collectives`) overlaid on the machine's links
 * (ccl.h).
 *
 * The file's "collectives" section holds, per op and size, the bus bandwidth nccl-tests' formulas give.  The
 * overlay keeps the model (routes, algorithms, protocols, latencies) and replaces the achievable share of the
 * line rate: for one node, the fabric's (pf_machine.fabric_eff_cal), for several nodes the network's
 * (net_eff_cal).  The share is measured busbw / the model's busbw at line rate (share 1) for the same op,
 * ranks and size, on the large messages where bandwidth decides (>= 64 MiB; the largest size if none):
 * all-gather first (a ring in NCCL's default and ours, so the ratio is the link's), else all-reduce.  Bus
 * bandwidth is linear in the share while one link class is the bottleneck, so one ratio suffices.
 */
#include "ccl.h"

#include "comm.h"
#include "core/core.h"
#include "io/io.h"

#include <cjson/cJSON.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define LARGE_B (64.0 * 1048576)

static int num(const char *path, const cJSON *o, const char *key, const char *field, double *out) {
  const cJSON *it = cJSON_GetObjectItemCaseSensitive(o, key);
  if (!cJSON_IsNumber(it) || !isfinite(it->valuedouble) || it->valuedouble < 0)
    return pf_error_set(PF_EPARSE, "%s: field %s: expected a non-negative number", path, field);
  *out = it->valuedouble;
  return 0;
}

int pf_ccl_cal_load(const char *path, pf_ccl_cal *out) {
  memset(out, 0, sizeof *out);
  char *buf;
  size_t len;
  int rc = pf_read_file(path, 64L << 20, &buf, &len);
  if (rc < 0) return rc;
  cJSON *doc = pf_json_parse_strict(path, buf, len);
  free(buf);
  if (!doc) return PF_EPARSE;
  out->has_rates = cJSON_HasObjectItem(doc, "results") || cJSON_HasObjectItem(doc, "power_model") ||
                   cJSON_HasObjectItem(doc, "fit");
  const cJSON *sec = cJSON_GetObjectItemCaseSensitive(doc, "collectives");
  if (!sec) { cJSON_Delete(doc); return 0; }
  double x = 0; /* set by num(); initialised for GCC -O3's -Wmaybe-uninitialized */
  rc = 0;
  const cJSON *lib = cJSON_GetObjectItemCaseSensitive(sec, "library");
  snprintf(out->library, sizeof out->library, "%s", cJSON_IsString(lib) ? lib->valuestring : "");
  if ((rc = num(path, sec, "nodes", "collectives.nodes", &x)) == 0) out->nodes = (int)x;
  if (rc == 0 && (rc = num(path, sec, "gpus_per_node", "collectives.gpus_per_node", &x)) == 0) out->gpn = (int)x;
  if (rc == 0 && (out->nodes < 1 || out->gpn < 1))
    rc = pf_error_set(PF_EPARSE, "%s: field collectives.nodes / gpus_per_node: at least 1", path);
  const cJSON *res = cJSON_GetObjectItemCaseSensitive(sec, "results"), *r;
  if (rc == 0 && !cJSON_IsArray(res)) rc = pf_error_set(PF_EPARSE, "%s: field collectives.results: expected an array", path);
  int i = 0;
  if (rc == 0) cJSON_ArrayForEach(r, res) {
    char field[64];
    if (out->n >= PF_CCL_CAL_MAX) break;
    const cJSON *op = cJSON_GetObjectItemCaseSensitive(r, "op");
    snprintf(field, sizeof field, "collectives.results[%d].op", i);
    if (!cJSON_IsString(op) || pf_coll_kind_parse(op->valuestring, &out->op[out->n]) < 0) {
      rc = pf_error_set(PF_EPARSE, "%s: field %s: an nccl-tests op name", path, field);
      break;
    }
    snprintf(field, sizeof field, "collectives.results[%d].size_B", i);
    if ((rc = num(path, r, "size_B", field, &out->size_B[out->n])) < 0) break;
    snprintf(field, sizeof field, "collectives.results[%d].busbw_GBps", i);
    if ((rc = num(path, r, "busbw_GBps", field, &x)) < 0) break;
    out->busbw_Bps[out->n++] = x * 1e9;
    i++;
  }
  cJSON_Delete(doc);
  if (rc < 0) return rc;
  out->present = 1;
  return 0;
}

/* Measured busbw of op on the large messages (median of those >= 64 MiB, else the largest size), and a size. */
static int measured(const pf_ccl_cal *c, pf_coll_kind op, double *busbw, double *size) {
  double v[PF_CCL_CAL_MAX], big = 0;
  int n = 0, last = -1;
  for (int i = 0; i < c->n; i++)
    if (c->op[i] == op) {
      if (c->size_B[i] >= LARGE_B && c->busbw_Bps[i] > 0) v[n++] = c->busbw_Bps[i];
      if (c->size_B[i] > big) { big = c->size_B[i]; last = i; }
    }
  if (n == 0 && last >= 0 && c->busbw_Bps[last] > 0) { v[n++] = c->busbw_Bps[last]; }
  if (n == 0) return 0;
  *busbw = pf_median(v, n);
  *size = big >= LARGE_B ? fmax(LARGE_B, big) : big;
  return 1;
}

int pf_ccl_cal_apply(const pf_ccl_cal *c, pf_machine *m) {
  if (!c->present) return 0;
  if (c->nodes > m->nodes || c->gpn > m->gpus_per_node)
    return pf_error_set(PF_EINVAL, "calibration: the collectives were measured on %d nodes x %d GPUs; %s has %d x %d",
                        c->nodes, c->gpn, m->id, m->nodes, m->gpus_per_node);
  pf_coll_kind op = PF_ALLGATHER;
  double meas, size;
  if (!measured(c, op, &meas, &size)) {
    op = PF_ALLREDUCE;
    if (!measured(c, op, &meas, &size)) return 0;
  }
  int inter = c->nodes > 1;
  if (inter) m->net_eff_cal = 1.0;
  else m->fabric_eff_cal = 1.0;
  pf_coll_bench b;
  int rc = pf_coll_bench_init(m, c->nodes, c->gpn, PF_PLACE_CONTIGUOUS, 1, &b);
  pf_coll_result r;
  if (rc == 0) rc = pf_coll_bench_run(&b, op, PF_COLL_RING, PF_PROTO_SIMPLE, size, &r);
  pf_coll_bench_free(&b);
  if (rc < 0) return rc;
  double share = r.bus_bw_Bps > 0 ? meas / r.bus_bw_Bps : 0;
  share = fmin(1.0, fmax(0.01, share));
  if (inter) m->net_eff_cal = share;
  else m->fabric_eff_cal = share;
  return 0;
}
