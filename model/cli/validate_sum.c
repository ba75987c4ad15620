/* validate_sum.c - the summary statistics of `preflight validate` (see
 * validate_out.h): each predicted row's |error| with its metric, metering
 * scope, tag, use and machine; the five worst rows; the points of the parity
 * plot; and the median, mean and max |error| of any group of them.  Rows
 * tagged "regression" are counted, not judged.  (Rendering: validate_out.c.)
 */
#include "validate_out.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Index of name in group g, added when new (64 distinct at most, as before). */
static int intern(pf_vsum *s, int g, const char *name) {
  if (!name[0]) return -1;
  for (int k = 0; k < s->nnames[g]; k++)
    if (strcmp(s->names[g][k], name) == 0) return k;
  if (s->nnames[g] >= 64) return -1;
  snprintf(s->names[g][s->nnames[g]], sizeof s->names[g][0], "%s", name);
  return s->nnames[g]++;
}

void pf_vsum_add(pf_vsum *s, const pf_vrow *r) {
  s->rows++;
  char pair[64]; /* names are 63 characters at most: each half cut at 31 */
  snprintf(pair, sizeof pair, "%.31s %.31s", r->machine, pf_vmodel_name(r));
  short g[4] = {(short)intern(s, 0, r->tag), (short)intern(s, 1, r->use), (short)intern(s, 2, r->machine),
                (short)intern(s, 3, pair)};
  if (r->status != PF_ROW_PREDICTED) {
    if (s->not_predicted < 12) {
      s->np_line[s->not_predicted] = r->line;
      s->np_metric[s->not_predicted] = (int)r->metric;
    }
    s->not_predicted++;
    if (r->status == PF_ROW_NOT_PREDICTED || (r->fail_code < 0 && pf_error_exit_code(r->fail_code) == 2))
      s->incomplete++;
    return;
  }
  if (s->nrec == s->cap) {
    int cap = s->cap ? 2 * s->cap : 256;
    pf_vrec *n = realloc(s->rec, (size_t)cap * sizeof *n);
    if (!n) return; /* out of memory: the statistics leave this row out */
    s->rec = n;
    s->cap = cap;
  }
  s->rec[s->nrec++] = (pf_vrec){100.0 * fabs(r->error), 100.0 * r->error, (int)r->metric, {g[0], g[1], g[2], g[3]},
                                (short)r->scope};
  /* the five worst judged rows, largest |error| first, earlier rows first among equals */
  double e = fabs(r->error);
  if (!pf_vrow_judged(r)) goto points;
  int k = s->nworst < 5 ? s->nworst++ : 5;
  if (k == 5) {
    if (e <= fabs(s->worst[4].error)) goto points;
    k = 4;
  }
  while (k > 0 && fabs(s->worst[k - 1].error) < e) {
    s->worst[k] = s->worst[k - 1];
    k--;
  }
  s->worst[k] = *r;
points:
  if (s->want_points && r->predicted > 0 && r->measured > 0) {
    if (s->npts == s->ptcap) {
      int cap = s->ptcap ? 2 * s->ptcap : 256;
      pf_vpoint *n = realloc(s->pts, (size_t)cap * sizeof *n);
      if (!n) return;
      s->pts = n;
      s->ptcap = cap;
    }
    s->pts[s->npts++] = (pf_vpoint){r->measured, r->measured_hi, r->predicted, r->line, (int)r->metric, (int)r->bound};
  }
}

static const char unjudged_tag[] = "regression";

bool pf_vrow_judged(const pf_vrow *r) { return strcmp(r->tag, unjudged_tag) != 0; }

/* Rows tagged "regression" (a known software regression, docs/validation.md) are reported, not judged. */
static bool not_judged(const pf_vsum *s, const pf_vrec *r) {
  return r->group[0] >= 0 && strcmp(s->names[0][r->group[0]], unjudged_tag) == 0;
}

pf_vstats pf_vsum_stats(const pf_vsum *s, int group, int index) {
  pf_vstats st = {0, NAN, NAN, NAN};
  double *x = malloc((size_t)(s->nrec > 0 ? s->nrec : 1) * sizeof *x);
  if (!x) return st;
  int n = 0;
  for (int i = 0; i < s->nrec; i++) {
    const pf_vrec *r = &s->rec[i];
    if ((group == 3 || group == 4 || group < 0) && not_judged(s, r)) continue;
    if (group == 3 && r->metric != index) continue;
    if (group == 4 && (r->scope != index || (r->metric != PF_MET_ENERGY && r->metric != PF_MET_POWER))) continue;
    if (group >= 0 && group < 3 && r->group[group] != index) continue;
    x[n++] = r->abs_pct;
  }
  st = pf_vstats_of(x, n);
  free(x);
  return st;
}

int pf_vsum_energy_groups(const pf_vsum *s, pf_vgroup out[64]) {
  double *x = malloc((size_t)(s->nrec > 0 ? s->nrec : 1) * sizeof *x);
  int ng = 0;
  for (int k = 0; x && k < s->nnames[3]; k++) {
    int n = 0;
    double sum = 0;
    for (int i = 0; i < s->nrec; i++) {
      const pf_vrec *r = &s->rec[i];
      if (r->group[3] != k || not_judged(s, r) || (r->metric != PF_MET_ENERGY && r->metric != PF_MET_POWER)) continue;
      sum += r->pct;
      x[n++] = r->abs_pct;
    }
    if (n > 0) out[ng++] = (pf_vgroup){s->names[3][k], n, sum / n, pf_vstats_of(x, n).median_abs_pct};
  }
  free(x);
  return ng;
}

int pf_vsum_unjudged(const pf_vsum *s) {
  int nj = 0;
  for (int i = 0; i < s->nrec; i++) nj += not_judged(s, &s->rec[i]);
  return nj;
}

void pf_vsum_free(pf_vsum *s) {
  free(s->rec);
  free(s->pts);
  s->rec = NULL;
  s->pts = NULL;
  s->nrec = s->cap = s->npts = s->ptcap = 0;
}
