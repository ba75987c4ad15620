/* plotdraw.h - the canvas the figure layout (plot.c) draws on: a few
 * primitives in pixels (origin top left), one implementation per output
 * (plot_svg.c writes SVG text, plot_cairo.c draws PDF and PNG with cairo).
 * The layout measures text with pf_plot_text_w (a generous estimate of a
 * sans-serif face), so every canvas gets the same positions. */
#ifndef PREFLIGHT_PLOTDRAW_H
#define PREFLIGHT_PLOTDRAW_H

#include "plot.h"

#include <stdbool.h>

typedef enum { PF_DASH_NONE, PF_DASH_LONG, PF_DASH_SHORT } pf_dash;
typedef enum { PF_ANCHOR_START, PF_ANCHOR_MIDDLE, PF_ANCHOR_END } pf_anchor;

typedef struct pf_canvas pf_canvas;
struct pf_canvas {
  void *ctx;
  void (*group)(pf_canvas *c, bool begin); /* a panel's elements (SVG <g class="panel">) */
  void (*line)(pf_canvas *c, double x1, double y1, double x2, double y2, const char *colour, double width,
               pf_dash dash, const char *cls);
  void (*rect)(pf_canvas *c, double x, double y, double w, double h, const char *stroke);
  void (*polyline)(pf_canvas *c, int n, const double *x, const double *y, const char *colour, pf_dash dash);
  /* a data point: drawn at (x, y) with radius r; series, dx, dy: the exact data it stands for */
  void (*point)(pf_canvas *c, double x, double y, double r, const char *colour, const char *series, double dx,
                double dy);
  /* text with its baseline at y; rotated: turned -90 degrees about (x, y); cls: its role (xlabel, ylabel,
   * caption, legend) or NULL */
  void (*text)(pf_canvas *c, double x, double y, pf_anchor anchor, double size, bool bold, bool rotated,
               const char *cls, const char *s);
};

/* The width a string takes at a font size (pixels), over-estimated. */
double pf_plot_text_w(const char *s, double size, bool bold);
/* The figure's size in pixels. */
void pf_plot_size(const pf_plot *f, double *w, double *h);
/* Draw the figure on a canvas of pf_plot_size's size. */
void pf_plot_draw(const pf_plot *f, pf_canvas *c);

#endif
