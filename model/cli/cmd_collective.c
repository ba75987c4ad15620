/* cmd_collective.c - `preflight collective`: one collective of a machine
 * priced alone over a range of sizes, printed as nccl-tests prints it
 * (size, count, type, redop, root, time, algbw, busbw; the same bus-bandwidth
 * factors, doc/PERFORMANCE.md of nccl-tests), so users can hold it against
 * their own nccl-tests / rccl-tests output.  The model is the communication
 * module's (comm.h, collbench.c). */
#include "cli.h"
#include "options.h"

#include "comm/comm.h"
#include "core/core.h"
#include "report/report.h"

#include <cjson/cJSON.h>
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *examples =
    "  preflight collective --machine mn5-acc --nodes 1 --op all_reduce -b 8 -e 8G -f 2\n"
    "  preflight collective --machine mn5-acc --nodes 2,16,128 --op all_reduce -b 8 -e 8G -f 2\n"
    "  preflight collective --machine lumi-g --nodes 64 --op all_gather --placement scattered --format json\n";

#define MAX_SIZES PF_COLL_DOC_MAX_SIZES
#define MAX_NODES 32

/* A size as nccl-tests reads it (digits with an optional K, M or G: powers of 1024), or a quantity with a unit. */
static int parse_size(const char *opt, const char *s, double *out) {
  char *end;
  errno = 0;
  double x = strtod(s, &end);
  if (end != s && !errno && x >= 0) {
    double mult = 1;
    if (*end && !end[1]) {
      int c = toupper((unsigned char)*end);
      mult = c == 'K' ? 1024.0 : c == 'M' ? 1048576.0 : c == 'G' ? 1073741824.0 : c == 'B' ? 1.0 : 0;
      if (mult > 0) end++;
    }
    if (*end == '\0') { *out = x * mult; return 0; }
  }
  if (pf_units_parse(s, PF_UNIT_BYTES, out) == 0 && *out >= 0) return 0;
  return pf_error_set(PF_EINVAL, "-%s \"%s\": a size in bytes such as 8, 128M, 8G (K, M, G are powers of 1024) or "
                      "\"1 GiB\"", opt, s);
}

typedef struct dtype { const char *name; double size; } dtype;
static const dtype dtypes[] = {{"float", 4}, {"half", 2}, {"bfloat16", 2}, {"double", 8}};

typedef pf_coll_run run; /* the document's (formats.h) */

typedef struct args {
  pf_machine m;
  pf_coll_kind op;
  int nodes[MAX_NODES], nn, gpn;
  double b, e, f;
  const dtype *dt;
  pf_coll_algo algo;
  pf_coll_proto proto;
  pf_placement pl;
  unsigned long seed;
} args;

static int read_args(const pf_optvals *v, args *a) {
  memset(a, 0, sizeof *a);
  int rc;
  const char *s = pf_opts_get(v, "machine");
  if (!s) return pf_error_set(PF_EINVAL, "--machine is required (see `preflight machines`)");
  if ((rc = pf_machine_load(s, &a->m)) < 0) return rc;
  a->op = PF_ALLREDUCE;
  if ((s = pf_opts_get(v, "op")) && (rc = pf_coll_kind_parse(s, &a->op)) < 0) return rc;
  a->nodes[0] = 1;
  a->nn = 1;
  if ((s = pf_opts_get(v, "nodes")) && (rc = pf_cli_parse_nodes(s, a->nodes, MAX_NODES, &a->nn)) < 0) return rc;
  a->gpn = a->m.gpus_per_node;
  if ((rc = pf_opts_int(v, "gpus-per-node", &a->gpn)) < 0) return rc;
  a->b = 8;
  a->e = 128.0 * 1048576;
  a->f = 2;
  if ((s = pf_opts_get(v, "b")) && (rc = parse_size("b", s, &a->b)) < 0) return rc;
  if ((s = pf_opts_get(v, "e")) && (rc = parse_size("e", s, &a->e)) < 0) return rc;
  if ((rc = pf_opts_double(v, "f", &a->f)) < 0) return rc;
  if (!(a->b >= 1) || a->e < a->b)
    return pf_error_set(PF_EINVAL, "-b %.0f -e %.0f: need 1 <= -b <= -e", a->b, a->e);
  if (!(a->f > 1.0)) return pf_error_set(PF_EINVAL, "-f %g: the size factor must exceed 1", a->f);
  a->dt = &dtypes[0];
  if ((s = pf_opts_get(v, "datatype"))) {
    a->dt = NULL;
    for (size_t i = 0; i < sizeof dtypes / sizeof dtypes[0]; i++)
      if (!strcmp(s, dtypes[i].name)) a->dt = &dtypes[i];
    if (!a->dt) return pf_error_set(PF_EINVAL, "--datatype \"%s\": valid: float, half, bfloat16, double", s);
  }
  a->algo = PF_COLL_AUTO;
  a->proto = PF_PROTO_AUTO;
  if ((s = pf_opts_get(v, "coll-algo")) && (rc = pf_coll_algo_parse(s, &a->algo)) < 0) return rc;
  if ((s = pf_opts_get(v, "coll-proto")) && (rc = pf_coll_proto_parse(s, &a->proto)) < 0) return rc;
  if ((s = pf_opts_get(v, "placement")) && (rc = pf_placement_parse(s, &a->pl)) < 0) return rc;
  int seed = 1;
  if ((rc = pf_opts_int(v, "seed", &seed)) < 0) return rc;
  a->seed = (unsigned long)seed;
  if ((s = pf_opts_get(v, "calibration"))) {
    pf_ccl_cal *cc = malloc(sizeof *cc);
    if (!cc) return pf_error_set(PF_ENOMEM, "out of memory");
    rc = pf_ccl_cal_load(s, cc);
    if (rc == 0 && !cc->present)
      rc = pf_error_set(PF_EINVAL, "--calibration %s: no \"collectives\" section (preflight calibrate --collectives "
                        "writes one)", s);
    if (rc == 0) rc = pf_ccl_cal_apply(cc, &a->m);
    free(cc);
    if (rc < 0) return rc;
  }
  return 0;
}

static int compute(const args *a, run *runs) {
  int rc = 0;
  for (int i = 0; i < a->nn && rc == 0; i++) {
    run *u = &runs[i];
    pf_coll_bench b;
    if ((rc = pf_coll_bench_init(&a->m, a->nodes[i], a->gpn, a->pl, a->seed, &b)) < 0) break;
    u->nodes = b.nodes;
    u->gpn = b.gpn;
    u->ranks = b.ranks;
    for (double sz = a->b; sz <= a->e * (1 + 1e-12) && u->n < MAX_SIZES && rc == 0; sz *= a->f) {
      double bytes = floor(sz / a->dt->size) * a->dt->size; /* whole elements, as nccl-tests sizes its buffers */
      if (bytes < a->dt->size) bytes = a->dt->size;
      u->size[u->n] = bytes;
      rc = pf_coll_bench_run(&b, a->op, a->algo, a->proto, bytes, &u->r[u->n]);
      if (rc == 0) u->avg_busbw += u->r[u->n++].bus_bw_Bps;
    }
    if (u->n > 0) u->avg_busbw /= u->n;
    pf_coll_bench_free(&b);
  }
  return rc;
}

static const pf_opt *const tables[] = {pf_collective_opts, NULL};
static const pf_cli_spec spec = {
    .cmd = "collective",
    .usage = "usage: preflight collective --machine ID [--op OP] [--nodes LIST] [-b SIZE] [-e SIZE] [-f F] [options]\n\n"
             "Prices one collective alone on the machine, one rank per GPU, and prints it as nccl-tests /\n"
             "rccl-tests do: algbw = size / time, busbw = algbw x 2(n-1)/n (all_reduce), (n-1)/n (all_gather,\n"
             "reduce_scatter, alltoall) or 1 (sendrecv).  Formulas: docs/communication.md.",
    .tables = tables,
    .examples = "  preflight collective --machine leonardo-booster --nodes 1,2,4 -e 1G\n"
                "  preflight collective --machine lumi-g --op all_gather --nodes 16 --coll-algo best --format csv\n",
    .doc = PF_DOC(collective),
};
const pf_cli_spec *const pf_cli_spec_collective = &spec; /* for the man page and the completion (gendoc.c) */


int pf_cmd_collective(int argc, char **argv) {
  pf_cli_spec sp = spec;
  sp.examples = examples;
  pf_cli cli;
  int rc = pf_cli_begin(&sp, argc, argv, &cli);
  if (rc != 0) return pf_cli_end(&cli, rc > 0 ? 0 : pf_cli_fail("collective", rc));
  const pf_optvals *v = &cli.v;
  args *a = malloc(sizeof *a);
  run *runs = calloc(MAX_NODES, sizeof *runs);
  if (!a || !runs) rc = pf_error_set(PF_ENOMEM, "out of memory");
  if (rc == 0) rc = read_args(v, a);
  if (rc == 0) rc = compute(a, runs);
  if (rc == 0) {
    char *text = NULL;
    size_t len = 0;
    pf_coll_doc doc = {&a->m, a->op, a->dt->name, a->dt->size, a->pl, a->seed, runs, a->nn};
    FILE *mf = open_memstream(&text, &len);
    if (!mf) rc = pf_error_set(PF_ENOMEM, "out of memory");
    else {
      pf_fmt(cli.fmt)->collective(mf, &doc); /* the format table's renderer */
      fclose(mf);
    }
    if (rc == 0) rc = pf_cli_emit(&cli, text);
    free(text);
  }
  free(a);
  free(runs);
  return pf_cli_end(&cli, rc < 0 ? pf_cli_fail("collective", rc) : 0);
}
