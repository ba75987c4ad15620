/* pplayout.c - uneven pipeline stages as Megatron-LM places them (see plan.h, docs/model.md "Uneven pipeline
 * stages").  Megatron-LM main at d98e8a64 (2026-08-22):
 *   --decoder-first-pipeline-num-layers F / --decoder-last-pipeline-num-layers G
 *       (megatron/core/transformer/transformer_block.py get_num_layers_to_build, the checks of
 *       transformer_config.py): the first (last) stage holds F (G) layers, the other stages share the rest
 *       evenly; with V virtual stages each holds F/V (G/V) per chunk, so F, G and the middle share divide by V;
 *   --account-for-embedding-in-pipeline-split / --account-for-loss-in-pipeline-split: the embedding (loss)
 *       counts as one layer in the split, (layers + e + l) / PP per stage, / V per chunk, and the first chunk
 *       of the first stage (last chunk of the last stage) builds one decoder layer fewer;
 *   --pipeline-model-parallel-layout (megatron/core/transformer/pipeline_parallel_layer_layout.py): "|"
 *       separates virtual stages listed chunk-major (stage c x PP + s), "E" embedding, "t" a decoder layer,
 *       "L" the loss, "m" an MTP layer; "(X)*n" and "x*n" repeat, commas are cosmetic; the count of stages is
 *       PP x V, E comes first and L last, once each, the t count is the model's layers and the m count its MTP
 *       modules, in the last stage before L (where preflight runs them, with or without "m").  Empty stages
 *       are allowed.
 * These options exclude each other as in Megatron (layout with any other; first/last with account-for). */
#include "plan.h"

#include "core/core.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool pf_plan_uneven(const pf_plan *p) {
  return p->pp_first > 0 || p->pp_last > 0 || p->pp_embedding || p->pp_loss || p->pp_layout[0];
}

static int vstages(const pf_plan *p) { return p->schedule == PF_SCHED_INTERLEAVED ? p->vstages : 1; }

/* Megatron's string grammar unrolled into per-virtual-stage decoder counts. */
#define LAYOUT_OPT "--pipeline-model-parallel-layout"
static int unroll(const char *in, char *out, size_t n) {
  char a[32 * PF_PP_LAYOUT_MAX], b[32 * PF_PP_LAYOUT_MAX];
  size_t k = 0;
  for (const char *c = in; *c; c++)
    if (*c != ',' && k + 1 < sizeof a) a[k++] = *c; /* commas are cosmetic (Megatron removes them) */
  a[k] = '\0';
  /* pass 1: "(X)*n" (X holds no parenthesis); pass 2: "x*n" */
  for (int pass = 0; pass < 2; pass++) {
    const char *s = a;
    size_t o = 0;
    while (*s) {
      const char *body = s, *close = NULL;
      size_t blen = 1;
      if (pass == 0 && *s == '(' && (close = strchr(s, ')')) && close[1] == '*') body = s + 1, blen = (size_t)(close - s - 1);
      else if (pass == 1 && s[1] == '*' && *s != '(' && *s != ')') close = s;
      else close = NULL;
      if (close && close[1] == '*' && close[2] >= '0' && close[2] <= '9' && blen > 0 && !memchr(body, '(', blen)) {
        char *end;
        long r = strtol(close + 2, &end, 10);
        if (r < 0 || r > PF_MAXCHUNK * 64 || o + blen * (size_t)r >= sizeof b)
          return pf_error_set(PF_EINVAL, LAYOUT_OPT " \"%s\": the repetition *%ld is too long", in, r);
        for (long i = 0; i < r; i++, o += blen) memcpy(b + o, body, blen);
        s = end;
      } else {
        if (o + 1 >= sizeof b) return pf_error_set(PF_EINVAL, LAYOUT_OPT " \"%s\" is too long", in);
        b[o++] = *s++;
      }
    }
    b[o] = '\0';
    memcpy(a, b, o + 1);
  }
  if (strlen(a) + 1 > n) return pf_error_set(PF_EINVAL, LAYOUT_OPT " \"%s\" is too long", in);
  memcpy(out, a, strlen(a) + 1);
  return 0;
}

/* mtp: the model's multi-token prediction modules (--mtp-layers), which preflight runs on the last stage after the
 * decoder (epa2a.c, compute.c), as Megatron's layout may only place them: "m" is accepted there alone, once per
 * module, before the loss ("...|t*2mL"); a layout without "m" leaves them there too. */
static int parse_layout(const char *text, int P, int layers, int mtp, pf_pp_layout *l) {
  char u[32 * PF_PP_LAYOUT_MAX];
  int rc = unroll(text, u, sizeof u);
  if (rc < 0) return rc;
  int n = 1, e = 0, loss = 0, t = 0, m = 0;
  for (const char *c = u; *c; c++) n += *c == '|';
  if (n > PF_MAXCHUNK) return pf_error_set(PF_EINVAL, LAYOUT_OPT ": %d stages, at most %d are modelled", n, PF_MAXCHUNK);
  if (n % P != 0)
    return pf_error_set(PF_EINVAL, LAYOUT_OPT " \"%s\": %d stages, not a multiple of --pp %d (PP x V stages)", text,
                        n, P);
  l->pp = P;
  l->v = n / P;
  int k = 0;
  memset(l->layers, 0, sizeof l->layers);
  for (const char *c = u; *c; c++) {
    if (*c == '|') { k++; continue; }
    if (*c == 't') { l->layers[k]++; t++; continue; }
    if (*c == 'E' && k == 0 && c == u) { e++; continue; }
    if (*c == 'L' && c[1] == '\0') { loss++; continue; }
    if (*c == 'E' || *c == 'L')
      return pf_error_set(PF_EINVAL, LAYOUT_OPT " \"%s\": the embedding E must come first and the loss L last, "
                          "once each", text);
    if (*c == 'm' && mtp == 0)
      return pf_error_set(PF_EINVAL, LAYOUT_OPT " \"%s\": an MTP layer m, but the model has no multi-token "
                          "prediction layers", text);
    if (*c == 'm' && (k != n - 1 || (c[1] != 'm' && c[1] != 'L')))
      return pf_error_set(PF_EINVAL, LAYOUT_OPT " \"%s\": the MTP layers m go in the last stage, after its decoder "
                          "layers and before the loss L (preflight runs them there; Megatron's standalone MTP on "
                          "another pipeline rank is not modelled)", text);
    if (*c == 'm') { m++; continue; }
    return pf_error_set(PF_EINVAL, LAYOUT_OPT " \"%s\": invalid layer character '%c' (known: E, t, L, m; | between "
                        "stages, (X)*n and x*n repeat)", text, *c);
  }
  if (e != 1 || loss != 1)
    return pf_error_set(PF_EINVAL, LAYOUT_OPT " \"%s\": the first layer must be the embedding E and the last the "
                        "loss L", text);
  if (t != layers)
    return pf_error_set(PF_EINVAL, LAYOUT_OPT " \"%s\": %d decoder layers t, but the model has %d", text, t, layers);
  if (m > 0 && m != mtp)
    return pf_error_set(PF_EINVAL, LAYOUT_OPT " \"%s\": %d MTP layers m, but the model has %d (--mtp-layers)", text,
                        m, mtp);
  return 0;
}

/* --decoder-first/last-pipeline-num-layers: the middle stages share the rest (transformer_config.py's checks). */
static int first_last(const pf_plan *p, int L, int V, pf_pp_layout *l) {
  int P = p->pp, rest = L, mid = P;
  if (p->pp_first > 0) rest -= p->pp_first, mid--;
  if (p->pp_last > 0) rest -= p->pp_last, mid--;
  const char *opt = p->pp_first > 0 ? "--decoder-first-pipeline-num-layers" : "--decoder-last-pipeline-num-layers";
  if (P < 2 || mid < 0) return pf_error_set(PF_EINVAL, "%s needs --pp > 1", opt);
  if ((p->pp_first % V) || (p->pp_last % V))
    return pf_error_set(PF_EINVAL, "%s: number of layers at the %s stage (%d) must be divisible by the virtual "
                        "pipeline parallel degree %d", opt, p->pp_first % V ? "first" : "last",
                        p->pp_first % V ? p->pp_first : p->pp_last, V);
  if (rest < 0 || (rest > 0) != (mid > 0))
    return pf_error_set(PF_EINVAL, "%s: %d layers are left for %d middle pipeline stages (the model has %d layers)",
                        opt, rest, mid, L);
  if (mid > 0 && (rest % mid || (rest / mid) % V))
    return pf_error_set(PF_EINVAL, "%s: the %d layers left for the %d middle stages must be divisible by %d%s", opt,
                        rest, mid, mid, V > 1 ? " x the virtual pipeline degree" : "");
  for (int s = 0; s < P; s++) {
    int n = s == 0 && p->pp_first > 0 ? p->pp_first : s == P - 1 && p->pp_last > 0 ? p->pp_last : rest / mid;
    for (int c = 0; c < V; c++) l->layers[c * P + s] = (short)(n / V);
  }
  return 0;
}

/* --account-for-embedding/loss-in-pipeline-split (and the even split, neither given). */
static int account_for(const pf_plan *p, int L, int V, pf_pp_layout *l) {
  int P = p->pp, n = L + p->pp_embedding + p->pp_loss;
  const char *opt = p->pp_embedding ? "--account-for-embedding-in-pipeline-split" : "--account-for-loss-in-pipeline-split";
  if (n % P || (n / P) % V)
    return pf_error_set(PF_EINVAL, "%s: %d layers%s%s must be divisible by PP x V = %d x %d", opt, L,
                        p->pp_embedding ? " + the embedding" : "", p->pp_loss ? " + the loss" : "", P, V);
  for (int k = 0; k < P * V; k++) l->layers[k] = (short)(n / P / V);
  if (p->pp_embedding) l->layers[0]--;
  if (p->pp_loss) l->layers[P * V - 1]--;
  if (l->layers[0] < 0 || l->layers[P * V - 1] < 0)
    return pf_error_set(PF_EINVAL, "%s: not enough layers in the first or last virtual pipeline stage", opt);
  return 0;
}

/* The last layout string parsed, kept: tune asks for one plan's stages' layers stage by stage (each call parsed the
 * string again: a tenth of the open DeepSeek-V3 search's CPU, whose 61 layers split unevenly at every PP > 1).
 * The parse is a function of the string, PP and the model's layers and MTP modules alone; a refused string is not
 * kept. */
static _Thread_local struct { char text[PF_PP_LAYOUT_MAX]; int P, layers, mtp; bool has; pf_pp_layout l; } parsed;

static int parse_layout_kept(const char *text, int P, int layers, int mtp, pf_pp_layout *l) {
  if (parsed.has && parsed.P == P && parsed.layers == layers && parsed.mtp == mtp && strcmp(parsed.text, text) == 0) {
    *l = parsed.l;
    return 0;
  }
  int rc = parse_layout(text, P, layers, mtp, l);
  parsed.has = rc == 0 && strlen(text) < sizeof parsed.text;
  if (parsed.has) {
    snprintf(parsed.text, sizeof parsed.text, "%s", text);
    parsed.P = P, parsed.layers = layers, parsed.mtp = mtp, parsed.l = *l;
  }
  return rc;
}

int pf_plan_layout(const pf_scenario *sc, pf_pp_layout *l) {
  const pf_plan *p = &sc->plan;
  int L = sc->workload.kind == PF_WL_TRANSFORMER ? sc->workload.layers : 0, V = vstages(p), P = p->pp;
  memset(l, 0, sizeof *l);
  l->pp = P;
  l->v = V;
  l->mtp = L > 0 ? sc->workload.mtp_layers : 0;
  l->uneven = pf_plan_uneven(p);
  if ((long long)P * V > PF_MAXCHUNK)
    return pf_error_set(PF_EPLAN, "PP x V = %d x %d virtual stages: at most %d are modelled", P, V, PF_MAXCHUNK);
  if (p->pp_layout[0] && (p->pp_first || p->pp_last || p->pp_embedding || p->pp_loss))
    return pf_error_set(PF_EINVAL, LAYOUT_OPT " cannot be set with --decoder-first/last-pipeline-num-layers or "
                        "--account-for-embedding/loss-in-pipeline-split (Megatron-LM refuses them together)");
  if ((p->pp_first || p->pp_last) && (p->pp_embedding || p->pp_loss))
    return pf_error_set(PF_EINVAL, "--decoder-first/last-pipeline-num-layers cannot be set with "
                        "--account-for-embedding/loss-in-pipeline-split (Megatron-LM refuses them together)");
  if (l->uneven && sc->workload.kind != PF_WL_TRANSFORMER)
    return pf_error_set(PF_EINVAL, "uneven pipeline stages need a transformer model (%s is not one)", sc->workload.id);
  if (!l->uneven) {
    for (int k = 0; k < P * V; k++) l->layers[k] = (short)(L / (P * V));
    return 0;
  }
  if (p->pp_layout[0]) return parse_layout_kept(p->pp_layout, P, L, l->mtp, l);
  return p->pp_first || p->pp_last ? first_last(p, L, V, l) : account_for(p, L, V, l);
}

int pf_plan_stage_layers(const pf_scenario *sc, int stage) {
  if (sc->workload.kind != PF_WL_TRANSFORMER) return 0;
  if (!pf_plan_uneven(&sc->plan)) return pf_plan_layers_per_stage(sc);
  pf_pp_layout l;
  if (pf_plan_layout(sc, &l) < 0) return 0; /* pf_plan_check refused it already */
  int n = 0;
  for (int c = 0; c < l.v; c++) n += l.layers[c * l.pp + stage];
  return n;
}

int pf_plan_stage_first_layer(const pf_scenario *sc, int stage) {
  int n = 0;
  for (int s = 0; s < stage; s++) n += pf_plan_stage_layers(sc, s);
  return n;
}

/* One virtual stage in Megatron's syntax: [E] t | t*n [m | m*n] [L] (Megatron refuses a layout whose m count is
 * not --mtp-num-layers: pipeline_parallel_layer_layout.py validate_layer_layout). */
static void token(const pf_pp_layout *l, int k, char *buf, size_t n) {
  int t = l->layers[k], last = l->pp * l->v - 1;
  char body[24] = "", mtp[24] = "";
  if (t == 1) snprintf(body, sizeof body, "t");
  else if (t > 1) snprintf(body, sizeof body, "t*%d", t);
  if (k == last && l->mtp == 1) snprintf(mtp, sizeof mtp, "m");
  else if (k == last && l->mtp > 1) snprintf(mtp, sizeof mtp, "m*%d", l->mtp);
  snprintf(buf, n, "%s%s%s%s", k == 0 ? "E" : "", body, mtp, k == last ? "L" : "");
}

void pf_plan_layout_string(const pf_pp_layout *l, char *buf, size_t n) {
  int N = l->pp * l->v;
  size_t o = 0;
  buf[0] = '\0';
  for (int i = 0; i < N && o < n;) {
    char a[32], b[32];
    token(l, i, a, sizeof a);
    int j = i;
    while (j + 1 < N - 1 && (token(l, j + 1, b, sizeof b), !strcmp(a, b))) j++;
    int r = j - i + 1;
    if (r >= 2) o += (size_t)snprintf(buf + o, n - o, "(%s|)*%d,", a, r);
    else o += (size_t)snprintf(buf + o, n - o, "%s%s", a, i < N - 1 ? "|" : "");
    i = j + 1;
  }
  if (o >= n && n > 4) strcpy(buf + n - 4, "...");
}

void pf_plan_layout_args(const pf_plan *p, char *buf, size_t n) {
  size_t o = 0;
  buf[0] = '\0';
  if (p->pp_first > 0) o += (size_t)snprintf(buf + o, n - o, " --decoder-first-pipeline-num-layers %d", p->pp_first);
  if (p->pp_last > 0 && o < n) o += (size_t)snprintf(buf + o, n - o, " --decoder-last-pipeline-num-layers %d", p->pp_last);
  if (p->pp_embedding && o < n) o += (size_t)snprintf(buf + o, n - o, " --account-for-embedding-in-pipeline-split");
  if (p->pp_loss && o < n) o += (size_t)snprintf(buf + o, n - o, " --account-for-loss-in-pipeline-split");
  if (p->pp_layout[0] && o < n) snprintf(buf + o, n - o, " " LAYOUT_OPT " \"%s\"", p->pp_layout);
}

/* tune's choice where PP x V does not divide the layers (docs/model.md): Megatron's own options first, the
 * embedding and loss counted as layers (both, then the loss alone), then a first and a last stage that take the
 * remainder of an even middle (the last the smaller half: it holds the loss), else a layout string that gives
 * one layer more to virtual stages of the middle stages first, the first stage next and the last stage last. */
int pf_plan_auto_layout(pf_plan *p, int L, int mtp) {
  int P = p->pp, V = vstages(p), PV = P * V;
  p->pp_first = p->pp_last = 0;
  p->pp_embedding = p->pp_loss = false;
  p->pp_layout[0] = '\0';
  if (L % PV == 0 || P < 2) return 0;
  if ((L + 2) % P == 0 && ((L + 2) / P) % V == 0 && (L + 2) / PV >= 1) { p->pp_embedding = p->pp_loss = true; return 0; }
  if ((L + 1) % P == 0 && ((L + 1) / P) % V == 0 && (L + 1) / PV >= 1) { p->pp_loss = true; return 0; }
  int m = (L + PV - 1) / PV * V, r = L - (P - 2) * m;
  for (int g = r / 2 / V * V; P > 2 && g > 0; g -= V)
    if (r - g > 0 && r - g <= m && (r - g) % V == 0) { p->pp_first = r - g; p->pp_last = g; return 0; }
  if (PV > PF_MAXCHUNK) return pf_error_set(PF_EPLAN, "PP x V = %d: at most %d virtual stages", PV, PF_MAXCHUNK);
  pf_pp_layout l = {.pp = P, .v = V, .mtp = mtp, .uneven = true};
  int rem = L % PV;
  for (int k = 0; k < PV; k++) l.layers[k] = (short)(L / PV);
  for (int i = 0; i < rem; i++) {
    int o = i % P, s = P > 2 && o < P - 2 ? o + 1 : o == P - 2 ? 0 : P - 1;
    l.layers[(i / P) * P + s]++;
  }
  pf_plan_layout_string(&l, p->pp_layout, sizeof p->pp_layout);
  if (strlen(p->pp_layout) + 1 >= sizeof p->pp_layout)
    return pf_error_set(PF_EPLAN, "the layout of %d layers over PP x V = %d x %d is too long to write", L, P, V);
  return 0;
}

/* pf_plan_check's part: the layout holds, its virtual stages agree with --schedule, and pp_split says it. */
int pf_plan_check_layout(pf_scenario *sc) {
  pf_plan *p = &sc->plan;
  p->pp_split[0] = '\0';
  if (!pf_plan_uneven(p)) return 1; /* the even split: plan.c's divisibility rules */
  pf_pp_layout l;
  int rc = pf_plan_layout(sc, &l);
  if (rc < 0) return rc;
  if (l.v > 64)
    return pf_error_set(PF_EINVAL, LAYOUT_OPT " \"%s\": %d virtual stages per pipeline stage, at most 64 are "
                        "modelled", p->pp_layout, l.v);
  if (p->pp_layout[0] && l.v != vstages(p)) {
    if (l.v > 1 && p->schedule == PF_SCHED_1F1B) {
      p->schedule = PF_SCHED_INTERLEAVED; /* Megatron derives V from the layout */
      p->vstages = l.v;
    } else {
      return pf_error_set(PF_EINVAL, LAYOUT_OPT " \"%s\" has %d virtual stages per pipeline stage but --schedule "
                          "%s%s%.0d asks for %d", p->pp_layout, l.v, pf_schedule_name(p->schedule),
                          p->schedule == PF_SCHED_INTERLEAVED ? ":" : "",
                          p->schedule == PF_SCHED_INTERLEAVED ? p->vstages : 0, vstages(p));
    }
  }
  pf_plan_layout_string(&l, p->pp_split, sizeof p->pp_split);
  return 0;
}
