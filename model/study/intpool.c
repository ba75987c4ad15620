/* intpool.c - the validation rows behind the prediction intervals (intpool.h):
 * the CSVs of a folder read in name order, each judged time, throughput,
 * efficiency, energy or power row with its regime key (workload kind, device vendor and
 * architecture, size class, scale class) and its group (file x model family),
 * predicted only when an interval first needs it. */
#include "intpool.h"

#include "collval.h"
#include "vdisk.h"
#include "core/core.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *pf_validation_dir(void) {
  const char *e = getenv("PREFLIGHT_VALIDATION");
  if (e && *e) return e;
  static char dir[4300];
  if (!dir[0]) snprintf(dir, sizeof dir, "%s/scenarios/validation", pf_data_dir()); /* installed or source tree */
  return dir;
}

/* ---- regime keys ---- */

/* Transformer (a built-in one, or a layer list with attention), CNN (a layer list with convolutions and no
 * attention), other. */
static int workload_kind(const pf_workload *w) {
  /* a mixture of experts is its own kind: its step has what a dense one lacks (the EP all-to-alls, grouped
   * expert GEMMs, the router), so its errors do not describe a dense transformer's, nor the reverse */
  if (w->kind == PF_WL_TRANSFORMER) return w->experts > 0 ? 3 : 0;
  bool att = false, conv = false;
  if (w->kind == PF_WL_LAYERS && w->ly)
    for (const pf_layer *l = w->ly; l->kind != PF_LY_END; l++) {
      att |= l->kind == PF_LY_ATTENTION;
      conv |= l->kind == PF_LY_CONV2D || l->kind == PF_LY_CONVT2D;
    }
  return att ? 0 : conv ? 1 : 2;
}

void pf_rkey_of(const pf_scenario *sc, pf_rkey *k) {
  memset(k, 0, sizeof *k);
  const pf_workload *w = &sc->workload;
  k->kind = workload_kind(w);
  snprintf(k->vendor, sizeof k->vendor, "%s", sc->machine.dev.vendor);
  snprintf(k->arch, sizeof k->arch, "%s", sc->machine.dev.arch);
  double params = w->kind == PF_WL_TRANSFORMER ? pf_workload_params(w, 1) : w->params;
  k->size = params < 1e9 ? 0 : params < 3e10 ? 1 : 2;
  int gpn = sc->machine.gpus_per_node > 0 ? sc->machine.gpus_per_node : 1;
  int nodes = sc->nodes > 0 ? sc->nodes : (sc->gpus + gpn - 1) / gpn;
  k->scale = nodes <= 1 ? 0 : nodes <= 16 ? 1 : 2;
}

/* The kind's family: transformers dense or mixture of experts (kinds 0 and 3) one, the others their own. */
static int kind_family(int kind) { return kind == 3 ? 0 : kind; }

bool pf_rkey_match(const pf_rkey *a, const pf_rkey *b, unsigned mask) {
  return (!(mask & PF_RK_KIND) || a->kind == b->kind) &&
         (!(mask & PF_RK_FAMILY) || kind_family(a->kind) == kind_family(b->kind)) &&
         (!(mask & PF_RK_VENDOR) || !strcmp(a->vendor, b->vendor)) &&
         (!(mask & PF_RK_ARCH) || !strcmp(a->arch, b->arch)) && (!(mask & PF_RK_SIZE) || a->size == b->size) &&
         (!(mask & PF_RK_SCALE) || a->scale == b->scale);
}

void pf_rkey_describe(const pf_rkey *k, unsigned mask, char *buf, size_t len) {
  static const char *const kinds[] = {"transformer", "CNN", "other model", "mixture-of-experts transformer"};
  static const char *const sizes[] = {"below 1 B parameters", "1-30 B parameters", "30 B parameters and more"};
  static const char *const scales[] = {"one node", "2-16 nodes", "more than 16 nodes"};
  if (!mask) { snprintf(buf, len, "every measured training run"); return; }
  size_t w = 0;
  buf[0] = '\0';
#define ADD(...) (w += (size_t)snprintf(buf + (w < len ? w : len), w < len ? len - w : 0, __VA_ARGS__))
  if (mask & PF_RK_KIND) ADD("%s", kinds[k->kind]);
  else if (mask & PF_RK_FAMILY)
    ADD("%s", kind_family(k->kind) == 0 ? "transformer, dense or mixture of experts" : kinds[k->kind]);
  if (mask & PF_RK_VENDOR) {
    const char *v = !strcmp(k->vendor, "nvidia") ? "NVIDIA" : !strcmp(k->vendor, "amd") ? "AMD"
                    : !strcmp(k->vendor, "intel") ? "Intel" : k->vendor;
    ADD(", %s%s%s", v, mask & PF_RK_ARCH ? " " : "", mask & PF_RK_ARCH ? k->arch : "");
  }
  if (mask & PF_RK_SIZE) ADD(", %s", sizes[k->size]);
  if (mask & PF_RK_SCALE) ADD(", %s", scales[k->scale]);
#undef ADD
}

/* ---- the rows ---- */

/* The model family: the model id without a trailing size ("gpt3-175b" -> "gpt3", "gpt-857m" -> "gpt"). */
static void family_of(const pf_vrow *r, char *buf, size_t len) {
  if (!r->model[0]) { snprintf(buf, len, "%s", r->layers > 0 ? "custom transformer" : "custom model"); return; }
  const char *m = strrchr(r->model, '/');
  snprintf(buf, len, "%s", m ? m + 1 : r->model);
  char *dash = strrchr(buf, '-');
  if (dash && isdigit((unsigned char)dash[1])) {
    char *e = dash + 1;
    while (isdigit((unsigned char)*e) || *e == '.') e++;
    if (strchr("kmbtKMBT", *e) && e[0] && !e[1]) *dash = '\0';
  }
}

static int row_class(pf_metric m) {
  switch (m) {
  case PF_MET_ITER_TIME: case PF_MET_TIME: case PF_MET_TFLOPS: case PF_MET_TOKENS: case PF_MET_SAMPLES:
    return PF_ICLASS_TIME;
  case PF_MET_SCALING: case PF_MET_BATCH_RATIO: return PF_ICLASS_EFF;
  case PF_MET_ENERGY: case PF_MET_POWER: return PF_ICLASS_POWER;
  default: return -1;
  }
}

static int group_of(pf_ipool *p, const char *source, const char *family) {
  for (int g = 0; g < p->ngroups; g++)
    if (!strcmp(p->group_source[g], source) && !strcmp(p->group_family[g], family)) return g;
  if (p->ngroups == PF_ICOVER_MAX) return PF_ICOVER_MAX - 1; /* the last group takes the rest */
  snprintf(p->group_source[p->ngroups], sizeof p->group_source[0], "%s", source);
  snprintf(p->group_family[p->ngroups], sizeof p->group_family[0], "%s", family);
  return p->ngroups++;
}

/* The rows of one file to or from its disk entry (vdisk.h): load fills and marks done the rows it holds,
 * store writes every done row. */
static void disk_rows(pf_ipool *p, int file, bool store) {
  pf_vrow **rows = malloc(sizeof *rows * (size_t)(p->n ? p->n : 1));
  bool *done = malloc(sizeof *done * (size_t)(p->n ? p->n : 1));
  int *at = malloc(sizeof *at * (size_t)(p->n ? p->n : 1)), n = 0;
  if (rows && done && at) {
    for (int i = 0; i < p->n; i++)
      if (p->rows[i].file == file) { at[n] = i; rows[n] = &p->rows[i].r; done[n++] = p->rows[i].done; }
    if (store) pf_vdisk_store(p->key[file], rows, done, n);
    else if (pf_vdisk_load(p->key[file], rows, done, n) > 0)
      for (int i = 0; i < n; i++) p->rows[at[i]].done = done[i];
  }
  free(rows);
  free(done);
  free(at);
}

/* The judged time/throughput/efficiency rows of one CSV, keyed. */
static int add_file(pf_ipool *p, const char *path) {
  pf_vset s;
  int rc = pf_validate_read(path, &s);
  if (rc < 0) return rc;
  pf_irow *grown = realloc(p->rows, sizeof *grown * (size_t)(p->n + s.n + 1));
  pf_scenario *sc = malloc(sizeof *sc);
  if (!grown || !sc) {
    if (grown) p->rows = grown;
    free(sc);
    pf_vset_free(&s);
    return pf_error_set(PF_ENOMEM, "out of memory");
  }
  p->rows = grown;
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  int file = p->nfiles++;
  snprintf(p->files[file], sizeof p->files[0], "%s", path);
  for (int i = 0; i < s.n; i++) {
    const pf_vrow *r = &s.rows[i];
    int cls = row_class(r->metric);
    /* not judged (regression), or measured under test settings no production run uses (harness): they check the
     * model but set no interval (docs/validation.md) */
    if (cls < 0 || !strcmp(r->tag, "regression") || !strcmp(r->tag, "harness")) continue;
    pf_irow *x = &p->rows[p->n++];
    memset(x, 0, sizeof *x);
    x->r = *r;
    x->file = file;
    x->cls = cls;
    char fam[PF_IFAMILY_MAX], why[PF_VTEXT];
    family_of(r, fam, 64);
    /* energy and power rows: one group per machine x application (a machine's power levels are one error) */
    if (cls == PF_ICLASS_POWER) {
      size_t w = strlen(fam);
      snprintf(fam + w, sizeof fam - w, " on %s", r->machine);
    }
    x->group = group_of(p, base, fam);
    if (pf_vrow_scenario(r, p->vo, sc, why, sizeof why) == 0) {
      x->keyed = true;
      pf_rkey_of(sc, &x->k);
      int gpn = sc->machine.gpus_per_node > 0 ? sc->machine.gpus_per_node : 1;
      x->nodes = sc->nodes > 0 ? sc->nodes : (sc->gpus + gpn - 1) / gpn;
    }
    pf_error_clear();
  }
  p->cached[file] = pf_vdisk_key(path, &s, p->vo, &p->key[file]);
  if (p->cached[file]) disk_rows(p, file, false);
  free(sc);
  pf_vset_free(&s);
  return 0;
}

static int add_dir(pf_ipool *p, const char *dir) {
  char **names;
  int nn, rc = pf_dir_names(dir, &names, &nn); /* name order: deterministic */
  if (rc < 0) return rc == PF_ENOENT ? pf_error_set(PF_ENOENT, "%s: cannot open the validation folder", dir) : rc;
  for (int i = 0, files = 0; i < nn && rc == 0 && files < PF_IPOOL_FILES; i++) {
    size_t l = strlen(names[i]);
    if (l <= 4 || strcmp(names[i] + l - 4, ".csv")) continue;
    files++;
    char path[PF_PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, names[i]);
    /* files of measured collectives (collval.h) measure one collective, not a training step */
    if (pf_collval_kind(path) == 0) rc = add_file(p, path);
  }
  pf_dir_names_free(names, nn);
  return rc;
}

int pf_ipool_open(const char *dir_or_csv, const pf_validate_opts *vo, pf_ipool **out) {
  *out = NULL;
  pf_ipool *p = calloc(1, sizeof *p);
  if (!p) return pf_error_set(PF_ENOMEM, "out of memory");
  p->vo = vo;
  size_t n = strlen(dir_or_csv);
  int rc = n > 4 && !strcmp(dir_or_csv + n - 4, ".csv") ? add_file(p, dir_or_csv) : add_dir(p, dir_or_csv);
  if (rc < 0) { pf_ipool_free(p); return rc; }
  *out = p;
  return 0;
}

void pf_ipool_free(pf_ipool *p) {
  if (!p) return;
  free(p->rows);
  free(p);
}

int pf_ipool_predict(pf_ipool *p, const int *idx, int n) {
  pf_vset s = {0};
  int *which = malloc(sizeof *which * (size_t)(n ? n : 1));
  s.rows = malloc(sizeof *s.rows * (size_t)(n ? n : 1));
  if (!which || !s.rows) { free(which); free(s.rows); return pf_error_set(PF_ENOMEM, "out of memory"); }
  for (int i = 0; i < n; i++)
    if (!p->rows[idx[i]].done) { which[s.n] = idx[i]; s.rows[s.n++] = p->rows[idx[i]].r; }
  int rc = 0;
  if (s.n > 0) {
    snprintf(s.path, sizeof s.path, "%s", p->files[p->rows[which[0]].file]);
    rc = pf_validate_run(&s, p->vo);
    for (int i = 0; i < s.n && rc == 0; i++) {
      p->rows[which[i]].r = s.rows[i];
      p->rows[which[i]].done = true;
    }
    for (int f = 0; f < p->nfiles && rc == 0; f++) { /* keep what was predicted for the next run */
      bool touched = false;
      for (int i = 0; i < s.n && !touched; i++) touched = p->rows[which[i]].file == f;
      if (touched && p->cached[f]) disk_rows(p, f, true);
    }
  }
  free(which);
  free(s.rows);
  return rc;
}
