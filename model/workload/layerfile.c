/* layerfile.c - reading a layer-list model from libconfig (`--model
 * PATH.cfg`, or a `model = { ... }` group inside a scenario file); the format
 * is in docs/scenario-format.md, "Layer lists".  Every error names the file,
 * the line and the field; a key a layer kind does not take is an error (a
 * typo would otherwise keep a default silently).  What is read lives until
 * the process exits (workloads are copied by value and keep pointers to it).
 */
#include "core/core.h"
#include "machine/machine.h"
#include "layers.h"

#include <libconfig.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LAYERS 100000

/* What a model file leaves behind (layer arrays, networks, strings) stays reachable from here until exit:
 * workloads are copied by value and point into it.  Called from the main thread only. */
static void **kept;
static int nkept, capkept;

static void *keep(void *p) {
  if (!p) return NULL;
  if (nkept == capkept) {
    int cap = capkept ? 2 * capkept : 16;
    void **k = realloc(kept, (size_t)cap * sizeof *k);
    if (!k) return p; /* still usable; only the reachability for leak checkers is lost */
    kept = k, capkept = cap;
  }
  kept[nkept++] = p;
  return p;
}

static const char *kind_names[] = {"", "conv2d", "conv_transpose2d", "linear", "attention", "norm", "pool",
                                   "upsample", "concat", "activation", "embedding"};
/* keys each kind takes besides the common ones */
static const char *kind_keys[] = {"", "out kernel stride bias", "out kernel stride bias", "out bias", "heads rel_pos",
                                  "kind bias", "kernel", "factor mode out", "channels", "fn", "vocab out"};
static const char *common_keys = "type name net h w c repeat span ops frozen saved_input";

typedef struct {
  const char *file;
  char where[96]; /* "model.layers[3]" */
} ctx;

static int err_at(const ctx *x, const config_setting_t *s, const char *field, const char *what) {
  return pf_error_set(PF_EPARSE, "%s:%d: %s.%s: %s", x->file, s ? config_setting_source_line(s) : 0, x->where, field,
                      what);
}

static bool has_word(const char *list, const char *w) {
  size_t n = strlen(w);
  for (const char *p = list; (p = strstr(p, w)) != NULL; p += n)
    if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0')) return true;
  return false;
}

/* integer key in [lo, hi]; 0 when absent */
static int get_int(const ctx *x, const config_setting_t *g, const char *key, int lo, int hi, int *dst) {
  const config_setting_t *s = config_setting_get_member(g, key);
  if (!s) return 0;
  if (config_setting_type(s) != CONFIG_TYPE_INT && config_setting_type(s) != CONFIG_TYPE_INT64)
    return err_at(x, s, key, "expected an integer");
  long long v = config_setting_get_int64(s); /* 64 bits, then the range */
  if (v < lo || v > hi) {
    char why[80];
    snprintf(why, sizeof why, "%lld is outside [%d, %d]", v, lo, hi);
    return err_at(x, s, key, why);
  }
  *dst = (int)v;
  return 1;
}

static int get_bool(const ctx *x, const config_setting_t *g, const char *key, bool *dst) {
  const config_setting_t *s = config_setting_get_member(g, key);
  if (!s) return 0;
  if (config_setting_type(s) != CONFIG_TYPE_BOOL) return err_at(x, s, key, "expected true or false");
  *dst = config_setting_get_bool(s);
  return 1;
}

static int get_str(const ctx *x, const config_setting_t *g, const char *key, const char **dst) {
  const config_setting_t *s = config_setting_get_member(g, key);
  if (!s) return 0;
  if (!(*dst = config_setting_get_string(s))) return err_at(x, s, key, "expected a string");
  return 1;
}

static int pick(const ctx *x, const config_setting_t *g, const char *key, const char *valid, int *dst) {
  const char *v;
  int rc = get_str(x, g, key, &v);
  if (rc <= 0) return rc;
  char copy[128];
  snprintf(copy, sizeof copy, "%s", valid);
  int i = 0;
  for (char *t = strtok(copy, " "); t; t = strtok(NULL, " "), i++)
    if (strcmp(t, v) == 0) { *dst = i; return 1; }
  char why[192];
  snprintf(why, sizeof why, "unknown value \"%s\"; valid: %s", v, valid);
  return err_at(x, config_setting_get_member(g, key), key, why);
}

static int read_layer(const ctx *x, const config_setting_t *g, const char *const *net_names, int nnets, pf_layer *L) {
  memset(L, 0, sizeof *L);
  L->line = config_setting_source_line(g);
  if (!config_setting_is_group(g)) return err_at(x, g, "type", "each layer is a group { type = \"...\"; ... }");
  int kind = -1, rc;
  const char *t;
  if ((rc = get_str(x, g, "type", &t)) < 0) return rc;
  if (rc == 0) return err_at(x, g, "type", "missing (conv2d, conv_transpose2d, linear, attention, norm, pool, "
                             "upsample, concat, activation, embedding)");
  for (int i = 1; i < PF_LY_NKINDS; i++)
    if (strcmp(t, kind_names[i]) == 0) kind = i;
  if (kind < 0)
    return err_at(x, config_setting_get_member(g, "type"), "type", "unknown layer type; valid: conv2d, "
                  "conv_transpose2d, linear, attention, norm, pool, upsample, concat, activation, embedding");
  L->kind = (pf_layer_kind)kind;
  for (int i = 0; i < config_setting_length(g); i++) { /* keys this kind does not take */
    const char *k = config_setting_name(config_setting_get_elem(g, (unsigned)i));
    if (!has_word(common_keys, k) && !has_word(kind_keys[kind], k)) {
      char why[192];
      snprintf(why, sizeof why, "not a key of %s layers (they take: %s; every layer: %s)", t, kind_keys[kind],
               common_keys);
      return err_at(x, config_setting_get_elem(g, (unsigned)i), k, why);
    }
  }
  const char *net;
  if ((rc = get_str(x, g, "net", &net)) < 0) return rc;
  if (rc) {
    L->net = -1;
    for (int i = 0; i < nnets; i++)
      if (strcmp(net, net_names[i]) == 0) L->net = i;
    if (L->net < 0) return err_at(x, config_setting_get_member(g, "net"), "net", "not one of the model's nets");
  }
  const int big = 1 << 24;
  bool bias = true;
  int mode = 0;
  if ((rc = get_int(x, g, "h", 1, big, &L->h)) < 0 || (rc = get_int(x, g, "w", 1, big, &L->w)) < 0 ||
      (rc = get_int(x, g, "c", 1, big, &L->c)) < 0 || (rc = get_int(x, g, "repeat", 1, 100000, &L->repeat)) < 0 ||
      (rc = get_int(x, g, "span", 1, 100000, &L->span)) < 0 || (rc = get_int(x, g, "ops", 1, 100000, &L->ops)) < 0 ||
      (rc = get_bool(x, g, "frozen", &L->frozen)) < 0 || (rc = get_int(x, g, "out", 1, big, &L->out)) < 0 ||
      (rc = get_int(x, g, "channels", 1, big, &L->out)) < 0 || (rc = get_int(x, g, "kernel", 1, 1024, &L->kernel)) < 0 ||
      (rc = get_int(x, g, "stride", 1, 1024, &L->stride)) < 0 || (rc = get_int(x, g, "factor", 1, 1024, &L->stride)) < 0 ||
      (rc = get_int(x, g, "heads", 1, 1 << 16, &L->heads)) < 0 || (rc = get_int(x, g, "rel_pos", 1, big, &L->rel_pos)) < 0 ||
      (rc = get_int(x, g, "vocab", 1, 1 << 30, &L->vocab)) < 0 || (rc = get_bool(x, g, "bias", &bias)) < 0)
    return rc;
  L->no_bias = !bias;
  bool saved = true;
  if ((rc = get_bool(x, g, "saved_input", &saved)) < 0) return rc;
  L->no_saved_input = !saved;
  int nk = 0;
  if (kind == PF_LY_NORM && (rc = pick(x, g, "kind", "batch layer group rms", &nk)) < 0) return rc;
  L->batch_stats = kind == PF_LY_NORM && nk == 0 && config_setting_get_member(g, "kind");
  if (kind == PF_LY_UPSAMPLE && (rc = pick(x, g, "mode", "nearest bilinear subpixel", &mode)) < 0) return rc;
  L->subpixel = mode == 2;
  const char *need = kind == PF_LY_CONV2D || kind == PF_LY_CONVT2D || kind == PF_LY_LINEAR ? "out"
                     : kind == PF_LY_CONCAT ? "channels" : kind == PF_LY_ATTENTION ? "heads"
                     : kind == PF_LY_EMBEDDING ? (!L->vocab ? "vocab" : "out") : NULL;
  if (need && !config_setting_get_member(g, need)) return err_at(x, g, need, "missing");
  return 0;
}

static int read_shape(const ctx *x, const config_setting_t *g, const char *key, int *h, int *w, int *c) {
  const config_setting_t *s = config_setting_get_member(g, key);
  if (!s) return 0;
  if ((!config_setting_is_array(s) && !config_setting_is_list(s)) || config_setting_length(s) < 1 ||
      config_setting_length(s) > 3)
    return err_at(x, s, key, "expected [h, w, c] (images) or [tokens, features]");
  int v[3] = {1, 1, 1}, n = config_setting_length(s);
  for (int i = 0; i < n; i++) {
    const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
    int el = config_setting_get_int(e);
    if (config_setting_type(e) != CONFIG_TYPE_INT || el < 1 || el > 1 << 24)
      return err_at(x, s, key, "elements must be integers in [1, 16777216] (as a layer's h, w, c)");
    v[i] = el;
  }
  if (n == 2) *h = v[0], *w = 1, *c = v[1];
  else *h = v[0], *w = n == 3 ? v[1] : 1, *c = n == 3 ? v[2] : 1;
  return 1;
}

static int read_model(const char *path, const config_setting_t *m, pf_workload *w) {
  ctx x = {.file = path};
  snprintf(x.where, sizeof x.where, "model");
  static const char *model_keys = "id name source framework data_parallel tf32_matmul input nets layers";
  for (int i = 0; i < config_setting_length(m); i++) {
    const char *k = config_setting_name(config_setting_get_elem(m, (unsigned)i));
    if (!has_word(model_keys, k)) {
      char why[160];
      snprintf(why, sizeof why, "unknown key (valid: %s)", model_keys);
      return err_at(&x, config_setting_get_elem(m, (unsigned)i), k, why);
    }
  }
  memset(w, 0, sizeof *w);
  w->kind = PF_WL_LAYERS;
  const char *s = NULL;
  int rc, fw = 0, dpi = 0;
  if ((rc = get_str(&x, m, "id", &s)) < 0) return rc;
  snprintf(w->id, sizeof w->id, "%s", rc ? s : "custom-layers");
  if ((rc = get_str(&x, m, "name", &s)) < 0) return rc;
  snprintf(w->name, sizeof w->name, "%s", rc ? s : w->id);
  if ((rc = get_str(&x, m, "source", &s)) < 0) return rc;
  w->source = keep(strdup(rc ? s : path));
  if ((rc = pick(&x, m, "framework", "pytorch tensorflow", &fw)) < 0) return rc;
  w->framework = fw == 1 ? PF_FW_TENSORFLOW : PF_FW_PYTORCH;
  if ((rc = pick(&x, m, "data_parallel", "ddp dataparallel", &dpi)) < 0) return rc;
  w->dp_impl = dpi == 1 ? PF_DPIMPL_DATAPARALLEL : PF_DPIMPL_PROCESS;
  if ((rc = get_bool(&x, m, "tf32_matmul", &w->tf32_matmul)) < 0) return rc;
  /* networks: a list of groups, or one from `input` */
  const config_setting_t *ns = config_setting_get_member(m, "nets");
  int nn = ns ? config_setting_length(ns) : 1;
  if (ns && (!config_setting_is_list(ns) || nn < 1 || nn > 4))
    return err_at(&x, ns, "nets", "expected a list of 1 to 4 groups ( { name = ...; input = [...]; }, ... )");
  pf_net *nets = calloc((size_t)nn + 1, sizeof *nets);
  const char **names = calloc((size_t)nn, sizeof *names);
  if (!nets || !names) { free(nets); free(names); return pf_error_set(PF_ENOMEM, "out of memory"); }
  for (int i = 0; i < nn; i++) {
    pf_net *N = &nets[i];
    *N = (pf_net){.name = "model", .fwd = 1, .dgrad = 1, .wgrad = 1, .opt = 1};
    const config_setting_t *g = ns ? config_setting_get_elem(ns, (unsigned)i) : m;
    if (ns) snprintf(x.where, sizeof x.where, "model.nets[%d]", i);
    if (ns && !config_setting_is_group(g)) { rc = err_at(&x, g, "name", "each net is a group"); goto fail; }
    if (ns && (rc = get_str(&x, g, "name", &s)) <= 0) { if (rc == 0) rc = err_at(&x, g, "name", "missing"); goto fail; }
    if (ns) N->name = keep(strdup(s));
    if ((rc = read_shape(&x, g, "input", &N->h, &N->w, &N->c)) < 0) goto fail;
    int passes[5] = {1, 1, 1, 1, 0};
    static const char *pk[] = {"forward", "dgrad", "wgrad", "optimizer", "second_order"};
    for (int j = 0; ns && j < 5; j++)
      if ((rc = get_int(&x, g, pk[j], 0, 1000, &passes[j])) < 0) goto fail;
    for (int j = 0; ns && j < config_setting_length(g); j++) {
      const char *k = config_setting_name(config_setting_get_elem(g, (unsigned)j));
      if (!has_word("name input forward dgrad wgrad optimizer second_order", k)) {
        rc = err_at(&x, config_setting_get_elem(g, (unsigned)j), k, "unknown key (valid: name input forward dgrad "
                    "wgrad optimizer second_order)");
        goto fail;
      }
    }
    N->fwd = passes[0], N->dgrad = passes[1], N->wgrad = passes[2], N->opt = passes[3], N->ggrad = passes[4];
    names[i] = N->name;
  }
  snprintf(x.where, sizeof x.where, "model");
  const config_setting_t *ls = config_setting_get_member(m, "layers");
  if (!ls) { rc = err_at(&x, m, "layers", "missing: a list of layer groups ( { type = \"conv2d\"; ... }, ... )"); goto fail; }
  int nl = config_setting_length(ls);
  if (!config_setting_is_list(ls) || nl < 1 || nl > MAX_LAYERS) {
    rc = err_at(&x, ls, "layers", "expected a non-empty list of groups ( { type = ...; }, ... )");
    goto fail;
  }
  pf_layer *ly = calloc((size_t)nl + 1, sizeof *ly);
  if (!ly) { rc = pf_error_set(PF_ENOMEM, "out of memory"); goto fail; }
  for (int i = 0; i < nl; i++) {
    snprintf(x.where, sizeof x.where, "model.layers[%d]", i);
    if ((rc = read_layer(&x, config_setting_get_elem(ls, (unsigned)i), names, nn, &ly[i])) < 0) { free(ly); goto fail; }
  }
  ly[nl].kind = PF_LY_END;
  w->ly = keep(ly);
  w->nets = keep(nets);
  free(names);
  rc = pf_layers_check(w);
  if (rc < 0) { /* name the file with the layer the check names */
    char why[512];
    snprintf(why, sizeof why, "%s", pf_error_detail());
    return pf_error_set(rc, "%s: %s", path, why);
  }
  return 0; /* ly, nets and the strings live until exit */
fail:
  free(nets);
  free(names);
  return rc;
}

int pf_layers_load(const char *path, pf_workload *w) {
  config_t cfg;
  int rc = pf_cfg_parse(&cfg, path, "model file");
  if (rc < 0) return rc;
  const config_setting_t *m = config_lookup(&cfg, "model");
  if (rc == 0)
    rc = !m || !config_setting_is_group(m)
               ? pf_error_set(PF_EPARSE, "%s:%d: model: expected a group model = { id = ...; layers = ( ... ); }", path,
                              m ? config_setting_source_line(m) : 1)
               : read_model(path, m, w);
  config_destroy(&cfg);
  return rc;
}
