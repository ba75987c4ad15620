/* cmd_merge.c - `preflight merge SHARD.json...`: join the shards of a sweep or
 * a tune (--shard I/N) into the result the unsharded run prints.  The shards
 * must describe the same study (identical sweep or tune description), come
 * from the same N, and hold every shard exactly once. */
#include "cli.h"
#include "options.h"
#include "results.h"

#include "core/core.h"
#include "report/report.h"

#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const pf_opt merge_opts[] = {
    {"plot", "FILE", "sweep: the scaling plot of the merged result (FILE.svg, .pdf or .png)", .type = PF_OPT_TEXT},
    {"measured", "RUNS.csv", "sweep: measured points overlaid on the plot", .type = PF_OPT_TEXT},
    PF_OPT_END};

/* A JSON shard is read whole: at most what a shard can hold (results.h, PF_SHARD_JSON_MAX_B). */
static int load(const char *path, cJSON **doc) {
  char *text;
  size_t len;
  int rc = pf_read_file(path, PF_SHARD_JSON_MAX_B, &text, &len);
  if (rc == PF_EPARSE) { /* too large: say what a shard holds */
    char d[512];
    snprintf(d, sizeof d, "%s", pf_error_detail());
    return pf_error_set(PF_EPARSE, "%s (a JSON shard holds at most %d rows of %d bytes and its study's %d; CSV "
                        "shards, --format csv, stream and may be of any size)", d, PF_SHARD_JSON_ROWS,
                        PF_SHARD_ROW_B, PF_SHARD_HEAD_B);
  }
  if (rc < 0) return rc;
  *doc = cJSON_ParseWithLength(text, len);
  free(text);
  if (!*doc) return pf_error_set(PF_EPARSE, "%s: not a JSON document", path);
  return 0;
}

static int shard_of(const cJSON *doc, const char *path, int *i, int *n) {
  const cJSON *s = cJSON_GetObjectItemCaseSensitive(doc, "shard");
  const cJSON *a = cJSON_GetObjectItemCaseSensitive(s, "index"), *b = cJSON_GetObjectItemCaseSensitive(s, "count");
  if (!cJSON_IsNumber(a) || !cJSON_IsNumber(b))
    return pf_error_set(PF_EPARSE, "%s: not a shard (no \"shard\": {\"index\", \"count\"}; write shards with --shard I/N)",
                        path);
  *i = a->valueint;
  *n = b->valueint;
  if (*n < 1 || *i < 1 || *i > *n) return pf_error_set(PF_EPARSE, "%s: shard %d/%d is not valid", path, *i, *n);
  return 0;
}

/* The study fields the renderers read (fmt_*.c, sweep_render.c) have their types (fuzz_merge). */
static int context_of(const cJSON *doc, const char *path) {
  const cJSON *sw = cJSON_GetObjectItemCaseSensitive(doc, "sweep"), *a;
  cJSON_ArrayForEach(a, cJSON_GetObjectItemCaseSensitive(sw, "axes"))
    if (!cJSON_IsString(a)) return pf_error_set(PF_EPARSE, "%s: sweep.axes: expected names (strings)", path);
  if (sw) return 0;
  static const char *const str[] = {"machine", "model"}, *const num[] = {"gpus", "gbs"};
  for (int i = 0; i < 2; i++)
    if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(doc, str[i])) ||
        !cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(doc, num[i])))
      return pf_error_set(PF_EPARSE, "%s: a tune shard needs \"%s\" and \"%s\"", path, str[i], num[i]);
  return 0;
}

/* The part of a shard that must be the same in every shard of one study. */
static char *study_of(const cJSON *doc) {
  cJSON *d = cJSON_Duplicate(doc, 1);
  cJSON_DeleteItemFromObjectCaseSensitive(d, "rows");
  cJSON_DeleteItemFromObjectCaseSensitive(d, "result");
  cJSON *s = cJSON_GetObjectItemCaseSensitive(d, "shard");
  cJSON_DeleteItemFromObjectCaseSensitive(s, "index");
  char *t = cJSON_PrintUnformatted(d);
  cJSON_Delete(d);
  return t;
}

static int by_index(const void *a, const void *b) {
  double x = cJSON_GetObjectItemCaseSensitive(*(cJSON *const *)a, "index")->valuedouble;
  double y = cJSON_GetObjectItemCaseSensitive(*(cJSON *const *)b, "index")->valuedouble;
  return (x > y) - (x < y);
}

static int merge_sweep(cJSON **docs, int n, const pf_optvals *v, pf_format fmt, char **text, int *verdict) {
  const cJSON *ctx = cJSON_GetObjectItemCaseSensitive(docs[0], "sweep");
  const cJSON *np = cJSON_GetObjectItemCaseSensitive(ctx, "points");
  if (!cJSON_IsNumber(np)) return pf_error_set(PF_EPARSE, "the shards' \"sweep\" has no \"points\" count");
  double points = np->valuedouble;
  long total = 0;
  for (int i = 0; i < n; i++) total += cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(docs[i], "rows"));
  if ((double)total != points)
    return pf_error_set(PF_EPARSE, "the shards hold %ld points, the sweep has %.0f", total, points);
  cJSON **all = malloc((size_t)(total ? total : 1) * sizeof *all);
  if (!all) return pf_error_set(PF_ENOMEM, "out of memory");
  long k = 0;
  for (int i = 0; i < n; i++) {
    cJSON *r;
    cJSON_ArrayForEach(r, cJSON_GetObjectItemCaseSensitive(docs[i], "rows")) {
      if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(r, "index"))) {
        free(all);
        return pf_error_set(PF_EPARSE, "shard %d: a row without \"index\"", i + 1);
      }
      all[k++] = r;
    }
  }
  qsort(all, (size_t)k, sizeof *all, by_index);
  for (long i = 0; i < k; i++)
    if (cJSON_GetObjectItemCaseSensitive(all[i], "index")->valuedouble != (double)i) {
      free(all);
      return pf_error_set(PF_EPARSE, "point %ld is missing or given twice in the shards", i);
    }
  cJSON *rows = cJSON_CreateArray();
  for (long i = 0; i < k; i++) cJSON_AddItemToArray(rows, cJSON_Duplicate(all[i], 1));
  free(all);
  int rc = 0;
  *text = pf_cli_sweep_render(ctx, rows, fmt);
  if (!*text) rc = pf_error_set(PF_ENOMEM, "out of memory");
  const char *plot = pf_opts_get(v, "plot");
  if (rc == 0 && plot) rc = pf_cli_sweep_plot(ctx, rows, pf_opts_get(v, "measured"), plot);
  if (rc == 0) *verdict = pf_cli_sweep_verdict(rows); /* the unsharded sweep's exit, after its rows */
  cJSON_Delete(rows);
  return rc;
}

static int merge_tune(cJSON **docs, int n, pf_format fmt, char **text) {
  cJSON *ctx = cJSON_Duplicate(docs[0], 1);
  cJSON_DeleteItemFromObjectCaseSensitive(ctx, "schema_version");
  cJSON_DeleteItemFromObjectCaseSensitive(ctx, "tool");
  cJSON_DeleteItemFromObjectCaseSensitive(ctx, "shard");
  cJSON_DeleteItemFromObjectCaseSensitive(ctx, "result");
  const cJSON *sh = cJSON_GetObjectItemCaseSensitive(docs[0], "shard");
  const cJSON *obj = cJSON_GetObjectItemCaseSensitive(sh, "objective"), *top = cJSON_GetObjectItemCaseSensitive(ctx, "top");
  pf_tune_config o = {.top = cJSON_IsNumber(top) ? top->valueint : 10, .shard = 1, .nshards = 1};
  int rc = cJSON_IsString(obj) ? pf_objective_parse(obj->valuestring, &o.objective)
                               : pf_error_set(PF_EPARSE, "tune shard without an objective");
  cJSON **res = malloc((size_t)n * sizeof *res);
  pf_tune_result r = {0};
  if (rc == 0 && !res) rc = pf_error_set(PF_ENOMEM, "out of memory");
  for (int i = 0; i < n && rc == 0; i++) res[i] = cJSON_GetObjectItemCaseSensitive(docs[i], "result");
  if (rc == 0) rc = pf_tune_merge(res, n, &o, &r);
  if (rc == 0 && !(*text = pf_cli_tune_render(ctx, &r, &o, fmt))) rc = pf_error_set(PF_ENOMEM, "out of memory");
  pf_tune_result_free(&r);
  free(res);
  cJSON_Delete(ctx);
  return rc;
}

/* CSV shards: read the shard numbers, then stream them in order into out. */
static int merge_raw(const pf_optvals *v, pf_format fmt, FILE *out, int *verdict) {
  int n = v->npositional, rc = 0;
  FILE **in = calloc((size_t)n, sizeof *in);
  const char **paths = calloc((size_t)n, sizeof *paths);
  if (!in || !paths) { free(in); free(paths); return pf_error_set(PF_ENOMEM, "out of memory"); }
  for (int i = 0; i < n && rc == 0; i++) {
    FILE *f = fopen(v->positional[i], "r");
    int si = 0, sn = 0;
    char head[128] = "";
    if (!f) { rc = pf_error_set(PF_ENOENT, "%s: cannot open", v->positional[i]); break; }
    if (!fgets(head, sizeof head, f) || sscanf(head, "# preflight sweep shard %d/%d", &si, &sn) != 2 || sn != n ||
        si < 1 || si > n || in[si - 1]) {
      fclose(f);
      rc = pf_error_set(PF_EPARSE, "%s: not shard I/%d of this study, or a shard given twice", v->positional[i], n);
      break;
    }
    rewind(f);
    in[si - 1] = f;
    paths[si - 1] = v->positional[i];
  }
  if (rc == 0 && fmt == PF_FMT_JSON)
    rc = pf_error_set(PF_EINVAL, "CSV shards merge into a table or CSV (--format csv); JSON needs JSON shards");
  if (rc == 0) rc = pf_cli_sweep_merge_raw(in, paths, n, fmt, out, verdict);
  for (int i = 0; i < n; i++) if (in[i]) fclose(in[i]);
  free(in);
  free(paths);
  return rc;
}

static int first_line_is_raw(const char *path) {
  FILE *f = fopen(path, "r");
  char head[64] = "";
  int raw = f && fgets(head, sizeof head, f) && pf_cli_sweep_is_raw(head);
  if (f) fclose(f);
  return raw;
}

static const pf_opt *const tables[] = {merge_opts, NULL};

static const pf_cli_spec spec = {
    "merge",
    "usage: preflight merge SHARD.json... [--format table|json|csv] [-o FILE] [--plot FILE.svg|.pdf|.png]\n\n"
    "Joins the shards of `preflight sweep --shard I/N` or `preflight tune --shard I/N` into the result\n"
    "the unsharded command prints (byte-identical).",
    tables, false, PF_MAXPOSITIONAL, false,
    "  preflight sweep --machine mn5-acc --model llama2-7b --gbs 512 --tp 2 --dist-opt --recompute selective \\\n"
    "      --nodes 4,8,16 --shard 1/2 -o s1.json\n"
    "  preflight sweep --machine mn5-acc --model llama2-7b --gbs 512 --tp 2 --dist-opt --recompute selective \\\n"
    "      --nodes 4,8,16 --shard 2/2 -o s2.json\n"
    "  preflight merge s1.json s2.json\n", false,
    .doc = PF_DOC(sweep)};
const pf_cli_spec *const pf_cli_spec_merge = &spec; /* for the man page and the completion (gendoc.c) */


int pf_cmd_merge(int argc, char **argv) {
  pf_cli cli;
  int rc = pf_cli_begin(&spec, argc, argv, &cli);
  if (rc != 0) return pf_cli_end(&cli, rc > 0 ? 0 : pf_cli_fail("merge", rc));
  const pf_optvals *vp = &cli.v;
  int n = vp->npositional;
  pf_format fmt = cli.fmt;
  cJSON **docs = calloc((size_t)(n > 0 ? n : 1), sizeof *docs);
  char *text = NULL, *study0 = NULL;
  int count = 0, verdict = 0; /* verdict: the merged study's exit once its result is written (docs/exit-codes.md) */
  unsigned char *seen = calloc((size_t)(n > 0 ? n : 1), 1);
  if (!docs || !seen) { rc = pf_error_set(PF_ENOMEM, "out of memory"); goto done; }
  if (n < 1) { rc = pf_error_set(PF_EINVAL, "merge needs the shard files (SHARD.json...)"); goto done; }
  if (first_line_is_raw(vp->positional[0])) { /* streamed: constant memory whatever the study's size */
    FILE *out;
    if ((rc = pf_output_open(&cli.out, &out)) < 0) goto done;
    rc = merge_raw(vp, fmt, out, &verdict);
    if (rc == 0) rc = pf_output_commit(&cli.out);
    else pf_output_abort(&cli.out);
    goto done;
  }
  for (int i = 0; i < n && rc == 0; i++) {
    int si = 0, sn = 0;
    if ((rc = load(vp->positional[i], &docs[i])) < 0 || (rc = shard_of(docs[i], vp->positional[i], &si, &sn)) < 0 ||
        (rc = context_of(docs[i], vp->positional[i])) < 0)
      break;
    char *st = study_of(docs[i]);
    if (i == 0) { study0 = st; count = sn; }
    else {
      int same = st && study0 && strcmp(st, study0) == 0;
      free(st);
      if (!same) { rc = pf_error_set(PF_EPARSE, "%s: not a shard of the same study as %s", vp->positional[i], vp->positional[0]); break; }
    }
    if (sn != count) rc = pf_error_set(PF_EPARSE, "%s: shard of %d, the first file says %d", vp->positional[i], sn, count);
    else if (si <= n && seen[si - 1]++) rc = pf_error_set(PF_EPARSE, "%s: shard %d/%d given twice", vp->positional[i], si, sn);
  }
  if (rc == 0 && n != count)
    rc = pf_error_set(PF_EPARSE, "%d shard files given, the study has %d shards", n, count);
  if (rc == 0) {
    if (cJSON_GetObjectItemCaseSensitive(docs[0], "sweep")) rc = merge_sweep(docs, n, vp, fmt, &text, &verdict);
    else if (cJSON_GetObjectItemCaseSensitive(docs[0], "result")) /* no plan fits: exit 1, as unsharded */
      rc = merge_tune(docs, n, fmt, &text);
    else rc = pf_error_set(PF_EPARSE, "%s: neither a sweep nor a tune shard", vp->positional[0]);
  }
  if (rc == 0) rc = pf_cli_emit(&cli, text);
done:
  if (rc == 0) rc = verdict;
  free(text);
  free(study0);
  for (int i = 0; docs && i < n; i++) cJSON_Delete(docs[i]);
  free(docs);
  free(seen);
  return pf_cli_end(&cli, rc < 0 ? pf_cli_fail("merge", rc) : 0);
}
