/* plot.c - the charts of plot.h: the figure's data, its layout and the
 * choice of output by suffix.  The layout draws on a canvas (plotdraw.h):
 * SVG text (plot_svg.c) or cairo for PDF and PNG (plot_cairo.c).  Axes:
 * linear axes get "nice" ticks (1, 2, 5 x 10^k) and start at zero when every
 * value is non-negative; log axes get decades, with 2 and 5 between them when
 * the data spans two decades or less.  Each panel's legend is laid out under
 * its axes in rows that fit the canvas' width; a series keeps one colour in
 * every panel (the colour of its name, or of the series it is drawn like).
 */
#include "plotdraw.h"

#include "core/core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 760.0
#define ML 84.0     /* left margin (y tick labels and axis label) */
#define MR 24.0     /* right margin */
#define MT 40.0     /* title */
#define PLOT_H 250.0 /* the axes' box */
#define MB 52.0     /* x tick labels and axis label */
#define LEG_ROW 17.0 /* one row of legend */
#define LEG_FONT 11.0
#define CAP_FONT 12.0
#define CAP_ROW 16.0

static const char *palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};
#define NPAL ((int)(sizeof palette / sizeof *palette))

void pf_plot_init(pf_plot *f) {
  memset(f, 0, sizeof *f);
  for (int i = 0; i < PF_PLOT_MAXPANELS; i++) f->panel[i].ref_y = NAN;
}

void pf_plot_free(pf_plot *f) {
  for (int i = 0; i < f->npanels; i++)
    for (int s = 0; s < f->panel[i].nseries; s++) {
      free(f->panel[i].series[s].x);
      free(f->panel[i].series[s].y);
    }
  pf_plot_init(f);
}

pf_plot_panel *pf_plot_panel_add(pf_plot *f, const char *title, const char *xlabel, const char *ylabel, bool logx,
                                 bool logy) {
  if (f->npanels >= PF_PLOT_MAXPANELS) return NULL;
  pf_plot_panel *p = &f->panel[f->npanels++];
  memset(p, 0, sizeof *p);
  p->ref_y = NAN;
  snprintf(p->title, sizeof p->title, "%s", title ? title : "");
  snprintf(p->xlabel, sizeof p->xlabel, "%s", xlabel ? xlabel : "");
  snprintf(p->ylabel, sizeof p->ylabel, "%s", ylabel ? ylabel : "");
  p->logx = logx;
  p->logy = logy;
  return p;
}

int pf_plot_add_like(pf_plot_panel *p, const char *name, const char *like, pf_plot_style style, int n,
                     const double *x, const double *y) {
  if (p->nseries >= PF_PLOT_MAXSERIES || n < 0) return pf_error_set(PF_EINVAL, "plot: too many series");
  pf_plot_series *s = &p->series[p->nseries];
  memset(s, 0, sizeof *s);
  size_t sz = (size_t)(n > 0 ? n : 1) * sizeof(double);
  s->x = malloc(sz);
  s->y = malloc(sz);
  if (!s->x || !s->y) {
    free(s->x);
    free(s->y);
    return pf_error_set(PF_ENOMEM, "out of memory");
  }
  if (n > 0) {
    memcpy(s->x, x, (size_t)n * sizeof(double));
    memcpy(s->y, y, (size_t)n * sizeof(double));
  }
  s->n = n;
  s->style = style;
  snprintf(s->name, sizeof s->name, "%s", name ? name : "");
  snprintf(s->like, sizeof s->like, "%s", like ? like : "");
  p->nseries++;
  return 0;
}

int pf_plot_add(pf_plot_panel *p, const char *name, pf_plot_style style, int n, const double *x, const double *y) {
  return pf_plot_add_like(p, name, NULL, style, n, x, y);
}

/* ---- the output kind ---- */

int pf_plot_kind_of(const char *path, const char *what, pf_plot_kind *kind) {
  static const char *const suffix[] = {".svg", ".pdf", ".png"};
  size_t n = path ? strlen(path) : 0;
  for (int k = 0; k < 3; k++)
    if (n > 4 && strcmp(path + n - 4, suffix[k]) == 0) {
      *kind = (pf_plot_kind)k;
      return 0;
    }
  return pf_error_set(PF_EINVAL, "%s \"%s\": the file's suffix names the image kind; valid: %s", what,
                      path ? path : "", PF_PLOT_SUFFIXES);
}

int pf_plot_write(const pf_plot *f, const char *path) {
  pf_plot_kind kind = PF_PLOT_SVG; /* set by pf_plot_kind_of; initialised for -Wmaybe-uninitialized at -O3 */
  int rc = pf_plot_kind_of(path, "--plot", &kind);
  if (rc < 0) return rc;
  char *buf = NULL;
  size_t len = 0;
  if (kind == PF_PLOT_SVG) {
    buf = pf_plot_svg(f);
    if (!buf) return pf_error_set(PF_ENOMEM, "out of memory");
    len = strlen(buf);
  } else if ((rc = pf_plot_cairo(f, kind, &buf, &len)) < 0) {
    return rc;
  }
  rc = pf_write_bytes_atomic(path, "--plot", buf, len);
  free(buf);
  return rc;
}

/* ---- text ---- */

double pf_plot_text_w(const char *s, double size, bool bold) {
  double em = 0; /* in em, per character class of a sans-serif face (DejaVu Sans' widths, rounded up) */
  for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
    if ((*c & 0xC0) == 0x80) continue; /* a UTF-8 continuation byte */
    if (*c == ' ') em += 0.33;
    else if (*c == 'm' || *c == 'w' || *c == 'M' || *c == 'W') em += 1.0;
    else if (*c >= 'A' && *c <= 'Z') em += 0.75;
    else if (*c >= 'a' && *c <= 'z') em += 0.62;
    else if (*c >= '0' && *c <= '9') em += 0.65;
    else if (*c >= 0x80) em += 0.8;
    else em += 0.5;
  }
  return em * size * (bold ? 1.12 : 1.0);
}

/* The caption cut into lines that fit the width: starts and lengths. */
static int caption_lines(const char *cap, int max, const char **start, int *len) {
  int nl = 0;
  const char *c = cap;
  while (*c && nl < max) {
    int take = (int)strlen(c);
    char line[1024];
    for (;;) {
      snprintf(line, sizeof line, "%.*s", take, c);
      if (pf_plot_text_w(line, CAP_FONT, false) <= W - 32) break;
      int k = take - 1;
      while (k > 10 && c[k] != ' ') k--;
      if (k <= 10) break; /* one long word: let it be */
      take = k;
    }
    start[nl] = c;
    len[nl++] = take;
    c += take;
    while (*c == ' ') c++;
  }
  return nl;
}

/* ---- colours and legends ---- */

static const char *key_of(const pf_plot_series *s) { return s->like[0] ? s->like : s->name; }

/* One colour per series name over the whole figure, in the order the names first appear. */
static const char *colour_of(const pf_plot *f, const pf_plot_series *se) {
  const char *key = key_of(se);
  int k = 0;
  for (int i = 0; i < f->npanels; i++)
    for (int s = 0; s < f->panel[i].nseries; s++) {
      const char *other = key_of(&f->panel[i].series[s]);
      bool seen = false; /* a key met before this one in the figure */
      for (int j = 0; j <= i && !seen; j++)
        for (int t = 0; t < (j < i ? f->panel[j].nseries : s) && !seen; t++)
          seen = strcmp(key_of(&f->panel[j].series[t]), other) == 0;
      if (strcmp(other, key) == 0) return palette[k % NPAL];
      if (!seen) k++;
    }
  return palette[0];
}

/* A legend entry shown: not a repeat of an earlier entry of the panel with the same name and style. */
static bool legend_shown(const pf_plot_panel *p, int s) {
  if (!p->series[s].name[0]) return false;
  for (int t = 0; t < s; t++)
    if (strcmp(p->series[t].name, p->series[s].name) == 0 && p->series[t].style == p->series[s].style) return false;
  return true;
}

#define LEG_SWATCH 30.0 /* the line or dot before the name, with its gap */
#define LEG_GAP 18.0

/* A legend entry's text: the name, cut with "..." where even a row of its own could not hold it. */
static const char *legend_text(const char *name, char *buf, size_t n) {
  double room = W - MR - ML - LEG_SWATCH;
  snprintf(buf, n, "%s", name);
  for (size_t k = strlen(buf); k > 4 && pf_plot_text_w(buf, LEG_FONT, false) > room; k--)
    snprintf(buf, n, "%.*s...", (int)(k - 4), name);
  return buf;
}

/* Lay out the legend: the row and x of each entry from the left margin; returns the number of rows. */
static int legend_layout(const pf_plot_panel *p, double *ex, int *erow) {
  double x = ML, right = W - MR;
  int row = 0, any = 0;
  for (int s = 0; s < p->nseries; s++) {
    if (!legend_shown(p, s)) { erow[s] = -1; continue; }
    char t[sizeof p->series[s].name + 4];
    double w = LEG_SWATCH + pf_plot_text_w(legend_text(p->series[s].name, t, sizeof t), LEG_FONT, false);
    if (any && x + w > right) { row++; x = ML; }
    ex[s] = x;
    erow[s] = row;
    x += w + LEG_GAP;
    any = 1;
  }
  return any ? row + 1 : 0;
}

static double panel_h(const pf_plot_panel *p) {
  double ex[PF_PLOT_MAXSERIES];
  int er[PF_PLOT_MAXSERIES];
  int rows = legend_layout(p, ex, er);
  return MT + PLOT_H + MB + (rows ? rows * LEG_ROW + 8 : 0);
}

void pf_plot_size(const pf_plot *f, double *w, double *h) {
  const char *st[32];
  int ln[32];
  double y = 0;
  for (int i = 0; i < f->npanels; i++) y += panel_h(&f->panel[i]);
  *w = W;
  *h = y + CAP_ROW * caption_lines(f->caption, 32, st, ln) + 20;
}

/* ---- axes ---- */

typedef struct {
  bool log;
  double lo, hi;      /* in data units */
  int nt;
  double tick[64];
} axis;

static bool usable(double v, bool log) { return isfinite(v) && (!log || v > 0); }

static double nice_step(double span) {
  double raw = span / 5, mag = pow(10, floor(log10(raw))), r = raw / mag;
  return (r < 1.5 ? 1 : r < 3.5 ? 2 : r < 7.5 ? 5 : 10) * mag;
}

/* Range and ticks of the data (min, max). */
static void axis_fit(axis *a, bool log, double mn, double mx) {
  a->log = log;
  a->nt = 0;
  if (!(mn <= mx)) { mn = log ? 1 : 0; mx = log ? 10 : 1; }
  if (log) { /* from the 1-2-5 step at or below the data to the one at or above it */
    static const double step[3] = {1, 2, 5};
    double l0 = floor(log10(mn) + 1e-9), l1 = ceil(log10(mx) - 1e-9);
    if (l1 <= l0) l1 = l0 + 1;
    a->lo = pow(10, l0);
    a->hi = pow(10, l1);
    for (int k = 2; k > 0; k--) if (step[k] * pow(10, l0) <= mn * (1 + 1e-9)) { a->lo = step[k] * pow(10, l0); break; }
    for (int k = 1; k < 3; k++) if (step[k] * pow(10, l1 - 1) >= mx * (1 - 1e-9)) { a->hi = step[k] * pow(10, l1 - 1); break; }
    bool fine = log10(a->hi / a->lo) <= 2.01;
    for (double d = l0; d <= l1 && a->nt < 60; d++)
      for (int k = 0; k < 3; k++) {
        double t = step[k] * pow(10, d);
        if ((k == 0 || fine) && t >= a->lo * (1 - 1e-9) && t <= a->hi * (1 + 1e-9)) a->tick[a->nt++] = t;
      }
    return;
  }
  if (mn >= 0) mn = 0;
  if (mx == mn) mx = mn + (mn == 0 ? 1 : fabs(mn));
  double st = nice_step(mx - mn);
  a->lo = floor(mn / st) * st;
  a->hi = ceil(mx / st - 1e-9) * st;
  if (a->hi <= a->lo) a->hi = a->lo + st;
  for (double t = a->lo; t <= a->hi + st * 1e-6 && a->nt < 60; t += st) a->tick[a->nt++] = fabs(t) < st * 1e-9 ? 0 : t;
}

static double axis_frac(const axis *a, double v) {
  if (a->log) return (log10(v) - log10(a->lo)) / (log10(a->hi) - log10(a->lo));
  return (v - a->lo) / (a->hi - a->lo);
}

static void fmt_tick(char *buf, size_t n, double v) {
  if (v != 0 && (fabs(v) >= 1e6 || fabs(v) < 1e-3)) snprintf(buf, n, "%.0e", v);
  else snprintf(buf, n, "%.6g", v);
}

/* ---- one panel ---- */

typedef struct {
  axis ax, ay;
  double px0, px1, py0, py1;
} frame;

static double fx(const frame *g, double v) { return g->px0 + axis_frac(&g->ax, v) * (g->px1 - g->px0); }
static double fy(const frame *g, double v) { return g->py1 - axis_frac(&g->ay, v) * (g->py1 - g->py0); }

static void panel_frame(const pf_plot_panel *p, double y0, frame *g) {
  double mnx = INFINITY, mxx = -INFINITY, mny = INFINITY, mxy = -INFINITY;
  for (int s = 0; s < p->nseries; s++)
    for (int i = 0; i < p->series[s].n; i++) {
      double x = p->series[s].x[i], y = p->series[s].y[i];
      if (!usable(x, p->logx) || !usable(y, p->logy)) continue;
      mnx = fmin(mnx, x); mxx = fmax(mxx, x);
      mny = fmin(mny, y); mxy = fmax(mxy, y);
    }
  if (usable(p->ref_y, p->logy)) { mny = fmin(mny, p->ref_y); mxy = fmax(mxy, p->ref_y); }
  if (p->parity_band > 0) { /* square parity plot: one range for both axes */
    mnx = mny = fmin(mnx, mny);
    mxx = mxy = fmax(mxx, mxy);
  }
  axis_fit(&g->ax, p->logx, mnx, mxx);
  axis_fit(&g->ay, p->logy, mny, mxy);
  g->px0 = ML;
  g->px1 = W - MR;
  g->py0 = y0 + MT;
  g->py1 = y0 + MT + PLOT_H;
}

/* The reference line's label: above it at the right, else the first of the other corners whose box
 * holds no data point. */
static void ref_label(pf_canvas *c, const pf_plot_panel *p, const frame *g, double y) {
  double w = pf_plot_text_w(p->ref_label, 11, false);
  for (int k = 0; k < 4; k++) {
    bool right = k % 2 == 0, above = k < 2;
    double x0 = right ? g->px1 - 4 - w : g->px0 + 4, y0 = above ? y - 16 : y + 2;
    bool clear = true;
    for (int s = 0; s < p->nseries && clear; s++)
      for (int i = 0; i < p->series[s].n && clear; i++) {
        double dx = p->series[s].x[i], dy = p->series[s].y[i];
        if (!usable(dx, p->logx) || !usable(dy, p->logy)) continue;
        double px = fx(g, dx), py = fy(g, dy);
        clear = !(px > x0 - 6 && px < x0 + w + 6 && py > y0 - 6 && py < y0 + 20);
      }
    if (clear || k == 3) {
      c->text(c, right ? g->px1 - 4 : g->px0 + 4, above ? y - 4 : y + 13, right ? PF_ANCHOR_END : PF_ANCHOR_START, 11,
              false, false, NULL, p->ref_label);
      return;
    }
  }
}

/* The box, grid, tick labels, axis labels, parity lines and reference line. */
static void panel_axes(pf_canvas *c, const pf_plot_panel *p, const frame *g, double y0) {
  c->text(c, (g->px0 + g->px1) / 2, y0 + 24, PF_ANCHOR_MIDDLE, 15, true, false, NULL, p->title);
  c->rect(c, g->px0, g->py0, g->px1 - g->px0, g->py1 - g->py0, "#444");
  char lab[48];
  for (int i = 0; i < g->ax.nt; i++) {
    double x = fx(g, g->ax.tick[i]);
    c->line(c, x, g->py0, x, g->py1, "#ddd", 1, PF_DASH_NONE, NULL);
    fmt_tick(lab, sizeof lab, g->ax.tick[i]);
    c->text(c, x, g->py1 + 16, PF_ANCHOR_MIDDLE, 11, false, false, NULL, lab);
  }
  for (int i = 0; i < g->ay.nt; i++) {
    double y = fy(g, g->ay.tick[i]);
    c->line(c, g->px0, y, g->px1, y, "#ddd", 1, PF_DASH_NONE, NULL);
    fmt_tick(lab, sizeof lab, g->ay.tick[i]);
    c->text(c, g->px0 - 6, y + 4, PF_ANCHOR_END, 11, false, false, NULL, lab);
  }
  c->text(c, (g->px0 + g->px1) / 2, g->py1 + 38, PF_ANCHOR_MIDDLE, 13, false, false, "xlabel", p->xlabel);
  c->text(c, 22, (g->py0 + g->py1) / 2, PF_ANCHOR_MIDDLE, 13, false, true, "ylabel", p->ylabel);
  if (p->parity_band > 0) {
    const double k[3] = {1.0, 1.0 + p->parity_band, 1.0 - p->parity_band};
    for (int j = 0; j < 3; j++) {
      double a = g->ax.lo, b = g->ax.hi;
      c->line(c, fx(g, a), fy(g, fmax(g->ay.lo, fmin(g->ay.hi, a * k[j]))), fx(g, b),
              fy(g, fmax(g->ay.lo, fmin(g->ay.hi, b * k[j]))), "#888", 1, j ? PF_DASH_SHORT : PF_DASH_NONE, NULL);
    }
  }
  if (usable(p->ref_y, p->logy) && p->ref_y >= g->ay.lo && p->ref_y <= g->ay.hi) {
    double y = fy(g, p->ref_y);
    c->line(c, g->px0, y, g->px1, y, "#555", 1, PF_DASH_LONG, "ref");
    ref_label(c, p, g, y);
  }
}

static void panel_series(pf_canvas *c, const pf_plot *f, const pf_plot_panel *p, const frame *g) {
  for (int s = 0; s < p->nseries; s++) {
    const pf_plot_series *se = &p->series[s];
    const char *col = colour_of(f, se);
    double *xs = malloc(sizeof(double) * (size_t)(se->n + 1)), *ys = malloc(sizeof(double) * (size_t)(se->n + 1));
    int n = 0;
    for (int i = 0; xs && ys && i < se->n; i++)
      if (usable(se->x[i], p->logx) && usable(se->y[i], p->logy)) { xs[n] = fx(g, se->x[i]); ys[n++] = fy(g, se->y[i]); }
    if (se->style != PF_PLOT_POINTS && n > 0)
      c->polyline(c, n, xs, ys, col, se->style == PF_PLOT_DASHED ? PF_DASH_LONG : PF_DASH_NONE);
    free(xs);
    free(ys);
    for (int i = 0; i < se->n; i++) {
      if (!usable(se->x[i], p->logx) || !usable(se->y[i], p->logy)) continue;
      c->point(c, fx(g, se->x[i]), fy(g, se->y[i]), se->style == PF_PLOT_POINTS ? 4.0 : 3.0, col, se->name, se->x[i],
               se->y[i]);
    }
  }
}

/* The legend under the axes: a swatch (line, dashed line or dot) and the name. */
static void panel_legend(pf_canvas *c, const pf_plot *f, const pf_plot_panel *p, const frame *g) {
  double ex[PF_PLOT_MAXSERIES];
  int er[PF_PLOT_MAXSERIES];
  legend_layout(p, ex, er);
  for (int s = 0; s < p->nseries; s++) {
    if (er[s] < 0) continue;
    const pf_plot_series *se = &p->series[s];
    const char *col = colour_of(f, se);
    double y = g->py1 + MB + 6 + LEG_ROW * er[s] + 8;
    if (se->style == PF_PLOT_POINTS) c->point(c, ex[s] + 11, y - 4, 4, col, NULL, NAN, NAN);
    else c->line(c, ex[s], y - 4, ex[s] + 22, y - 4, col, 2, se->style == PF_PLOT_DASHED ? PF_DASH_SHORT : PF_DASH_NONE,
                 NULL);
    char t[sizeof se->name + 4];
    c->text(c, ex[s] + LEG_SWATCH, y, PF_ANCHOR_START, LEG_FONT, false, false, "legend",
            legend_text(se->name, t, sizeof t));
  }
}

void pf_plot_draw(const pf_plot *f, pf_canvas *c) {
  double y0 = 0;
  for (int i = 0; i < f->npanels; i++) {
    const pf_plot_panel *p = &f->panel[i];
    frame g;
    panel_frame(p, y0, &g);
    c->group(c, true);
    panel_axes(c, p, &g, y0);
    panel_series(c, f, p, &g);
    panel_legend(c, f, p, &g);
    c->group(c, false);
    y0 += panel_h(p);
  }
  const char *st[32];
  int ln[32];
  int nl = caption_lines(f->caption, 32, st, ln);
  for (int i = 0; i < nl; i++) {
    char line[1024];
    snprintf(line, sizeof line, "%.*s", ln[i], st[i]);
    c->text(c, 16, y0 + CAP_ROW * (i + 1), PF_ANCHOR_START, CAP_FONT, false, false, i == 0 ? "caption" : NULL, line);
  }
}
