/* plot.c - SVG charts (see plot.h), written with fprintf as hwloc's lstopo
 * does: no graphics dependency.  Axes: linear axes get "nice" ticks (1, 2, 5
 * x 10^k) and start at zero when every value is non-negative; log axes get
 * decades, with 2 and 5 between them when the data spans two decades or less.
 */
#include "plot.h"

#include "core/core.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define W 760.0
#define PANEL_H 340.0
#define ML 84.0  /* left margin (y tick labels and axis label) */
#define MR 200.0 /* right margin (legend) */
#define MT 40.0  /* title */
#define MB 58.0  /* x tick labels and axis label */

static const char *palette[] = {"#1f77b4", "#d62728", "#2ca02c", "#ff7f0e", "#9467bd",
                                "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22", "#17becf"};

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

int pf_plot_add(pf_plot_panel *p, const char *name, pf_plot_style style, int n, const double *x, const double *y) {
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
  p->nseries++;
  return 0;
}

/* ---- text ---- */

static void esc(FILE *f, const char *s) {
  for (; *s; s++) switch (*s) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    default: fputc(*s, f);
    }
}

static void text(FILE *f, double x, double y, const char *anchor, double size, const char *extra, const char *s) {
  fprintf(f, "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" font-size=\"%.0f\"%s>", x, y, anchor, size,
          extra ? extra : "");
  esc(f, s);
  fputs("</text>\n", f);
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

/* Range and ticks of the data (min, max) plus extra values that must be visible. */
static void axis_fit(axis *a, bool log, double mn, double mx) {
  a->log = log;
  a->nt = 0;
  if (!(mn <= mx)) { mn = log ? 1 : 0; mx = log ? 10 : 1; }
  if (log) {
    double l0 = floor(log10(mn) + 1e-9), l1 = ceil(log10(mx) - 1e-9);
    if (l1 <= l0) l1 = l0 + 1;
    a->lo = pow(10, l0);
    a->hi = pow(10, l1);
    bool fine = l1 - l0 <= 2;
    for (double d = l0; d <= l1 && a->nt < 60; d++) {
      double b = pow(10, d);
      a->tick[a->nt++] = b;
      if (fine && d < l1) { a->tick[a->nt++] = 2 * b; a->tick[a->nt++] = 5 * b; }
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

static void panel_svg(FILE *f, const pf_plot_panel *p, double y0) {
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
  axis ax, ay;
  axis_fit(&ax, p->logx, mnx, mxx);
  axis_fit(&ay, p->logy, mny, mxy);
  double px0 = ML, px1 = W - MR, py0 = y0 + MT, py1 = y0 + PANEL_H - MB;
#define X(v) (px0 + axis_frac(&ax, (v)) * (px1 - px0))
#define Y(v) (py1 - axis_frac(&ay, (v)) * (py1 - py0))
  fprintf(f, "<g class=\"panel\">\n");
  text(f, (px0 + px1) / 2, y0 + 24, "middle", 15, " font-weight=\"bold\"", p->title);
  fprintf(f, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" height=\"%.1f\" fill=\"none\" stroke=\"#444\"/>\n", px0, py0,
          px1 - px0, py1 - py0);
  char lab[48];
  for (int i = 0; i < ax.nt; i++) {
    double x = X(ax.tick[i]);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", x, py0, x, py1);
    fmt_tick(lab, sizeof lab, ax.tick[i]);
    text(f, x, py1 + 16, "middle", 11, NULL, lab);
  }
  for (int i = 0; i < ay.nt; i++) {
    double y = Y(ay.tick[i]);
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#ddd\"/>\n", px0, y, px1, y);
    fmt_tick(lab, sizeof lab, ay.tick[i]);
    text(f, px0 - 6, y + 4, "end", 11, NULL, lab);
  }
  text(f, (px0 + px1) / 2, py1 + 40, "middle", 13, " class=\"xlabel\"", p->xlabel);
  char rot[96];
  snprintf(rot, sizeof rot, " class=\"ylabel\" transform=\"rotate(-90 %.1f %.1f)\"", 22.0, (py0 + py1) / 2);
  text(f, 22, (py0 + py1) / 2, "middle", 13, rot, p->ylabel);
  if (p->parity_band > 0) {
    const double k[3] = {1.0, 1.0 + p->parity_band, 1.0 - p->parity_band};
    for (int j = 0; j < 3; j++) {
      double a = ax.lo, b = ax.hi;
      fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#888\"%s/>\n", X(a),
              Y(fmax(ay.lo, fmin(ay.hi, a * k[j]))), X(b), Y(fmax(ay.lo, fmin(ay.hi, b * k[j]))),
              j ? " stroke-dasharray=\"4 3\"" : "");
    }
  }
  if (usable(p->ref_y, p->logy) && p->ref_y >= ay.lo && p->ref_y <= ay.hi) {
    double y = Y(p->ref_y);
    fprintf(f, "<line class=\"ref\" x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"#555\" "
               "stroke-dasharray=\"6 4\"/>\n", px0, y, px1, y);
    text(f, px1 - 4, y - 4, "end", 11, NULL, p->ref_label);
  }
  for (int s = 0; s < p->nseries; s++) {
    const pf_plot_series *se = &p->series[s];
    const char *col = palette[s % (int)(sizeof palette / sizeof *palette)];
    if (se->style != PF_PLOT_POINTS) {
      fprintf(f, "<polyline fill=\"none\" stroke=\"%s\" stroke-width=\"1.8\"%s points=\"", col,
              se->style == PF_PLOT_DASHED ? " stroke-dasharray=\"6 4\"" : "");
      for (int i = 0; i < se->n; i++)
        if (usable(se->x[i], p->logx) && usable(se->y[i], p->logy)) fprintf(f, "%.1f,%.1f ", X(se->x[i]), Y(se->y[i]));
      fputs("\"/>\n", f);
    }
    for (int i = 0; i < se->n; i++) {
      if (!usable(se->x[i], p->logx) || !usable(se->y[i], p->logy)) continue;
      fprintf(f, "<circle class=\"pt\" data-series=\"");
      esc(f, se->name);
      fprintf(f, "\" data-x=\"%.17g\" data-y=\"%.17g\" cx=\"%.1f\" cy=\"%.1f\" r=\"%.1f\" fill=\"%s\"/>\n", se->x[i],
              se->y[i], X(se->x[i]), Y(se->y[i]), se->style == PF_PLOT_POINTS ? 4.0 : 3.0, col);
    }
    double ly = py0 + 14 + 18 * s;
    fprintf(f, "<line x1=\"%.1f\" y1=\"%.1f\" x2=\"%.1f\" y2=\"%.1f\" stroke=\"%s\" stroke-width=\"2\"%s/>\n", px1 + 12,
            ly - 4, px1 + 32, ly - 4, col, se->style == PF_PLOT_DASHED ? " stroke-dasharray=\"4 3\"" : "");
    text(f, px1 + 38, ly, "start", 11, NULL, se->name);
  }
  fprintf(f, "</g>\n");
#undef X
#undef Y
}

char *pf_plot_svg(const pf_plot *fig) {
  char *buf = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&buf, &len);
  if (!f) return NULL;
  /* the caption, wrapped at about 110 characters */
  char lines[16][128];
  int nl = 0;
  const char *c = fig->caption;
  while (*c && nl < 16) {
    size_t take = strlen(c);
    if (take > 110) {
      take = 110;
      while (take > 40 && c[take] != ' ') take--;
    }
    snprintf(lines[nl++], sizeof lines[0], "%.*s", (int)take, c);
    c += take;
    while (*c == ' ') c++;
  }
  double h = fig->npanels * PANEL_H + 16 * nl + 20;
  fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
             "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%.0f\" height=\"%.0f\" viewBox=\"0 0 %.0f %.0f\" "
             "font-family=\"sans-serif\">\n<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n",
          W, h, W, h);
  for (int i = 0; i < fig->npanels; i++) panel_svg(f, &fig->panel[i], i * PANEL_H);
  for (int i = 0; i < nl; i++)
    text(f, 16, fig->npanels * PANEL_H + 16 * (i + 1), "start", 12, i == 0 ? " class=\"caption\"" : NULL, lines[i]);
  fputs("</svg>\n", f);
  if (fclose(f) != 0) { free(buf); return NULL; }
  return buf;
}
